//! The MCP bridge on the daemon: `/s/{session}/mcp/{name}` (Streamable HTTP)
//! in front of the real `@modelcontextprotocol/server-filesystem`, spoken to
//! as an HTTP MCP client would (JSON-RPC POSTs). The same session grant is
//! honoured over HTTP (path + token) and over stdio (`PORTCULLIS_SESSION`);
//! a header naming another session is refused.

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

fn server_bin() -> std::path::PathBuf {
    let p = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../e2e/node_modules/.bin/mcp-server-filesystem");
    assert!(p.exists(), "run `npm ci --prefix e2e` (scripts/test does)");
    p
}

/// The JSON-RPC message of a response body: plain JSON or an SSE `data:` line.
fn message(body: &str) -> Value {
    if let Ok(v) = serde_json::from_str(body) {
        return v;
    }
    body.lines()
        .filter_map(|l| l.strip_prefix("data:"))
        .filter_map(|d| serde_json::from_str::<Value>(d.trim()).ok())
        .find(|v| v.get("id").is_some())
        .unwrap_or_else(|| panic!("no JSON-RPC response in {body:?}"))
}

struct Client<'a> {
    s: &'a Served,
    path: String,
    auth: String,
    mcp_session: Option<String>,
    next: i64,
}

impl Client<'_> {
    fn post(
        &mut self,
        body: Value,
        extra: &[(&str, &str)],
    ) -> (u16, Vec<(String, String)>, String) {
        let mut headers: Vec<(&str, &str)> = vec![
            ("Accept", "application/json, text/event-stream"),
            ("Authorization", &self.auth),
            ("MCP-Protocol-Version", "2025-06-18"),
        ];
        let sid = self.mcp_session.clone();
        if let Some(id) = &sid {
            headers.push(("Mcp-Session-Id", id));
        }
        headers.extend_from_slice(extra);
        self.s
            .request("POST", &self.path, &headers, Some(&body.to_string()))
    }

    fn call(&mut self, method: &str, params: Value) -> Value {
        self.next += 1;
        let (status, headers, body) = self.post(
            json!({"jsonrpc": "2.0", "id": self.next, "method": method, "params": params}),
            &[],
        );
        assert_eq!(status, 200, "{method}: {body}");
        if let Some((_, id)) = headers.iter().find(|(k, _)| k == "mcp-session-id") {
            self.mcp_session = Some(id.clone());
        }
        message(&body)
    }

    fn start<'b>(s: &'b Served, session: &str, token: &str) -> Client<'b> {
        let mut c = Client {
            s,
            path: format!("/s/{session}/mcp/fs"),
            auth: format!("Bearer {token}"),
            mcp_session: None,
            next: 0,
        };
        let init = c.call(
            "initialize",
            json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "http-test", "version": "1"}}),
        );
        assert_eq!(
            init["result"]["serverInfo"]["name"], "portcullis-bridge:fs",
            "{init}"
        );
        let (status, _, body) = c.post(
            json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
            &[],
        );
        assert!(status == 202 || status == 200, "{status}: {body}");
        c
    }
}

fn read(c: &mut Client<'_>, path: &std::path::Path) -> Value {
    c.call(
        "tools/call",
        json!({"name": "read_text_file", "arguments": {"path": path}}),
    )["result"]
        .clone()
}

#[test]
fn one_grant_over_http_and_stdio_and_no_conflicting_sessions() {
    let s = Served::start_with(|base| {
        format!(
            "[[mcp.servers]]\nname = \"fs\"\ncommand = [{:?}, {:?}, {:?}]\ntrusted = true\nallow = [\"mcp__fs__read_text_file\"]\n",
            server_bin().display().to_string(),
            base.join("work").display().to_string(),
            base.join("elsewhere").display().to_string(),
        )
    });
    let reg = s.cli_json(&[
        "sessions",
        "register",
        "--id",
        "S",
        "--agent",
        "claude-code",
        "--json",
    ]);
    let token = reg["token"].as_str().unwrap().to_string();
    let inside = s.work.join("docs.txt");
    std::fs::write(&inside, "inside\n").unwrap();

    let mut c = Client::start(&s, "S", &token);
    let tools = c.call("tools/list", json!({}));
    assert!(
        tools["result"]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t["name"] == "read_text_file"),
        "{tools}"
    );
    let r = read(&mut c, &inside);
    assert_ne!(r["isError"], true, "{r}");
    assert!(r.to_string().contains("inside"));

    // Outside the workspace: refused for session S, with a request.
    let r = read(&mut c, &s.outside);
    assert_eq!(r["isError"], true, "{r}");
    assert_eq!(r["_meta"]["portcullis"]["decision"], "ask");
    let id = r["_meta"]["portcullis"]["request"]
        .as_i64()
        .expect("a request for S");
    let requests = s.cli_json(&["requests", "list", "--json"]);
    assert_eq!(requests[0]["session"], "S");
    s.cli_json(&[
        "requests",
        "resolve",
        &id.to_string(),
        "--scope",
        "session",
        "--json",
    ]);

    // The grant holds over HTTP…
    let r = read(&mut c, &s.outside);
    assert_ne!(r["isError"], true, "{r}");
    assert!(r.to_string().contains("outside the workspace"));

    // …and over stdio, for the same session named by the environment.
    let mut stdio = s.portcullis();
    stdio
        .env("PORTCULLIS_SESSION", "S")
        .args(["mcp-bridge", "--name", "fs"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null());
    let mut child = stdio.spawn().unwrap();
    {
        use std::io::{BufRead, BufReader, Write};
        let mut stdin = child.stdin.take().unwrap();
        let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
        for line in [
            json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "stdio", "version": "1"}}}),
            json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
            json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "read_text_file", "arguments": {"path": s.outside}}}),
        ] {
            writeln!(stdin, "{line}").unwrap();
        }
        let mut answer = Value::Null;
        for l in lines.by_ref() {
            let v: Value = serde_json::from_str(&l.unwrap()).unwrap();
            if v["id"] == 2 {
                answer = v;
                break;
            }
        }
        assert_ne!(
            answer["result"]["isError"], true,
            "stdio, same session, same grant: {answer}"
        );
        assert!(answer.to_string().contains("outside the workspace"));
    }
    let _ = child.kill();
    let _ = child.wait();

    // Another session in the header than in the path: refused, not picked.
    let (status, _, body) = c.post(
        json!({"jsonrpc": "2.0", "id": 99, "method": "tools/list", "params": {}}),
        &[("X-Session-ID", "T")],
    );
    assert_eq!(status, 409, "{body}");
    assert_eq!(
        serde_json::from_str::<Value>(&body).unwrap()["code"],
        "session-conflict"
    );

    // Without S's token the session is not proven: its grant does not apply.
    let mut stranger = Client::start(&s, "S", "not-the-token");
    let r = read(&mut stranger, &s.outside);
    assert_eq!(r["isError"], true, "{r}");
    // An unknown server name is a clear 404.
    let (status, _, body) = s.request("POST", "/s/S/mcp/nope", &[], Some("{}"));
    assert_eq!(status, 404, "{body}");
}

/// MCP over HTTP is decided by the daemon's decision thread under the
/// configuration as it is now, like `/v1/decide`: a deny rule added while
/// the server runs applies to the next call (after the policy cache's 2 s).
#[test]
fn a_configuration_change_applies_to_mcp_over_http() {
    let s = Served::start_with(|base| {
        format!(
            "[[mcp.servers]]\nname = \"fs\"\ncommand = [{:?}, {:?}]\ntrusted = true\nallow = [\"mcp__fs__read_text_file\"]\n",
            server_bin().display().to_string(),
            base.join("work").display().to_string(),
        )
    });
    let reg = s.cli_json(&["sessions", "register", "--id", "S", "--json"]);
    let token = reg["token"].as_str().unwrap().to_string();
    let inside = s.work.join("docs.txt");
    std::fs::write(&inside, "inside\n").unwrap();
    let mut c = Client::start(&s, "S", &token);
    let r = read(&mut c, &inside);
    assert_ne!(r["isError"], true, "{r}");

    let config = std::fs::canonicalize(s.root.path())
        .unwrap()
        .join("config.toml");
    let mut text = std::fs::read_to_string(&config).unwrap();
    text.push_str("\n[permissions]\ndeny = [\"mcp__fs__read_text_file\"]\n");
    std::fs::write(&config, text).unwrap();
    std::thread::sleep(std::time::Duration::from_millis(2_300));

    let r = read(&mut c, &inside);
    assert_eq!(r["isError"], true, "{r}");
    assert_eq!(r["_meta"]["portcullis"]["decision"], "deny", "{r}");
}

/// A session works in its own project: the daemon runs the server per
/// workspace (the session's recorded cwd), in that directory and under that
/// directory's configuration — not once under the daemon's own directory.
/// The filesystem server is told to serve `.`: each session's server serves
/// its own project, and a relative path is read there.
#[test]
fn each_session_gets_the_server_of_its_own_workspace() {
    let s = Served::start_with(|_| {
        format!(
            "[[mcp.servers]]\nname = \"fs\"\ncommand = [{:?}, \".\"]\nallow = [\"mcp__fs__read_text_file\"]\n",
            server_bin().display().to_string(),
        )
    });
    let base = std::fs::canonicalize(s.root.path()).unwrap();
    let mut clients = Vec::new();
    for project in ["alpha", "beta"] {
        let dir = base.join(project);
        std::fs::create_dir_all(dir.join(".git")).unwrap();
        std::fs::write(dir.join("which.txt"), format!("project {project}\n")).unwrap();
        let reg = s.cli_json(&[
            "sessions",
            "register",
            "--id",
            project,
            "--cwd",
            dir.to_str().unwrap(),
            "--json",
        ]);
        let token = reg["token"].as_str().unwrap().to_string();
        clients.push((project, token));
    }
    for (project, token) in &clients {
        let mut c = Client::start(&s, project, token);
        let r = c.call(
            "tools/call",
            json!({"name": "read_text_file", "arguments": {"path": "which.txt"}}),
        )["result"]
            .clone();
        assert_ne!(r["isError"], true, "{project}: {r}");
        assert!(
            r.to_string().contains(&format!("project {project}")),
            "session {project} did not get its own project's server: {r}"
        );
    }
    // A session without a recorded directory works in the daemon's own.
    std::fs::write(s.work.join("which.txt"), "project work\n").unwrap();
    let reg = s.cli_json(&["sessions", "register", "--id", "plain", "--json"]);
    let mut c = Client::start(&s, "plain", reg["token"].as_str().unwrap());
    let r = c.call(
        "tools/call",
        json!({"name": "read_text_file", "arguments": {"path": "which.txt"}}),
    )["result"]
        .clone();
    assert!(r.to_string().contains("project work"), "{r}");
}
