//! Every known bypass of `tests/data/conformance/bypass_cases.jsonl`, under a
//! configuration that allows what the row's `naive_rule_it_defeats` allows,
//! must not be `allow` (issue 3). The row's `expected` is `deny` or `ask`; either
//! answer passes, and the table printed at the end shows which one portcullis gave.
//!
//! Rules: every backticked command pattern of `naive_rule_it_defeats` becomes
//! `Bash(<pattern>)` in `allow` (even when the prose says "deny": the test asks
//! whether the naive pattern, *allowed*, lets the bypass through). Rows that name
//! no command pattern get `Bash(<first word of the command> *)`. `Read(./**)` and
//! `Edit(./**)` are always allowed, so workspace edits never explain an `ask`.
//! Variants: mode `ask`, mode `approve-for-me`, and, for rows whose prose names
//! a *deny* rule, the configuration "as written" (deny patterns denied, path
//! patterns as `Read` deny rules, the command's first word allowed).

// Test code: a failed unwrap, index or panic is a failed test.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

use crate::support;

use support::{Job, Sandbox, bash, config, conformance, explain, field, verdict};

const ROWS: usize = 114;
const WORKSPACE: [&str; 2] = ["Read(./**)", "Edit(./**)"];

/// A backticked pattern of the prose and whether the prose puts it in a deny list.
fn patterns(prose: &str) -> Vec<(String, bool)> {
    let parts: Vec<&str> = prose.split('`').collect();
    (1..parts.len())
        .step_by(2)
        .filter(|i| i + 1 < parts.len()) // an unclosed backtick is not a pattern
        .map(|i| {
            let before = parts[..i].concat();
            let deny = before.rfind("deny") > before.rfind("allow");
            (parts[i].to_string(), deny)
        })
        .collect()
}

/// A program word: a name (`git`), or a path (`/bin/rm`, `./x`) for a command's first word.
fn program_like(word: &str, path_ok: bool) -> bool {
    let first = word.chars().next().unwrap_or(' ');
    (first.is_ascii_alphanumeric() || path_ok && "./".contains(first))
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "_.+-".contains(c) || path_ok && c == '/')
}

/// A pattern usable as `Bash(…)`: starts with a program name (a glob in it is
/// fine: `env*`), no shell syntax.
fn command_pattern(p: &str) -> bool {
    let first = p.split_whitespace().next().unwrap_or("");
    program_like(&first.replace('*', ""), false)
        && !p.contains("<newline>")
        && !p.chars().any(|c| ";|&<>()\"'\\\n".contains(c))
}

/// A path pattern (`~/.ssh/*`, `/root/*`) as a `Read` rule.
fn read_rule(p: &str) -> Option<String> {
    let p = match p.strip_suffix("/*") {
        Some(base) => format!("{base}/**"),
        None => p.to_string(),
    };
    if p.starts_with("~/") {
        Some(format!("Read({p})"))
    } else if p.starts_with('/') && !p.contains(' ') {
        Some(format!("Read(/{p})"))
    } else {
        None
    }
}

fn first_word_rule(command: &str) -> Option<String> {
    let first = command.split_whitespace().next().unwrap_or("");
    program_like(first, true).then(|| format!("Bash({first} *)"))
}

struct Row {
    line: usize,
    id: String,
    category: String,
    command: String,
    prose: String,
    expected: String,
    /// The naive allow rules (without the workspace rules).
    allow: Vec<String>,
    /// No usable pattern: the first word's rule was used.
    fallback: bool,
    /// The configuration as the prose writes it, when it names a deny rule.
    as_written: Option<(Vec<String>, Vec<String>)>,
}

fn row(line: usize, v: &serde_json::Value) -> Row {
    let prose = field(v, "naive_rule_it_defeats").to_string();
    let command = field(v, "command").to_string();
    let pats = patterns(&prose);
    let mut allow: Vec<String> = pats
        .iter()
        .filter(|(p, _)| command_pattern(p))
        .map(|(p, _)| format!("Bash({p})"))
        .collect();
    let fallback = allow.is_empty();
    if fallback {
        allow.extend(first_word_rule(&command));
    }
    let as_written = pats.iter().any(|(_, deny)| *deny).then(|| {
        let mut w_allow: Vec<String> = pats
            .iter()
            .filter(|(p, deny)| !deny && command_pattern(p))
            .map(|(p, _)| format!("Bash({p})"))
            .collect();
        let w_deny: Vec<String> = pats
            .iter()
            .filter(|(_, deny)| *deny)
            .filter_map(|(p, _)| {
                if command_pattern(p) {
                    Some(format!("Bash({p})"))
                } else {
                    read_rule(p)
                }
            })
            .collect();
        if w_allow.is_empty() {
            w_allow.extend(first_word_rule(&command));
        }
        (w_allow, w_deny)
    });
    Row {
        line,
        id: field(v, "id").to_string(),
        category: field(v, "category").to_string(),
        command,
        prose,
        expected: field(v, "expected").to_string(),
        allow,
        fallback,
        as_written,
    }
}

fn with_workspace(allow: &[String]) -> Vec<String> {
    allow
        .iter()
        .cloned()
        .chain(WORKSPACE.iter().map(|s| s.to_string()))
        .collect()
}

#[test]
fn no_bypass_is_allowed_under_its_naive_rule() {
    let rows: Vec<Row> = conformance("bypass_cases.jsonl")
        .iter()
        .map(|(line, v)| row(*line, v))
        .collect();
    assert_eq!(rows.len(), ROWS, "bypass_cases.jsonl rows");

    // (row index, variant, configuration) for every run.
    let mut runs: Vec<(usize, &str, Vec<String>, Vec<String>)> = Vec::new();
    for (i, r) in rows.iter().enumerate() {
        runs.push((i, "ask", with_workspace(&r.allow), Vec::new()));
        runs.push((i, "approve-for-me", with_workspace(&r.allow), Vec::new()));
        if let Some((allow, deny)) = &r.as_written {
            runs.push((i, "as-written", with_workspace(allow), deny.clone()));
        }
    }
    let sandbox = Sandbox::new("bypass");
    let jobs: Vec<Job> = runs
        .iter()
        .map(|(i, variant, allow, deny)| {
            let mode = if *variant == "approve-for-me" {
                "approve-for-me"
            } else {
                "ask"
            };
            Job::new(config(mode, allow, &[], deny), bash(&rows[*i].command))
        })
        .collect();
    let decisions = sandbox.decide(&jobs);

    let mut failures = Vec::new();
    let mut table: Vec<[String; 3]> = vec![Default::default(); rows.len()];
    // expected (deny, ask) × got (deny, ask, allow), mode ask only.
    let mut matrix = [[0usize; 3]; 2];
    let mut written = [0usize; 3];
    for ((i, variant, allow, deny), d) in runs.iter().zip(&decisions) {
        let r = &rows[*i];
        let got = verdict(d);
        let col = ["deny", "ask", "allow"]
            .iter()
            .position(|v| *v == got)
            .unwrap_or_else(|| panic!("{}: unknown decision {d}", r.id));
        let slot = ["ask", "approve-for-me", "as-written"]
            .iter()
            .position(|v| v == variant)
            .expect("known variant");
        table[*i][slot] = got.to_string();
        match *variant {
            "ask" => matrix[usize::from(r.expected != "deny")][col] += 1,
            "as-written" => written[col] += 1,
            _ => {}
        }
        if got == "allow" {
            failures.push(format!(
                "{} (line {}, {}) [{variant}]\n    command: {:?}\n    allow: {allow:?}\n    deny: {deny:?}\n    decision: {got}\n{}",
                r.id,
                r.line,
                r.category,
                r.command,
                explain(d)
            ));
        }
    }

    println!("bypass_cases.jsonl: {} rows", rows.len());
    println!("id     expected  ask   approve-for-me  as-written  naive allow rules");
    for (r, t) in rows.iter().zip(&table) {
        println!(
            "{:<6} {:<9} {:<5} {:<15} {:<11} {:?}{}",
            r.id,
            r.expected,
            t[0],
            t[1],
            if t[2].is_empty() { "-" } else { &t[2] },
            r.allow,
            match (r.fallback, r.allow.is_empty()) {
                (false, _) => String::new(),
                (true, false) => format!("  (no usable pattern in {:?}: first word)", r.prose),
                (true, true) => format!(
                    "  (no usable pattern in {:?}, no program word: workspace rules only)",
                    r.prose
                ),
            }
        );
    }
    let fallbacks: Vec<&str> = rows
        .iter()
        .filter(|r| r.fallback)
        .map(|r| r.id.as_str())
        .collect();
    println!(
        "rows whose prose names no usable command pattern ({}): {fallbacks:?}",
        fallbacks.len()
    );
    for (e, name) in ["deny", "ask"].iter().enumerate() {
        println!(
            "mode ask, rows expecting {name}: deny {} / ask {} / allow {}",
            matrix[e][0], matrix[e][1], matrix[e][2]
        );
    }
    println!(
        "as written (rows naming a deny rule): deny {} / ask {} / allow {}",
        written[0], written[1], written[2]
    );
    assert!(
        failures.is_empty(),
        "{} bypass run(s) allowed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// Our own bypass corpus (`tests/data/bypass_own.jsonl`, written for
/// portcullis from the classes of issues 12 and 13): tool calls of every
/// surface — shell text, MCP arguments, URLs, tool fields, MCP names — each
/// under the naive rules it would defeat. None may be allowed.
#[test]
fn no_bypass_of_our_own_corpus_is_allowed() {
    let path = format!(
        "{}/../../tests/data/bypass_own.jsonl",
        env!("CARGO_MANIFEST_DIR")
    );
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let sandbox = Sandbox::new("bypass-own");
    let home = Sandbox::s(&sandbox.home);
    let rows: Vec<serde_json::Value> = text
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(&l.replace("$HOME", &home)).expect("a JSON row"))
        .collect();
    assert!(rows.len() >= 37, "{} rows", rows.len());
    let strings = |v: &serde_json::Value| -> Vec<String> {
        v.as_array()
            .into_iter()
            .flatten()
            .filter_map(|s| s.as_str().map(str::to_string))
            .collect()
    };
    let jobs: Vec<Job> = rows
        .iter()
        .map(|r| {
            let mode = r["mode"].as_str().unwrap_or("ask");
            Job::new(
                config(
                    mode,
                    &with_workspace(&strings(&r["allow"])),
                    &[],
                    &strings(&r["deny"]),
                ),
                r["call"].clone(),
            )
        })
        .collect();
    let decisions = sandbox.decide(&jobs);
    let mut failures = Vec::new();
    println!("bypass_own.jsonl: {} rows", rows.len());
    for (r, d) in rows.iter().zip(&decisions) {
        let got = verdict(d);
        println!(
            "{:<7} {:<6} {:<40} {}",
            r["id"].as_str().unwrap_or("?"),
            got,
            r["class"].as_str().unwrap_or("?"),
            r["call"]["tool"]
        );
        if got == "allow" {
            failures.push(format!(
                "{} [{}]: {}\n{}",
                r["id"],
                r["class"],
                r["call"],
                explain(d)
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} allowed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
