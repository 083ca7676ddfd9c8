//! Crash safety: a process writing audit rows and grants is SIGKILLed
//! mid-stream; the store reopens, the audit chain holds, and every grant the
//! process reported as committed is there.
//!
//! The writer is this test binary run again with `--exact crash::crash_worker`
//! (which does nothing unless `PORTCULLIS_STORE_TEST_CRASH_WORKER` is set).
//! `Child::kill` sends SIGKILL on unix.

// Test code: a failed unwrap, index or panic is a failed test.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

use crate::support;

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use portcullis_store::{AuditCheck, AuditEvent, AuditKind, AuditVerdict, GrantScope, Op, Store};
use support::{file, grant, main_session};

const WORKER: &str = "PORTCULLIS_STORE_TEST_CRASH_WORKER";

/// Run by `sigkill_mid_stream_loses_nothing_committed`: appends and grants
/// until killed, printing `GRANT=<id>` after each committed grant.
#[test]
fn crash_worker() {
    let Some(dir) = std::env::var_os(WORKER) else {
        return;
    };
    let store = Store::open(Path::new(&dir)).unwrap();
    println!("\nREADY");
    for i in 0.. {
        let event = AuditEvent {
            kind: AuditKind::Decision,
            session: Some("s".into()),
            tool: Some("Write".into()),
            verdict: Some(AuditVerdict::Allow),
            detail: serde_json::json!({"reason": "grant", "paths": [format!("/w/{i}")]}),
        };
        store.append_audit(&event, i).unwrap();
        let g = store
            .add_grant(&grant(
                Some("s"),
                GrantScope::Session,
                Op::Write,
                file(&format!("/w/{i}")),
            ))
            .unwrap();
        println!("GRANT={}", g.id);
    }
}

/// Starts a writer, kills it after it reported `after` grants, returns every grant id it reported.
fn run_and_kill(dir: &Path, after: usize) -> Vec<i64> {
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "crash::crash_worker",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(WORKER, dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut reported = Vec::new();
    for line in lines.by_ref() {
        if let Some(id) = line.unwrap().strip_prefix("GRANT=") {
            reported.push(id.parse().unwrap());
            if reported.len() == after {
                break;
            }
        }
    }
    assert_eq!(reported.len(), after, "the writer stopped early");
    child.kill().unwrap(); // SIGKILL: no destructors, no rollback, mid-transaction or not.
    // Whatever it printed before dying was committed before it was printed.
    for line in lines {
        let Ok(line) = line else { break };
        if let Some(id) = line.strip_prefix("GRANT=") {
            reported.push(id.parse().unwrap());
        }
    }
    let status = child.wait().unwrap();
    assert!(
        !status.success(),
        "the writer was killed, not finished: {status:?}"
    );
    reported
}

#[test]
fn sigkill_mid_stream_loses_nothing_committed() {
    let (dir, store) = support::store();
    store.register_session(&main_session("s")).unwrap();
    drop(store);
    let data: PathBuf = dir.path().to_owned();
    let mut all_reported = Vec::new();
    for after in [10, 150, 400] {
        let reported = run_and_kill(&data, after);
        all_reported.extend(reported);

        let store = Store::open(&data).unwrap();
        let check = store.verify_audit().unwrap();
        let AuditCheck::Intact { rows } = check else {
            panic!("after SIGKILL: {check:?}")
        };
        for id in &all_reported {
            let g = store.grant(*id).unwrap();
            assert!(
                g.is_some(),
                "grant {id} was reported committed but is missing"
            );
        }
        let grants = store.grants().unwrap().len();
        assert!(grants >= all_reported.len());
        // Every grant follows its audit row, so there is at least one row per grant.
        assert!(
            rows as usize >= grants,
            "{rows} audit rows for {grants} grants"
        );
        // The store still works after the crash.
        let event = AuditEvent {
            kind: AuditKind::Revoke,
            session: None,
            tool: None,
            verdict: None,
            detail: serde_json::json!({"reopened": true}),
        };
        store.append_audit(&event, 0).unwrap();
        assert!(store.verify_audit().unwrap().is_intact());
    }
}
