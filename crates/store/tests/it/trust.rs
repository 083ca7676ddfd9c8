//! What the store trusts: a data directory and database of the user's own,
//! writable by nobody else; a file that looks like a whole database; the file
//! it opened, still there. And SQLite's own checks, which see damage the
//! audit chain cannot.

// Test code: a failed unwrap, index or panic is a failed test.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

use crate::support;

use std::fs;
use std::io::{Seek, SeekFrom, Write};
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use portcullis_store::{
    AuditEvent, AuditKind, AuditVerdict, GrantScope, Integrity, Op, Store, StoreError,
};
use support::{file, grant, main_session, raw};

fn mode(p: &Path) -> u32 {
    fs::metadata(p).unwrap().permissions().mode() & 0o777
}

fn chmod(p: &Path, mode: u32) {
    fs::set_permissions(p, fs::Permissions::from_mode(mode)).unwrap();
}

fn is_root() -> bool {
    rustix::process::geteuid().is_root()
}

/// A store in `dir` holding one device grant, closed.
fn store_with_a_grant(dir: &Path) {
    let store = Store::open(dir).unwrap();
    store
        .add_grant(&grant(None, GrantScope::Device, Op::Read, file("/etc")))
        .unwrap();
}

#[test]
fn a_world_writable_data_dir_is_refused_naming_the_fix() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    store_with_a_grant(&data);
    chmod(&data, 0o777);
    let err = Store::open(&data).unwrap_err();
    assert!(matches!(err, StoreError::Untrusted { .. }), "{err:?}");
    let msg = err.to_string();
    assert!(
        msg.contains(&format!("chmod 700 {}", data.display())),
        "{msg}"
    );
    assert!(msg.contains("0777"), "{msg}");
    // Nothing was "fixed" behind the user's back.
    assert_eq!(mode(&data), 0o777);
    chmod(&data, 0o700);
    Store::open(&data).unwrap();
}

#[test]
fn a_group_writable_data_dir_is_refused_but_a_readable_one_is_fine() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    store_with_a_grant(&data);
    chmod(&data, 0o770);
    let err = Store::open(&data).unwrap_err().to_string();
    assert!(err.contains("writable by its group"), "{err}");
    chmod(&data, 0o755);
    Store::open(&data).unwrap();
}

#[test]
fn a_group_writable_database_file_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    store_with_a_grant(&data);
    let db = data.join("portcullis.db");
    chmod(&db, 0o666);
    let err = Store::open(&data).unwrap_err();
    assert!(matches!(err, StoreError::Untrusted { .. }), "{err:?}");
    assert!(
        err.to_string()
            .contains(&format!("chmod 600 {}", db.display())),
        "{err}"
    );
}

#[test]
fn a_planted_writable_wal_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    store_with_a_grant(&data);
    let wal = data.join("portcullis.db-wal");
    assert!(wal.exists());
    chmod(&wal, 0o646);
    let err = Store::open(&data).unwrap_err().to_string();
    assert!(
        err.contains("portcullis.db-wal") && err.contains("chmod 600"),
        "{err}"
    );
}

#[test]
fn wal_and_shm_files_are_made_0600() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    store_with_a_grant(&data);
    for suffix in ["-wal", "-shm"] {
        let p = data.join(format!("portcullis.db{suffix}"));
        assert_eq!(mode(&p), 0o600, "{}", p.display());
        // Readable by others (an older version, a umask): tightened on open.
        chmod(&p, 0o644);
    }
    let store = Store::open(&data).unwrap();
    store.register_session(&main_session("s")).unwrap();
    for suffix in ["-wal", "-shm"] {
        let p = data.join(format!("portcullis.db{suffix}"));
        assert_eq!(mode(&p), 0o600, "{}", p.display());
    }
}

/// Another user's directory or file: simulated with `chown 65534` (needs root).
#[test]
fn another_users_data_dir_or_database_is_refused() {
    if !is_root() {
        eprintln!("note: not root, so files cannot be given to another user: case skipped");
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    store_with_a_grant(&data);
    std::os::unix::fs::chown(&data, Some(65534), None).unwrap();
    let err = Store::open(&data).unwrap_err();
    assert!(matches!(err, StoreError::Untrusted { .. }), "{err:?}");
    let msg = err.to_string();
    assert!(
        msg.contains("owned by uid 65534, not you (uid 0)") && msg.contains("chown 0"),
        "{msg}"
    );
    std::os::unix::fs::chown(&data, Some(0), None).unwrap();
    let db = data.join("portcullis.db");
    std::os::unix::fs::chown(&db, Some(65534), None).unwrap();
    let msg = Store::open(&data).unwrap_err().to_string();
    assert!(
        msg.contains("owned by uid 65534") && msg.contains("portcullis.db"),
        "{msg}"
    );
}

#[test]
fn a_grant_planted_in_a_refused_directory_is_never_read() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    // Someone else's handiwork: a store with a grant, in a directory anyone may write.
    store_with_a_grant(&data);
    chmod(&data, 0o733);
    assert!(matches!(
        Store::open(&data),
        Err(StoreError::Untrusted { .. })
    ));
}

#[test]
fn a_file_that_is_not_sqlite_is_refused_at_open() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    fs::create_dir(&data).unwrap();
    chmod(&data, 0o700);
    let db = data.join("portcullis.db");
    fs::write(&db, vec![b'x'; 8192]).unwrap();
    chmod(&db, 0o600);
    let err = Store::open(&data).unwrap_err();
    assert!(matches!(err, StoreError::Corrupt { .. }), "{err:?}");
    assert!(err.to_string().contains("not a SQLite database"), "{err}");
}

/// A store with enough rows to span pages, all checkpointed into the file.
fn filled_store(data: &Path) -> std::path::PathBuf {
    let store = Store::open(data).unwrap();
    for i in 0..300 {
        store
            .register_session(&main_session(&format!("s{i}")))
            .unwrap();
        store
            .append_audit(
                &AuditEvent {
                    kind: AuditKind::Decision,
                    session: Some(format!("s{i}")),
                    tool: Some("Bash".into()),
                    verdict: Some(AuditVerdict::Allow),
                    detail: serde_json::json!({"reason": "x".repeat(200)}),
                },
                i,
            )
            .unwrap();
    }
    let db = store.path().to_owned();
    drop(store);
    raw(&db)
        .query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))
        .unwrap();
    db
}

#[test]
fn a_truncated_file_is_refused_at_open() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    let db = filled_store(&data);
    let _ = fs::remove_file(data.join("portcullis.db-wal"));
    let len = fs::metadata(&db).unwrap().len();
    fs::OpenOptions::new()
        .write(true)
        .open(&db)
        .unwrap()
        .set_len(len / 2)
        .unwrap();
    let err = Store::open(&data).unwrap_err().to_string();
    assert!(err.contains("truncated"), "{err}");
}

#[test]
fn quick_and_integrity_checks_pass_on_a_sound_store() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    filled_store(&data);
    let store = Store::open(&data).unwrap();
    assert_eq!(store.quick_check().unwrap(), Integrity::Ok);
    assert_eq!(store.integrity_check().unwrap(), Integrity::Ok);
}

#[test]
fn garbage_in_middle_pages_is_found_by_the_checks() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    let db = filled_store(&data);
    let page: i64 = raw(&db)
        .query_row("PRAGMA page_size", [], |r| r.get(0))
        .unwrap();
    let page = page as u64;
    let mut f = fs::OpenOptions::new().write(true).open(&db).unwrap();
    // Pages 2–5 (1-based): bytes [page, 5 * page).
    f.seek(SeekFrom::Start(page)).unwrap();
    let garbage: Vec<u8> = (0..4 * page).map(|i| (i * 7 + 13) as u8).collect();
    f.write_all(&garbage).unwrap();
    drop(f);
    // The header is intact, so the cheap check at open may pass; SQLite's
    // checks must not.
    match Store::open(&data) {
        Err(e) => eprintln!("open refused the damaged file: {e}"),
        Ok(store) => {
            let quick = store.quick_check().unwrap();
            assert!(!quick.is_ok(), "quick_check: {quick}");
            let full = store.integrity_check().unwrap();
            assert!(!full.is_ok(), "integrity_check: {full}");
            assert!(full.to_string().starts_with("damaged: "), "{full}");
        }
    }
}

#[test]
fn a_deleted_or_replaced_database_is_noticed() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    let store = Store::open(&data).unwrap();
    store.check_file().unwrap();
    let db = store.path().to_owned();

    // Replaced: another file renamed over the path.
    let other = tmp.path().join("other.db");
    fs::copy(&db, &other).unwrap();
    fs::rename(&other, &db).unwrap();
    let err = store.check_file().unwrap_err();
    assert!(matches!(err, StoreError::Replaced { .. }), "{err:?}");
    assert!(
        err.to_string().contains("replaced by another file"),
        "{err}"
    );

    // Deleted.
    let store = Store::open(&data).unwrap();
    fs::remove_file(&db).unwrap();
    let err = store.check_file().unwrap_err().to_string();
    assert!(err.contains("was deleted"), "{err}");
}
