//! `portcullis analyze --json` is a contract other checks rely on. These tests run
//! the real binary on every command of the conformance files and check the
//! shape of what it prints, the exit codes, and that `--stdin` gives the same.

// Test code: a failed unwrap, index or panic is a failed test.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

use serde_json::Value;

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_portcullis"))
}

fn conformance_commands() -> Vec<(String, String)> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/data/conformance");
    let mut out = Vec::new();
    for file in [
        "seed_cases.jsonl",
        "codex_cases.jsonl",
        "hook_cases.jsonl",
        "bypass_cases.jsonl",
    ] {
        let path = dir.join(file);
        let text = std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
        for (i, line) in text
            .lines()
            .enumerate()
            .filter(|(_, l)| !l.trim().is_empty())
        {
            let v: Value = serde_json::from_str(line).expect("conformance line is JSON");
            if let Some(c) = v["command"].as_str() {
                out.push((format!("{file}:{}", i + 1), c.to_string()));
            }
        }
    }
    out
}

/// Checks one printed analysis against the contract; returns what is wrong.
fn contract_errors(v: &Value) -> Vec<String> {
    let mut errors = Vec::new();
    let obj = match v.as_object() {
        Some(o) => o,
        None => return vec!["not a JSON object".into()],
    };
    for key in ["commands", "effects", "opaque"] {
        if !obj.get(key).is_some_and(Value::is_array) {
            errors.push(format!("`{key}` is not an array"));
        }
    }
    for c in v["commands"].as_array().into_iter().flatten() {
        let program = c["program"].as_str();
        if program.is_none() {
            errors.push(format!("command without a string `program`: {c}"));
        }
        match &c["argv"] {
            Value::Null => {}
            Value::Array(argv) => {
                if argv.first().and_then(Value::as_str) != program {
                    errors.push(format!("argv[0] is not the program: {c}"));
                }
                if argv.iter().any(|a| !a.is_string()) {
                    errors.push(format!("argv holds a non-string: {c}"));
                }
            }
            other => errors.push(format!("argv is neither null nor an array: {other}")),
        }
        if !c["via"].is_string() {
            errors.push(format!("command without a string `via`: {c}"));
        }
        if !c["depth"].is_u64() {
            errors.push(format!("command without a numeric `depth`: {c}"));
        }
        if !c["env"].is_array() {
            errors.push(format!("command without an `env` array: {c}"));
        }
        for e in c["env"].as_array().into_iter().flatten() {
            if !e["name"].is_string() || !e["value"].is_string() {
                errors.push(format!("env entry without name/value: {e}"));
            }
        }
        for r in c["redirects"].as_array().into_iter().flatten() {
            let fd_ok = r["fd"].is_null() || r["fd"].is_i64();
            if !r["op"].is_string() || !r["target"].is_string() || !fd_ok {
                errors.push(format!("redirect without op/fd/target: {r}"));
            }
        }
        if !c["redirects"].is_array() {
            errors.push(format!("command without a `redirects` array: {c}"));
        }
    }
    for e in v["effects"].as_array().into_iter().flatten() {
        let ok = match e["kind"].as_str() {
            Some("read" | "write" | "delete") => e["path"].is_string(),
            Some("move") => e["from"].is_string() && e["to"].is_string(),
            Some("network") => e["program"].is_string(),
            Some("code") => {
                e["program"].is_string() && e["source"].is_string() && e["reason"].is_string()
            }
            _ => false,
        };
        if !ok {
            errors.push(format!("malformed effect: {e}"));
        }
    }
    for o in v["opaque"].as_array().into_iter().flatten() {
        if !o["reason"].is_string() || !o["text"].is_string() {
            errors.push(format!("malformed opaque entry: {o}"));
        }
    }
    errors
}

fn parse_stdout(out: &Output) -> Value {
    let text = String::from_utf8(out.stdout.clone()).expect("stdout is UTF-8");
    assert_eq!(
        text.lines().count(),
        1,
        "--json prints exactly one line: {text:?}"
    );
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("stdout is not JSON ({e}): {text:?}"))
}

#[test]
fn every_conformance_command_meets_the_contract() {
    let cases = conformance_commands();
    assert!(
        cases.len() > 900,
        "only {} conformance commands read",
        cases.len()
    );
    let mut failures = Vec::new();
    for (origin, command) in &cases {
        let out = bin()
            .args(["analyze", "--json", command])
            .output()
            .expect("run portcullis");
        if out.status.code() != Some(0) {
            failures.push(format!(
                "{origin}: exit {:?} for {command:?}: {}",
                out.status.code(),
                String::from_utf8_lossy(&out.stderr)
            ));
            continue;
        }
        let errors = contract_errors(&parse_stdout(&out));
        if !errors.is_empty() {
            failures.push(format!("{origin}: {command:?}: {}", errors.join("; ")));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} commands broke the contract:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
}

#[test]
fn the_documented_example() {
    let out = bin()
        .args(["analyze", "--json", "git status > out.txt"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let v = parse_stdout(&out);
    assert_eq!(v["commands"][0]["program"], "git");
    assert_eq!(
        v["commands"][0]["argv"],
        serde_json::json!(["git", "status"])
    );
    assert_eq!(v["commands"][0]["via"], "top");
    assert_eq!(v["commands"][0]["depth"], 0);
    assert_eq!(
        v["commands"][0]["redirects"],
        serde_json::json!([{"op": ">", "fd": 1, "target": "out.txt"}])
    );
    assert_eq!(
        v["effects"],
        serde_json::json!([{"kind": "write", "path": "out.txt"}])
    );
    assert_eq!(v["opaque"], serde_json::json!([]));

    let out = bin().args(["analyze", "--json", "$x"]).output().unwrap();
    let v = parse_stdout(&out);
    assert_eq!(
        v["opaque"],
        serde_json::json!([{"reason": "dynamic-command-name", "text": "$x"}])
    );

    let out = bin()
        .args(["analyze", "--json", "timeout 5 sh -c 'id'"])
        .output()
        .unwrap();
    let v = parse_stdout(&out);
    let programs: Vec<&str> = v["commands"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["program"].as_str().unwrap())
        .collect();
    assert_eq!(programs, ["timeout", "sh", "id"]);
    let out = bin()
        .args(["analyze", "--json", "r\"\"m -rf x"])
        .output()
        .unwrap();
    assert_eq!(parse_stdout(&out)["commands"][0]["program"], "rm");
}

#[test]
fn stdin_gives_the_same_result_as_an_argument() {
    let text = "cat <<'EOF' | sh\nrm -rf ./build\nEOF\necho \"$(id)\" > ~/.bashrc";
    let by_arg = bin().args(["analyze", "--json", text]).output().unwrap();
    let mut child = bin()
        .args(["analyze", "--json", "--stdin"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(text.as_bytes())
        .unwrap();
    let by_stdin = child.wait_with_output().unwrap();
    assert_eq!(by_stdin.status.code(), Some(0));
    assert_eq!(parse_stdout(&by_arg), parse_stdout(&by_stdin));
}

#[test]
fn usage_errors_exit_1_with_a_message() {
    for args in [
        vec!["analyze"],
        vec!["analyze", "--json", "--stdin", "ls"],
        vec!["analyze", "--bogus", "ls"],
        vec!["frobnicate"],
    ] {
        let out = bin().args(&args).stdin(Stdio::null()).output().unwrap();
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        assert!(out.stdout.is_empty(), "{args:?} printed to stdout");
        assert!(!out.stderr.is_empty(), "{args:?} gave no message");
    }
}

#[test]
fn invalid_utf8_on_stdin_is_a_clear_error() {
    let mut child = bin()
        .args(["analyze", "--json", "--stdin"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(&[0x66, 0xff, 0xfe])
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("UTF-8"));
}

#[test]
fn the_readable_tree_shows_nesting_and_opaque_parts() {
    let out = bin()
        .args(["analyze", "timeout 5 sh -c 'id'; $x"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("timeout 5 sh -c id"), "{text}");
    assert!(text.contains("      id   [via sh -c]"), "{text}");
    assert!(text.contains("dynamic-command-name: $x"), "{text}");
}
