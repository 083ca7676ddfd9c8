//! Codex execpolicy rows: `codex_cases.jsonl`, and the Codex rules rows of `hook_cases.jsonl`.

use std::collections::BTreeMap;

use serde_json::Value;

use super::*;

/// The `prefix_rule`s of a policy text, as portcullis rules: (list, `Bash(<prefix> *)`).
fn prefix_rules(policy: &str) -> Vec<(&'static str, String)> {
    let mut out = Vec::new();
    let mut rest = policy;
    while let Some(at) = rest.find("prefix_rule(") {
        rest = &rest[at + "prefix_rule(".len()..];
        let body = rest.trim_start_matches("pattern=");
        let Some(end) = closing_bracket(body) else {
            break;
        };
        let pattern: Value = serde_json::from_str(&body[..=end].replace('\'', "\""))
            .unwrap_or_else(|e| panic!("prefix_rule pattern {:?}: {e}", &body[..=end]));
        let tail = &body[end + 1..];
        let tail = tail[..tail.find(')').unwrap_or(tail.len())].to_lowercase();
        let list = if tail.contains("forbidden") {
            "deny"
        } else if tail.contains("prompt") {
            "ask"
        } else {
            "allow"
        };
        for prefix in alternatives(&pattern) {
            out.push((list, format!("Bash({} *)", prefix.join(" "))));
        }
    }
    out
}

fn closing_bracket(text: &str) -> Option<usize> {
    let mut depth = 0;
    for (i, ch) in text.char_indices() {
        match ch {
            '[' => depth += 1,
            ']' => {
                depth -= 1;
                if depth == 0 {
                    return Some(i);
                }
            }
            _ => {}
        }
    }
    None
}

/// `["npm", ["i", "install"]]` → `[npm i]`, `[npm install]`.
fn alternatives(pattern: &Value) -> Vec<Vec<String>> {
    let mut out = vec![Vec::new()];
    for token in pattern.as_array().expect("a list") {
        let choices: Vec<String> = match token {
            Value::Array(a) => a
                .iter()
                .map(|x| x.as_str().expect("str").to_string())
                .collect(),
            x => vec![x.as_str().expect("str").to_string()],
        };
        out = out
            .iter()
            .flat_map(|p| {
                choices.iter().map(move |c| {
                    let mut q = p.clone();
                    q.push(c.clone());
                    q
                })
            })
            .collect();
    }
    out
}

/// A policy row: the verdict in mode ask, and the full-access match probe.
pub(super) fn policy_row(
    c: &mut Cases<'_>,
    line: usize,
    command: &str,
    policy: &str,
    expected: &str,
) {
    let parsed = prefix_rules(policy);
    let of = |list: &str| {
        leak(
            parsed
                .iter()
                .filter(|(l, _)| *l == list)
                .map(|(_, r)| r.clone())
                .collect(),
        )
    };
    let all = leak(parsed.iter().map(|(_, r)| r.clone()).collect());
    let (allow, ask, deny) = (of("allow"), of("ask"), of("deny"));
    let config = |mode: &str| {
        let mut a: Vec<&str> = allow.to_vec();
        a.extend(["Read(./**)", "Edit(./**)"]);
        cfg(mode, &a, ask, deny)
    };
    let e = expected.to_lowercase();
    let (verdict, probe) = if e.starts_with("no match") || e.starts_with("no rule match") {
        (Expect::Is(NOT_DENY), Expect::Skips(ALLOW, all))
    } else if e.starts_with("forbidden") {
        (Expect::Cites("deny", deny), Expect::Cites("deny", deny))
    } else if e.starts_with("prompt") && !all.is_empty() {
        (Expect::Cites("ask", ask), Expect::Cites("ask", ask))
    } else if e.starts_with("prompt") {
        (Expect::Is(ASK), Expect::Is(ALLOW))
    } else if e.starts_with("allow") {
        (Expect::Cites("allow", allow), Expect::Cites("allow", allow))
    } else {
        panic!("{}:{line}: unmapped expectation {expected:?}", c.file)
    };
    let job = |mode: &str| vec![Job::new(config(mode), bash(command))];
    c.add(line, command, "ask", job("ask"), verdict);
    c.add(line, command, "match probe", job("full-access"), probe);
}

pub(super) fn cases(rows: &BTreeMap<usize, Value>) -> Vec<Case> {
    let mut c = Cases {
        rows,
        file: CODEX,
        category: "codex: execpolicy rules",
        out: Vec::new(),
    };
    // A policy that does not load: the counterpart is a rule that does not parse.
    let load_errors: [(usize, &str); 4] = [
        (195, "Bash()"),                // empty justification ~ empty specifier
        (196, "WebFetch(example.com)"), // bad network rule ~ WebFetch without domain:
        (197, "Bash(* status)"),        // bad host_executable ~ a pattern without a program
        (198, "mcp__github__x(issue)"), // wrong basename ~ an MCP rule with a specifier
    ];
    for (line, rule) in load_errors {
        let job = Job::new(cfg("ask", &[rule], &[], &[]), bash("git status"));
        c.add(
            line,
            "(policy load)",
            "config error",
            vec![job],
            Expect::ConfigError,
        );
    }
    for (line, row) in rows {
        let source = field(row, "source");
        let (command, expected) = (field(row, "command"), field(row, "expected"));
        if !source.contains("execpolicy") || command == "(policy load)" {
            continue;
        }
        if source.contains("execpolicy-legacy") {
            // The typed-argument matcher approves provably safe invocations: the
            // counterpart is approve-for-me with no rules.
            c.category = "codex: execpolicy-legacy matcher";
            let expect = if *line == 285 {
                // "match -> caller must check writable paths": `../baz` is outside.
                Expect::Because(ASK, &["external-path"])
            } else if expected.starts_with("match") {
                Expect::Is(ALLOW)
            } else {
                Expect::Is(NOT_ALLOW)
            };
            let job = Job::new(cfg("approve-for-me", &[], &[], &[]), bash(command));
            c.add(*line, command, "approve-for-me", vec![job], expect);
        } else {
            c.category = "codex: execpolicy rules";
            policy_row(&mut c, *line, command, field(row, "policy"), expected);
        }
    }
    c.out
}
