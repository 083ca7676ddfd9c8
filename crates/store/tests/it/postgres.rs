//! PostgreSQL only: what the shared contract tests cannot show — many
//! connections (as many replicas would hold) racing on one database, the
//! audit log tampered with by the database's owner, and a schema newer than
//! this build. Each test has its own database on the test server
//! (`support::postgres`).

use std::sync::{Arc, Barrier};

use crate::support::{self, file, main_session};

use portcullis_store::{
    AuditCheck, AuditEvent, AuditKind, AuditVerdict, GrantScope, Op, Resolution, Store, StoreError,
};

/// Connections racing at once: more than the 2 cores, as a team's replicas
/// and their decision threads would be.
const RACERS: usize = 16;

/// Runs `f` on `RACERS` connections to `url` at once; their answers.
fn race<T: Send + 'static>(
    url: &str,
    f: impl Fn(&Store, usize) -> T + Send + Sync + 'static,
) -> Vec<T> {
    let barrier = Arc::new(Barrier::new(RACERS));
    let f = Arc::new(f);
    let handles: Vec<_> = (0..RACERS)
        .map(|i| {
            let (url, barrier, f) = (url.to_owned(), barrier.clone(), f.clone());
            std::thread::spawn(move || {
                let store = Store::connect(&url).unwrap();
                barrier.wait();
                f(&store, i)
            })
        })
        .collect();
    handles.into_iter().map(|h| h.join().unwrap()).collect()
}

#[test]
fn a_once_grant_is_consumed_exactly_once_across_connections() {
    let url = support::postgres::fresh_database();
    let store = Store::connect(&url).unwrap();
    store.ensure_session(&main_session("s")).unwrap();
    for round in 0..5 {
        // A fresh once-grant per round, consumed by every racer at once.
        let id = store
            .add_grant(&support::grant(
                Some("s"),
                GrantScope::Once,
                Op::Write,
                file("/w/a"),
            ))
            .unwrap()
            .id;
        if round == 0 {
            assert_eq!(id, 1, "the first grant of a fresh database");
        }
        let winners = race(&url, move |s, _| s.consume_once(id, 200).unwrap());
        let won = winners.iter().filter(|w| **w).count();
        assert_eq!(won, 1, "round {round}: grant {id} consumed {won} times");
    }
}

#[test]
fn identical_requests_from_many_connections_collapse_into_one_with_the_count() {
    let url = support::postgres::fresh_database();
    let store = Store::connect(&url).unwrap();
    store.ensure_session(&main_session("s")).unwrap();
    let ids = race(&url, |s, i| {
        let r = support::request("s", Op::Write, file("/w/a"));
        s.raise_request(&r, 100 + i as i64).unwrap().id
    });
    assert!(ids.iter().all(|id| *id == ids[0]), "{ids:?}");
    let pending = store.requests(true).unwrap();
    assert_eq!(pending.len(), 1);
    assert_eq!(pending[0].count, RACERS as i64);
    assert_eq!(pending[0].last_seen, 100 + RACERS as i64 - 1);
}

#[test]
fn appends_from_many_connections_form_one_chain() {
    let url = support::postgres::fresh_database();
    race(&url, |s, i| {
        for j in 0..10 {
            let e = AuditEvent {
                kind: AuditKind::Decision,
                session: Some(format!("s{i}")),
                tool: Some("Bash".into()),
                verdict: Some(AuditVerdict::Allow),
                detail: serde_json::json!({ "n": j }),
            };
            s.append_audit(&e, 100).unwrap();
        }
    });
    let store = Store::connect(&url).unwrap();
    assert_eq!(
        store.verify_audit().unwrap(),
        AuditCheck::Intact {
            rows: RACERS as u64 * 10
        }
    );
}

/// The database's owner, past the store: its triggers switched off.
fn owner(url: &str) -> postgres::Client {
    postgres::Client::connect(url, postgres::NoTls).unwrap()
}

#[test]
fn the_log_is_append_only_and_an_owner_s_edit_or_cut_shows() {
    let url = support::postgres::fresh_database();
    let store = Store::connect(&url).unwrap();
    for i in 1..=5 {
        let e = AuditEvent {
            kind: AuditKind::Decision,
            session: Some("s".into()),
            tool: Some("Bash".into()),
            verdict: Some(AuditVerdict::Deny),
            detail: serde_json::json!({ "rule": i }),
        };
        store.append_audit(&e, 100 + i).unwrap();
    }
    let mut db = owner(&url);
    // Through SQL, the log refuses every change.
    for sql in [
        "UPDATE audit SET verdict = 'allow' WHERE id = 3",
        "DELETE FROM audit WHERE id = 5",
        "TRUNCATE audit",
    ] {
        let err = db.batch_execute(sql).unwrap_err();
        assert!(
            err.to_string().contains("append-only") || format!("{err:?}").contains("append-only"),
            "{sql}: {err:?}"
        );
    }
    // Its owner can switch the triggers off: the chain shows the edit ...
    db.batch_execute(
        "ALTER TABLE audit DISABLE TRIGGER USER;
         UPDATE audit SET verdict = 'allow' WHERE id = 3;",
    )
    .unwrap();
    match store.verify_audit().unwrap() {
        AuditCheck::Broken { row, why } => {
            assert_eq!(row, 3, "{why}");
            assert!(why.contains("edited"), "{why}");
        }
        other => panic!("an edited row passed: {other:?}"),
    }
    // ... and a cut from the end, against the chain head.
    db.batch_execute(
        "UPDATE audit SET verdict = 'deny' WHERE id = 3;
         DELETE FROM audit WHERE id >= 4;",
    )
    .unwrap();
    match store.verify_audit().unwrap() {
        AuditCheck::Broken { row, why } => {
            assert_eq!(row, 4, "{why}");
            assert!(why.contains("cut from the end"), "{why}");
        }
        other => panic!("a cut log passed: {other:?}"),
    }
}

#[test]
fn a_database_with_a_newer_schema_is_refused() {
    let url = support::postgres::fresh_database();
    drop(Store::connect(&url).unwrap());
    owner(&url)
        .batch_execute("UPDATE portcullis_schema SET version = 99")
        .unwrap();
    let err = Store::connect(&url).unwrap_err();
    assert!(
        matches!(err, StoreError::SchemaTooNew { found: 99, .. }),
        "{err:?}"
    );
    assert!(!err.to_string().contains("password"), "{err}");
}

#[test]
fn an_unreachable_server_is_an_error_naming_it_without_its_password() {
    let err = Store::connect("postgres://someone:s3cret@127.0.0.1:1/nothing").unwrap_err();
    let text = err.to_string();
    assert!(text.contains("127.0.0.1:1/nothing"), "{text}");
    assert!(!text.contains("s3cret"), "{text}");
}

#[test]
fn a_waiting_connection_hears_another_s_change_at_once() {
    let url = support::postgres::fresh_database();
    let watcher = Store::connect(&url).unwrap();
    let writer = Store::connect(&url).unwrap();
    // The first wait starts listening; nothing changes meanwhile.
    watcher
        .wait_for_change(std::time::Duration::from_millis(10))
        .unwrap();
    let before = watcher.data_version().unwrap();
    let change = std::thread::spawn(move || {
        std::thread::sleep(std::time::Duration::from_millis(300));
        writer.ensure_session(&main_session("s")).unwrap();
    });
    let started = std::time::Instant::now();
    watcher
        .wait_for_change(std::time::Duration::from_secs(30))
        .unwrap();
    let waited = started.elapsed();
    change.join().unwrap();
    // Told, not timed out: long before the 30 s it would otherwise wait.
    assert!(waited < std::time::Duration::from_secs(15), "{waited:?}");
    assert_ne!(watcher.data_version().unwrap(), before);
}

#[test]
fn a_shared_store_keeps_no_device_grants() {
    let url = support::postgres::fresh_database();
    let store = Store::connect(&url).unwrap();
    store.ensure_session(&main_session("s")).unwrap();
    let err = store
        .add_grant(&support::grant(
            None,
            GrantScope::Device,
            Op::Read,
            file("/dl"),
        ))
        .unwrap_err();
    assert!(matches!(err, StoreError::InvalidGrant { .. }), "{err:?}");
    assert!(err.to_string().contains("stays on its device"), "{err}");
    // A read's request offers no device grant here, and resolving one as
    // such is refused.
    let r = store
        .raise_request(&support::request("s", Op::Read, file("/dl/a")), 100)
        .unwrap();
    assert!(
        !r.suggested.contains(&Resolution::Device),
        "{:?}",
        r.suggested
    );
    assert!(
        store
            .resolve_request(r.id, Resolution::Device, "alice", 101)
            .is_err()
    );
    assert!(store.grants().unwrap().is_empty());
    // Once stays possible.
    let (_, grant) = store
        .resolve_request(r.id, Resolution::Once, "alice", 102)
        .unwrap();
    assert_eq!(grant.unwrap().scope, GrantScope::Once);
}
