//! `portcullis sessions|grants|requests|audit` and `check --session`: the
//! state commands against an embedded database with no setup.

// Test code: a failed unwrap, index or panic is a failed test.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

use std::path::PathBuf;
use std::process::{Command, Output};

use serde_json::Value;

struct Home {
    root: PathBuf,
}

impl Home {
    fn new(name: &str) -> Home {
        let root =
            std::env::temp_dir().join(format!("portcullis-state-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        for d in ["home/.config", "proj/.git", "outside"] {
            std::fs::create_dir_all(root.join(d)).unwrap();
        }
        std::fs::write(root.join("outside/report.txt"), "x").unwrap();
        Home { root }
    }

    /// The binary with a clean environment: the store goes to the default
    /// location under this fake home (no `--data-dir`, no setup).
    fn run(&self, args: &[&str]) -> Output {
        Command::new(env!("CARGO_BIN_EXE_portcullis"))
            .args(args)
            .env("HOME", self.root.join("home"))
            .env("XDG_CONFIG_HOME", self.root.join("home/.config"))
            .env("XDG_DATA_HOME", self.root.join("home/.local/share"))
            .env("PORTCULLIS_MANAGED_CONFIG", self.root.join("none.toml"))
            .env_remove("PORTCULLIS_DATA_DIR")
            .env_remove("PORTCULLIS_SESSION")
            .env_remove("PORTCULLIS_CONFIG")
            .current_dir(self.root.join("proj"))
            .output()
            .unwrap()
    }

    fn json(&self, args: &[&str]) -> Value {
        let out = self.run(args);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
            panic!(
                "{args:?}: not JSON ({e}): {}",
                String::from_utf8_lossy(&out.stdout)
            )
        })
    }

    fn outside(&self) -> String {
        std::fs::canonicalize(self.root.join("outside/report.txt"))
            .unwrap()
            .to_string_lossy()
            .into_owned()
    }
}

impl Drop for Home {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.root);
    }
}

fn read_input(path: &str) -> String {
    serde_json::json!({ "file_path": path }).to_string()
}

#[test]
fn request_approve_retry_audit_round_trip() {
    let h = Home::new("round");
    let reg = h.json(&[
        "sessions",
        "register",
        "--id",
        "S",
        "--agent",
        "claude-code",
        "--json",
    ]);
    assert_eq!(reg["session"]["id"], "S");
    assert_eq!(
        reg["token"].as_str().unwrap().len(),
        64,
        "a random token, shown once"
    );
    let db = h.root.join("home/.local/share/portcullis/portcullis.db");
    assert!(db.exists(), "the default embedded database was created");
    use std::os::unix::fs::PermissionsExt;
    assert_eq!(
        std::fs::metadata(&db).unwrap().permissions().mode() & 0o777,
        0o600
    );
    assert_eq!(
        std::fs::metadata(db.parent().unwrap())
            .unwrap()
            .permissions()
            .mode()
            & 0o777,
        0o700
    );

    let input = read_input(&h.outside());
    let first = h.json(&[
        "check",
        "--session",
        "S",
        "--origin",
        "core",
        "--tool",
        "Read",
        "--input",
        &input,
    ]);
    assert_eq!(first["decision"], "ask");
    assert_eq!(first["session_status"], "active");
    let request = first["request"]["id"]
        .as_i64()
        .expect("a permission request");
    let again = h.json(&[
        "check",
        "--session",
        "S",
        "--origin",
        "core",
        "--tool",
        "Read",
        "--input",
        &input,
    ]);
    assert_eq!(
        again["request"]["id"].as_i64(),
        Some(request),
        "the retry joins the same request"
    );
    let pending = h.json(&["requests", "list", "--json"]);
    assert_eq!(pending.as_array().unwrap().len(), 1);
    assert_eq!(pending[0]["count"], 2);

    let resolved = h.json(&[
        "requests",
        "resolve",
        &request.to_string(),
        "--scope",
        "session",
        "--json",
    ]);
    let grant = resolved["grant"]["id"].as_i64().expect("a grant");
    let allowed = h.json(&[
        "check",
        "--session",
        "S",
        "--origin",
        "core",
        "--tool",
        "Read",
        "--input",
        &input,
    ]);
    assert_eq!(allowed["decision"], "allow");
    assert_eq!(allowed["grants_used"][0].as_i64(), Some(grant));

    // Revoking takes effect on the next decision.
    h.json(&["grants", "revoke", &grant.to_string(), "--json"]);
    let revoked = h.json(&[
        "check",
        "--session",
        "S",
        "--origin",
        "core",
        "--tool",
        "Read",
        "--input",
        &input,
    ]);
    assert_eq!(revoked["decision"], "ask");

    let tail = h.json(&["audit", "tail", "--json"]);
    let kinds: Vec<&str> = tail
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["event"]["kind"].as_str().unwrap())
        .collect();
    assert!(
        kinds.contains(&"decision") && kinds.contains(&"approval") && kinds.contains(&"grant-used"),
        "{kinds:?}"
    );
    let verify = h.run(&["audit", "verify"]);
    assert_eq!(
        verify.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&verify.stdout)
    );
    let export = h.run(&["audit", "export", "--jsonl"]);
    let lines: Vec<Value> = String::from_utf8(export.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), tail.as_array().unwrap().len());
    assert!(
        lines
            .iter()
            .all(|r| r["hash"].as_str().is_some_and(|h| h.len() == 64))
    );
}

#[test]
fn grants_from_the_command_line() {
    let h = Home::new("grants");
    let registered = h.json(&["sessions", "register", "--id", "S", "--json"]);
    let token = registered["token"].as_str().expect("a token").to_string();
    let once = h.json(&[
        "grants",
        "add",
        "--session",
        "S",
        "--scope",
        "once",
        "--op",
        "read",
        "--path",
        &h.outside(),
        "--json",
    ]);
    assert_eq!(once["scope"], "once");
    let input = read_input(&h.outside());
    let check = |h: &Home, token: Option<&str>| {
        let mut args = vec![
            "check",
            "--session",
            "S",
            "--origin",
            "core",
            "--tool",
            "Read",
            "--input",
            &input,
        ];
        if let Some(t) = token {
            args.extend(["--token", t]);
        }
        h.json(&args)
    };
    // Without the session's token: a dry run that spends nothing and says so.
    for _ in 0..3 {
        let dry = check(&h, None);
        assert_eq!(dry["decision"], "allow", "{dry}");
        assert!(dry["dry_run"].is_string(), "{dry}");
    }
    let wrong = check(&h, Some("not-the-token"));
    assert_ne!(
        wrong["decision"], "allow",
        "a wrong token proves nothing: {wrong}"
    );
    assert_eq!(check(&h, Some(&token))["decision"], "allow");
    assert_eq!(
        check(&h, Some(&token))["decision"],
        "ask",
        "once means once"
    );
    // A device grant for a write is refused with a message.
    let out = h.run(&[
        "grants",
        "add",
        "--scope",
        "device",
        "--op",
        "write",
        "--path",
        &h.outside(),
    ]);
    assert_ne!(out.status.code(), Some(0));
    assert!(!out.stderr.is_empty());
    // A command grant, in rule syntax.
    h.json(&[
        "grants",
        "add",
        "--session",
        "S",
        "--scope",
        "session",
        "--op",
        "exec",
        "--command",
        "frobnicate --all",
        "--json",
    ]);
    let cmd = serde_json::json!({"command": "frobnicate --all"}).to_string();
    let v = h.json(&[
        "check",
        "--session",
        "S",
        "--origin",
        "core",
        "--tool",
        "Bash",
        "--input",
        &cmd,
    ]);
    assert_eq!(v["decision"], "allow", "{v}");
    let list = h.json(&["grants", "list", "--json"]);
    assert_eq!(list.as_array().unwrap().len(), 2);
}

#[test]
fn conflicting_session_sources_are_refused() {
    let h = Home::new("conflict");
    h.json(&["sessions", "register", "--id", "S", "--json"]);
    let out = Command::new(env!("CARGO_BIN_EXE_portcullis"))
        .args([
            "check",
            "--session",
            "S",
            "--origin",
            "core",
            "--tool",
            "Bash",
            "--input",
            r#"{"command":"ls"}"#,
        ])
        .env("HOME", h.root.join("home"))
        .env("XDG_DATA_HOME", h.root.join("home/.local/share"))
        .env("XDG_CONFIG_HOME", h.root.join("home/.config"))
        .env("PORTCULLIS_MANAGED_CONFIG", h.root.join("none.toml"))
        .env("PORTCULLIS_SESSION", "T")
        .current_dir(h.root.join("proj"))
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["decision"], "deny");
    assert_eq!(v["reasons"][0]["code"], "session-conflict");
    assert!(
        v["reasons"][0]["message"]
            .as_str()
            .unwrap()
            .contains("body=S")
    );
}

#[test]
fn audit_verify_fails_on_tampering() {
    let h = Home::new("tamper");
    h.json(&["sessions", "register", "--id", "S", "--json"]);
    for _ in 0..3 {
        h.json(&[
            "check",
            "--session",
            "S",
            "--origin",
            "core",
            "--tool",
            "Bash",
            "--input",
            r#"{"command":"ls"}"#,
        ]);
    }
    assert_eq!(h.run(&["audit", "verify"]).status.code(), Some(0));
    // Someone with the file edits a row (dropping the append-only trigger first).
    let db = h.root.join("home/.local/share/portcullis/portcullis.db");
    let conn = rusqlite::Connection::open(&db).unwrap();
    conn.execute_batch(
        "DROP TRIGGER audit_no_update; UPDATE audit SET verdict = 'deny' WHERE id = 2;",
    )
    .unwrap();
    drop(conn);
    let out = h.run(&["audit", "verify", "--json"]);
    assert_eq!(out.status.code(), Some(1));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["row"], 2, "broken at the edited row: {v}");
}
