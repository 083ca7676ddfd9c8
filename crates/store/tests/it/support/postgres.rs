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

/// A PostgreSQL server of the tests' own: its directory, port and the
/// process that runs it. Stopped when dropped or when the test process ends.
pub struct Server {
    /// The admin connection string, without a database name.
    pub base: String,
    port: u16,
    bin: PathBuf,
    root: bool,
    /// Kept open while the server runs: its end stops the server.
    lifeline: Mutex<Option<(Child, ChildStdin)>>,
    dir: tempfile::TempDir,
}

static SHARED: OnceLock<Result<Shared, String>> = OnceLock::new();
static NEXT_DB: AtomicU64 = AtomicU64::new(0);

/// The cluster shared by a test process's tests: an external one
/// (`PORTCULLIS_TEST_POSTGRES`) or one of our own.
enum Shared {
    External(String),
    Own(Server),
}

/// The connection string of a new, empty database on the test cluster.
pub fn fresh_database() -> String {
    let base = match SHARED.get_or_init(|| {
        if let Ok(url) = std::env::var("PORTCULLIS_TEST_POSTGRES") {
            return Ok(Shared::External(url.trim_end_matches('/').to_owned()));
        }
        Server::start().map(Shared::Own)
    }) {
        Ok(Shared::External(base)) => base,
        Ok(Shared::Own(server)) => &server.base,
        Err(why) => panic!("no PostgreSQL server for the tests: {why}"),
    };
    create_database(base)
}

/// A new, empty database on the server at `base`.
pub fn create_database(base: &str) -> String {
    let name = format!(
        "t_{}_{}",
        std::process::id(),
        NEXT_DB.fetch_add(1, Ordering::SeqCst)
    );
    let mut admin = postgres::Client::connect(&format!("{base}/postgres"), postgres::NoTls)
        .expect("connect to the test cluster");
    admin
        .batch_execute(&format!("CREATE DATABASE {name}"))
        .expect("create a test database");
    format!("{base}/{name}")
}

impl Server {
    /// A new cluster (`initdb`) on a free loopback port, running.
    pub fn start() -> Result<Server, String> {
        let bin = server_bin_dir().ok_or(
            "neither PORTCULLIS_TEST_POSTGRES nor PostgreSQL's initdb was found: install Debian's \
             `postgresql` package (scripts/test does) or point PORTCULLIS_TEST_POSTGRES at a server",
        )?;
        let root = rustix::process::geteuid().is_root();
        let dir = tempfile::Builder::new()
            .prefix("portcullis-pg-")
            .tempdir()
            .map_err(|e| format!("a temporary directory: {e}"))?;
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
        let port = free_port()?;
        let server = Server {
            base: format!("postgres://portcullis@127.0.0.1:{port}"),
            port,
            bin,
            root,
            lifeline: Mutex::new(None),
            dir,
        };
        let out = server
            .as_owner(&server.bin.join("initdb"))
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
            .arg(server.data())
            .output()
            .map_err(|e| format!("initdb: {e}"))?;
        if !out.status.success() {
            return Err(format!(
                "initdb failed: {}",
                String::from_utf8_lossy(&out.stderr)
            ));
        }
        server.resume()?;
        Ok(server)
    }

    fn data(&self) -> PathBuf {
        self.dir.path().join("data")
    }

    fn as_owner(&self, program: &Path) -> Command {
        if self.root {
            let mut c = Command::new("runuser");
            c.args(["-u", "postgres", "--"]).arg(program);
            c
        } else {
            Command::new(program)
        }
    }

    /// Starts the server (again, on the same port) and waits until it answers.
    pub fn resume(&self) -> Result<(), String> {
        // The shell stops the server when its standard input (our pipe) ends.
        let script = format!(
            "'{}' -D '{}' -p {} -k '{}' -c listen_addresses=127.0.0.1 -c fsync=off \
             -c max_connections=200 >>'{}/log' 2>&1 & pid=$!; cat >/dev/null; kill -INT $pid; wait $pid",
            self.bin.join("postgres").display(),
            self.data().display(),
            self.port,
            self.dir.path().display(),
            self.dir.path().display(),
        );
        let mut child = self
            .as_owner(Path::new("sh"))
            .args(["-c", &script])
            .stdin(Stdio::piped())
            .spawn()
            .map_err(|e| format!("start postgres: {e}"))?;
        let stdin = child.stdin.take().ok_or("no pipe to the server's shell")?;
        *self.lifeline.lock().unwrap_or_else(|p| p.into_inner()) = Some((child, stdin));
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            match postgres::Client::connect(&format!("{}/postgres", self.base), postgres::NoTls) {
                Ok(_) => return Ok(()),
                Err(e) if Instant::now() > deadline => {
                    let log =
                        std::fs::read_to_string(self.dir.path().join("log")).unwrap_or_default();
                    return Err(format!("the server did not answer in 30 s: {e}\n{log}"));
                }
                Err(_) => std::thread::sleep(Duration::from_millis(50)),
            }
        }
    }

    /// Stops the server (a fast shutdown: open connections are cut) and
    /// waits until it has exited.
    pub fn stop(&self) {
        let taken = self
            .lifeline
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take();
        if let Some((mut child, stdin)) = taken {
            drop(stdin);
            let _ = child.wait();
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop();
    }
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
