//! `portcullis serve` replicas on one PostgreSQL store behave as one
//! service (issue 18): a session registered through one decides through
//! another, a request raised through B is in A's queue, A's approval lets
//! B's retry through exactly once, both verify the same audit chain; a
//! replica killed mid-stream loses nothing and uses no grant twice; and while
//! PostgreSQL is away every decision is refused, until it is back.

// Test code: a failed unwrap, index or panic is a failed test.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

use std::path::Path;
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::support::fed;
use crate::support::serve::{Served, http};

#[path = "../../../store/tests/it/support/postgres.rs"]
mod postgres_cluster;

fn body(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("not JSON ({e}): {text}"))
}

/// Replicas on one database, with one session `s1` registered through the first.
struct Team {
    replicas: Vec<Served>,
    session_auth: String,
}

impl Team {
    fn start(url: &str, replicas: usize) -> Team {
        // The first replica is told by `--store`, the others by `[store] url`
        // in their configuration.
        let replicas: Vec<Served> = (0..replicas)
            .map(|i| match i {
                0 => Served::start_opts(|_| String::new(), &["--store", url], None),
                _ => Served::start_with(|_| format!("[store]\nurl = \"{url}\"\n")),
            })
            .collect();
        let a = &replicas[0];
        let (status, _, text) = a.request(
            "POST",
            "/v1/sessions",
            &[("Authorization", &a.bearer())],
            Some(&json!({"id": "s1", "agent": "claude-code", "cwd": a.work}).to_string()),
        );
        assert_eq!(status, 201, "{text}");
        let token = body(&text)["token"].as_str().unwrap().to_owned();
        Team {
            replicas,
            session_auth: format!("Bearer {token}"),
        }
    }

    /// Replica `i`'s URL.
    fn url(&self, i: usize) -> String {
        format!("http://127.0.0.1:{}", self.replicas[i].port)
    }

    /// A Read of `file` by session `s1`, decided by replica `port`.
    fn read(&self, port: u16, file: &Path) -> (u16, Value) {
        read_as(&self.session_auth, &self.replicas[0].work, port, file)
    }

    /// The person's call on replica `i`.
    fn person(&self, i: usize, method: &str, path: &str, payload: Option<&str>) -> Value {
        let s = &self.replicas[i];
        let (status, _, text) = s.request(method, path, &[("Authorization", &s.bearer())], payload);
        assert_eq!(status, 200, "{method} {path}: {text}");
        body(&text)
    }

    /// The person enrols a device named `name` on the first replica: its credential.
    fn enrol(&self, name: &str) -> String {
        let s = &self.replicas[0];
        let (status, _, text) = s.request(
            "POST",
            "/v1/devices",
            &[("Authorization", &s.bearer())],
            Some(&json!({ "name": name }).to_string()),
        );
        assert_eq!(status, 201, "{text}");
        body(&text)["token"].as_str().unwrap().to_owned()
    }

    /// Replica `i` approves request `id` once; the grant's id.
    fn allow_once(&self, i: usize, id: i64) -> i64 {
        self.person(
            i,
            "POST",
            &format!("/v1/requests/{id}/resolve"),
            Some(r#"{"scope":"once"}"#),
        )["grant"]["id"]
            .as_i64()
            .unwrap()
    }
}

/// A Read of `file` by session `s1` (`auth` its token) in workspace `cwd`,
/// decided by the replica on `port`: the HTTP status and the answer (`Null`
/// when there was none).
fn read_as(auth: &str, cwd: &Path, port: u16, file: &Path) -> (u16, Value) {
    let call = json!({
        "tool": "Read", "origin": "core",
        "input": {"file_path": file}, "cwd": cwd,
    })
    .to_string();
    let headers = [("X-Session-ID", "s1"), ("Authorization", auth)];
    // A replica killed mid-request may reset the connection: no answer.
    let answer =
        std::panic::catch_unwind(|| http(port, "POST", "/v1/decide", &headers, Some(&call)));
    match answer {
        Ok((status, _, text)) => (status, serde_json::from_str(&text).unwrap_or(Value::Null)),
        Err(_) => (0, Value::Null),
    }
}

/// `portcullis store migrate` on a new database, as a team would before
/// starting its replicas.
fn migrated(url: &str) {
    let out = Command::new(env!("CARGO_BIN_EXE_portcullis"))
        .args(["store", "migrate", "--store", url])
        .output()
        .unwrap();
    let said = succeeded(&out);
    assert!(said.contains("schema version"), "{said}");
}

/// The standard output of a command that must have succeeded (both its
/// outputs in the failure message).
#[track_caller]
fn succeeded(out: &std::process::Output) -> String {
    let said = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{said}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    said
}

#[test]
fn two_replicas_on_one_postgres_are_one_queue_one_grant_and_one_chain() {
    let url = postgres_cluster::fresh_database();
    migrated(&url);
    let team = Team::start(&url, 2);
    let (a, b) = (&team.replicas[0], &team.replicas[1]);
    // The session registered through A decides through B: the refusal is a
    // request ...
    let (status, first) = team.read(b.port, &a.outside);
    assert_eq!(
        (status, &first["decision"]),
        (200, &json!("ask")),
        "{first}"
    );
    let id = first["request"]["id"].as_i64().expect("a request");
    // ... in A's queue.
    let queue = team.person(0, "GET", "/v1/requests", None);
    assert_eq!(queue[0]["id"].as_i64(), Some(id), "{queue}");
    assert_eq!(queue[0]["session"], "s1", "{queue}");

    // Approved once on A: B's retry is allowed once, then asks again.
    let grant = team.allow_once(0, id);
    let retry = team.read(b.port, &a.outside).1;
    assert_eq!(retry["decision"], "allow", "{retry}");
    assert_eq!(retry["grants_used"], json!([grant]), "{retry}");
    assert_eq!(
        team.read(b.port, &a.outside).1["decision"],
        "ask",
        "once means once, on any replica"
    );

    // One audit chain, the same from either replica.
    let (on_a, on_b) = (
        team.person(0, "GET", "/v1/audit/verify", None),
        team.person(1, "GET", "/v1/audit/verify", None),
    );
    assert_eq!(on_a, on_b);
    assert_eq!(on_a["status"], "intact", "{on_a}");
    assert!(on_a["rows"].as_u64().unwrap() >= 3, "{on_a}");
}

#[test]
fn a_replica_killed_mid_stream_loses_nothing_and_uses_no_grant_twice() {
    const FILES: usize = 12;
    // Reads of each file, half through A, half through B, all at once.
    const READS: usize = 8;
    let url = postgres_cluster::fresh_database();
    let mut team = Team::start(&url, 2);
    let (pa, pb) = (team.replicas[0].port, team.replicas[1].port);
    // A once-grant for each of FILES files outside the workspace.
    let files: Vec<_> = (0..FILES)
        .map(|i| {
            let f = team.replicas[0].outside.with_file_name(format!("f{i}.txt"));
            std::fs::write(&f, "x\n").unwrap();
            f
        })
        .collect();
    for f in &files {
        let (_, asked) = team.read(pb, f);
        assert_eq!(asked["decision"], "ask", "{asked}");
        team.allow_once(1, asked["request"]["id"].as_i64().unwrap());
    }
    // Each file read READS times at once; A is killed (SIGKILL) while the
    // reads are in flight.
    let (auth, cwd) = (team.session_auth.clone(), team.replicas[0].work.clone());
    let pid_a = rustix::process::Pid::from_raw(team.replicas[0].child.id() as i32).unwrap();
    let answered_by_a = AtomicUsize::new(0);
    let answers = std::thread::scope(|scope| {
        let (auth, cwd, answered_by_a) = (&auth, &cwd, &answered_by_a);
        let handles: Vec<_> = files
            .iter()
            .flat_map(|f| {
                [pa, pb]
                    .repeat(READS / 2)
                    .into_iter()
                    .map(|port| (f.clone(), port))
            })
            .map(|(f, port)| {
                scope.spawn(move || {
                    let answer = read_as(auth, cwd, port, &f);
                    if port == pa && answer.0 == 200 {
                        answered_by_a.fetch_add(1, SeqCst);
                    }
                    (f, port, answer)
                })
            })
            .collect();
        // Killed (SIGKILL) once it has answered a few, with the rest in flight.
        let deadline = Instant::now() + Duration::from_secs(10);
        while answered_by_a.load(SeqCst) < 2 && Instant::now() < deadline {
            std::thread::yield_now();
        }
        rustix::process::kill_process(pid_a, rustix::process::Signal::KILL).unwrap();
        handles
            .into_iter()
            .map(|h| h.join().unwrap())
            .collect::<Vec<_>>()
    });
    let _ = team.replicas[0].child.wait();
    let by_a = answered_by_a.load(SeqCst);
    assert!(by_a >= 2, "A answered {by_a} before it was killed");
    assert!(
        by_a < FILES * READS / 2,
        "A answered all {by_a} before it was killed"
    );
    for f in &files {
        let allowed = answers
            .iter()
            .filter(|(g, _, (_, a))| g == f && a["decision"] == "allow")
            .count();
        assert!(
            allowed <= 1,
            "{} allowed {allowed} times: a once-grant used twice",
            f.display()
        );
    }
    // B goes on ...
    let (status, after) = team.read(pb, &files[0]);
    assert_eq!(status, 200, "{after}");
    assert_ne!(after["decision"], "allow", "{after}");
    // ... and what the answers said was committed is there: every grant an
    // allow used is consumed, in the database itself.
    let mut db = postgres::Client::connect(&url, postgres::NoTls).unwrap();
    for (f, _, (_, a)) in answers
        .iter()
        .filter(|(_, _, (_, a))| a["decision"] == "allow")
    {
        let used = a["grants_used"][0].as_i64().unwrap();
        let row = db
            .query_one("SELECT consumed_at FROM grants WHERE id = $1", &[&used])
            .unwrap_or_else(|e| panic!("grant {used} for {}: {e}", f.display()));
        assert!(
            row.get::<_, Option<i64>>(0).is_some(),
            "grant {used} unused"
        );
    }
    let chain = team.person(1, "GET", "/v1/audit/verify", None);
    assert_eq!(chain["status"], "intact", "{chain}");
    team.replicas.remove(0);
}

#[test]
fn while_postgres_is_away_decisions_are_refused_and_resume_when_it_is_back() {
    let server = postgres_cluster::Server::start().unwrap();
    let url = postgres_cluster::create_database(&server.base);
    let team = Team::start(&url, 2);
    let (a, b) = (&team.replicas[0], &team.replicas[1]);
    let (_, first) = team.read(b.port, &a.outside);
    assert_eq!(first["decision"], "ask", "{first}");
    let id = first["request"]["id"].as_i64().unwrap();

    server.stop();
    for s in [a, b] {
        let (status, answer) = team.read(s.port, &a.outside);
        assert_ne!(answer["decision"], "allow", "{status} {answer}");
        assert!(
            status >= 500 || answer["decision"] == "deny",
            "PostgreSQL away: {status} {answer}"
        );
    }

    server.resume().unwrap();
    // The next decision reconnects: the same pending request, asked again.
    let deadline = Instant::now() + Duration::from_secs(20);
    let again = loop {
        let (status, answer) = team.read(b.port, &a.outside);
        if status == 200 && answer["decision"] == "ask" {
            break answer;
        }
        assert!(
            Instant::now() < deadline,
            "never resumed: {status} {answer}"
        );
        std::thread::sleep(Duration::from_millis(200));
    };
    assert_eq!(again["request"]["id"].as_i64(), Some(id), "{again}");
    let grant = team.allow_once(0, id);
    let allowed = team.read(b.port, &a.outside).1;
    assert_eq!(allowed["grants_used"], json!([grant]), "{allowed}");
}

#[test]
fn a_replica_refuses_a_database_with_a_newer_schema() {
    let url = postgres_cluster::fresh_database();
    migrated(&url);
    postgres::Client::connect(&url, postgres::NoTls)
        .unwrap()
        .batch_execute("UPDATE portcullis_schema SET version = version + 1")
        .unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_portcullis"))
        .args(["serve", "--store", &url, "--addr", "127.0.0.1:0"])
        .env("PORTCULLIS_DATA_DIR", tempfile::tempdir().unwrap().path())
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{said}");
    let newer = portcullis_store::schema::current_version() + 1;
    assert!(said.contains(&format!("schema version {newer}")), "{said}");
    assert!(said.contains("upgrade portcullis"), "{said}");
}

/// Reads an open `/v1/events` stream until an event of `kind` whose data
/// mentions `needle` arrives, for at most 10 s; the event's text.
fn next_event(stream: &mut std::net::TcpStream, kind: &str, needle: &str) -> String {
    use std::io::Read;
    stream
        .set_read_timeout(Some(Duration::from_millis(200)))
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut seen = String::new();
    let mut buf = [0u8; 4096];
    while Instant::now() < deadline {
        if let Ok(n) = stream.read(&mut buf) {
            seen.push_str(&String::from_utf8_lossy(&buf[..n]));
        }
        // Events are separated by a blank line.
        if let Some(event) = seen
            .split("\n\n")
            .find(|e| e.contains(&format!("event: {kind}")) && e.contains(needle))
        {
            return event.to_owned();
        }
    }
    panic!("no `{kind}` event with {needle} in 10 s: {seen}");
}

#[test]
fn a_request_raised_through_one_replica_appears_live_in_the_others_event_stream() {
    use std::io::Write;
    let url = postgres_cluster::fresh_database();
    let team = Team::start(&url, 2);
    let (a, b) = (&team.replicas[0], &team.replicas[1]);
    // A browser's stream on B ...
    let mut on_b = std::net::TcpStream::connect(("127.0.0.1", b.port)).unwrap();
    write!(
        on_b,
        "GET /v1/events HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nAuthorization: {}\r\n\r\n",
        b.port,
        b.bearer()
    )
    .unwrap();
    // ... sees the request a call through A raised ...
    let (_, asked) = team.read(a.port, &a.outside);
    let id = asked["request"]["id"].as_i64().expect("a request");
    let new = next_event(&mut on_b, "request-new", &format!("\"id\":{id}"));
    assert!(new.contains("s1"), "{new}");
    // ... and A's approval of it.
    team.allow_once(0, id);
    next_event(&mut on_b, "request-resolved", &format!("\"id\":{id}"));
}

/// `portcullis device …` for the machine whose data directory is `data`.
fn device(data: &Path, args: &[&str], stdin: &str) -> std::process::Output {
    fed(
        Command::new(env!("CARGO_BIN_EXE_portcullis"))
            .arg("device")
            .args(args)
            .env("PORTCULLIS_DATA_DIR", data),
        stdin.as_bytes(),
    )
}

/// Where the test's machines live (`root/a`, `root/b` …), and a file
/// outside every one's workspace (`root/elsewhere.txt`), which a read asks.
fn machines() -> (tempfile::TempDir, std::path::PathBuf, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    let secret = root.join("elsewhere.txt");
    std::fs::write(&secret, "x\n").unwrap();
    (dir, root, secret)
}

/// Writes the person's own configuration on the machine `home`.
fn user_config(home: &Path, text: &str) {
    std::fs::create_dir_all(home.join(".config/portcullis")).unwrap();
    std::fs::write(home.join(".config/portcullis/config.toml"), text).unwrap();
}

/// A person enrols the machine whose data directory is `data` with
/// `server` as `name` (`person`: their login token); it must succeed.
#[track_caller]
fn enrolled(data: &Path, server: &str, name: &str, person: &str) {
    succeeded(&device(
        data,
        &["enroll", "--server", server, "--name", name],
        person,
    ));
}

#[test]
fn devices_are_enrolled_by_a_person_and_their_credential_only_asks() {
    use std::os::unix::fs::PermissionsExt;
    let url = postgres_cluster::fresh_database();
    let team = Team::start(&url, 1);
    let s = &team.replicas[0];
    let server = format!("http://127.0.0.1:{}", s.port);
    let machines = tempfile::tempdir().unwrap();
    let (a, b) = (machines.path().join("a"), machines.path().join("b"));

    // Without the person's token, or with a wrong one, nothing is enrolled.
    let refused = device(
        &a,
        &["enroll", "--server", &server, "--name", "laptop-a"],
        "nope\n",
    );
    let said = String::from_utf8_lossy(&refused.stderr);
    assert!(!refused.status.success(), "{said}");
    assert!(said.contains(&server), "{said}");
    assert!(!a.join("device.json").exists());
    // Two machines, each enrolled by the person.
    for (dir, name) in [(&a, "laptop-a"), (&b, "laptop-b")] {
        let out = device(
            dir,
            &["enroll", "--server", &server, "--name", name],
            &s.token,
        );
        let said = succeeded(&out);
        assert!(said.contains(name), "{said}");
        let file = dir.join("device.json");
        let mode = std::fs::metadata(&file).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600, "{}", file.display());
        let shown = device(dir, &["show"], "");
        let shown = String::from_utf8_lossy(&shown.stdout);
        assert!(shown.contains(name) && !shown.contains("pcd_"), "{shown}");
    }
    let credential = |dir: &Path| {
        let c: Value =
            serde_json::from_str(&std::fs::read_to_string(dir.join("device.json")).unwrap())
                .unwrap();
        c["token"].as_str().unwrap().to_owned()
    };
    let (token_a, token_b) = (credential(&a), credential(&b));
    // The same name again is refused.
    let again = device(
        &b,
        &["enroll", "--server", &server, "--name", "laptop-a"],
        &s.token,
    );
    assert!(!again.status.success());

    let ask = |token: &str| {
        let call = json!({"tool": "Bash", "origin": "core", "input": {"command": "git status"}, "cwd": s.work}).to_string();
        http(
            s.port,
            "POST",
            "/v1/decide",
            &[("X-Portcullis-Device", token)],
            Some(&call),
        )
    };
    assert_eq!(ask(&token_a).0, 200);
    assert_eq!(ask(&token_b).0, 200);
    let (status, _, text) = ask("pcd_0000");
    assert_eq!(status, 401, "{text}");
    assert!(text.contains("unknown-device"), "{text}");
    // A credential asks; it never lists, resolves or enrols.
    for (method, path, payload) in [
        ("GET", "/v1/requests", None),
        ("GET", "/v1/devices", None),
        (
            "POST",
            "/v1/requests/1/resolve",
            Some(r#"{"scope":"device"}"#),
        ),
        ("POST", "/v1/devices", Some(r#"{"name":"sneaky"}"#)),
    ] {
        let bearer = format!("Bearer {token_a}");
        let (status, _, text) = s.request(method, path, &[("Authorization", &bearer)], payload);
        assert_eq!(
            status, 401,
            "{method} {path} with a device credential: {text}"
        );
    }
    // Revoked by the person: that machine's credential stops; the other's goes on.
    let listed = team.person(0, "GET", "/v1/devices", None);
    assert_eq!(listed.as_array().unwrap().len(), 2, "{listed}");
    team.person(0, "DELETE", "/v1/devices/laptop-a", None);
    assert_eq!(ask(&token_a).0, 401);
    assert_eq!(ask(&token_b).0, 200);
    // Both enrolments and the revocation are in the audit log, with who did them.
    let audit = team.person(0, "GET", "/v1/audit?kind=device-enrolled", None);
    assert_eq!(audit["rows"].as_array().unwrap().len(), 2, "{audit}");
    let revoked = team.person(0, "GET", "/v1/audit?kind=device-revoked", None);
    assert_eq!(
        revoked["rows"][0]["event"]["detail"]["device"], "laptop-a",
        "{revoked}"
    );
    let by = &revoked["rows"][0]["event"]["detail"]["by"];
    assert!(by.as_str().is_some_and(|b| !b.is_empty()), "{revoked}");
    assert_eq!(by, &audit["rows"][0]["event"]["detail"]["by"], "{audit}");
}

#[test]
fn a_device_s_call_is_judged_with_the_file_system_facts_it_reported() {
    let url = postgres_cluster::fresh_database();
    let team = Team::start(&url, 1);
    let s = &team.replicas[0];
    let token = team.enrol("laptop");
    // On the device, `keys` in the project is a symlink to the ssh keys.
    let facts = json!({
        "home": "/home/dev",
        "paths": [{
            "cwd": "/home/dev/proj",
            "fact": {
                "raw": "keys/id_ed25519", "canonical": "/home/dev/.ssh/id_ed25519",
                "zone": "external", "blocked": false, "blocked_write": false,
                "protected": null, "secret": "ssh keys", "hard_linked": false,
                "contains_protected": null
            }
        }]
    });
    let read = |file: &str, facts: Option<&Value>, device: Option<&str>| {
        let mut call = json!({
            "tool": "Read", "origin": "core",
            "input": {"file_path": file}, "cwd": "/home/dev/proj",
        });
        if let Some(f) = facts {
            call["facts"] = f.clone();
        }
        let headers: Vec<(&str, &str)> = device
            .map(|t| vec![("X-Portcullis-Device", t)])
            .unwrap_or_default();
        let (status, _, text) = http(
            s.port,
            "POST",
            "/v1/decide",
            &headers,
            Some(&call.to_string()),
        );
        (
            status,
            serde_json::from_str::<Value>(&text).unwrap_or(Value::Null),
        )
    };
    // Judged with this machine's files, the path is an ordinary workspace file ...
    let (_, here) = read("keys/id_ed25519", None, Some(&token));
    assert_eq!(here["decision"], "allow", "{here}");
    // ... judged with the device's, it is its ssh key.
    let (status, there) = read("keys/id_ed25519", Some(&facts), Some(&token));
    assert_eq!(status, 200, "{there}");
    assert_eq!(there["decision"], "ask", "{there}");
    // A path the device did not report is never allowed.
    let (_, unreported) = read("src/lib.rs", Some(&facts), Some(&token));
    assert_ne!(unreported["decision"], "allow", "{unreported}");
    // Facts come from an enrolled device only.
    let (status, _) = read("keys/id_ed25519", Some(&facts), None);
    assert_eq!(status, 400);
    let (status, _) = read("keys/id_ed25519", Some(&facts), Some("pcd_00"));
    assert_eq!(status, 401);
}

#[test]
fn a_device_s_sessions_are_its_own_and_an_approval_on_one_never_reaches_another() {
    let url = postgres_cluster::fresh_database();
    let team = Team::start(&url, 1);
    let s = &team.replicas[0];
    let (a, b) = (team.enrol("laptop-a"), team.enrol("laptop-b"));
    // Both machines' agents happen to use the same session id.
    let read = |device: Option<&str>, session: &str| {
        let call = json!({
            "tool": "Read", "origin": "core", "session": session,
            "input": {"file_path": s.outside}, "cwd": s.work,
        })
        .to_string();
        let headers: Vec<(&str, &str)> = device
            .map(|t| vec![("X-Portcullis-Device", t)])
            .unwrap_or_default();
        let (status, _, text) = http(s.port, "POST", "/v1/decide", &headers, Some(&call));
        assert_eq!(status, 200, "{text}");
        body(&text)
    };
    // A's call registers A's session and raises A's request ...
    let first = read(Some(&a), "shared-id");
    assert_eq!(first["decision"], "ask", "{first}");
    assert_eq!(first["session"], "laptop-a:shared-id", "{first}");
    let id = first["request"]["id"].as_i64().expect("a request");
    // ... which a person approves for A's session.
    team.person(
        0,
        "POST",
        &format!("/v1/requests/{id}/resolve"),
        Some(r#"{"scope":"session"}"#),
    );
    let again = read(Some(&a), "shared-id");
    assert_eq!(again["decision"], "allow", "{again}");
    // B's agent with the same id is another session: no grant of A's.
    let other = read(Some(&b), "shared-id");
    assert_eq!(other["session"], "laptop-b:shared-id", "{other}");
    assert_eq!(other["decision"], "ask", "{other}");
    // Nor can a caller without A's credential name A's session to use it.
    let naming = read(None, "laptop-a:shared-id");
    assert_ne!(naming["decision"], "allow", "{naming}");
}

/// `portcullis hook claude-code` on a machine (home `home`, data directory
/// `data`) governed by `server`: its reply's decision and reason, and how
/// long it took.
fn governed_hook(
    home: &Path,
    data: &Path,
    server: &str,
    session: &str,
    file: &Path,
) -> (String, String, Duration) {
    hook_on(
        env!("CARGO_BIN_EXE_portcullis"),
        &["hook", "claude-code"],
        home,
        data,
        Some(server),
        session,
        file,
    )
}

/// `program ARGS` as a Claude Code `PreToolUse` hook reading `file`, on the
/// machine `home` (data directory `data`), governed through the
/// environment by `server` if given (else by its configuration, or not).
fn hook_on(
    program: &str,
    args: &[&str],
    home: &Path,
    data: &Path,
    server: Option<&str>,
    session: &str,
    file: &Path,
) -> (String, String, Duration) {
    let payload = json!({
        "session_id": session, "transcript_path": "/dev/null", "cwd": home.join("proj"),
        "hook_event_name": "PreToolUse", "tool_name": "Read",
        "tool_input": {"file_path": file},
    });
    let started = Instant::now();
    let reply = run_hook(program, args, home, data, server, &payload, &[]);
    let took = started.elapsed();
    let said = &reply["hookSpecificOutput"];
    (
        said["permissionDecision"]
            .as_str()
            .unwrap_or_default()
            .to_owned(),
        said["permissionDecisionReason"]
            .as_str()
            .unwrap_or_default()
            .to_owned(),
        took,
    )
}

/// `program ARGS` fed the hook `payload` on the machine `home` (data
/// directory `data`, a workspace `proj`), governed through the environment
/// by `server` if given, with `env` added: its JSON reply.
fn run_hook(
    program: &str,
    args: &[&str],
    home: &Path,
    data: &Path,
    server: Option<&str>,
    payload: &Value,
    env: &[(&str, &str)],
) -> Value {
    std::fs::create_dir_all(home.join("proj/.git")).unwrap();
    let mut command = Command::new(program);
    command
        .args(args)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", home)
        .env("PORTCULLIS_DATA_DIR", data)
        .env("PORTCULLIS_MANAGED_CONFIG", home.join("none.toml"))
        .envs(env.iter().copied());
    if let Some(server) = server {
        command.env("PORTCULLIS_SERVER", server);
    }
    let out = fed(&mut command, payload.to_string().as_bytes());
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{e}: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

#[test]
fn a_hook_on_an_enrolled_machine_is_governed_by_the_team_server_and_refuses_when_it_is_away() {
    let url = postgres_cluster::fresh_database();
    let mut team = Team::start(&url, 1);
    let server = team.url(0);
    let (_machines, root, secret) = machines();
    let (home_a, home_b, home_c) = (root.join("a"), root.join("b"), root.join("c"));
    let data = |home: &Path| home.join("data");
    for (home, name) in [(&home_a, "laptop-a"), (&home_b, "laptop-b")] {
        std::fs::create_dir_all(home).unwrap();
        enrolled(&data(home), &server, name, &team.replicas[0].token);
    }
    // A's agent reads outside its workspace: the server's answer, with
    // the request in the server's queue under A's session.
    let (decision, reason, _) = governed_hook(&home_a, &data(&home_a), &server, "s1", &secret);
    assert_eq!(decision, "ask", "{reason}");
    let queue = team.person(0, "GET", "/v1/requests", None);
    assert_eq!(queue[0]["session"], "laptop-a:s1", "{queue}");
    let id = queue[0]["id"].as_i64().unwrap();
    team.person(
        0,
        "POST",
        &format!("/v1/requests/{id}/resolve"),
        Some(r#"{"scope":"session"}"#),
    );
    let (decision, reason, _) = governed_hook(&home_a, &data(&home_a), &server, "s1", &secret);
    assert_eq!(decision, "allow", "{reason}");
    // B's agent, same session id: A's approval is not B's.
    let (decision, reason, _) = governed_hook(&home_b, &data(&home_b), &server, "s1", &secret);
    assert_eq!(decision, "ask", "{reason}");
    // A machine that is not enrolled is refused, and told why.
    std::fs::create_dir_all(&home_c).unwrap();
    let (decision, reason, _) = governed_hook(&home_c, &data(&home_c), &server, "s1", &secret);
    assert_eq!(decision, "deny", "{reason}");
    assert!(reason.contains("not enrolled"), "{reason}");
    // The server away: refused, naming it, well within Claude Code's timeout.
    let _ = team.replicas[0].child.kill();
    let _ = team.replicas[0].child.wait();
    let (decision, reason, took) = governed_hook(&home_a, &data(&home_a), &server, "s1", &secret);
    assert_eq!(decision, "deny", "{reason}");
    assert!(reason.contains(&server), "{reason}");
    assert!(took < Duration::from_secs(30), "{took:?}");
    team.replicas.clear();
}

/// A team server off loopback speaks HTTPS: the hook's own client checks
/// its certificate against the CA file the machine was enrolled with (kept
/// in `device.json` as an absolute path, so the hook finds it from any
/// directory). A machine without that CA is refused at enrolment and, with a
/// credential but no CA, its hook is refused naming the server — never
/// decided locally, never retried over plain HTTP.
#[test]
fn a_governed_hook_over_https_trusts_only_the_ca_it_was_enrolled_with() {
    let root = tempfile::tempdir().unwrap();
    let base = std::fs::canonicalize(root.path()).unwrap();
    let (_, cert, key) = crate::support::pki::test_ca(&base);
    let port = crate::support::serve::free_port();
    std::fs::create_dir_all(base.join("server-home")).unwrap();
    std::fs::write(
        base.join("server.toml"),
        format!("mode = \"ask\"\n[server]\naddr = \"127.0.0.1:{port}\"\n"),
    )
    .unwrap();
    let mut command = Command::new(env!("CARGO_BIN_EXE_portcullis"));
    command
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", base.join("server-home"))
        .env("PORTCULLIS_DATA_DIR", base.join("server-data"))
        .env("PORTCULLIS_CONFIG", base.join("server.toml"))
        .env("PORTCULLIS_MANAGED_CONFIG", base.join("none.toml"))
        .stderr(std::process::Stdio::null());
    let (mut serve, login) = crate::support::serve::serve_and_login(
        command,
        &[
            "--tls-cert".as_ref(),
            cert.as_os_str(),
            "--tls-key".as_ref(),
            key.as_os_str(),
        ],
    );
    let person = login.rsplit_once("token=").unwrap().1.to_owned();
    let server = format!("https://127.0.0.1:{port}");
    let (home_a, home_b) = (base.join("a"), base.join("b"));
    let data = |home: &Path| home.join("data");
    std::fs::create_dir_all(&home_a).unwrap();
    std::fs::create_dir_all(&home_b).unwrap();
    let secret = base.join("elsewhere.txt");
    std::fs::write(&secret, "x\n").unwrap();

    // Enrolled with the CA file, named relative to where enrolment ran.
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let out = fed(
            Command::new(env!("CARGO_BIN_EXE_portcullis"))
                .args([
                    "device", "enroll", "--server", &server, "--name", "laptop-a",
                ])
                .args(["--ca-file", "ca.pem"])
                .env("PORTCULLIS_DATA_DIR", data(&home_a))
                .current_dir(&base),
            person.as_bytes(),
        );
        if out.status.success() {
            break;
        }
        let said = String::from_utf8_lossy(&out.stderr);
        assert!(Instant::now() < deadline, "{said}");
        std::thread::sleep(Duration::from_millis(100));
    }
    let (decision, reason, _) = governed_hook(&home_a, &data(&home_a), &server, "s1", &secret);
    assert_eq!(decision, "ask", "{reason}");
    assert!(reason.contains("outside"), "{reason}");

    // Without the CA, enrolment is refused for the certificate.
    let out = device(
        &data(&home_b),
        &["enroll", "--server", &server, "--name", "laptop-b"],
        &person,
    );
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{said}");
    assert!(said.contains("UnknownIssuer"), "{said}");
    // A's credential without its CA file: the hook is refused, naming the
    // server and the certificate, not judged here.
    let credential: Value =
        serde_json::from_slice(&std::fs::read(data(&home_a).join("device.json")).unwrap()).unwrap();
    assert!(credential["ca_file"].as_str().unwrap().starts_with('/'));
    let mut bare = credential.clone();
    bare.as_object_mut().unwrap().remove("ca_file");
    std::fs::create_dir_all(data(&home_b)).unwrap();
    let path = data(&home_b).join("device.json");
    std::fs::write(&path, bare.to_string()).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
    let (decision, reason, _) = governed_hook(&home_b, &data(&home_b), &server, "s1", &secret);
    assert_eq!(decision, "deny", "{reason}");
    assert!(
        reason.contains(&server) && reason.contains("UnknownIssuer"),
        "{reason}"
    );
    // The same server named over plain HTTP is not the one A enrolled with.
    let plain = format!("http://127.0.0.1:{port}");
    let (decision, reason, _) = governed_hook(&home_a, &data(&home_a), &plain, "s1", &secret);
    assert_eq!(decision, "deny", "{reason}");
    assert!(reason.contains("enrolled with https://"), "{reason}");
    let _ = serve.kill();
    let _ = serve.wait();
}

/// `[server] url` in the person's own configuration governs the machine as
/// `PORTCULLIS_SERVER` does — also when a `portcullis serve` of its own runs
/// beside the hook: that daemon answers that the call is the team server's,
/// and the hook (`portcullis-hook` and `portcullis hook` alike) asks the team
/// server.
#[test]
fn server_url_in_the_configuration_governs_the_machine_even_beside_a_local_daemon() {
    let url = postgres_cluster::fresh_database();
    let team = Team::start(&url, 1);
    let server = team.url(0);
    let (_machines, root, secret) = machines();
    let home = root.join("a");
    let data = home.join("data");
    user_config(&home, &format!("[server]\nurl = \"{server}\"\n"));
    enrolled(&data, &server, "laptop-a", &team.replicas[0].token);
    let hook = env!("CARGO_BIN_EXE_portcullis");
    let (decision, reason, _) = hook_on(
        hook,
        &["hook", "claude-code"],
        &home,
        &data,
        None,
        "s1",
        &secret,
    );
    assert_eq!(decision, "ask", "{reason}");
    let queue = team.person(0, "GET", "/v1/requests", None);
    assert_eq!(queue[0]["session"], "laptop-a:s1", "{queue}");
    let id = queue[0]["id"].as_i64().unwrap();
    team.person(
        0,
        "POST",
        &format!("/v1/requests/{id}/resolve"),
        Some(r#"{"scope":"session"}"#),
    );
    // The machine's own daemon, for the same data directory: its answer
    // would be an ask (it knows nothing of the approval on the team server).
    let local_port = crate::support::serve::free_port();
    let mut local = Command::new(hook)
        .args(["serve", "--addr"])
        .arg(format!("127.0.0.1:{local_port}"))
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", &home)
        .env("PORTCULLIS_DATA_DIR", &data)
        .env("PORTCULLIS_MANAGED_CONFIG", home.join("none.toml"))
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let started = Instant::now();
    while std::os::unix::net::UnixStream::connect(data.join("hook.sock")).is_err() {
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "no local daemon"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    for (program, args) in [
        (hook, &["hook", "claude-code"][..]),
        (env!("CARGO_BIN_EXE_portcullis-hook"), &["claude-code"][..]),
    ] {
        let (decision, reason, _) = hook_on(program, args, &home, &data, None, "s1", &secret);
        assert_eq!(decision, "allow", "{program}: {reason}");
    }
    // Nor does the machine's own daemon decide over HTTP, or `check`: the
    // team server decides this machine's calls.
    let person = std::fs::read_to_string(data.join("ui-token")).unwrap();
    let (status, _, text) = http(
        local_port,
        "POST",
        "/v1/decide",
        &[("Authorization", &format!("Bearer {}", person.trim()))],
        Some(
            &json!({"tool": "Read", "origin": "core", "input": {"file_path": secret},
                    "cwd": home.join("proj")})
            .to_string(),
        ),
    );
    assert_eq!(status, 200, "{text}");
    let answer = body(&text);
    assert_eq!(answer["decision"], "deny", "{answer}");
    assert_eq!(
        answer["reasons"][0]["code"], "governed-elsewhere",
        "{answer}"
    );
    let out = Command::new(hook)
        .args(["check", "--tool", "Read", "--input"])
        .arg(json!({"file_path": home.join("proj/README.md")}).to_string())
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", &home)
        .env("PORTCULLIS_DATA_DIR", &data)
        .env("PORTCULLIS_MANAGED_CONFIG", home.join("none.toml"))
        .current_dir(home.join("proj"))
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(said.contains("governed-elsewhere"), "{said}");
    // Without the credential the machine is still governed: refused, not
    // judged by the local daemon.
    std::fs::remove_file(data.join("device.json")).unwrap();
    let (decision, reason, _) = hook_on(
        hook,
        &["hook", "claude-code"],
        &home,
        &data,
        None,
        "s1",
        &secret,
    );
    assert_eq!(decision, "deny", "{reason}");
    assert!(reason.contains("not enrolled"), "{reason}");
    let _ = local.kill();
    let _ = local.wait();
}

/// With `on_ask = "hold"` a governed hook waits inside the agent's call
/// while a person on the team server decides: approved, the call is judged
/// again there and allowed; denied, refused saying so. The hold route takes
/// only the device's own requests: another device's is not found, and a
/// caller without a credential is refused.
#[test]
fn a_governed_hook_holds_the_call_until_a_person_on_the_team_server_decides() {
    let url = postgres_cluster::fresh_database();
    let team = Team::start(&url, 1);
    let server = team.url(0);
    let (_machines, root, secret) = machines();
    let home = root.join("a");
    let data = home.join("data");
    user_config(
        &home,
        "[agents.claude-code]\non_ask = \"hold\"\nhold_timeout_secs = 30\n",
    );
    enrolled(&data, &server, "laptop-a", &team.replicas[0].token);
    let other = team.enrol("laptop-b");

    // The person answers the pending request of session `session` with `scope`.
    let answer = |session: &str, scope: &str| {
        let deadline = Instant::now() + Duration::from_secs(20);
        let id = loop {
            let queue = team.person(0, "GET", "/v1/requests", None);
            let pending = queue.as_array().unwrap().iter().find(|r| {
                r["session"] == format!("laptop-a:{session}") && r["status"] == "pending"
            });
            if let Some(r) = pending {
                break r["id"].as_i64().unwrap();
            }
            assert!(Instant::now() < deadline, "no request: {queue}");
            std::thread::sleep(Duration::from_millis(50));
        };
        // Device B may not hold A's request.
        let (status, _, text) = team.replicas[0].request(
            "POST",
            &format!("/v1/device/requests/{id}/hold"),
            &[("X-Portcullis-Device", &other)],
            Some(r#"{"timeout_ms":10}"#),
        );
        assert_eq!(status, 404, "{text}");
        let (status, _, text) = team.replicas[0].request(
            "POST",
            &format!("/v1/device/requests/{id}/hold"),
            &[],
            Some(r#"{"timeout_ms":10}"#),
        );
        assert_eq!(status, 401, "{text}");
        team.person(
            0,
            "POST",
            &format!("/v1/requests/{id}/resolve"),
            Some(&json!({ "scope": scope }).to_string()),
        );
        id
    };
    for (session, scope, verdict) in [("s1", "session", "allow"), ("s2", "deny", "deny")] {
        let (h, d, s, f) = (home.clone(), data.clone(), server.clone(), secret.clone());
        let session_id = session.to_owned();
        let held = std::thread::spawn(move || governed_hook(&h, &d, &s, &session_id, &f));
        let id = answer(session, scope);
        let (decision, reason, took) = held.join().unwrap();
        assert_eq!(decision, verdict, "{scope}: {reason}");
        if verdict == "deny" {
            assert!(
                reason.contains(&format!("denied request #{id}")),
                "{reason}"
            );
        }
        assert!(took < Duration::from_secs(25), "{took:?}");
    }
}

/// A team server on SQLite is one store for every machine it judges for:
/// a device grant in it (a person's device-wide approval of the server's own
/// agent) must not reach an enrolled device's calls (DESIGN: device grants
/// stay on their device); the device's own request is its device's.
#[test]
fn the_servers_device_grants_never_reach_an_enrolled_device() {
    let served = Served::start();
    let (status, _, text) = served.request(
        "POST",
        "/v1/devices",
        &[("Authorization", &served.bearer())],
        Some(r#"{"name":"laptop-a"}"#),
    );
    assert_eq!(status, 201, "{text}");
    let device = body(&text)["token"].as_str().unwrap().to_owned();
    let (status, _, text) = served.request(
        "POST",
        "/v1/sessions",
        &[("Authorization", &served.bearer())],
        Some(&json!({"id": "s1", "agent": "claude-code", "cwd": served.work}).to_string()),
    );
    assert_eq!(status, 201, "{text}");
    let local = format!("Bearer {}", body(&text)["token"].as_str().unwrap());
    let call = json!({
        "tool": "Read", "origin": "core",
        "input": {"file_path": served.outside}, "cwd": served.work,
    })
    .to_string();
    let decide = |headers: &[(&str, &str)]| {
        let (status, _, text) = served.request("POST", "/v1/decide", headers, Some(&call));
        assert_eq!(status, 200, "{text}");
        body(&text)
    };
    // The server's own agent asks; a person approves device-wide.
    let first = decide(&[("X-Session-ID", "s1"), ("Authorization", &local)]);
    assert_eq!(first["decision"], "ask", "{first}");
    let id = first["request"]["id"].as_i64().unwrap();
    let (status, _, text) = served.request(
        "POST",
        &format!("/v1/requests/{id}/resolve"),
        &[("Authorization", &served.bearer())],
        Some(r#"{"scope":"device"}"#),
    );
    assert_eq!(status, 200, "{text}");
    let again = decide(&[("X-Session-ID", "s1"), ("Authorization", &local)]);
    assert_eq!(again["decision"], "allow", "{again}");
    // The enrolled device's same read: not covered by the server's grant.
    let remote = decide(&[("X-Session-ID", "s9"), ("X-Portcullis-Device", &device)]);
    assert_eq!(remote["decision"], "ask", "{remote}");
    assert_eq!(remote["request"]["device"], "laptop-a", "{remote}");
    // Nor can a caller without a credential report a device's approvals.
    let (status, _, text) = served.request(
        "POST",
        "/v1/decide",
        &[("X-Session-ID", "s1"), ("Authorization", &local)],
        Some(
            &json!({
                "tool": "Read", "input": {"file_path": "/etc/hostname"}, "cwd": served.work,
                "device_grants": [{"request": 1, "target": {"kind": "path", "canonical": "/", "folder": true}}],
            })
            .to_string(),
        ),
    );
    assert_eq!(status, 400, "{text}");
    assert!(text.contains("grants-without-device"), "{text}");
    // Nor a tool's manifest, which would make its path arguments reads.
    let (status, _, text) = served.request(
        "POST",
        "/v1/decide",
        &[("X-Session-ID", "s1"), ("Authorization", &local)],
        Some(
            &json!({
                "tool": "mcp__fs__write_file", "origin": "mcp", "server": "fs",
                "input": {"path": "/etc/passwd"}, "cwd": served.work,
                "manifest": {"filesystem": "read"},
            })
            .to_string(),
        ),
    );
    assert_eq!(status, 400, "{text}");
    assert!(text.contains("manifest-without-device"), "{text}");
}

/// The seed's security case with two machines: a person's device-wide
/// approval of laptop A's read is delivered to A and kept in A's own store —
/// no grant in the shared database — so A's other sessions read it too,
/// laptop B never does, and once A holds it the server applies it only
/// when A reports it (a fresh A is asked again).
#[test]
fn a_device_wide_approval_is_kept_on_the_device_that_asked_and_never_reaches_another() {
    let url = postgres_cluster::fresh_database();
    let team = Team::start(&url, 1);
    let server = team.url(0);
    let (_machines, root, secret) = machines();
    let (home_a, home_b) = (root.join("a"), root.join("b"));
    let data = |home: &Path| home.join("data");
    for (home, name) in [(&home_a, "laptop-a"), (&home_b, "laptop-b")] {
        std::fs::create_dir_all(home).unwrap();
        enrolled(&data(home), &server, name, &team.replicas[0].token);
    }
    let (decision, reason, _) = governed_hook(&home_a, &data(&home_a), &server, "s1", &secret);
    assert_eq!(decision, "ask", "{reason}");
    let queue = team.person(0, "GET", "/v1/requests", None);
    let request = &queue[0];
    assert_eq!(request["device"], "laptop-a", "{queue}");
    assert!(
        request["suggested"]
            .as_array()
            .unwrap()
            .iter()
            .any(|s| s == "device"),
        "{queue}"
    );
    let id = request["id"].as_i64().unwrap();
    let resolved = team.person(
        0,
        "POST",
        &format!("/v1/requests/{id}/resolve"),
        Some(r#"{"scope":"device"}"#),
    );
    assert!(resolved["grant"].is_null(), "{resolved}");
    let grants = team.person(0, "GET", "/v1/grants?all=true", None);
    assert_eq!(grants.as_array().unwrap().len(), 0, "{grants}");

    // A's retry is allowed, and A now keeps the approval in its own store.
    let (decision, reason, _) = governed_hook(&home_a, &data(&home_a), &server, "s1", &secret);
    assert_eq!(decision, "allow", "{reason}");
    assert!(reason.contains(&format!("request #{id}")), "{reason}");
    let local = rusqlite::Connection::open(data(&home_a).join("portcullis.db")).unwrap();
    let kept: Vec<(String, String)> = local
        .prepare("SELECT scope, approver FROM grants")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(kept.len(), 1, "{kept:?}");
    assert_eq!(kept[0].0, "device");
    assert!(
        kept[0].1.ends_with(&format!("on the team server {server}")),
        "{kept:?}"
    );
    // Device-wide: A's other session reads it (reporting what A keeps).
    let (decision, reason, _) = governed_hook(&home_a, &data(&home_a), &server, "s2", &secret);
    assert_eq!(decision, "allow", "{reason}");
    // B, same session id, same read: asked.
    let (decision, reason, _) = governed_hook(&home_b, &data(&home_b), &server, "s1", &secret);
    assert_eq!(decision, "ask", "{reason}");
    // Held by A now, the server no longer applies it on its own: A's call
    // without reporting it is asked, and nothing is delivered again.
    let credential: Value =
        serde_json::from_slice(&std::fs::read(data(&home_a).join("device.json")).unwrap()).unwrap();
    let call = json!({
        "tool": "Read", "origin": "core", "session": "s3",
        "input": {"file_path": secret}, "cwd": home_a.join("proj"),
    })
    .to_string();
    let (status, _, text) = team.replicas[0].request(
        "POST",
        "/v1/decide",
        &[("X-Portcullis-Device", credential["token"].as_str().unwrap())],
        Some(&call),
    );
    assert_eq!(status, 200, "{text}");
    let bare = body(&text);
    assert_eq!(bare["decision"], "ask", "{bare}");
    assert!(bare.get("deliveries").is_none(), "{bare}");
    // A fresh A (its store gone) is asked again.
    drop(local);
    std::fs::remove_file(data(&home_a).join("portcullis.db")).unwrap();
    let (decision, reason, _) = governed_hook(&home_a, &data(&home_a), &server, "s4", &secret);
    assert_eq!(decision, "ask", "{reason}");
}

/// The kernel stays the second line on a governed machine: a team server
/// whose configuration confines shell calls (`[confine] mode = "always"`)
/// answers a device's hook — which can rewrite the call — with the
/// confinement, and the hook rewrites the call into `portcullis run`.
#[test]
fn a_governed_hook_runs_a_shell_call_confined_when_the_team_server_says_so() {
    let served = Served::start_opts(|_| "[confine]\nmode = \"always\"\n".into(), &[], None);
    let server = format!("http://127.0.0.1:{}", served.port);
    let machine = tempfile::tempdir().unwrap();
    let home = std::fs::canonicalize(machine.path()).unwrap();
    let data = home.join("data");
    std::fs::create_dir_all(home.join("proj/.git")).unwrap();
    enrolled(&data, &server, "laptop-a", &served.token);
    let payload = json!({
        "session_id": "s1", "transcript_path": "/dev/null", "cwd": home.join("proj"),
        "hook_event_name": "PreToolUse", "tool_name": "Bash",
        "tool_input": {"command": "ls"},
    });
    let hook = env!("CARGO_BIN_EXE_portcullis");
    let reply = run_hook(
        hook,
        &["hook", "claude-code"],
        &home,
        &data,
        Some(&server),
        &payload,
        &[],
    );
    let said = &reply["hookSpecificOutput"];
    assert_eq!(said["permissionDecision"], "allow", "{reply}");
    let command = said["updatedInput"]["command"].as_str().unwrap_or_default();
    assert!(
        command.contains("portcullis") && command.contains(" run ") && command.contains("ls"),
        "{reply}"
    );
}

/// The README's one-command trial (`scripts/team-trial --check`): a
/// throwaway cluster, two replicas, a call asked through the second queued
/// on the first; everything removed after.
#[test]
fn the_one_command_trial_runs_two_replicas_as_one_service() {
    let script =
        std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../scripts/team-trial");
    let out = Command::new(&script)
        .arg("--check")
        .env("PORTCULLIS_BIN", env!("CARGO_BIN_EXE_portcullis"))
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let said = succeeded(&out);
    assert!(said.contains("replica 2: open the approval UI"), "{said}");
    assert!(said.contains("one service"), "{said}");
}

/// A team server that takes the connection and never answers: the governed
/// hook refuses within its budget, naming the server — never allows, and
/// never out-waits the agent.
#[test]
fn a_team_server_that_never_answers_is_a_refusal_within_the_hooks_budget() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let server = format!("http://127.0.0.1:{}", listener.local_addr().unwrap().port());
    // Accepts, reads, says nothing.
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for stream in listener.incoming().flatten() {
            held.push(stream);
        }
    });
    let machine = tempfile::tempdir().unwrap();
    let home = std::fs::canonicalize(machine.path()).unwrap();
    let data = home.join("data");
    std::fs::create_dir_all(&data).unwrap();
    let path = data.join("device.json");
    std::fs::write(
        &path,
        json!({"server": server, "name": "laptop-a", "token": "pcd_x"}).to_string(),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
    std::fs::set_permissions(&data, std::fs::Permissions::from_mode(0o700)).unwrap();
    let payload = json!({
        "session_id": "s1", "transcript_path": "/dev/null", "cwd": home.join("proj"),
        "hook_event_name": "PreToolUse", "tool_name": "Bash",
        "tool_input": {"command": "ls"},
    });
    let started = Instant::now();
    let hook = env!("CARGO_BIN_EXE_portcullis");
    let reply = run_hook(
        hook,
        &["hook", "claude-code"],
        &home,
        &data,
        Some(&server),
        &payload,
        &[("PORTCULLIS_HOOK_BUDGET_MS", "1500")],
    );
    let took = started.elapsed();
    let said = &reply["hookSpecificOutput"];
    assert_eq!(said["permissionDecision"], "deny", "{reply}");
    let reason = said["permissionDecisionReason"]
        .as_str()
        .unwrap_or_default();
    assert!(reason.contains(&server), "{reason}");
    assert!(took < Duration::from_secs(5), "{took:?}");
}
