//! Sessions, principals and tokens.

// Test code: a failed unwrap, index or panic is a failed test.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

use crate::support;

use portcullis_store::{AgentKind, NewSession, StoreError};
use support::{child, main_session, raw};

#[test]
fn register_returns_the_session_and_a_token_once() {
    let (_dir, store) = support::store();
    let new = NewSession {
        id: "s1".into(),
        agent: Some("claude-code".into()),
        cwd: Some("/proj".into()),
        ttl_secs: Some(100),
        ..main_session("s1")
    };
    let reg = store.register_session_at(&new, 1000).unwrap();
    assert_eq!(reg.session.id, "s1");
    assert_eq!(reg.session.agent.as_deref(), Some("claude-code"));
    assert_eq!(reg.session.cwd.as_deref(), Some("/proj"));
    assert_eq!(reg.session.kind, AgentKind::Main);
    assert_eq!(reg.session.created_at, 1000);
    assert_eq!(reg.session.expires_at, Some(1100));
    assert!(reg.session.is_active(1099) && !reg.session.is_active(1100));
    assert_eq!(reg.token.len(), 64);
    assert_eq!(store.session("s1").unwrap(), Some(reg.session.clone()));
    assert_eq!(store.sessions().unwrap(), vec![reg.session]);

    // Only the hash is stored.
    let stored: String = raw(store.path())
        .query_row("SELECT token_hash FROM sessions WHERE id = 's1'", [], |r| {
            r.get(0)
        })
        .unwrap();
    assert_ne!(stored, reg.token);
    assert_eq!(stored, blake3::hash(reg.token.as_bytes()).to_hex().as_str());
}

#[test]
fn a_duplicate_id_is_refused() {
    let (_dir, store) = support::store();
    store.register_session(&main_session("dup")).unwrap();
    let err = store.register_session(&main_session("dup")).unwrap_err();
    assert!(
        matches!(&err, StoreError::AlreadyExists { id } if id == "dup"),
        "{err:?}"
    );
    assert_eq!(err.to_string(), "session `dup` already exists");
    assert_eq!(store.sessions().unwrap().len(), 1);
}

#[test]
fn ensure_session_registers_once_and_never_changes_an_existing_session() {
    let (_dir, store) = support::store();
    let first = store.ensure_session_at(&main_session("hook"), 10).unwrap();
    let again = store.ensure_session_at(&main_session("hook"), 20).unwrap();
    assert_eq!(first, again);
    assert_eq!(first.created_at, 10);

    store.register_session(&main_session("other")).unwrap();
    // Asking for a different principal does not move the existing one.
    let moved = store
        .ensure_session(&child("hook", "other", AgentKind::Subagent))
        .unwrap();
    assert_eq!(moved, first);
    assert_eq!(store.sessions().unwrap().len(), 2);

    // A hook-registered session has no token until one is issued.
    assert!(!store.verify_token("hook", "").unwrap());
    let token = store.issue_token("hook").unwrap();
    assert!(store.verify_token("hook", &token).unwrap());
    let newer = store.issue_token("hook").unwrap();
    assert!(
        !store.verify_token("hook", &token).unwrap(),
        "a replaced token stops working"
    );
    assert!(store.verify_token("hook", &newer).unwrap());
}

#[test]
fn ensure_session_validates_a_new_session() {
    let (_dir, store) = support::store();
    let err = store
        .ensure_session(&child("c", "nobody", AgentKind::Subagent))
        .unwrap_err();
    assert!(
        matches!(&err, StoreError::UnknownSession { id } if id == "nobody"),
        "{err:?}"
    );
    assert!(store.session("c").unwrap().is_none());
}

#[test]
fn tokens_verify_only_for_their_own_session() {
    let (_dir, store) = support::store();
    let a = store.register_session(&main_session("a")).unwrap();
    let b = store.register_session(&main_session("b")).unwrap();
    assert_ne!(a.token, b.token);
    assert!(store.verify_token("a", &a.token).unwrap());
    assert!(store.verify_token("b", &b.token).unwrap());
    assert!(
        !store.verify_token("a", &b.token).unwrap(),
        "another session's token"
    );
    assert!(!store.verify_token("a", "").unwrap());
    assert!(!store.verify_token("a", &a.token.to_uppercase()).unwrap());
    assert!(!store.verify_token("a", &a.token[..63]).unwrap());
    assert!(
        !store.verify_token("nobody", &a.token).unwrap(),
        "unknown session"
    );
}

#[test]
fn revoking_ends_the_session_and_its_descendants() {
    let (_dir, store) = support::store();
    store.register_session_at(&main_session("root"), 1).unwrap();
    store
        .register_session_at(&child("kid", "root", AgentKind::Subagent), 1)
        .unwrap();
    store
        .register_session_at(&child("grandkid", "kid", AgentKind::Background), 1)
        .unwrap();
    store
        .register_session_at(&main_session("bystander"), 1)
        .unwrap();

    assert!(store.revoke_session_at("root", 50).unwrap());
    assert!(
        !store.revoke_session_at("root", 60).unwrap(),
        "already revoked"
    );
    assert!(!store.revoke_session("nobody").unwrap(), "unknown");
    for id in ["root", "kid", "grandkid"] {
        let s = store.session(id).unwrap().unwrap();
        assert_eq!(s.revoked_at, Some(50), "{id}");
        assert!(!s.is_active(2), "{id}");
    }
    assert!(store.session("bystander").unwrap().unwrap().is_active(100));

    // A revoked parent cannot have new children, and its token cannot get a successor.
    let err = store
        .register_session(&child("late", "root", AgentKind::Subagent))
        .unwrap_err();
    assert!(
        matches!(&err, StoreError::InactiveSession { id } if id == "root"),
        "{err:?}"
    );
    assert!(matches!(
        store.issue_token("root"),
        Err(StoreError::InactiveSession { .. })
    ));
}

#[test]
fn ancestors_nearest_first_and_cycle_safe() {
    let (_dir, store) = support::store();
    store.register_session(&main_session("m")).unwrap();
    store
        .register_session(&child("sub", "m", AgentKind::Subagent))
        .unwrap();
    store
        .register_session(&child("bg", "sub", AgentKind::Background))
        .unwrap();
    let ids = |v: Vec<portcullis_store::Session>| v.into_iter().map(|s| s.id).collect::<Vec<_>>();
    assert_eq!(ids(store.ancestors("bg").unwrap()), ["sub", "m"]);
    assert_eq!(ids(store.ancestors("sub").unwrap()), ["m"]);
    assert!(store.ancestors("m").unwrap().is_empty());
    assert!(store.ancestors("nobody").unwrap().is_empty());

    // Only a hand-edited database can hold a cycle; it must not hang.
    store
        .register_session(&NewSession {
            kind: AgentKind::Background,
            ..main_session("x")
        })
        .unwrap();
    store
        .register_session(&child("y", "x", AgentKind::Background))
        .unwrap();
    raw(store.path())
        .execute("UPDATE sessions SET parent = 'y' WHERE id = 'x'", [])
        .unwrap();
    assert_eq!(ids(store.ancestors("y").unwrap()), ["x"]);
    assert_eq!(ids(store.ancestors("x").unwrap()), ["y"]);
}

#[test]
fn principal_rules() {
    let (_dir, store) = support::store();
    store
        .register_session_at(
            &NewSession {
                ttl_secs: Some(100),
                ..main_session("m")
            },
            0,
        )
        .unwrap();
    let invalid = |s: NewSession| match store.register_session_at(&s, 10) {
        Err(StoreError::InvalidSession { why, .. }) => why,
        other => panic!("{s:?}: expected InvalidSession, got {other:?}"),
    };
    assert!(invalid(child("x", "m", AgentKind::Main)).contains("main session has no parent"));
    assert!(
        invalid(NewSession {
            kind: AgentKind::Subagent,
            ..main_session("x")
        })
        .contains("needs a parent")
    );
    assert!(
        invalid(NewSession {
            kind: AgentKind::Workflow,
            ..main_session("x")
        })
        .contains("workflow id")
    );
    assert!(invalid(child("m2", "m2", AgentKind::Background)).contains("own parent"));
    assert!(
        invalid(NewSession {
            ttl_secs: Some(0),
            ..main_session("x")
        })
        .contains("ttl")
    );
    for bad in ["", "a b", "a/b", "tab\there"] {
        invalid(main_session(bad));
    }
    let unknown = store
        .register_session(&child("x", "ghost", AgentKind::Subagent))
        .unwrap_err();
    assert!(
        matches!(unknown, StoreError::UnknownSession { .. }),
        "{unknown:?}"
    );

    // A child never outlives its parent.
    let kid = store
        .register_session_at(
            &NewSession {
                ttl_secs: Some(1000),
                ..child("k", "m", AgentKind::Subagent)
            },
            10,
        )
        .unwrap();
    assert_eq!(kid.session.expires_at, Some(100));
    let kid2 = store
        .register_session_at(&child("k2", "m", AgentKind::Background), 10)
        .unwrap();
    assert_eq!(kid2.session.expires_at, Some(100));
    // An expired parent cannot have new children.
    let late = store
        .register_session_at(&child("k3", "m", AgentKind::Subagent), 100)
        .unwrap_err();
    assert!(
        matches!(late, StoreError::InactiveSession { .. }),
        "{late:?}"
    );

    // Workflows: children inherit the workflow and cannot join another.
    let wf = NewSession {
        workflow: Some("wf-1".into()),
        kind: AgentKind::Workflow,
        ..main_session("w")
    };
    store.register_session(&wf).unwrap();
    let step = store
        .register_session(&child("w-step", "w", AgentKind::Subagent))
        .unwrap();
    assert_eq!(step.session.workflow.as_deref(), Some("wf-1"));
    let other = NewSession {
        workflow: Some("wf-2".into()),
        ..child("w-evil", "w", AgentKind::Workflow)
    };
    assert!(invalid(other).contains("cannot join workflow `wf-2`"));
}

#[test]
fn lineage_is_the_session_then_its_ancestors_nearest_first() {
    let (_dir, store) = support::store();
    store.register_session(&main_session("root")).unwrap();
    store
        .register_session(&support::child("mid", "root", AgentKind::Subagent))
        .unwrap();
    store
        .register_session(&support::child("leaf", "mid", AgentKind::Subagent))
        .unwrap();
    let ids = |v: Vec<portcullis_store::Session>| v.into_iter().map(|s| s.id).collect::<Vec<_>>();
    assert_eq!(ids(store.lineage("leaf").unwrap()), ["leaf", "mid", "root"]);
    assert_eq!(ids(store.lineage("root").unwrap()), ["root"]);
    assert!(store.lineage("nobody").unwrap().is_empty());
    assert_eq!(ids(store.ancestors("leaf").unwrap()), ["mid", "root"]);
}

crate::also_on_postgres!(
    lineage_is_the_session_then_its_ancestors_nearest_first,
    a_duplicate_id_is_refused,
    ensure_session_registers_once_and_never_changes_an_existing_session,
    ensure_session_validates_a_new_session,
    tokens_verify_only_for_their_own_session,
    revoking_ends_the_session_and_its_descendants,
    principal_rules,
);
