//! What the store trusts before it reads a grant: the data directory and the
//! database files must be the user's own and writable by nobody else, the file
//! must look like a whole SQLite database, and it must still be the file this
//! connection opened.
//!
//! Every hook opens the store, so the checks made at every open are cheap:
//! a few `stat`s and the 100-byte header. The thorough ones (`PRAGMA
//! quick_check`, `PRAGMA integrity_check`) are separate methods for the
//! daemon's timer, `doctor` and `audit verify`.

use std::fs;
use std::io::{ErrorKind, Read};
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

use crate::{Result, Store, StoreError};

/// The WAL and shared-memory files SQLite keeps beside the database.
pub(crate) const SIDECARS: [&str; 2] = ["-wal", "-shm"];

/// The path of a sidecar file (`portcullis.db-wal` …).
pub(crate) fn sidecar(db: &Path, suffix: &str) -> PathBuf {
    let mut p = db.to_path_buf().into_os_string();
    p.push(suffix);
    PathBuf::from(p)
}

/// The effective user id of this process.
fn euid() -> u32 {
    rustix::process::geteuid().as_raw()
}

/// Refuses `meta` (of `path`) when another user owns it or group or others
/// may write it. `chmod` is the mode the fix should set.
pub(crate) fn check_owner_and_mode(
    path: &Path,
    meta: &fs::Metadata,
    what: &'static str,
    chmod: &str,
) -> Result<()> {
    let me = euid();
    let untrusted = |why: String| StoreError::Untrusted {
        path: path.to_path_buf(),
        what,
        why,
    };
    if meta.uid() != me {
        return Err(untrusted(format!(
            "it is owned by uid {}, not you (uid {me}): another user could have planted grants in it; \
             use a data directory of your own (--data-dir or PORTCULLIS_DATA_DIR), or if it is yours, \
             `chown {me} {}`",
            meta.uid(),
            path.display()
        )));
    }
    let mode = meta.permissions().mode() & 0o7777;
    if mode & 0o022 != 0 {
        return Err(untrusted(format!(
            "it is writable by {} (mode {mode:04o}): anyone could have planted grants in it; \
             check it, then `chmod {chmod} {}`",
            match mode & 0o022 {
                0o020 => "its group",
                0o002 => "others",
                _ => "group and others",
            },
            path.display()
        )));
    }
    Ok(())
}

/// The data directory must be ours and writable by nobody else.
pub(crate) fn check_data_dir(dir: &Path, meta: &fs::Metadata) -> Result<()> {
    check_owner_and_mode(dir, meta, "the data directory", "700")
}

/// An existing database file, WAL or shared-memory file must be ours and
/// writable by nobody else (a planted WAL is read as part of the database).
pub(crate) fn check_db_files(db: &Path) -> Result<()> {
    let io = |what| {
        move |source| StoreError::Io {
            path: db.to_path_buf(),
            what,
            source,
        }
    };
    let meta = fs::symlink_metadata(db).map_err(io("inspect the database file"))?;
    if !meta.is_file() {
        return Err(StoreError::Untrusted {
            path: db.to_path_buf(),
            what: "the database file",
            why: "it is not a regular file (a symbolic link?): move it away".into(),
        });
    }
    check_owner_and_mode(db, &meta, "the database file", "600")?;
    for suffix in SIDECARS {
        let p = sidecar(db, suffix);
        match fs::symlink_metadata(&p) {
            Ok(m) if !m.is_file() => {
                return Err(StoreError::Untrusted {
                    path: p,
                    what: "the database's WAL or shared-memory file",
                    why: "it is not a regular file (a symbolic link?): move it away".into(),
                });
            }
            Ok(m) => {
                check_owner_and_mode(&p, &m, "the database's WAL or shared-memory file", "600")?
            }
            Err(e) if e.kind() == ErrorKind::NotFound => {}
            Err(e) => {
                return Err(StoreError::Io {
                    path: p,
                    what: "inspect the database's WAL or shared-memory file",
                    source: e,
                });
            }
        }
    }
    Ok(())
}

/// Tightens the WAL and shared-memory files to 0600 (SQLite gives them the
/// database's mode, but a umask or an older portcullis may not have).
pub(crate) fn tighten_sidecars(db: &Path) -> Result<()> {
    for suffix in SIDECARS {
        let p = sidecar(db, suffix);
        let Ok(m) = fs::symlink_metadata(&p) else {
            continue;
        };
        if m.is_file() && m.permissions().mode() & 0o077 != 0 {
            fs::set_permissions(&p, fs::Permissions::from_mode(0o600)).map_err(|source| {
                StoreError::Io {
                    path: p.clone(),
                    what: "restrict the database's WAL or shared-memory file to mode 0600",
                    source,
                }
            })?;
        }
    }
    Ok(())
}

/// The cheap check of every open: the 100-byte header says SQLite, a sane
/// page size, and a database no longer than the file (unless a WAL holds the
/// rest). An empty file is a database not yet written.
pub(crate) fn check_header(db: &Path) -> Result<()> {
    let corrupt = |why: String| StoreError::Corrupt {
        path: db.to_path_buf(),
        what: "file header".into(),
        why: format!("{why}; move the file away (or restore it from a backup) and try again"),
    };
    let io = |source| StoreError::Io {
        path: db.to_path_buf(),
        what: "read the database header",
        source,
    };
    let mut f = fs::File::open(db).map_err(io)?;
    let len = f.metadata().map_err(io)?.len();
    if len == 0 {
        return Ok(());
    }
    let mut header = [0u8; 100];
    if len < 100 {
        return Err(corrupt(format!(
            "the file is {len} bytes, shorter than a SQLite header"
        )));
    }
    f.read_exact(&mut header).map_err(io)?;
    if &header[..16] != b"SQLite format 3\0" {
        return Err(corrupt("not a SQLite database (wrong magic)".into()));
    }
    let page_size = match u16::from_be_bytes([header[16], header[17]]) {
        1 => 65536u64,
        n if n >= 512 && n.is_power_of_two() => u64::from(n),
        n => return Err(corrupt(format!("page size {n} is not valid"))),
    };
    if !len.is_multiple_of(page_size) {
        return Err(corrupt(format!(
            "the file is {len} bytes, not a whole number of {page_size}-byte pages (truncated?)"
        )));
    }
    let be32 = |at: usize| {
        header
            .get(at..)
            .and_then(<[u8]>::first_chunk::<4>)
            .map(|b| u32::from_be_bytes(*b))
            .ok_or_else(|| corrupt(format!("no 4 bytes at offset {at} of the header")))
    };
    // The page count is valid only when it was written with the change counter.
    let pages = u64::from(be32(28)?);
    if pages != 0 && be32(24)? == be32(92)? && pages * page_size > len {
        let wal_holds_rest = fs::metadata(sidecar(db, "-wal")).is_ok_and(|m| m.len() > 0);
        if !wal_holds_rest {
            return Err(corrupt(format!(
                "the header counts {pages} pages, but the file holds {} (truncated?)",
                len / page_size
            )));
        }
    }
    Ok(())
}

/// A file's identity: device and inode.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FileId {
    pub dev: u64,
    pub ino: u64,
}

impl FileId {
    /// The identity of what `path` names now.
    pub fn of(path: &Path) -> std::io::Result<FileId> {
        let m = fs::metadata(path)?;
        Ok(FileId {
            dev: m.dev(),
            ino: m.ino(),
        })
    }

    /// `Ok` while `path` still names this file; else why not (deleted,
    /// replaced), as [`StoreError::Replaced`].
    pub fn check(&self, path: &Path) -> Result<()> {
        let why = match FileId::of(path) {
            Ok(now) if now == *self => return Ok(()),
            Ok(_) => "replaced by another file".to_string(),
            Err(e) if e.kind() == ErrorKind::NotFound => "deleted".to_string(),
            Err(e) => format!("made unreadable ({e})"),
        };
        Err(StoreError::Replaced {
            path: path.to_path_buf(),
            why,
        })
    }
}

/// The answer of SQLite's consistency checks.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(tag = "status", rename_all = "kebab-case")]
pub enum Integrity {
    /// SQLite found nothing wrong.
    Ok,
    /// What SQLite reported (at most 100 lines).
    Damaged { problems: Vec<String> },
}

impl Integrity {
    pub fn is_ok(&self) -> bool {
        matches!(self, Integrity::Ok)
    }
}

impl std::fmt::Display for Integrity {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Integrity::Ok => f.write_str("ok"),
            Integrity::Damaged { problems } => {
                let shown: Vec<&str> = problems.iter().take(5).map(String::as_str).collect();
                write!(f, "damaged: {}", shown.join("; "))?;
                if problems.len() > shown.len() {
                    write!(f, " (and {} more)", problems.len() - shown.len())?;
                }
                Ok(())
            }
        }
    }
}

impl Store {
    /// `PRAGMA quick_check`: every page readable and well formed, without
    /// matching indexes to their tables (tens of milliseconds on a big store).
    pub fn quick_check(&self) -> Result<Integrity> {
        self.pragma_check("quick_check", "run PRAGMA quick_check")
    }

    /// `PRAGMA integrity_check`: [`Store::quick_check`] plus every index
    /// against its table. Slower; for `audit verify`.
    pub fn integrity_check(&self) -> Result<Integrity> {
        self.pragma_check("integrity_check", "run PRAGMA integrity_check")
    }

    fn pragma_check(&self, pragma: &str, what: &'static str) -> Result<Integrity> {
        // PostgreSQL keeps its own pages: a connection that answers is whole.
        let Some(conn) = self.db.sqlite() else {
            return self
                .value::<i64>(what, "SELECT 1", &[])
                .map(|_| Integrity::Ok);
        };
        let run = || -> rusqlite::Result<Vec<String>> {
            let mut stmt = conn.prepare(&format!("PRAGMA {pragma}(100)"))?;
            stmt.query_map([], |r| r.get::<_, String>(0))?
                .collect::<rusqlite::Result<Vec<_>>>()
        };
        match run() {
            Ok(rows) if rows == ["ok"] => Ok(Integrity::Ok),
            Ok(rows) if rows.is_empty() => Ok(Integrity::Damaged {
                problems: vec![format!("PRAGMA {pragma} answered nothing")],
            }),
            Ok(problems) => Ok(Integrity::Damaged { problems }),
            // A file too damaged to check at all is damaged, not an error.
            Err(e)
                if matches!(
                    e.sqlite_error_code(),
                    Some(rusqlite::ErrorCode::DatabaseCorrupt | rusqlite::ErrorCode::NotADatabase)
                ) =>
            {
                Ok(Integrity::Damaged {
                    problems: vec![e.to_string()],
                })
            }
            Err(source) => Err(StoreError::Database {
                path: self.path.clone(),
                what,
                source: source.into(),
            }),
        }
    }

    /// The identity of the database file this connection opened.
    /// `None` on PostgreSQL.
    pub fn file_id(&self) -> Option<FileId> {
        self.file_id
    }

    /// `Ok` while the database path still names the file this connection
    /// opened; [`StoreError::Replaced`] once it was deleted or replaced (this
    /// connection would write to a file nobody else reads).
    pub fn check_file(&self) -> Result<()> {
        match &self.file_id {
            Some(id) => id.check(&self.path),
            None => Ok(()),
        }
    }
}
