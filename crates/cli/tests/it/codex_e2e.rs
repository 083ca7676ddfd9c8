//! Codex CLI end to end, with its real CLI (issue 6): `codex exec` in a
//! throw-away project where `portcullis install codex` put its `PreToolUse`
//! and `PermissionRequest` hooks in `.codex/hooks.json`, against the scripted model server speaking the
//! OpenAI Responses API (a custom model provider in `$CODEX_HOME/config.toml`)
//! and answering with one fixed call of Codex's shell tool (`exec_command`).
//!
//! Codex runs a project's hooks only when the project is trusted (saved in
//! `config.toml` as `codex exec --trust` would) and each hook only once a
//! person trusted it by its hash. The test trusts both hooks the way Codex's
//! `/hooks` screen does: through Codex's own app server (`hooks/list` gives
//! the hook's key and hash, `config/batchWrite` saves them as
//! `[hooks.state."<key>"] trusted_hash`; the hash and key `portcullis doctor`
//! computes must be Codex's own, for both events), so `codex exec` runs with no trust
//! bypass. `--dangerously-bypass-approvals-and-sandbox` takes Codex's own
//! sandbox and approvals out of the way, so what runs is decided by the hook
//! alone:
//! - control: without a hook, the denied command runs;
//! - untrusted: with the hook installed but not trusted, Codex runs the
//!   command without asking portcullis (and says nothing about it);
//! - allowed: `touch allowed-marker.txt` is allowed by the portcullis
//!   configuration → the file exists;
//! - denied: `touch denied-marker.txt` matches a portcullis deny rule → the
//!   hook blocks it, the file does not exist, and the model receives
//!   portcullis' reason in the `function_call_output`;
//! - both decisions are in portcullis' audit log under Codex's thread ids,
//!   and none for the untrusted run.
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

use std::io::{BufRead, BufReader, Write};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use harness::{ALLOWED, CONFIG, DENIED, Ran, World, agent_bin};
use model_server::{
    CALL_ID, ModelServer, UNSUPPORTED_CALL, function_call_outputs, output_text, tool_call,
};

/// Per `codex exec` run; a normal run takes about a second.
const CODEX_TIMEOUT: Duration = Duration::from_secs(60);
/// Per app server answer.
const APP_SERVER_TIMEOUT: Duration = Duration::from_secs(30);

/// The variable holding the (dummy) API key of the scripted provider.
const API_KEY_ENV: &str = "PORTCULLIS_E2E_API_KEY";

fn codex_home(world: &World) -> PathBuf {
    world.home.join(".codex")
}

/// `$CODEX_HOME/config.toml`: the scripted model server as the provider (its
/// URL is given per run), no retries, no plugin marketplace (it would look up
/// GitHub), and `trusted` projects saved as `codex exec --trust` saves them —
/// Codex ignores the `.codex/` of an untrusted project, hooks included.
fn codex_config(world: &World, trusted: &[&Path]) {
    let mut config = format!(
        r#"model = "gpt-5.5"
model_provider = "scripted"

[features]
plugins = false

[model_providers.scripted]
name = "portcullis scripted model server"
wire_api = "responses"
env_key = "{API_KEY_ENV}"
request_max_retries = 0
stream_max_retries = 0
"#
    );
    for project in trusted {
        // A JSON string is a TOML basic string.
        let key = Value::from(project.to_str().expect("a UTF-8 path")).to_string();
        config.push_str(&format!("\n[projects.{key}]\ntrust_level = \"trusted\"\n"));
    }
    let home = codex_home(world);
    std::fs::create_dir_all(&home).expect("create ~/.codex");
    std::fs::write(home.join("config.toml"), config).expect("write ~/.codex/config.toml");
}

/// `codex exec --json` against `server`; the run's output and Codex's thread
/// id (the hook's `session_id`), `None` when Codex printed none.
fn codex(
    world: &World,
    bin: &Path,
    project: &Path,
    server: &ModelServer,
    name: &str,
) -> (Ran, Option<String>) {
    codex_in(world, bin, project, server, None, name)
}

/// [`codex`], resuming thread `resume` when given (`codex exec resume`).
fn codex_in(
    world: &World,
    bin: &Path,
    project: &Path,
    server: &ModelServer,
    resume: Option<&str>,
    name: &str,
) -> (Ran, Option<String>) {
    let mut cmd = world.agent(bin, project);
    cmd.arg("exec");
    // `exec resume` takes no `--color`.
    match resume {
        Some(_) => cmd.arg("resume"),
        None => cmd.args(["--color", "never"]),
    };
    cmd.args([
        "--json",
        // No sandbox, no approvals: the hook is the only thing deciding.
        // (`codex exec` never asks anyway: its approval policy is `never`,
        // so Codex's `PermissionRequest` is not reached from here; the
        // fixtures cover portcullis' answer to it.)
        "--dangerously-bypass-approvals-and-sandbox",
        "-c",
    ])
    .arg(format!(
        "model_providers.scripted.base_url=\"{}/v1\"",
        server.url()
    ))
    .args(resume)
    .arg("Run the scripted command.")
    .env("CODEX_HOME", codex_home(world))
    .env(API_KEY_ENV, "test");
    let ran = world.run(&mut cmd, name, CODEX_TIMEOUT);
    let thread = ran.stdout.lines().find_map(|l| {
        let event: Value = serde_json::from_str(l).ok()?;
        (event["type"] == "thread.started")
            .then(|| event["thread_id"].as_str().map(str::to_string))
            .flatten()
    });
    (ran, thread)
}

fn context(what: &str, ran: &Ran, server: &ModelServer) -> String {
    harness::context("codex", what, ran, &server.summary())
}

/// The text of the `function_call_output` the model received for the scripted call.
fn scripted_output(server: &ModelServer) -> Option<String> {
    output_of(server, CALL_ID)
}

/// The text of the `function_call_output` the model received for call `id`.
fn output_of(server: &ModelServer, id: &str) -> Option<String> {
    server
        .requests()
        .iter()
        .flat_map(|r| function_call_outputs(&r.body))
        .find(|o| o["call_id"] == id)
        .map(|o| output_text(&o))
}

/// The text of the last output of this run's calls that reached a tool:
/// not one Codex answered itself with [`UNSUPPORTED_CALL`] (a call made
/// before its MCP server was up), nor one of a resumed thread's earlier runs
/// (those are in this run's first request already).
fn tool_output(server: &ModelServer) -> Option<String> {
    let requests = server.requests();
    let outputs = |i: usize| {
        requests
            .get(i)
            .map(|r| function_call_outputs(&r.body))
            .unwrap_or_default()
    };
    let earlier: Vec<Value> = outputs(0).iter().map(|o| o["call_id"].clone()).collect();
    outputs(requests.len().saturating_sub(1))
        .iter()
        .filter(|o| !earlier.contains(&o["call_id"]))
        .map(output_text)
        .rfind(|text| !text.starts_with(UNSUPPORTED_CALL))
}

fn thread_id(thread: Option<String>, ctx: &str) -> String {
    thread.unwrap_or_else(|| panic!("no thread.started event with a thread_id\n{ctx}"))
}

/// `codex app-server` on stdio (JSON-RPC, one message a line): the API
/// Codex's own screens use to list hooks and save their trust.
struct AppServer {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
    next_id: u64,
    stderr: PathBuf,
}

impl AppServer {
    fn start(world: &World, bin: &Path) -> AppServer {
        let stderr = world.scratch.join("logs/app-server.stderr");
        let mut cmd = world.agent(bin, &world.home);
        let mut child = cmd
            .arg("app-server")
            .env("CODEX_HOME", codex_home(world))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(std::fs::File::create(&stderr).expect("create the app server's stderr file"))
            .process_group(0)
            .spawn()
            .expect("start codex app-server");
        let stdout = child.stdout.take().expect("the app server's stdout");
        let (tx, lines) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let stdin = child.stdin.take();
        let mut server = AppServer {
            child,
            stdin,
            lines,
            next_id: 1,
            stderr,
        };
        server.call(
            "initialize",
            json!({"clientInfo": {"name": "portcullis-e2e", "version": "0"}}),
        );
        server.send(&json!({"jsonrpc": "2.0", "method": "initialized"}));
        server
    }

    fn send(&mut self, message: &Value) {
        let stdin = self.stdin.as_mut().expect("the app server's stdin");
        writeln!(stdin, "{message}")
            .and_then(|()| stdin.flush())
            .expect("write to the app server");
    }

    /// Sends a request and returns its result; an error answer, or none
    /// within the deadline, fails the test.
    fn call(&mut self, method: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        let deadline = Instant::now() + APP_SERVER_TIMEOUT;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let line = match self.lines.recv_timeout(left) {
                Ok(line) => line,
                Err(RecvTimeoutError::Timeout) => panic!(
                    "codex app-server did not answer {method} in time\n{}",
                    self.stderr()
                ),
                Err(RecvTimeoutError::Disconnected) => panic!(
                    "codex app-server ended before answering {method}\n{}",
                    self.stderr()
                ),
            };
            let Ok(message) = serde_json::from_str::<Value>(&line) else {
                continue;
            };
            // Notifications (and requests to us) have a method; answers do not.
            if message["id"] != id || message.get("method").is_some() {
                continue;
            }
            assert!(
                message.get("error").is_none(),
                "codex app-server refused {method}: {message}\n{}",
                self.stderr()
            );
            return message["result"].clone();
        }
    }

    /// The hooks Codex found in `project`'s `.codex/` layer.
    fn project_hooks(&mut self, project: &Path) -> Vec<Value> {
        let listed = self.call("hooks/list", json!({"cwds": [project]}));
        listed["data"]
            .as_array()
            .into_iter()
            .flatten()
            .flat_map(|entry| entry["hooks"].as_array().cloned().unwrap_or_default())
            .filter(|h| h["source"] == "project")
            .collect()
    }

    /// Trusts `hook` as it is now, as a person does in `/hooks`.
    fn trust(&mut self, hook: &Value) {
        let key = hook["key"].as_str().expect("a hook key");
        let hash = hook["currentHash"].clone();
        self.call(
            "config/batchWrite",
            json!({"edits": [{"keyPath": "hooks.state", "mergeStrategy": "upsert",
                              "value": {key: {"trusted_hash": hash}}}]}),
        );
    }

    fn stderr(&self) -> String {
        format!(
            "--- codex app-server stderr ---\n{}",
            std::fs::read_to_string(&self.stderr).unwrap_or_default()
        )
    }
}

impl Drop for AppServer {
    /// Closes its stdin (it ends by itself); kills it if it does not.
    fn drop(&mut self) {
        drop(self.stdin.take());
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = Command::new("kill")
            .args(["-KILL", "--", &format!("-{}", self.child.id())])
            .status();
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `portcullis doctor --json` on a project's Codex hook: its exit code and
/// the Codex check.
fn doctor_codex(world: &World, project: &Path) -> (Option<i32>, Value) {
    let out = Command::new(harness::portcullis())
        .args(["doctor", "--json", "--dir"])
        .arg(project)
        .env("HOME", &world.home)
        .env("CODEX_HOME", codex_home(world))
        .output()
        .expect("run portcullis doctor");
    let report: Value = serde_json::from_slice(&out.stdout).expect("doctor --json prints JSON");
    let check = report["checks"]
        .as_array()
        .and_then(|c| {
            c.iter()
                .find(|c| c["agent"] == "codex" && c["scope"] == "project")
        })
        .cloned()
        .unwrap_or_else(|| panic!("no Codex project check: {report}"));
    (out.status.code(), check)
}

/// The portcullis hooks Codex lists for `project` — `PreToolUse` and
/// `PermissionRequest`, in that order — checked to be in `trust`.
fn portcullis_hooks(hooks: &[Value], trust: &str, project: &Path) -> Vec<Value> {
    ["preToolUse", "permissionRequest"]
        .iter()
        .map(|event| {
            let found: Vec<&Value> = hooks
                .iter()
                .filter(|h| {
                    h["eventName"] == *event
                        && h["command"]
                            .as_str()
                            .is_some_and(|c| c.ends_with("hook codex"))
                })
                .collect();
            assert!(
                found.len() == 1 && found[0]["trustStatus"] == trust && found[0]["enabled"] == true,
                "Codex does not list one enabled, {trust} portcullis {event} hook for {}: {hooks:?}",
                project.display()
            );
            found[0].clone()
        })
        .collect()
}

#[test]
fn codex_runs_the_allowed_call_and_blocks_the_denied_one() {
    let started = Instant::now();
    let (bin, version) = agent_bin("Codex CLI", "codex");
    eprintln!("Codex CLI {version} at {}", bin.display());
    let world = World::new("codex-e2e", CONFIG);
    let control = world.project("control", None);
    let untrusted =
        world.protected_project("untrusted", "codex", ".codex/hooks.json", "hook codex");
    let project = world.protected_project("project", "codex", ".codex/hooks.json", "hook codex");
    codex_config(&world, &[&control, &untrusted, &project]);

    // Control: with no hook, the denied command runs.
    let server = ModelServer::start(DENIED);
    let (ran, _) = codex(&world, &bin, &control, &server, "control");
    let ctx = context("control run (no hook)", &ran, &server);
    eprintln!("{ctx}");
    assert_eq!(ran.status.map(|s| s.success()), Some(true), "{ctx}");
    assert!(
        control.join("denied-marker.txt").exists(),
        "Codex did not run the scripted call without the hook: the blocked run would prove nothing\n{ctx}"
    );

    // Codex sees both installed hooks, untrusted; the person trusts one.
    let mut app = AppServer::start(&world, &bin);
    portcullis_hooks(&app.project_hooks(&untrusted), "untrusted", &untrusted);
    let hooks = portcullis_hooks(&app.project_hooks(&project), "untrusted", &project);
    // portcullis computes the hash Codex keys its trust on, and Codex's key,
    // for both events.
    let (code, check) = doctor_codex(&world, &project);
    assert_eq!(code, Some(1), "doctor passed an untrusted hook: {check:#}");
    for (i, hook) in hooks.iter().enumerate() {
        assert_eq!(
            (
                &check["codex_trust"][i]["hash"],
                &check["codex_trust"][i]["key"]
            ),
            (&hook["currentHash"], &hook["key"]),
            "portcullis and Codex disagree on the hook's trust identity: {check:#}\n{hook:#}"
        );
        app.trust(hook);
    }
    portcullis_hooks(&app.project_hooks(&project), "trusted", &project);
    drop(app);
    // `portcullis doctor` reads the trust Codex recorded: none for the
    // untrusted project's hook (a failure), nothing to say for the trusted one.
    let (code, check) = doctor_codex(&world, &untrusted);
    assert_eq!(code, Some(1), "{check:#}");
    assert!(
        check["notes"].to_string().contains("no trust recorded"),
        "doctor does not see that Codex skips the untrusted hook: {check:#}"
    );
    let (code, check) = doctor_codex(&world, &project);
    assert_eq!((code, &check["notes"]), (Some(0), &json!([])), "{check:#}");

    // Installed but never trusted: Codex runs the call without the hook.
    let server = ModelServer::start(DENIED);
    let (ran, thread) = codex(&world, &bin, &untrusted, &server, "untrusted");
    let ctx = context("run with the hook installed but not trusted", &ran, &server);
    eprintln!("{ctx}");
    assert_eq!(ran.status.map(|s| s.success()), Some(true), "{ctx}");
    assert!(
        untrusted.join("denied-marker.txt").exists(),
        "Codex no longer runs calls past an untrusted hook: update the README\n{ctx}"
    );
    let untrusted_thread = thread_id(thread, &ctx);

    // Trusted: the allowed call runs.
    let server = ModelServer::start(ALLOWED);
    let (ran, thread) = codex(&world, &bin, &project, &server, "allowed");
    let ctx = context("allowed run", &ran, &server);
    eprintln!("{ctx}");
    assert_eq!(ran.status.map(|s| s.success()), Some(true), "{ctx}");
    assert!(
        project.join("allowed-marker.txt").exists(),
        "the allowed command did not run\n{ctx}"
    );
    let output = scripted_output(&server)
        .unwrap_or_else(|| panic!("the model never got the function_call_output\n{ctx}"));
    assert!(
        !output.contains("blocked"),
        "the allowed call was blocked: {output}\n{ctx}"
    );
    let allowed_thread = thread_id(thread, &ctx);

    // Trusted: the denied call does not.
    let server = ModelServer::start(DENIED);
    let (ran, thread) = codex(&world, &bin, &project, &server, "denied");
    let ctx = context("denied run", &ran, &server);
    eprintln!("{ctx}");
    assert_eq!(ran.status.map(|s| s.success()), Some(true), "{ctx}");
    assert!(
        !project.join("denied-marker.txt").exists(),
        "the denied command ran\n{ctx}"
    );
    let output = scripted_output(&server)
        .unwrap_or_else(|| panic!("the model never got the function_call_output\n{ctx}"));
    assert!(
        output.contains("blocked by PreToolUse hook")
            && output.contains("portcullis")
            && output.contains("deny rule `Bash(touch denied-marker.txt)`"),
        "the model did not get portcullis' reason: {output}\n{ctx}"
    );
    let denied_thread = thread_id(thread, &ctx);

    // Confined (`[confine] mode = "dynamic"`, the default): a call that would
    // ask only for reads known at run time comes back rewritten into
    // `portcullis run` through Codex's `updatedInput`, and Codex runs that.
    std::fs::write(project.join("a.txt"), "a needle\n").unwrap();
    let server = ModelServer::start("find . -name '*.txt' | xargs grep -l needle");
    let (ran, thread) = codex(&world, &bin, &project, &server, "confined");
    let ctx = context("confined run", &ran, &server);
    eprintln!("{ctx}");
    let output = scripted_output(&server)
        .unwrap_or_else(|| panic!("the model never got the function_call_output\n{ctx}"));
    assert!(
        output.contains("./a.txt") && !output.contains("blocked"),
        "the confined call did not run: {output}\n{ctx}"
    );
    let (confined, dump) = world.decisions(&thread_id(thread, &ctx));
    assert!(
        confined.iter().any(|d| d.to_string().contains("confined")),
        "no confined decision audited:\n{dump}"
    );

    // The user's own Codex rule forbidding the command still holds for a call
    // portcullis would rewrite: Codex matches its rules against the
    // rewritten `portcullis run …`, so portcullis judges the original
    // command by them.
    let rules = project.join(".codex/rules");
    std::fs::create_dir_all(&rules).unwrap();
    std::fs::write(
        rules.join("own.rules"),
        "prefix_rule(pattern = [\"find\"], decision = \"forbidden\")\n",
    )
    .unwrap();
    let server = ModelServer::start("find . -name '*.txt' | xargs grep -l needle");
    let (ran, _) = codex(&world, &bin, &project, &server, "own-rule");
    let ctx = context(
        "the user's own Codex rule, a call that would run confined",
        &ran,
        &server,
    );
    eprintln!("{ctx}");
    let output = scripted_output(&server)
        .unwrap_or_else(|| panic!("the model never got the function_call_output\n{ctx}"));
    assert!(
        !output.contains("./a.txt") && output.contains("Bash(find:*)"),
        "the rewrite ran a command the user's own Codex rules forbid: {output}\n{ctx}"
    );
    std::fs::remove_dir_all(&rules).unwrap();

    // Both decisions are in the audit log, under Codex's thread ids; the
    // untrusted hook never ran.
    world.assert_audited("Bash", &allowed_thread, &denied_thread);
    let (untrusted, dump) = world.decisions(&untrusted_thread);
    assert!(untrusted.is_empty(), "the untrusted hook ran:\n{dump}");
    eprintln!(
        "codex e2e passed in {:.1} s",
        started.elapsed().as_secs_f64()
    );
}

/// Issue 17's Downloads case with the real Codex CLI through the real bridge
/// (`[mcp_servers.fs]` running `portcullis mcp-bridge`) and its trusted hook.
/// Codex names each MCP call to the server (`_meta.callId`, its hook's
/// `tool_use_id`) and its thread (`_meta.threadId`, its hook's
/// `session_id`): the hook leaves the call to the bridge, which judges it in
/// Codex's own thread. The read is refused with one request in that thread;
/// after a person allows `Read(~/Downloads/**)` for the session, the retry in
/// the same thread (`codex exec resume`) reads the file; a write into
/// Downloads and a symlink there pointing elsewhere stay refused; a new
/// thread does not inherit the grant.
#[test]
fn codex_reads_downloads_through_the_bridge_after_a_session_grant() {
    let (bin, version) = agent_bin("Codex CLI", "codex");
    eprintln!("Codex CLI {version} at {}", bin.display());
    let world = World::new(
        "codex-e2e-bridge",
        "mode = \"ask\"\n[permissions]\nallow = [\"mcp__fs__read_text_file\"]\n",
    );
    let project = world.protected_project("project", "codex", ".codex/hooks.json", "hook codex");
    let d = world.downloads();
    codex_config(&world, &[&project]);
    // The filesystem server behind the bridge.
    let args = d.bridge_args(&project);
    let config = codex_home(&world).join("config.toml");
    let mut text = std::fs::read_to_string(&config).unwrap();
    // Codex gives a server 10 s to start and list its tools, and drops it
    // silently when that runs out: too short for a debug build beside a
    // busy test suite on 2 cores.
    text.push_str(&format!(
        "\n[mcp_servers.fs]\ncommand = {}\nargs = {}\nstartup_timeout_sec = 60\ntool_timeout_sec = 120\n",
        Value::from(harness::portcullis()),
        Value::from(args)
    ));
    std::fs::write(&config, text).unwrap();
    let mut app = AppServer::start(&world, &bin);
    for hook in portcullis_hooks(&app.project_hooks(&project), "untrusted", &project) {
        app.trust(&hook);
    }
    drop(app);

    let read = |path: &Path| tool_call("mcp__fs__read_text_file", &json!({"path": path}));
    // One Codex run (resuming `thread`) whose model calls `script`: the
    // output of the call, the thread, and the run's report.
    let attempt = |script: &str, thread: Option<&str>, name: &str| {
        let server = ModelServer::start(script);
        let (ran, started) = codex_in(&world, &bin, &project, &server, thread, name);
        let ctx = context(name, &ran, &server);
        eprintln!("{ctx}");
        let output = tool_output(&server).unwrap_or_default();
        (output, started, ctx)
    };

    // 1. The read is refused with one request, in Codex's thread.
    let (text, thread, ctx) = attempt(&read(&d.report), None, "the first read");
    let thread = thread_id(thread, &ctx);
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
    assert_eq!(
        requests[0]["session"],
        thread.as_str(),
        "the request is in Codex's thread: {requests:?}"
    );
    let (decisions, dump) = world.decisions(&thread);
    assert!(
        decisions.iter().any(|r| r["event"]["detail"]["reasons"]
            .to_string()
            .contains("left-to-bridge")),
        "the hook did not leave the call to the bridge in thread {thread}:\n{dump}"
    );
    let id = requests[0]["id"].as_i64().unwrap();

    // 2. A person allows reading Downloads for this session.
    world.allow_downloads_for_the_session(id);

    // 3. The retry in the same thread reads the file.
    let (text, _, ctx) = attempt(&read(&d.report), Some(&thread), "the retry");
    assert!(
        text.contains("quarterly numbers: 42"),
        "the file's content did not reach the model: {text}\n{ctx}"
    );
    let (decisions, dump) = world.decisions(&thread);
    assert!(
        decisions
            .iter()
            .any(|r| r["event"]["tool"] == "mcp__fs__read_text_file"
                && r["event"]["detail"]["origin"] == "mcp"
                && r["event"]["verdict"] == "allow"),
        "no allowed bridge decision in thread {thread}:\n{dump}"
    );

    // 4. A write into Downloads stays refused.
    let written = d.dir.join("new.txt");
    let write = tool_call(
        "mcp__fs__write_file",
        &json!({"path": written, "content": "from the agent\n"}),
    );
    let (text, _, ctx) = attempt(&write, Some(&thread), "the write");
    assert!(
        text.contains("portcullis") && !written.exists(),
        "a write into Downloads was not refused: {text}\n{ctx}"
    );

    // 5. A symlink in Downloads pointing elsewhere is not read through the grant.
    let (text, _, ctx) = attempt(&read(&d.link), Some(&thread), "the symlink");
    assert!(
        text.contains("portcullis refused") && !text.contains("secret plan"),
        "a symlink out of Downloads was read through the grant: {text}\n{ctx}"
    );

    // 6. A new thread does not inherit the grant.
    let (text, second, ctx) = attempt(&read(&d.report), None, "a second thread");
    let second = thread_id(second, &ctx);
    assert_ne!(second, thread);
    assert!(
        text.contains("is waiting for a person") && !text.contains("quarterly"),
        "a second thread read Downloads: {text}\n{ctx}"
    );
    assert!(
        world
            .pending()
            .iter()
            .any(|r| r["session"] == second.as_str()),
        "the second thread's request is in its own session"
    );
}
