//! Permission requests: collapse, resolution, refusals.

// Test code: a failed unwrap, index or panic is a failed test.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

use crate::support;

use portcullis_store::{
    GrantScope, GrantTarget, NewRequest, Op, RequestStatus, Resolution, StoreError,
};
use support::{file, folder, main_session, request};

/// An "allow once" waits for its retry as long as the request says (the
/// configuration where the call was judged), else 10 minutes.
#[test]
fn a_once_grant_expires_as_its_request_says() {
    let (_dir, store) = support::store();
    store.register_session(&main_session("s")).unwrap();
    for (ttl, expires) in [
        (None, 100 + portcullis_store::ONCE_GRANT_TTL_SECS),
        (Some(30), 130),
        (Some(3_600), 3_700),
    ] {
        let new = NewRequest {
            once_ttl_secs: ttl,
            ..request("s", Op::Read, file(&format!("/ttl/{ttl:?}")))
        };
        let raised = store.raise_request(&new, 50).unwrap();
        assert_eq!(raised.once_ttl_secs, ttl);
        let (_, grant) = store
            .resolve_request(raised.id, Resolution::Once, "alice", 100)
            .unwrap();
        assert_eq!(grant.unwrap().expires_at, Some(expires), "{ttl:?}");
    }
    // A session grant does not expire by it.
    let new = NewRequest {
        once_ttl_secs: Some(30),
        ..request("s", Op::Read, file("/ttl/session"))
    };
    let raised = store.raise_request(&new, 50).unwrap();
    let (_, grant) = store
        .resolve_request(raised.id, Resolution::Session, "alice", 100)
        .unwrap();
    assert_eq!(grant.unwrap().expires_at, None);
}

#[test]
fn a_retry_loop_makes_one_request() {
    let (_dir, store) = support::store();
    store.register_session(&main_session("s")).unwrap();
    let new = request("s", Op::Read, file("/home/u/Downloads/a.pdf"));
    let first = store.raise_request(&new, 1000).unwrap();
    for i in 1..100 {
        let again = store.raise_request(&new, 1000 + i).unwrap();
        assert_eq!(again.id, first.id);
    }
    let all = store.requests(false).unwrap();
    assert_eq!(all.len(), 1, "{all:#?}");
    let r = &all[0];
    assert_eq!((r.count, r.created_at, r.last_seen), (100, 1000, 1099));
    assert_eq!(r.status, RequestStatus::Pending);
    assert_eq!(r.suggested, new.suggested);

    // Anything that differs is another request: tool, op, target, session.
    store.register_session(&main_session("t")).unwrap();
    let variants = [
        NewRequest {
            tool: "Grep".into(),
            ..new.clone()
        },
        NewRequest {
            target: folder("/home/u/Downloads/a.pdf"),
            ..new.clone()
        },
        NewRequest {
            session: "t".into(),
            ..new.clone()
        },
        request("s", Op::Write, file("/home/u/Downloads/a.pdf")),
    ];
    for v in &variants {
        assert_ne!(store.raise_request(v, 2000).unwrap().id, first.id, "{v:?}");
    }
    assert_eq!(store.requests(true).unwrap().len(), 5);
}

#[test]
fn the_pending_request_takes_the_latest_policy_view() {
    let (_dir, store) = support::store();
    store.register_session(&main_session("s")).unwrap();
    let new = request("s", Op::Read, file("/x"));
    store.raise_request(&new, 1).unwrap();
    let changed = NewRequest {
        eligible: false,
        reason: "protected".into(),
        suggested: vec![],
        ..new
    };
    let r = store.raise_request(&changed, 2).unwrap();
    assert_eq!(
        (r.count, r.eligible, r.reason.as_str()),
        (2, false, "protected")
    );
    assert!(r.suggested.is_empty());
    // Out-of-order clocks never move last_seen back.
    assert_eq!(store.raise_request(&changed, 0).unwrap().last_seen, 2);
}

#[test]
fn resolving_makes_the_grant_once() {
    let (_dir, store) = support::store();
    store.register_session(&main_session("s")).unwrap();
    let cases = [
        (
            Resolution::Once,
            Op::Write,
            file("/w"),
            Some(GrantScope::Once),
        ),
        (
            Resolution::Session,
            Op::Delete,
            folder("/d"),
            Some(GrantScope::Session),
        ),
        (
            Resolution::Device,
            Op::Read,
            folder("/home/u/Downloads"),
            Some(GrantScope::Device),
        ),
        (Resolution::Deny, Op::Read, file("/denied"), None),
    ];
    for (how, op, target, scope) in cases {
        let raised = store
            .raise_request(&request("s", op, target.clone()), 10)
            .unwrap();
        let (resolved, grant) = store.resolve_request(raised.id, how, "alice", 20).unwrap();
        assert_eq!(resolved.id, raised.id);
        assert_eq!(resolved.resolved_by.as_deref(), Some("alice"));
        assert_eq!(resolved.resolved_at, Some(20));
        assert_eq!(store.request(raised.id).unwrap().as_ref(), Some(&resolved));
        match scope {
            Some(scope) => {
                let g = grant.expect("a grant");
                assert_eq!(resolved.status, RequestStatus::Approved);
                assert_eq!(resolved.grant, Some(g.id));
                assert_eq!((g.scope, g.op, &g.target), (scope, op, &target));
                assert_eq!(
                    g.session.as_deref(),
                    (scope != GrantScope::Device).then_some("s")
                );
                assert_eq!(
                    (g.approver.as_str(), g.request, g.created_at),
                    ("alice", Some(raised.id), 20)
                );
                assert_eq!(store.grant(g.id).unwrap(), Some(g));
            }
            None => {
                assert!(grant.is_none());
                assert_eq!(resolved.status, RequestStatus::Denied);
                assert_eq!(resolved.grant, None);
            }
        }
        // Twice: refused, and nothing more is granted.
        let before = store.grants().unwrap().len();
        let err = store
            .resolve_request(raised.id, Resolution::Once, "alice", 30)
            .unwrap_err();
        assert!(
            matches!(err, StoreError::NotPending { id, .. } if id == raised.id),
            "{err:?}"
        );
        assert_eq!(store.grants().unwrap().len(), before);
    }
    assert_eq!(store.grants().unwrap().len(), 3);
    assert!(store.requests(true).unwrap().is_empty());

    // A resolved request no longer absorbs new identical ones.
    let again = store
        .raise_request(&request("s", Op::Write, file("/w")), 40)
        .unwrap();
    assert_eq!((again.count, again.status), (1, RequestStatus::Pending));
}

#[test]
fn a_device_resolution_of_a_write_is_refused_and_changes_nothing() {
    let (_dir, store) = support::store();
    store.register_session(&main_session("s")).unwrap();
    for op in [Op::Write, Op::Delete, Op::Move, Op::Exec] {
        let r = store
            .raise_request(&request("s", op, file("/w")), 1)
            .unwrap();
        let err = store
            .resolve_request(r.id, Resolution::Device, "alice", 2)
            .unwrap_err();
        assert!(
            matches!(err, StoreError::DeviceGrantNotReadOnly { op: o } if o == op),
            "{err:?}"
        );
        assert_eq!(
            store.request(r.id).unwrap().unwrap().status,
            RequestStatus::Pending
        );
    }
    assert!(store.grants().unwrap().is_empty());

    // Nor may a device resolution be suggested for one.
    let mut bad = request("s", Op::Write, file("/w"));
    bad.suggested.push(Resolution::Device);
    assert!(matches!(
        store.raise_request(&bad, 3),
        Err(StoreError::DeviceGrantNotReadOnly { .. })
    ));
}

#[test]
fn an_ineligible_request_can_only_be_denied() {
    let (_dir, store) = support::store();
    store.register_session(&main_session("s")).unwrap();
    let new = NewRequest {
        eligible: false,
        reason: "protected-path".into(),
        ..request("s", Op::Write, file("/p"))
    };
    let r = store.raise_request(&new, 1).unwrap();
    for how in [Resolution::Once, Resolution::Session] {
        let err = store.resolve_request(r.id, how, "alice", 2).unwrap_err();
        assert!(
            matches!(&err, StoreError::NotEligible { reason, .. } if reason == "protected-path"),
            "{err:?}"
        );
    }
    assert!(store.grants().unwrap().is_empty());
    let (denied, none) = store
        .resolve_request(r.id, Resolution::Deny, "alice", 3)
        .unwrap();
    assert_eq!((denied.status, none), (RequestStatus::Denied, None));
}

#[test]
fn requests_refuse_bad_input() {
    let (_dir, store) = support::store();
    let err = store
        .raise_request(&request("ghost", Op::Read, file("/a")), 1)
        .unwrap_err();
    assert!(
        matches!(&err, StoreError::UnknownSession { id } if id == "ghost"),
        "{err:?}"
    );
    store.register_session(&main_session("s")).unwrap();
    let rel = store.raise_request(&request("s", Op::Read, file("a")), 1);
    assert!(
        matches!(rel, Err(StoreError::InvalidRequest { .. })),
        "{rel:?}"
    );
    assert!(matches!(
        store.resolve_request(77, Resolution::Deny, "alice", 1),
        Err(StoreError::UnknownRequest { id: 77 })
    ));
    let r = store
        .raise_request(&request("s", Op::Read, file("/a")), 1)
        .unwrap();
    assert!(matches!(
        store.resolve_request(r.id, Resolution::Once, "", 1),
        Err(StoreError::InvalidRequest { .. })
    ));
    // Approving for a session that has ended is refused: revoking it closed
    // its pending requests.
    store.revoke_session("s").unwrap();
    let ended = store.resolve_request(r.id, Resolution::Session, "alice", 2);
    assert!(
        matches!(ended, Err(StoreError::NotPending { .. })),
        "{ended:?}"
    );
    assert_eq!(
        store.request(r.id).unwrap().unwrap().status,
        RequestStatus::Denied
    );
}

#[test]
fn a_hold_deadline_is_stored_once_per_request_and_only_grows() {
    let (_dir, store) = support::store();
    store.register_session(&main_session("s")).unwrap();
    let new = request("s", Op::Read, file("/home/u/Downloads/a.pdf"));
    let r = store.raise_request(&new, 1000).unwrap();
    assert_eq!(r.held_until, None, "nobody waits yet");
    assert_eq!(store.hold_request(r.id, 1054).unwrap(), Some(1054));
    // A second holder (a retry) with an earlier deadline keeps the later one;
    // a later one extends it.
    assert_eq!(store.hold_request(r.id, 1030).unwrap(), Some(1054));
    assert_eq!(store.hold_request(r.id, 1100).unwrap(), Some(1100));
    assert_eq!(store.request(r.id).unwrap().unwrap().held_until, Some(1100));
    // The retry collapses into the same request, deadline kept.
    let again = store.raise_request(&new, 1001).unwrap();
    assert_eq!((again.id, again.held_until), (r.id, Some(1100)));
    // Resolved: nothing to wait for, the deadline stays as it was.
    store
        .resolve_request(r.id, Resolution::Deny, "alice", 1002)
        .unwrap();
    assert_eq!(store.hold_request(r.id, 2000).unwrap(), None);
    assert_eq!(store.request(r.id).unwrap().unwrap().held_until, Some(1100));
    assert!(matches!(
        store.hold_request(9999, 2000),
        Err(StoreError::UnknownRequest { id: 9999 })
    ));
}

/// A revoked session's pending requests (its descendants' too) close with
/// it: nobody is left to retry, and an approval would grant nothing. Other
/// sessions' requests stay.
#[test]
fn revoking_a_session_closes_its_pending_requests() {
    let (_dir, store) = support::store();
    store
        .register_session_at(&support::main_session("gone"), 1)
        .unwrap();
    store
        .register_session_at(
            &support::child("gone-kid", "gone", portcullis_store::AgentKind::Subagent),
            1,
        )
        .unwrap();
    store
        .register_session_at(&support::main_session("stays"), 1)
        .unwrap();
    let target = || GrantTarget::Path {
        canonical: "/etc/hostname".into(),
        folder: false,
    };
    for s in ["gone", "gone-kid", "stays"] {
        store
            .raise_request(&request(s, Op::Read, target()), 10)
            .unwrap();
    }
    assert!(store.revoke_session_at("gone", 20).unwrap());
    let pending: Vec<String> = store
        .requests(true)
        .unwrap()
        .into_iter()
        .map(|r| r.session)
        .collect();
    assert_eq!(pending, vec!["stays".to_string()]);
    let closed = store.requests(false).unwrap();
    for r in closed.iter().filter(|r| r.session != "stays") {
        assert_eq!(r.status, portcullis_store::RequestStatus::Denied, "{r:?}");
        assert_eq!(r.resolved_by.as_deref(), Some("session revoked"));
    }
}

/// Stale requests close by themselves: an ended session's, and those nothing
/// asked for again for `idle` while no call was held for them. A fresh one,
/// a held one and a resolved one stay as they are.
#[test]
fn stale_requests_expire_when_the_agent_gave_up_or_the_session_ended() {
    let (_dir, store) = support::store();
    let short = portcullis_store::NewSession {
        ttl_secs: Some(100),
        ..main_session("short")
    };
    store.register_session_at(&short, 0).unwrap();
    store.register_session_at(&main_session("s"), 0).unwrap();
    let raise = |session: &str, path: &str, at: i64| {
        store
            .raise_request(&request(session, Op::Read, file(path)), at)
            .unwrap()
            .id
    };
    let ended = raise("short", "/a", 10);
    let idle = raise("s", "/b", 10);
    let held = raise("s", "/c", 10);
    store.hold_request(held, 5_000).unwrap();
    let fresh = raise("s", "/d", 4_000);
    let resolved = raise("s", "/e", 10);
    store
        .resolve_request(resolved, Resolution::Session, "alice", 20)
        .unwrap();
    // Before anything is stale: nothing closes.
    assert_eq!(store.expire_stale_requests(50, 3_600).unwrap(), 0);
    // The short session ended at 100; /b was last asked at 10.
    assert_eq!(store.expire_stale_requests(4_500, 3_600).unwrap(), 2);
    let status = |id| store.request(id).unwrap().unwrap();
    assert_eq!(status(ended).status, RequestStatus::Denied);
    assert_eq!(
        status(ended).resolved_by.as_deref(),
        Some("expired: the session ended")
    );
    assert_eq!(status(idle).status, RequestStatus::Denied);
    assert_eq!(
        status(idle).resolved_by.as_deref(),
        Some("expired: not asked again for 60 minutes")
    );
    for stays in [held, fresh] {
        assert_eq!(status(stays).status, RequestStatus::Pending, "#{stays}");
    }
    assert_eq!(status(resolved).status, RequestStatus::Approved);
    // The hold ended long ago and nothing asked again: it goes too.
    assert_eq!(store.expire_stale_requests(7_000, 3_600).unwrap(), 1);
    assert_eq!(status(held).status, RequestStatus::Denied);
    assert_eq!(status(fresh).status, RequestStatus::Pending);
}

// Device grants live on their device only: the tests that make one run on
// SQLite (PostgreSQL refuses them: `postgres::a_shared_store_keeps_no_device_grants`).
crate::also_on_postgres!(
    a_once_grant_expires_as_its_request_says,
    the_pending_request_takes_the_latest_policy_view,
    a_device_resolution_of_a_write_is_refused_and_changes_nothing,
    an_ineligible_request_can_only_be_denied,
    requests_refuse_bad_input,
    a_hold_deadline_is_stored_once_per_request_and_only_grows,
    revoking_a_session_closes_its_pending_requests,
    stale_requests_expire_when_the_agent_gave_up_or_the_session_ended,
);
