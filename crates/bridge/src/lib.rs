//! `portcullis mcp-bridge`: an MCP proxy an agent launches in place of the
//! real server. Every tool the server offers is `mcp`-origin, its definition
//! is pinned, and every call is judged by the one engine before it is
//! forwarded.
//!
//! - **Pinning.** `tools/list` hashes each tool's whole definition (and the
//!   server's instructions) and checks it against the store's pins: first
//!   sight is trusted on first use (or refused, `refuse_unpinned`), a changed
//!   definition is **withheld** from the list until a person approves it (the
//!   UI's Tool changes, or `portcullis mcp pins approve`). When the server
//!   says its list changed, the bridge re-checks and tells the client.
//! - **Judging.** `tools/call` becomes a `ToolCall` (`mcp__NAME__tool`, origin
//!   `mcp`, the arguments read with zero trust) decided by
//!   `portcullis_engine::Engine`; allowed calls are forwarded, refused ones
//!   answer a `CallToolResult` with `isError: true`, a reason the model can act
//!   on and a structured `_meta` envelope. JSON-RPC errors are only for
//!   malformed or unknown requests.
//!
//! What it is not: a policy (the engine decides) or a transport library (rmcp).

mod authority;
mod clients;
mod mrtr;
mod remote;
/// Tool definitions as pinned (canonical JSON and hash): the engine's.
pub use portcullis_engine::pins as pin;

pub use authority::{Authority, Local};
pub use remote::Remote;

/// `http::request::Parts`, as rmcp's HTTP transport puts them in a request's extensions.
mod axum_parts {
    pub use http::request::Parts;
}

use std::collections::HashMap;
use std::sync::Arc;

use portcullis_engine::{CallContext, HoldStatus, SessionSources, resolve_session};
use portcullis_policy::{
    FsAccess, Manifest, McpToolName, Origin, Policy, ToolCall, ToolRef, Verdict,
};
use portcullis_store::{NewSession, PinCheck};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::{NotificationContext, RequestContext, RunningService};
use rmcp::{ClientHandler, ErrorData, Peer, RoleClient, RoleServer, ServerHandler, ServiceExt};
use serde_json::{Value, json};
use tokio::sync::RwLock;

/// Why the bridge stopped.
#[derive(Debug, thiserror::Error)]
pub enum BridgeError {
    #[error("starting the MCP server `{command}`: {source}")]
    Spawn {
        command: String,
        source: std::io::Error,
    },
    #[error("the MCP server did not complete the handshake: {0}")]
    Downstream(String),
    /// A Streamable HTTP server that cannot be reached as configured (its
    /// URL, its CA file, its certificate).
    #[error("the MCP server at {url}: {message}")]
    Remote { url: String, message: String },
    #[error("serving the agent: {0}")]
    Upstream(String),
    /// The engine could not be reached or refused (a session conflict, the store).
    #[error("{0}")]
    Engine(String),
}

/// How one bridge runs.
pub struct Options {
    /// The server's name: tools are `mcp__NAME__tool` to rules and grants.
    pub name: String,
    /// The session the calls belong to (`--session`, else `PORTCULLIS_SESSION`).
    pub session: Option<String>,
    /// `PORTCULLIS_SESSION` of this process, for the one resolver.
    pub env_session: Option<String>,
    /// Refuse first sight of a tool instead of trusting it on first use.
    pub refuse_unpinned: bool,
    /// The server is trusted (configuration). Kept for configurations that
    /// say so; a pinned definition's `readOnlyHint` makes its path arguments
    /// reads for every server now, and nothing else loosens.
    pub trusted: bool,
    /// Where calls are judged from (paths in arguments are relative to it).
    pub cwd: String,
    /// The agent process that runs this bridge (its nearest non-shell
    /// ancestor), whose hook links each call to the agent's session.
    pub agent: Option<portcullis_store::ProcessId>,
    /// The session the agent put in this process' environment when it
    /// started it (Claude Code's `CLAUDE_CODE_SESSION_ID`): used when no
    /// hook linked the call.
    pub agent_env_session: Option<String>,
}

struct Shared<A: Authority> {
    name: String,
    cwd: String,
    refuse_unpinned: bool,
    sources: SessionSources,
    agent: Option<portcullis_store::ProcessId>,
    agent_env_session: Option<String>,
    /// The session of every call on stdio, by the one resolver (`None` over
    /// HTTP, where each request names its own).
    session: Option<String>,
    /// Where decisions are made.
    authority: A,
    downstream: RwLock<Option<Peer<RoleClient>>>,
    /// The server's `instructions` (part of every pin), once connected.
    instructions: std::sync::OnceLock<Option<String>>,
    /// The tools currently offered (approved definitions), by name.
    offered: RwLock<HashMap<String, Tool>>,
    /// The agents' sides, once initialized: for `list_changed` (one on
    /// stdio; one per MCP session over HTTP).
    upstream: RwLock<Vec<Peer<RoleServer>>>,
    /// The downstream connection, kept alive as long as the bridge.
    client: tokio::sync::Mutex<Option<RunningService<RoleClient, Downstream<A>>>>,
    /// Sealed `requestState`s for modern clients' asks (`None`: no key).
    states: Option<mrtr::States>,
}

/// Who is calling over HTTP (`/s/{session}/mcp/{name}`): the front door puts
/// this in the request's extensions; the one resolver decides from it.
#[derive(Clone, Debug, Default)]
pub struct HttpCaller {
    /// `{session}` of the URL path.
    pub url_session: Option<String>,
    /// The `X-Session-ID` header.
    pub header_session: Option<String>,
    /// `Authorization: Bearer …`: the session's token.
    pub token: Option<String>,
    /// The bearer was the person's own token (it stands for every session).
    pub admin: bool,
}

/// The agent-facing server.
pub struct Bridge<A: Authority> {
    shared: Arc<Shared<A>>,
}

impl<A: Authority> Clone for Bridge<A> {
    fn clone(&self) -> Self {
        Bridge {
            shared: Arc::clone(&self.shared),
        }
    }
}

/// The server-facing client: hears `list_changed`.
struct Downstream<A: Authority> {
    shared: Arc<Shared<A>>,
}

impl<A: Authority> Clone for Downstream<A> {
    fn clone(&self) -> Self {
        Downstream {
            shared: Arc::clone(&self.shared),
        }
    }
}

impl<A: Authority> ClientHandler for Downstream<A> {
    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        // Re-check the pins first; only then tell the agent to list again.
        let _ = Bridge {
            shared: Arc::clone(&self.shared),
        }
        .refresh()
        .await;
        for up in self.shared.upstream.read().await.iter() {
            let _ = up.notify_tool_list_changed().await;
        }
    }
}

/// The real server behind a bridge.
pub enum Target {
    /// A stdio server, started as a child process.
    Command(tokio::process::Command),
    /// A Streamable HTTP server (`http://`, or `https://` verified by rustls).
    Url(Remote),
}

/// Runs a bridge on stdin/stdout in front of `target`.
pub async fn run_stdio<A: Authority>(
    opts: Options,
    authority: A,
    target: Target,
) -> Result<(), BridgeError> {
    let bridge = Bridge::connect(opts, authority, target).await?;
    let server = bridge
        .clone()
        .serve(rmcp::transport::stdio())
        .await
        .map_err(|e| BridgeError::Upstream(e.to_string()))?;
    let _ = server.waiting().await;
    bridge.close().await;
    Ok(())
}

impl<A: Authority> Bridge<A> {
    /// Connects to `target` (starting it, for a command) and completes its handshake.
    pub async fn connect(
        opts: Options,
        authority: A,
        target: Target,
    ) -> Result<Bridge<A>, BridgeError> {
        let sources = SessionSources {
            body: opts.session.clone(),
            env: opts.env_session.clone(),
            ..Default::default()
        };
        // The one resolver: `--session` and `PORTCULLIS_SESSION` naming
        // different sessions is an error, never a pick.
        let session = resolve_session(&sources).map_err(|e| BridgeError::Engine(e.to_string()))?;
        if let Some(id) = &session {
            let new = NewSession {
                id: id.clone(),
                agent: Some(format!("mcp-bridge:{}", opts.name)),
                cwd: Some(opts.cwd.clone()),
                ..Default::default()
            };
            authority
                .with_engine(move |e| e.enter_session(&new))
                .await
                .map_err(BridgeError::Engine)?;
        }
        let shared = Arc::new(Shared {
            name: opts.name.clone(),
            cwd: opts.cwd.clone(),
            refuse_unpinned: opts.refuse_unpinned,
            sources,
            agent: opts.agent,
            agent_env_session: opts.agent_env_session.clone(),
            session,
            authority,
            downstream: RwLock::new(None),
            instructions: std::sync::OnceLock::new(),
            offered: RwLock::new(HashMap::new()),
            upstream: RwLock::new(Vec::new()),
            client: tokio::sync::Mutex::new(None),
            states: mrtr::States::new(),
        });
        let handler = Downstream {
            shared: Arc::clone(&shared),
        };
        let client: RunningService<RoleClient, Downstream<A>> = match target {
            Target::Command(command) => {
                let shown = format!("{:?}", command.as_std());
                let transport =
                    rmcp::transport::TokioChildProcess::new(command).map_err(|source| {
                        BridgeError::Spawn {
                            command: shown,
                            source,
                        }
                    })?;
                handler
                    .serve(transport)
                    .await
                    .map_err(|e| BridgeError::Downstream(remote::chain(&e)))
            }
            Target::Url(remote) => {
                let client = remote.client()?;
                let transport = rmcp::transport::StreamableHttpClientTransport::with_client(
                    client.clone(),
                    rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig::with_uri(
                        remote.url.as_str(),
                    ),
                );
                match handler.serve(transport).await {
                    Ok(running) => Ok(running),
                    Err(e) => {
                        let said = remote::chain(&e);
                        Err(remote.why_no_handshake(&client, said).await)
                    }
                }
            }
        }?;
        let instructions = client
            .peer()
            .peer_info()
            .and_then(|i| i.instructions.clone());
        // `instructions` is part of every pin: set it before the first list.
        let _ = shared.instructions.set(instructions);
        *shared.downstream.write().await = Some(client.peer().clone());
        *shared.client.lock().await = Some(client);
        Ok(Bridge { shared })
    }

    /// Stops the downstream server.
    pub async fn close(&self) {
        if let Some(client) = self.shared.client.lock().await.take() {
            let _ = client.cancel().await;
        }
    }

    /// The caller's session context: over HTTP from the request (URL path,
    /// header, token — a conflict is an error), on stdio from the bridge's
    /// own `--session` / `PORTCULLIS_SESSION`.
    fn call_context(&self, context: &RequestContext<RoleServer>) -> CallContext {
        let http = context
            .extensions
            .get::<axum_parts::Parts>()
            .and_then(|p| p.extensions.get::<HttpCaller>().cloned());
        match http {
            Some(h) => CallContext {
                sources: SessionSources {
                    url_path: h.url_session,
                    header: h.header_session,
                    ..Default::default()
                },
                token: h.token,
                require_token: !h.admin,
                dry_run: false,
                can_confine: false,
                asked_in_agent: false,
                agent_link: None,
                remote_device: None,
            },
            None => CallContext {
                sources: self.shared.sources.clone(),
                token: None,
                require_token: false,
                dry_run: false,
                can_confine: false,
                asked_in_agent: false,
                agent_link: None,
                remote_device: None,
            },
        }
    }
}

impl<A: Authority> Bridge<A> {
    fn now() -> i64 {
        portcullis_store::unix_now()
    }

    /// The approval UI's address, from the policy calls are judged under.
    fn ui_base(policy: &Policy) -> String {
        format!("http://{}", policy.server_addr)
    }

    /// Lists the server's tools and keeps those whose definition is approved.
    async fn refresh(&self) -> Result<Vec<Tool>, ErrorData> {
        let peer = self.shared.downstream.read().await.clone();
        let Some(peer) = peer else {
            return Err(ErrorData::internal_error(
                "the MCP server is not connected",
                None,
            ));
        };
        let tools = peer.list_all_tools().await.map_err(|e| {
            ErrorData::internal_error(
                format!("the MCP server failed to list its tools: {e}"),
                None,
            )
        })?;
        // A name with a control character (or none, or too long) is not
        // offered: it would forge lines wherever it is printed.
        let (tools, refused): (Vec<Tool>, Vec<Tool>) = tools
            .into_iter()
            .partition(|t| portcullis_policy::check_tool_name(&t.name).is_ok());
        for t in &refused {
            eprintln!(
                "portcullis mcp-bridge: not offering a tool of {}: {}",
                self.shared.name,
                portcullis_policy::check_tool_name(&t.name)
                    .err()
                    .unwrap_or_default()
            );
        }
        // Every definition checked in one trip to the engine, which audits
        // first uses and withheld changes. Fail closed: a tool whose pin
        // cannot be checked is not offered.
        let definitions: Vec<(String, Value)> = tools
            .iter()
            .map(|t| {
                (
                    t.name.to_string(),
                    serde_json::to_value(t).unwrap_or(Value::Null),
                )
            })
            .collect();
        let server = self.shared.name.clone();
        let instructions = self.shared.instructions.get().cloned().flatten();
        let trust_first_use = !self.shared.refuse_unpinned;
        let session = self.shared.session.clone();
        let checks = self
            .shared
            .authority
            .with_engine(move |e| {
                let now = Self::now();
                Ok(definitions
                    .iter()
                    .map(|(tool, definition)| {
                        e.check_tool_definition(
                            &server,
                            tool,
                            definition,
                            instructions.as_deref(),
                            trust_first_use,
                            session.as_deref(),
                            now,
                        )
                        .ok()
                    })
                    .collect::<Vec<_>>())
            })
            .await
            .unwrap_or_default();
        let offered: Vec<Tool> = tools
            .into_iter()
            .zip(checks)
            .filter(|(_, check)| matches!(check, Some(PinCheck::Approved | PinCheck::FirstUse)))
            .map(|(tool, _)| tool)
            .collect();
        let mut map = self.shared.offered.write().await;
        *map = offered
            .iter()
            .map(|t| (t.name.to_string(), t.clone()))
            .collect();
        Ok(offered)
    }

    fn refusal(text: String, envelope: Value) -> CallToolResponse {
        let mut result = CallToolResult::error(vec![ContentBlock::text(text)]);
        result.meta = serde_json::from_value(envelope).ok();
        result.into()
    }
}

/// What a person approves: every operation the judgement found, with its
/// canonical target and why it was judged so — never a cut-off dump of the
/// raw arguments (padding could push a secret's path out of view). Past 40
/// lines the count of the rest is said, not hidden; control characters in
/// targets are escaped.
fn what_it_does(d: &portcullis_policy::Decision) -> String {
    let mut lines: Vec<String> = Vec::new();
    for j in &d.judgements {
        let line: String = j
            .message
            .chars()
            .flat_map(|c| {
                if c.is_control() {
                    c.escape_default().collect::<Vec<_>>()
                } else {
                    vec![c]
                }
            })
            .collect();
        let line = format!("- [{}] {line}", j.verdict.as_str());
        if !lines.contains(&line) {
            lines.push(line);
        }
    }
    if lines.is_empty() {
        lines.push("- nothing the analysis could name".into());
    }
    const SHOWN: usize = 40;
    let rest = lines.len().saturating_sub(SHOWN);
    lines.truncate(SHOWN);
    if rest > 0 {
        lines.push(format!(
            "- … and {rest} more operations: see the request in the UI"
        ));
    }
    lines.join("\n")
}

/// Whether the agent declared it can show elicitation forms (in
/// `initialize`, or a modern client in each request's `_meta`).
fn client_elicits(context: &RequestContext<RoleServer>) -> bool {
    context
        .client_capabilities()
        .is_some_and(|c| c.elicitation.is_some())
}

/// Whether the client speaks 2026-07-28 or later: it asks by
/// `InputRequiredResult`, not by `elicitation/create`.
fn client_is_modern(context: &RequestContext<RoleServer>) -> bool {
    context
        .protocol_version()
        .is_some_and(|v| v >= rmcp::model::ProtocolVersion::V_2026_07_28)
}

/// The name the client gave (`initialize`, or a modern request's `_meta`).
fn client_name(context: &RequestContext<RoleServer>) -> Option<String> {
    context.client_info().map(|info| info.name)
}

/// How long a person has to answer the client's prompt.
const ELICITATION_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(600);

impl<A: Authority> Bridge<A> {
    /// Asks through the agent's own prompt (`elicitation/create`). An accept
    /// approves the pending request once — the UI sees the same request and
    /// may answer first — and the call is judged again; anything else leaves
    /// the request pending. `None`: no new decision (keep the refusal).
    async fn ask_in_client(
        &self,
        context: &RequestContext<RoleServer>,
        full: &str,
        call: &ToolCall,
        ctx: &CallContext,
        ui_base: &str,
        asked: &portcullis_engine::Outcome,
    ) -> Option<portcullis_engine::Outcome> {
        let request = asked.request.as_ref()?.id;
        let what = what_it_does(&asked.decision);
        let params: rmcp::model::ElicitRequestParams = serde_json::from_value(json!({
            "mode": "form",
            "message": format!(
                "portcullis: allow `{full}` once?\nIt would:\n{what}\nPermission request #{request} (also in the portcullis UI: {ui_base}/#request-{request}).",
            ),
            "requestedSchema": {
                "type": "object",
                "properties": {"allow": {"type": "boolean", "title": "Allow this call once", "default": false}},
                "required": ["allow"]
            }
        }))
        .ok()?;
        let answer = context
            .peer
            .create_elicitation_with_timeout(params, Some(ELICITATION_TIMEOUT))
            .await
            .ok()?;
        let allowed = answer.action == rmcp::model::ElicitationAction::Accept
            && answer
                .content
                .as_ref()
                .and_then(|c| c.get("allow"))
                .and_then(Value::as_bool)
                == Some(true);
        if !allowed {
            return None;
        }
        // Already resolved in the UI meanwhile: fine, judge again either way.
        let by = format!("elicitation:{}", self.shared.name);
        self.shared.authority.approve_once(request, by).await.ok()?;
        self.shared
            .authority
            .decide(call.clone(), ctx.clone())
            .await
            .ok()
    }
}

/// What a modern client's ask comes to.
enum Modern {
    /// Ask the person through the client: the form and the sealed state.
    Ask(rmcp::model::InputRequiredResult),
    /// The person allowed it once: the call judged again.
    Judged(Box<portcullis_engine::Outcome>),
    /// No state to ask with, or judging again failed: keep the refusal.
    Refuse,
}

impl<A: Authority> Bridge<A> {
    /// The 2026-07-28 ask ([`mrtr`]): a retry carrying a state that opens
    /// for this very call and session, with the person's accept, approves
    /// its request once and the call is judged again; anything else is
    /// asked (again) with a new state.
    async fn ask_modern(
        &self,
        request: &CallToolRequestParams,
        full: &str,
        call: &ToolCall,
        ctx: &CallContext,
        ui_base: &str,
        asked: &portcullis_engine::Outcome,
    ) -> Modern {
        let (Some(states), Some(pending)) = (&self.shared.states, asked.request.as_ref()) else {
            return Modern::Refuse;
        };
        let bound = mrtr::binding(
            full,
            &portcullis_engine::args_hash(&call.input),
            asked.session.as_deref(),
        );
        if let Some(state) = request.request_state.as_deref()
            && let Some(approved) = states.approved(state, request.input_responses.as_ref(), &bound)
        {
            let by = format!("elicitation:{}", self.shared.name);
            let approve = self.shared.authority.approve_once(approved, by).await;
            return match approve {
                Ok(_) => match self
                    .shared
                    .authority
                    .decide(call.clone(), ctx.clone())
                    .await
                {
                    Ok(again) => Modern::Judged(Box::new(again)),
                    Err(_) => Modern::Refuse,
                },
                Err(_) => Modern::Refuse,
            };
        }
        let what = what_it_does(&asked.decision);
        let id = pending.id;
        let message = format!(
            "portcullis: allow `{full}` once?\nIt would:\n{what}\nPermission request #{id} (also in the portcullis UI: {ui_base}/#request-{id}).",
        );
        match states.ask(id, message, &bound) {
            Some(input) => Modern::Ask(input),
            None => Modern::Refuse,
        }
    }
}

/// The agent settings the bridge reads: `[agents.mcp-bridge]`.
const AGENT_NAME: &str = "mcp-bridge";

impl<A: Authority> Bridge<A> {
    /// `Some(timeout)` when `[agents.mcp-bridge] on_ask = "hold"`: the
    /// configured hold (default 120 s), ending before the client named
    /// `client` stops waiting for the call.
    fn hold_timeout(policy: &Policy, client: Option<&str>) -> Option<std::time::Duration> {
        let settings = policy.agents.get(AGENT_NAME)?;
        let wanted = std::time::Duration::from_secs(settings.hold_timeout_secs.unwrap_or(120));
        (settings.on_ask == Some(portcullis_policy::OnAsk::Hold))
            .then(|| clients::hold_budget(client, wanted))
    }

    /// Keeps the call waiting until a person resolves `request` (or the
    /// timeout); after an approval the call is judged again. Nothing ran.
    /// The engine holds (it stores the deadline, for the UI's countdown) and
    /// reads the request; the bridge only sleeps between looks.
    async fn hold(
        &self,
        request: i64,
        timeout: std::time::Duration,
        call: &ToolCall,
        ctx: &CallContext,
    ) -> Option<portcullis_engine::Outcome> {
        let authority = &self.shared.authority;
        // The store failed: keep the refusal.
        match authority.wait_for_person(request, timeout).await {
            Ok(HoldStatus::Approved) => authority.decide(call.clone(), ctx.clone()).await.ok(),
            Ok(_) | Err(_) => None,
        }
    }
}

impl<A: Authority> ServerHandler for Bridge<A> {
    fn get_info(&self) -> ServerConfig {
        let mut info = ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_tool_list_changed()
                .build(),
        );
        info.server_info = Implementation::new(
            format!("portcullis-bridge:{}", self.shared.name),
            env!("CARGO_PKG_VERSION"),
        );
        info.instructions = self.shared.instructions.get().cloned().flatten();
        info
    }

    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        self.shared
            .upstream
            .write()
            .await
            .push(context.peer.clone());
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let tools = self.refresh().await?;
        Ok(ListToolsResult {
            tools,
            ..Default::default()
        })
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let name = request.name.to_string();
        if self.shared.offered.read().await.is_empty() {
            self.refresh().await?;
        }
        let full = McpToolName::new(self.shared.name.as_str(), name.as_str()).to_string();
        // The policy calls are judged under now: its hold settings and the UI's address.
        let policy = self.shared.authority.policy().await.ok();
        let ui_base = policy.as_deref().map(Self::ui_base).unwrap_or_default();
        if !self.shared.offered.read().await.contains_key(&name) {
            let (server, tool) = (self.shared.name.clone(), name.clone());
            let withheld = self
                .shared
                .authority
                .with_engine(move |e| e.tool_withheld(&server, &tool))
                .await
                .unwrap_or(false);
            if withheld {
                let text = format!(
                    "portcullis: `{full}` is withheld: its definition changed since it was approved. A person must approve the new definition in the portcullis UI ({ui_base}/#tool-changes) before it can be used.",
                );
                return Ok(Self::refusal(
                    text,
                    json!({"portcullis": {"decision": "deny", "reason": "tool-definition-changed"}}),
                ));
            }
            return Err(ErrorData::invalid_params(
                format!("unknown tool `{name}`"),
                None,
            ));
        }
        let input = request
            .arguments
            .clone()
            .map(Value::Object)
            .unwrap_or_else(|| json!({}));
        // The tool's own annotations, from its pinned definition (a changed
        // one is withheld above): `readOnlyHint` makes its path arguments
        // reads — a server that lies about it runs with the user's rights
        // anyway and is held by pinning and confinement, not by reading its
        // arguments as writes; every other annotation (`destructiveHint`)
        // only tightens.
        let (read_only, destructive) = {
            let offered = self.shared.offered.read().await;
            let hints = offered.get(&name).and_then(|t| t.annotations.clone());
            let read_only = hints
                .as_ref()
                .is_some_and(|a| a.read_only_hint == Some(true));
            let destructive = hints
                .as_ref()
                .is_some_and(|a| a.destructive_hint == Some(true));
            (read_only, destructive)
        };
        let call = ToolCall {
            tool: ToolRef {
                name: full.clone(),
                origin: Origin::Mcp,
                server: Some(self.shared.name.clone()),
                manifest: (read_only || destructive).then(|| Manifest {
                    filesystem: if read_only {
                        FsAccess::Read
                    } else {
                        FsAccess::None
                    },
                    destructive,
                    ..Default::default()
                }),
            },
            input,
            cwd: self.shared.cwd.clone(),
        };
        let mut ctx = self.call_context(&context);
        if ctx.token.is_none() && !ctx.require_token {
            // On stdio: the agent's own session for this very call, found by
            // the engine in the decision's own trip.
            let (call_id, meta_session) =
                clients::call_identity(client_name(&context).as_deref(), |key| {
                    request
                        .meta
                        .as_ref()
                        .and_then(|m| m.0.0.get(key))
                        .or_else(|| context.meta.0.0.get(key))
                        .and_then(Value::as_str)
                        .map(str::to_string)
                });
            ctx.agent_link = Some(portcullis_engine::AgentLink {
                agent: self.shared.agent,
                call_id,
                // The session the call names (Codex), else the one the agent
                // put in this process' environment (Claude Code).
                env_session: meta_session.or_else(|| self.shared.agent_env_session.clone()),
            });
        }
        let outcome = self
            .shared
            .authority
            .decide(call.clone(), ctx.clone())
            .await;
        // The link is used up: judging the call again (after a person
        // answered) names the session it found.
        if let (Some(_), Ok(o)) = (ctx.agent_link.take(), &outcome) {
            ctx.sources.agent = o.session.clone();
        }
        let outcome = match outcome {
            Ok(o) => o,
            Err(e) => {
                let text = format!("portcullis could not judge this call and refuses it: {e}");
                return Ok(Self::refusal(
                    text,
                    json!({"portcullis": {"decision": "deny", "reason": "engine-error"}}),
                ));
            }
        };
        let mut outcome = outcome;
        if outcome.decision.decision == Verdict::Ask
            && let Some(r) = outcome.request.as_ref().filter(|r| r.eligible)
        {
            let pending = r.id;
            if client_elicits(&context) && client_is_modern(&context) {
                match self
                    .ask_modern(&request, &full, &call, &ctx, &ui_base, &outcome)
                    .await
                {
                    Modern::Ask(asked) => return Ok(CallToolResponse::InputRequired(asked)),
                    Modern::Judged(again) => outcome = *again,
                    Modern::Refuse => {}
                }
            } else if client_elicits(&context) {
                if let Some(again) = self
                    .ask_in_client(&context, &full, &call, &ctx, &ui_base, &outcome)
                    .await
                {
                    outcome = again;
                }
            } else if let Some(policy) = &policy
                && let Some(timeout) = Self::hold_timeout(policy, client_name(&context).as_deref())
                && let Some(again) = self.hold(pending, timeout, &call, &ctx).await
            {
                outcome = again;
            }
        }
        if outcome.decision.decision == Verdict::Allow {
            let peer = self.shared.downstream.read().await.clone();
            let Some(peer) = peer else {
                return Err(ErrorData::internal_error(
                    "the MCP server is not connected",
                    None,
                ));
            };
            return peer.call_tool_once(request).await.map_err(|e| {
                ErrorData::internal_error(format!("the MCP server failed: {e}"), None)
            });
        }
        let mut reasons: Vec<&str> = outcome
            .decision
            .reasons
            .iter()
            .map(|r| r.message.as_str())
            .collect();
        reasons.dedup();
        let verdict = outcome.decision.decision.as_str();
        let (text, remediation, url) = match &outcome.request {
            Some(r) => {
                let url = format!("{ui_base}/#request-{}", r.id);
                (
                    format!(
                        "portcullis refused `{full}`: {}. A permission request (#{}) is waiting for a person in the portcullis UI ({url}). Nothing ran; retry the same call after it is approved.",
                        reasons.join("; "),
                        r.id
                    ),
                    if r.eligible {
                        "available"
                    } else {
                        "unavailable"
                    },
                    Some(url),
                )
            }
            None => (
                format!("portcullis refused `{full}`: {}.", reasons.join("; ")),
                "unavailable",
                None,
            ),
        };
        let envelope = json!({
            "io.modelcontextprotocol/authorization": {
                "reason": "insufficient_authorization",
                "remediation": remediation,
                "remediationHints": url.iter().map(|u| json!({"url": u})).collect::<Vec<_>>(),
            },
            "portcullis": {
                "decision": verdict,
                "reasons": outcome.decision.reasons.iter().map(|r| json!({"code": r.code, "rule": r.rule})).collect::<Vec<_>>(),
                "request": outcome.request.as_ref().map(|r| r.id),
                "eligible": outcome.request.as_ref().map(|r| r.eligible),
                "ui": url,
                "audit": outcome.audit_id,
            }
        });
        Ok(Self::refusal(text, envelope))
    }
}

/// The Streamable HTTP service of a bridge, for the daemon's
/// `/s/{session}/mcp/{name}`: every MCP session over HTTP shares this
/// bridge's downstream server and pins; each call is judged for the session
/// its request names ([`HttpCaller`]). The daemon checks `Host` and `Origin`
/// before this service sees a request.
pub fn http_service<A: Authority>(
    bridge: Bridge<A>,
) -> rmcp::transport::streamable_http_server::StreamableHttpService<
    Bridge<A>,
    rmcp::transport::streamable_http_server::session::local::LocalSessionManager,
> {
    let config = rmcp::transport::streamable_http_server::StreamableHttpServerConfig::default()
        // The daemon's guard has already checked the Host against its own
        // address and port; rmcp's check would refuse the port-qualified form.
        .disable_allowed_hosts();
    rmcp::transport::streamable_http_server::StreamableHttpService::new(
        move || Ok(bridge.clone()),
        Default::default(),
        config,
    )
}
