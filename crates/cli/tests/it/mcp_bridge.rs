//! `portcullis mcp-bridge` in front of real MCP servers from the npm registry
//! (`e2e/package.json`), driven by rmcp's client as an agent would:
//! `@modelcontextprotocol/server-filesystem` (reads in the workspace allowed,
//! reads outside refused with a request, writes under a deny rule refused,
//! the session-grant flow), `@modelcontextprotocol/server-everything` (the
//! whole tool list proxied intact), and a rug-pull server (`e2e/mcp/`) whose
//! changed tool is withheld until a person approves it.

// Test code: a failed unwrap, index or panic is a failed test.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use rmcp::model::{CallToolRequestParams, CallToolResult, Tool};
use rmcp::service::{NotificationContext, RunningService};
use rmcp::transport::TokioChildProcess;
use rmcp::{ClientHandler, RoleClient, ServiceExt};
use serde_json::{Value, json};

fn e2e() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../e2e")
}

fn bin(name: &str) -> PathBuf {
    let p = e2e().join("node_modules/.bin").join(name);
    assert!(
        p.exists(),
        "{} missing: run `npm ci --prefix e2e` (scripts/test does)",
        p.display()
    );
    p
}

/// The Python with the MCP SDK (`mcp==2.3.0`): `PORTCULLIS_TEST_PYTHON`, else
/// the virtual environment `scripts/test` creates (`target/test-venv`), else
/// `python3` from `PATH`.
fn python() -> PathBuf {
    if let Some(p) = std::env::var_os("PORTCULLIS_TEST_PYTHON").filter(|p| !p.is_empty()) {
        return PathBuf::from(p);
    }
    let venv = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target/test-venv/bin/python");
    if venv.exists() {
        return venv;
    }
    PathBuf::from("python3")
}

struct World {
    _tmp: tempfile::TempDir,
    root: PathBuf,
    work: PathBuf,
    outside: PathBuf,
}

impl World {
    fn new(config: &str) -> World {
        let tmp = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(tmp.path()).unwrap();
        let work = root.join("work");
        let outside = root.join("outside");
        std::fs::create_dir_all(work.join(".git")).unwrap();
        std::fs::create_dir_all(work.join("docs")).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        std::fs::create_dir_all(root.join("home")).unwrap();
        std::fs::write(work.join("docs/a.txt"), "inside the workspace\n").unwrap();
        std::fs::write(outside.join("notes.txt"), "outside the workspace\n").unwrap();
        std::fs::write(root.join("config.toml"), config).unwrap();
        World {
            _tmp: tmp,
            root,
            work,
            outside,
        }
    }

    /// `portcullis` with this world's home, configuration and data.
    fn portcullis(&self) -> std::process::Command {
        let mut c = std::process::Command::new(env!("CARGO_BIN_EXE_portcullis"));
        self.env(&mut c);
        c
    }

    fn env(&self, c: &mut std::process::Command) {
        c.env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", self.root.join("home"))
            .env("PORTCULLIS_DATA_DIR", self.root.join("data"))
            .env("PORTCULLIS_CONFIG", self.root.join("config.toml"))
            .env("PORTCULLIS_MANAGED_CONFIG", self.root.join("none.toml"))
            .current_dir(&self.work);
    }

    fn cli_json(&self, args: &[&str]) -> Value {
        let out = self.portcullis().args(args).output().unwrap();
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout).unwrap()
    }

    /// The bridge in front of `server…`, as an agent would launch it.
    async fn bridge(&self, extra: &[&str], server: &[&Path]) -> RunningService<RoleClient, Agent> {
        self.bridge_as(Agent::default(), extra, server).await
    }

    async fn bridge_as(
        &self,
        agent: Agent,
        extra: &[&str],
        server: &[&Path],
    ) -> RunningService<RoleClient, Agent> {
        let mut std = std::process::Command::new(env!("CARGO_BIN_EXE_portcullis"));
        self.env(&mut std);
        std.arg("mcp-bridge").args(extra);
        if !server.is_empty() {
            std.arg("--").args(server);
        }
        let mut cmd = tokio::process::Command::from(std);
        cmd.kill_on_drop(true);
        agent
            .serve(TokioChildProcess::new(cmd).expect("spawn the bridge"))
            .await
            .expect("the bridge completes the MCP handshake")
    }
}

/// The agent side: counts `notifications/tools/list_changed`; with
/// `answer`, it declares elicitation and answers every prompt with it.
#[derive(Clone, Default)]
struct Agent {
    list_changed: Arc<AtomicUsize>,
    answer: Option<bool>,
    prompts: Arc<std::sync::Mutex<Vec<String>>>,
}

impl ClientHandler for Agent {
    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.list_changed.fetch_add(1, Ordering::SeqCst);
    }

    fn get_info(&self) -> rmcp::model::ClientConfig {
        let mut info = rmcp::model::ClientConfig::default();
        if self.answer.is_some() {
            info.capabilities.elicitation = Some(Default::default());
        }
        info
    }

    async fn create_elicitation(
        &self,
        request: rmcp::model::ElicitRequestParams,
        _context: rmcp::service::RequestContext<RoleClient>,
    ) -> Result<rmcp::model::ElicitResult, rmcp::ErrorData> {
        let v = serde_json::to_value(&request).unwrap();
        self.prompts
            .lock()
            .unwrap()
            .push(v["message"].as_str().unwrap_or("").to_string());
        Ok(match self.answer {
            Some(allow) => rmcp::model::ElicitResult::new(rmcp::model::ElicitationAction::Accept)
                .with_content(json!({"allow": allow})),
            None => rmcp::model::ElicitResult::new(rmcp::model::ElicitationAction::Decline),
        })
    }
}

async fn call(c: &RunningService<RoleClient, Agent>, tool: &str, args: Value) -> CallToolResult {
    let params = CallToolRequestParams::new(tool.to_string())
        .with_arguments(args.as_object().cloned().unwrap_or_default());
    c.call_tool(params)
        .await
        .expect("a tool result, not a protocol error")
}

fn text(r: &CallToolResult) -> String {
    serde_json::to_value(&r.content).unwrap().to_string()
}

fn refused(r: &CallToolResult) -> bool {
    r.is_error == Some(true)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn filesystem_server_reads_allowed_refusals_are_tool_errors_and_grants_work() {
    let w = World::new(
        "mode = \"ask\"\n[permissions]\nallow = [\"mcp__fs__read_text_file\", \"mcp__fs__list_directory\"]\ndeny = [\"mcp__fs__write_file\"]\n",
    );
    let c = w
        .bridge(
            &["--name", "fs", "--session", "s1", "--trusted"],
            &[&bin("mcp-server-filesystem"), &w.work, &w.outside],
        )
        .await;
    let tools = c.list_all_tools().await.unwrap();
    assert!(
        tools.iter().any(|t| t.name == "read_text_file"),
        "{tools:?}"
    );

    // Inside the workspace: allowed, and the server's answer comes back.
    let inside = w.work.join("docs/a.txt");
    let r = call(&c, "read_text_file", json!({"path": inside})).await;
    assert!(!refused(&r), "{r:?}");
    assert!(text(&r).contains("inside the workspace"), "{r:?}");

    // Outside the workspace: a tool error the model can act on, with a request.
    let outside = w.outside.join("notes.txt");
    let r = call(&c, "read_text_file", json!({"path": outside})).await;
    assert!(refused(&r), "{r:?}");
    assert!(
        !text(&r).contains("outside the workspace\\n"),
        "nothing was read"
    );
    let meta = serde_json::to_value(&r.meta).unwrap();
    assert_eq!(meta["portcullis"]["decision"], "ask", "{meta}");
    assert_eq!(
        meta["io.modelcontextprotocol/authorization"]["remediation"],
        "available"
    );
    let request = meta["portcullis"]["request"]
        .as_i64()
        .expect("a request id");
    assert!(text(&r).contains(&format!("#{request}")));

    // A write under a deny rule: refused, not eligible, the file untouched.
    let target = w.work.join("docs/new.txt");
    let r = call(&c, "write_file", json!({"path": target, "content": "x"})).await;
    assert!(refused(&r));
    assert_eq!(
        serde_json::to_value(&r.meta).unwrap()["portcullis"]["decision"],
        "deny"
    );
    assert!(!target.exists());

    // A person allows the request for the session: the retry goes through.
    w.cli_json(&[
        "requests",
        "resolve",
        &request.to_string(),
        "--scope",
        "session",
        "--json",
    ]);
    let r = call(&c, "read_text_file", json!({"path": outside})).await;
    assert!(!refused(&r), "{r:?}");
    assert!(text(&r).contains("outside the workspace"));

    // Every call is audited under the session, with the MCP tool's full name.
    let rows = w.cli_json(&["audit", "tail", "--n", "50", "--json"]);
    let decisions: Vec<&Value> = rows
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["event"]["kind"] == "decision" || r["event"]["kind"] == "grant-used")
        .collect();
    assert_eq!(decisions.len(), 4, "{rows}");
    for d in &decisions {
        assert_eq!(d["event"]["session"], "s1");
        assert!(
            d["event"]["tool"]
                .as_str()
                .unwrap()
                .starts_with("mcp__fs__")
        );
    }
    c.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pinned_read_only_hint_makes_path_arguments_reads() {
    // The README's example as written: no `--trusted`, an allow rule naming
    // the read tool.
    let w = World::new(
        "mode = \"ask\"\n[permissions]\nallow = [\"mcp__fs__read_text_file\", \"mcp__fs__write_file\"]\n",
    );
    let c = w
        .bridge(
            &["--name", "fs", "--session", "s1"],
            &[&bin("mcp-server-filesystem"), &w.work],
        )
        .await;
    // `read_text_file` is annotated `readOnlyHint`: its path is a read, and a
    // read in the workspace passes under the allow rule.
    let r = call(
        &c,
        "read_text_file",
        json!({"path": w.work.join("docs/a.txt")}),
    )
    .await;
    assert!(!refused(&r), "{r:?}");
    // `write_file` is not: its path is a write, which needs what writes
    // always need (an `Edit` rule): refused in `ask` mode without one.
    let r = call(
        &c,
        "write_file",
        json!({"path": w.work.join("docs/new.txt"), "content": "x"}),
    )
    .await;
    assert!(refused(&r), "{r:?}");
    assert!(!w.work.join("docs/new.txt").exists());
    c.cancel().await.unwrap();
}

/// The definitions an agent sees, keyed by name.
fn by_name(tools: &[Tool]) -> std::collections::BTreeMap<String, Value> {
    tools
        .iter()
        .map(|t| (t.name.to_string(), serde_json::to_value(t).unwrap()))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn everything_server_tool_list_is_proxied_intact() {
    let w = World::new("mode = \"ask\"\n");
    let mut direct = tokio::process::Command::new(bin("mcp-server-everything"));
    direct
        .kill_on_drop(true)
        .current_dir(&w.work)
        .env("HOME", w.root.join("home"));
    let direct = Agent::default()
        .serve(TokioChildProcess::new(direct).unwrap())
        .await
        .expect("server-everything directly");
    let expected = by_name(&direct.list_all_tools().await.unwrap());
    assert!(expected.len() >= 5, "{expected:?}");
    let bridged = w
        .bridge(&["--name", "everything"], &[&bin("mcp-server-everything")])
        .await;
    let got = by_name(&bridged.list_all_tools().await.unwrap());
    assert_eq!(got, expected, "every tool, every field, through the bridge");
    // Nothing is allowed without a rule: a refusal, as a tool result.
    let r = call(&bridged, "echo", json!({"message": "hi"})).await;
    assert!(refused(&r), "{r:?}");
    direct.cancel().await.unwrap();
    bridged.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_changed_tool_is_withheld_until_a_person_approves_it() {
    let w = World::new("mode = \"ask\"\n[permissions]\nallow = [\"mcp__rug__*\"]\n");
    let node = std::path::PathBuf::from("node");
    let script = e2e().join("mcp/rug_pull_server.mjs");
    let c = w
        .bridge(&["--name", "rug", "--session", "s1"], &[&node, &script])
        .await;
    let agent = c.service().clone();

    let first = c.list_all_tools().await.unwrap();
    assert_eq!(first.len(), 2, "both tools pinned on first use: {first:?}");
    let r = call(&c, "echo", json!({"text": "hi"})).await;
    assert!(!refused(&r) && text(&r).contains("echo: hi"), "{r:?}");

    // The server changes `echo` and says so; the bridge re-checks and tells us.
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while agent.list_changed.load(Ordering::SeqCst) == 0 {
        assert!(
            std::time::Instant::now() < deadline,
            "no list_changed reached the agent"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let second = c.list_all_tools().await.unwrap();
    let names: Vec<&str> = second.iter().map(|t| t.name.as_ref()).collect();
    assert_eq!(names, ["stable"], "the changed tool is withheld");
    let r = call(&c, "echo", json!({"text": "hi"})).await;
    assert!(refused(&r) && text(&r).contains("withheld"), "{r:?}");

    // The person sees the pending definition and approves it: it is back.
    let pending = w.cli_json(&["mcp", "pins", "list", "--pending", "--json"]);
    let pin = &pending.as_array().unwrap()[0];
    assert_eq!(
        (pin["server"].as_str(), pin["tool"].as_str()),
        (Some("rug"), Some("echo"))
    );
    assert!(
        pin["definition"]["tool"]["description"]
            .as_str()
            .unwrap()
            .contains("<IMPORTANT>")
    );
    let hash = pin["hash"].as_str().unwrap();
    w.cli_json(&["mcp", "pins", "approve", "rug", "echo", hash, "--json"]);
    let third = c.list_all_tools().await.unwrap();
    assert_eq!(third.len(), 2, "{third:?}");
    assert!(!refused(&call(&c, "echo", json!({"text": "again"})).await));
    c.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_python_sdk_client_sees_the_same_bridge() {
    let w = World::new("mode = \"ask\"\n[permissions]\nallow = [\"mcp__fs__read_text_file\"]\n");
    let python = python();
    let mut c = std::process::Command::new(&python);
    w.env(&mut c);
    let inside = w.work.join("docs/a.txt");
    let outside = w.outside.join("notes.txt");
    c.arg(e2e().join("mcp/python_client.py"))
        .arg(&inside)
        .arg(&outside)
        .arg("--")
        .arg(env!("CARGO_BIN_EXE_portcullis"))
        .args([
            "mcp-bridge",
            "--name",
            "fs",
            "--session",
            "py",
            "--trusted",
            "--",
        ])
        .arg(bin("mcp-server-filesystem"))
        .arg(&w.work)
        .arg(&w.outside);
    let out = tokio::task::spawn_blocking(move || c.output())
        .await
        .unwrap()
        .unwrap();
    assert!(
        out.status.success(),
        "python client ({}; `scripts/test` installs mcp==2.3.0 into target/test-venv): {}",
        python.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["server"], "portcullis-bridge:fs");
    assert!(
        v["tools"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t == "read_text_file"),
        "{v}"
    );
    assert_eq!(v["calls"][0]["is_error"], false, "{v}");
    assert!(
        v["calls"][0]["text"]
            .as_str()
            .unwrap()
            .contains("inside the workspace")
    );
    assert_eq!(v["calls"][1]["is_error"], true, "{v}");
    assert_eq!(
        v["calls"][1]["meta"]["portcullis"]["decision"], "ask",
        "{v}"
    );
    assert!(
        v["calls"][1]["meta"]["portcullis"]["request"]
            .as_i64()
            .is_some()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_ask_becomes_the_clients_own_prompt_when_it_can_elicit() {
    let w = World::new("mode = \"ask\"\n[permissions]\nallow = [\"mcp__fs__read_text_file\"]\n");
    let outside = w.outside.join("notes.txt");
    let server = bin("mcp-server-filesystem");
    for (answer, expect_allowed) in [(true, true), (false, false)] {
        let agent = Agent {
            answer: Some(answer),
            ..Default::default()
        };
        let prompts = Arc::clone(&agent.prompts);
        let session = format!("elicit-{answer}");
        let c = w
            .bridge_as(
                agent,
                &["--name", "fs", "--session", &session, "--trusted"],
                &[&server, &w.work, &w.outside],
            )
            .await;
        let r = call(&c, "read_text_file", json!({"path": outside})).await;
        assert_eq!(!refused(&r), expect_allowed, "answer {answer}: {r:?}");
        let asked = prompts.lock().unwrap().clone();
        assert_eq!(asked.len(), 1, "{asked:?}");
        assert!(
            asked[0].contains("mcp__fs__read_text_file") && asked[0].contains("notes.txt"),
            "{asked:?}"
        );
        if expect_allowed {
            // Once: the next identical call asks again.
            let r = call(&c, "read_text_file", json!({"path": outside})).await;
            assert!(!refused(&r));
            assert_eq!(
                prompts.lock().unwrap().len(),
                2,
                "asked again: once means once"
            );
        }
        c.cancel().await.unwrap();
    }
}

/// The class "MCP arguments read with real zero trust", through the real
/// filesystem server: a bare `.env`, its absolute path in approve-for-me, a
/// `FILE:` URL and a path as an object key are judged as the secret they are.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_secret_named_any_way_in_the_arguments_is_refused() {
    let w = World::new(
        "mode = \"approve-for-me\"\n[permissions]\nallow = [\"mcp__fs__read_text_file\", \"mcp__fs__list_directory\"]\n",
    );
    std::fs::write(w.work.join(".env"), "TOKEN=s3cret\n").unwrap();
    std::fs::write(w.work.join("notes.txt"), "hello\n").unwrap();
    let c = w
        .bridge(
            &["--name", "fs", "--session", "zero-trust", "--trusted"],
            &[&bin("mcp-server-filesystem"), &w.work],
        )
        .await;
    let env = w.work.join(".env");
    for args in [
        json!({"path": ".env"}),
        json!({"path": env}),
        json!({"path": format!("FILE://{}", env.display())}),
        json!({"path": format!("{}\n", env.display())}),
        json!({"path": "notes.txt", "extra": {env.display().to_string(): true}}),
    ] {
        let r = call(&c, "read_text_file", args.clone()).await;
        assert!(refused(&r), "{args}: {r:?}");
        assert!(!text(&r).contains("s3cret"), "{args}: the secret came back");
    }
    // The workspace's ordinary files are still read.
    let r = call(
        &c,
        "read_text_file",
        json!({"path": w.work.join("notes.txt")}),
    )
    .await;
    assert!(!refused(&r) && text(&r).contains("hello"), "{r:?}");
    c.cancel().await.unwrap();
}

/// The class "a person sees what they approve": the prompt names every
/// operation and canonical target the judgement found, so padding in the
/// arguments cannot push a secret's path out of view.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_prompt_names_every_target_whatever_the_padding() {
    let w = World::new("mode = \"ask\"\n[permissions]\nallow = [\"mcp__fs__read_text_file\"]\n");
    let agent = Agent {
        answer: Some(false),
        ..Default::default()
    };
    let prompts = Arc::clone(&agent.prompts);
    let c = w
        .bridge_as(
            agent,
            &["--name", "fs", "--session", "padded", "--trusted"],
            &[&bin("mcp-server-filesystem"), &w.work, &w.outside],
        )
        .await;
    let secret = w.root.join("home/.aws/credentials");
    let padding = "x".repeat(5000);
    let r = call(
        &c,
        "read_text_file",
        json!({"a_padding": padding, "path": secret, "tail": "\n\tforged"}),
    )
    .await;
    assert!(refused(&r), "{r:?}");
    let asked = prompts.lock().unwrap().clone();
    assert_eq!(asked.len(), 1, "{asked:?}");
    assert!(
        asked[0].contains(".aws/credentials") && !asked[0].contains(&"x".repeat(100)),
        "the prompt must name the secret and not the padding: {}",
        asked[0]
    );
    c.cancel().await.unwrap();
}

/// Both protocol eras on the agent side: a 2026-07-28 client (no handshake,
/// `_meta` on every request, `server/discover`) gets answers, and nothing
/// but JSON-RPC lines ever reaches stdout.
#[test]
fn a_modern_client_without_a_handshake_is_served() {
    use std::io::{BufRead, BufReader, Write};
    let w = World::new("mode = \"ask\"\n");
    let mut c = w.portcullis();
    c.args(["mcp-bridge", "--name", "fs", "--"])
        .arg(bin("mcp-server-filesystem"))
        .arg(&w.work)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null());
    let mut child = c.spawn().unwrap();
    let meta = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "modern", "version": "1"}
    });
    let requests = [
        json!({"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": meta}}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {"_meta": meta}}),
        json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"_meta": meta, "name": "write_file", "arguments": {"path": w.work.join("x.txt"), "content": "x"}}}),
    ];
    let mut stdin = child.stdin.take().unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut answers = Vec::new();
    for r in &requests {
        writeln!(stdin, "{r}").unwrap();
        let line = lines.next().expect("an answer").unwrap();
        answers.push(serde_json::from_str::<Value>(&line).expect("only JSON-RPC on stdout"));
    }
    drop(stdin);
    let _ = child.kill();
    let _ = child.wait();
    assert!(
        answers[0]["result"]["supportedVersions"]
            .as_array()
            .unwrap()
            .iter()
            .any(|v| v == "2026-07-28"),
        "{}",
        answers[0]
    );
    assert!(
        answers[1]["result"]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t["name"] == "write_file")
    );
    assert_eq!(answers[2]["result"]["isError"], true, "{}", answers[2]);
    assert!(!w.work.join("x.txt").exists());
}

/// The 2026-07-28 ask: a modern client that declares elicitation gets an
/// `InputRequiredResult` (the approval form and a sealed `requestState`)
/// instead of a refusal; its retry with the person's accept and the state
/// runs the call. The state approves once: replayed, tampered with, or
/// answered with a decline, it approves nothing and the client is asked
/// again.
#[test]
fn a_modern_client_is_asked_with_input_required_and_a_sealed_state() {
    use std::io::{BufRead, BufReader, Write};
    let w = World::new("mode = \"ask\"\n");
    let mut c = w.portcullis();
    c.args(["mcp-bridge", "--name", "fs", "--session", "s1", "--"])
        .arg(bin("mcp-server-filesystem"))
        .arg(&w.work)
        .arg(&w.outside)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null());
    let mut child = c.spawn().unwrap();
    let meta = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}}},
        "io.modelcontextprotocol/clientInfo": {"name": "modern", "version": "1"}
    });
    let mut stdin = child.stdin.take().unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut next = 0;
    let mut ask = |params: Value| -> Value {
        next += 1;
        let r = json!({"jsonrpc": "2.0", "id": next, "method": "tools/call", "params": params});
        writeln!(stdin, "{r}").unwrap();
        let line = lines.next().expect("an answer").unwrap();
        serde_json::from_str::<Value>(&line).expect("only JSON-RPC on stdout")["result"].clone()
    };
    let notes = w.outside.join("notes.txt");
    let call = |extra: Value| {
        let mut p = json!({"_meta": meta, "name": "read_text_file", "arguments": {"path": notes}});
        if let (Some(p), Some(extra)) = (p.as_object_mut(), extra.as_object()) {
            p.extend(extra.clone());
        }
        p
    };
    let accept = |allow: bool| json!({"portcullis-approval": {"action": "accept", "content": {"allow": allow}}});
    let asked_again = |r: &Value| {
        r["resultType"] == "input_required" && !r.to_string().contains("outside the workspace\\n")
    };

    // 1. Asked, not refused: the form names the file; the state is opaque.
    let first = ask(call(json!({})));
    assert_eq!(first["resultType"], "input_required", "{first}");
    let form = &first["inputRequests"]["portcullis-approval"];
    assert_eq!(form["method"], "elicitation/create", "{first}");
    assert!(
        form["params"]["message"].to_string().contains("notes.txt"),
        "{first}"
    );
    let state = first["requestState"].as_str().unwrap().to_string();

    // 2. Declined: nothing runs; asked again.
    let r = ask(call(
        json!({"inputResponses": accept(false), "requestState": state}),
    ));
    assert!(asked_again(&r), "{r}");

    // 3. Tampered with: approves nothing.
    let mut forged = state.clone().into_bytes();
    let last = forged.len() - 2;
    forged[last] = if forged[last] == b'A' { b'B' } else { b'A' };
    let forged = String::from_utf8(forged).unwrap();
    let r = ask(call(
        json!({"inputResponses": accept(true), "requestState": forged}),
    ));
    assert!(asked_again(&r), "{r}");

    // 4. Accepted with the state: the call runs.
    let r = ask(call(
        json!({"inputResponses": accept(true), "requestState": state}),
    ));
    assert_ne!(r["isError"], true, "{r}");
    assert_ne!(r["resultType"], "input_required", "{r}");
    assert_eq!(r["content"][0]["text"], "outside the workspace\n", "{r}");

    // 5. The same state again: used up, asked again.
    let r = ask(call(
        json!({"inputResponses": accept(true), "requestState": state}),
    ));
    assert!(asked_again(&r), "{r}");
    drop(stdin);
    let _ = child.kill();
    let _ = child.wait();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_configured_server_runs_by_name_with_its_own_rules() {
    let w = World::new("");
    let config = format!(
        "mode = \"ask\"\n[[mcp.servers]]\nname = \"fs\"\ncommand = [{:?}, {:?}]\ntrusted = true\nallow = [\"mcp__fs__read_text_file\"]\ndeny = [\"mcp__fs__write_file\"]\n",
        bin("mcp-server-filesystem").display().to_string(),
        w.work.display().to_string(),
    );
    std::fs::write(w.root.join("config.toml"), config).unwrap();
    let c = w.bridge(&["--name", "fs", "--session", "cfg"], &[]).await;
    let r = call(
        &c,
        "read_text_file",
        json!({"path": w.work.join("docs/a.txt")}),
    )
    .await;
    assert!(
        !refused(&r),
        "trusted and allowed by the server's own rule: {r:?}"
    );
    let r = call(
        &c,
        "write_file",
        json!({"path": w.work.join("docs/b.txt"), "content": "x"}),
    )
    .await;
    assert_eq!(
        serde_json::to_value(&r.meta).unwrap()["portcullis"]["decision"],
        "deny"
    );
    c.cancel().await.unwrap();

    // A name with no entry and no command is a clear error, not a silent start.
    let out = w
        .portcullis()
        .args(["mcp-bridge", "--name", "nope"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("[[mcp.servers]] entry named `nope`"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tool_annotated_destructive_is_not_covered_by_a_wildcard() {
    let w = World::new("mode = \"approve-for-me\"\n[permissions]\nallow = [\"mcp__fs__*\"]\n");
    let c = w
        .bridge(
            &["--name", "fs", "--session", "s1", "--trusted"],
            &[&bin("mcp-server-filesystem"), &w.work],
        )
        .await;
    // read_text_file (readOnlyHint) is covered by the wildcard...
    let r = call(
        &c,
        "read_text_file",
        json!({"path": w.work.join("docs/a.txt")}),
    )
    .await;
    assert!(!refused(&r), "{r:?}");
    // ...write_file (destructiveHint) is not: it asks, with a request.
    let target = w.work.join("docs/new.txt");
    let r = call(&c, "write_file", json!({"path": target, "content": "x"})).await;
    assert!(refused(&r), "{r:?}");
    let meta = serde_json::to_value(&r.meta).unwrap();
    assert_eq!(meta["portcullis"]["decision"], "ask", "{meta}");
    assert!(
        meta["portcullis"]["reasons"]
            .as_array()
            .unwrap()
            .iter()
            .any(|x| x["code"] == "destructive-tool"),
        "{meta}"
    );
    assert!(!target.exists());
    c.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_ask_hold_keeps_the_call_waiting_for_a_person() {
    let w = World::new(
        "mode = \"ask\"\n[permissions]\nallow = [\"mcp__fs__read_text_file\"]\n[agents.mcp-bridge]\non_ask = \"hold\"\nhold_timeout_secs = 60\n",
    );
    let c = w
        .bridge(
            &["--name", "fs", "--session", "held", "--trusted"],
            &[&bin("mcp-server-filesystem"), &w.work, &w.outside],
        )
        .await;
    let outside = w.outside.join("notes.txt");
    let peer = c.peer().clone();
    let pending = tokio::spawn(async move {
        let params = CallToolRequestParams::new("read_text_file")
            .with_arguments(json!({"path": outside}).as_object().cloned().unwrap());
        peer.call_tool(params).await
    });
    // A person sees the request and allows it once; the held call continues.
    let id = loop {
        let list = w.cli_json(&["requests", "list", "--json"]);
        if let Some(id) = list
            .as_array()
            .unwrap()
            .first()
            .and_then(|r| r["id"].as_i64())
        {
            break id;
        }
        assert!(!pending.is_finished(), "the call must wait, not answer");
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert!(!pending.is_finished());
    // The bridge stored its deadline: the 60 s asked for, cut to end a
    // margin before an unknown client's 60 s tool timeout (54 s).
    let started = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64;
    let until = loop {
        let list = w.cli_json(&["requests", "list", "--json"]);
        if let Some(until) = list[0]["held_until"].as_i64() {
            break until;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert!(
        (48..=55).contains(&(until - started)),
        "the bridge holds for {} s",
        until - started
    );
    w.cli_json(&[
        "requests",
        "resolve",
        &id.to_string(),
        "--scope",
        "once",
        "--json",
    ]);
    let r = tokio::time::timeout(Duration::from_secs(20), pending)
        .await
        .expect("released")
        .unwrap()
        .unwrap();
    assert!(!refused(&r), "{r:?}");
    assert!(text(&r).contains("outside the workspace"));
    c.cancel().await.unwrap();
}

/// server-everything over Streamable HTTP on a free port: the child and
/// the port.
async fn everything_over_http(w: &World) -> (tokio::process::Child, u16) {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mut server = tokio::process::Command::new(bin("mcp-server-everything"));
    server
        .arg("streamableHttp")
        .env("HOME", w.root.join("home"))
        .env("PORT", port.to_string())
        .kill_on_drop(true)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    let child = server.spawn().unwrap();
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            std::time::Instant::now() < deadline,
            "server-everything never listened"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    (child, port)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_streamable_http_server_can_be_bridged_by_url() {
    let w = World::new("mode = \"ask\"\n[permissions]\nallow = [\"mcp__web__echo\"]\n");
    let (_server, port) = everything_over_http(&w).await;
    let url = format!("http://127.0.0.1:{port}/mcp");
    let c = w
        .bridge(&["--name", "web", "--session", "s1", "--url", &url], &[])
        .await;
    let tools = c.list_all_tools().await.unwrap();
    assert!(tools.iter().any(|t| t.name == "echo"), "{tools:?}");
    let r = call(&c, "echo", json!({"message": "over http"})).await;
    assert!(!refused(&r) && text(&r).contains("over http"), "{r:?}");
    // Another tool, no rule: refused before it reaches the server.
    let other = tools
        .iter()
        .find(|t| t.name != "echo")
        .unwrap()
        .name
        .to_string();
    let r = call(&c, &other, json!({})).await;
    assert!(refused(&r), "{r:?}");
    c.cancel().await.unwrap();
}

/// The seed's HTTPS downstream: a Streamable HTTP server behind TLS signed by
/// a test CA. With the CA (a configured `ca_file`, or the system's roots as
/// `SSL_CERT_FILE` names them) the bridge serves it; without, the bridge
/// refuses to start and says why — it never tries plain HTTP instead.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_https_server_is_bridged_with_its_ca_and_refused_without() {
    let pki = tempfile::tempdir().unwrap();
    let (ca, cert, key) = crate::support::pki::test_ca(pki.path());
    let probe = World::new("");
    let (_server, plain_port) = everything_over_http(&probe).await;
    let mut proxy = tokio::process::Command::new("node");
    proxy
        .arg(e2e().join("mcp/tls_proxy.mjs"))
        .args([&cert, &key])
        .arg(plain_port.to_string())
        .kill_on_drop(true)
        .stdout(std::process::Stdio::piped());
    let mut proxy = proxy.spawn().unwrap();
    let mut line = String::new();
    {
        use tokio::io::AsyncBufReadExt;
        let out = proxy.stdout.take().unwrap();
        tokio::io::BufReader::new(out)
            .read_line(&mut line)
            .await
            .unwrap();
    }
    let tls_port: u16 = line.trim().parse().expect("the proxy prints its port");
    let url = format!("https://127.0.0.1:{tls_port}/mcp");

    // A configured server with its CA file: served, and judged as always.
    let w = World::new(&format!(
        "mode = \"ask\"\n[[mcp.servers]]\nname = \"tls\"\nurl = \"{url}\"\nca_file = \"{}\"\nallow = [\"mcp__tls__echo\"]\n",
        ca.display()
    ));
    let c = w.bridge(&["--name", "tls", "--session", "s1"], &[]).await;
    let r = call(&c, "echo", json!({"message": "over https"})).await;
    assert!(!refused(&r) && text(&r).contains("over https"), "{r:?}");
    let r = call(&c, "get-env", json!({})).await;
    assert!(refused(&r), "{r:?}");
    c.cancel().await.unwrap();

    // The system's roots: the CA as `SSL_CERT_FILE` (what a machine whose
    // store holds the CA gives).
    let system = World::new("mode = \"ask\"\n[permissions]\nallow = [\"mcp__web__echo\"]\n");
    let mut std = system.portcullis();
    std.env("SSL_CERT_FILE", &ca).args([
        "mcp-bridge",
        "--name",
        "web",
        "--session",
        "s1",
        "--url",
        &url,
    ]);
    let mut cmd = tokio::process::Command::from(std);
    cmd.kill_on_drop(true);
    let c = Agent::default()
        .serve(TokioChildProcess::new(cmd).unwrap())
        .await
        .expect("the CA in the system's roots is trusted");
    let r = call(&c, "echo", json!({"message": "system roots"})).await;
    assert!(!refused(&r) && text(&r).contains("system roots"), "{r:?}");
    c.cancel().await.unwrap();

    // Without the CA: no handshake, a refusal naming the certificate.
    let out = system
        .portcullis()
        .args([
            "mcp-bridge",
            "--name",
            "web",
            "--session",
            "s1",
            "--url",
            &url,
        ])
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(
        stderr.contains(&url) && stderr.contains("certificate") && stderr.contains("UnknownIssuer"),
        "{stderr}"
    );

    // A CA file given for a plain-HTTP server is a mistake, said so.
    let out = system
        .portcullis()
        .args(["mcp-bridge", "--name", "web", "--url"])
        .arg(format!("http://127.0.0.1:{plain_port}/mcp"))
        .arg("--ca-file")
        .arg(&ca)
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && stderr.contains("https:// server only"),
        "{stderr}"
    );
}

/// A compromised server whose tools take no argument the bridge could judge:
/// unconfined it reads `~/.ssh/id_rsa` and plants a line in `~/.bashrc`;
/// behind `--confine` (and `confine = true` in its entry) the kernel stops both.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_confined_server_cannot_read_secrets_or_write_outside() {
    let config = "mode = \"ask\"\n[permissions]\nallow = [\"mcp__evil__*\"]\n";
    let node = std::path::PathBuf::from("node");
    let script = e2e().join("mcp/compromised_server.mjs");
    for confined in [false, true] {
        let w = World::new(config);
        let home = w.root.join("home");
        std::fs::create_dir_all(home.join(".ssh")).unwrap();
        std::fs::write(home.join(".ssh/id_rsa"), "KEYDATA\n").unwrap();
        std::fs::write(home.join(".bashrc"), "# rc\n").unwrap();
        let mut extra = vec!["--name", "evil", "--session", "s1"];
        if confined {
            extra.push("--confine");
        }
        let c = w.bridge(&extra, &[&node, &script]).await;
        let leak = call(&c, "status", json!({})).await;
        let plant = call(&c, "sync", json!({})).await;
        c.cancel().await.unwrap();
        let rc = std::fs::read_to_string(home.join(".bashrc")).unwrap();
        if confined {
            assert!(
                !text(&leak).contains("KEYDATA"),
                "confined, it read the key: {leak:?}"
            );
            assert!(text(&leak).contains("failed"), "{leak:?}");
            assert_eq!(rc, "# rc\n", "confined, it wrote ~/.bashrc: {plant:?}");
        } else {
            // The control: the same server unconfined does both.
            assert!(text(&leak).contains("KEYDATA"), "{leak:?}");
            assert!(rc.contains("curl x | sh"), "{plant:?}");
        }
    }
    // The same from the server's configuration entry.
    let w = World::new(&format!(
        "{config}[[mcp.servers]]\nname = \"evil\"\ncommand = [\"node\", {:?}]\nconfine = true\n",
        script.to_string_lossy()
    ));
    let home = w.root.join("home");
    std::fs::create_dir_all(home.join(".ssh")).unwrap();
    std::fs::write(home.join(".ssh/id_rsa"), "KEYDATA\n").unwrap();
    let c = w.bridge(&["--name", "evil", "--session", "s1"], &[]).await;
    let leak = call(&c, "status", json!({})).await;
    c.cancel().await.unwrap();
    assert!(!text(&leak).contains("KEYDATA"), "{leak:?}");
}

/// On a machine governed by a team server the bridge decides nothing
/// itself: a write the machine's own configuration allows is refused by the
/// server's deny rule, a read outside the workspace is asked in the server's
/// queue under the device's session, what the server allows is allowed, and
/// with the server gone every call is refused, naming it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_governed_bridge_is_decided_by_the_team_server() {
    use crate::support::serve::Served;
    let mut team = Served::start_opts(
        |_| {
            "[permissions]\nallow = [\"mcp__fs__list_directory\"]\ndeny = [\"mcp__fs__write_file\"]\n"
                .into()
        },
        &[],
        None,
    );
    let server = format!("http://127.0.0.1:{}", team.port);
    // The machine's own configuration would allow every call.
    let w = World::new("mode = \"approve-for-me\"\n[permissions]\nallow = [\"mcp__fs__*\"]\n");
    let out = crate::support::fed(
        w.portcullis().args([
            "device", "enroll", "--server", &server, "--name", "laptop-a",
        ]),
        team.token.as_bytes(),
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut bridge = std::process::Command::new(env!("CARGO_BIN_EXE_portcullis"));
    w.env(&mut bridge);
    bridge
        .env("PORTCULLIS_SERVER", &server)
        .args(["mcp-bridge", "--name", "fs", "--session", "s1", "--"])
        .arg(bin("mcp-server-filesystem"))
        .arg(&w.work)
        .arg(&w.outside);
    let mut bridge = tokio::process::Command::from(bridge);
    bridge.kill_on_drop(true);
    let c = Agent::default()
        .serve(TokioChildProcess::new(bridge).expect("spawn the bridge"))
        .await
        .expect("the bridge completes the MCP handshake");

    let target = w.work.join("docs/new.txt");
    let r = call(&c, "write_file", json!({"path": target, "content": "x"})).await;
    assert!(refused(&r), "{r:?}");
    assert!(text(&r).contains("mcp__fs__write_file"), "{r:?}");
    assert!(!target.exists());

    let r = call(&c, "list_directory", json!({"path": w.work.join("docs")})).await;
    assert!(!refused(&r), "{r:?}");
    assert!(text(&r).contains("a.txt"), "{r:?}");

    let r = call(
        &c,
        "read_text_file",
        json!({"path": w.outside.join("notes.txt")}),
    )
    .await;
    assert!(refused(&r), "{r:?}");
    let (status, _, queue) = team.request(
        "GET",
        "/v1/requests",
        &[("Authorization", &team.bearer())],
        None,
    );
    assert_eq!(status, 200, "{queue}");
    let queue: Value = serde_json::from_str(&queue).unwrap();
    assert!(
        queue
            .as_array()
            .unwrap()
            .iter()
            .any(|q| q["session"] == "laptop-a:s1" && q["tool"] == "mcp__fs__read_text_file"),
        "{queue}"
    );

    let _ = team.child.kill();
    let _ = team.child.wait();
    let r = call(&c, "list_directory", json!({"path": w.work.join("docs")})).await;
    assert!(refused(&r), "{r:?}");
    assert!(text(&r).contains(&server), "{r:?}");
    let _ = c.cancel().await;
}
