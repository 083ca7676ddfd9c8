//! pi end to end, with its real CLI (issue 6): `pi -p` in a throw-away
//! project where `portcullis install pi` put the portcullis extension in
//! `.pi/extensions/`, against the scripted Anthropic Messages server (pi's
//! `anthropic-messages` provider from `~/.pi/agent/models.json`) answering
//! with one fixed `bash` call.
//!
//! - allowed: `touch allowed-marker.txt` is allowed by the portcullis
//!   configuration → the file exists;
//! - denied: `touch denied-marker.txt` matches a portcullis deny rule → the
//!   extension blocks it, the file does not exist, and the model receives
//!   portcullis' reason as the tool result;
//! - control: the same denied call without the extension runs (pi never
//!   prompts), so the blocked run proves the extension blocked it;
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
use model_server::{ModelServer, TOOL_USE_ID, tool_result_text, tool_results};

const PI_TIMEOUT: Duration = Duration::from_secs(120);

/// Points pi's model at `server` (a custom Anthropic Messages provider).
fn models(world: &World, server: &ModelServer) {
    let dir = world.home.join(".pi/agent");
    std::fs::create_dir_all(&dir).expect("create ~/.pi/agent");
    let models = json!({"providers": {"scripted": {
        "baseUrl": server.url(),
        "api": "anthropic-messages",
        "apiKey": "test",
        "models": [{"id": "claude-scripted", "name": "scripted", "reasoning": false}]
    }}});
    std::fs::write(dir.join("models.json"), models.to_string()).expect("write models.json");
}

fn pi(world: &World, bin: &Path, project: &Path, server: &ModelServer, name: &str) -> Ran {
    models(world, server);
    let mut cmd = world.agent(bin, project);
    cmd.args([
        "-p",
        "--no-session",
        "--provider",
        "scripted",
        "--model",
        "claude-scripted",
        "Run the scripted command.",
    ])
    .env("TERM", "dumb")
    .env("PI_OFFLINE", "1")
    .env("PI_SKIP_VERSION_CHECK", "1")
    .env("PI_TELEMETRY", "0");
    world.run(&mut cmd, name, PI_TIMEOUT)
}

fn context(what: &str, ran: &Ran, server: &ModelServer) -> String {
    harness::context("pi", what, ran, &server.summary())
}

fn scripted_tool_result(server: &ModelServer) -> Option<Value> {
    server
        .message_requests()
        .iter()
        .flat_map(|r| tool_results(&r.body))
        .find(|b| b["tool_use_id"] == TOOL_USE_ID)
}

#[test]
fn pi_runs_the_allowed_call_and_blocks_the_denied_one() {
    let (bin, version) = agent_bin("pi", "pi");
    eprintln!("pi {version} at {}", bin.display());
    let world = World::new("pi-e2e", CONFIG);

    // Control: pi never prompts, so without the extension the denied command runs.
    let control = world.project("control", None);
    let server = ModelServer::start(DENIED);
    let ran = pi(&world, &bin, &control, &server, "control");
    let ctx = context("control run (no extension)", &ran, &server);
    eprintln!("{ctx}");
    assert!(
        control.join("denied-marker.txt").exists(),
        "pi did not run the scripted call without the extension: the blocked run would prove nothing\n{ctx}"
    );

    let project = world.protected_project(
        "project",
        "pi",
        ".pi/extensions/portcullis.ts",
        r#"["hook", "pi"]"#,
    );

    let server = ModelServer::start(ALLOWED);
    let ran = pi(&world, &bin, &project, &server, "allowed");
    let ctx = context("allowed run", &ran, &server);
    eprintln!("{ctx}");
    assert_eq!(ran.status.map(|s| s.success()), Some(true), "{ctx}");
    assert!(
        project.join("allowed-marker.txt").exists(),
        "the allowed command did not run\n{ctx}"
    );

    let server = ModelServer::start(DENIED);
    let ran = pi(&world, &bin, &project, &server, "denied");
    let ctx = context("denied run", &ran, &server);
    eprintln!("{ctx}");
    assert!(
        !project.join("denied-marker.txt").exists(),
        "the denied command ran\n{ctx}"
    );
    let tool_result = scripted_tool_result(&server)
        .unwrap_or_else(|| panic!("the model never got the tool result\n{ctx}"));
    let text = tool_result_text(&tool_result);
    assert!(
        text.contains("deny rule `Bash(touch denied-marker.txt)`"),
        "the model did not get portcullis' reason: {tool_result}\n{ctx}"
    );

    world.assert_allowed_and_denied("bash");
}

/// `[confine] mode = "always"` with the real pi: the extension applies the
/// hook's rewritten input to the call pi then runs (`portcullis run … --
/// bash -c '<command>'`), so a project task whose recipe writes `~/.bashrc`
/// — invisible to the analysis — is stopped by the kernel while its
/// workspace write goes through.
#[test]
fn pi_runs_a_call_confined_by_the_extensions_rewrite() {
    let (bin, version) = agent_bin("pi", "pi");
    eprintln!("pi {version} at {}", bin.display());
    let world = World::new(
        "pi-e2e-confine",
        "mode = \"approve-for-me\"\n[confine]\nmode = \"always\"\n",
    );
    let project = world.protected_project(
        "project",
        "pi",
        ".pi/extensions/portcullis.ts",
        r#"["hook", "pi"]"#,
    );
    world.hidden_write_task(&project);
    let server = ModelServer::start("make test");
    let ran = pi(&world, &bin, &project, &server, "confined");
    let ctx = context("confined run", &ran, &server);
    eprintln!("{ctx}");
    let tool_result = scripted_tool_result(&server)
        .unwrap_or_else(|| panic!("the model never got the tool result\n{ctx}"));
    world.assert_hidden_write_stopped(&project, &tool_result_text(&tool_result), &ctx);
}
