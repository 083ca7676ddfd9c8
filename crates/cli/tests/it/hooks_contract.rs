//! The cross-provider contract: one scenario through every front door, one verdict.
//!
//! Session `S` has a read-only session grant on `~/Downloads` (outside the
//! workspace `~/proj`; `[workspace] blocked_write = ["~/Downloads"]`). The
//! scenario, run through the five agent adapters (`portcullis hook claude-code |
//! codex | cursor | gemini | pi`, each with the agent's own tools) and through
//! `portcullis check --session S` (the library / CLI path):
//!
//! 1. read a file in Downloads (each agent's read tool)      → allow (the grant)
//! 2. write a file in Downloads (write tool / a redirect)    → deny (blocked for writes)
//! 3. read a symlink in Downloads pointing outside it        → not allowed (the grant
//!    covers the path as it resolves: the target is outside)
//! 4. `cat` a file in Downloads through the shell tool       → allow (the grant)
//!
//! Every door must give the same verdict per step (in the agent's own terms:
//! Codex has no allow, so "no opinion"; Cursor's `beforeReadFile` and Codex cannot
//! ask, so step 3 is an ask where the agent can ask and a deny elsewhere), the
//! engine must have decided the same underlying verdict for every door (the
//! audit rows), and every decision and request must belong to session `S`: Claude
//! Code, Codex and Gemini pass it as `session_id`, Cursor as `conversation_id`, pi
//! as `session_id`.
//!
//! The HTTP front door (`portcullis serve`, `POST /s/S/v1/decide`) is the
//! seventh door: the session named by the URL path, the `X-Session-ID` header
//! and the body at once (equal values), proven with S's token.

// Test code: a failed unwrap, index or panic is a failed test.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

use crate::support;

use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use support::Sandbox;
use support::hooks::{HookRun, payload, s};

const SESSION: &str = "S";

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Step {
    ReadFile,
    WriteFile,
    ReadSymlinkOut,
    ShellCat,
}

const STEPS: [Step; 4] = [
    Step::ReadFile,
    Step::WriteFile,
    Step::ReadSymlinkOut,
    Step::ShellCat,
];

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Door {
    ClaudeCode,
    Codex,
    Cursor,
    Gemini,
    Pi,
    /// `portcullis check --session S`: the library path.
    Check,
    /// `POST /s/S/v1/decide` on `portcullis serve`.
    Http,
}

const DOORS: [Door; 7] = [
    Door::ClaudeCode,
    Door::Codex,
    Door::Cursor,
    Door::Gemini,
    Door::Pi,
    Door::Check,
    Door::Http,
];

/// A verdict as the door's caller sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Seen {
    Allow,
    Ask,
    Deny,
}

struct Scenario {
    sb: Sandbox,
    config: PathBuf,
    downloads: PathBuf,
    /// S's token, which HTTP callers prove the session with.
    token: String,
    server: Server,
}

/// `portcullis serve` of the sandbox, killed on drop.
struct Server {
    child: std::process::Child,
    port: u16,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Scenario {
    fn new() -> Scenario {
        let sb = Sandbox::new("hooks-contract");
        let downloads = sb.home.join("Downloads");
        sb.write("home/Downloads/report.txt", "quarterly report\n");
        sb.write("outside/notes.txt", "not in Downloads\n");
        std::os::unix::fs::symlink(
            sb.root.join("outside/notes.txt"),
            downloads.join("elsewhere.txt"),
        )
        .expect("symlink");
        let config = sb.write(
            "portcullis.toml",
            "mode = \"ask\"\n[workspace]\nblocked_write = [\"~/Downloads\"]\n",
        );
        let reg = sb.cli_json(&["sessions", "register", "--id", SESSION, "--json"]);
        assert_eq!(reg["session"]["id"], SESSION);
        let token = reg["token"].as_str().unwrap().to_string();
        let port = support::serve::free_port();
        let child = sb
            .portcullis()
            .args([
                "serve",
                "--config",
                &s(&config),
                "--addr",
                &format!("127.0.0.1:{port}"),
            ])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("portcullis serve");
        let server = Server { child, port };
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
        while support::serve::http(port, "GET", "/healthz", &[], None).0 != 200 {
            assert!(std::time::Instant::now() < deadline, "serve never answered");
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        let grant = sb.cli_json(&[
            "grants",
            "add",
            "--session",
            SESSION,
            "--scope",
            "session",
            "--op",
            "read",
            "--path",
            &s(&downloads),
            "--json",
        ]);
        assert_eq!(grant["op"], "read");
        assert_eq!(grant["target"]["folder"], true);
        Scenario {
            sb,
            config,
            downloads,
            token,
            server,
        }
    }

    fn w(&self) -> &Path {
        &self.sb.repo
    }

    fn dl(&self, name: &str) -> String {
        s(&self.downloads.join(name))
    }

    fn hook(&self, agent: &str, payload: &Value) -> HookRun {
        self.sb
            .hook(agent, Some(&self.config), &payload.to_string())
    }

    /// Runs one step through one door and reads the verdict off the native reply.
    fn run(&self, door: Door, step: Step) -> (Seen, String) {
        let w = self.w();
        let report = self.dl("report.txt");
        let new = self.dl("new.txt");
        let link = self.dl("elsewhere.txt");
        let cat = format!("cat {report}");
        match door {
            Door::ClaudeCode => {
                let (tool, input) = match step {
                    Step::ReadFile => ("Read", json!({ "file_path": report })),
                    Step::WriteFile => ("Write", json!({ "file_path": new, "content": "x" })),
                    Step::ReadSymlinkOut => ("Read", json!({ "file_path": link })),
                    Step::ShellCat => ("Bash", json!({ "command": cat })),
                };
                let run = self.hook(
                    "claude-code",
                    &payload::claude("PreToolUse", Some(SESSION), w, tool, input),
                );
                let reply = run.reply().expect("Claude Code always gets a reply");
                let d = reply["hookSpecificOutput"]["permissionDecision"].clone();
                let seen = seen(d.as_str().unwrap_or("?"));
                assert_eq!(run.code == Some(2), seen == Seen::Deny, "{run:?}");
                (seen, run.stdout)
            }
            Door::Codex => {
                // Codex reads through its shell; it writes with `apply_patch`.
                let (tool, input) = match step {
                    Step::ReadFile => (
                        "Bash",
                        json!({ "command": format!("sed -n 1,200p {report}") }),
                    ),
                    Step::WriteFile => (
                        "apply_patch",
                        json!({ "command": format!(
                            "*** Begin Patch\n*** Add File: {new}\n+x\n*** End Patch\n"
                        ) }),
                    ),
                    Step::ReadSymlinkOut => (
                        "Bash",
                        json!({ "command": format!("sed -n 1,200p {link}") }),
                    ),
                    Step::ShellCat => ("Bash", json!({ "command": cat })),
                };
                let run = self.hook(
                    "codex",
                    &payload::codex("PreToolUse", SESSION, w, tool, input),
                );
                // No opinion is Codex' allow: portcullis has nothing against it.
                let seen = match run.reply() {
                    None => Seen::Allow,
                    Some(r) => seen(
                        r["hookSpecificOutput"]["permissionDecision"]
                            .as_str()
                            .unwrap_or("?"),
                    ),
                };
                assert_eq!(run.code == Some(2), seen == Seen::Deny, "{run:?}");
                if seen == Seen::Deny {
                    assert!(!run.stderr.trim().is_empty(), "Codex needs stderr: {run:?}");
                }
                (seen, run.stdout)
            }
            Door::Cursor => {
                // Cursor gates reads with beforeReadFile and everything the shell
                // does with beforeShellExecution (it has no pre-write hook).
                let p = match step {
                    Step::ReadFile => payload::cursor_read(SESSION, w, &report),
                    Step::WriteFile => {
                        payload::cursor_shell(SESSION, w, w, &format!("echo x > {new}"))
                    }
                    Step::ReadSymlinkOut => payload::cursor_read(SESSION, w, &link),
                    Step::ShellCat => payload::cursor_shell(SESSION, w, w, &cat),
                };
                let run = self.hook("cursor", &p);
                assert_eq!(run.code, Some(0), "{run:?}");
                let reply = run.reply().expect("Cursor always gets a reply");
                (
                    seen(reply["permission"].as_str().unwrap_or("?")),
                    run.stdout,
                )
            }
            Door::Gemini => {
                let (tool, input) = match step {
                    Step::ReadFile => ("read_file", json!({ "file_path": report })),
                    Step::WriteFile => ("write_file", json!({ "file_path": new, "content": "x" })),
                    Step::ReadSymlinkOut => ("read_file", json!({ "file_path": link })),
                    Step::ShellCat => ("run_shell_command", json!({ "command": cat })),
                };
                let run = self.hook("gemini", &payload::gemini(SESSION, w, tool, input));
                let reply = run.reply().expect("Gemini always gets a reply");
                let seen = seen(reply["decision"].as_str().unwrap_or("?"));
                assert_eq!(run.code == Some(2), seen == Seen::Deny, "{run:?}");
                (seen, run.stdout)
            }
            Door::Pi => {
                // pi's paths may be relative to its cwd (the workspace).
                let (tool, input) = match step {
                    Step::ReadFile => ("read", json!({ "path": report })),
                    Step::WriteFile => (
                        "write",
                        json!({ "path": "../Downloads/new.txt", "content": "x" }),
                    ),
                    Step::ReadSymlinkOut => {
                        ("read", json!({ "path": "../Downloads/elsewhere.txt" }))
                    }
                    Step::ShellCat => ("bash", json!({ "command": "cat ~/Downloads/report.txt" })),
                };
                let run = self.hook("pi", &payload::pi(Some(SESSION), w, tool, input, true));
                assert_eq!(run.code, Some(0), "{run:?}");
                let reply = run.reply().expect("pi always gets a reply");
                (seen(reply["decision"].as_str().unwrap_or("?")), run.stdout)
            }
            Door::Http => http_door(self, step),
            Door::Check => {
                let (tool, input) = match step {
                    Step::ReadFile => ("Read", json!({ "file_path": report })),
                    Step::WriteFile => ("Write", json!({ "file_path": new, "content": "x" })),
                    Step::ReadSymlinkOut => ("Read", json!({ "file_path": link })),
                    Step::ShellCat => ("Bash", json!({ "command": cat })),
                };
                let out = self.sb.cli(&[
                    "check",
                    "--config",
                    &s(&self.config),
                    "--cwd",
                    &s(w),
                    "--session",
                    SESSION,
                    "--tool",
                    tool,
                    "--origin",
                    "core",
                    "--input",
                    &input.to_string(),
                ]);
                let text = String::from_utf8_lossy(&out.stdout).into_owned();
                let d: Value = serde_json::from_str(&text)
                    .unwrap_or_else(|e| panic!("check: not JSON ({e}): {text}"));
                assert_eq!(d["session_status"], "active", "{d}");
                (seen(d["decision"].as_str().unwrap_or("?")), text)
            }
        }
    }
}

fn http_door(sc: &Scenario, step: Step) -> (Seen, String) {
    let report = sc.dl("report.txt");
    let (tool, input) = match step {
        Step::ReadFile => ("Read", json!({ "file_path": report })),
        Step::WriteFile => (
            "Write",
            json!({ "file_path": sc.dl("new.txt"), "content": "x" }),
        ),
        Step::ReadSymlinkOut => ("Read", json!({ "file_path": sc.dl("elsewhere.txt") })),
        Step::ShellCat => ("Bash", json!({ "command": format!("cat {report}") })),
    };
    let body = json!({"tool": tool, "origin": "core", "input": input, "cwd": s(sc.w()), "session": SESSION});
    let auth = format!("Bearer {}", sc.token);
    let (status, _, text) = support::serve::http(
        sc.server.port,
        "POST",
        &format!("/s/{SESSION}/v1/decide"),
        &[("X-Session-ID", SESSION), ("Authorization", &auth)],
        Some(&body.to_string()),
    );
    assert_eq!(status, 200, "{text}");
    let d: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("not JSON ({e}): {text}"));
    assert_eq!(d["session_status"], "active", "{d}");
    (seen(d["decision"].as_str().unwrap_or("?")), text)
}

fn seen(word: &str) -> Seen {
    match word {
        "allow" => Seen::Allow,
        "ask" => Seen::Ask,
        "deny" => Seen::Deny,
        other => panic!("not a verdict: {other:?}"),
    }
}

/// What every door must answer for a step.
fn holds(step: Step, v: Seen) -> bool {
    match step {
        Step::ReadFile | Step::ShellCat => v == Seen::Allow,
        Step::WriteFile => v == Seen::Deny,
        Step::ReadSymlinkOut => v != Seen::Allow,
    }
}

#[test]
fn one_scenario_one_verdict_through_every_door() {
    let sc = Scenario::new();
    let mut table = Vec::new();
    let mut failures = Vec::new();
    for door in DOORS {
        for step in STEPS {
            let (v, raw) = sc.run(door, step);
            if !holds(step, v) {
                failures.push(format!("{door:?} / {step:?}: {v:?}\n    {}", raw.trim()));
            }
            table.push((door, step, v));
        }
    }
    for door in DOORS {
        let row: Vec<String> = table
            .iter()
            .filter(|(d, _, _)| *d == door)
            .map(|(_, st, v)| format!("{st:?}={v:?}"))
            .collect();
        eprintln!("{:<12} {}", format!("{door:?}"), row.join("  "));
    }
    assert!(
        failures.is_empty(),
        "verdicts differ:\n{}",
        failures.join("\n")
    );

    // Step 3 is the same ask underneath: where the agent can ask it asks, where
    // it cannot it is denied (Codex, Cursor's beforeReadFile).
    let step3: Vec<(Door, Seen)> = table
        .iter()
        .filter(|(_, st, _)| *st == Step::ReadSymlinkOut)
        .map(|(d, _, v)| (*d, *v))
        .collect();
    assert_eq!(
        step3,
        vec![
            (Door::ClaudeCode, Seen::Ask),
            (Door::Codex, Seen::Deny),
            (Door::Cursor, Seen::Deny),
            (Door::Gemini, Seen::Ask),
            (Door::Pi, Seen::Ask),
            (Door::Check, Seen::Ask),
            (Door::Http, Seen::Ask),
        ]
    );

    // One owner: every decision was audited under session S, and the engine's
    // own verdict per step is the same for every door.
    let rows = sc.sb.audited_decisions();
    assert_eq!(
        rows.len(),
        DOORS.len() * STEPS.len(),
        "one audit row per decision: {rows:#?}"
    );
    let engine_verdicts: Vec<&str> = rows
        .iter()
        .map(|r| r["event"]["verdict"].as_str().unwrap())
        .collect();
    for (i, row) in rows.iter().enumerate() {
        assert_eq!(row["event"]["session"], SESSION, "row {i}: {row}");
    }
    for (d, door) in DOORS.iter().enumerate() {
        let got = &engine_verdicts[d * STEPS.len()..(d + 1) * STEPS.len()];
        assert_eq!(
            got,
            ["allow", "deny", "ask", "allow"],
            "the engine's verdicts for {door:?}"
        );
    }
    // The grant did the allowing, everywhere.
    for row in rows.iter().filter(|r| r["event"]["verdict"] == "allow") {
        assert_eq!(row["event"]["kind"], "grant-used", "{row}");
        assert_eq!(row["event"]["detail"]["grants"], json!([1]), "{row}");
    }
    // The requests (step 3) belong to S too, and no other session appeared.
    let pending = sc.sb.pending_requests();
    assert!(!pending.is_empty());
    for r in &pending {
        assert_eq!(r["session"], SESSION, "{r}");
        assert_eq!(r["op"], "read", "{r}");
    }
    let sessions = sc.sb.cli_json(&["sessions", "list", "--json"]);
    let ids: Vec<&str> = sessions
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, [SESSION]);
    // Nothing was written meanwhile, and the chain holds.
    assert!(!sc.downloads.join("new.txt").exists());
    let verify = sc.sb.cli(&["audit", "verify"]);
    assert!(verify.status.success(), "{verify:?}");
}

/// A hook payload that names no session is still the engine's decision, and
/// audited: the row names no session, and no request is raised (nobody could
/// be said to have asked). Before, such a decision left no trace.
#[test]
fn a_hook_without_a_session_is_audited() {
    let sb = Sandbox::new("hooks-contract-no-session");
    let allowed = payload::pi(
        None,
        &sb.repo,
        "bash",
        json!({"command": "git status"}),
        false,
    );
    let asked = payload::pi(
        None,
        &sb.repo,
        "bash",
        json!({"command": "curl https://example.com/x -o /tmp/x"}),
        false,
    );
    let first = sb.hook("pi", None, &allowed.to_string());
    assert_eq!(first.code, Some(0), "{first:?}");
    let second = sb.hook("pi", None, &asked.to_string());
    assert!(
        second
            .stdout
            .contains("no session: no request could be raised"),
        "{second:?}"
    );
    let rows = sb.audited_decisions();
    assert_eq!(rows.len(), 2, "{rows:#?}");
    for row in &rows {
        assert!(row["event"]["session"].is_null(), "{row:#?}");
        assert_eq!(row["event"]["tool"], "bash", "{row:#?}");
    }
    assert_eq!(rows[0]["event"]["verdict"], "allow", "{rows:#?}");
    assert_ne!(rows[1]["event"]["verdict"], "allow", "{rows:#?}");
    assert!(sb.pending_requests().is_empty());
}
