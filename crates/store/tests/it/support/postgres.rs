//! A throwaway PostgreSQL server for the tests: one cluster per test
//! process, started on first use (`initdb` into a temporary directory, the
//! server on a free loopback port), and a fresh database per test.
//!
//! `PORTCULLIS_TEST_POSTGRES` (an admin connection string) uses a running
//! server instead. Otherwise the server binaries are looked for on `PATH`
//! and in Debian's `/usr/lib/postgresql/*/bin`; `initdb` refuses to run as
//! root, so as root the cluster belongs to the `postgres` user (`runuser`).
//! The server is a child of a shell that reads this process' pipe: when the
//! test process ends, however it ends, the pipe closes and the shell stops
//! the server.

use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

struct Cluster {
    /// The admin connection string, without a database name.
    base: String,
    /// Kept open for the life of the process: its end stops the server.
    _lifeline: Mutex<Option<(Child, ChildStdin)>>,
    _dir: Option<tempfile::TempDir>,
}

static CLUSTER: OnceLock<Result<Cluster, String>> = OnceLock::new();
static NEXT_DB: AtomicU64 = AtomicU64::new(0);

/// The connection string of a new, empty database on the test cluster.
pub fn fresh_database() -> String {
    let cluster = match CLUSTER.get_or_init(start) {
        Ok(c) => c,
        Err(why) => panic!("no PostgreSQL server for the tests: {why}"),
    };
    let name = format!(
        "t_{}_{}",
        std::process::id(),
        NEXT_DB.fetch_add(1, Ordering::SeqCst)
    );
    let mut admin =
        postgres::Client::connect(&format!("{}/postgres", cluster.base), postgres::NoTls)
            .expect("connect to the test cluster");
    admin
        .batch_execute(&format!("CREATE DATABASE {name}"))
        .expect("create a test database");
    format!("{}/{name}", cluster.base)
}

fn start() -> Result<Cluster, String> {
    if let Ok(url) = std::env::var("PORTCULLIS_TEST_POSTGRES") {
        return Ok(Cluster {
            base: url.trim_end_matches('/').to_owned(),
            _lifeline: Mutex::new(None),
            _dir: None,
        });
    }
    let bin = server_bin_dir().ok_or(
        "neither PORTCULLIS_TEST_POSTGRES nor PostgreSQL's initdb was found: install Debian's \
         `postgresql` package (scripts/test does) or point PORTCULLIS_TEST_POSTGRES at a server",
    )?;
    let root = rustix::process::geteuid().is_root();
    let dir = tempfile::Builder::new()
        .prefix("portcullis-pg-")
        .tempdir()
        .map_err(|e| format!("a temporary directory: {e}"))?;
    let data = dir.path().join("data");
    if root {
        let ok = Command::new("chown")
            .args(["postgres:postgres"])
            .arg(dir.path())
            .status()
            .map_err(|e| format!("chown: {e}"))?
            .success();
        if !ok {
            return Err("could not give the cluster's directory to the `postgres` user".into());
        }
    }
    let as_owner = |program: &Path| -> Command {
        if root {
            let mut c = Command::new("runuser");
            c.args(["-u", "postgres", "--"]).arg(program);
            c
        } else {
            Command::new(program)
        }
    };
    let out = as_owner(&bin.join("initdb"))
        .args([
            "-A",
            "trust",
            "-U",
            "portcullis",
            "-E",
            "UTF8",
            "--no-sync",
            "-D",
        ])
        .arg(&data)
        .output()
        .map_err(|e| format!("initdb: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "initdb failed: {}",
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    let port = free_port()?;
    // The shell stops the server when its standard input (our pipe) ends.
    let script = format!(
        "'{}' -D '{}' -p {port} -k '{}' -c listen_addresses=127.0.0.1 -c fsync=off \
         -c max_connections=200 >'{}/log' 2>&1 & pid=$!; cat >/dev/null; kill -INT $pid; wait $pid",
        bin.join("postgres").display(),
        data.display(),
        dir.path().display(),
        dir.path().display(),
    );
    let mut child = as_owner(Path::new("sh"))
        .args(["-c", &script])
        .stdin(Stdio::piped())
        .spawn()
        .map_err(|e| format!("start postgres: {e}"))?;
    let stdin = child.stdin.take().ok_or("no pipe to the server's shell")?;
    let base = format!("postgres://portcullis@127.0.0.1:{port}");
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        match postgres::Client::connect(&format!("{base}/postgres"), postgres::NoTls) {
            Ok(_) => break,
            Err(e) if Instant::now() > deadline => {
                let log = std::fs::read_to_string(dir.path().join("log")).unwrap_or_default();
                return Err(format!("the server did not answer in 30 s: {e}\n{log}"));
            }
            Err(_) => std::thread::sleep(Duration::from_millis(50)),
        }
    }
    Ok(Cluster {
        base,
        _lifeline: Mutex::new(Some((child, stdin))),
        _dir: Some(dir),
    })
}

fn server_bin_dir() -> Option<PathBuf> {
    let mut candidates: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path().join("bin"))
        .collect();
    candidates.sort();
    candidates.reverse(); // the newest version first
    let on_path = std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
        .unwrap_or_default();
    candidates
        .into_iter()
        .chain(on_path)
        .find(|d| d.join("initdb").is_file() && d.join("postgres").is_file())
}

fn free_port() -> Result<u16, String> {
    let l = std::net::TcpListener::bind("127.0.0.1:0").map_err(|e| format!("a free port: {e}"))?;
    l.local_addr()
        .map(|a| a.port())
        .map_err(|e| format!("a free port: {e}"))
}
