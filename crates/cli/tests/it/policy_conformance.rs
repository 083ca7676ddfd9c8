//! Peers' permission cases through the real `portcullis check --batch` (issue 3):
//!
//! - `seed_cases.jsonl`: Step-Code's tool-call rows (`[tool] …`), the
//!   coding-agent-loop folder-guard rows, and every shell row (`dangerous`,
//!   `not-dangerous`, `ordinary`, `unresolved`, and `platform-dependent`, which is
//!   `ordinary` on Linux) under five configurations. The skills rows are the
//!   policy crate's (`crates/policy/src/skills.rs` tests).
//! - `codex_cases.jsonl`: the execpolicy rows (`match` / `no match` / decisions).
//! - `hook_cases.jsonl`: Claude Code's documented rule-matching rows, and the two
//!   Codex rules sources of that file (same mapping as the execpolicy rows).
//!
//! Mappings:
//! - Step-Code presets: `ask` → ask, `approve-for-me` → approve-for-me,
//!   `full-access` → full-access, `read-only` → read-only; `approvalMode=auto` →
//!   approve-for-me; "defaulted" (nothing configured) → portcullis' default (ask);
//!   the retired `bypass` preset → ask (as Step-Code maps it). `confirm` = ask,
//!   `block` = deny. `[tool/no-UI]` rows run with `--unattended`.
//! - Step-Code tools are mapped to Claude Code's equivalents (core tools):
//!   `read_file` → `Read`, `write_file` → `Write`, `edit_file` → `Edit`,
//!   `run_command` → `Bash`, `search_web` → `WebSearch`. A `then_run` field (a
//!   fused verification command) becomes a second, `Bash` call; the row's answer
//!   is the stricter of the two, as in Step-Code. Per-tool overrides become rules
//!   naming the tool (`run_command=deny` → deny `Bash`). Rows about the input
//!   field names of the shell tool (`cmd`, `script`) use an `extension` tool
//!   named `run_command`, whose shell-like fields portcullis analyses.
//! - Folder guards become `[workspace]` scopes: `write` → `roots`, `read` →
//!   `read_roots`, `blocked`, `blocked_write`; the calls come from a directory
//!   outside the guarded tree, in approve-for-me mode (a granted root is
//!   writable), unattended (the guard answers without a person).
//! - Codex `prefix_rule(pattern, decision)`: one `Bash(<prefix> *)` rule per
//!   alternative, in `allow` / `ask` (prompt) / `deny` (forbidden); `host_executable`
//!   has no counterpart (a rule naming `git` covers `git` in the standard system
//!   directories). Each such row runs twice: in mode ask (the verdict), and in
//!   full-access as a *match probe* (every other effect is allowed there, so a
//!   reason citing the rule shows exactly whether it matched).
//!
//! Rows whose semantics portcullis deliberately does not share are in
//! `DELIBERATE_DIFFERENCES`, each asserted to behave as the table says.

// Test code: a failed unwrap, index or panic is a failed test.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

use crate::support;

#[path = "policy_conformance/codex.rs"]
mod codex;
#[path = "policy_conformance/hook.rs"]
mod hook;
#[path = "policy_conformance/seed.rs"]
mod seed;

use std::collections::BTreeMap;

use serde_json::{Value, json};
use support::{Job, Sandbox, bash, codes, conformance, explain, field, reasons, rules, verdict};

const ALLOW: &[&str] = &["allow"];
const ASK: &[&str] = &["ask"];
const DENY: &[&str] = &["deny"];
const NOT_ALLOW: &[&str] = &["ask", "deny"];
const NOT_DENY: &[&str] = &["allow", "ask"];

/// What portcullis must answer.
#[derive(Clone, Copy, Debug)]
enum Expect {
    /// One of these verdicts.
    Is(&'static [&'static str]),
    /// One of these verdicts, with one of these reason codes among the reasons.
    Because(&'static [&'static str], &'static [&'static str]),
    /// This verdict, with one of these rules among the reasons.
    Cites(&'static str, &'static [&'static str]),
    /// One of these verdicts, and none of these rules among the reasons.
    Skips(&'static [&'static str], &'static [&'static str]),
    /// Not deny, and no built-in hazard among the reasons.
    Ordinary,
    /// No built-in hazard among the reasons (any verdict).
    NoHazard,
    /// The configuration does not load: the engine stops, every call denied.
    ConfigError,
}

impl Expect {
    fn holds(self, d: &Value) -> bool {
        let v = verdict(d);
        let cited = |list: &[&str]| {
            reasons(d).iter().any(|r| {
                list.iter()
                    .any(|rule| field(r, "rule").starts_with(&format!("{rule} (")))
            })
        };
        let hazard = codes(d).contains(&"hazard");
        match self {
            Expect::Is(vs) => vs.contains(&v),
            Expect::Because(vs, cs) => vs.contains(&v) && codes(d).iter().any(|c| cs.contains(c)),
            Expect::Cites(want, list) => v == want && cited(list),
            Expect::Skips(vs, list) => vs.contains(&v) && !cited(list),
            Expect::Ordinary => v != "deny" && !hazard,
            Expect::NoHazard => !hazard,
            Expect::ConfigError => v == "deny" && codes(d) == ["config-error"],
        }
    }
}

/// A row whose peer semantics portcullis deliberately does not share.
struct Deliberate {
    file: &'static str,
    line: usize,
    /// The case variant it applies to (`*`: every variant of the row).
    variant: &'static str,
    peer: &'static str,
    ours: Expect,
    why: &'static str,
}

const SEED: &str = "seed_cases.jsonl";
const CODEX: &str = "codex_cases.jsonl";
const HOOK: &str = "hook_cases.jsonl";

const DELIBERATE_DIFFERENCES: &[Deliberate] = &[
    // ---- seed_cases.jsonl ----
    // Issue 12 item 8: Windows programs run from WSL are found without their
    // suffix and without regard to case, so `rm.exe` is `rm` on Linux too.
    Deliberate {
        file: SEED,
        line: 226,
        variant: "full-access",
        peer: "ordinary on linux (dangerous only on win32)",
        ours: Expect::Is(ALLOW),
        why: "full-access allows hazards",
    },
    Deliberate {
        file: SEED,
        line: 226,
        variant: "*",
        peer: "ordinary on linux (dangerous only on win32)",
        ours: Expect::Because(NOT_ALLOW, &["hazard"]),
        why: "under WSL `rm.exe` is a Windows program that deletes like `rm`: the hazard packs look Windows programs up without their `.exe`",
    },
    Deliberate {
        file: SEED,
        line: 227,
        variant: "full-access",
        peer: "ordinary on linux (dangerous only on win32)",
        ours: Expect::Is(ALLOW),
        why: "full-access allows hazards",
    },
    Deliberate {
        file: SEED,
        line: 227,
        variant: "*",
        peer: "ordinary on linux (dangerous only on win32)",
        ours: Expect::Because(NOT_ALLOW, &["hazard"]),
        why: "a Windows program's name is found without regard to case and without its `.exe`: `RM.EXE` is `rm`",
    },
    Deliberate {
        file: SEED,
        line: 12,
        variant: "full-access",
        peer: "allow (full-access skips the command policy)",
        ours: Expect::Because(DENY, &["critical-path"]),
        why: "`rm -rf /` deletes every protected path (system files, ~/.ssh, portcullis' own configuration and database): protected paths stay protected in full-access",
    },
    Deliberate {
        file: SEED,
        line: 13,
        variant: "full-access",
        peer: "allow (full-access skips the command policy)",
        ours: Expect::Because(DENY, &["critical-path"]),
        why: "`rm -rf ~` deletes ~/.ssh, the shell rc files and portcullis' own configuration and database: the agent must not be able to remove its own policy",
    },
    Deliberate {
        file: SEED,
        line: 205,
        variant: "*",
        peer: "unresolved (confirm)",
        ours: Expect::Is(ALLOW),
        why: "`declare -n reference=target 2>/dev/null || :` runs nothing: a nameref declaration alone executes no code, and the analysis sees the whole text",
    },
    Deliberate {
        file: SEED,
        line: 234,
        variant: "*",
        peer: "allow (search_web is read-only)",
        ours: Expect::Because(ASK, &["network"]),
        why: "a web search sends the agent's text to a third party (an exfiltration channel): it needs a `WebSearch` rule or a person",
    },
    Deliberate {
        file: SEED,
        line: 246,
        variant: "*",
        peer: "allow (override write_file=allow)",
        ours: Expect::Because(ASK, &["opaque"]),
        why: "a Write call without `file_path` cannot be judged (missing input): fail closed even under a rule allowing the tool",
    },
    Deliberate {
        file: SEED,
        line: 251,
        variant: "*",
        peer: "allow (nonInteractiveApproval=allow approves ordinary confirmations)",
        ours: Expect::Is(DENY),
        why: "an unattended caller never turns an ask into an allow; the portcullis way to let ordinary workspace writes run unattended is mode approve-for-me (rows 256, 259)",
    },
    Deliberate {
        file: SEED,
        line: 255,
        variant: "*",
        peer: "allow (the interactive default is an automatic tier)",
        ours: Expect::Is(ASK),
        why: "portcullis' default mode is ask: a command that is neither read-only nor allowed by a rule asks",
    },
    Deliberate {
        file: SEED,
        line: 261,
        variant: "*",
        peer: "block+terminate (unsupported shell environment)",
        ours: Expect::Is(ALLOW),
        why: "portcullis analyses the bash text itself and has no shell-environment probe; `printf safe` is read-only",
    },
    Deliberate {
        file: SEED,
        line: 276,
        variant: "*",
        peer: "allow (a system-managed capability overrides a write-only block)",
        ours: Expect::Is(DENY),
        why: "no caller capability overrides blocked_write: trusted in-process writers do not go through the agent's permission kernel",
    },
    Deliberate {
        file: SEED,
        line: 281,
        variant: "*",
        peer: "deny (a host read grant must also be blocked for writes)",
        ours: Expect::Is(ALLOW),
        why: "a portcullis read root is read-only by construction; the extra blocked_write entry is unnecessary",
    },
    Deliberate {
        file: SEED,
        line: 237,
        variant: "*",
        peer: "confirm (hazardous)",
        ours: Expect::Because(DENY, &["protected-path"]),
        why: "/etc is a protected path (system files): never deleted or written by an agent, whatever the mode",
    },
    Deliberate {
        file: SEED,
        line: 238,
        variant: "*",
        peer: "confirm (hazardous)",
        ours: Expect::Because(DENY, &["protected-path"]),
        why: "/etc is a protected path (system files), as in row 237",
    },
    Deliberate {
        file: SEED,
        line: 239,
        variant: "*",
        peer: "allow (full-access skips the command policy)",
        ours: Expect::Because(DENY, &["protected-path"]),
        why: "full-access allows everything but explicit deny rules, the managed layer and protected paths: /etc is protected",
    },
    Deliberate {
        file: SEED,
        line: 241,
        variant: "*",
        peer: "confirm (then_run: rm -rf /etc)",
        ours: Expect::Because(DENY, &["protected-path"]),
        why: "the fused command deletes /etc, a protected path (row 237)",
    },
    Deliberate {
        file: SEED,
        line: 242,
        variant: "*",
        peer: "allow (full-access runs the fused command)",
        ours: Expect::Because(DENY, &["protected-path"]),
        why: "protected paths stay protected in full-access (row 239)",
    },
    // ---- codex_cases.jsonl ----
    // Issue 12 item 5: printing every environment variable prints the secret
    // ones too; a rule naming `printenv` authorizes the program, not secrets.
    Deliberate {
        file: CODEX,
        line: 212,
        variant: "ask",
        peer: "allow (prefix_rule printenv)",
        ours: Expect::Because(ASK, &["secret-path"]),
        why: "bare `printenv` prints every environment variable, secret-shaped ones (`*_TOKEN`, `AWS_*` …) included: judged like reading a secret file",
    },
    Deliberate {
        file: CODEX,
        line: 309,
        variant: "approve-for-me",
        peer: "match (legacy default policy)",
        ours: Expect::Because(ASK, &["secret-path"]),
        why: "bare `printenv` prints every environment variable, secret-shaped ones included: judged like reading a secret file",
    },
    Deliberate {
        file: CODEX,
        line: 185,
        variant: "ask",
        peer: "allow (prefix sh -l)",
        ours: Expect::Because(ASK, &["opaque"]),
        why: "`sh -l echo hi` runs the *file* `echo` as a script: code the analysis cannot see, which only a rule naming that file allows",
    },
    Deliberate {
        file: CODEX,
        line: 191,
        variant: "*",
        peer: "no match (host_executable with no paths blocks the basename fallback)",
        ours: Expect::Cites("ask", &["Bash(git *)"]),
        why: "no host_executable allowlists: a rule naming `git` covers git in the standard system directories",
    },
    Deliberate {
        file: CODEX,
        line: 194,
        variant: "*",
        peer: "allow (an exact first-token rule shadows the basename prompt rule)",
        ours: Expect::Cites("ask", &["Bash(git *)"]),
        why: "ask beats allow whatever the rules' specificity (Claude Code semantics, DESIGN §3)",
    },
];

/// Codex' legacy typed-argument matcher refuses what portcullis judges by effect.
const LEGACY_ALLOWED: &[(usize, &str)] = &[
    (
        277,
        "`ls -z`: an unknown option of a read-only program is harmless",
    ),
    (278, "`ls -al`: option bundling is fine"),
    (
        283,
        "`cp` without operands writes nothing (it fails); there is no effect to judge",
    ),
    (284, "`cp foo/bar` writes nothing (it fails)"),
    (287, "`head` reading standard input is harmless"),
    (
        290,
        "`head -n 0`: argument values do not change what is read",
    ),
    (
        291,
        "`head -n 1.5`: argument values do not change what is read",
    ),
    (
        292,
        "`head -n 1.0`: argument values do not change what is read",
    ),
    (
        293,
        "`head -n -1`: argument values do not change what is read",
    ),
    (297, "`pwd foo bar`: extra operands are ignored"),
    (301, "`sed 122,202p` without -n only prints twice"),
    (305, "`cat` reading standard input is harmless"),
    (
        306,
        "`cat -l file.txt`: an unknown option of a read-only program",
    ),
    (308, "`cp foo` writes nothing (it fails)"),
    (311, "`printenv PATH HOME` only prints"),
    (316, "`rg -m -n init`: option values do not make rg unsafe"),
    (317, "`rg --glob src` only searches"),
    (321, "`which` without operands prints nothing"),
];

/// One check: a row, a variant, the calls (their stricter answer counts), the expectation.
struct Case {
    file: &'static str,
    line: usize,
    category: &'static str,
    variant: &'static str,
    jobs: Vec<Job>,
    expect: Expect,
}

fn cfg(mode: &str, allow: &[&str], ask: &[&str], deny: &[&str]) -> String {
    support::config(mode, &rules(allow), &rules(ask), &rules(deny))
}

/// The rules plus the workspace: reads and edits in `./**` allowed.
fn ws<'a>(allow: &[&'a str]) -> Vec<&'a str> {
    let mut a = allow.to_vec();
    a.extend(["Read(./**)", "Edit(./**)"]);
    a
}

fn tool(name: &str, origin: &str, input: Value) -> Value {
    json!({"tool": name, "origin": origin, "input": input})
}

fn read(path: &str) -> Value {
    tool("Read", "core", json!({"file_path": path}))
}

fn write(path: &str) -> Value {
    tool("Write", "core", json!({"file_path": path, "content": "x"}))
}

fn edit(path: &str) -> Value {
    let input = json!({"file_path": path, "old_string": "a", "new_string": "b"});
    tool("Edit", "core", input)
}

fn web_fetch(url: &str) -> Value {
    tool(
        "WebFetch",
        "core",
        json!({"url": url, "prompt": "summarize"}),
    )
}

fn from(mut call: Value, cwd: &str) -> Value {
    call["cwd"] = json!(cwd);
    call
}

/// The stricter decision of several calls (deny > ask > allow), with its reasons.
fn strictest(ds: &[&Value]) -> Value {
    let rank = |v: &str| ["allow", "ask", "deny"].iter().position(|x| *x == v);
    let top = ds
        .iter()
        .map(|d| verdict(d))
        .max_by_key(|v| rank(v))
        .unwrap_or("?");
    let why: Vec<Value> = ds
        .iter()
        .filter(|d| verdict(d) == top)
        .flat_map(|d| reasons(d).iter().cloned())
        .collect();
    json!({"decision": top, "reasons": why})
}

fn leak(list: Vec<String>) -> &'static [&'static str] {
    Vec::leak(
        list.into_iter()
            .map(|s| &*String::leak(s))
            .collect::<Vec<_>>(),
    )
}

/// Collects cases, checking that each row is the one the table means.
struct Cases<'a> {
    rows: &'a BTreeMap<usize, Value>,
    file: &'static str,
    category: &'static str,
    out: Vec<Case>,
}

impl Cases<'_> {
    fn add(&mut self, line: usize, text: &str, variant: &'static str, jobs: Vec<Job>, e: Expect) {
        let row = self
            .rows
            .get(&line)
            .unwrap_or_else(|| panic!("{}: no line {line}", self.file));
        let command = field(row, "command");
        assert!(
            command.starts_with(text),
            "{}:{line} is {command:?}, not {text:?}",
            self.file
        );
        self.out.push(Case {
            file: self.file,
            line,
            category: self.category,
            variant,
            jobs,
            expect: e,
        });
    }
}

/// Claude Code rows whose answer portcullis deliberately does not share (by design
/// of the engine, not by accident): the hook table's entries are here so the
/// whole table sits in one place.
const HOOK_DIFFERENCES: &[Deliberate] = &[
    Deliberate {
        file: HOOK,
        line: 99,
        variant: "*",
        peer: "prompt (Manual mode): unquoted globs with exec-capable commands always prompt",
        ours: Expect::Is(ALLOW),
        why: "portcullis expands the glob and judges each file it names; every match of `src/*` begins with `src/`, so none can read as a `find` option (a glob at the start of a word, like `find *`, still asks: `glob-options`)",
    },
    Deliberate {
        file: HOOK,
        line: 77,
        variant: "*",
        peer: "match (Bash(* install): leading wildcard)",
        ours: Expect::ConfigError,
        why: "a command pattern starts with the program; `Bash(* install)` would match every program and is refused as a configuration error (fail closed)",
    },
    Deliberate {
        file: HOOK,
        line: 76,
        variant: "*",
        peer: "match (Bash(npm *) allows npm install)",
        ours: Expect::Because(ASK, &["code"]),
        why: "`npm install` runs the dependencies' install scripts: a wildcard never covers code-running subcommands, a rule naming them does (`Bash(npm install *)`); `Bash(npm *)` must not cover `npm exec -c …` either (bypass BP080)",
    },
    Deliberate {
        file: HOOK,
        line: 92,
        variant: "*",
        peer: "match (bare xargs stripped: allowed)",
        ours: Expect::Because(ASK, &["dynamic-path"]),
        why: "xargs appends file names read at run time: what grep reads is unknown (could be ~/.ssh/id_rsa)",
    },
    Deliberate {
        file: HOOK,
        line: 94,
        variant: "*",
        peer: "match (dangerous): the runner prefix covers anything after it",
        ours: Expect::Is(NOT_ALLOW),
        why: "a runner's command is judged on its own: an allow rule for `devbox run *` never covers `rm -rf .`",
    },
    Deliberate {
        file: HOOK,
        line: 95,
        variant: "*",
        peer: "prompt (exec wrappers are not auto-approved by prefix rules)",
        ours: Expect::Is(ALLOW),
        why: "portcullis unwraps watch and judges the command it runs: `ls` is read-only",
    },
    Deliberate {
        file: HOOK,
        line: 101,
        variant: "*",
        peer: "prompt (cd into another directory + git)",
        ours: Expect::Is(ALLOW),
        why: "cd is followed: `sub` is a plain directory of the same repository, where git status is read-only",
    },
    Deliberate {
        file: HOOK,
        line: 109,
        variant: "*",
        peer: "prompt (commands over 10,000 characters)",
        ours: Expect::Is(ALLOW),
        why: "the analysis reads up to 256 KiB; length alone is no reason to ask (past the limit the text is opaque: ask)",
    },
    Deliberate {
        file: HOOK,
        line: 127,
        variant: "*",
        peer: "hook runs (fail-open on $() for specific patterns)",
        ours: Expect::Skips(ALLOW, &["Bash(git push *)"]),
        why: "`$(date)` is analysed as a command of its own; a rule naming `git push` does not apply to `echo` or `date`",
    },
    Deliberate {
        file: HOOK,
        line: 140,
        variant: "*",
        peer: "allow rule Bash(python:*) matches (redirect checked separately)",
        ours: Expect::Because(ASK, &["opaque"]),
        why: "`python script.py` runs code from a file the analysis cannot see: only a rule naming the file (`Bash(python script.py)`) allows it",
    },
    Deliberate {
        file: HOOK,
        line: 146,
        variant: "*",
        peer: "prompt (should): the echo rule must not cover `ls`",
        ours: Expect::Is(ALLOW),
        why: "each command is authorized on its own: echo by the rule, ls as a read-only program; nothing is left unauthorized",
    },
    Deliberate {
        file: HOOK,
        line: 151,
        variant: "*",
        peer: "reported: prompts despite Bash(echo *)",
        ours: Expect::Is(ALLOW),
        why: "the reported prompt is the bug: `$(date +%H%M%S)` is a read-only command of its own",
    },
];

fn deliberate(case: &Case) -> Option<&'static Deliberate> {
    DELIBERATE_DIFFERENCES
        .iter()
        .chain(HOOK_DIFFERENCES)
        .chain(legacy_differences())
        .find(|d| {
            d.file == case.file
                && d.line == case.line
                && (d.variant == "*" || d.variant == case.variant)
        })
}

/// LEGACY_ALLOWED as table entries.
fn legacy_differences() -> &'static [Deliberate] {
    static TABLE: std::sync::OnceLock<Vec<Deliberate>> = std::sync::OnceLock::new();
    TABLE.get_or_init(|| {
        LEGACY_ALLOWED
            .iter()
            .map(|(line, why)| Deliberate {
                file: CODEX,
                line: *line,
                variant: "*",
                peer: "error / no match (not provably safe: ask)",
                ours: Expect::Is(ALLOW),
                why,
            })
            .collect()
    })
}

fn by_line(rows: Vec<(usize, Value)>) -> BTreeMap<usize, Value> {
    rows.into_iter().collect()
}

#[test]
fn peers_permission_cases() {
    let seed_rows = by_line(conformance(SEED));
    let codex_rows = by_line(conformance(CODEX));
    let hook_rows = by_line(conformance(HOOK));
    assert_eq!(
        (seed_rows.len(), codex_rows.len(), hook_rows.len()),
        (303, 450, 166),
        "rows read"
    );
    let sb = Sandbox::new("conformance");
    let mut cases = seed::shell(&seed_rows);
    cases.extend(seed::tools(&seed_rows));
    cases.extend(seed::guard(&seed_rows, &sb));
    cases.extend(codex::cases(&codex_rows));
    cases.extend(hook::cases(&hook_rows, &sb));

    let jobs: Vec<Job> = cases.iter().flat_map(|c| c.jobs.iter().cloned()).collect();
    let decisions = sb.decide(&jobs);
    let mut next = decisions.iter();

    // category → (rows, cases, passed, deliberate)
    let mut tally: BTreeMap<&str, (std::collections::BTreeSet<usize>, usize, usize, usize)> =
        BTreeMap::new();
    let mut used = std::collections::BTreeSet::new();
    let mut failures = Vec::new();
    for case in &cases {
        let ds: Vec<&Value> = case
            .jobs
            .iter()
            .map(|_| next.next().expect("a decision"))
            .collect();
        let d = strictest(&ds);
        let table = deliberate(case);
        let expect = table.map_or(case.expect, |t| t.ours);
        let t = tally.entry(case.category).or_default();
        t.0.insert(case.line);
        t.1 += 1;
        if let Some(entry) = table {
            used.insert((entry.file, entry.line));
            t.3 += 1;
        }
        if expect.holds(&d) {
            t.2 += 1;
        } else {
            let rows = match case.file {
                SEED => &seed_rows,
                CODEX => &codex_rows,
                _ => &hook_rows,
            };
            let row = &rows[&case.line];
            failures.push(format!(
                "{}:{} [{}] ({})\n    command: {:?}\n    peer expected: {:?}\n    want: {expect:?}{}\n    got: {}\n{}",
                case.file,
                case.line,
                case.variant,
                case.category,
                field(row, "command"),
                field(row, "expected"),
                if table.is_some() { " (DELIBERATE_DIFFERENCES)" } else { "" },
                verdict(&d),
                explain(&d)
            ));
        }
    }
    assert!(next.next().is_none(), "every decision used");

    println!("category                          rows  cases  passed  deliberate");
    for (name, (lines, n, passed, delib)) in &tally {
        println!(
            "{name:<33} {:>4}  {n:>5}  {passed:>6}  {delib:>10}",
            lines.len()
        );
    }
    let skills = seed_rows
        .values()
        .filter(|r| {
            let s = field(r, "source");
            s.contains("deer-flow") || s.contains("agentskills")
        })
        .count();
    println!("seed: skills rows (policy crate unit tests, not here): {skills}");
    println!("\nDELIBERATE_DIFFERENCES:");
    for d in DELIBERATE_DIFFERENCES
        .iter()
        .chain(HOOK_DIFFERENCES)
        .chain(legacy_differences())
    {
        println!(
            "  {}:{} peer: {} | portcullis: {:?} | {}",
            d.file, d.line, d.peer, d.ours, d.why
        );
    }
    let unused: Vec<String> = DELIBERATE_DIFFERENCES
        .iter()
        .chain(HOOK_DIFFERENCES)
        .chain(legacy_differences())
        .filter(|d| !used.contains(&(d.file, d.line)))
        .map(|d| format!("{}:{}", d.file, d.line))
        .collect();
    assert!(
        unused.is_empty(),
        "table entries matching no case: {unused:?}"
    );
    assert!(
        failures.is_empty(),
        "{} of {} cases differ:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
}
