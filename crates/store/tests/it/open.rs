//! Opening the store: creation, file modes, migrations, reopening, refusals.

// Test code: a failed unwrap, index or panic is a failed test.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

use crate::support;

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::process::Command;

use portcullis_store::{
    AuditCheck, AuditEvent, AuditKind, AuditVerdict, GrantScope, NewRequest, Op, Resolution, Store,
    StoreError, schema,
};
use support::{file, grant, main_session, raw};

fn mode(p: &std::path::Path) -> u32 {
    fs::metadata(p).unwrap().permissions().mode() & 0o777
}

#[test]
fn fresh_dir_is_created_private_and_migrated() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("nested/portcullis");
    let store = Store::open(&data).unwrap();
    assert_eq!(store.path(), data.join("portcullis.db"));
    assert_eq!(mode(&data), 0o700, "data directory");
    assert_eq!(mode(store.path()), 0o600, "database file");
    assert_eq!(store.schema_version().unwrap(), schema::current_version());

    // Write something so the WAL and shared-memory files exist: same mode as the database.
    store.register_session(&main_session("s")).unwrap();
    for suffix in ["-wal", "-shm"] {
        let p = data.join(format!("portcullis.db{suffix}"));
        assert!(p.exists(), "{}", p.display());
        assert_eq!(mode(&p), 0o600, "{}", p.display());
    }

    let conn = raw(store.path());
    let journal: String = conn
        .query_row("PRAGMA journal_mode", [], |r| r.get(0))
        .unwrap();
    assert_eq!(journal, "wal");
    let version: i64 = conn
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .unwrap();
    assert_eq!(version, schema::MIGRATIONS.len() as i64);
    let names: Vec<String> = conn
        .prepare("SELECT name FROM sqlite_schema WHERE type IN ('table', 'view') ORDER BY name")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    for table in ["audit", "grants", "principals", "requests", "sessions"] {
        assert!(
            names.iter().any(|n| n == table),
            "{table} missing from {names:?}"
        );
    }
}

#[test]
fn reopening_keeps_everything_and_does_not_migrate_again() {
    let (dir, store) = support::store();
    let reg = store.register_session_at(&main_session("s"), 100).unwrap();
    let g = store
        .add_grant_at(
            &grant(Some("s"), GrantScope::Session, Op::Read, file("/a")),
            100,
        )
        .unwrap();
    let req = NewRequest {
        session: "s".into(),
        tool: "Read".into(),
        op: Op::Read,
        target: file("/b"),
        reason: "external".into(),
        eligible: true,
        policy_scope: "workspace".into(),
        suggested: vec![Resolution::Once],
        once_ttl_secs: None,
        device: None,
    };
    let r = store.raise_request(&req, 100).unwrap();
    let event = AuditEvent {
        kind: AuditKind::Decision,
        session: Some("s".into()),
        tool: Some("Read".into()),
        verdict: Some(AuditVerdict::Allow),
        detail: serde_json::json!({"reason": "grant"}),
    };
    let a = store.append_audit(&event, 100).unwrap();
    drop(store);

    let store = Store::open(dir.path()).unwrap();
    assert_eq!(store.session("s").unwrap(), Some(reg.session));
    assert!(store.verify_token("s", &reg.token).unwrap());
    assert_eq!(store.grant(g.id).unwrap(), Some(g));
    assert_eq!(store.request(r.id).unwrap(), Some(r));
    assert_eq!(store.audit_all().unwrap(), vec![a]);
    assert_eq!(
        store.verify_audit().unwrap(),
        AuditCheck::Intact { rows: 1 }
    );
    assert_eq!(store.schema_version().unwrap(), schema::current_version());
}

#[test]
fn a_readable_database_file_is_made_private_again() {
    let (dir, store) = support::store();
    let db = store.path().to_owned();
    drop(store);
    fs::set_permissions(&db, fs::Permissions::from_mode(0o644)).unwrap();
    Store::open(dir.path()).unwrap();
    assert_eq!(mode(&db), 0o600);
}

#[test]
fn a_newer_schema_is_refused_with_the_path() {
    let (dir, store) = support::store();
    raw(store.path())
        .pragma_update(None, "user_version", 99)
        .unwrap();
    drop(store);
    let err = Store::open(dir.path()).unwrap_err();
    assert!(
        matches!(err, StoreError::SchemaTooNew { found: 99, .. }),
        "{err:?}"
    );
    let msg = err.to_string();
    assert!(msg.contains("portcullis.db") && msg.contains("99"), "{msg}");
}

#[test]
fn a_data_dir_that_is_a_file_is_refused_with_the_path() {
    let tmp = tempfile::tempdir().unwrap();
    let not_dir = tmp.path().join("plain-file");
    fs::write(&not_dir, "x").unwrap();
    let err = Store::open(&not_dir).unwrap_err();
    assert!(matches!(err, StoreError::Io { .. }), "{err:?}");
    assert!(err.to_string().contains("plain-file"), "{err}");
}

#[test]
fn many_first_opens_at_once_migrate_once() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    let threads: Vec<_> = (0..12)
        .map(|_| {
            let data = data.clone();
            std::thread::spawn(move || Store::open(&data).map(|s| s.schema_version().unwrap()))
        })
        .collect();
    for t in threads {
        assert_eq!(t.join().unwrap().unwrap(), schema::current_version());
    }
    assert_eq!(mode(&data), 0o700);
    assert_eq!(mode(&data.join("portcullis.db")), 0o600);
}

const DATA_DIR_WORKER: &str = "PORTCULLIS_STORE_TEST_DATA_DIR_WORKER";

/// Worker for `default_data_dir_order`: prints `default_data_dir()` when run
/// by it (env var set), does nothing otherwise.
#[test]
fn default_data_dir_worker() {
    if std::env::var_os(DATA_DIR_WORKER).is_some() {
        println!(
            "DATA_DIR={}",
            portcullis_store::default_data_dir().display()
        );
    }
}

#[test]
fn default_data_dir_order() {
    // Each case runs in a child process with exactly these variables, so the
    // test never edits its own environment.
    let run = |vars: &[(&str, &str)]| -> String {
        let mut cmd = Command::new(std::env::current_exe().unwrap());
        cmd.args([
            "--exact",
            "open::default_data_dir_worker",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(DATA_DIR_WORKER, "1")
        .env_remove("PORTCULLIS_DATA_DIR")
        .env_remove("XDG_DATA_HOME")
        .env_remove("HOME");
        for (k, v) in vars {
            cmd.env(k, v);
        }
        let out = cmd.output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let stdout = String::from_utf8(out.stdout).unwrap();
        stdout
            .lines()
            // The harness prints `test … ` before the worker's output on the same line.
            .find_map(|l| l.split_once("DATA_DIR=").map(|(_, v)| v))
            .unwrap_or_else(|| panic!("no DATA_DIR= line in {stdout}"))
            .to_owned()
    };
    let all = [
        ("PORTCULLIS_DATA_DIR", "/p"),
        ("XDG_DATA_HOME", "/x"),
        ("HOME", "/h"),
    ];
    assert_eq!(run(&all), "/p");
    assert_eq!(run(&all[1..]), "/x/portcullis");
    assert_eq!(run(&all[2..]), "/h/.local/share/portcullis");
    // Empty values and a relative XDG_DATA_HOME are ignored.
    assert_eq!(
        run(&[
            ("PORTCULLIS_DATA_DIR", ""),
            ("XDG_DATA_HOME", "rel"),
            ("HOME", "/h")
        ]),
        "/h/.local/share/portcullis"
    );
}

/// One process per hook call: each open is the database's only connection.
/// The WAL must stay bounded across such opens instead of growing by every call.
#[test]
fn wal_stays_bounded_across_many_short_lived_opens() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("p");
    let wal = data.join("portcullis.db-wal");
    let mut largest = 0;
    for i in 0..400 {
        let store = Store::open(&data).unwrap();
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
                    detail: serde_json::json!({"reason": "x".repeat(300)}),
                },
                i,
            )
            .unwrap();
        drop(store);
        largest = largest.max(fs::metadata(&wal).map(|m| m.len()).unwrap_or(0));
    }
    // Bounded: the threshold plus what one call can add on top of it.
    assert!(
        largest < portcullis_store::WAL_TRUNCATE_BYTES + 64 * 1024,
        "the WAL grew to {largest} bytes"
    );
    // Nothing was lost to the truncations.
    let store = Store::open(&data).unwrap();
    assert_eq!(store.sessions().unwrap().len(), 400);
    assert_eq!(store.audit_all().unwrap().len(), 400);
    assert!(store.verify_audit().unwrap().is_intact());
}

const OPEN_WORKER: &str = "PORTCULLIS_STORE_TEST_OPEN_WORKER";

/// Run by `concurrent_first_opens_all_succeed`: `OPEN_WORKER` = `<data dir>\t<index>`.
#[test]
fn open_worker() {
    let Ok(spec) = std::env::var(OPEN_WORKER) else {
        return;
    };
    let (dir, index) = spec.split_once('\t').unwrap();
    let index: usize = index.parse().unwrap();
    let go = std::path::Path::new(dir).with_file_name("go");
    while !go.exists() {
        std::thread::sleep(std::time::Duration::from_micros(200));
    }
    let store = Store::open(std::path::Path::new(dir)).unwrap();
    // Readers and writers mixed, as hooks and `requests list` are.
    if index.is_multiple_of(2) {
        store
            .register_session(&main_session(&format!("s{index}")))
            .unwrap();
    } else {
        store.requests(true).unwrap();
    }
}

/// Hooks are separate processes: the first tool calls after an install open a
/// store that does not exist yet from several processes at once. Every open
/// must succeed. (SQLite answers a racing journal-mode switch with "database is
/// locked" at once, without its busy handler; the store must wait instead.)
/// Processes, not threads: the race needs separate POSIX lock owners.
#[test]
fn concurrent_first_opens_all_succeed() {
    const OPENERS: usize = 6;
    let exe = std::env::current_exe().unwrap();
    for round in 0..40 {
        let tmp = tempfile::tempdir().unwrap();
        let data = tmp.path().join("data");
        let children: Vec<_> = (0..OPENERS)
            .map(|i| {
                Command::new(&exe)
                    .args(["--exact", "open::open_worker", "--test-threads=1"])
                    .env(OPEN_WORKER, format!("{}\t{i}", data.display()))
                    .stdout(std::process::Stdio::null())
                    .stderr(std::process::Stdio::piped())
                    .spawn()
                    .unwrap()
            })
            .collect();
        // All started, then released together.
        std::thread::sleep(std::time::Duration::from_millis(20));
        fs::write(tmp.path().join("go"), "").unwrap();
        for (i, child) in children.into_iter().enumerate() {
            let out = child.wait_with_output().unwrap();
            assert!(
                out.status.success(),
                "round {round}, opener {i}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
    }
}
