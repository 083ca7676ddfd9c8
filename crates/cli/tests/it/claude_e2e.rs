//! Claude Code end to end, with its real CLI (issue 6): `claude -p` in a
//! throw-away project where `portcullis install claude-code` put `portcullis hook
//! claude-code` on every tool call, against a scripted model server on
//! 127.0.0.1 that answers with one fixed `Bash` call.
//!
//! - control: without the hook, Claude Code refuses the write itself in `-p`
//!   mode (so the allowed run proves the hook's allow took effect);
//! - allowed: `touch allowed-marker.txt` is allowed by the portcullis
//!   configuration → the file exists, Claude reports no permission denial;
//! - denied: `touch denied-marker.txt` matches a portcullis deny rule → the
//!   file does not exist, Claude lists the call under `permission_denials`,
//!   and the model receives portcullis' reason as the tool result;
//! - both decisions are in portcullis' audit log under Claude's session id.
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
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use harness::{ALLOWED, CONFIG, DENIED, Ran, World, agent_bin};
use model_server::{
    ModelServer, RETRY_PROMPT, RETRY_TOOL_USE_ID, TOOL_USE_ID, tool_result_text, tool_results,
};

/// Per `claude -p` run; a normal run takes a few seconds.
const CLAUDE_TIMEOUT: Duration = Duration::from_secs(120);

/// `claude -p … --output-format json` against `server`; the run's output
/// and the parsed result (`Null` when stdout is not JSON).
fn claude(
    world: &World,
    bin: &Path,
    project: &Path,
    server: &ModelServer,
    name: &str,
) -> (Ran, Value) {
    let mut cmd = world.agent(bin, project);
    cmd.args(["-p", "Run the scripted command.", "--output-format", "json"]);
    offline(&mut cmd, server);
    let ran = world.run(&mut cmd, name, CLAUDE_TIMEOUT);
    let result = serde_json::from_str(ran.stdout.trim()).unwrap_or(Value::Null);
    (ran, result)
}

/// A `claude -p` run against the scripted `server`: offline and
/// non-interactive (no updater, telemetry or error reports).
fn offline(cmd: &mut std::process::Command, server: &ModelServer) {
    cmd.env("TERM", "dumb")
        .env("ANTHROPIC_BASE_URL", server.url())
        .env("ANTHROPIC_API_KEY", "test")
        .env("DISABLE_AUTOUPDATER", "1")
        .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
        .env("DISABLE_TELEMETRY", "1")
        .env("DISABLE_ERROR_REPORTING", "1")
        .env("DISABLE_NON_ESSENTIAL_MODEL_CALLS", "1");
}

fn context(what: &str, ran: &Ran, server: &ModelServer) -> String {
    harness::context("claude", what, ran, &server.summary())
}

/// The tool result the model received for the scripted call.
fn scripted_tool_result(server: &ModelServer) -> Option<Value> {
    server
        .message_requests()
        .iter()
        .flat_map(|r| tool_results(&r.body))
        .find(|b| b["tool_use_id"] == TOOL_USE_ID)
}

#[test]
fn claude_code_runs_the_allowed_call_and_not_the_denied_one() {
    let started = Instant::now();
    let (bin, version) = agent_bin("Claude Code", "claude");
    eprintln!("Claude Code {version} at {}", bin.display());
    let world = World::new("claude-e2e", CONFIG);

    // Control: without the hook, Claude Code itself refuses the write in `-p`
    // mode — so the allowed run below ran because portcullis allowed it.
    let control = world.project("control", None);
    let server = ModelServer::start(ALLOWED);
    let (ran, result) = claude(&world, &bin, &control, &server, "control");
    let ctx = context("control run (no hook)", &ran, &server);
    eprintln!("{ctx}");
    assert_eq!(ran.status.map(|s| s.success()), Some(true), "{ctx}");
    assert!(
        !control.join("allowed-marker.txt").exists(),
        "Claude Code ran the command without any hook: the allowed run would prove nothing\n{ctx}"
    );
    assert!(
        denied_calls(&result, ALLOWED),
        "Claude Code did not refuse the call on its own\n{ctx}"
    );

    let project = world.protected_project(
        "project",
        "claude-code",
        ".claude/settings.json",
        "hook claude-code",
    );

    // The allowed call runs.
    let server = ModelServer::start(ALLOWED);
    let (ran, result) = claude(&world, &bin, &project, &server, "allowed");
    let ctx = context("allowed run", &ran, &server);
    eprintln!("{ctx}");
    assert_eq!(ran.status.map(|s| s.success()), Some(true), "{ctx}");
    assert_eq!(result["is_error"], false, "{ctx}");
    assert!(
        project.join("allowed-marker.txt").exists(),
        "the allowed command did not run\n{ctx}"
    );
    assert_eq!(
        result["permission_denials"],
        json!([]),
        "the allowed call was refused\n{ctx}"
    );
    let tool_result = scripted_tool_result(&server)
        .unwrap_or_else(|| panic!("the model never got the tool result\n{ctx}"));
    assert_ne!(tool_result["is_error"], true, "{tool_result}\n{ctx}");
    let allowed_session = session_id(&result, &ctx);

    // The denied call does not.
    let server = ModelServer::start(DENIED);
    let (ran, result) = claude(&world, &bin, &project, &server, "denied");
    let ctx = context("denied run", &ran, &server);
    eprintln!("{ctx}");
    assert_eq!(ran.status.map(|s| s.success()), Some(true), "{ctx}");
    assert!(
        !project.join("denied-marker.txt").exists(),
        "the denied command ran\n{ctx}"
    );
    assert!(
        denied_calls(&result, DENIED),
        "the denied call is not in permission_denials\n{ctx}"
    );
    let tool_result = scripted_tool_result(&server)
        .unwrap_or_else(|| panic!("the model never got the tool result\n{ctx}"));
    let text = tool_result_text(&tool_result);
    assert!(
        tool_result["is_error"] == true
            && text.contains("portcullis")
            && text.contains("deny rule `Bash(touch denied-marker.txt)`"),
        "the model did not get portcullis' reason: {tool_result}\n{ctx}"
    );
    let denied_session = session_id(&result, &ctx);
    assert_ne!(allowed_session, denied_session);

    // Both decisions are in the audit log, under Claude's own session ids.
    world.assert_audited("Bash", &allowed_session, &denied_session);
    eprintln!(
        "claude e2e passed in {:.1} s",
        started.elapsed().as_secs_f64()
    );
}

/// Whether Claude's JSON result lists the scripted Bash call of `command`
/// under `permission_denials`.
fn denied_calls(result: &Value, command: &str) -> bool {
    result["permission_denials"].as_array().is_some_and(|d| {
        d.iter().any(|d| {
            d["tool_name"] == "Bash"
                && d["tool_use_id"] == TOOL_USE_ID
                && d["tool_input"]["command"] == command
        })
    })
}

/// The session id Claude Code reports in its JSON result.
fn session_id(result: &Value, ctx: &str) -> String {
    result["session_id"]
        .as_str()
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| panic!("no session_id in the result\n{ctx}"))
        .to_string()
}

/// `[confine] mode` with the real Claude Code: in approve-for-me a call that
/// would ask only for reads known at run time (`find … | xargs grep`) runs
/// confined without a prompt and its output reaches the model; with
/// `always`, a project task the policy allows (`make`) whose recipe writes
/// `~/.bashrc` — which the analysis cannot see — is stopped by the kernel.
#[test]
fn claude_code_runs_calls_confined_by_the_hooks_rewrite() {
    let (bin, version) = agent_bin("Claude Code", "claude");
    eprintln!("Claude Code {version} at {}", bin.display());

    let world = World::new("claude-e2e-confine", "mode = \"approve-for-me\"\n");
    let project = world.protected_project(
        "dynamic",
        "claude-code",
        ".claude/settings.json",
        "hook claude-code",
    );
    std::fs::write(project.join("a.txt"), "a needle\n").unwrap();
    std::fs::write(project.join("b.txt"), "nothing\n").unwrap();
    let command = "find . -name '*.txt' | xargs grep -l needle";
    let server = ModelServer::start(command);
    let (ran, result) = claude(&world, &bin, &project, &server, "dynamic");
    let ctx = context("dynamic reads, approve-for-me", &ran, &server);
    eprintln!("{ctx}");
    assert_eq!(result["permission_denials"], json!([]), "{ctx}");
    let tool_result = scripted_tool_result(&server)
        .unwrap_or_else(|| panic!("the model never got the tool result\n{ctx}"));
    let text = tool_result_text(&tool_result);
    assert_ne!(tool_result["is_error"], true, "{tool_result}\n{ctx}");
    assert!(
        text.contains("./a.txt") && !text.contains("b.txt"),
        "{text}\n{ctx}"
    );
    // The hook's decision: allowed because it runs confined.
    let session = session_id(&result, &ctx);
    let (decisions, _) = world.decisions(&session);
    assert!(
        decisions.iter().any(|d| d.to_string().contains("confined")),
        "no confined decision audited: {decisions:?}\n{ctx}"
    );

    let world = World::new(
        "claude-e2e-always",
        "mode = \"approve-for-me\"\n[confine]\nmode = \"always\"\n",
    );
    let project = world.protected_project(
        "always",
        "claude-code",
        ".claude/settings.json",
        "hook claude-code",
    );
    world.hidden_write_task(&project);
    let server = ModelServer::start("make test");
    let (ran, result) = claude(&world, &bin, &project, &server, "always");
    let ctx = context(
        "a project task that writes ~/.bashrc, always",
        &ran,
        &server,
    );
    eprintln!("{ctx}");
    assert_eq!(result["permission_denials"], json!([]), "{ctx}");
    let tool_result = scripted_tool_result(&server)
        .unwrap_or_else(|| panic!("the model never got the tool result\n{ctx}"));
    world.assert_hidden_write_stopped(&project, &tool_result_text(&tool_result), &ctx);

    // The user's own deny rule in Claude Code still holds for a call
    // portcullis allows and rewrites (`always`): the rewritten call is the
    // original command inside `portcullis run`.
    let project = world.protected_project(
        "own-deny",
        "claude-code",
        ".claude/settings.json",
        "hook claude-code",
    );
    let settings = project.join(".claude/settings.json");
    let mut json: Value =
        serde_json::from_str(&std::fs::read_to_string(&settings).unwrap()).unwrap();
    json["permissions"] = json!({"deny": ["Bash(touch own-deny-marker.txt)"]});
    std::fs::write(&settings, json.to_string()).unwrap();
    let server = ModelServer::start("touch own-deny-marker.txt");
    let (ran, _) = claude(&world, &bin, &project, &server, "own-deny");
    let ctx = context(
        "the user's own Claude Code deny rule, always",
        &ran,
        &server,
    );
    eprintln!("{ctx}");
    assert!(
        !project.join("own-deny-marker.txt").exists(),
        "the rewrite ran a command the user's own Claude Code rules deny\n{ctx}"
    );
    // portcullis judged the original command by Claude Code's rule.
    let text = scripted_tool_result(&server)
        .map(|r| tool_result_text(&r))
        .unwrap_or_default();
    assert!(
        text.contains("Bash(touch own-deny-marker.txt)"),
        "the model did not get the reason naming the user's rule: {text}\n{ctx}"
    );
}

/// A person's denial reaches the real Claude Code (issue 16): a read outside
/// the workspace is refused with a permission request (`on_ask = "notify"`);
/// the person denies it with a message for the session; when the same
/// Claude Code session (`--resume`) tries the same call again, the model
/// reads the person's words, and nobody is asked again.
#[test]
fn a_persons_denial_message_reaches_claude_code_on_its_retry() {
    let (bin, version) = agent_bin("Claude Code", "claude");
    eprintln!("Claude Code {version} at {}", bin.display());
    let world = World::new(
        "claude-e2e-deny-message",
        "mode = \"ask\"\n[agents.claude-code]\non_ask = \"notify\"\n",
    );
    let project = world.protected_project(
        "project",
        "claude-code",
        ".claude/settings.json",
        "hook claude-code",
    );
    let outside = world.scratch.join("outside-report.txt");
    std::fs::write(&outside, "a report\n").unwrap();
    let command = format!("cat {}", outside.display());

    let server = ModelServer::start(&command);
    let (ran, result) = claude(&world, &bin, &project, &server, "first");
    let ctx = context("the first attempt", &ran, &server);
    eprintln!("{ctx}");
    let text = scripted_tool_result(&server)
        .map(|r| tool_result_text(&r))
        .unwrap_or_default();
    assert!(
        text.contains("is waiting for a person"),
        "the first attempt raised no request: {text}\n{ctx}"
    );
    let session = session_id(&result, &ctx);
    let pending = world.pending();
    let id = pending
        .iter()
        .find(|r| r["session"] == session.as_str())
        .and_then(|r| r["id"].as_i64())
        .unwrap_or_else(|| panic!("no request for session {session}: {pending:?}\n{ctx}"));
    let message = "use the copy in the repository instead";
    let out = world.person(&[
        "requests",
        "resolve",
        "--scope",
        "deny",
        "--message",
        message,
        "--for",
        "session",
        &id.to_string(),
    ]);
    assert!(out.status.success(), "{out:?}");

    let server = ModelServer::start(&command);
    let mut cmd = world.agent(&bin, &project);
    cmd.args([
        "-p",
        RETRY_PROMPT,
        "--resume",
        &session,
        "--output-format",
        "json",
    ]);
    offline(&mut cmd, &server);
    let ran = world.run(&mut cmd, "retry", CLAUDE_TIMEOUT);
    let ctx = context("the retry in the same session", &ran, &server);
    eprintln!("{ctx}");
    let text = server
        .message_requests()
        .iter()
        .flat_map(|r| tool_results(&r.body))
        .find(|b| b["tool_use_id"] == RETRY_TOOL_USE_ID)
        .map(|r| tool_result_text(&r))
        .unwrap_or_default();
    assert!(
        text.contains(message) && text.contains("a person denied this call"),
        "the model did not read the person's words: {text}\n{ctx}"
    );
    let pending = world.pending();
    assert!(
        pending.iter().all(|r| r["session"] != session.as_str()),
        "a standing denial asks nobody again: {pending:?}"
    );
}

/// `claude -p PROMPT` (resuming `resume` if given) with the MCP servers of
/// `mcp_config` only.
fn claude_with_mcp(
    world: &World,
    bin: &Path,
    project: &Path,
    server: &ModelServer,
    mcp_config: &Path,
    resume: Option<&str>,
    name: &str,
) -> (Ran, Value) {
    let mut cmd = world.agent(bin, project);
    let prompt = if resume.is_some() {
        RETRY_PROMPT
    } else {
        "Run the scripted command."
    };
    cmd.args([
        "-p",
        prompt,
        "--output-format",
        "json",
        "--strict-mcp-config",
        "--mcp-config",
    ])
    .arg(mcp_config);
    if let Some(session) = resume {
        cmd.args(["--resume", session]);
    }
    offline(&mut cmd, server);
    let ran = world.run(&mut cmd, name, CLAUDE_TIMEOUT);
    let result = serde_json::from_str(ran.stdout.trim()).unwrap_or(Value::Null);
    (ran, result)
}

/// The text of the tool result `id` the model received.
fn result_text(server: &ModelServer, id: &str) -> String {
    server
        .message_requests()
        .iter()
        .flat_map(|r| tool_results(&r.body))
        .find(|b| b["tool_use_id"] == id)
        .map(|r| tool_result_text(&r))
        .unwrap_or_default()
}

/// The seed's Downloads case through the real MCP bridge (issue 17), with
/// Claude Code's hook installed too: `@modelcontextprotocol/server-filesystem`
/// behind `portcullis mcp-bridge`, `~/Downloads/report.txt` outside the
/// workspace. The hook leaves each `mcp__fs__*` call to the bridge its
/// Claude Code runs and links it to Claude's session, so there is one judge,
/// one session and one request per call:
/// - the read is refused with one permission request, in Claude's session;
/// - a person allows `Read(~/Downloads/**)` for that session;
/// - the retry in the same Claude session (`--resume`) reads the file, and
///   its content reaches the model;
/// - a write into `~/Downloads` stays refused, and so does a symlink in
///   Downloads that points elsewhere;
/// - a second Claude session does not inherit the grant;
/// - the audit log has the hook's hand-offs and the bridge's decisions under
///   the one session id.
#[test]
fn claude_code_reads_downloads_through_the_bridge_after_a_session_grant() {
    let (bin, version) = agent_bin("Claude Code", "claude");
    eprintln!("Claude Code {version} at {}", bin.display());
    let world = World::new(
        "claude-e2e-bridge",
        // The README's example: the read tool allowed by name.
        "mode = \"ask\"\n[permissions]\nallow = [\"mcp__fs__read_text_file\"]\n\
         [agents.claude-code]\non_ask = \"notify\"\n",
    );
    let project = world.protected_project(
        "project",
        "claude-code",
        ".claude/settings.json",
        "hook claude-code",
    );
    let d = world.downloads();
    let mcp_config = world.scratch.join("mcp.json");
    std::fs::write(
        &mcp_config,
        json!({"mcpServers": {"fs": {
            "command": harness::portcullis(),
            "args": d.bridge_args(&project),
        }}})
        .to_string(),
    )
    .unwrap();
    let read =
        |path: &Path| model_server::tool_call("mcp__fs__read_text_file", &json!({"path": path}));

    // One Claude run (resuming `resume`) whose model calls `script`: the
    // text of tool result `id`, Claude's JSON result, and the run's report.
    let attempt = |script: &str, resume: Option<&str>, name: &str, id: &str| {
        let server = ModelServer::start(script);
        let (ran, result) =
            claude_with_mcp(&world, &bin, &project, &server, &mcp_config, resume, name);
        let ctx = context(name, &ran, &server);
        eprintln!("{ctx}");
        (result_text(&server, id), result, ctx)
    };

    // 1. The read is refused with one request, in Claude's own session.
    let (text, result, ctx) = attempt(&read(&d.report), None, "the first read", TOOL_USE_ID);
    let session = session_id(&result, &ctx);
    assert!(
        text.contains("is waiting for a person") && !text.contains("quarterly"),
        "the first read was not refused with a request: {text}\n{ctx}"
    );
    let requests = world.pending();
    let ours: Vec<&Value> = requests
        .iter()
        .filter(|r| r["session"] == session.as_str())
        .collect();
    assert_eq!(
        ours.len(),
        1,
        "one request per call, in Claude's session {session}: {requests:?}\n{ctx}"
    );
    assert_eq!(
        requests.len(),
        1,
        "no request outside the session: {requests:?}"
    );
    let id = ours[0]["id"].as_i64().unwrap();

    // 2. A person allows reading Downloads for this session.
    world.allow_downloads_for_the_session(id);

    // 3. The retry in the same Claude session reads the file.
    let (text, _, ctx) = attempt(
        &read(&d.report),
        Some(&session),
        "the retry",
        RETRY_TOOL_USE_ID,
    );
    assert!(
        text.contains("quarterly numbers: 42"),
        "the file's content did not reach the model: {text}\n{ctx}"
    );

    // 4. A write into Downloads stays refused.
    let written = d.dir.join("new.txt");
    let write = model_server::tool_call(
        "mcp__fs__write_file",
        &json!({"path": written, "content": "from the agent\n"}),
    );
    let second_retry = format!("{RETRY_TOOL_USE_ID}_2");
    let (text, _, ctx) = attempt(&write, Some(&session), "the write", &second_retry);
    assert!(
        text.contains("portcullis refused") && !written.exists(),
        "a write into Downloads was not refused: {text}\n{ctx}"
    );

    // 5. A symlink in Downloads pointing elsewhere is not read through the grant.
    let third_retry = format!("{RETRY_TOOL_USE_ID}_3");
    let (text, _, ctx) = attempt(&read(&d.link), Some(&session), "the symlink", &third_retry);
    assert!(
        text.contains("portcullis refused") && !text.contains("secret plan"),
        "a symlink out of Downloads was read through the grant: {text}\n{ctx}"
    );

    // 6. A second session does not inherit the grant.
    let (text, result, ctx) = attempt(&read(&d.report), None, "a second session", TOOL_USE_ID);
    let second = session_id(&result, &ctx);
    assert_ne!(second, session);
    assert!(
        text.contains("is waiting for a person") && !text.contains("quarterly"),
        "a second session read Downloads: {text}\n{ctx}"
    );
    assert!(
        world
            .pending()
            .iter()
            .any(|r| r["session"] == second.as_str()),
        "the second session's request is in its own session"
    );

    // The hook's hand-offs and the bridge's decisions, under one session.
    let audit = world.audit();
    let dump: Vec<String> = audit.iter().map(Value::to_string).collect();
    let ours: Vec<&Value> = audit
        .iter()
        .filter(|r| r["event"]["session"] == session.as_str())
        .collect();
    assert!(
        ours.iter().any(|r| r["event"]["detail"]["reasons"]
            .to_string()
            .contains("left-to-bridge")),
        "no hand-off by the hook in session {session}:\n{}",
        dump.join("\n")
    );
    assert!(
        ours.iter()
            .any(|r| r["event"]["tool"] == "mcp__fs__read_text_file"
                && r["event"]["detail"]["origin"] == "mcp"
                && r["event"]["verdict"] == "allow"),
        "no allowed bridge decision in session {session}:\n{}",
        dump.join("\n")
    );
}
