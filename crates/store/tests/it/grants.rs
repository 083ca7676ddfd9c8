//! Grants: scopes, validation, which grants are active.

// Test code: a failed unwrap, index or panic is a failed test.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

use crate::support;

use portcullis_store::{AgentKind, GrantScope, GrantTarget, NewSession, Op, StoreError};
use support::{child, file, folder, grant, main_session, raw};

#[test]
fn a_device_grant_is_read_only() {
    let (_dir, store) = support::store();
    for op in [Op::Write, Op::Delete, Op::Move, Op::Exec] {
        let err = store
            .add_grant(&grant(None, GrantScope::Device, op, folder("/dl")))
            .unwrap_err();
        assert!(
            matches!(err, StoreError::DeviceGrantNotReadOnly { op: o } if o == op),
            "{err:?}"
        );
        assert!(err.to_string().contains(op.as_str()), "{err}");
    }
    assert!(store.grants().unwrap().is_empty());
    let ok = store
        .add_grant(&grant(None, GrantScope::Device, Op::Read, folder("/dl")))
        .unwrap();
    assert_eq!(
        (ok.scope, ok.op, ok.session),
        (GrantScope::Device, Op::Read, None)
    );

    // The schema refuses it too, whatever code writes the row.
    let conn = raw(store.path());
    let sneaky = conn.execute(
        "INSERT INTO grants (session, scope, op, target, approver, created_at)
         VALUES (NULL, 'device', 'write', '{\"kind\":\"path\",\"canonical\":\"/dl\",\"folder\":true}', 'x', 0)",
        [],
    );
    assert!(
        sneaky.is_err(),
        "the CHECK constraint must refuse a device write grant"
    );
}

#[test]
fn grant_shapes_are_checked() {
    let (_dir, store) = support::store();
    store.register_session(&main_session("s")).unwrap();
    let invalid = |g| match store.add_grant(&g) {
        Err(StoreError::InvalidGrant { why }) => why,
        other => panic!("{g:?}: expected InvalidGrant, got {other:?}"),
    };
    assert!(
        invalid(grant(Some("s"), GrantScope::Device, Op::Read, file("/a")))
            .contains("device grant")
    );
    assert!(
        invalid(grant(None, GrantScope::Session, Op::Read, file("/a"))).contains("needs a session")
    );
    assert!(
        invalid(grant(None, GrantScope::Once, Op::Read, file("/a"))).contains("needs a session")
    );
    assert!(
        invalid(grant(Some("s"), GrantScope::Once, Op::Read, file("rel/a"))).contains("absolute")
    );
    let empty_cmd = GrantTarget::Command { pattern: "".into() };
    assert!(invalid(grant(Some("s"), GrantScope::Once, Op::Exec, empty_cmd)).contains("empty"));
    let mut no_approver = grant(Some("s"), GrantScope::Once, Op::Read, file("/a"));
    no_approver.approver = " ".into();
    assert!(invalid(no_approver).contains("approver"));

    let unknown = store.add_grant(&grant(
        Some("ghost"),
        GrantScope::Session,
        Op::Read,
        file("/a"),
    ));
    assert!(
        matches!(unknown, Err(StoreError::UnknownSession { .. })),
        "{unknown:?}"
    );
    let mut bad_request = grant(Some("s"), GrantScope::Session, Op::Read, file("/a"));
    bad_request.request = Some(42);
    assert!(matches!(
        store.add_grant(&bad_request),
        Err(StoreError::UnknownRequest { id: 42 })
    ));

    store.revoke_session("s").unwrap();
    let ended = store.add_grant(&grant(Some("s"), GrantScope::Session, Op::Read, file("/a")));
    assert!(
        matches!(ended, Err(StoreError::InactiveSession { .. })),
        "{ended:?}"
    );
    assert!(store.grants().unwrap().is_empty());
}

#[test]
fn active_grants_filter_revoked_expired_consumed_and_foreign() {
    let (_dir, store) = support::store();
    store.register_session_at(&main_session("s"), 0).unwrap();
    store
        .register_session_at(&main_session("other"), 0)
        .unwrap();
    let add = |session: Option<&str>, scope, op, path: &str, expires_at: Option<i64>| {
        let mut g = grant(session, scope, op, file(path));
        g.expires_at = expires_at;
        store.add_grant_at(&g, 0).unwrap().id
    };
    let live_session = add(Some("s"), GrantScope::Session, Op::Read, "/live", None);
    let live_once = add(Some("s"), GrantScope::Once, Op::Write, "/once", Some(500));
    let revoked = add(Some("s"), GrantScope::Session, Op::Read, "/revoked", None);
    let expired = add(
        Some("s"),
        GrantScope::Session,
        Op::Read,
        "/expired",
        Some(100),
    );
    let consumed = add(Some("s"), GrantScope::Once, Op::Read, "/consumed", None);
    let foreign = add(
        Some("other"),
        GrantScope::Session,
        Op::Read,
        "/foreign",
        None,
    );
    let device = add(None, GrantScope::Device, Op::Read, "/device", None);
    let device_revoked = add(None, GrantScope::Device, Op::Read, "/device-revoked", None);
    assert!(store.revoke_grant(revoked, 10).unwrap());
    assert!(!store.revoke_grant(revoked, 11).unwrap(), "already revoked");
    assert!(!store.revoke_grant(9999, 11).unwrap(), "unknown");
    assert!(store.revoke_grant(device_revoked, 10).unwrap());
    assert!(store.consume_once(consumed, 10).unwrap());

    let ids = |session_ids: &[&str], now| {
        store
            .active_grants(session_ids, now)
            .unwrap()
            .into_iter()
            .map(|g| g.id)
            .collect::<Vec<_>>()
    };
    assert_eq!(ids(&["s"], 50), [live_session, live_once, expired, device]);
    assert_eq!(
        ids(&["s"], 100),
        [live_session, live_once, device],
        "expired at 100"
    );
    assert_eq!(
        ids(&["s"], 500),
        [live_session, device],
        "the once grant expired too"
    );
    assert_eq!(ids(&["other"], 100), [foreign, device]);
    assert_eq!(
        ids(&["s", "other"], 100),
        [live_session, live_once, foreign, device]
    );

    // Device grants are visible to every session (even with no session at all).
    assert_eq!(ids(&[], 100), [device]);
    assert_eq!(ids(&["unknown"], 100), [device]);

    // A session's grants end with the session.
    store.revoke_session_at("s", 200).unwrap();
    assert_eq!(ids(&["s"], 300), [device]);
    assert!(
        !store.consume_once(live_once, 300).unwrap(),
        "a revoked session's once grant"
    );
}

#[test]
fn a_parent_expiring_ends_a_child_grant() {
    let (_dir, store) = support::store();
    store
        .register_session_at(
            &NewSession {
                ttl_secs: Some(100),
                ..main_session("p")
            },
            0,
        )
        .unwrap();
    store
        .register_session_at(&child("c", "p", AgentKind::Subagent), 0)
        .unwrap();
    let g = store
        .add_grant_at(
            &grant(Some("c"), GrantScope::Session, Op::Read, file("/x")),
            0,
        )
        .unwrap();
    assert_eq!(store.active_grants(&["c"], 99).unwrap(), vec![g]);
    assert!(store.active_grants(&["c"], 100).unwrap().is_empty());
}

#[test]
fn consume_once_is_single_use_and_only_for_once_grants() {
    let (_dir, store) = support::store();
    store.register_session(&main_session("s")).unwrap();
    let once = store
        .add_grant(&grant(Some("s"), GrantScope::Once, Op::Read, file("/a")))
        .unwrap();
    let session = store
        .add_grant(&grant(Some("s"), GrantScope::Session, Op::Read, file("/a")))
        .unwrap();
    let device = store
        .add_grant(&grant(None, GrantScope::Device, Op::Read, file("/a")))
        .unwrap();
    let mut expiring = grant(Some("s"), GrantScope::Once, Op::Read, file("/b"));
    expiring.expires_at = Some(100);
    let expiring = store.add_grant(&expiring).unwrap();
    let revoked = store
        .add_grant(&grant(Some("s"), GrantScope::Once, Op::Read, file("/c")))
        .unwrap();
    store.revoke_grant(revoked.id, 5).unwrap();

    assert!(store.consume_once(once.id, 7).unwrap());
    assert!(!store.consume_once(once.id, 8).unwrap());
    assert_eq!(store.grant(once.id).unwrap().unwrap().consumed_at, Some(7));
    assert!(!store.consume_once(session.id, 7).unwrap());
    assert!(!store.consume_once(device.id, 7).unwrap());
    assert!(!store.consume_once(expiring.id, 100).unwrap(), "expired");
    assert!(!store.consume_once(revoked.id, 7).unwrap(), "revoked");
    assert!(!store.consume_once(12345, 7).unwrap(), "unknown");
}

#[test]
fn grants_are_listed_newest_first_and_read_back_whole() {
    let (_dir, store) = support::store();
    store.register_session(&main_session("s")).unwrap();
    let cmd = GrantTarget::Command {
        pattern: "cargo test *".into(),
    };
    let a = store
        .add_grant_at(
            &grant(Some("s"), GrantScope::Session, Op::Exec, cmd.clone()),
            5,
        )
        .unwrap();
    let b = store
        .add_grant_at(&grant(None, GrantScope::Device, Op::Read, folder("/dl")), 6)
        .unwrap();
    assert_eq!(a.target, cmd);
    assert_eq!(a.created_at, 5);
    assert_eq!(a.approver, "tester");
    assert_eq!(store.grants().unwrap(), vec![b.clone(), a.clone()]);
    assert_eq!(store.grant(a.id).unwrap(), Some(a));
    assert_eq!(store.grant(b.id + 1).unwrap(), None);
}

#[test]
fn consume_once_all_is_all_or_nothing() {
    let (_dir, store) = support::store();
    store.register_session(&main_session("s")).unwrap();
    let once = |p: &str| {
        store
            .add_grant(&grant(Some("s"), GrantScope::Once, Op::Write, file(p)))
            .unwrap()
            .id
    };
    let (a, b, c) = (once("/a"), once("/b"), once("/c"));
    assert!(store.consume_once(b, 1).unwrap());
    assert!(!store.consume_once_all(&[a, b], 2).unwrap(), "b is gone");
    assert_eq!(
        store.grant(a).unwrap().unwrap().consumed_at,
        None,
        "a was not burnt"
    );
    assert!(store.consume_once_all(&[a, c, a], 3).unwrap());
    for id in [a, c] {
        assert_eq!(store.grant(id).unwrap().unwrap().consumed_at, Some(3));
    }
    assert!(store.consume_once_all(&[], 4).unwrap());
}

// Device grants live on their device only: the tests that make one run on
// SQLite (PostgreSQL refuses them: `postgres::a_shared_store_keeps_no_device_grants`).
crate::also_on_postgres!(
    a_parent_expiring_ends_a_child_grant,
    consume_once_all_is_all_or_nothing,
);
