//! Shared helpers for the store's integration tests.
#![allow(dead_code)]

use std::cell::Cell;
use std::path::Path;

use portcullis_store::{
    AgentKind, GrantScope, GrantTarget, NewGrant, NewRequest, NewSession, Op, Resolution, Store,
};

#[cfg(feature = "postgres")]
pub mod postgres;

thread_local! {
    /// Whether [`store`] gives this test a PostgreSQL store ([`on_postgres`]).
    static ON_POSTGRES: Cell<bool> = const { Cell::new(false) };
}

/// A store in a fresh temporary data directory — or, inside
/// [`on_postgres`], a fresh database on the test PostgreSQL server.
pub fn store() -> (tempfile::TempDir, Store) {
    let dir = tempfile::tempdir().unwrap();
    #[cfg(feature = "postgres")]
    if ON_POSTGRES.get() {
        let store = Store::connect(&postgres::fresh_database()).unwrap();
        return (dir, store);
    }
    let store = Store::open(dir.path()).unwrap();
    (dir, store)
}

/// Runs a contract test with PostgreSQL behind [`store`].
pub fn on_postgres(test: fn()) {
    ON_POSTGRES.set(true);
    test();
}

/// The listed tests of this module again, each against PostgreSQL: the
/// store's contract holds on both databases. (Tests that open the SQLite file
/// itself are not listed.)
#[macro_export]
macro_rules! also_on_postgres {
    ($($test:ident),* $(,)?) => {
        #[cfg(feature = "postgres")]
        mod on_postgres {
            $(
                #[test]
                fn $test() {
                    $crate::support::on_postgres(super::$test);
                }
            )*
        }
    };
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

/// A refused call of `session` as a request: a read offers a device grant
/// too, anything else once and session only.
pub fn request(session: &str, op: Op, target: GrantTarget) -> NewRequest {
    NewRequest {
        session: session.into(),
        tool: "Read".into(),
        op,
        target,
        reason: "external-path".into(),
        eligible: true,
        policy_scope: "workspace".into(),
        suggested: if op == Op::Read {
            vec![
                Resolution::Once,
                Resolution::Session,
                Resolution::Device,
                Resolution::Deny,
            ]
        } else {
            vec![Resolution::Once, Resolution::Session, Resolution::Deny]
        },
        once_ttl_secs: None,
        device: None,
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
