//! Agent adapters: each agent's native hook payload becomes a [`ToolCall`], and
//! portcullis' answer becomes the agent's native reply (stdout, stderr, exit code).
//!
//! What it is for: translation only, per agent — Claude Code, Codex CLI, Cursor,
//! Gemini CLI and pi. What it is not: a decision maker (the engine decides) or
//! a transport (the binary reads stdin and writes the reply). Origins come from
//! what the adapter knows: the agent's own tools are `core`, MCP tools `mcp`;
//! nothing in a payload can claim a higher origin.
//!
//! Fail closed: a payload that does not parse gives an [`AdapterError`], which
//! the caller turns into [`deny_reply`]. Unknown fields and unknown enum values
//! (a new `permission_mode`) are tolerated.

use portcullis_policy::{McpToolName, Origin, ToolCall, ToolRef};
use serde_json::{Value, json};

/// The agents portcullis speaks to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Agent {
    ClaudeCode,
    Codex,
    Cursor,
    Gemini,
    Pi,
}

impl Agent {
    pub const ALL: [Agent; 5] = [
        Agent::ClaudeCode,
        Agent::Codex,
        Agent::Cursor,
        Agent::Gemini,
        Agent::Pi,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Agent::ClaudeCode => "claude-code",
            Agent::Codex => "codex",
            Agent::Cursor => "cursor",
            Agent::Gemini => "gemini",
            Agent::Pi => "pi",
        }
    }

    /// The agent's tool table: which of its tools is a shell, which field a
    /// path. Every agent has one (an exhaustive match, no lookup by name).
    pub fn tool_table(self) -> portcullis_policy::tables::ToolTable {
        use portcullis_policy::tables;
        match self {
            Agent::ClaudeCode => tables::claude_code_table(),
            Agent::Codex => tables::codex_table(),
            Agent::Cursor => tables::cursor_table(),
            Agent::Gemini => tables::gemini_table(),
            Agent::Pi => tables::pi_table(),
        }
    }

    /// How long the agent waits for its hook before it gives up on it: the
    /// timeout `portcullis install` writes into the agent's hook entry (Claude
    /// Code, Codex: seconds; Gemini: milliseconds), the pi extension's own
    /// limit, and for Cursor — whose hook timeout is not documented by a
    /// primary source — a conservative guess. Past it Claude Code, Codex and
    /// Gemini run the call, so every wait of the hook ends well before it
    /// ([`Agent::hook_budget`]).
    pub fn hook_timeout(self) -> std::time::Duration {
        let secs = match self {
            Agent::ClaudeCode | Agent::Codex => 600,
            Agent::Gemini => 60,
            Agent::Cursor => 30,
            Agent::Pi => 120,
        };
        std::time::Duration::from_secs(secs)
    }

    /// Whether the agent takes a rewritten tool input from this hook event,
    /// so that a shell call can be run confined (`portcullis run`). Each
    /// checked against the agent's own code: Claude Code's PreToolUse
    /// `updatedInput` with `allow`; Codex's PreToolUse `updatedInput`, valid
    /// only with `allow` and a string `command` (0.171's hook output parser:
    /// a rewrite, not an approval — Codex's own approval policy still
    /// applies); Gemini CLI's BeforeTool `hookSpecificOutput.tool_input`,
    /// merged over the model's arguments and validated again (0.x
    /// `BeforeToolHookOutput.getModifiedToolInput`); pi's `tool_call` event,
    /// whose `input` is the very object the tool then runs with
    /// (pi-agent-core's `prepareToolCall` passes `validatedArgs` to the hook
    /// and to `execute`): the extension assigns the rewritten input to it.
    /// Cursor's `updated_input` is not confirmed by a primary source: its
    /// calls run as decided, unconfined.
    pub fn rewrites_input(self, event: &str) -> bool {
        matches!(
            (self, event),
            (Agent::ClaudeCode | Agent::Codex, "PreToolUse")
                | (Agent::Gemini, "BeforeTool")
                | (Agent::Pi, "tool_call")
        )
    }

    /// The time the hook gives itself: its agent's timeout less a margin (a
    /// tenth, at least five seconds) for the process to start and the agent
    /// to read the answer. When it runs out the hook answers the refusal.
    pub fn hook_budget(self) -> std::time::Duration {
        let timeout = self.hook_timeout();
        let margin = (timeout / 10).max(std::time::Duration::from_secs(5));
        timeout.saturating_sub(margin)
    }
}

impl std::str::FromStr for Agent {
    type Err = String;
    fn from_str(s: &str) -> Result<Agent, String> {
        Agent::ALL
            .into_iter()
            .find(|a| a.as_str() == s)
            .ok_or_else(|| {
                format!("unknown agent `{s}` (expected claude-code, codex, cursor, gemini or pi)")
            })
    }
}

/// A payload that cannot be judged.
#[derive(Debug, thiserror::Error)]
pub enum AdapterError {
    #[error("the hook input is not JSON: {0}")]
    NotJson(String),
    #[error("the hook input lacks `{0}`")]
    Missing(&'static str),
    #[error("event `{0}` is not one portcullis judges")]
    UnknownEvent(String),
    #[error("the hook input's `{0}` is not a string")]
    NotAString(&'static str),
    #[error("the hook input's `tool_name` is refused: {0}")]
    BadToolName(String),
}

/// A hook call, translated.
#[derive(Clone, Debug, PartialEq)]
pub struct HookCall {
    pub agent: Agent,
    pub event: String,
    pub call: ToolCall,
    /// The agent's session id, when the payload carries one.
    pub session: Option<String>,
    /// The agent's own permission mode (`default`, `plan`, `dontAsk` …), as sent.
    pub permission_mode: Option<String>,
    /// A sub-agent's id, when the call comes from one.
    pub subagent: Option<String>,
    /// The agent's own id of this call, where it sends the same id to an MCP
    /// server too (Claude Code's `tool_use_id`, its `_meta.claudecode/toolUseId`).
    pub call_id: Option<String>,
    /// Whether the agent can put a question to a person for this event.
    pub can_ask: bool,
    /// Whether the agent takes a rewritten input back for this call
    /// ([`Agent::rewrites_input`]; for pi, an extension that says it does:
    /// an older one would ignore the rewrite and run the call unconfined).
    pub can_rewrite: bool,
}

/// The answer to give the agent, after ask handling.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Answer {
    Allow(String),
    Ask(String),
    Deny(String),
}

/// What to write back: stdout, stderr and the exit code.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Reply {
    pub stdout: String,
    pub stderr: String,
    pub exit: i32,
}

fn parse_json(input: &[u8]) -> Result<Value, AdapterError> {
    let v: Value =
        serde_json::from_slice(input).map_err(|e| AdapterError::NotJson(e.to_string()))?;
    if !v.is_object() {
        return Err(AdapterError::NotJson("expected a JSON object".into()));
    }
    Ok(v)
}

fn text(v: &Value, key: &str) -> Option<String> {
    v.get(key).and_then(Value::as_str).map(str::to_string)
}

/// A session id: absent (or null) is no session; anything but a string is an
/// error, never silently "no session" (which would skip the audit row).
fn session_id(v: &Value, key: &'static str) -> Result<Option<String>, AdapterError> {
    match v.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(_) => Err(AdapterError::NotAString(key)),
    }
}

fn required(v: &Value, key: &'static str) -> Result<String, AdapterError> {
    let value = text(v, key).ok_or(AdapterError::Missing(key))?;
    if key == "tool_name" || key == "toolName" {
        portcullis_policy::check_tool_name(&value).map_err(AdapterError::BadToolName)?;
    }
    Ok(value)
}

fn tool(name: String, origin: Origin, server: Option<String>) -> ToolRef {
    ToolRef {
        name,
        origin,
        server,
        manifest: None,
    }
}

/// Translates a native payload.
pub fn parse(agent: Agent, input: &[u8]) -> Result<HookCall, AdapterError> {
    let v = parse_json(input)?;
    let mut hook = match agent {
        Agent::ClaudeCode | Agent::Codex => claude_like(agent, &v),
        Agent::Cursor => cursor(&v),
        Agent::Gemini => gemini(&v),
        Agent::Pi => pi(&v),
    }?;
    hook.can_rewrite = agent.rewrites_input(&hook.event)
        && (agent != Agent::Pi || v.get("rewrites").and_then(Value::as_bool) == Some(true));
    Ok(hook)
}

/// Claude Code and Codex share the wire format (`PreToolUse`, `PermissionRequest`).
fn claude_like(agent: Agent, v: &Value) -> Result<HookCall, AdapterError> {
    let event = required(v, "hook_event_name")?;
    if !matches!(event.as_str(), "PreToolUse" | "PermissionRequest") {
        return Err(AdapterError::UnknownEvent(event));
    }
    let name = required(v, "tool_name")?;
    let input = v
        .get("tool_input")
        .cloned()
        .ok_or(AdapterError::Missing("tool_input"))?;
    let cwd = required(v, "cwd")?;
    // `mcp__a___t` is tool `_t` of `a` or tool `t` of `a_`: no server is
    // given then, and the policy judges both readings.
    let readings = McpToolName::readings(&name);
    let (tool_ref, input) = match readings.as_slice() {
        [mcp] => (
            tool(mcp.to_string(), Origin::Mcp, Some(mcp.server().to_string())),
            input,
        ),
        [] => (tool(name, Origin::Core, None), input),
        _ => (tool(name, Origin::Mcp, None), input),
    };
    Ok(HookCall {
        agent,
        // Claude Code asks a person itself on `PreToolUse` "ask" and when a
        // `PermissionRequest` gets no opinion.
        can_ask: agent == Agent::ClaudeCode
            && (event == "PreToolUse" || event == "PermissionRequest"),
        // Set by `parse` for every agent alike.
        can_rewrite: false,
        event,
        call: ToolCall {
            tool: tool_ref,
            input,
            cwd,
        },
        session: session_id(v, "session_id")?,
        permission_mode: text(v, "permission_mode"),
        subagent: text(v, "agent_id"),
        call_id: (agent == Agent::ClaudeCode)
            .then(|| text(v, "tool_use_id"))
            .flatten(),
    })
}

/// Cursor: one event per gate; `beforeMCPExecution` carries its input as a JSON string.
fn cursor(v: &Value) -> Result<HookCall, AdapterError> {
    let event = required(v, "hook_event_name")?;
    let cwd = text(v, "cwd")
        .or_else(|| {
            v.get("workspace_roots")
                .and_then(|r| r.get(0))
                .and_then(Value::as_str)
                .map(str::to_string)
        })
        .ok_or(AdapterError::Missing("cwd"))?;
    let (tool_ref, input, can_ask) = match event.as_str() {
        "beforeShellExecution" => {
            let command = required(v, "command")?;
            (
                tool("Shell".into(), Origin::Core, None),
                json!({ "command": command }),
                true,
            )
        }
        "beforeReadFile" => {
            let path = required(v, "file_path")?;
            // Attachments name files read with it: judged too.
            let attachments = v.get("attachments").cloned().unwrap_or(json!([]));
            (
                tool("ReadFile".into(), Origin::Core, None),
                json!({ "file_path": path, "attachments": attachments }),
                false,
            )
        }
        "beforeMCPExecution" => {
            let name = required(v, "tool_name")?;
            let raw = v.get("tool_input").cloned().unwrap_or(Value::Null);
            // A JSON string per the contract; an object is accepted too.
            let input = match raw {
                Value::String(s) => serde_json::from_str(&s)
                    .map_err(|e| AdapterError::NotJson(format!("tool_input: {e}")))?,
                other => other,
            };
            let server = text(v, "url")
                .or_else(|| text(v, "command"))
                .map(|s| server_name(&s))
                .unwrap_or_else(|| "unknown".into());
            let mcp = McpToolName::new(server.as_str(), name);
            (
                tool(mcp.to_string(), Origin::Mcp, Some(server)),
                input,
                true,
            )
        }
        _ => return Err(AdapterError::UnknownEvent(event)),
    };
    Ok(HookCall {
        agent: Agent::Cursor,
        event,
        call: ToolCall {
            tool: tool_ref,
            input,
            cwd,
        },
        session: session_id(v, "conversation_id")?,
        permission_mode: None,
        subagent: None,
        call_id: None,
        can_ask,
        can_rewrite: false,
    })
}

/// `docker run` / `podman run` options that take a value.
const CONTAINER_RUN_VALUED: &[&str] = &[
    "-e",
    "--env",
    "--env-file",
    "-v",
    "--volume",
    "--name",
    "--network",
    "-p",
    "--publish",
    "-w",
    "--workdir",
    "-u",
    "--user",
    "--mount",
    "--entrypoint",
    "--platform",
    "-l",
    "--label",
    "--add-host",
    "--pull",
];

/// Launchers that run a stdio MCP server named by a later word: the server is
/// named after that word, so `npx -y @scope/server-postgres` and `npx -y
/// server-github` are two servers, not one server `npx`. Each entry: the
/// launcher's words, then its options that take a value (so the value is not
/// mistaken for the server).
const LAUNCHERS: &[(&[&str], &[&str])] = &[
    (&["npx"], &["-p", "--package", "-c", "--call"]),
    (&["bunx"], &["-p", "--package"]),
    (&["pnpx"], &[]),
    (&["pnpm", "dlx"], &[]),
    (&["npm", "exec"], &["-p", "--package", "-c", "--call"]),
    (&["yarn", "dlx"], &["-p", "--package"]),
    (
        &["uvx"],
        &[
            "--from",
            "--with",
            "--python",
            "-p",
            "--index",
            "--index-url",
        ],
    ),
    (
        &["uv", "tool", "run"],
        &["--from", "--with", "--python", "-p"],
    ),
    (
        &["uv", "run"],
        &["--with", "--python", "-p", "--directory", "--project"],
    ),
    (&["pipx", "run"], &["--spec", "--python"]),
    (&["node"], &["-r", "--require", "--import", "--loader"]),
    (&["deno", "run"], &["--config", "-c", "--import-map"]),
    (&["bun", "run"], &[]),
    (&["bun"], &[]),
    (&["python", "-m"], &[]),
    (&["python3", "-m"], &[]),
    (&["python"], &[]),
    (&["python3"], &[]),
    (&["docker", "run"], CONTAINER_RUN_VALUED),
    (&["podman", "run"], CONTAINER_RUN_VALUED),
];

/// A short server name from Cursor's `url` (its host) or stdio `command`
/// (the package, script or image it runs, without scope, path or version).
fn server_name(s: &str) -> String {
    let url = s
        .split_once("://")
        .filter(|_| !s.contains(char::is_whitespace));
    let word = if let Some((_, rest)) = url {
        rest.split(['/', ':', '?', '#'])
            .find(|p| !p.is_empty())
            .unwrap_or("unknown")
            .to_string()
    } else {
        stdio_server_word(s)
    };
    let word = word.trim_end_matches('/');
    // `@scope/name@1.2.3`, `ghcr.io/org/image:tag`, `/path/to/server.js`.
    let base = word.rsplit('/').next().unwrap_or(word);
    let base = match base.rsplit_once('@') {
        Some((head, _)) if !head.is_empty() => head,
        _ => base,
    };
    let base = base.split(':').next().unwrap_or(base);
    let name: String = base
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if name.is_empty() {
        "unknown".into()
    } else {
        name
    }
}

/// The word of a stdio server command that names the server.
fn stdio_server_word(command: &str) -> String {
    let words: Vec<&str> = command.split_whitespace().collect();
    let first = words.first().copied().unwrap_or("unknown");
    let program = first.rsplit('/').next().unwrap_or(first);
    let launcher = LAUNCHERS.iter().find(|(names, _)| {
        names.split_first().is_some_and(|(name, tail)| {
            *name == program
                && tail
                    .iter()
                    .enumerate()
                    .all(|(i, n)| words.get(i + 1) == Some(n))
        })
    });
    let Some((names, valued)) = launcher else {
        return first.to_string();
    };
    let mut rest = words.iter().skip(names.len());
    while let Some(w) = rest.next() {
        if let Some(opt) = w.strip_prefix('-') {
            // `--opt=value` carries its value; `--opt value` takes the next word.
            if !opt.contains('=') && valued.contains(w) {
                rest.next();
            }
            continue;
        }
        return (*w).to_string();
    }
    first.to_string()
}

/// Gemini CLI: `BeforeTool`; MCP tools are `mcp_<server>_<tool>` (or carry `mcp_context`).
fn gemini(v: &Value) -> Result<HookCall, AdapterError> {
    let event = required(v, "hook_event_name")?;
    if event != "BeforeTool" {
        return Err(AdapterError::UnknownEvent(event));
    }
    let name = required(v, "tool_name")?;
    let input = v
        .get("tool_input")
        .cloned()
        .ok_or(AdapterError::Missing("tool_input"))?;
    let cwd = required(v, "cwd")?;
    let mcp_server = v
        .get("mcp_context")
        .and_then(|c| c.get("server_name").or_else(|| c.get("serverName")))
        .and_then(Value::as_str)
        .map(str::to_string);
    let tool_ref = match (mcp_server, name.strip_prefix("mcp_")) {
        (Some(server), _) => {
            // Gemini's own spelling: `mcp_<server>_<tool>`.
            let t = name
                .strip_prefix(&format!("mcp_{server}_"))
                .unwrap_or(&name);
            let mcp = McpToolName::new(server.as_str(), t);
            tool(mcp.to_string(), Origin::Mcp, Some(server))
        }
        (None, Some(_)) => {
            // `mcp_my_fs_write_file` has several splits (server `my`,
            // `my_fs` …): the policy judges every one and keeps the strictest.
            tool(name, Origin::Mcp, None)
        }
        (None, None) => tool(name, Origin::Core, None),
    };
    Ok(HookCall {
        agent: Agent::Gemini,
        event,
        call: ToolCall {
            tool: tool_ref,
            input,
            cwd,
        },
        session: session_id(v, "session_id")?,
        permission_mode: None,
        subagent: None,
        call_id: None,
        can_ask: true,
        can_rewrite: false,
    })
}

/// pi: the extension sends `{toolName, toolCallId, input, cwd, session_id?, has_ui}`.
/// Tools the extension marks as registered by other extensions arrive with `origin`.
fn pi(v: &Value) -> Result<HookCall, AdapterError> {
    let name = required(v, "toolName")?;
    let input = v
        .get("input")
        .cloned()
        .ok_or(AdapterError::Missing("input"))?;
    let cwd = required(v, "cwd")?;
    // Only the tool table decides what is core; anything else is an extension's.
    let core = portcullis_policy::tables::pi_table().kind(&name).is_some();
    let origin = if core {
        Origin::Core
    } else {
        Origin::Extension
    };
    Ok(HookCall {
        agent: Agent::Pi,
        event: "tool_call".into(),
        call: ToolCall {
            tool: tool(name, origin, None),
            input,
            cwd,
        },
        session: session_id(v, "session_id")?,
        permission_mode: None,
        subagent: None,
        call_id: None,
        can_ask: v.get("has_ui").and_then(Value::as_bool).unwrap_or(false),
        can_rewrite: false,
    })
}

/// The agent's reply to an answer.
pub fn reply(agent: Agent, event: &str, answer: &Answer) -> Reply {
    let ok = |stdout: Value| Reply {
        stdout: stdout.to_string(),
        stderr: String::new(),
        exit: 0,
    };
    match (agent, answer) {
        // Claude Code's and Codex's `PermissionRequest` (Codex: allow or deny
        // with an optional message, `hooks/src/engine/output_parser.rs`).
        (Agent::ClaudeCode | Agent::Codex, _) if event == "PermissionRequest" => match answer {
            Answer::Allow(r) => ok(
                json!({"hookSpecificOutput": {"hookEventName": "PermissionRequest",
                "decision": {"behavior": "allow"}}, "systemMessage": r}),
            ),
            Answer::Deny(r) => ok(
                json!({"hookSpecificOutput": {"hookEventName": "PermissionRequest",
                "decision": {"behavior": "deny", "message": r}}}),
            ),
            // No opinion: the person is asked by the agent itself.
            Answer::Ask(_) => Reply {
                stdout: String::new(),
                stderr: String::new(),
                exit: 0,
            },
        },
        (Agent::ClaudeCode, Answer::Allow(r)) => ok(claude_decision("allow", r)),
        (Agent::ClaudeCode, Answer::Ask(r)) => ok(claude_decision("ask", r)),
        (Agent::ClaudeCode | Agent::Codex | Agent::Gemini, Answer::Deny(r)) => {
            deny_reply(agent, event, r)
        }
        // Codex cannot approve or ask from a hook: no opinion leaves its own
        // approval policy in charge (asks were turned into denies before).
        (Agent::Codex, _) => Reply {
            stdout: String::new(),
            stderr: String::new(),
            exit: 0,
        },
        (Agent::Cursor, a) => {
            let (permission, r) = match a {
                Answer::Allow(r) => ("allow", r),
                Answer::Ask(r) if event != "beforeReadFile" => ("ask", r),
                Answer::Ask(r) | Answer::Deny(r) => ("deny", r),
            };
            if event == "beforeReadFile" {
                ok(json!({"permission": permission}))
            } else {
                ok(json!({"permission": permission, "user_message": r, "agent_message": r}))
            }
        }
        (Agent::Gemini, Answer::Allow(r)) => ok(json!({"decision": "allow", "reason": r})),
        (Agent::Gemini, Answer::Ask(r)) => ok(json!({"decision": "ask", "reason": r})),
        (Agent::Pi, a) => {
            let (decision, r) = match a {
                Answer::Allow(r) => ("allow", r),
                Answer::Ask(r) => ("ask", r),
                Answer::Deny(r) => ("deny", r),
            };
            ok(json!({"decision": decision, "reason": r}))
        }
    }
}

/// A shell command line that runs `text` with bash inside `portcullis run`
/// (`portcullis` is the binary's path): every word quoted, so the shell that
/// runs the line hands `text` to the inner bash byte for byte.
/// `write`: the workspace is writable (else `--read-only`); `reveal`: the
/// secret files the call was allowed to read (`--reveal PATH` each);
/// `write_also`: the files outside the workspace it was allowed to write
/// (`--write PATH` each); `git_writes`: git's own data writable
/// (`--git-writes`).
pub fn confined_command(
    portcullis: &str,
    text: &str,
    network: bool,
    write: bool,
    reveal: &[String],
    write_also: &[String],
    git_writes: bool,
) -> String {
    let mut words = vec![
        portcullis,
        "run",
        "--network",
        if network { "on" } else { "off" },
    ];
    if !write {
        words.push("--read-only");
    } else if git_writes {
        words.push("--git-writes");
    }
    for path in reveal {
        words.push("--reveal");
        words.push(path);
    }
    for path in write_also {
        words.push("--write");
        words.push(path);
    }
    words.extend(["--", "bash", "-c", text]);
    portcullis_shell::join(&words)
}

/// An allow that replaces the call's input with `input` (the whole tool
/// input), in the agent's own rewrite channel ([`Agent::rewrites_input`]).
/// `None` where the agent has none for this event.
pub fn rewrite_reply(agent: Agent, event: &str, reason: &str, input: &Value) -> Option<Reply> {
    if !agent.rewrites_input(event) {
        return None;
    }
    let stdout = match agent {
        Agent::ClaudeCode | Agent::Codex => json!({"hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "allow",
            "permissionDecisionReason": reason,
            "updatedInput": input}}),
        Agent::Gemini => json!({"decision": "allow", "reason": reason,
            "hookSpecificOutput": {"hookEventName": "BeforeTool", "tool_input": input}}),
        Agent::Pi => json!({"decision": "allow", "reason": reason, "input": input}),
        Agent::Cursor => return None,
    };
    Some(Reply {
        stdout: stdout.to_string(),
        stderr: String::new(),
        exit: 0,
    })
}

fn claude_decision(decision: &str, reason: &str) -> Value {
    json!({"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": decision,
        "permissionDecisionReason": reason}})
}

/// A deny in the agent's strongest form: JSON where the agent reads it, and
/// exit 2 with the reason on stderr where the agent blocks on that (Codex needs
/// the stderr text, or the exit code does not count).
pub fn deny_reply(agent: Agent, event: &str, reason: &str) -> Reply {
    let reason = if reason.trim().is_empty() {
        "portcullis: denied"
    } else {
        reason
    };
    let stderr_line = if reason.starts_with("portcullis") {
        format!("{reason}\n")
    } else {
        format!("portcullis: {reason}\n")
    };
    match agent {
        Agent::ClaudeCode if event == "PermissionRequest" => Reply {
            stdout: json!({"hookSpecificOutput": {"hookEventName": "PermissionRequest",
                "decision": {"behavior": "deny", "message": reason}}})
            .to_string(),
            stderr: String::new(),
            exit: 0,
        },
        Agent::ClaudeCode | Agent::Codex => Reply {
            stdout: claude_decision("deny", reason).to_string(),
            stderr: stderr_line,
            exit: 2,
        },
        Agent::Gemini => Reply {
            stdout: json!({"decision": "deny", "reason": reason}).to_string(),
            stderr: stderr_line,
            exit: 2,
        },
        Agent::Cursor if event == "beforeReadFile" => Reply {
            stdout: json!({"permission": "deny"}).to_string(),
            stderr: String::new(),
            exit: 0,
        },
        Agent::Cursor => Reply {
            stdout: json!({"permission": "deny", "user_message": reason, "agent_message": reason})
                .to_string(),
            stderr: String::new(),
            exit: 0,
        },
        Agent::Pi => Reply {
            stdout: json!({"decision": "deny", "reason": reason}).to_string(),
            stderr: String::new(),
            exit: 0,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::server_name;

    #[test]
    fn every_agent_has_its_own_tool_table() {
        for agent in super::Agent::ALL {
            assert_eq!(agent.tool_table().agent, agent.as_str());
        }
    }

    /// The class "agent-controlled text never forges output": a tool name
    /// with a control character is refused at the door, for every agent.
    #[test]
    fn tool_names_with_control_characters_are_refused() {
        use super::{AdapterError, Agent, parse};
        for name in [
            "Bash\tforged\tallow",
            "Read\n42\tdecision\tallow",
            "x\u{1b}[2J",
            "",
        ] {
            let payloads = [
                (
                    Agent::ClaudeCode,
                    serde_json::json!({"hook_event_name": "PreToolUse", "session_id": "s", "cwd": "/w", "tool_name": name, "tool_input": {}}),
                ),
                (
                    Agent::Codex,
                    serde_json::json!({"hook_event_name": "PreToolUse", "session_id": "s", "cwd": "/w", "tool_name": name, "tool_input": {}}),
                ),
                (
                    Agent::Gemini,
                    serde_json::json!({"hook_event_name": "BeforeTool", "session_id": "s", "cwd": "/w", "tool_name": name, "tool_input": {}}),
                ),
                (
                    Agent::Pi,
                    serde_json::json!({"toolName": name, "toolCallId": "1", "input": {}, "cwd": "/w"}),
                ),
            ];
            for (agent, payload) in payloads {
                let got = parse(agent, payload.to_string().as_bytes());
                assert!(
                    matches!(
                        got,
                        Err(AdapterError::BadToolName(_)) | Err(AdapterError::Missing(_))
                    ),
                    "{agent:?} {name:?}: {got:?}"
                );
            }
        }
    }

    /// Claude Code and Codex spell MCP tools `mcp__server__tool`: the server
    /// ends at the first `__`, and a name with empty parts is still an MCP
    /// call (judged with zero trust), never one of the agent's own tools.
    #[test]
    fn mcp_names_are_split_at_the_first_separator() {
        use super::{Agent, Origin, parse};
        for (name, origin, server) in [
            ("mcp__gh__create_issue", Origin::Mcp, Some("gh")),
            ("mcp__gh__a__b", Origin::Mcp, Some("gh")),
            ("mcp__my_fs__write_file", Origin::Mcp, Some("my_fs")),
            ("mcp____x", Origin::Mcp, Some("")),
            ("mcp__gh__", Origin::Mcp, Some("gh")),
            // Server `a`'s tool `_t` or server `a_`'s tool `t`: no server.
            ("mcp__a___t", Origin::Mcp, None),
            ("mcp__gh", Origin::Core, None),
            ("mcp_gh_tool", Origin::Core, None),
        ] {
            for agent in [Agent::ClaudeCode, Agent::Codex] {
                let payload = serde_json::json!({"hook_event_name": "PreToolUse", "session_id": "s", "cwd": "/w", "tool_name": name, "tool_input": {}});
                let call = parse(agent, payload.to_string().as_bytes())
                    .expect("parses")
                    .call;
                assert_eq!(call.tool.name, name, "{agent:?}");
                assert_eq!(call.tool.origin, origin, "{agent:?} {name}");
                assert_eq!(call.tool.server.as_deref(), server, "{agent:?} {name}");
            }
        }
    }

    /// Gemini's `mcp_<server>_<tool>` with the server in `mcp_context`
    /// becomes `mcp__server__tool`; without it the name stays as sent, for
    /// the policy to judge every reading.
    #[test]
    fn gemini_mcp_names_become_the_common_spelling() {
        use super::{Agent, Origin, parse};
        let call = |name: &str, context: Option<&str>| {
            let mut payload = serde_json::json!({"hook_event_name": "BeforeTool", "session_id": "s", "cwd": "/w", "tool_name": name, "tool_input": {}});
            if let Some(server) = context {
                payload["mcp_context"] = serde_json::json!({"server_name": server});
            }
            parse(Agent::Gemini, payload.to_string().as_bytes())
                .expect("parses")
                .call
                .tool
        };
        let t = call("mcp_my_fs_write_file", Some("my_fs"));
        assert_eq!(
            (t.name.as_str(), t.origin, t.server.as_deref()),
            ("mcp__my_fs__write_file", Origin::Mcp, Some("my_fs"))
        );
        let t = call("mcp_my_fs_write_file", None);
        assert_eq!(
            (t.name.as_str(), t.origin, t.server.as_deref()),
            ("mcp_my_fs_write_file", Origin::Mcp, None)
        );
        let t = call("read_file", None);
        assert_eq!((t.name.as_str(), t.origin), ("read_file", Origin::Core));
    }

    #[test]
    fn cursor_servers_are_named_after_what_they_run() {
        for (source, name) in [
            (
                "npx -y @modelcontextprotocol/server-postgres postgresql://x",
                "server-postgres",
            ),
            (
                "npx -y @modelcontextprotocol/server-github@1.2.3",
                "server-github",
            ),
            ("npx --package foo -y mcp-remote https://x", "mcp-remote"),
            ("/usr/bin/npx -y mcp-remote", "mcp-remote"),
            ("npm exec -y -- server-fs /tmp", "server-fs"),
            ("pnpm dlx @acme/db-mcp", "db-mcp"),
            ("uvx mcp-server-git --repository .", "mcp-server-git"),
            (
                "uvx --from git+https://x mcp-server-time",
                "mcp-server-time",
            ),
            ("python -m mcp_server_fetch", "mcp_server_fetch"),
            ("node /home/u/servers/weather.js", "weather_js"),
            (
                "docker run -i --rm -e GITHUB_TOKEN ghcr.io/github/github-mcp-server:latest",
                "github-mcp-server",
            ),
            ("/opt/bin/my-server --port 1", "my-server"),
            ("my-server", "my-server"),
            ("https://mcp.github.com/sse", "mcp_github_com"),
            ("http://127.0.0.1:8080/mcp", "127_0_0_1"),
            ("npx", "npx"),
            ("", "unknown"),
        ] {
            assert_eq!(server_name(source), name, "{source}");
        }
    }

    #[test]
    fn different_npx_servers_are_different_servers() {
        assert_ne!(
            server_name("npx -y @modelcontextprotocol/server-postgres"),
            server_name("npx -y @modelcontextprotocol/server-github")
        );
    }
}
