//! Shared by the hook suites (`hooks_fixtures.rs`, `hooks_contract.rs`): the real
//! `portcullis hook <agent>` and the state commands, run in a [`Sandbox`] with
//! nothing of the machine leaking in (home, XDG directories, store, managed
//! configuration all inside the sandbox; no `PORTCULLIS_CONFIG` or
//! `PORTCULLIS_SESSION`), native payload builders per agent, and the replies
//! each agent expects.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::Sandbox;

/// What one `portcullis hook` run wrote back.
#[derive(Debug)]
pub struct HookRun {
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
}

impl HookRun {
    pub fn from_output(out: Output) -> HookRun {
        HookRun {
            code: out.status.code(),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    }

    /// The reply: `None` when stdout is empty (the agent's "no opinion"),
    /// else the one JSON object on it. Anything else fails the test: an agent
    /// would misread it (or, for several, treat it as allow).
    pub fn reply(&self) -> Option<Value> {
        let text = self.stdout.trim_end_matches('\n');
        if text.is_empty() {
            return None;
        }
        assert!(
            !text.contains('\n'),
            "more than one line on stdout: {:?}",
            self.stdout
        );
        let v: Value = serde_json::from_str(text)
            .unwrap_or_else(|e| panic!("stdout is not JSON ({e}): {:?}", self.stdout));
        assert!(v.is_object(), "stdout is not a JSON object: {v}");
        Some(v)
    }

    /// Asserts the exact reply, exit code and stderr.
    #[track_caller]
    pub fn expect(&self, reply: Option<Value>, code: i32, stderr: &str) {
        assert_eq!(self.reply(), reply, "reply; full run: {self:#?}");
        assert_eq!(self.code, Some(code), "exit code; full run: {self:#?}");
        assert_eq!(self.stderr, stderr, "stderr; full run: {self:#?}");
    }
}

/// Whether the hook suites run every hook call through a daemon
/// (`PORTCULLIS_TEST_HOOKS_THROUGH_DAEMON=1`, the second pass of
/// `scripts/test`): the same fixtures, the same expected answers, with
/// `portcullis serve` deciding and the hook required to hand it the call.
pub fn through_daemon() -> bool {
    std::env::var_os("PORTCULLIS_TEST_HOOKS_THROUGH_DAEMON").is_some_and(|v| v == "1")
}

/// `portcullis serve` for a sandbox's data directory; stopped when dropped.
pub struct Daemon {
    child: Child,
}

impl Daemon {
    pub fn start(sb: &Sandbox) -> Daemon {
        let child = sb
            .portcullis()
            .args(["serve", "--addr", "127.0.0.1:0"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start portcullis serve");
        let socket = sb.data_dir().join("hook.sock");
        let deadline = Instant::now() + Duration::from_secs(30);
        while std::os::unix::net::UnixStream::connect(&socket).is_err() {
            assert!(
                Instant::now() < deadline,
                "portcullis serve never listened on {}",
                socket.display()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        Daemon { child }
    }
}

impl Daemon {
    /// Sends SIGTERM and waits for the server to end; its exit status.
    pub fn terminate(mut self) -> std::process::ExitStatus {
        let kill = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status()
            .expect("run kill");
        assert!(kill.success());
        self.child.wait().expect("wait for serve")
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Sandbox {
    /// The store's directory (`PORTCULLIS_DATA_DIR` of every command run here).
    pub fn data_dir(&self) -> PathBuf {
        self.root.join("data")
    }

    /// The real binary in a clean environment, run from the workspace.
    pub fn portcullis(&self) -> Command {
        self.command(env!("CARGO_BIN_EXE_portcullis"))
    }

    /// `program` in the sandbox's clean environment (its home, XDG
    /// directories, store and managed configuration), run from the workspace.
    pub fn command(&self, program: impl AsRef<std::ffi::OsStr>) -> Command {
        let mut c = Command::new(program);
        c.env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", &self.home)
            .env("XDG_CONFIG_HOME", self.home.join(".config"))
            .env("XDG_DATA_HOME", self.home.join(".local/share"))
            .env("PORTCULLIS_DATA_DIR", self.data_dir())
            .env("PORTCULLIS_MANAGED_CONFIG", self.root.join("managed.toml"))
            .current_dir(&self.repo);
        c
    }

    /// `portcullis-hook AGENT [--config FILE]` — the hook command `install`
    /// writes (`portcullis hook AGENT` runs the same code; `hook_guard` and
    /// `hook_daemon` compare the two) —, isolated, with piped stdio. With
    /// [`through_daemon`], the sandbox's daemon answers (and must).
    pub fn hook_command(&self, agent: &str, config: Option<&Path>) -> Command {
        let mut c = self.command(env!("CARGO_BIN_EXE_portcullis-hook"));
        if through_daemon() {
            self.daemon.get_or_init(|| Daemon::start(self));
            c.env("PORTCULLIS_HOOK_DAEMON", "require");
        }
        c.arg(agent);
        if let Some(config) = config {
            c.arg("--config").arg(config);
        }
        c.stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        c
    }

    /// Starts `portcullis-hook AGENT [--config FILE]` with `payload` on its stdin
    /// (closed afterwards) and returns the running process.
    pub fn spawn_hook(&self, agent: &str, config: Option<&Path>, payload: &str) -> Child {
        feed(self.hook_command(agent, config), payload)
    }

    /// Runs `portcullis-hook AGENT [--config FILE]` on one payload.
    pub fn hook(&self, agent: &str, config: Option<&Path>, payload: &str) -> HookRun {
        run(self.hook_command(agent, config), payload)
    }

    /// Runs `portcullis ARGS…` and returns its output.
    pub fn cli(&self, args: &[&str]) -> Output {
        self.portcullis()
            .args(args)
            .stdin(Stdio::null())
            .output()
            .expect("run portcullis")
    }

    /// Runs `portcullis ARGS…`, which must succeed and print one JSON value.
    #[track_caller]
    pub fn cli_json(&self, args: &[&str]) -> Value {
        let out = self.cli(args);
        assert!(
            out.status.success(),
            "portcullis {args:?}: {}\nstderr: {}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
            panic!(
                "portcullis {args:?}: not JSON ({e}): {}",
                String::from_utf8_lossy(&out.stdout)
            )
        })
    }

    /// The pending permission requests (`requests list --json`).
    pub fn pending_requests(&self) -> Vec<Value> {
        let list = self.cli_json(&["requests", "list", "--json"]);
        list.as_array().expect("a list of requests").clone()
    }

    /// The one pending request of `session`: its id.
    #[track_caller]
    pub fn pending_request_id(&self, session: &str) -> i64 {
        let mine: Vec<Value> = self
            .pending_requests()
            .into_iter()
            .filter(|r| r["session"] == session)
            .collect();
        assert_eq!(mine.len(), 1, "one pending request of {session}: {mine:?}");
        mine[0]["id"].as_i64().expect("a request id")
    }

    /// Polls `requests list --json` until `session` has a pending request;
    /// panics after `timeout`.
    pub fn wait_for_request(&self, session: &str, timeout: Duration) -> Value {
        let start = Instant::now();
        loop {
            if let Some(r) = self
                .pending_requests()
                .into_iter()
                .find(|r| r["session"] == session)
            {
                return r;
            }
            assert!(
                start.elapsed() < timeout,
                "no pending request of {session} after {timeout:?}"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// The hold deadline stored with `session`'s pending request, once a
    /// holding front door stored it.
    pub fn wait_for_hold(&self, session: &str, timeout: Duration) -> i64 {
        let start = Instant::now();
        loop {
            let held = self
                .pending_requests()
                .into_iter()
                .find(|r| r["session"] == session)
                .and_then(|r| r["held_until"].as_i64());
            if let Some(until) = held {
                return until;
            }
            assert!(
                start.elapsed() < timeout,
                "no hold stored for {session} after {timeout:?}"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// Every audit row (`audit export --jsonl`).
    pub fn audit(&self) -> Vec<Value> {
        let out = self.cli(&["audit", "export", "--jsonl"]);
        assert!(
            out.status.success(),
            "audit export: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("audit row ({e}): {l}")))
            .collect()
    }

    /// The audit rows that record a decision (`decision`, `grant-used`).
    pub fn audited_decisions(&self) -> Vec<Value> {
        self.audit()
            .into_iter()
            .filter(|r| r["event"]["verdict"].is_string())
            .collect()
    }
}

/// Spawns `command` (stdio piped) with `payload` on its stdin, then closes it.
pub fn feed(mut command: Command, payload: &str) -> Child {
    let mut child = command.spawn().expect("spawn portcullis");
    let mut stdin = child.stdin.take().expect("stdin");
    // The hook reads all of stdin before answering: the payload is small.
    let _ = stdin.write_all(payload.as_bytes());
    drop(stdin);
    child
}

/// Runs `command` (stdio piped) on `payload` to the end.
pub fn run(command: Command, payload: &str) -> HookRun {
    let child = feed(command, payload);
    HookRun::from_output(child.wait_with_output().expect("portcullis finishes"))
}

/// `path` as a JSON-ready string.
pub fn s(path: &Path) -> String {
    Sandbox::s(path)
}

/// Native payloads, shaped as each agent sends them (agent-hooks.md), with the
/// common fields filled in as a real agent would.
pub mod payload {
    use super::*;

    /// Claude Code `PreToolUse` / `PermissionRequest`.
    pub fn claude(
        event: &str,
        session: Option<&str>,
        cwd: &Path,
        tool: &str,
        input: Value,
    ) -> Value {
        let mut v = json!({
            "transcript_path": "/home/u/.claude/projects/p/x.jsonl",
            "cwd": s(cwd),
            "permission_mode": "default",
            "hook_event_name": event,
            "tool_name": tool,
            "tool_input": input,
        });
        if event == "PreToolUse" {
            v["tool_use_id"] = json!("toolu_01ABC");
        }
        if let Some(session) = session {
            v["session_id"] = json!(session);
        }
        v
    }

    /// Codex CLI `PreToolUse` / `PermissionRequest` (codex-rs/hooks).
    pub fn codex(event: &str, session: &str, cwd: &Path, tool: &str, input: Value) -> Value {
        let mut v = json!({
            "session_id": session,
            "turn_id": "turn-1",
            "transcript_path": null,
            "cwd": s(cwd),
            "hook_event_name": event,
            "model": "gpt-5-codex",
            "permission_mode": "default",
            "tool_name": tool,
            "tool_input": input,
        });
        if event == "PreToolUse" {
            v["tool_use_id"] = json!("call_1");
        }
        v
    }

    fn cursor_common(conversation: &str, root: &Path, event: &str) -> Value {
        json!({
            "conversation_id": conversation,
            "generation_id": "gen-1",
            "model": "claude-4-sonnet",
            "hook_event_name": event,
            "cursor_version": "1.7.2",
            "workspace_roots": [s(root)],
            "user_email": null,
        })
    }

    /// Cursor `beforeShellExecution`.
    pub fn cursor_shell(conversation: &str, root: &Path, cwd: &Path, command: &str) -> Value {
        let mut v = cursor_common(conversation, root, "beforeShellExecution");
        v["command"] = json!(command);
        v["cwd"] = json!(s(cwd));
        v
    }

    /// Cursor `beforeMCPExecution`: `tool_input` is a JSON *string*; the server
    /// is named by `url` (remote) or `command` (stdio).
    pub fn cursor_mcp(
        conversation: &str,
        root: &Path,
        tool: &str,
        input: &Value,
        server: (&str, &str),
    ) -> Value {
        let mut v = cursor_common(conversation, root, "beforeMCPExecution");
        v["tool_name"] = json!(tool);
        v["tool_input"] = json!(input.to_string());
        v[server.0] = json!(server.1);
        v
    }

    /// Cursor `beforeReadFile` (no `cwd`: the workspace root stands in).
    pub fn cursor_read(conversation: &str, root: &Path, path: &str) -> Value {
        let mut v = cursor_common(conversation, root, "beforeReadFile");
        v["file_path"] = json!(path);
        v["content"] = json!("…");
        v["attachments"] = json!([]);
        v
    }

    /// Gemini CLI `BeforeTool`.
    pub fn gemini(session: &str, cwd: &Path, tool: &str, input: Value) -> Value {
        json!({
            "session_id": session,
            "transcript_path": "/home/u/.gemini/tmp/chats/session.json",
            "cwd": s(cwd),
            "hook_event_name": "BeforeTool",
            "timestamp": "2026-08-21T10:00:00.000Z",
            "tool_name": tool,
            "tool_input": input,
        })
    }

    /// What the pi extension sends for a `tool_call` event.
    pub fn pi(session: Option<&str>, cwd: &Path, tool: &str, input: Value, has_ui: bool) -> Value {
        let mut v = json!({
            "toolName": tool,
            "toolCallId": "call-1",
            "input": input,
            "cwd": s(cwd),
            "has_ui": has_ui,
        });
        if let Some(session) = session {
            v["session_id"] = json!(session);
        }
        v
    }
}

/// The replies each agent expects, as `portcullis hook` writes them.
pub mod reply {
    use super::*;

    /// Claude Code / Codex `PreToolUse`.
    pub fn claude(decision: &str, reason: &str) -> Value {
        json!({"hookSpecificOutput": {"hookEventName": "PreToolUse",
            "permissionDecision": decision, "permissionDecisionReason": reason}})
    }

    /// Claude Code `PermissionRequest`, allow.
    pub fn claude_permission_allow(reason: &str) -> Value {
        json!({"hookSpecificOutput": {"hookEventName": "PermissionRequest",
            "decision": {"behavior": "allow"}}, "systemMessage": reason})
    }

    /// Claude Code `PermissionRequest`, deny.
    pub fn claude_permission_deny(message: &str) -> Value {
        json!({"hookSpecificOutput": {"hookEventName": "PermissionRequest",
            "decision": {"behavior": "deny", "message": message}}})
    }

    /// Cursor `beforeShellExecution` / `beforeMCPExecution`.
    pub fn cursor(permission: &str, message: &str) -> Value {
        json!({"permission": permission, "user_message": message, "agent_message": message})
    }

    /// Cursor `beforeReadFile` (no messages).
    pub fn cursor_read(permission: &str) -> Value {
        json!({"permission": permission})
    }

    /// Gemini CLI `BeforeTool`.
    pub fn gemini(decision: &str, reason: &str) -> Value {
        json!({"decision": decision, "reason": reason})
    }

    /// pi (the extension maps it to `{block, reason}` or a confirmation).
    pub fn pi(decision: &str, reason: &str) -> Value {
        json!({"decision": decision, "reason": reason})
    }

    /// The reason of a deny for a payload portcullis could not judge.
    pub fn could_not_judge(error: &str) -> String {
        format!("portcullis could not judge this call and denies it: {error}")
    }

    /// The reason of a deny that raised permission request `id` (`on_ask = "notify"`).
    /// (The fixtures run with the default `[server] addr`.)
    pub fn notify(reason: &str, id: i64) -> String {
        format!(
            "{reason}. A permission request (#{id}) is waiting for a person in the portcullis UI \
             (http://127.0.0.1:7878/#request-{id}). Nothing ran; retry the same call after it is approved."
        )
    }

    /// What the agents that read stderr get with a deny: the reason and a newline.
    pub fn stderr(reason: &str) -> String {
        format!("{reason}\n")
    }
}
