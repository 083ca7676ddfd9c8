//! Hook latency (criterion): the hook `install` writes, `portcullis-hook
//! claude-code`, on a `git status` `PreToolUse` payload with a session (so
//! the store is opened, the session looked up and one audit row written),
//! against the floor of spawning `/bin/true` the same way.
//!
//! Each with a session and without, in the hook's own process and handed to a
//! running `portcullis serve` over its socket; the older hook command
//! `portcullis hook claude-code` (the same code in the whole command line's
//! binary) both ways; and on a machine governed by a team server
//! (`PORTCULLIS_SERVER`, that same `serve` over loopback HTTP), against the
//! goal of one loopback round trip + 1 ms over the local hook.
//!
//! `cargo bench -p portcullis --bench hook_latency` prints the median wall time
//! per call of each, and its ratio to the floor, between `====` lines, then
//! criterion's figures. The goals: ≤ 2.0× the floor through the daemon, ≤ 2.5×
//! in the hook's process.

// Test code: a failed unwrap, index or panic is a failed test.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};

mod common;
// The test CA the TLS tests make with openssl.
#[path = "../tests/it/support/pki.rs"]
mod pki;

/// A throw-away home with a workspace, a data directory and a configuration.
struct Home {
    root: PathBuf,
}

impl Home {
    fn new() -> Home {
        let root =
            std::env::temp_dir().join(format!("portcullis-hook-bench-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        for d in [
            "home/proj/.git",
            "home/.config",
            "home/.local/share",
            "data",
        ] {
            std::fs::create_dir_all(root.join(d)).expect("create the bench home");
        }
        std::fs::write(root.join("home/proj/README.md"), "# bench\n").expect("write");
        std::fs::write(
            root.join("portcullis.toml"),
            "mode = \"ask\"\n[permissions]\nallow = [\"Bash(git status)\"]\n",
        )
        .expect("write the configuration");
        Home {
            root: root.canonicalize().expect("canonical root"),
        }
    }

    /// A command in a clean, isolated environment.
    fn command(&self, program: &Path) -> Command {
        let mut c = common::isolated(program, &self.root);
        c.stdin(Stdio::piped());
        c
    }
}

impl Drop for Home {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.root);
    }
}

/// Spawns `command`, writes `payload` to its stdin, and waits for it: the
/// whole round trip an agent pays. Returns the wall time and the stdout.
fn call(mut command: Command, payload: &[u8]) -> (Duration, Vec<u8>) {
    let start = Instant::now();
    let mut child = command.spawn().expect("spawn");
    let mut stdin = child.stdin.take().expect("stdin");
    // `/bin/true` does not read its stdin: a broken pipe is fine there.
    let _ = stdin.write_all(payload);
    drop(stdin);
    let out = child.wait_with_output().expect("wait");
    (start.elapsed(), out.stdout)
}

fn median(mut v: Vec<f64>) -> (f64, f64) {
    v.sort_by(f64::total_cmp);
    (v[v.len() / 2], v[v.len() * 9 / 10])
}

fn bench(c: &mut Criterion) {
    let home = Home::new();
    let bin = PathBuf::from(env!("CARGO_BIN_EXE_portcullis"));
    let hook_bin = PathBuf::from(env!("CARGO_BIN_EXE_portcullis-hook"));
    let config = home.root.join("portcullis.toml");
    // The hook command `install` writes, and the one it wrote before.
    let hook = || {
        let mut cmd = home.command(&hook_bin);
        cmd.arg("claude-code").arg("--config").arg(&config);
        cmd
    };
    let older = |daemon: &str| {
        let mut cmd = home.command(&bin);
        cmd.args(["hook", "claude-code", "--config"])
            .arg(&config)
            .env("PORTCULLIS_HOOK_DAEMON", daemon);
        cmd
    };
    let floor = || home.command(Path::new("/bin/true"));
    let payload = serde_json::json!({
        "session_id": "bench-session",
        "transcript_path": "/home/u/.claude/projects/p/x.jsonl",
        "cwd": home.root.join("home/proj"),
        "permission_mode": "default",
        "hook_event_name": "PreToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": "git status", "description": "Show working tree status"},
        "tool_use_id": "toolu_01ABC",
    })
    .to_string()
    .into_bytes();

    // The same call without a session: no store (config, paths, policy only).
    let mut stateless: serde_json::Value = serde_json::from_slice(&payload).expect("JSON");
    stateless
        .as_object_mut()
        .expect("an object")
        .remove("session_id");
    let stateless = stateless.to_string().into_bytes();

    // The first call creates the store and registers the session.
    let (_, out) = call(hook(), &payload);
    let reply: serde_json::Value = serde_json::from_slice(&out).expect("the hook answers JSON");
    assert_eq!(
        reply["hookSpecificOutput"]["permissionDecision"], "allow",
        "{reply}"
    );
    let wal = || {
        std::fs::metadata(home.root.join("data/portcullis.db-wal"))
            .map(|m| m.len())
            .unwrap_or(0) as f64
            / 1e6
    };

    // The daemon for the same data directory: the hook hands it its calls.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port();
    let mut daemon = home
        .command(&bin)
        .args(["serve", "--addr", &format!("127.0.0.1:{port}")])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start portcullis serve");
    let socket = home.root.join("data/hook.sock");
    let started = Instant::now();
    while std::os::unix::net::UnixStream::connect(&socket).is_err() {
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "serve never listened"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let through = |daemon: &str| {
        let mut cmd = hook();
        cmd.env("PORTCULLIS_HOOK_DAEMON", daemon);
        cmd
    };
    // Machines enrolled with that daemon as their team server over HTTP,
    // and with a second one serving HTTPS under a test CA (made by openssl,
    // when there is one): the device pins that CA.
    let plain = format!("http://127.0.0.1:{port}");
    let mut teams = vec![(
        "HTTP on loopback",
        enrolled(&home, &bin, &plain, "data", "data-device", None),
        plain,
        Vec::new(),
    )];
    let tls_server = tls_team_server(&home, &bin);
    if let Some((_, server, ca)) = &tls_server {
        teams.push((
            "HTTPS on loopback, the enrolled CA",
            enrolled(&home, &bin, server, "data-tls", "data-device-tls", Some(ca)),
            server.clone(),
            Vec::new(),
        ));
    }
    let governed = |device_dir: &Path, server: &str| {
        let mut cmd = hook();
        cmd.arg("--data-dir")
            .arg(device_dir)
            .env("PORTCULLIS_SERVER", server);
        cmd
    };
    for (_, device_dir, server, _) in &teams {
        let (_, out) = call(governed(device_dir, server), &payload);
        let reply: serde_json::Value = serde_json::from_slice(&out).expect("the hook answers JSON");
        assert_eq!(
            reply["hookSpecificOutput"]["permissionDecision"], "allow",
            "the team server {server} allows git status: {reply}"
        );
    }
    // Every path gives the same answer.
    let (_, a) = call(through("require"), &payload);
    let (_, b) = call(through("off"), &payload);
    let (_, f) = call(older("require"), &payload);
    let (_, g) = call(older("off"), &payload);
    assert_eq!(a, b, "the daemon and the hook answer alike");
    assert_eq!(a, f, "portcullis hook through the daemon answers alike");
    assert_eq!(a, g, "portcullis hook in its own process answers alike");

    // Interleaved, so drift on a shared machine hits all alike.
    const N: usize = 400;
    let mut series: Vec<(&str, &str, &[u8], Vec<f64>)> = vec![
        (
            "with a session, through the daemon",
            "require",
            &payload,
            Vec::new(),
        ),
        (
            "with a session, in the hook's process",
            "off",
            &payload,
            Vec::new(),
        ),
        (
            "without a session, through the daemon",
            "require",
            &stateless,
            Vec::new(),
        ),
        (
            "without a session, in the hook's process",
            "off",
            &stateless,
            Vec::new(),
        ),
    ];
    let mut fronts: Vec<(&str, &str, Vec<f64>)> = vec![
        (
            "portcullis hook claude-code (the older hook command), with a session, through the daemon",
            "require",
            Vec::new(),
        ),
        (
            "portcullis hook claude-code (the older hook command), with a session, in the hook's process",
            "off",
            Vec::new(),
        ),
    ];
    let mut floor_ms = Vec::with_capacity(N);
    for _ in 0..N {
        for (_, device_dir, server, times) in teams.iter_mut() {
            times.push(call(governed(device_dir, server), &payload).0.as_secs_f64() * 1e3);
        }
        for (_, mode, input, times) in series.iter_mut() {
            times.push(call(through(mode), input).0.as_secs_f64() * 1e3);
        }
        for (_, daemon, times) in fronts.iter_mut() {
            times.push(call(older(daemon), &payload).0.as_secs_f64() * 1e3);
        }
        floor_ms.push(call(floor(), &payload).0.as_secs_f64() * 1e3);
    }
    let (floor_med, floor_p90) = median(floor_ms);
    eprintln!("\n==================================================================");
    eprintln!(
        "spawn floor (/bin/true, same environment and stdin): MEDIAN {floor_med:.3} ms per call (p90 {floor_p90:.3} ms)"
    );
    let mut local_med = 0.0;
    for (name, mode, input, times) in series {
        let (med, p90) = median(times);
        if mode == "off" && std::ptr::eq(input, payload.as_slice()) {
            local_med = med;
        }
        eprintln!(
            "portcullis-hook claude-code (git status), {name}: MEDIAN {med:.3} ms (p90 {p90:.3} ms), {:.2}× the floor",
            med / floor_med
        );
    }
    let rtt = loopback_round_trip_ms();
    for (name, _, _, times) in teams {
        let (med, p90) = median(times);
        eprintln!(
            "governed by a team server (PORTCULLIS_SERVER, {name}), with a session: MEDIAN {med:.3} ms (p90 {p90:.3} ms), {:+.3} ms over the hook's process; goal ≤ one loopback round trip ({rtt:.3} ms) + 1 ms",
            med - local_med
        );
    }
    if tls_server.is_none() {
        eprintln!("(no openssl here: the HTTPS team server was not measured)");
    }
    for (name, _, times) in fronts {
        let (med, p90) = median(times);
        eprintln!(
            "{name}: MEDIAN {med:.3} ms (p90 {p90:.3} ms), {:.2}× the floor",
            med / floor_med
        );
    }
    eprintln!(
        "goals (the hook install writes): ≤ 2.0× with the daemon, ≤ 2.5× without; {N} calls each; WAL after them: {:.2} MB",
        wal()
    );
    eprintln!("==================================================================\n");
    let _ = daemon.kill();
    let _ = daemon.wait();
    if let Some((mut child, _, _)) = tls_server {
        let _ = child.kill();
        let _ = child.wait();
    }

    let mut g = c.benchmark_group("hook");
    g.sample_size(20);
    g.measurement_time(Duration::from_secs(5));
    g.bench_function("claude-code git status", |b| {
        b.iter(|| call(through("off"), &payload))
    });
    g.bench_function("spawn /bin/true", |b| b.iter(|| call(floor(), &payload)));
    g.finish();
}

/// A device data directory `device` enrolled with the team server at
/// `server`, whose own data directory is `served` (its login token there).
fn enrolled(
    home: &Home,
    bin: &Path,
    server: &str,
    served: &str,
    device: &str,
    ca: Option<&Path>,
) -> PathBuf {
    let device_dir = home.root.join(device);
    let started = Instant::now();
    loop {
        let login =
            std::fs::read_to_string(home.root.join(served).join("ui-token")).unwrap_or_default();
        let mut enrol = home.command(bin);
        enrol
            .args(["device", "enroll", "--server", server, "--name", "bench"])
            .arg("--data-dir")
            .arg(&device_dir);
        if let Some(ca) = ca {
            enrol.arg("--ca-file").arg(ca);
        }
        let (_, said) = call(enrol, login.trim().as_bytes());
        if String::from_utf8_lossy(&said).contains("enrolled") {
            return device_dir;
        }
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "could not enrol with {server}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// `portcullis serve` over HTTPS (a test CA made by openssl) for its own
/// data directory: the child, its URL and the CA file. `None` without openssl.
fn tls_team_server(home: &Home, bin: &Path) -> Option<(std::process::Child, String, PathBuf)> {
    let dir = home.root.join("tls");
    std::fs::create_dir_all(&dir).ok()?;
    let openssl = Command::new("openssl").arg("version").output();
    if !openssl.is_ok_and(|o| o.status.success()) {
        return None;
    }
    let (ca, cert, key) = pki::test_ca(&dir);
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .ok()?
        .port();
    let child = home
        .command(bin)
        .args(["serve", "--addr", &format!("127.0.0.1:{port}")])
        .arg("--tls-cert")
        .arg(cert)
        .arg("--tls-key")
        .arg(key)
        .env("PORTCULLIS_DATA_DIR", home.root.join("data-tls"))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start portcullis serve over HTTPS");
    Some((child, format!("https://127.0.0.1:{port}"), ca))
}

/// The median of 200 request/answer exchanges of 256 bytes over one loopback
/// TCP connection: the "one loopback round trip" of the governed goal.
fn loopback_round_trip_ms() -> f64 {
    use std::io::Read;
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = listener.local_addr().expect("addr");
    std::thread::spawn(move || {
        let (mut s, _) = listener.accept().expect("accept");
        let mut buf = [0u8; 256];
        while s.read_exact(&mut buf).is_ok() && s.write_all(&buf).is_ok() {}
    });
    let mut s = std::net::TcpStream::connect(addr).expect("connect");
    s.set_nodelay(true).expect("nodelay");
    let mut buf = [7u8; 256];
    let times = (0..200)
        .map(|_| {
            let start = Instant::now();
            s.write_all(&buf).expect("write");
            s.read_exact(&mut buf).expect("read");
            start.elapsed().as_secs_f64() * 1e3
        })
        .collect();
    median(times).0
}

criterion_group!(benches, bench);
criterion_main!(benches);
