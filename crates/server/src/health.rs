//! Whether the server can make decisions: its database file is still the one
//! it opened, and SQLite's `quick_check` found nothing wrong. `/healthz`
//! answers 503 naming why when not, and the decision thread refuses (a deny
//! at the door) instead of deciding against a file nobody else sees.

use std::path::PathBuf;
use std::sync::Mutex;
use std::time::Duration;

use portcullis_store::{FileId, Integrity, Store};

/// How often the daemon runs `PRAGMA quick_check` by default.
pub const QUICK_CHECK_EVERY: Duration = Duration::from_secs(60);

pub struct Health {
    /// The database file, and the identity it had when the server opened it
    /// (none for PostgreSQL, which keeps its own files).
    path: PathBuf,
    opened: Option<FileId>,
    /// Why the last `quick_check` failed, if it did.
    damaged: Mutex<Option<String>>,
}

impl Health {
    /// Health of the store `store` (the decision thread's connection).
    pub fn of(store: &Store) -> Health {
        Health {
            path: store.path().to_owned(),
            opened: store.file_id(),
            damaged: Mutex::new(None),
        }
    }

    /// Records the answer of a `quick_check` (or why it could not run).
    pub fn record_check(&self, check: Result<Integrity, String>) {
        let why = match check {
            Ok(Integrity::Ok) => None,
            Ok(damage) => Some(format!(
                "PRAGMA quick_check of `{}`: {damage}",
                self.path.display()
            )),
            Err(e) => Some(format!("PRAGMA quick_check could not run: {e}")),
        };
        let mut damaged = self.damaged.lock().unwrap_or_else(|p| p.into_inner());
        if why.is_some() && *damaged != why {
            eprintln!(
                "portcullis: error: {}; decisions are refused until a check passes",
                why.as_deref().unwrap_or_default()
            );
        }
        *damaged = why;
    }

    /// Why no decision can be made now, if so: the database file deleted or
    /// replaced (one `stat`), or the last `quick_check` failed.
    pub fn why_not_ready(&self) -> Option<String> {
        if let Some(Err(e)) = self.opened.map(|id| id.check(&self.path)) {
            return Some(e.to_string());
        }
        self.damaged
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }
}
