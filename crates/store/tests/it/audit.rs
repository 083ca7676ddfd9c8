//! The audit log: the chain, append-only triggers, and tampering found at the right row.

// Test code: a failed unwrap, index or panic is a failed test.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

use crate::support;

use portcullis_store::{
    AuditCheck, AuditEvent, AuditKind, AuditVerdict, GENESIS_HASH, Store, StoreError,
};
use serde_json::json;
use support::raw;

const ROWS: i64 = 10;

fn event(i: i64) -> AuditEvent {
    AuditEvent {
        kind: if i % 2 == 0 {
            AuditKind::Decision
        } else {
            AuditKind::GrantUsed
        },
        session: Some(format!("s{}", i % 3)),
        tool: (i % 4 != 0).then(|| "Bash".into()),
        verdict: Some(if i % 3 == 0 {
            AuditVerdict::Deny
        } else {
            AuditVerdict::Allow
        }),
        detail: json!({"reason": "grant", "paths": [format!("/w/{i}")], "rule": i}),
    }
}

/// A store with rows 1..=ROWS, and a raw connection with the append-only
/// triggers dropped (what someone editing the file can do).
fn logged() -> (tempfile::TempDir, Store, rusqlite::Connection) {
    let (dir, store) = support::store();
    for i in 1..=ROWS {
        store.append_audit(&event(i), 100 + i).unwrap();
    }
    assert_eq!(
        store.verify_audit().unwrap(),
        AuditCheck::Intact { rows: ROWS as u64 }
    );
    let conn = raw(store.path());
    conn.execute_batch("DROP TRIGGER audit_no_update; DROP TRIGGER audit_no_delete;")
        .unwrap();
    (dir, store, conn)
}

fn broken_at(store: &Store) -> (i64, String) {
    match store.verify_audit().unwrap() {
        AuditCheck::Broken { row, why } => (row, why),
        intact => panic!("tampering not detected: {intact:?}"),
    }
}

#[test]
fn rows_chain_from_genesis() {
    let (_dir, store) = support::store();
    assert_eq!(
        store.verify_audit().unwrap(),
        AuditCheck::Intact { rows: 0 }
    );
    let a = store.append_audit(&event(1), 5).unwrap();
    let b = store.append_audit(&event(2), 6).unwrap();
    assert_eq!((a.id, b.id), (1, 2));
    assert_eq!(a.prev_hash, GENESIS_HASH);
    assert_eq!(b.prev_hash, a.hash);
    assert_ne!(a.hash, b.hash);
    assert_eq!(a.at, 5);
    assert_eq!(store.audit_all().unwrap(), vec![a.clone(), b.clone()]);
    assert_eq!(store.audit_tail(1).unwrap(), vec![b.clone()]);
    assert_eq!(store.audit_tail(50).unwrap(), vec![a, b]);
    assert!(store.audit_tail(0).unwrap().is_empty());
}

#[test]
fn the_log_is_append_only_through_sqlite() {
    let (_dir, store) = support::store();
    store.append_audit(&event(1), 1).unwrap();
    let conn = raw(store.path());
    let update = conn
        .execute("UPDATE audit SET verdict = 'allow'", [])
        .unwrap_err();
    assert!(update.to_string().contains("append-only"), "{update}");
    let delete = conn.execute("DELETE FROM audit", []).unwrap_err();
    assert!(delete.to_string().contains("append-only"), "{delete}");
}

#[test]
fn audit_events_are_checked() {
    let (_dir, store) = support::store();
    let huge = AuditEvent {
        detail: json!({"content": "x".repeat(70_000)}),
        ..event(1)
    };
    let err = store.append_audit(&huge, 1).unwrap_err();
    assert!(matches!(err, StoreError::InvalidAudit { .. }), "{err}");
    assert!(err.to_string().contains("never contents"), "{err}");
    assert!(store.audit_all().unwrap().is_empty());
}

#[test]
fn editing_detail_breaks_that_row() {
    let (_dir, store, conn) = logged();
    conn.execute(
        "UPDATE audit SET detail = '{\"reason\":\"rule\"}' WHERE id = 5",
        [],
    )
    .unwrap();
    let (row, why) = broken_at(&store);
    assert_eq!(row, 5, "{why}");
    assert!(why.contains("edited"), "{why}");
}

#[test]
fn reformatting_detail_breaks_that_row() {
    // Same JSON value, different text: still an edit of the stored row.
    let (_dir, store, conn) = logged();
    let detail: String = conn
        .query_row("SELECT detail FROM audit WHERE id = 3", [], |r| r.get(0))
        .unwrap();
    conn.execute(
        "UPDATE audit SET detail = ?1 WHERE id = 3",
        [format!(" {detail}")],
    )
    .unwrap();
    assert_eq!(broken_at(&store).0, 3);
}

#[test]
fn editing_verdict_kind_session_tool_or_time_breaks_that_row() {
    for (sql, row) in [
        ("UPDATE audit SET verdict = 'allow' WHERE id = 3", 3),
        ("UPDATE audit SET verdict = NULL WHERE id = 4", 4),
        ("UPDATE audit SET kind = 'approval' WHERE id = 2", 2),
        ("UPDATE audit SET session = 'other' WHERE id = 8", 8),
        ("UPDATE audit SET tool = 'Read' WHERE id = 1", 1),
        ("UPDATE audit SET at = at + 1 WHERE id = 10", 10),
    ] {
        let (_dir, store, conn) = logged();
        conn.execute(sql, []).unwrap();
        assert_eq!(broken_at(&store).0, row, "{sql}");
    }
}

#[test]
fn editing_a_hash_breaks_that_row() {
    let (_dir, store, conn) = logged();
    conn.execute(
        "UPDATE audit SET hash = ?1 WHERE id = 7",
        [GENESIS_HASH.replace('0', "a")],
    )
    .unwrap();
    let (row, why) = broken_at(&store);
    assert_eq!(row, 7, "{why}");

    // Re-hashing the edited row to cover the edit moves the break to the next row's link.
    let (_dir, store, conn) = logged();
    conn.execute("UPDATE audit SET verdict = 'allow' WHERE id = 6", [])
        .unwrap();
    let fake = blake3::hash(b"whatever").to_hex().to_string();
    conn.execute("UPDATE audit SET hash = ?1 WHERE id = 6", [fake])
        .unwrap();
    let (row, why) = broken_at(&store);
    assert_eq!(row, 6, "{why}");
}

#[test]
fn editing_a_prev_hash_breaks_that_row() {
    let (_dir, store, conn) = logged();
    conn.execute(
        "UPDATE audit SET prev_hash = ?1 WHERE id = 4",
        [GENESIS_HASH],
    )
    .unwrap();
    let (row, why) = broken_at(&store);
    assert_eq!(row, 4, "{why}");
    assert!(why.contains("prev_hash"), "{why}");
}

#[test]
fn deleting_a_middle_row_breaks_the_next_row() {
    let (_dir, store, conn) = logged();
    conn.execute("DELETE FROM audit WHERE id = 6", []).unwrap();
    let (row, why) = broken_at(&store);
    assert_eq!(row, 7, "{why}");
    assert!(why.contains("missing"), "{why}");

    // Renumbering to hide the gap still breaks the link.
    let (_dir, store, conn) = logged();
    conn.execute_batch(
        "DELETE FROM audit WHERE id = 6; UPDATE audit SET id = id - 1 WHERE id > 6;",
    )
    .unwrap();
    let (row, why) = broken_at(&store);
    assert_eq!(row, 6, "{why}");
}

#[test]
fn deleting_the_first_row_breaks_the_new_first_row() {
    let (_dir, store, conn) = logged();
    conn.execute("DELETE FROM audit WHERE id = 1", []).unwrap();
    assert_eq!(broken_at(&store).0, 2);
}

/// Cutting rows from the end leaves a chain that holds on its own; the store
/// notices through SQLite's AUTOINCREMENT counter, which someone editing the
/// file can also reset (documented in `audit.rs`): then nothing can tell.
#[test]
fn deleting_the_last_rows() {
    let (_dir, store, conn) = logged();
    conn.execute("DELETE FROM audit WHERE id >= 9", []).unwrap();
    let (row, why) = broken_at(&store);
    assert_eq!(row, 9, "{why}");
    assert!(why.contains("cut from the end"), "{why}");

    // Appending afterwards does not hide it: the new row leaves a gap.
    store.append_audit(&event(11), 200).unwrap();
    assert_eq!(broken_at(&store).0, 11);

    // The documented limit: cut the end and reset the counter too.
    let (_dir, store, conn) = logged();
    conn.execute_batch(
        "DELETE FROM audit WHERE id = 10; UPDATE sqlite_sequence SET seq = 9 WHERE name = 'audit';",
    )
    .unwrap();
    assert_eq!(
        store.verify_audit().unwrap(),
        AuditCheck::Intact { rows: 9 }
    );
}

#[test]
fn unparseable_detail_is_reported_not_a_panic() {
    let (_dir, store, conn) = logged();
    conn.execute("UPDATE audit SET detail = 'not json' WHERE id = 2", [])
        .unwrap();
    assert_eq!(broken_at(&store).0, 2);
    let err = store.audit_all().unwrap_err();
    assert!(err.to_string().contains("audit row 2"), "{err}");
}

#[test]
fn appends_from_many_connections_form_one_chain() {
    let (dir, store) = support::store();
    let threads: Vec<_> = (0..8)
        .map(|t| {
            let path = dir.path().to_owned();
            std::thread::spawn(move || {
                let store = Store::open(&path).unwrap();
                for i in 0..25 {
                    store
                        .append_audit(&event(t * 100 + i), t * 100 + i)
                        .unwrap();
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    assert_eq!(
        store.verify_audit().unwrap(),
        AuditCheck::Intact { rows: 200 }
    );
}

#[test]
fn a_row_stores_and_hashes_the_words_of_its_kind_and_verdict() {
    // The bytes hashed are those written before the kind and verdict were
    // typed: an existing log keeps verifying, and its export reads the same.
    let (_dir, store) = support::store();
    let row = store.append_audit(&event(1), 101).unwrap();
    let conn = raw(store.path());
    let (kind, verdict, detail, hash): (String, String, String, String) = conn
        .query_row(
            "SELECT kind, verdict, detail, hash FROM audit WHERE id = 1",
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
        )
        .unwrap();
    assert_eq!((kind.as_str(), verdict.as_str()), ("grant-used", "allow"));
    let canonical = format!(
        r#"{{"id":1,"at":101,"kind":"grant-used","session":"s1","tool":"Bash","verdict":"allow","detail":{},"prev_hash":"{GENESIS_HASH}"}}"#,
        serde_json::to_string(&detail).unwrap()
    );
    let mut hasher = blake3::Hasher::new();
    hasher.update(&[0u8; 32]);
    hasher.update(canonical.as_bytes());
    assert_eq!(hash, hasher.finalize().to_hex().to_string());
    assert_eq!(row.hash, hash);
    let json = serde_json::to_value(&store.audit_all().unwrap()[0]).unwrap();
    assert_eq!(json["event"]["kind"], "grant-used");
    assert_eq!(json["event"]["verdict"], "allow");
}

#[test]
fn an_unknown_stored_kind_or_verdict_is_an_edit_and_a_clear_read_error() {
    for (sql, what) in [
        ("UPDATE audit SET kind = 'decisoin' WHERE id = 4", "kind"),
        ("UPDATE audit SET verdict = 'maybe' WHERE id = 4", "verdict"),
    ] {
        let (_dir, store, conn) = logged();
        conn.execute(sql, []).unwrap();
        // Verification works on the stored text: the row shows as edited.
        let (row, why) = broken_at(&store);
        assert_eq!(row, 4, "{sql}: {why}");
        assert!(why.contains("edited"), "{why}");
        // Reading rows back refuses the row, naming it; nothing panics.
        let err = store.audit_all().unwrap_err();
        assert!(matches!(err, StoreError::Corrupt { .. }), "{err}");
        let text = err.to_string();
        assert!(text.contains(&format!("{what} of audit row 4")), "{text}");
        assert!(text.contains(&format!("unknown audit {what}")), "{text}");
        // Rows before it still read.
        let tail = store
            .audit_query(&portcullis_store::AuditFilter {
                before: Some(4),
                limit: 100,
                ..Default::default()
            })
            .unwrap();
        assert_eq!(tail.len(), 3);
    }
}

#[test]
fn queries_filter_by_each_field_newest_first() {
    let (_dir, store) = support::store();
    for i in 1..=ROWS {
        store.append_audit(&event(i), 100 + i).unwrap();
    }
    let ids = |f: portcullis_store::AuditFilter| -> Vec<i64> {
        store
            .audit_query(&f)
            .unwrap()
            .iter()
            .map(|r| r.id)
            .collect()
    };
    let all = || portcullis_store::AuditFilter {
        limit: 100,
        ..Default::default()
    };
    assert_eq!(ids(all()), (1..=ROWS).rev().collect::<Vec<_>>());
    // Sessions s0, s1, s2 in turn (i % 3); matched without regard to case.
    let s1 = ids(portcullis_store::AuditFilter {
        session: Some("S1".into()),
        ..all()
    });
    assert_eq!(s1, [10, 7, 4, 1]);
    let denied = ids(portcullis_store::AuditFilter {
        verdict: Some("deny".into()),
        ..all()
    });
    assert_eq!(denied, [9, 6, 3]);
    let used = ids(portcullis_store::AuditFilter {
        kind: Some("grant-used".into()),
        tool: Some("bash".into()),
        ..all()
    });
    assert_eq!(used, [9, 7, 5, 3, 1]);
    let window = ids(portcullis_store::AuditFilter {
        since: Some(103),
        until: Some(106),
        before: Some(6),
        limit: 2,
        ..Default::default()
    });
    assert_eq!(window, [5, 4]);
    let tail: Vec<i64> = store.audit_tail(3).unwrap().iter().map(|r| r.id).collect();
    assert_eq!(tail, [8, 9, 10]);
}

// The tamper tests edit the SQLite file directly; PostgreSQL's are in
// `on_postgres_tampering` below.
crate::also_on_postgres!(
    rows_chain_from_genesis,
    audit_events_are_checked,
    queries_filter_by_each_field_newest_first,
);
