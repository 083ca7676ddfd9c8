//! `Store::batch`: many operations under one write transaction (group commit),
//! each still all-or-nothing on its own.

// Test code: a failed unwrap, index or panic is a failed test.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

use crate::support;

use portcullis_store::{AuditEvent, AuditKind, GrantScope, Op, Store, StoreError};
use support::{file, grant, main_session};

fn event(kind: AuditKind) -> AuditEvent {
    AuditEvent {
        kind,
        session: None,
        tool: None,
        verdict: None,
        detail: serde_json::json!({}),
    }
}

#[test]
fn a_batch_commits_everything_and_a_failed_operation_alone_rolls_back() {
    let (dir, store) = support::store();
    store.register_session(&main_session("s")).unwrap();
    let g = store
        .add_grant(&grant(Some("s"), GrantScope::Once, Op::Read, file("/w/a")))
        .unwrap();
    let results = store
        .batch(|s| {
            let first = s.consume_once(g.id, 10).unwrap();
            let second = s.consume_once(g.id, 10).unwrap();
            s.append_audit(&event(AuditKind::Decision), 10).unwrap();
            // Fails inside the batch: a detail too large. Nothing of it is kept.
            let bad = s.append_audit(
                &AuditEvent {
                    detail: serde_json::json!({"content": "x".repeat(70_000)}),
                    ..event(AuditKind::Approval)
                },
                10,
            );
            s.append_audit(&event(AuditKind::Revoke), 10).unwrap();
            // A duplicate session fails alone, too.
            let dup = s.register_session(&main_session("s"));
            (
                first,
                second,
                bad.is_err(),
                matches!(dup, Err(StoreError::AlreadyExists { .. })),
            )
        })
        .unwrap();
    assert_eq!(
        results,
        (true, false, true, true),
        "once is once, even in one batch"
    );

    // Another connection sees the batch committed, chain intact.
    let other = Store::open(dir.path()).unwrap();
    let kinds: Vec<AuditKind> = other
        .audit_all()
        .unwrap()
        .into_iter()
        .map(|r| r.event.kind)
        .collect();
    assert_eq!(kinds, [AuditKind::Decision, AuditKind::Revoke]);
    assert!(other.verify_audit().unwrap().is_intact());
    assert!(other.grant(g.id).unwrap().unwrap().consumed_at.is_some());
}

#[test]
fn a_batch_that_cannot_commit_reports_it_and_keeps_nothing() {
    let (dir, store) = support::store();
    let other = Store::open(dir.path()).unwrap();
    // Another writer holds the lock past this store's (shortened) busy timeout.
    let raw = rusqlite::Connection::open(dir.path().join("portcullis.db")).unwrap();
    raw.execute_batch("BEGIN IMMEDIATE").unwrap();
    raw.busy_timeout(std::time::Duration::from_millis(1))
        .unwrap();
    store
        .set_busy_timeout(std::time::Duration::from_millis(50))
        .unwrap();
    let r = store.batch(|s| s.append_audit(&event(AuditKind::Decision), 1).map(|_| ()));
    assert!(r.is_err(), "the write lock is taken: {r:?}");
    raw.execute_batch("ROLLBACK").unwrap();
    assert!(other.audit_all().unwrap().is_empty());
}
