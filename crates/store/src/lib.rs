//! portcullis' state: sessions and their principals, grants, permission
//! requests and the tamper-evident audit log, in one SQLite database.
//!
//! The store is the **one owner of permission state** (DESIGN §4–§5): every
//! front door reaches it through `portcullis-engine`, so a grant recorded here
//! is the grant every route sees. It keeps:
//!
//! - **sessions** with their principal (agent kind, parent, workflow), an
//!   optional per-session token stored only as its BLAKE3 hash, expiry and
//!   revocation. A child never outlives its parent and never joins another
//!   workflow; revoking a session revokes its descendants.
//! - **grants**: `once` (consumed atomically by exactly one caller, across
//!   threads and processes), `session` (dies with the session), `device`
//!   (durable, no session, **read only** — enforced here and by the schema).
//! - **permission requests**: identical pending requests collapse into one
//!   (`count`, `last_seen`); resolving one makes the grant.
//! - **the audit log**: append-only, each row chained to the previous one
//!   with BLAKE3 (see [`Store::verify_audit`] for what the chain can and
//!   cannot show).
//!
//! The database is `portcullis.db` in the data directory ([`default_data_dir`]),
//! created on first use with mode 0600 in a 0700 directory, in WAL mode with
//! `synchronous=NORMAL` and a 10 s busy timeout: hooks are separate processes
//! and may all write at once. Every read-then-write runs in `BEGIN IMMEDIATE`.
//! Timestamps are unix seconds passed in by the caller (`now`), except where a
//! method without `now` says it reads the clock.
//!
//! What it is not: it makes **no policy decisions** (whether a grant covers a
//! path, or a call needs one, is the engine's question; the store only answers
//! which grants are live), it does no path resolution, and it never touches
//! the network. A [`Store`] is one connection: use one per thread (opening is
//! cheap) or put it behind a mutex.

mod audit;
mod db;
mod device_credential;
mod devices;
mod error;
mod grants;
mod links;
mod pins;
mod requests;
pub mod schema;
mod sessions;
mod trust;
mod types;
mod user_tokens;

use std::fs::{self, DirBuilder, OpenOptions};
use std::io::ErrorKind;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use rusqlite::{Connection, OpenFlags};

pub use db::{DbError, Dialect};

pub use audit::{AuditFilter, GENESIS_HASH, MAX_AUDIT_PAGE, MAX_DETAIL_BYTES};
pub use device_credential::{
    DEVICE_FILE, DeviceCredential, load_device_credential, save_device_credential,
};
pub use devices::{DEVICE_TOKEN_PREFIX, Device, MAX_DEVICE_NAME};
pub use error::{Result, StoreError};
pub use links::{CALL_LINK_TTL_SECS, CallLink, LinkedSession, ProcessId};
pub use requests::{ONCE_GRANT_TTL_SECS, REQUEST_IDLE_SECS};
pub use sessions::MAX_SESSION_ID;
pub use trust::{FileId, Integrity};
pub use types::{
    AgentKind, AuditCheck, AuditEvent, AuditKind, AuditRow, AuditVerdict, CallEffect, Denial,
    Grant, GrantScope, GrantTarget, NewGrant, NewRequest, NewSession, Op, ParseError, Pin,
    PinCheck, PinStatus, Registered, Request, RequestStatus, Resolution, Session,
};
pub use user_tokens::{
    USER_TOKENS_FILE, issue_user_token, revoke_user_token, token_hash, user_token_hashes,
};

/// The database file's name inside the data directory.
pub const DB_FILE: &str = "portcullis.db";

/// Past this size the WAL is checkpointed and truncated when the store opens.
///
/// Each hook is a new process and the database's only connection, so SQLite
/// rebuilds the WAL index from the WAL on every open and forgets which frames
/// earlier checkpoints already copied: the WAL is never restarted and grows
/// by every call (≈9 KB), and each open reads all of it. Truncating it here
/// bounds both.
pub const WAL_TRUNCATE_BYTES: u64 = 256 * 1024;

/// How long a writer waits for another one before giving up.
pub const BUSY_TIMEOUT: Duration = Duration::from_secs(10);

/// The data directory: `$PORTCULLIS_DATA_DIR`, else `$XDG_DATA_HOME/portcullis`
/// (when absolute, as the XDG spec requires), else
/// `$HOME/.local/share/portcullis` (the home directory from the password
/// database when `HOME` is unset). These are the crate's only environment reads.
pub fn default_data_dir() -> PathBuf {
    let var = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty());
    if let Some(dir) = var("PORTCULLIS_DATA_DIR") {
        return PathBuf::from(dir);
    }
    if let Some(xdg) = var("XDG_DATA_HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
    {
        return xdg.join("portcullis");
    }
    let home = var("HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::home_dir().filter(|h| !h.as_os_str().is_empty()))
        // No home at all: a path that cannot be created by an ordinary user,
        // so `open` fails and says where it looked.
        .unwrap_or_else(|| PathBuf::from("/nonexistent"));
    home.join(".local/share/portcullis")
}

/// The current time in unix seconds (for the methods that do not take `now`).
pub fn unix_now() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
}

/// Where the store is: `portcullis.db` in a data directory (the default), or
/// a PostgreSQL database shared by a team's servers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Location {
    /// SQLite in this data directory.
    Dir(PathBuf),
    /// A PostgreSQL connection string (`postgres://USER@HOST[:PORT]/DB`).
    Postgres(String),
}

impl Location {
    /// The store a `--store` value names (`sqlite`, the default, or a
    /// `postgres://` / `postgresql://` address), with `data_dir` for SQLite.
    pub fn parse(store: Option<&str>, data_dir: &Path) -> std::result::Result<Location, String> {
        match store.map(str::trim) {
            None | Some("" | "sqlite") => Ok(Location::Dir(data_dir.to_owned())),
            Some(url) if url.starts_with("postgres://") || url.starts_with("postgresql://") => {
                Ok(Location::Postgres(url.to_owned()))
            }
            Some(other) => Err(format!(
                "`{other}` is not a store: say `sqlite` (the default: portcullis.db in the data \
                 directory) or a PostgreSQL address, postgres://USER@HOST[:PORT]/DB"
            )),
        }
    }

    /// Opens (SQLite) or connects to (PostgreSQL) the store, bringing its
    /// schema up to date.
    pub fn open(&self) -> Result<Store> {
        match self {
            Location::Dir(dir) => Store::open(dir),
            #[cfg(feature = "postgres")]
            Location::Postgres(url) => Store::connect(url),
            #[cfg(not(feature = "postgres"))]
            Location::Postgres(url) => Err(StoreError::Corrupt {
                path: PathBuf::from(redact_url(url)),
                what: "store".into(),
                why: "this portcullis was built without PostgreSQL (the `postgres` feature)".into(),
            }),
        }
    }
}

impl std::fmt::Display for Location {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Location::Dir(dir) => write!(f, "{}", dir.join(DB_FILE).display()),
            Location::Postgres(url) => f.write_str(&redact_url(url)),
        }
    }
}

/// A connection to the portcullis database: SQLite by default
/// ([`Store::open`]), or a team server's PostgreSQL ([`Store::connect`],
/// with the `postgres` feature). Both run the same operations: every method
/// is written once against [`db::Conn`].
pub struct Store {
    db: Box<dyn db::Conn>,
    /// The database file, or a PostgreSQL database's address (without its
    /// password): what messages name.
    path: PathBuf,
    /// The database file this connection opened (see [`Store::check_file`]);
    /// `None` on PostgreSQL.
    file_id: Option<FileId>,
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store")
            .field("path", &self.path)
            .field("dialect", &self.db.dialect())
            .finish()
    }
}

impl Store {
    /// Open the store in `data_dir`, creating the directory (0700) and
    /// `portcullis.db` (0600) on first use, and bringing the schema up to date.
    ///
    /// Refuses ([`StoreError::Untrusted`]) a directory or database file
    /// (or its WAL or shared-memory file) that another user owns or that group
    /// or others may write: its grants could be anyone's. Refuses
    /// ([`StoreError::Corrupt`]) a file whose header is not a whole SQLite
    /// database. Both checks are cheap (every hook opens the store); SQLite's
    /// own checks are [`Store::quick_check`] and [`Store::integrity_check`].
    pub fn open(data_dir: &Path) -> Result<Store> {
        create_data_dir(data_dir)?;
        let path = data_dir.join(DB_FILE);
        create_db_file(&path)?;
        trust::check_db_files(&path)?;
        make_db_private(&path)?;
        trust::check_header(&path)?;
        let sqlite = |what| {
            let path = path.clone();
            move |source: rusqlite::Error| StoreError::Database {
                path,
                what,
                source: source.into(),
            }
        };
        let conn = Connection::open_with_flags(
            &path,
            OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )
        .map_err(sqlite("open the database"))?;
        conn.busy_timeout(BUSY_TIMEOUT)
            .map_err(sqlite("set the busy timeout"))?;
        ensure_wal(&conn, &path)?;
        // A small WAL: each process that opens the store rebuilds its index by
        // reading the WAL, so checkpoint early (every 200 pages) to keep opens cheap.
        conn.execute_batch("PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON; PRAGMA wal_autocheckpoint = 200;")
            .map_err(sqlite("set synchronous=NORMAL and foreign_keys=ON"))?;
        // Hooks open the store once per tool call: closing must not checkpoint
        // the WAL (an fsync and a file rewrite each time). SQLite checkpoints
        // when the WAL grows past its threshold instead; durability is the
        // same (the WAL is the database until then).
        conn.set_db_config(
            rusqlite::config::DbConfig::SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE,
            true,
        )
        .map_err(sqlite("keep the WAL on close"))?;
        conn.set_prepared_statement_cache_capacity(64);
        let file_id = FileId::of(&path).map_err(|source| StoreError::Io {
            path: path.clone(),
            what: "inspect the database file",
            source,
        })?;
        let store = Store {
            db: Box::new(db::sqlite::Sqlite { conn }),
            path,
            file_id: Some(file_id),
        };
        store.migrate()?;
        store.truncate_large_wal()?;
        trust::tighten_sidecars(&store.path)?;
        Ok(store)
    }

    /// Connect to a PostgreSQL store (`postgres://USER@HOST[:PORT]/DB`) and
    /// bring its schema up to date; refuses a database whose schema is newer
    /// than this build ([`StoreError::SchemaTooNew`]).
    #[cfg(feature = "postgres")]
    pub fn connect(url: &str) -> Result<Store> {
        let path = PathBuf::from(redact_url(url));
        let conn = db::postgres::Postgres::connect(url).map_err(|source| StoreError::Database {
            path: path.clone(),
            what: "connect",
            source,
        })?;
        let store = Store {
            db: Box::new(conn),
            path,
            file_id: None,
        };
        store.migrate()?;
        Ok(store)
    }

    /// Which database this store is.
    pub fn dialect(&self) -> Dialect {
        self.db.dialect()
    }

    /// Checkpoint and truncate the WAL when it is over [`WAL_TRUNCATE_BYTES`].
    /// A busy checkpoint (another process reading an older snapshot) is left
    /// for a later open; nothing is lost either way.
    fn truncate_large_wal(&self) -> Result<()> {
        let mut wal = self.path.clone().into_os_string();
        wal.push("-wal");
        let size = std::fs::metadata(&wal).map(|m| m.len()).unwrap_or(0);
        if size > WAL_TRUNCATE_BYTES {
            self.rows(
                "checkpoint the WAL",
                "PRAGMA wal_checkpoint(TRUNCATE)",
                &[],
                |_| Ok(()),
            )?;
        }
        Ok(())
    }

    /// How long an operation waits for another connection's write lock
    /// (default [`BUSY_TIMEOUT`]). SQLite only: PostgreSQL waits for its
    /// locks as long as the server lets it.
    pub fn set_busy_timeout(&self, t: Duration) -> Result<()> {
        match self.db.sqlite() {
            Some(conn) => conn
                .busy_timeout(t)
                .map_err(|e| self.sql("set the busy timeout")(e.into())),
            None => Ok(()),
        }
    }

    /// A number that changes whenever another connection (another process,
    /// or another `Store`) commits: cheap polling for "anything new?".
    pub fn data_version(&self) -> Result<i64> {
        let sql = match self.dialect() {
            Dialect::Sqlite => "PRAGMA data_version",
            Dialect::Postgres => "SELECT n FROM changes",
        };
        self.value("read the data version", sql, &[])
    }

    /// Waits up to `timeout` for another connection to commit a change:
    /// at once on PostgreSQL (`LISTEN`/`NOTIFY`), the whole time on SQLite,
    /// which cannot tell (poll [`Store::data_version`] after either).
    pub fn wait_for_change(&self, timeout: Duration) -> Result<()> {
        self.db
            .wait_for_change(timeout)
            .map_err(self.sql("wait for a change"))
    }

    /// The database file (on PostgreSQL, its address without a password).
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The schema version of the open database (SQLite's `PRAGMA
    /// user_version`, PostgreSQL's `portcullis_schema` table).
    pub fn schema_version(&self) -> Result<i64> {
        let sql = match self.dialect() {
            Dialect::Sqlite => "PRAGMA user_version",
            Dialect::Postgres => "SELECT version FROM portcullis_schema",
        };
        self.value("read the schema version", sql, &[])
    }

    fn migrate(&self) -> Result<()> {
        let supported = schema::current_version();
        let check = |found: i64| -> Result<bool> {
            if found > supported {
                return Err(StoreError::SchemaTooNew {
                    path: self.path.clone(),
                    found,
                    supported,
                });
            }
            if found < 0 {
                return Err(StoreError::Corrupt {
                    path: self.path.clone(),
                    what: "schema version".into(),
                    why: format!("negative user_version {found}"),
                });
            }
            Ok(found == supported)
        };
        let dialect = self.dialect();
        // SQLite: a hook opens the store per call; the version is one read.
        // PostgreSQL: the version table may not exist yet, so look under the lock.
        if dialect == Dialect::Sqlite && check(self.schema_version()?)? {
            return Ok(());
        }
        // Re-read under the write lock: another process may have migrated meanwhile.
        let tx = self.immediate("lock the database to migrate it")?;
        if dialect == Dialect::Postgres {
            self.db
                .execute_batch(schema::POSTGRES_VERSION_TABLE)
                .map_err(self.sql("create the schema version table"))?;
        }
        let found = self.schema_version()?;
        if check(found)? {
            return tx.commit().map_err(self.sql("commit the schema check"));
        }
        // `check` refused a negative or too new version: `found` indexes the list.
        let pending = usize::try_from(found)
            .ok()
            .and_then(|f| schema::MIGRATIONS.get(f..))
            .ok_or_else(|| StoreError::Corrupt {
                path: self.path.clone(),
                what: "schema version".into(),
                why: format!("no migrations from version {found}"),
            })?;
        for m in pending {
            let sql = match dialect {
                Dialect::Sqlite => m.sql,
                Dialect::Postgres => m.postgres,
            };
            self.db
                .execute_batch(sql)
                .map_err(self.sql("apply a schema migration"))?;
        }
        let record = match dialect {
            Dialect::Sqlite => format!("PRAGMA user_version = {supported}"),
            Dialect::Postgres => format!("UPDATE portcullis_schema SET version = {supported}"),
        };
        self.db
            .execute_batch(&record)
            .map_err(self.sql("record the schema version"))?;
        tx.commit().map_err(self.sql("commit the schema migration"))
    }

    /// Maps a database error to [`StoreError::Database`] naming this database and `what`.
    fn sql(&self, what: &'static str) -> impl FnOnce(DbError) -> StoreError + '_ {
        move |source| StoreError::Database {
            path: self.path.clone(),
            what,
            source,
        }
    }

    /// The rows of a query, each read by `f`.
    fn rows<T>(
        &self,
        what: &'static str,
        sql: &str,
        params: db::Params<'_>,
        f: impl Fn(&db::Row) -> rusqlite::Result<T>,
    ) -> Result<Vec<T>> {
        let rows = self.db.query(sql, params).map_err(self.sql(what))?;
        rows.iter()
            .map(|r| f(r).map_err(|e| self.sql(what)(e.into())))
            .collect()
    }

    /// The first row of a query, read by `f`, if there is one.
    fn row<T>(
        &self,
        what: &'static str,
        sql: &str,
        params: db::Params<'_>,
        f: impl Fn(&db::Row) -> rusqlite::Result<T>,
    ) -> Result<Option<T>> {
        let rows = self.db.query(sql, params).map_err(self.sql(what))?;
        rows.first()
            .map(|r| f(r).map_err(|e| self.sql(what)(e.into())))
            .transpose()
    }

    /// The one row a statement returns (an `INSERT … RETURNING`), read by `f`.
    fn returned<T>(
        &self,
        what: &'static str,
        sql: &str,
        params: db::Params<'_>,
        f: impl Fn(&db::Row) -> rusqlite::Result<T>,
    ) -> Result<T> {
        self.row(what, sql, params, f)?
            .ok_or_else(|| self.sql(what)(rusqlite::Error::QueryReturnedNoRows.into()))
    }

    /// The first column of a query's one row.
    fn value<T: rusqlite::types::FromSql>(
        &self,
        what: &'static str,
        sql: &str,
        params: db::Params<'_>,
    ) -> Result<T> {
        self.returned(what, sql, params, |r| r.get(0))
    }

    /// Runs a statement; the number of rows it changed.
    fn exec(&self, what: &'static str, sql: &str, params: db::Params<'_>) -> Result<usize> {
        self.db.execute(sql, params).map_err(self.sql(what))
    }

    /// A write transaction holding the store's one write lock (SQLite's
    /// `BEGIN IMMEDIATE`, PostgreSQL's advisory lock), waiting for it up to
    /// the busy timeout, so a read-then-write cannot be overtaken by another
    /// writer. Rolls back when dropped without `commit`.
    ///
    /// Inside a [`Store::batch`] the write lock is already held: a savepoint
    /// stands in for the transaction, so each operation still commits or
    /// rolls back as a whole.
    fn immediate(&self, what: &'static str) -> Result<Tx<'_>> {
        let own = !self.db.in_transaction();
        if own {
            self.db.begin_write().map_err(self.sql(what))?;
        } else {
            self.db
                .control("SAVEPOINT portcullis_op")
                .map_err(self.sql(what))?;
        }
        Ok(Tx {
            own,
            db: &*self.db,
            done: false,
        })
    }

    /// A read transaction: one consistent snapshot for what it reads.
    fn snapshot(&self, what: &'static str) -> Result<Tx<'_>> {
        self.db.begin_read().map_err(self.sql(what))?;
        Ok(Tx {
            own: true,
            db: &*self.db,
            done: false,
        })
    }

    /// Runs `f` under one write transaction: every operation inside commits
    /// together (group commit), which is how a server makes many decisions
    /// per commit. An operation that fails inside rolls back alone (its
    /// savepoint); the rest commit. Other connections wait meanwhile, so keep
    /// batches short.
    pub fn batch<R>(&self, f: impl FnOnce(&Store) -> R) -> Result<R> {
        let tx = self.immediate("lock the database for a batch")?;
        let r = f(self);
        tx.commit().map_err(self.sql("commit a batch"))?;
        Ok(r)
    }

    fn corrupt(&self, what: impl Into<String>, why: impl Into<String>) -> StoreError {
        StoreError::Corrupt {
            path: self.path.clone(),
            what: what.into(),
            why: why.into(),
        }
    }
}

/// A PostgreSQL address without its password, for messages.
fn redact_url(url: &str) -> String {
    // postgres://user:password@host/db → postgres://user@host/db
    let Some((scheme, rest)) = url.split_once("://") else {
        return "(a PostgreSQL connection string)".into();
    };
    match rest.split_once('@') {
        Some((user, host)) => {
            let user = user.split_once(':').map_or(user, |(u, _)| u);
            format!("{scheme}://{user}@{host}")
        }
        None => url.to_owned(),
    }
}

/// A write transaction of one operation: its own, or a savepoint inside a
/// [`Store::batch`]. Rolls back when dropped without `commit`.
pub(crate) struct Tx<'a> {
    /// An own transaction (else a savepoint).
    own: bool,
    db: &'a dyn db::Conn,
    done: bool,
}

impl Tx<'_> {
    pub(crate) fn commit(mut self) -> std::result::Result<(), DbError> {
        self.done = true;
        if self.own {
            self.db.commit()
        } else {
            self.db.control("RELEASE portcullis_op")
        }
    }
}

impl Drop for Tx<'_> {
    fn drop(&mut self) {
        if self.done {
            return;
        }
        let _ = if self.own {
            self.db.rollback()
        } else {
            self.db
                .execute_batch("ROLLBACK TO portcullis_op; RELEASE portcullis_op")
        };
    }
}

/// Creates the data directory (0700) if it does not exist, and refuses one
/// that another user owns or others may write. [`Store::open`] does this for
/// SQLite; a server on PostgreSQL still keeps its tokens and hook socket here.
pub fn prepare_data_dir(dir: &Path) -> Result<()> {
    create_data_dir(dir)
}

fn create_data_dir(dir: &Path) -> Result<()> {
    let io = |what| {
        move |source| StoreError::Io {
            path: dir.to_path_buf(),
            what,
            source,
        }
    };
    match fs::metadata(dir) {
        Ok(m) if m.is_dir() => return trust::check_data_dir(dir, &m),
        Ok(_) => {
            return Err(io("use as the data directory")(std::io::Error::new(
                ErrorKind::AlreadyExists,
                "it exists and is not a directory",
            )));
        }
        Err(e) if e.kind() == ErrorKind::NotFound => {}
        Err(e) => return Err(io("inspect the data directory")(e)),
    }
    DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .map_err(io("create the data directory"))?;
    // The umask may have removed bits; it can never have added any, but say it exactly.
    fs::set_permissions(dir, fs::Permissions::from_mode(0o700))
        .map_err(io("set mode 0700 on the data directory"))
}

fn create_db_file(path: &Path) -> Result<()> {
    let io = |what| {
        move |source| StoreError::Io {
            path: path.to_path_buf(),
            what,
            source,
        }
    };
    match OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)
    {
        Ok(file) => {
            drop(file);
            fs::set_permissions(path, fs::Permissions::from_mode(0o600))
                .map_err(io("set mode 0600 on the database file"))
        }
        Err(e) if e.kind() == ErrorKind::AlreadyExists => {
            let meta = fs::metadata(path).map_err(io("inspect the database file"))?;
            if !meta.is_file() {
                return Err(io("use as the database file")(std::io::Error::new(
                    ErrorKind::AlreadyExists,
                    "it exists and is not a regular file",
                )));
            }
            Ok(())
        }
        Err(e) => Err(io("create the database file")(e)),
    }
}

/// A database others can read would leak the grants and the audit log: one
/// that is ours and writable by nobody else ([`trust::check_db_files`]) but
/// readable is made 0600.
fn make_db_private(path: &Path) -> Result<()> {
    let meta = fs::metadata(path).map_err(|source| StoreError::Io {
        path: path.to_path_buf(),
        what: "inspect the database file",
        source,
    })?;
    if meta.permissions().mode() & 0o077 != 0 {
        fs::set_permissions(path, fs::Permissions::from_mode(0o600)).map_err(|source| {
            StoreError::Io {
                path: path.to_path_buf(),
                what: "restrict the database file to mode 0600",
                source,
            }
        })?;
    }
    Ok(())
}

/// Puts a fresh database in WAL mode (WAL is persistent: later opens find it).
///
/// Several hook processes may open a brand-new store at once. SQLite answers
/// a journal-mode switch that races another connection with `SQLITE_BUSY`
/// straight away, without consulting the busy handler (waiting could
/// deadlock), so the race is retried here until [`BUSY_TIMEOUT`].
fn ensure_wal(conn: &Connection, path: &Path) -> Result<()> {
    // Reading the mode is cheap; the switch takes a write lock.
    if let Ok(mode) = conn.query_row("PRAGMA journal_mode", [], |r| r.get::<_, String>(0))
        && mode.eq_ignore_ascii_case("wal")
    {
        return Ok(());
    }
    let deadline = std::time::Instant::now() + BUSY_TIMEOUT;
    let mut pause = Duration::from_millis(1);
    loop {
        let attempt = conn.query_row("PRAGMA journal_mode = WAL", [], |r| r.get::<_, String>(0));
        match attempt {
            Ok(mode) if mode.eq_ignore_ascii_case("wal") => return Ok(()),
            Ok(mode) => {
                return Err(StoreError::Corrupt {
                    path: path.to_owned(),
                    what: "journal mode".into(),
                    why: format!("SQLite kept journal mode `{mode}` instead of `wal`"),
                });
            }
            Err(e)
                if e.sqlite_error_code() == Some(rusqlite::ErrorCode::DatabaseBusy)
                    && std::time::Instant::now() < deadline =>
            {
                std::thread::sleep(pause);
                pause = (pause * 2).min(Duration::from_millis(50));
            }
            Err(source) => {
                return Err(StoreError::Database {
                    path: path.to_owned(),
                    what: "switch to WAL mode",
                    source: source.into(),
                });
            }
        }
    }
}
