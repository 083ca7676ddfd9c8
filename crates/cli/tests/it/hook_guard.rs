//! The hook never fails open: for every agent, every way the hook process can
//! fail — a panic, an abort, a stack overflow, a segmentation fault, a hang —
//! and every pathological input, the agent ends up **blocking** the call, as
//! judged by that agent's own rules for reading a hook's output
//! (the agent-hooks reference this project was given, summarised beside each reader below),
//! within the agent's hook timeout.
//!
//! Each case runs the real binary the way the agent spawns it (a shell running
//! the installed command line, the payload on stdin, stdout and stderr read
//! separately). The faults are forced with `PORTCULLIS_TEST_FAULT` (a switch that
//! can only make a hook refuse); remove the guard (`src/guard.rs`) and the
//! stack overflow, the abort and the segmentation fault end in a signal, which
//! Codex and Gemini read as "run the tool" — these tests then fail.

// Test code: a failed unwrap, index or panic is a failed test.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

use crate::support;

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use support::Sandbox;
use support::hooks::{HookRun, payload, run};

/// What the agent does with the call after reading the hook.
#[derive(Debug, PartialEq, Eq, Clone, Copy)]
enum AgentDoes {
    /// The call is blocked (a refusal the agent honours).
    Blocks,
    /// The call runs, or goes on through the agent's normal flow (fail-open).
    Runs,
    /// The agent asks its user.
    Asks,
}

fn json_of(text: &str) -> Option<Value> {
    let t = text.trim();
    if !t.starts_with('{') {
        return None;
    }
    serde_json::from_str(t).ok()
}

/// Claude Code (§1.3): exit 2 blocks (reason from stderr); any other exit
/// code proceeds unless stdout holds a schema-valid JSON decision, which then
/// decides; a signal (no exit code) or a timeout proceeds.
fn claude_code(r: &HookRun) -> AgentDoes {
    match r.code {
        Some(2) => AgentDoes::Blocks,
        Some(_) => match json_of(&r.stdout)
            .as_ref()
            .and_then(|v| v["hookSpecificOutput"]["permissionDecision"].as_str())
        {
            Some("deny") => AgentDoes::Blocks,
            Some("ask") => AgentDoes::Asks,
            _ => AgentDoes::Runs,
        },
        None => AgentDoes::Runs,
    }
}

/// Codex (§6.1): `permissionDecision: "deny"` or legacy `decision: "block"`
/// on stdout blocks; exit 2 blocks only with a non-empty stderr (empty stderr:
/// "hook failed", not blocked); other exit codes and signals are failures,
/// and a failed hook does not block (fail-open).
fn codex(r: &HookRun) -> AgentDoes {
    let Some(code) = r.code else {
        return AgentDoes::Runs;
    };
    if code == 2 {
        return if r.stderr.trim().is_empty() {
            AgentDoes::Runs
        } else {
            AgentDoes::Blocks
        };
    }
    if code != 0 {
        return AgentDoes::Runs;
    }
    match json_of(&r.stdout) {
        Some(v)
            if v["hookSpecificOutput"]["permissionDecision"] == "deny"
                || v["decision"] == "block" =>
        {
            AgentDoes::Blocks
        }
        _ => AgentDoes::Runs,
    }
}

/// Gemini CLI (§5.3, `hookRunner.ts`): the text is stdout, or stderr when
/// stdout is empty; if it parses as JSON its `decision` decides whatever the
/// exit code (`deny`/`block` block, `ask` asks); otherwise the exit code is
/// `exitCode || 0` — a signal counts as 0 — and ≥ 2 blocks, below allows.
fn gemini(r: &HookRun) -> AgentDoes {
    let text = if r.stdout.trim().is_empty() {
        &r.stderr
    } else {
        &r.stdout
    };
    if let Some(v) = json_of(text) {
        return match v["decision"].as_str() {
            Some("deny" | "block") => AgentDoes::Blocks,
            Some("ask") => AgentDoes::Asks,
            _ => AgentDoes::Runs,
        };
    }
    if r.code.unwrap_or(0) >= 2 {
        AgentDoes::Blocks
    } else {
        AgentDoes::Runs
    }
}

/// Cursor (§4.2): `{"permission": "deny"}` on stdout blocks, `"ask"` asks;
/// exit 2 blocks (third-party docs); any other failure is only a notice, so
/// the call is taken to run.
fn cursor(r: &HookRun) -> AgentDoes {
    if r.code == Some(2) {
        return AgentDoes::Blocks;
    }
    match json_of(&r.stdout)
        .as_ref()
        .and_then(|v| v["permission"].as_str())
    {
        Some("deny") => AgentDoes::Blocks,
        Some("ask") => AgentDoes::Asks,
        _ => AgentDoes::Runs,
    }
}

/// pi (integrations/pi/portcullis.ts): any exit but 0, or a signal, is an
/// error that blocks; on 0 the reply must be `{decision, reason}` JSON, and
/// anything else is an error that blocks too.
fn pi(r: &HookRun) -> AgentDoes {
    if r.code != Some(0) {
        return AgentDoes::Blocks;
    }
    match json_of(&r.stdout)
        .as_ref()
        .and_then(|v| v["decision"].as_str())
    {
        Some("allow") => AgentDoes::Runs,
        Some("ask") => AgentDoes::Asks,
        _ => AgentDoes::Blocks,
    }
}

#[derive(Clone)]
struct AgentCase {
    name: &'static str,
    reads: fn(&HookRun) -> AgentDoes,
    /// The agent's hook timeout (`portcullis install` writes it).
    timeout: Duration,
    payload: fn(&Path, &str) -> Value,
}

fn agents() -> Vec<AgentCase> {
    vec![
        AgentCase {
            name: "claude-code",
            reads: claude_code,
            timeout: Duration::from_secs(600),
            payload: |cwd, cmd| {
                payload::claude(
                    "PreToolUse",
                    Some("S"),
                    cwd,
                    "Bash",
                    json!({"command": cmd}),
                )
            },
        },
        AgentCase {
            name: "codex",
            reads: codex,
            timeout: Duration::from_secs(600),
            payload: |cwd, cmd| {
                payload::codex("PreToolUse", "S", cwd, "Bash", json!({"command": cmd}))
            },
        },
        AgentCase {
            name: "gemini",
            reads: gemini,
            timeout: Duration::from_secs(60),
            payload: |cwd, cmd| {
                payload::gemini("S", cwd, "run_shell_command", json!({"command": cmd}))
            },
        },
        AgentCase {
            name: "cursor",
            reads: cursor,
            timeout: Duration::from_secs(30),
            payload: |cwd, cmd| payload::cursor_shell("S", cwd, cwd, cmd),
        },
        AgentCase {
            name: "pi",
            reads: pi,
            timeout: Duration::from_secs(120),
            payload: |cwd, cmd| payload::pi(Some("S"), cwd, "bash", json!({"command": cmd}), false),
        },
    ]
}

/// The two hook commands: `portcullis-hook AGENT`, which `install` writes,
/// and `portcullis hook AGENT`, which it wrote before (and writes when the
/// first is missing).
const FRONTS: [&str; 2] = [
    concat!("'", env!("CARGO_BIN_EXE_portcullis-hook"), "'"),
    concat!("'", env!("CARGO_BIN_EXE_portcullis"), "' hook"),
];

/// Runs the hook command `front AGENT` as the agents do: `sh -c '<installed
/// command>'` with the payload on stdin, in the sandbox's isolated environment.
fn spawn_like_agent(
    sb: &Sandbox,
    front: &str,
    agent: &str,
    env: &[(&str, &str)],
    payload: &Value,
) -> HookRun {
    let mut c = Command::new("sh");
    c.arg("-c")
        .arg(format!("{front} {agent}"))
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", &sb.home)
        .env("XDG_CONFIG_HOME", sb.home.join(".config"))
        .env("XDG_DATA_HOME", sb.home.join(".local/share"))
        .env("PORTCULLIS_DATA_DIR", sb.data_dir())
        .env("PORTCULLIS_MANAGED_CONFIG", sb.root.join("managed.toml"))
        .current_dir(&sb.repo)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (k, v) in env {
        c.env(k, v);
    }
    run(c, &payload.to_string())
}

const FAULTS: [&str; 6] = ["panic", "abort", "stack-overflow", "segv", "hang", "oom"];

#[test]
fn every_forced_failure_ends_in_a_refusal_each_agent_honours() {
    let sb = Sandbox::new("hook-guard");
    // A harmless call the policy would allow: only the fault can refuse it.
    let mut failures = Vec::new();
    for (agent, front) in agents()
        .into_iter()
        .flat_map(|a| FRONTS.map(|f| (a.clone(), f)))
    {
        for fault in FAULTS {
            let started = Instant::now();
            let r = spawn_like_agent(
                &sb,
                front,
                agent.name,
                &[
                    ("PORTCULLIS_TEST_FAULT", fault),
                    // The hang is cut by the watchdog; a short budget keeps the test quick.
                    ("PORTCULLIS_HOOK_BUDGET_MS", "1500"),
                ],
                &(agent.payload)(&sb.repo, "ls"),
            );
            let took = started.elapsed();
            let does = (agent.reads)(&r);
            if does != AgentDoes::Blocks || took >= agent.timeout {
                failures.push(format!(
                    "{front} {} / {fault}: the agent {does:?} after {took:?}: {r:?}",
                    agent.name
                ));
            }
            if fault == "hang" {
                assert!(
                    r.stdout.contains("ran out of time") || r.stderr.contains("ran out of time"),
                    "{} / hang: the refusal says why: {r:?}",
                    agent.name
                );
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn without_a_fault_the_same_call_is_not_refused() {
    // The control: the faults above, not the call, made the hook refuse.
    let sb = Sandbox::new("hook-guard-control");
    for agent in agents() {
        for front in FRONTS {
            let r = spawn_like_agent(
                &sb,
                front,
                agent.name,
                &[],
                &(agent.payload)(&sb.repo, "ls"),
            );
            let does = (agent.reads)(&r);
            assert_ne!(does, AgentDoes::Blocks, "{front} {}: {r:?}", agent.name);
        }
    }
}

/// Every recursive construct of the grammar, nested or repeated far past any
/// limit, alone and in the shapes the attack pass used.
/// `(name, text, harmless)`: a harmless text (a long but plain command) may be
/// allowed; every other one must be refused or asked.
fn pathological_texts() -> Vec<(String, String, bool)> {
    let mut out: Vec<(String, String, bool)> = vec![
        (
            "[[ ! ! ! … a ]]".into(),
            format!("[[ {}a ]]", "! ".repeat(10_000)),
            false,
        ),
        (
            "$[$[$[ … 1]]]".into(),
            format!("echo {}1{}", "$[".repeat(10_000), "]".repeat(10_000)),
            false,
        ),
        (
            "[[ a && a && … ]]".into(),
            format!("[[ {} ]]", vec!["a"; 25_000].join(" && ")),
            false,
        ),
        (
            "[[ a || a || … ]]".into(),
            format!("[[ {} ]]", vec!["a"; 25_000].join(" || ")),
            false,
        ),
        (
            "216 KB of $[ groups".into(),
            vec![format!("echo {}1{}", "$[".repeat(6000), "]".repeat(6000)); 12].join(" ; "),
            false,
        ),
        (
            // brush-parser allocated without end on it (found by the fuzzer).
            "here-document without a tag in a substitution".into(),
            "$(<<<<< <$(".into(),
            false,
        ),
        (
            "touch on the line before".into(),
            format!("touch /tmp/pwned\n[[ {}a ]]", "! ".repeat(10_000)),
            false,
        ),
    ];
    // Each construct the parser or the walker recurses on, nested 5,000 deep.
    let nest: [(&str, &str, &str); 14] = [
        ("$( … )", "echo $(", ")"),
        ("` … ` (one level)", "echo `echo ", "`"),
        ("( … )", "(", ")"),
        ("{ …; }", "{ ", "; }"),
        ("$(( ( … ) ))", "echo $((", "))"),
        ("(( ( … ) ))", "((", "))"),
        ("${x:-${x:- …}}", "echo ${x:-", "}"),
        ("[[ ( … ) ]]", "[[ ( ", " ) ]]"),
        ("if … fi", "if true; then ", "; fi"),
        ("while … done", "while true; do ", "; done"),
        ("case … esac", "case x in x) ", ";; esac"),
        ("<( … )", "cat <(", ")"),
        ("a[ … ]", "echo ${a[", "]}"),
        ("bash -c '…'", "bash -c 'bash -c ", "'"),
    ];
    for (name, open, close) in nest {
        out.push((
            format!("{name} × 5000"),
            format!("{}true{}", open.repeat(5000), close.repeat(5000)),
            false,
        ));
    }
    // Long flat sequences: operators, pipes, words, redirections, arithmetic.
    for (name, text, harmless) in [
        (
            "a && b && … (top level)",
            vec!["true"; 40_000].join(" && "),
            false,
        ),
        ("a | b | …", vec!["cat"; 40_000].join(" | "), false),
        ("! ! … true", format!("{}true", "! ".repeat(40_000)), false),
        (
            "$((1+1+…))",
            format!("echo $(({}))", vec!["1"; 40_000].join("+")),
            true,
        ),
        (
            "echo a a a …",
            format!("echo {}", vec!["a"; 40_000].join(" ")),
            true,
        ),
        ("> f > f …", vec!["> f"; 40_000].join(" "), true),
    ] {
        out.push((format!("{name} × 40000"), text, harmless));
    }
    out
}

#[test]
fn pathological_inputs_get_an_answer_from_every_front_door() {
    let sb = Sandbox::new("hook-guard-inputs");
    let mut failures = Vec::new();
    for (i, (name, text, harmless)) in pathological_texts().into_iter().enumerate() {
        // `portcullis analyze`: an answer, never a crash; a text this shape is never complete.
        let started = Instant::now();
        let out = Command::new(env!("CARGO_BIN_EXE_portcullis"))
            .args(["analyze", "--json", "--stdin"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .and_then(|mut c| {
                use std::io::Write;
                let _ = c.stdin.take().expect("stdin").write_all(text.as_bytes());
                c.wait_with_output()
            })
            .expect("analyze runs");
        let analysed: Option<Value> = serde_json::from_slice(&out.stdout).ok();
        match analysed {
            Some(a) if out.status.code() == Some(0) => {
                let opaque = a["opaque"].as_array().map_or(0, Vec::len);
                if opaque == 0 && !harmless {
                    failures.push(format!("analyze {name}: complete with no opaque part"));
                }
            }
            _ => failures.push(format!(
                "analyze {name}: {:?} {}",
                out.status,
                String::from_utf8_lossy(&out.stderr)
            )),
        }
        // `portcullis check` under `Bash(*)`: never allow what it could not see.
        let config = sb.write(
            "allow-all.toml",
            "mode = \"ask\"\n[permissions]\nallow = [\"Bash(*)\"]\n",
        );
        let call = json!({"tool": "Bash", "origin": "core", "input": {"command": text}});
        let out = Command::new(env!("CARGO_BIN_EXE_portcullis"))
            .args(["check", "--config"])
            .arg(&config)
            .arg("--batch")
            .env("HOME", &sb.home)
            .env("PORTCULLIS_DATA_DIR", sb.data_dir())
            .env("PORTCULLIS_MANAGED_CONFIG", sb.root.join("managed.toml"))
            .current_dir(&sb.repo)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .and_then(|mut c| {
                use std::io::Write;
                let _ = c
                    .stdin
                    .take()
                    .expect("stdin")
                    .write_all(call.to_string().as_bytes());
                c.wait_with_output()
            })
            .expect("check runs");
        let decided: Option<Value> = String::from_utf8_lossy(&out.stdout)
            .lines()
            .next()
            .and_then(|l| serde_json::from_str(l).ok());
        let verdict = decided
            .as_ref()
            .and_then(|d| d["decision"].as_str().map(str::to_string));
        if verdict.is_none() || (verdict.as_deref() == Some("allow") && !harmless) {
            failures.push(format!(
                "check {name}: {verdict:?} {:?} {}",
                out.status,
                String::from_utf8_lossy(&out.stderr)
            ));
        }
        // Every hook, spawned as its agent spawns it (the two hook commands
        // in turn: they run the same code).
        let front = FRONTS[i % FRONTS.len()];
        for agent in agents() {
            let started_hook = Instant::now();
            let r = spawn_like_agent(
                &sb,
                front,
                agent.name,
                &[],
                &(agent.payload)(&sb.repo, &text),
            );
            let took = started_hook.elapsed();
            let does = (agent.reads)(&r);
            let refused = does != AgentDoes::Runs || harmless;
            if !refused || r.code.is_none() || took >= agent.timeout {
                failures.push(format!(
                    "{front} {} / {name}: {does:?} after {took:?}, exit {:?}, stderr {:?}",
                    agent.name,
                    r.code,
                    r.stderr.chars().take(200).collect::<String>()
                ));
            }
        }
        // Whatever the machine, one text may not take more than a few seconds.
        let took = started.elapsed();
        if took > Duration::from_secs(60) {
            failures.push(format!("{name}: all front doors took {took:?}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
