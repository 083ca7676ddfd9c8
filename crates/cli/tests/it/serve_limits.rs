//! `portcullis serve` survives its inputs and its clients: the real daemon
//! over TCP, against pathological shell texts, idle and half-open
//! connections (1,100 of them under `ulimit -n 1024`), slow bodies, too many
//! event streams, and its database deleted under it.

// Test code: a failed unwrap, index or panic is a failed test.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

use crate::support;

use std::io::{ErrorKind, Read, Write};
use std::net::TcpStream;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use support::serve::{Served, http};

fn json_body(body: &str) -> Value {
    serde_json::from_str(body).unwrap_or_else(|e| panic!("not JSON ({e}): {body}"))
}

/// Raises this process's soft open-file limit (to the hard one, or 8192 as
/// root): the test itself holds over a thousand connections.
fn raise_own_nofile(want: u64) {
    use rustix::process::{Resource, Rlimit, getrlimit, setrlimit};
    let rl = getrlimit(Resource::Nofile);
    let (cur, max) = (
        rl.current.unwrap_or(u64::MAX),
        rl.maximum.unwrap_or(u64::MAX),
    );
    if cur >= want {
        return;
    }
    let max = if max < want && rustix::process::geteuid().is_root() {
        want
    } else {
        max
    };
    setrlimit(
        Resource::Nofile,
        Rlimit {
            current: Some(want.min(max)),
            maximum: Some(max),
        },
    )
    .unwrap();
}

fn decide(s: &Served, command: &str) -> (u16, Value) {
    let call =
        json!({"tool": "Bash", "origin": "core", "input": {"command": command}, "cwd": s.work});
    let (status, _, body) = s.request("POST", "/v1/decide", &[], Some(&call.to_string()));
    (
        status,
        if body.is_empty() {
            Value::Null
        } else {
            json_body(&body)
        },
    )
}

#[track_caller]
fn assert_alive(s: &mut Served) {
    assert!(
        s.child.try_wait().unwrap().is_none(),
        "the daemon exited: {:?}",
        s.child.try_wait()
    );
}

/// A connection that is open and has sent `sent`; answers how long until the
/// server closed it (or `None` past `wait`).
fn time_to_close(port: u16, sent: &[u8], wait: Duration) -> Option<Duration> {
    let started = Instant::now();
    let mut c = TcpStream::connect(("127.0.0.1", port)).unwrap();
    c.write_all(sent).unwrap();
    c.set_read_timeout(Some(wait)).unwrap();
    let mut buf = [0u8; 4096];
    loop {
        match c.read(&mut buf) {
            Ok(0) => return Some(started.elapsed()),
            // A 408 or 400 before closing is fine too: keep reading to the close.
            Ok(_) => {}
            Err(e) if e.kind() == ErrorKind::ConnectionReset => return Some(started.elapsed()),
            Err(_) => return None,
        }
    }
}

#[test]
fn pathological_texts_never_stop_the_daemon() {
    let mut s = Served::start();
    for text in [
        format!("[[ {}a ]]", "! ".repeat(10_000)),
        format!("echo {}1{}", "$[".repeat(10_000), "]".repeat(10_000)),
        format!("echo {}x{}", "$(".repeat(10_000), ")".repeat(10_000)),
        format!("{}true{}", "{ ".repeat(10_000), "; }".repeat(10_000)),
    ] {
        let (status, body) = decide(&s, &text);
        match status {
            200 => assert_ne!(body["decision"], "allow", "{body}"),
            503 => assert_eq!(body["decision"], "deny", "{body}"),
            other => panic!("{other}: {body}"),
        }
        assert_alive(&mut s);
        assert_eq!(s.request("GET", "/healthz", &[], None).0, 200);
        let (status, body) = decide(&s, "git status");
        assert_eq!(
            (status, &body["decision"]),
            (200, &json!("allow")),
            "{body}"
        );
    }
}

#[test]
fn idle_and_half_open_connections_are_closed_within_the_header_timeout() {
    let mut s = Served::start_opts(|_| String::new(), &["--header-timeout", "1"], None);
    let wait = Duration::from_secs(10);
    let idle = time_to_close(s.port, b"", wait).expect("an idle connection is closed");
    let half = time_to_close(s.port, b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1", wait)
        .expect("a half-sent head is closed");
    for (what, t) in [("idle", idle), ("half-open", half)] {
        eprintln!("{what} connection closed after {t:?}");
        assert!(
            t >= Duration::from_millis(900) && t < Duration::from_millis(2500),
            "{what}: {t:?}"
        );
    }
    // A keep-alive connection between requests is closed the same way.
    let req = format!(
        "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1:{}\r\n\r\n",
        s.port
    );
    let t = time_to_close(s.port, req.as_bytes(), wait).expect("closed");
    assert!(t < Duration::from_millis(2500), "keep-alive: {t:?}");
    assert_alive(&mut s);
}

#[test]
fn a_body_that_never_arrives_times_out() {
    let mut s = Served::start_opts(|_| String::new(), &["--body-timeout", "1"], None);
    let head = format!(
        "POST /v1/decide HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{{\"tool\":",
        s.port
    );
    let t = time_to_close(s.port, head.as_bytes(), Duration::from_secs(10))
        .expect("a stalled body is given up");
    eprintln!("stalled body closed after {t:?}");
    assert!(
        t >= Duration::from_millis(900) && t < Duration::from_millis(2500),
        "{t:?}"
    );
    assert_alive(&mut s);
    assert_eq!(s.request("GET", "/healthz", &[], None).0, 200);
}

/// An open `/v1/events` stream (with the person's token) on its own connection.
fn event_stream(s: &Served) -> (TcpStream, String) {
    let mut c = TcpStream::connect(("127.0.0.1", s.port)).unwrap();
    let req = format!(
        "GET /v1/events HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nAuthorization: {}\r\n\r\n",
        s.port,
        s.bearer()
    );
    c.write_all(req.as_bytes()).unwrap();
    c.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let mut buf = [0u8; 1024];
    let n = c.read(&mut buf).unwrap();
    (c, String::from_utf8_lossy(&buf[..n]).into_owned())
}

#[test]
fn event_streams_and_busy_connections_are_capped() {
    let mut s = Served::start_opts(
        |_| String::new(),
        &["--max-event-streams", "2", "--max-connections", "3"],
        None,
    );
    let (_a, head) = event_stream(&s);
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    let (_b, head) = event_stream(&s);
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    let (_c, head) = event_stream(&s);
    assert!(head.starts_with("HTTP/1.1 503"), "{head}");
    assert!(head.contains("too-many-event-streams"), "{head}");
    // Two streams hold two of three connections; a third connection that
    // stays inside a request (a body that has not arrived)…
    let mut slow = TcpStream::connect(("127.0.0.1", s.port)).unwrap();
    write!(
        slow,
        "POST /v1/decide HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{{",
        s.port
    )
    .unwrap();
    std::thread::sleep(Duration::from_millis(300));
    // …and the next one finds none to close: a clear 503 at once.
    let (status, _, body) = s.request("GET", "/healthz", &[], None);
    assert_eq!(status, 503, "{body}");
    assert!(body.contains("too-many-connections"), "{body}");
    drop(slow);
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(s.request("GET", "/healthz", &[], None).0, 200);
    assert_alive(&mut s);
}

#[test]
fn a_deleted_database_makes_the_daemon_not_ready_and_deny() {
    let mut s = Served::start();
    assert_eq!(decide(&s, "git status").0, 200);
    let db = std::fs::canonicalize(s.root.path())
        .unwrap()
        .join("data/portcullis.db");
    std::fs::remove_file(&db).unwrap();
    let (status, _, body) = s.request("GET", "/healthz", &[], None);
    assert_eq!(status, 503, "{body}");
    let health = json_body(&body);
    assert_eq!(health["status"], "not-ready", "{health}");
    assert!(
        health["why"].as_str().unwrap().contains("deleted"),
        "{health}"
    );
    let (status, body) = decide(&s, "git status");
    assert_eq!(status, 503, "{body}");
    assert_eq!(body["decision"], "deny", "{body}");
    assert_alive(&mut s);
}

/// The test's side of a flood: `n` connections that never send a byte,
/// reopened as soon as the server closes them.
struct Flood {
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<usize>>,
}

impl Flood {
    fn start(port: u16, n: usize) -> Flood {
        let mut conns: Vec<TcpStream> = (0..n)
            .map(|_| {
                let c = TcpStream::connect(("127.0.0.1", port)).expect("connect");
                c.set_nonblocking(true).unwrap();
                c
            })
            .collect();
        let stop = Arc::new(AtomicBool::new(false));
        let stopped = Arc::clone(&stop);
        let thread = std::thread::spawn(move || {
            let mut reopened = 0;
            while !stopped.load(Ordering::Relaxed) {
                std::thread::sleep(Duration::from_millis(250));
                for c in &mut conns {
                    let mut b = [0u8; 1];
                    let closed = match c.peek(&mut b) {
                        Ok(_) => true,
                        Err(e) => e.kind() != ErrorKind::WouldBlock,
                    };
                    if closed && let Ok(new) = TcpStream::connect(("127.0.0.1", port)) {
                        new.set_nonblocking(true).unwrap();
                        *c = new;
                        reopened += 1;
                    }
                }
            }
            reopened
        });
        Flood {
            stop,
            thread: Some(thread),
        }
    }

    fn stop(mut self) -> usize {
        self.stop.store(true, Ordering::Relaxed);
        self.thread.take().unwrap().join().unwrap()
    }
}

/// 1,100 idle connections held against a daemon with `ulimit -n 1024`:
/// `/healthz` still answers, p99 under a second, and decisions go on.
#[test]
fn healthz_answers_while_1100_idle_connections_are_held_under_ulimit_1024() {
    raise_own_nofile(8192);
    let mut s = Served::start_opts(|_| String::new(), &[], Some(1024));
    let limits = std::fs::read_to_string(format!("/proc/{}/limits", s.child.id())).unwrap();
    let nofile = limits
        .lines()
        .find(|l| l.starts_with("Max open files"))
        .unwrap()
        .to_string();
    assert!(nofile.split_whitespace().nth(3) == Some("1024"), "{nofile}");

    let flood = Flood::start(s.port, 1100);
    let mut latencies = Vec::new();
    for _ in 0..200 {
        let started = Instant::now();
        let (status, _, body) = http(s.port, "GET", "/healthz", &[], None);
        latencies.push(started.elapsed());
        assert_eq!(status, 200, "{body}");
        // Spread over a few seconds, so the flood keeps coming meanwhile.
        std::thread::sleep(Duration::from_millis(10));
    }
    let (status, body) = decide(&s, "git status");
    assert_eq!(
        (status, &body["decision"]),
        (200, &json!("allow")),
        "{body}"
    );
    let reopened = flood.stop();
    latencies.sort();
    let p50 = latencies[latencies.len() / 2];
    let p99 = latencies[latencies.len() * 99 / 100];
    let max = latencies[latencies.len() - 1];
    eprintln!(
        "healthz with 1,100 idle connections held (ulimit -n 1024): p50 {p50:?}, p99 {p99:?}, max {max:?}; the flood reopened {reopened} connections the server closed"
    );
    assert!(p99 < Duration::from_secs(1), "p99 {p99:?}");
    assert_alive(&mut s);
}
