//! `portcullis serve` as a user runs it: the real binary on a loopback port,
//! refusals from `portcullis check --session …` arriving as requests,
//! approval over the API, and the agent-side defences of the approval API.

// Test code: a failed unwrap, index or panic is a failed test.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

use crate::support;

use serde_json::{Value, json};
use support::serve::Served;

fn json_body(body: &str) -> Value {
    serde_json::from_str(body).unwrap_or_else(|e| panic!("not JSON ({e}): {body}"))
}

#[test]
fn a_refused_check_becomes_a_request_and_an_approval_lets_the_retry_through() {
    let s = Served::start();
    s.register("s1");
    let first = s.check_outside_read("s1");
    assert_eq!(first["decision"], "ask", "{first}");
    let id = first["request"]["id"].as_i64().expect("a request");

    let auth = s.bearer();
    let (status, _, body) = s.request("GET", "/v1/requests", &[("Authorization", &auth)], None);
    assert_eq!(status, 200, "{body}");
    let list = json_body(&body);
    assert_eq!(list[0]["id"].as_i64(), Some(id));
    // The request is the whole call: the path as the agent named it, and
    // the read it refused, resolved.
    assert_eq!(list[0]["target"]["kind"], "call", "{list}");
    let effects = list[0]["target"]["effects"].as_array().expect("effects");
    assert_eq!(effects.len(), 1, "{list}");
    assert_eq!(
        effects[0]["what"],
        format!("read {}", s.outside.display()),
        "{list}"
    );

    let (status, _, body) = s.request(
        "POST",
        &format!("/v1/requests/{id}/resolve"),
        &[("Authorization", &auth)],
        Some(r#"{"scope":"once"}"#),
    );
    assert_eq!(status, 200, "{body}");
    let grant = json_body(&body)["grant"]["id"].as_i64().unwrap();

    let retry = s.check_outside_read("s1");
    assert_eq!(retry["decision"], "allow", "{retry}");
    assert_eq!(retry["grants_used"], json!([grant]));
    assert_eq!(
        s.check_outside_read("s1")["decision"],
        "ask",
        "once means once"
    );
}

#[test]
fn decide_over_http_has_the_shape_of_check() {
    let s = Served::start();
    let call = json!({"tool": "Bash", "origin": "core", "input": {"command": "git status && rm -rf build"}, "cwd": s.work});
    let (status, _, body) = s.request("POST", "/v1/decide", &[], Some(&call.to_string()));
    assert_eq!(status, 200, "{body}");
    let http = json_body(&body);
    let cli = s.cli_json(&[
        "check",
        "--tool",
        "Bash",
        "--origin",
        "core",
        "--input",
        &call["input"].to_string(),
    ]);
    for key in ["decision", "reasons", "effects"] {
        assert_eq!(http[key], cli[key], "{key}");
    }
}

#[test]
fn an_agents_curl_to_the_resolve_endpoint_is_denied_and_refused() {
    let s = Served::start();
    s.register("s1");
    let id = s.check_outside_read("s1")["request"]["id"]
        .as_i64()
        .unwrap();
    let curl = format!(
        "curl -s -o /dev/null -w '%{{http_code}}' -X POST -H 'Content-Type: application/json' -d '{{\"scope\":\"device\"}}' http://127.0.0.1:{}/v1/requests/{id}/resolve",
        s.port
    );
    // The policy denies it, even under a wildcard allow.
    let config = s.root.path().join("allow-all.toml");
    std::fs::write(
        &config,
        format!("mode = \"ask\"\n[permissions]\nallow = [\"Bash(*)\"]\n[server]\naddr = \"127.0.0.1:{}\"\n", s.port),
    )
    .unwrap();
    let input = json!({"command": curl}).to_string();
    let d = s.cli_json(&[
        "check",
        "--config",
        config.to_str().unwrap(),
        "--tool",
        "Bash",
        "--origin",
        "core",
        "--input",
        &input,
    ]);
    assert_eq!(d["decision"], "deny", "{d}");
    assert!(
        d["reasons"]
            .as_array()
            .unwrap()
            .iter()
            .any(|r| r["code"] == "approval-api"),
        "{d}"
    );

    // Run anyway, the server refuses it: no token.
    let out = std::process::Command::new("bash")
        .args(["-c", &curl])
        .output()
        .expect("bash and curl");
    assert_eq!(String::from_utf8_lossy(&out.stdout), "401");
    let auth = s.bearer();
    let (_, _, body) = s.request("GET", "/v1/requests", &[("Authorization", &auth)], None);
    assert_eq!(json_body(&body)[0]["status"], "pending", "still pending");

    // Nor may the agent run portcullis' own state commands.
    for cmd in [
        format!("portcullis requests resolve {id} --scope device"),
        "portcullis grants add --scope device --op read --path /".to_string(),
        "portcullis serve --addr 127.0.0.1:1".to_string(),
    ] {
        let input = json!({"command": cmd}).to_string();
        let d = s.cli_json(&[
            "check",
            "--config",
            config.to_str().unwrap(),
            "--tool",
            "Bash",
            "--origin",
            "core",
            "--input",
            &input,
        ]);
        assert_eq!(d["decision"], "deny", "{cmd}: {d}");
    }
}

#[test]
fn rebinding_and_cross_site_requests_are_refused_by_the_real_server() {
    let s = Served::start();
    let (status, _, body) = s.request("GET", "/healthz", &[("Host", "attacker.example:80")], None);
    assert_eq!(status, 403, "{body}");
    assert_eq!(json_body(&body)["code"], "bad-host");
    let auth = s.bearer();
    let (status, _, body) = s.request(
        "POST",
        "/v1/requests/1/resolve",
        &[
            ("Authorization", &auth),
            ("Origin", "http://attacker.example"),
        ],
        Some(r#"{"scope":"once"}"#),
    );
    assert_eq!(status, 403, "{body}");
    assert_eq!(json_body(&body)["code"], "bad-origin");
}

#[test]
fn the_login_token_is_private_and_stable_across_restarts() {
    use std::os::unix::fs::PermissionsExt;
    let s = Served::start();
    let file = s.root.path().join("data/ui-token");
    let mode = std::fs::metadata(&file).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
    assert_eq!(std::fs::read_to_string(&file).unwrap().trim(), s.token);
    let dir_mode = std::fs::metadata(s.root.path().join("data"))
        .unwrap()
        .permissions()
        .mode()
        & 0o777;
    assert_eq!(dir_mode, 0o700);

    // A second start on the same data directory prints the same token.
    use std::io::BufRead;
    let mut again = s
        .portcullis()
        .args(["serve", "--addr", "127.0.0.1:0"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let line = std::io::BufReader::new(again.stdout.take().unwrap())
        .lines()
        .map(|l| l.unwrap())
        .find(|l| l.starts_with("open the approval UI: "))
        .expect("the login URL");
    let _ = again.kill();
    let _ = again.wait();
    assert!(line.ends_with(&format!("token={}", s.token)), "{line}");
}

#[test]
fn serve_refuses_a_non_loopback_address() {
    let s = Served::start();
    let out = s
        .portcullis()
        .args(["serve", "--addr", "0.0.0.0:0"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("not a loopback address"));
}

/// A freedesktop notification server on the bus at `DBUS_ADDRESS` (python3
/// with `dbus` and `gi`): prints `ready`, then each notification's summary
/// and body.
const FAKE_NOTIFICATIONS: &str = r#"
import os, dbus, dbus.service, dbus.mainloop.glib
from gi.repository import GLib
dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
bus = dbus.bus.BusConnection(os.environ["DBUS_ADDRESS"])
name = dbus.service.BusName("org.freedesktop.Notifications", bus)
class Notifications(dbus.service.Object):
    @dbus.service.method("org.freedesktop.Notifications", in_signature="susssasa{sv}i", out_signature="u")
    def Notify(self, app, replaces, icon, summary, body, actions, hints, timeout):
        print("NOTIFY " + app + " | " + summary + " | " + body.replace("\n", " / ") + " | actions " + ",".join(actions), flush=True)
        # A person clicks it a moment later.
        if "default" in actions:
            GLib.timeout_add(1000, self.click)
        return 7
    def click(self):
        self.ActionInvoked(7, "default")
        return False
    @dbus.service.signal("org.freedesktop.Notifications", signature="us")
    def ActionInvoked(self, id, key):
        pass
Notifications(bus, "/org/freedesktop/Notifications")
print("ready", flush=True)
GLib.MainLoop().run()
"#;

/// The daemon announces a new request on the desktop itself (issue 16): with
/// a session D-Bus, a freedesktop notification naming the agent and the
/// project and carrying the card's address reaches the notification server.
#[test]
fn a_new_request_is_announced_over_the_session_dbus() {
    use std::io::BufRead;
    let mut bus = std::process::Command::new("dbus-daemon")
        .args(["--session", "--nofork", "--print-address"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("start a session bus (apt-get install -y dbus; scripts/test does)");
    let mut address = String::new();
    std::io::BufReader::new(bus.stdout.take().unwrap())
        .read_line(&mut address)
        .unwrap();
    let address = address.trim().to_string();
    assert!(address.starts_with("unix:"), "{address}");
    let mut server = std::process::Command::new("/usr/bin/python3")
        .args(["-c", FAKE_NOTIFICATIONS])
        .env("DBUS_ADDRESS", &address)
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("start the notification server (python3-dbus, python3-gi)");
    let (tx, rx) = std::sync::mpsc::channel::<String>();
    let out = server.stdout.take().unwrap();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(out).lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    let wait = std::time::Duration::from_secs(20);
    assert_eq!(rx.recv_timeout(wait).as_deref(), Ok("ready"));

    // The browser a click opens: a stand-in `xdg-open` that notes the address.
    let stubs = tempfile::tempdir().unwrap();
    let opened = stubs.path().join("opened.txt");
    let opener = stubs.path().join("xdg-open");
    std::fs::write(
        &opener,
        format!(
            "#!/bin/sh\nprintf '%s\\n' \"$1\" >> '{}'\n",
            opened.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&opener, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let path = format!(
        "{}:{}",
        stubs.path().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let s = Served::start_with_env(&[("DBUS_SESSION_BUS_ADDRESS", &address), ("PATH", &path)]);
    s.register("s1");
    let asked = s.check_outside_read("s1");
    let id = asked["request"]["id"].as_i64().expect("a request");
    let line = rx
        .recv_timeout(wait)
        .unwrap_or_else(|e| panic!("no notification reached the server: {e}"));
    assert!(line.starts_with("NOTIFY portcullis | "), "{line}");
    assert!(line.contains("claude-code asks in work"), "{line}");
    assert!(line.contains(&format!("/#request-{id}")), "{line}");
    assert!(
        line.ends_with("| actions default,Open the request"),
        "{line}"
    );
    // The click opens the card.
    let card = format!("http://127.0.0.1:{}/#request-{id}", s.port);
    let deadline = std::time::Instant::now() + wait;
    while std::fs::read_to_string(&opened).unwrap_or_default() != format!("{card}\n") {
        assert!(
            std::time::Instant::now() < deadline,
            "the click did not open {card}: {:?}",
            std::fs::read_to_string(&opened)
        );
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    let _ = server.kill();
    let _ = server.wait();
    let _ = bus.kill();
    let _ = bus.wait();
}

/// A request whose session has ended closes by itself while `serve` runs:
/// the daemon's watcher sweeps stale requests (an ended session's, or those
/// nothing asked for again in an hour), so the queue never shows what
/// nobody can use.
#[test]
fn an_ended_sessions_request_leaves_the_queue_by_itself() {
    let s = Served::start();
    let cwd = s.work.display().to_string();
    s.cli_json(&[
        "sessions", "register", "--id", "brief", "--cwd", &cwd, "--ttl", "2", "--json",
    ]);
    let first = s.check_outside_read("brief");
    let id = first["request"]["id"].as_i64().expect("a request");
    let auth = s.bearer();
    let pending = || {
        let (status, _, body) = s.request("GET", "/v1/requests", &[("Authorization", &auth)], None);
        assert_eq!(status, 200, "{body}");
        json_body(&body)
    };
    assert_eq!(pending()[0]["id"].as_i64(), Some(id));
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while pending().as_array().is_some_and(|l| !l.is_empty()) {
        assert!(
            std::time::Instant::now() < deadline,
            "the ended session's request is still pending: {}",
            pending()
        );
        std::thread::sleep(std::time::Duration::from_millis(250));
    }
    let (_, _, body) = s.request(
        "GET",
        "/v1/requests?all=true",
        &[("Authorization", &auth)],
        None,
    );
    let all = json_body(&body);
    assert_eq!(all[0]["status"], "denied", "{all}");
    assert_eq!(all[0]["resolved_by"], "expired: the session ended", "{all}");
}

/// Off loopback the server speaks HTTPS (issue 18): with `--tls-cert` and
/// `--tls-key` it serves TLS — the printed URL is `https://`, the login
/// cookie is `Secure`, a plain-HTTP request gets no page — and off loopback
/// without a certificate it refuses to start unless told plain HTTP is wanted.
#[test]
fn serve_speaks_https_and_refuses_plain_http_off_loopback() {
    let root = tempfile::tempdir().unwrap();
    let base = std::fs::canonicalize(root.path()).unwrap();
    let (ca, cert, key) = crate::support::pki::test_ca(&base);
    let port = support::serve::free_port();
    std::fs::create_dir_all(base.join("home")).unwrap();
    std::fs::write(
        base.join("config.toml"),
        format!("mode = \"ask\"\n[server]\naddr = \"127.0.0.1:{port}\"\n"),
    )
    .unwrap();
    let portcullis = || {
        let mut c = std::process::Command::new(env!("CARGO_BIN_EXE_portcullis"));
        c.env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", base.join("home"))
            .env("PORTCULLIS_DATA_DIR", base.join("data"))
            .env("PORTCULLIS_CONFIG", base.join("config.toml"))
            .env("PORTCULLIS_MANAGED_CONFIG", base.join("none.toml"))
            .current_dir(&base);
        c
    };

    // Off loopback, no certificate: refused, saying what to do.
    let out = portcullis()
        .args(["serve", "--addr", "0.0.0.0:0", "--allow-non-loopback"])
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{said}");
    assert!(
        said.contains("--tls-cert") && said.contains("in the clear"),
        "{said}"
    );

    let mut quiet = portcullis();
    quiet.stderr(std::process::Stdio::null());
    let (mut child, login) = support::serve::serve_and_login(
        quiet,
        &[
            "--tls-cert".as_ref(),
            cert.as_os_str(),
            "--tls-key".as_ref(),
            key.as_os_str(),
        ],
    );
    assert!(
        login.starts_with(&format!("https://127.0.0.1:{port}/login?token=")),
        "{login}"
    );
    let curl = |args: &[&str]| {
        std::process::Command::new("curl")
            .args(["-sS", "--max-time", "10"])
            .args(args)
            .output()
            .expect("curl (scripts/test installs it)")
    };
    let health = format!("https://127.0.0.1:{port}/healthz");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    let ok = loop {
        let out = curl(&[
            "--cacert",
            ca.to_str().unwrap(),
            "-o",
            "/dev/null",
            "-w",
            "%{http_code}",
            &health,
        ]);
        if String::from_utf8_lossy(&out.stdout) == "200" {
            break true;
        }
        if std::time::Instant::now() > deadline {
            break false;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    };
    assert!(ok, "no HTTPS answer from {health}");
    // The login sets a Secure cookie.
    let out = curl(&["--cacert", ca.to_str().unwrap(), "-i", &login]);
    let head = String::from_utf8_lossy(&out.stdout).to_ascii_lowercase();
    let cookie = head
        .lines()
        .find(|l| l.starts_with("set-cookie:"))
        .unwrap_or_else(|| panic!("no cookie: {head}"))
        .to_string();
    assert!(
        cookie.contains("; secure") && cookie.contains("httponly"),
        "{cookie}"
    );
    // Without the CA the certificate is not trusted; over plain HTTP there is no page.
    let out = curl(&[&health]);
    assert!(
        !out.status.success(),
        "an untrusted certificate was accepted"
    );
    let out = curl(&[
        "-o",
        "/dev/null",
        "-w",
        "%{http_code}",
        &format!("http://127.0.0.1:{port}/healthz"),
    ]);
    assert_ne!(
        String::from_utf8_lossy(&out.stdout),
        "200",
        "plain HTTP was served"
    );
    let _ = child.kill();
    let _ = child.wait();
}

/// People, not one shared token (issue 18): `[[server.users]]` names an
/// approver and a viewer, `portcullis users token` gives each a login of
/// their own (picked up by the running server), the viewer may look but not
/// resolve, the approver's resolution records their name, and a revoked
/// token stops working.
#[test]
fn users_have_their_own_logins_and_roles() {
    let s = Served::start_with(|_| {
        "[[server.users]]\nname = \"alice\"\nrole = \"approver\"\n\
         [[server.users]]\nname = \"bob\"\nrole = \"viewer\"\n"
            .to_string()
    });
    let token = |name: &str| {
        let out = s
            .portcullis()
            .args(["users", "token", name])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap().trim().to_string()
    };
    let alice = format!("Bearer {}", token("alice"));
    let bob = format!("Bearer {}", token("bob"));
    let out = s
        .portcullis()
        .args(["users", "token", "carol"])
        .output()
        .unwrap();
    assert!(!out.status.success(), "an unconfigured user got a token");
    s.register("s1");
    let id = s.check_outside_read("s1")["request"]["id"]
        .as_i64()
        .expect("a request");
    // The server reads new tokens within seconds.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while s
        .request("GET", "/v1/requests", &[("Authorization", &bob)], None)
        .0
        != 200
    {
        assert!(
            std::time::Instant::now() < deadline,
            "bob's token never worked"
        );
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
    let resolve = |auth: &str| {
        s.request(
            "POST",
            &format!("/v1/requests/{id}/resolve"),
            &[("Authorization", auth)],
            Some(r#"{"scope":"once"}"#),
        )
    };
    // The viewer looks, and is refused a resolution.
    let (status, _, body) = resolve(&bob);
    assert_eq!(status, 403, "{body}");
    assert_eq!(json_body(&body)["code"], "role", "{body}");
    let (status, _, body) = s.request("GET", "/v1/requests", &[("Authorization", &bob)], None);
    assert_eq!(
        (status, json_body(&body)[0]["status"].as_str()),
        (200, Some("pending"))
    );
    // The viewer's own login link works for pages.
    let (status, headers, _) = s.request(
        "GET",
        &format!("/login?token={}", bob.trim_start_matches("Bearer ")),
        &[],
        None,
    );
    assert_eq!(status, 303);
    let cookie = headers
        .iter()
        .find(|(k, v)| k == "set-cookie" && v.starts_with("portcullis_ui="))
        .map(|(_, v)| v.split(';').next().unwrap().to_string())
        .expect("a login cookie");
    // Bob's page carries his own CSRF token; his form post is refused all the same.
    let (status, _, page) = s.request("GET", "/", &[("Cookie", &cookie)], None);
    assert_eq!(status, 200, "{page}");
    let csrf = page
        .split("name=\"csrf\" content=\"")
        .nth(1)
        .and_then(|rest| rest.split('"').next())
        .expect("the page's CSRF token")
        .to_string();
    let origin = format!("http://127.0.0.1:{}", s.port);
    let (status, _, body) = s.request(
        "POST",
        &format!("/ui/requests/{id}/resolve"),
        &[
            ("Cookie", &cookie),
            ("Origin", &origin),
            ("Content-Type", "application/x-www-form-urlencoded"),
        ],
        Some(&format!("csrf={csrf}&scope=once")),
    );
    assert_eq!(status, 403, "a viewer's form resolved a request: {body}");
    assert!(
        body.contains("viewer"),
        "refused for another reason: {body}"
    );
    // The approver resolves, under their name.
    let (status, _, body) = resolve(&alice);
    assert_eq!(status, 200, "{body}");
    assert_eq!(
        json_body(&body)["request"]["resolved_by"],
        "api:alice",
        "{body}"
    );
    // A stranger's token is nobody's.
    let (status, _, _) = s.request(
        "GET",
        "/v1/requests",
        &[("Authorization", "Bearer 00ff")],
        None,
    );
    assert_eq!(status, 401);
    // Revoked: alice's token stops working within seconds.
    let out = s
        .portcullis()
        .args(["users", "revoke", "alice"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while s
        .request("GET", "/v1/requests", &[("Authorization", &alice)], None)
        .0
        != 401
    {
        assert!(
            std::time::Instant::now() < deadline,
            "a revoked token still works"
        );
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
}
