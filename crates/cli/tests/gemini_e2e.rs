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

#[path = "claude_e2e/harness.rs"]
mod harness;
// Shared by the three end-to-end tests; this one uses the Gemini half.
#[allow(dead_code)]
#[path = "claude_e2e/model_server.rs"]
mod model_server;

use std::path::Path;
use std::time::Duration;

use serde_json::{Value, json};

use harness::{ALLOWED, CONFIG, DENIED, Ran, World, agent_bin};
use model_server::{ModelServer, gemini_function_responses};

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
    let mut cmd = world.agent(bin, project);
    cmd.args([
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
