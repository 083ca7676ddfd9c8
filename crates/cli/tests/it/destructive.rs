//! The hazard packs measured (issue 12, item 8): every command of the frozen
//! corpus `tests/data/destructive/{destructive,harmless}.txt`, written from the
//! tools' documentation before the packs' rules, goes through the real
//! decision (`portcullis check --batch`) under `allow = ["Bash(*)"]` (with the
//! workspace's `Read(./**)` and `Edit(./**)`, so a workspace edit never
//! explains an ask). At least 90 % of the destructive commands must be refused
//! (ask or deny) and at most 5 % of the harmless ones. The table printed at
//! the end gives both shares per pack, and how many of the refusals were the
//! hazard rules' own (the rest are refused for their paths, opaque parts or
//! code). Commands are never dropped to make a rate: each miss is printed.
//!
//! Also here, the false positives of item 9 that this measurement found.

// Test code: a failed unwrap, index or panic is a failed test.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

use crate::support;

use std::collections::BTreeMap;

use support::{Job, Sandbox, bash, codes, config, explain, rules, verdict};

const MIN_DESTRUCTIVE_REFUSED: f64 = 0.90;
const MAX_HARMLESS_REFUSED: f64 = 0.05;
const ALLOW: &[&str] = &["Bash(*)", "Read(./**)", "Edit(./**)"];

/// `(pack, command)` for each line of a corpus file.
fn corpus(name: &str) -> Vec<(String, String)> {
    let path = format!(
        "{}/../../tests/data/destructive/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    text.lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .map(|l| {
            let (pack, command) = l
                .split_once(' ')
                .unwrap_or_else(|| panic!("{name}: no pack in {l:?}"));
            (pack.to_string(), command.to_string())
        })
        .collect()
}

/// Each command with its pack and decision.
type Rows = Vec<(String, String, serde_json::Value)>;

#[derive(Default)]
struct Tally {
    total: usize,
    refused: usize,
    by_hazard: usize,
}

fn measure(sandbox: &Sandbox, set: &[(String, String)]) -> (BTreeMap<String, Tally>, Rows) {
    let cfg = config("ask", &rules(ALLOW), &[], &[]);
    let jobs: Vec<Job> = set
        .iter()
        .map(|(_, c)| Job::new(cfg.clone(), bash(c)))
        .collect();
    let decisions = sandbox.decide(&jobs);
    let mut tally: BTreeMap<String, Tally> = BTreeMap::new();
    let mut rows = Vec::new();
    for ((pack, command), d) in set.iter().zip(decisions) {
        let t = tally.entry(pack.clone()).or_default();
        t.total += 1;
        if verdict(&d) != "allow" {
            t.refused += 1;
            if codes(&d).contains(&"hazard") {
                t.by_hazard += 1;
            }
        }
        rows.push((pack.clone(), command.clone(), d));
    }
    (tally, rows)
}

fn sum(t: &BTreeMap<String, Tally>) -> Tally {
    t.values().fold(Tally::default(), |a, b| Tally {
        total: a.total + b.total,
        refused: a.refused + b.refused,
        by_hazard: a.by_hazard + b.by_hazard,
    })
}

fn pct(n: usize, d: usize) -> f64 {
    if d == 0 {
        0.0
    } else {
        n as f64 * 100.0 / d as f64
    }
}

#[test]
fn hazard_packs_refuse_the_destructive_corpus_and_pass_the_harmless_one() {
    let destructive = corpus("destructive.txt");
    let harmless = corpus("harmless.txt");
    assert!(destructive.len() >= 400, "≥ 400 destructive commands");
    assert!(harmless.len() >= 400, "≥ 400 harmless commands");
    let sandbox = Sandbox::new("destructive");
    let (d_tally, d_rows) = measure(&sandbox, &destructive);
    let (h_tally, h_rows) = measure(&sandbox, &harmless);

    println!(
        "{:<12} {:>22} {:>10} {:>20}",
        "pack", "destructive refused", "by hazard", "harmless refused"
    );
    let packs: std::collections::BTreeSet<&String> = d_tally.keys().chain(h_tally.keys()).collect();
    for pack in packs {
        let d = d_tally.get(pack.as_str());
        let h = h_tally.get(pack.as_str());
        let (dt, dr, dh) = d.map_or((0, 0, 0), |t| (t.total, t.refused, t.by_hazard));
        let (ht, hr) = h.map_or((0, 0), |t| (t.total, t.refused));
        println!(
            "{pack:<12} {:>12} {:>7.1} % {:>10} {:>10} {:>7.1} %",
            format!("{dr}/{dt}"),
            pct(dr, dt),
            dh,
            format!("{hr}/{ht}"),
            pct(hr, ht)
        );
    }
    let d = sum(&d_tally);
    let h = sum(&h_tally);
    println!(
        "{:<12} {:>12} {:>7.1} % {:>10} {:>10} {:>7.1} %",
        "all",
        format!("{}/{}", d.refused, d.total),
        pct(d.refused, d.total),
        d.by_hazard,
        format!("{}/{}", h.refused, h.total),
        pct(h.refused, h.total)
    );

    let missed: Vec<String> = d_rows
        .iter()
        .filter(|(_, _, v)| verdict(v) == "allow")
        .map(|(p, c, v)| format!("  [{p}] {c:?}\n{}", explain(v)))
        .collect();
    let prompted: Vec<String> = h_rows
        .iter()
        .filter(|(_, _, v)| verdict(v) != "allow")
        .map(|(p, c, v)| format!("  [{p}] {}: {c:?}\n{}", verdict(v), explain(v)))
        .collect();
    println!(
        "destructive allowed ({}):\n{}",
        missed.len(),
        missed.join("\n")
    );
    println!(
        "harmless refused ({}):\n{}",
        prompted.len(),
        prompted.join("\n")
    );

    let d_rate = d.refused as f64 / d.total as f64;
    let h_rate = h.refused as f64 / h.total as f64;
    assert!(
        d_rate >= MIN_DESTRUCTIVE_REFUSED,
        "destructive refused {:.1} % < {:.0} %; allowed:\n{}",
        d_rate * 100.0,
        MIN_DESTRUCTIVE_REFUSED * 100.0,
        missed.join("\n")
    );
    assert!(
        h_rate <= MAX_HARMLESS_REFUSED,
        "harmless refused {:.1} % > {:.0} %; refused:\n{}",
        h_rate * 100.0,
        MAX_HARMLESS_REFUSED * 100.0,
        prompted.join("\n")
    );
}

/// Item 9, the class "harmless commands asking for a wrong reason": each of
/// these asked before (a hazard on `dd of=/dev/null` or on a listing
/// `fdisk -l`, an opaque `ssh --version`, no rule for a plain text utility).
#[test]
fn false_positives_do_not_ask() {
    let sandbox = Sandbox::new("false-positives");
    // Under a broad allow rule: no hazard, no opaque part.
    let broad = config("ask", &rules(ALLOW), &[], &[]);
    let under_broad = [
        "dd if=/dev/zero of=/dev/null bs=1M count=10",
        "dd if=README.md of=/dev/null",
        "dd if=/dev/urandom bs=16 count=1 of=/dev/stdout",
        "dd if=README.md of=copy.md",
        "ssh -V",
        "ssh --version",
        "ssh --help",
        "fdisk -l",
        "sfdisk -l",
        "parted -l",
        "mkfs --help",
        "mkfs.ext4 -V",
        "shred --version",
        "shutdown --help",
        "git filter-branch --help",
        "git restore --staged src/main.rs",
        "git reset --keep HEAD~1",
        "git push --dry-run --force",
        "kubectl delete pod x --dry-run=client",
        "terraform plan -destroy",
    ];
    // With no rule at all: plain text utilities are read-only programs.
    let none = config("ask", &[], &[], &[]);
    let under_none = [
        "numfmt --to=iec 1048576",
        "factor 42",
        "expr 1 + 2",
        "yes | head -3",
    ];
    let mut jobs: Vec<Job> = under_broad
        .iter()
        .map(|c| Job::new(broad.clone(), bash(c)))
        .collect();
    jobs.extend(under_none.iter().map(|c| Job::new(none.clone(), bash(c))));
    let decisions = sandbox.decide(&jobs);
    let wrong: Vec<String> = under_broad
        .iter()
        .chain(under_none.iter())
        .zip(&decisions)
        .filter(|(_, d)| verdict(d) != "allow")
        .map(|(c, d)| format!("  {}: {c:?}\n{}", verdict(d), explain(d)))
        .collect();
    assert!(wrong.is_empty(), "asked:\n{}", wrong.join("\n"));
}

/// A rule naming the hazardous words literally allows exactly those words:
/// `--force-with-lease` is not `--force`, `Bash(sudo *)` does not name `reboot`.
#[test]
fn hazards_need_a_rule_naming_their_words() {
    let sandbox = Sandbox::new("hazard-literal");
    let cases: &[(&str, &str, &str)] = &[
        (
            "Bash(git push --force-with-lease *)",
            "git push --force-with-lease origin feature",
            "allow",
        ),
        (
            "Bash(git push --force-with-lease *)",
            "git push --force origin feature",
            "ask",
        ),
        ("Bash(git *)", "git reset --hard", "ask"),
        (
            "Bash(git reset --hard *)",
            "git reset --hard HEAD~1",
            "allow",
        ),
        ("Bash(kubectl *)", "kubectl delete pod x", "ask"),
        ("Bash(kubectl delete *)", "kubectl delete pod x", "allow"),
        ("Bash(docker *)", "docker system prune -af", "ask"),
        ("Bash(terraform *)", "terraform destroy", "ask"),
        (
            "Bash(curl *)",
            "curl -X DELETE https://api.example.com/x",
            "ask",
        ),
        ("Bash(sudo *)", "sudo reboot", "ask"),
        ("Bash(reboot)", "reboot", "allow"),
    ];
    let jobs: Vec<Job> = cases
        .iter()
        .map(|(rule, c, _)| {
            let allow = rules(&[rule, "Read(./**)", "Edit(./**)"]);
            Job::new(config("ask", &allow, &[], &[]), bash(c))
        })
        .collect();
    let decisions = sandbox.decide(&jobs);
    let wrong: Vec<String> = cases
        .iter()
        .zip(&decisions)
        .filter(|((_, _, want), d)| verdict(d) != *want)
        .map(|((rule, c, want), d)| {
            format!(
                "  {rule} / {c:?}: want {want}, got {}\n{}",
                verdict(d),
                explain(d)
            )
        })
        .collect();
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
