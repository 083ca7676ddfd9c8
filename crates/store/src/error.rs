//! The store's error type. Every message names what failed and, for the
//! database and the file system, the path.

use std::path::PathBuf;

use crate::types::{Op, RequestStatus};

/// The store's result type.
pub type Result<T> = std::result::Result<T, StoreError>;

/// Everything the store can refuse or fail at.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// A file-system operation on the data directory or database file failed.
    #[error("cannot {what} `{}`: {source}", path.display())]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// What was being done (`create the data directory` …).
        what: &'static str,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// The database failed: SQLite (locked past the 10 s busy timeout, disk
    /// full, corrupt file …) or PostgreSQL (unreachable, restarted …).
    #[error("database `{}`: cannot {what}: {source}", path.display())]
    Database {
        /// The database file, or a PostgreSQL database's address.
        path: PathBuf,
        /// What was being done (`add a grant` …).
        what: &'static str,
        /// The underlying error.
        #[source]
        source: crate::DbError,
    },
    /// The database was written by a newer portcullis.
    #[error(
        "database `{}` has schema version {found}, but this portcullis knows versions up to {supported}: upgrade portcullis or use another --data-dir",
        path.display()
    )]
    SchemaTooNew {
        /// The database file.
        path: PathBuf,
        /// The version found in the file.
        found: i64,
        /// The newest version this build knows.
        supported: i64,
    },
    /// A stored value could not be read back (edited by hand?).
    #[error("database `{}`: {what}: {why}", path.display())]
    Corrupt {
        /// The database file.
        path: PathBuf,
        /// Which value.
        what: String,
        /// What is wrong with it.
        why: String,
    },
    /// `register_session` with an id that is already registered.
    #[error("session `{id}` already exists")]
    AlreadyExists {
        /// The session id.
        id: String,
    },
    /// A session id that is not registered (as a parent, a grant's or a request's session).
    #[error("no session `{id}` is registered")]
    UnknownSession {
        /// The session id.
        id: String,
    },
    /// A session that is revoked or expired, where an active one is needed.
    #[error("session `{id}` is revoked or expired")]
    InactiveSession {
        /// The session id.
        id: String,
    },
    /// A session that breaks the principal rules (bad id, a main agent with a
    /// parent, a subagent without one …).
    #[error("cannot register session `{id}`: {why}")]
    InvalidSession {
        /// The session id.
        id: String,
        /// Which rule it breaks.
        why: String,
    },
    /// A device that cannot be enrolled (a bad or taken name).
    #[error("cannot enrol device `{name}`: {why}")]
    InvalidDevice {
        /// The device name.
        name: String,
        /// What is wrong.
        why: String,
    },
    /// A device grant (or a device resolution) for an operation other than read.
    #[error(
        "a device grant allows reads only, not `{op}`: grant `{op}` once or for the session instead"
    )]
    DeviceGrantNotReadOnly {
        /// The operation asked for.
        op: Op,
    },
    /// A grant that is malformed (session missing or present against its scope, empty approver, relative path …).
    #[error("invalid grant: {why}")]
    InvalidGrant {
        /// What is wrong.
        why: String,
    },
    /// A permission request that is malformed.
    #[error("invalid permission request: {why}")]
    InvalidRequest {
        /// What is wrong.
        why: String,
    },
    /// An audit event that is malformed or too large.
    #[error("invalid audit event: {why}")]
    InvalidAudit {
        /// What is wrong.
        why: String,
    },
    /// No permission request has this id.
    #[error("no permission request {id}")]
    UnknownRequest {
        /// The request id.
        id: i64,
    },
    /// The request was already resolved.
    #[error("permission request {id} is already {status}: only pending requests can be resolved")]
    NotPending {
        /// The request id.
        id: i64,
        /// Its status.
        status: RequestStatus,
    },
    /// The request may not be approved (the policy marked it not eligible); it can only be denied.
    #[error(
        "permission request {id} is not eligible for approval ({reason}): it can only be denied"
    )]
    NotEligible {
        /// The request id.
        id: i64,
        /// Why the policy refused it.
        reason: String,
    },
    /// A data directory or database file that someone else could have
    /// written: owned by another user, or writable by group or others. Its
    /// grants cannot be trusted, so the store does not open.
    #[error("refusing {what} `{}`: {why}", path.display())]
    Untrusted {
        /// The directory or file.
        path: PathBuf,
        /// `the data directory`, `the database file` …
        what: &'static str,
        /// What is wrong with it and how to fix it.
        why: String,
    },
    /// The database file was deleted or replaced after this connection opened
    /// it: what it now names is not what this connection reads and writes.
    #[error(
        "database `{}` was {why} after it was opened: this process no longer sees the store others use (restart it)",
        path.display()
    )]
    Replaced {
        /// The database file.
        path: PathBuf,
        /// `deleted` or `replaced by another file`.
        why: String,
    },
    /// The operating system's random source failed.
    #[error("cannot generate a session token: the system random source failed: {why}")]
    Random {
        /// The error from the random source.
        why: String,
    },
}
