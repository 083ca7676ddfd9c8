//! What `portcullis hook` decides, wherever that happens: in the hook's own
//! process, or in `portcullis serve` when the hook hands the call over the
//! data directory's socket ([`crate::hook_socket`]). Both run [`judge`] on
//! the same inputs — the agent's payload, the configuration files the hook
//! read, its environment — so the answer is the same; only the authority
//! behind it differs: an engine on the store opened for this one call, or
//! the daemon's decision thread.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use portcullis_adapters::{Agent, Answer, HookCall, Reply, parse, reply, rewrite_reply};
use portcullis_engine::{CallContext, Engine, HandOff, HoldStatus, Outcome, SessionSources};
use portcullis_paths::{Environment, FsPaths, Scopes};
use portcullis_policy::{Decision, Mode, OnAsk, Policy, ToolCall, Verdict};
use portcullis_store::{AgentKind, NewSession};
use serde::{Deserialize, Serialize};

use crate::config_files::Sources;

/// What a hold leaves of the hook's budget for judging again and answering.
const HOLD_MARGIN: Duration = Duration::from_secs(2);

/// The version of [`HookRequest`]: a daemon answers only its own.
pub const PROTOCOL: u32 = 1;

/// The daemon's socket, in the data directory it serves.
pub const SOCKET_FILE: &str = "hook.sock";

/// The largest request handed to the daemon; a larger call is judged in the
/// hook's own process (whose limits are the analysis' own).
pub const MAX_REQUEST: usize = 4 * 1024 * 1024;

/// What the daemon writes once it has read and accepted a request; anything
/// else (or nothing, in time) and the hook judges the call itself.
pub const ACCEPTED: &str = "accepted";

/// A hook call handed to the daemon: everything the decision depends on.
#[derive(Debug, Serialize, Deserialize)]
pub struct HookRequest {
    pub protocol: u32,
    /// The agent, as `portcullis hook` names it (`claude-code` …).
    pub agent: String,
    /// The agent's payload, as it came on stdin.
    pub payload: Payload,
    /// The configuration files the hook read for the call's directory;
    /// `None` when the payload names none (it does not parse: judging fails
    /// before any configuration is needed).
    pub sources: Option<Sources>,
    pub home: String,
    pub config_dir: String,
    pub data_dir: String,
    /// `PORTCULLIS_SESSION` in the hook's environment.
    pub session_env: Option<String>,
    /// Milliseconds left of the hook's budget when the request was sent.
    pub budget_ms: u64,
}

/// A payload as it came: text, or bytes that are not UTF-8 (sent as they
/// are, so the daemon fails on them exactly as the hook would).
#[derive(Debug, Serialize, Deserialize)]
pub enum Payload {
    Text(String),
    Bytes(Vec<u8>),
}

impl Payload {
    pub fn of(bytes: &[u8]) -> Payload {
        match std::str::from_utf8(bytes) {
            Ok(text) => Payload::Text(text.to_string()),
            Err(_) => Payload::Bytes(bytes.to_vec()),
        }
    }

    pub fn bytes(&self) -> &[u8] {
        match self {
            Payload::Text(t) => t.as_bytes(),
            Payload::Bytes(b) => b,
        }
    }
}

impl HookRequest {
    pub fn environment(&self) -> Environment {
        Environment {
            home: self.home.clone(),
            config_dir: self.config_dir.clone(),
            data_dir: self.data_dir.clone(),
        }
    }
}

/// The daemon's answer to an accepted call.
#[derive(Debug, Serialize, Deserialize)]
pub enum HookResponse {
    /// The reply to print, as the hook would have printed it.
    Reply(ReplyText),
    /// Judging failed (the hook's own answer to an error: a deny with it).
    Failed(String),
    /// The configuration sent names a team server (`[server] url`): the call
    /// is its to judge, not this daemon's; the hook asks it.
    Governed(String),
}

/// The error a daemon's hook call ends in when its configuration names a
/// team server: answered [`HookResponse::Governed`].
#[derive(Debug)]
pub struct Governed(pub String);

impl std::fmt::Display for Governed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "this machine is governed by the team server {}", self.0)
    }
}

impl std::error::Error for Governed {}

/// A [`Reply`] on the wire.
#[derive(Debug, Serialize, Deserialize)]
pub struct ReplyText {
    pub stdout: String,
    pub stderr: String,
    pub exit: i32,
}

impl From<Reply> for ReplyText {
    fn from(r: Reply) -> Self {
        ReplyText {
            stdout: r.stdout,
            stderr: r.stderr,
            exit: r.exit,
        }
    }
}

impl From<ReplyText> for Reply {
    fn from(r: ReplyText) -> Self {
        Reply {
            stdout: r.stdout,
            stderr: r.stderr,
            exit: r.exit,
        }
    }
}

/// The engine operations a hook call needs. In the hook's process, the
/// engine itself; in the daemon, its decision thread.
pub trait Authority {
    /// Enters `sessions` (registering those that are new, parents first),
    /// then decides the call: one trip to the daemon's decision thread, one
    /// commit.
    fn decide(
        &self,
        sessions: &[NewSession],
        call: &ToolCall,
        ctx: &CallContext,
        now: i64,
    ) -> Result<Outcome>;
    /// Holds a request until a person resolves it or `timeout` passes.
    fn wait_for_person(&self, request: i64, now: i64, timeout: Duration) -> Result<HoldStatus>;
    /// Leaves an MCP call to the bridge of `to` (entering `sessions`):
    /// `None` when the configuration denies it outright.
    fn leave_to_bridge(
        &self,
        sessions: &[NewSession],
        call: &ToolCall,
        ctx: &CallContext,
        to: &HandOff,
        now: i64,
    ) -> Result<Option<Outcome>>;
}

/// Whichever authority the configuration picked (the engine, or a team
/// server), held by reference: a hook's own is never dropped (see
/// `hook::handle`).
impl<A: Authority + ?Sized> Authority for &A {
    fn decide(
        &self,
        sessions: &[NewSession],
        call: &ToolCall,
        ctx: &CallContext,
        now: i64,
    ) -> Result<Outcome> {
        (**self).decide(sessions, call, ctx, now)
    }

    fn wait_for_person(&self, request: i64, now: i64, timeout: Duration) -> Result<HoldStatus> {
        (**self).wait_for_person(request, now, timeout)
    }

    fn leave_to_bridge(
        &self,
        sessions: &[NewSession],
        call: &ToolCall,
        ctx: &CallContext,
        to: &HandOff,
        now: i64,
    ) -> Result<Option<Outcome>> {
        (**self).leave_to_bridge(sessions, call, ctx, to, now)
    }
}

impl Authority for Engine<FsPaths> {
    fn decide(
        &self,
        sessions: &[NewSession],
        call: &ToolCall,
        ctx: &CallContext,
        now: i64,
    ) -> Result<Outcome> {
        Ok(self.enter_and_decide_under(sessions, self.policy(), self.facts(), call, ctx, now)?)
    }

    fn wait_for_person(&self, request: i64, now: i64, timeout: Duration) -> Result<HoldStatus> {
        Ok(Engine::wait_for_person(self, request, now, timeout)?)
    }

    fn leave_to_bridge(
        &self,
        sessions: &[NewSession],
        call: &ToolCall,
        ctx: &CallContext,
        to: &HandOff,
        now: i64,
    ) -> Result<Option<Outcome>> {
        Ok(Engine::leave_to_bridge(
            self,
            sessions,
            self.policy(),
            self.facts(),
            call,
            ctx,
            to,
            now,
        )?)
    }
}

/// The payload's working directory, made canonical (the configuration is
/// found from it).
pub fn call_cwd(agent: Agent, payload: &[u8]) -> Result<String> {
    let hook = parse(agent, payload)?;
    Ok(canonical(&hook.call.cwd))
}

fn canonical(cwd: &str) -> String {
    std::fs::canonicalize(cwd)
        .map(|p| p.to_string_lossy().into_owned())
        .unwrap_or_else(|_| cwd.to_string())
}

/// The default on-ask behaviour: the agent's own prompt where it can ask.
fn default_on_ask(agent: Agent) -> OnAsk {
    match agent {
        Agent::Codex => OnAsk::Notify,
        _ => OnAsk::Agent,
    }
}

/// Judges one hook call. `sources` gives the configuration files read for
/// the call's (canonical) directory; `open` makes the authority that
/// decides under the policy built from them.
// What the hook's process knows (its environment, its pid, its deadline) next
// to what the call says: each one a separate fact, none worth a struct.
#[allow(clippy::too_many_arguments)]
pub fn judge<A: Authority>(
    agent: Agent,
    payload: &[u8],
    sources: impl FnOnce(&Path) -> Result<Sources>,
    env: &Environment,
    session_env: Option<String>,
    caller: Option<i64>,
    deadline: Instant,
    open: impl FnOnce(Policy, FsPaths) -> Result<A>,
) -> Result<Reply> {
    let hook = parse(agent, payload)?;
    let cwd = canonical(&hook.call.cwd);
    let mut call = hook.call.clone();
    call.cwd = cwd.clone();
    let mut policy = sources(Path::new(&cwd))?
        .build()
        .context("loading the configuration")?;
    policy.table = agent.tool_table();
    // The agent's own mode may only tighten portcullis': plan mode reads only,
    // dontAsk never asks. bypassPermissions cannot beat a portcullis deny.
    match hook.permission_mode.as_deref() {
        Some("plan") => policy.mode = Mode::ReadOnly,
        Some("dontAsk") => policy.unattended = true,
        _ => {}
    }
    let settings = policy
        .agents
        .get(agent.as_str())
        .cloned()
        .unwrap_or_default();
    let on_ask = settings.on_ask.unwrap_or_else(|| default_on_ask(agent));
    let server_addr = policy.server_addr.clone();
    let facts = FsPaths::new(&Scopes::of(&policy.workspace), env);
    // The agent's own deny and ask rules for shell commands judge the
    // original command too: a rewritten call would slip past them.
    let project = facts.project_root(&cwd);
    match agent {
        Agent::ClaudeCode => policy.rules.extend(crate::agent_rules::claude_code(
            &env.home,
            &cwd,
            project.as_deref(),
        )),
        Agent::Codex => {
            let codex_home = std::env::var_os("CODEX_HOME")
                .map_or_else(|| Path::new(&env.home).join(".codex"), PathBuf::from);
            policy.rules.extend(crate::agent_rules::codex(
                &codex_home,
                &cwd,
                project.as_deref(),
            ));
        }
        Agent::Gemini => policy.rules.extend(crate::agent_rules::gemini(&env.home)),
        _ => {}
    }
    // Every decision made for an agent is the engine's and is audited, with
    // or without a session: without one, the audit row names none and no
    // request can be raised (nobody could be said to have asked).
    let authority = open(policy, facts)?;
    let (session, sessions) = match &hook.session {
        Some(session) => {
            let (id, sessions) = sessions_of(&hook, session, &cwd);
            (Some(id), sessions)
        }
        None => (None, Vec::new()),
    };
    let ctx = CallContext {
        sources: SessionSources {
            body: session,
            env: session_env,
            ..Default::default()
        },
        token: None,
        require_token: false,
        dry_run: false,
        can_confine: hook.can_rewrite,
        // One owner per ask: where the agent asks its person in its own
        // prompt, the approval UI does not ask as well.
        asked_in_agent: on_ask == OnAsk::Agent && hook.can_ask,
        agent_link: None,
        remote_device: None,
    };
    let now = crate::state::now();
    // An MCP call to a server this very agent runs behind `portcullis
    // mcp-bridge`: the bridge is its one judge (it knows the tool's pinned
    // definition); the hook links the call to its session for it.
    if let Some(to) = caller.and_then(|pid| bridge_of(&hook, pid)) {
        let ctx = CallContext {
            asked_in_agent: false,
            ..ctx.clone()
        };
        if let Some(left) = authority.leave_to_bridge(&sessions, &call, &ctx, &to, now)? {
            return Ok(reply(
                agent,
                &hook.event,
                &Answer::Allow(reasons(&left.decision)),
            ));
        }
    }
    let outcome = authority.decide(&sessions, &call, &ctx, now)?;
    if let Some(confined) = confined_reply(agent, &hook.event, &call, &outcome.decision) {
        return confined;
    }
    let text = reasons(&outcome.decision);
    let answer = match outcome.decision.decision {
        Verdict::Allow => Answer::Allow(text),
        Verdict::Deny => Answer::Deny(text),
        Verdict::Ask => match (on_ask, &outcome.request) {
            (OnAsk::Agent, _) if hook.can_ask => Answer::Ask(text),
            (OnAsk::Hold, Some(r)) => {
                // A person may take their time, but never past the agent's
                // own hook timeout: the hold ends with room to answer.
                let wanted = Duration::from_secs(settings.hold_timeout_secs.unwrap_or(50));
                let left = deadline
                    .saturating_duration_since(Instant::now())
                    .saturating_sub(HOLD_MARGIN);
                match authority.wait_for_person(r.id, now, wanted.min(left))? {
                    HoldStatus::Approved => {
                        // The approval made a grant: judge again (nothing ran meanwhile).
                        let again = authority.decide(&[], &call, &ctx, crate::state::now())?;
                        if let Some(confined) =
                            confined_reply(agent, &hook.event, &call, &again.decision)
                        {
                            return confined;
                        }
                        match again.decision.decision {
                            Verdict::Allow => Answer::Allow(reasons(&again.decision)),
                            _ => Answer::Deny(reasons(&again.decision)),
                        }
                    }
                    HoldStatus::Refused => {
                        Answer::Deny(format!("{text} — a person denied request #{}", r.id))
                    }
                    HoldStatus::TimedOut | HoldStatus::Waiting => {
                        Answer::Deny(notify_text(&text, r.id, &server_addr))
                    }
                }
            }
            (_, Some(r)) => Answer::Deny(notify_text(&text, r.id, &server_addr)),
            (_, None) if outcome.session.is_none() => {
                Answer::Deny(format!("{text} (no session: no request could be raised)"))
            }
            (_, None) => Answer::Deny(format!("{text} (no person can approve this here)")),
        },
    };
    Ok(reply(agent, &hook.event, &answer))
}

/// The bridge of this agent that an MCP call goes to, if any: the agent
/// (the nearest non-shell ancestor of the hook's process `caller`) runs a
/// portcullis MCP bridge named as the call's server.
fn bridge_of(hook: &HookCall, caller: i64) -> Option<HandOff> {
    if hook.call.tool.origin != portcullis_policy::Origin::Mcp {
        return None;
    }
    let server = hook.call.tool.server.clone()?;
    let agent = crate::agent_process::agent_of(caller)?;
    let exe = std::env::current_exe().ok()?;
    let dir = exe.parent()?;
    crate::agent_process::bridges_of(agent, dir)
        .contains(&server)
        .then(|| HandOff {
            agent,
            bridge: server,
            tool: hook.call.tool.name.clone(),
            call_id: hook.call_id.clone(),
        })
}

/// The allow of a call that runs confined: the agent's shell command
/// rewritten into `portcullis run … -- bash -c '<command>'`. `None` when
/// the decision does not confine it.
fn confined_reply(
    agent: Agent,
    event: &str,
    call: &ToolCall,
    decision: &Decision,
) -> Option<Result<Reply>> {
    let confine = decision.confine.as_ref()?;
    if decision.decision != Verdict::Allow {
        return None;
    }
    Some(confined_input(agent, call, confine).and_then(|input| {
        let text = format!(
            "{} (runs confined: `portcullis run --network {}{}`)",
            reasons(decision),
            if confine.network { "on" } else { "off" },
            if confine.write { "" } else { " --read-only" }
        );
        rewrite_reply(agent, event, &text, &input)
            .ok_or_else(|| anyhow::anyhow!("{} cannot take a rewritten call", agent.as_str()))
    }))
}

/// The call's input with its shell command wrapped in `portcullis run`.
fn confined_input(
    agent: Agent,
    call: &ToolCall,
    confine: &portcullis_policy::Confine,
) -> Result<serde_json::Value> {
    let Some(portcullis_policy::tables::ToolKind::Shell { command, .. }) =
        agent.tool_table().kind(&call.tool.name)
    else {
        bail!(
            "`{}` is not a shell tool: it cannot run confined",
            call.tool.name
        );
    };
    let Some(text) = call.input.get(command).and_then(|v| v.as_str()) else {
        bail!("the call has no `{command}` to run confined");
    };
    let exe = std::env::current_exe()
        .context("finding portcullis itself")?
        .with_file_name("portcullis");
    let mut input = call.input.clone();
    if let Some(obj) = input.as_object_mut() {
        obj.insert(
            command.to_string(),
            serde_json::Value::String(portcullis_adapters::confined_command(
                &exe.to_string_lossy(),
                text,
                confine.network,
                confine.write,
                &confine.reveal,
                &confine.write_also,
                confine.git_writes,
            )),
        );
    }
    Ok(input)
}

/// The sessions a call enters — its own, and for a sub-agent its child
/// session under it (the first call of a session registers it) — and the
/// id the call is made in.
fn sessions_of(hook: &HookCall, session: &str, cwd: &str) -> (String, Vec<NewSession>) {
    let base = NewSession {
        id: session.to_string(),
        agent: Some(hook.agent.as_str().into()),
        cwd: Some(cwd.into()),
        parent: None,
        kind: AgentKind::Main,
        workflow: None,
        ttl_secs: None,
    };
    match &hook.subagent {
        Some(sub) => {
            let id = format!("{session}.{sub}");
            let child = NewSession {
                id: id.clone(),
                parent: Some(session.into()),
                kind: AgentKind::Subagent,
                ..base.clone()
            };
            (id, vec![base, child])
        }
        None => (session.to_string(), vec![base]),
    }
}

fn reasons(d: &Decision) -> String {
    let mut text: Vec<&str> = d.reasons.iter().map(|r| r.message.as_str()).collect();
    text.dedup();
    format!("portcullis: {}", text.join("; "))
}

/// The deny that raised a request. It names where a person approves (the
/// UI), not a command: the agent must not be invited to approve itself.
fn notify_text(reason: &str, request: i64, server_addr: &str) -> String {
    format!(
        "{reason}. A permission request (#{request}) is waiting for a person in the portcullis UI \
         (http://{server_addr}/#request-{request}). Nothing ran; retry the same call after it is approved."
    )
}

/// The agent named in a request, or why it is not one.
pub fn agent_of(name: &str) -> Result<Agent> {
    match Agent::ALL.iter().find(|a| a.as_str() == name) {
        Some(a) => Ok(*a),
        None => bail!("unknown agent `{name}`"),
    }
}
