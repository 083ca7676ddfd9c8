//! Shared helpers for the store's integration tests.
#![allow(dead_code)]

use std::path::Path;

use portcullis_store::{AgentKind, GrantScope, GrantTarget, NewGrant, NewSession, Op, Store};

/// A store in a fresh temporary data directory.
pub fn store() -> (tempfile::TempDir, Store) {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    (dir, store)
}

/// A `main` session with this id and nothing else.
pub fn main_session(id: &str) -> NewSession {
    NewSession {
        id: id.into(),
        kind: AgentKind::Main,
        ..NewSession::default()
    }
}

/// A child session of `parent`.
pub fn child(id: &str, parent: &str, kind: AgentKind) -> NewSession {
    NewSession {
        id: id.into(),
        parent: Some(parent.into()),
        kind,
        ..NewSession::default()
    }
}

/// A one-file path target.
pub fn file(p: &str) -> GrantTarget {
    GrantTarget::Path {
        canonical: p.into(),
        folder: false,
    }
}

/// A folder path target.
pub fn folder(p: &str) -> GrantTarget {
    GrantTarget::Path {
        canonical: p.into(),
        folder: true,
    }
}

/// A grant for `session` (None for device scope).
pub fn grant(session: Option<&str>, scope: GrantScope, op: Op, target: GrantTarget) -> NewGrant {
    NewGrant {
        session: session.map(str::to_owned),
        scope,
        op,
        target,
        expires_at: None,
        approver: "tester".into(),
        request: None,
    }
}

/// The database file opened directly, bypassing the store (for tampering).
pub fn raw(db: &Path) -> rusqlite::Connection {
    rusqlite::Connection::open(db).unwrap()
}
