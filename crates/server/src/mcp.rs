//! The MCP bridge over HTTP: `/s/{session}/mcp/{name}` (Streamable HTTP).
//!
//! A session works in its own project: the server runs per workspace — the
//! session's recorded working directory (else the daemon's own) — with the
//! `[[mcp.servers]]` entry of that directory's configuration, in that
//! directory, its calls judged under that directory's policy. One downstream
//! per (workspace, entry) is started on first use and shared by the sessions
//! working there; an entry changed in the configuration starts a new one. The
//! session comes from the URL path and `X-Session-ID` (the one resolver:
//! different values are a 409, never a pick) and is proven with its token
//! (`Authorization: Bearer`), as for `/v1/decide`.
//!
//! Every call, pin check and hold goes through the daemon's decision thread
//! ([`Daemon`]), under the policy of the workspace as it is now (the same
//! cache as `/v1/decide`): a configuration change applies here as it does to
//! every other decision.

use std::collections::HashMap;
use std::sync::Arc;

use axum::extract::{Path, Request, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use portcullis_bridge::{Authority, Bridge, HttpCaller};
use portcullis_engine::{CallContext, Engine, EngineError, Outcome};
use portcullis_paths::FsPaths;
use portcullis_policy::{McpServer, Policy, ToolCall};
use rmcp::transport::streamable_http_server::StreamableHttpService;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use tower::ServiceExt;

use crate::decider::Decider;
use crate::error::ApiError;
use crate::{AppState, PolicyCache};

type Service = StreamableHttpService<Bridge<Daemon>, LocalSessionManager>;

/// What the daemon needs to run MCP servers.
#[derive(Clone, Default)]
pub struct McpConfig {
    /// The workspace of a session that recorded none: the daemon's own
    /// directory.
    pub cwd: String,
}

/// The most downstream servers running at once (workspaces × entries).
const MAX_RUNNING: usize = 64;

/// A downstream server running for one workspace, as its entry said.
struct Running {
    server: McpServer,
    bridge: Bridge<Daemon>,
    service: Service,
}

pub struct McpFront {
    config: McpConfig,
    decider: Arc<Decider>,
    policies: Arc<PolicyCache>,
    /// By (workspace, server name).
    running: tokio::sync::Mutex<HashMap<(String, String), Running>>,
}

impl McpFront {
    pub fn new(config: McpConfig, decider: Arc<Decider>, policies: Arc<PolicyCache>) -> McpFront {
        McpFront {
            config,
            decider,
            policies,
            running: tokio::sync::Mutex::new(HashMap::new()),
        }
    }
}

/// The daemon's engine, as the MCP bridge reaches it: the decision thread.
#[derive(Clone)]
pub struct Daemon {
    decider: Arc<Decider>,
    policies: Arc<PolicyCache>,
    cwd: String,
}

impl Authority for Daemon {
    async fn policy(&self) -> Result<Arc<Policy>, String> {
        let judge = self.policies.get(&self.cwd).await?;
        Ok(Arc::new(judge.policy.clone()))
    }

    async fn decide(&self, call: ToolCall, ctx: CallContext) -> Result<Outcome, String> {
        let judge = self
            .policies
            .get(&call.cwd)
            .await
            .map_err(|why| format!("configuration error: {why}"))?;
        self.decider
            .decide(judge, call, ctx)
            .await
            .map_err(|e| e.to_string())
    }

    async fn with_engine<R, G>(&self, f: G) -> Result<R, String>
    where
        R: Send + 'static,
        G: FnOnce(&Engine<FsPaths>) -> Result<R, EngineError> + Send + 'static,
    {
        self.decider.with_engine(f).await.map_err(|e| e.to_string())
    }
}

pub(crate) async fn front_rest(
    state: State<Arc<AppState>>,
    Path((session, name, _rest)): Path<(String, String, String)>,
    req: Request,
) -> Response {
    front(state, Path((session, name)), req).await
}

pub(crate) async fn front(
    State(state): State<Arc<AppState>>,
    Path((session, name)): Path<(String, String)>,
    mut req: Request,
) -> Response {
    let header_session = req
        .headers()
        .get("x-session-id")
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    let sources = portcullis_engine::SessionSources {
        url_path: Some(session.clone()),
        header: header_session.clone(),
        ..Default::default()
    };
    if let Err(portcullis_engine::EngineError::SessionConflict { sources }) =
        portcullis_engine::resolve_session(&sources)
    {
        return ApiError::session_conflict(
            &sources,
            format!("the URL path names session `{session}` and X-Session-ID another"),
        )
        .into_response();
    }
    let token = crate::auth::bearer(req.headers()).map(str::to_string);
    let admin = token
        .as_deref()
        .is_some_and(|t| state.auth.token_matches(t));
    // The session's workspace, its configuration, and the entry there.
    let recorded = {
        let id = session.clone();
        state
            .with_store(move |s| s.session(&id).ok().flatten().and_then(|s| s.cwd))
            .await
            .ok()
            .flatten()
    };
    let workspace = recorded
        .filter(|cwd| cwd.starts_with('/'))
        .unwrap_or_else(|| state.mcp.config.cwd.clone());
    let judge = match state.mcp.policies.get(&workspace).await {
        Ok(judge) => judge,
        Err(why) => {
            return ApiError::new(
                StatusCode::FORBIDDEN,
                "configuration-error",
                format!("the configuration of {workspace} does not load: {why}"),
            )
            .into_response();
        }
    };
    let Some(server) = judge
        .policy
        .mcp_servers
        .iter()
        .find(|m| m.name == name)
        .cloned()
    else {
        return ApiError::new(
            StatusCode::NOT_FOUND,
            "unknown-mcp-server",
            format!("no [[mcp.servers]] entry named `{name}` in the configuration of {workspace}"),
        )
        .into_response();
    };
    let service = match service_for(&state, &server, &workspace).await {
        Ok(s) => s,
        Err(e) => {
            return ApiError::new(StatusCode::BAD_GATEWAY, "mcp-server-failed", e).into_response();
        }
    };
    req.extensions_mut().insert(HttpCaller {
        url_session: Some(session),
        header_session,
        token,
        admin,
    });
    match service.oneshot(req).await {
        Ok(res) => res.map(axum::body::Body::new),
        Err(e) => match e {},
    }
}

/// The running bridge of `server` in `workspace`, started on first use (and
/// again when its entry changed).
async fn service_for(
    state: &AppState,
    server: &McpServer,
    workspace: &str,
) -> Result<Service, String> {
    let key = (workspace.to_string(), server.name.clone());
    let mut running = state.mcp.running.lock().await;
    if let Some(r) = running.get(&key) {
        if r.server == *server {
            return Ok(r.service.clone());
        }
        // The entry changed: its old server stops, the new one starts.
        if let Some(old) = running.remove(&key) {
            old.bridge.close().await;
        }
    }
    if running.len() >= MAX_RUNNING {
        return Err(format!(
            "{MAX_RUNNING} MCP servers already run for other workspaces; restart `portcullis serve` to free them"
        ));
    }
    let home = std::env::var("HOME").unwrap_or_default();
    let target = match portcullis_bridge::Remote::configured(server, &home) {
        Some(remote) => portcullis_bridge::Target::Url(remote),
        None => {
            let Some((program, args)) = server.command.split_first() else {
                return Err(format!("MCP server `{}` has an empty command", server.name));
            };
            let mut command = tokio::process::Command::new(program);
            command.args(args).current_dir(workspace).kill_on_drop(true);
            portcullis_bridge::Target::Command(command)
        }
    };
    let opts = portcullis_bridge::Options {
        name: server.name.clone(),
        session: None,
        env_session: None,
        refuse_unpinned: server.refuse_unpinned,
        trusted: server.trusted,
        cwd: workspace.to_string(),
        // Over HTTP each request names its session (the URL path, its token).
        agent: None,
        agent_env_session: None,
    };
    let authority = Daemon {
        decider: Arc::clone(&state.mcp.decider),
        policies: Arc::clone(&state.mcp.policies),
        cwd: workspace.to_string(),
    };
    let bridge = Bridge::connect(opts, authority, target)
        .await
        .map_err(|e| e.to_string())?;
    let service = portcullis_bridge::http_service(bridge.clone());
    running.insert(
        key,
        Running {
            server: server.clone(),
            bridge,
            service: service.clone(),
        },
    );
    Ok(service)
}
