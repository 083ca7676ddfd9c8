//! The store only trusts what it should, as the command line sees it: a grant
//! planted in a directory others may write is never honoured (the hook
//! denies), and `audit verify` never calls a damaged file intact.

// Test code: a failed unwrap, index or panic is a failed test.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

use std::io::{Seek, SeekFrom, Write};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::{Value, json};

struct World {
    _root: tempfile::TempDir,
    base: PathBuf,
    work: PathBuf,
    data: PathBuf,
    /// A readable file outside the workspace (reading it asks).
    outside: PathBuf,
}

impl World {
    fn new() -> World {
        let root = tempfile::tempdir().unwrap();
        let base = std::fs::canonicalize(root.path()).unwrap();
        let work = base.join("work");
        std::fs::create_dir_all(work.join(".git")).unwrap();
        std::fs::create_dir_all(base.join("home")).unwrap();
        std::fs::create_dir_all(base.join("elsewhere")).unwrap();
        let outside = base.join("elsewhere/notes.txt");
        std::fs::write(&outside, "notes\n").unwrap();
        std::fs::write(base.join("config.toml"), "mode = \"ask\"\n").unwrap();
        World {
            data: base.join("data"),
            _root: root,
            base,
            work,
            outside,
        }
    }

    fn cli(&self, args: &[&str], stdin: &str) -> Output {
        let mut child = Command::new(env!("CARGO_BIN_EXE_portcullis"))
            .args(args)
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", self.base.join("home"))
            .env("PORTCULLIS_DATA_DIR", &self.data)
            .env("PORTCULLIS_CONFIG", self.base.join("config.toml"))
            .env(
                "PORTCULLIS_MANAGED_CONFIG",
                self.base.join("no-managed.toml"),
            )
            .current_dir(&self.work)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        child
            .stdin
            .take()
            .unwrap()
            .write_all(stdin.as_bytes())
            .unwrap();
        child.wait_with_output().unwrap()
    }

    #[track_caller]
    fn ok(&self, args: &[&str]) -> String {
        let out = self.cli(args, "");
        assert!(
            out.status.success(),
            "portcullis {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    }

    /// Claude Code's PreToolUse hook on a Read of `outside`: its decision.
    fn hook_read_outside(&self) -> (String, Output) {
        let payload = json!({
            "session_id": "s1",
            "transcript_path": "/home/u/.claude/projects/p/x.jsonl",
            "cwd": self.work,
            "permission_mode": "default",
            "hook_event_name": "PreToolUse",
            "tool_name": "Read",
            "tool_input": {"file_path": self.outside},
            "tool_use_id": "toolu_01ABC",
        });
        let out = self.cli(&["hook", "claude-code"], &payload.to_string());
        let reply: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
        let decision = reply["hookSpecificOutput"]["permissionDecision"]
            .as_str()
            .unwrap_or("none")
            .to_string();
        (decision, out)
    }
}

fn chmod(p: &Path, mode: u32) {
    std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode)).unwrap();
}

#[test]
fn a_grant_in_a_directory_others_may_write_is_never_honoured() {
    let w = World::new();
    let (first, out) = w.hook_read_outside();
    assert_eq!(first, "ask", "{}", String::from_utf8_lossy(&out.stdout));
    let outside = w.outside.display().to_string();
    w.ok(&[
        "grants", "add", "--scope", "device", "--op", "read", "--path", &outside,
    ]);
    let (granted, out) = w.hook_read_outside();
    assert_eq!(granted, "allow", "{}", String::from_utf8_lossy(&out.stdout));

    // Anyone may now write the directory: whoever did could have planted that grant.
    chmod(&w.data, 0o777);
    let (planted, out) = w.hook_read_outside();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(planted, "deny", "stdout: {stdout}\nstderr: {stderr}");
    assert!(
        stdout.contains("chmod 700") || stderr.contains("chmod 700"),
        "the refusal names the fix: {stdout} {stderr}"
    );
    // The command line refuses the store too, naming the fix.
    let out = w.cli(&["grants", "list"], "");
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&format!("chmod 700 {}", w.data.display())),
        "{err}"
    );
    // Fixed: the grant is the user's again.
    chmod(&w.data, 0o700);
    assert_eq!(w.hook_read_outside().0, "allow");
}

/// Pages 2–5 of a real store overwritten with garbage: the hash chain may
/// still read back whole, but `audit verify` must report the damage and fail.
#[test]
fn audit_verify_reports_a_damaged_file_and_fails() {
    let w = World::new();
    w.ok(&[
        "sessions",
        "register",
        "--id",
        "s1",
        "--agent",
        "claude-code",
        "--json",
    ]);
    let calls: String = (0..300)
        .map(|i| {
            json!({"tool": "Bash", "origin": "core", "input": {"command": format!("echo {i} && git status")}})
                .to_string()
                + "\n"
        })
        .collect();
    let work = w.work.display().to_string();
    let out = w.cli(
        &["check", "--batch", "--session", "s1", "--cwd", &work],
        &calls,
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let verified = w.ok(&["audit", "verify"]);
    assert!(verified.contains("intact"), "{verified}");

    // Everything into the main file, then garbage over pages 2–5.
    let db = w.data.join("portcullis.db");
    let conn = rusqlite::Connection::open(&db).unwrap();
    conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))
        .unwrap();
    let page: i64 = conn
        .query_row("PRAGMA page_size", [], |r| r.get(0))
        .unwrap();
    let pages: i64 = conn
        .query_row("PRAGMA page_count", [], |r| r.get(0))
        .unwrap();
    drop(conn);
    assert!(pages > 5, "only {pages} pages");
    let page = page as u64;
    let mut f = std::fs::OpenOptions::new().write(true).open(&db).unwrap();
    f.seek(SeekFrom::Start(page)).unwrap();
    let garbage: Vec<u8> = (0..4 * page).map(|i| (i * 31 + 7) as u8).collect();
    f.write_all(&garbage).unwrap();
    drop(f);

    for args in [&["audit", "verify"][..], &["audit", "verify", "--json"][..]] {
        let out = w.cli(args, "");
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        eprintln!("{args:?} → {:?}\n{stdout}{stderr}", out.status.code());
        assert!(!out.status.success(), "{args:?}: {stdout}");
        assert!(!stdout.contains("intact"), "{args:?}: {stdout}");
        assert!(
            stdout.contains("damaged") || stderr.contains("malformed"),
            "{args:?}: stdout: {stdout}\nstderr: {stderr}"
        );
    }
}

#[test]
fn doctor_reports_a_refused_store() {
    let w = World::new();
    w.ok(&[
        "sessions",
        "register",
        "--id",
        "s1",
        "--agent",
        "claude-code",
        "--json",
    ]);
    let report: Value = serde_json::from_str(&w.ok(&["doctor", "--json"])).unwrap();
    assert_eq!(report["store"]["status"], "ok", "{report}");
    chmod(&w.data, 0o757);
    let out = w.cli(&["doctor", "--json"], "");
    assert_eq!(out.status.code(), Some(1));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["store"]["status"], "refused", "{report}");
    assert_eq!(report["ok"], false);
    assert!(
        report["store"]["problem"]
            .as_str()
            .unwrap()
            .contains("chmod 700"),
        "{report}"
    );
}
