//! Gemini CLI end to end, with its real CLI (issue 6): `gemini -p --yolo` in
//! a throw-away project where `portcullis install gemini` put the `BeforeTool`
//! hook in `.gemini/settings.json`, against the scripted model server speaking
//! the Gemini API (`GOOGLE_GEMINI_BASE_URL`, API-key auth) and answering with
//! one fixed `run_shell_command` call.
//!
//! `--yolo` takes Gemini's own prompts out of the way (headless Gemini cannot
//! ask), so what runs is decided by the hook alone:
//! - allowed: `touch allowed-marker.txt` is allowed by the portcullis
//!   configuration → the file exists;
//! - denied: `touch denied-marker.txt` matches a portcullis deny rule → the
//!   hook blocks it, the file does not exist, and the model receives
//!   portcullis' reason in the `functionResponse`;
//! - control: the same denied call without the hook runs, so the blocked run
//!   proves the hook blocked it;
//! - both decisions are in portcullis' audit log.
//!
//! Needs the pinned CLI in `e2e/node_modules` (`npm ci --prefix e2e`); without
//! it this test fails and says so.

// Test code: a failed unwrap, index or panic is a failed test.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

use crate::harness;
use crate::model_server;

use std::path::Path;
use std::time::Duration;

use serde_json::{Value, json};

use harness::{ALLOWED, CONFIG, DENIED, Ran, World, agent_bin};
use model_server::{ModelServer, gemini_function_responses, tool_call};

const GEMINI_TIMEOUT: Duration = Duration::from_secs(120);

/// API-key auth (the key is a dummy: the server is local), no usage statistics.
fn gemini_settings(world: &World) {
    let dir = world.home.join(".gemini");
    std::fs::create_dir_all(&dir).expect("create ~/.gemini");
    let settings = json!({
        "security": {"auth": {"selectedType": "gemini-api-key"}},
        "privacy": {"usageStatisticsEnabled": false},
    });
    std::fs::write(dir.join("settings.json"), settings.to_string())
        .expect("write ~/.gemini/settings.json");
}

fn gemini(world: &World, bin: &Path, project: &Path, server: &ModelServer, name: &str) -> Ran {
    gemini_settings(world);
    gemini_with(world, bin, project, server, &[], name)
}

/// Gemini with `extra` arguments (`--resume latest`), the settings as they are.
fn gemini_with(
    world: &World,
    bin: &Path,
    project: &Path,
    server: &ModelServer,
    extra: &[&str],
    name: &str,
) -> Ran {
    let mut cmd = world.agent(bin, project);
    cmd.args(extra)
        .args([
            "-p",
            "Run the scripted command.",
            "--yolo",
            // A fixed model: `auto` would first ask a router model to choose.
            "-m",
            "gemini-2.5-flash",
        ])
        .env("TERM", "xterm-256color")
        .env("GEMINI_API_KEY", "test")
        .env("GOOGLE_GEMINI_BASE_URL", server.url())
        // Headless Gemini refuses an untrusted folder; this one is a scratch project.
        .env("GEMINI_CLI_TRUST_WORKSPACE", "true");
    world.run(&mut cmd, name, GEMINI_TIMEOUT)
}

fn context(what: &str, ran: &Ran, server: &ModelServer) -> String {
    harness::context("gemini", what, ran, &server.summary())
}

/// The `functionResponse` the model received for the scripted call.
fn scripted_function_response(server: &ModelServer) -> Option<Value> {
    server
        .requests()
        .iter()
        .flat_map(|r| gemini_function_responses(&r.body))
        .find(|f| f["name"] == "run_shell_command")
}

#[test]
fn gemini_runs_the_allowed_call_and_blocks_the_denied_one() {
    let (bin, version) = agent_bin("Gemini CLI", "gemini");
    eprintln!("Gemini CLI {version} at {}", bin.display());
    let world = World::new("gemini-e2e", CONFIG);

    // Control: with `--yolo` and no hook, the denied command runs.
    let control = world.project("control", None);
    let server = ModelServer::start(DENIED);
    let ran = gemini(&world, &bin, &control, &server, "control");
    let ctx = context("control run (no hook)", &ran, &server);
    eprintln!("{ctx}");
    assert!(
        control.join("denied-marker.txt").exists(),
        "Gemini CLI did not run the scripted call without the hook: the blocked run would prove nothing\n{ctx}"
    );

    let project =
        world.protected_project("project", "gemini", ".gemini/settings.json", "hook gemini");

    let server = ModelServer::start(ALLOWED);
    let ran = gemini(&world, &bin, &project, &server, "allowed");
    let ctx = context("allowed run", &ran, &server);
    eprintln!("{ctx}");
    assert_eq!(ran.status.map(|s| s.success()), Some(true), "{ctx}");
    assert!(
        project.join("allowed-marker.txt").exists(),
        "the allowed command did not run\n{ctx}"
    );

    let server = ModelServer::start(DENIED);
    let ran = gemini(&world, &bin, &project, &server, "denied");
    let ctx = context("denied run", &ran, &server);
    eprintln!("{ctx}");
    assert!(
        !project.join("denied-marker.txt").exists(),
        "the denied command ran\n{ctx}"
    );
    let response = scripted_function_response(&server)
        .unwrap_or_else(|| panic!("the model never got the function response\n{ctx}"));
    assert!(
        response["response"]
            .to_string()
            .contains("deny rule `Bash(touch denied-marker.txt)`"),
        "the model did not get portcullis' reason: {response}\n{ctx}"
    );

    world.assert_allowed_and_denied("run_shell_command");
}

/// `[confine] mode = "always"` with the real Gemini CLI: the hook's
/// `tool_input` rewrite runs the call inside `portcullis run` (Gemini
/// validates the rewritten call and runs it), so a project task whose recipe
/// writes `~/.bashrc` — invisible to the analysis — is stopped by the kernel,
/// while its workspace write goes through.
#[test]
fn gemini_runs_a_call_confined_by_the_hooks_rewrite() {
    let (bin, version) = agent_bin("Gemini CLI", "gemini");
    eprintln!("Gemini CLI {version} at {}", bin.display());
    let world = World::new(
        "gemini-e2e-confine",
        "mode = \"approve-for-me\"\n[confine]\nmode = \"always\"\n",
    );
    let project =
        world.protected_project("project", "gemini", ".gemini/settings.json", "hook gemini");
    world.hidden_write_task(&project);
    let server = ModelServer::start("make test");
    let ran = gemini(&world, &bin, &project, &server, "confined");
    let ctx = context("confined run", &ran, &server);
    eprintln!("{ctx}");
    let response = scripted_function_response(&server)
        .unwrap_or_else(|| panic!("the model never got the function response\n{ctx}"));
    world.assert_hidden_write_stopped(&project, &response["response"].to_string(), &ctx);

    // The user's own Gemini policy denying the command still holds: Gemini
    // re-checks its policy on the rewritten `portcullis run …`, where the
    // prefix no longer matches, so portcullis judges the original by it.
    let policies = world.home.join(".gemini/policies");
    std::fs::create_dir_all(&policies).unwrap();
    std::fs::write(
        policies.join("own.toml"),
        "[[rule]]\ntoolName = \"run_shell_command\"\ncommandPrefix = \"make\"\ndecision = \"deny\"\npriority = 900\n",
    )
    .unwrap();
    let _ = std::fs::remove_file(project.join("made.txt"));
    let server = ModelServer::start("make test");
    let ran = gemini(&world, &bin, &project, &server, "own-policy");
    let ctx = context("the user's own Gemini policy, always", &ran, &server);
    eprintln!("{ctx}");
    assert!(
        !project.join("made.txt").exists(),
        "the rewrite ran a command the user's own Gemini policy denies\n{ctx}"
    );
    let response = scripted_function_response(&server)
        .map(|r| r.to_string())
        .unwrap_or_default();
    assert!(
        response.contains("Bash(make:*)"),
        "the model did not get the reason naming the user's rule: {response}\n{ctx}"
    );
}

/// The `functionResponse` the model received for `tool`, as text.
fn function_response_text(server: &ModelServer, tool: &str) -> String {
    server
        .requests()
        .iter()
        .flat_map(|r| gemini_function_responses(&r.body))
        .find(|f| f["name"] == tool)
        .map(|f| f["response"].to_string())
        .unwrap_or_default()
}

/// Issue 17's Downloads case with the real Gemini CLI through the real
/// bridge (`mcpServers` in its settings) and its hook: Gemini gives its MCP
/// servers no session, so the hook leaves each call to the bridge it finds
/// among its agent's processes and links it by agent, tool and arguments.
/// The read is refused with one request in Gemini's own session; after a
/// person allows `Read(~/Downloads/**)` for that session, the retry in the
/// same session (`--resume latest`) reads the file; a write into Downloads
/// and a symlink there pointing elsewhere stay refused; a new session does
/// not inherit the grant.
#[test]
fn gemini_reads_downloads_through_the_bridge_after_a_session_grant() {
    let (bin, version) = agent_bin("Gemini CLI", "gemini");
    eprintln!("Gemini CLI {version} at {}", bin.display());
    let world = World::new(
        "gemini-e2e-bridge",
        "mode = \"ask\"\n[permissions]\nallow = [\"mcp__fs__read_text_file\"]\n",
    );
    let project =
        world.protected_project("project", "gemini", ".gemini/settings.json", "hook gemini");
    let d = world.downloads();
    // The user's settings: API-key auth and the filesystem server behind the
    // bridge.
    let dir = world.home.join(".gemini");
    std::fs::create_dir_all(&dir).unwrap();
    let settings = json!({
        "security": {"auth": {"selectedType": "gemini-api-key"}},
        "privacy": {"usageStatisticsEnabled": false},
        "mcpServers": {"fs": {
            "command": harness::portcullis(),
            "args": d.bridge_args(&project),
        }},
    });
    std::fs::write(dir.join("settings.json"), settings.to_string()).unwrap();

    const TOOL: &str = "mcp_fs_read_text_file";
    let read = |path: &Path| tool_call(TOOL, &json!({"path": path}));
    let attempt = |script: &str, tool: &str, resume: bool, name: &str| {
        let server = ModelServer::start(script);
        let extra: &[&str] = if resume { &["--resume", "latest"] } else { &[] };
        let ran = gemini_with(&world, &bin, &project, &server, extra, name);
        let ctx = context(name, &ran, &server);
        eprintln!("{ctx}");
        (function_response_text(&server, tool), ctx)
    };

    // 1. The read is refused with one request, in Gemini's session.
    let (text, ctx) = attempt(&read(&d.report), TOOL, false, "the first read");
    assert!(
        text.contains("is waiting for a person") && !text.contains("quarterly"),
        "the first read was not refused with a request: {text}\n{ctx}"
    );
    let requests = world.pending();
    assert_eq!(
        requests.len(),
        1,
        "one request per call: {requests:?}\n{ctx}"
    );
    let session = requests[0]["session"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(
        !session.is_empty(),
        "the request has a session: {requests:?}"
    );
    let (decisions, dump) = world.decisions(&session);
    assert!(
        decisions.iter().any(|r| r["event"]["detail"]["reasons"]
            .to_string()
            .contains("left-to-bridge")),
        "the hook did not leave the call to the bridge in session {session}:\n{dump}"
    );
    let id = requests[0]["id"].as_i64().unwrap();

    // 2. A person allows reading Downloads for this session.
    world.allow_downloads_for_the_session(id);

    // 3. The retry in the same Gemini session reads the file.
    let (text, ctx) = attempt(&read(&d.report), TOOL, true, "the retry");
    assert!(
        text.contains("quarterly numbers: 42"),
        "the file's content did not reach the model: {text}\n{ctx}"
    );
    let (decisions, dump) = world.decisions(&session);
    assert!(
        decisions
            .iter()
            .any(|r| r["event"]["tool"] == "mcp__fs__read_text_file"
                && r["event"]["detail"]["origin"] == "mcp"
                && r["event"]["verdict"] == "allow"),
        "no allowed bridge decision in session {session}:\n{dump}"
    );

    // 4. A write into Downloads stays refused.
    let written = d.dir.join("new.txt");
    let write = tool_call(
        "mcp_fs_write_file",
        &json!({"path": written, "content": "from the agent\n"}),
    );
    let (text, ctx) = attempt(&write, "mcp_fs_write_file", true, "the write");
    assert!(
        text.contains("portcullis refused") && !written.exists(),
        "a write into Downloads was not refused: {text}\n{ctx}"
    );

    // 5. A symlink in Downloads pointing elsewhere is not read through the grant.
    let (text, ctx) = attempt(&read(&d.link), TOOL, true, "the symlink");
    assert!(
        text.contains("portcullis refused") && !text.contains("secret plan"),
        "a symlink out of Downloads was read through the grant: {text}\n{ctx}"
    );

    // 6. A new session does not inherit the grant.
    let (text, ctx) = attempt(&read(&d.report), TOOL, false, "a second session");
    assert!(
        text.contains("is waiting for a person") && !text.contains("quarterly"),
        "a second session read Downloads: {text}\n{ctx}"
    );
    let others: Vec<Value> = world
        .pending()
        .into_iter()
        .filter(|r| r["session"] != session.as_str())
        .collect();
    assert_eq!(
        others.len(),
        1,
        "the second session's one request: {others:?}"
    );
}
