//! `portcullis serve`: the HTTP API, live events and the approval UI.
//!
//! This crate is a front door: it translates HTTP to calls of the one engine
//! (`portcullis-engine`) and the engine's answers to JSON and HTML. It decides
//! nothing itself, and it reads no configuration files: the binary hands it a
//! [`PolicySource`]. What it adds is the local security of the approval
//! surface ([`auth`]) and live notifications ([`events`]).
//!
//! Layout: [`api`] (JSON handlers), [`ui`] (server-rendered pages, assets
//! embedded), [`auth`] (Host/Origin checks, login token, CSRF), [`events`]
//! (the store watcher behind Server-Sent Events), [`metrics`] (Prometheus),
//! [`conn`] (the connection loop and its limits), [`health`] (whether
//! decisions can be made).

pub mod api;
pub mod auth;
pub mod conn;
pub mod decider;
pub mod desktop;
pub mod error;
pub mod events;
pub mod health;
pub mod mcp;
pub mod metrics;
pub mod routes;
pub mod tls;
pub mod ui;

use std::collections::HashMap;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicUsize;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use axum::Router;
use axum::extract::{DefaultBodyLimit, Request, State};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use portcullis_engine::Engine;
use portcullis_paths::{Environment, FsPaths, Scopes};
use portcullis_policy::Policy;
use portcullis_store::{Integrity, Store};
use tokio::sync::broadcast;

use crate::auth::{Auth, Hosts};
use crate::error::ApiError;
use crate::events::{ServerEvent, Watcher};
use crate::health::Health;
use crate::metrics::Metrics;

/// The largest request body accepted (a tool call with its input).
pub const MAX_BODY: usize = 256 * 1024;

/// How long a loaded configuration is reused before it is read again.
pub const POLICY_TTL: Duration = Duration::from_secs(2);

/// Where the policy for a call made in a working directory comes from (the
/// binary reads the configuration layers; this crate reads no files).
pub trait PolicySource: Send + Sync + 'static {
    /// The merged policy for calls made in `cwd`, or why there is none (a
    /// configuration error: every call from there is denied).
    fn policy_for(&self, cwd: &Path) -> Result<Policy, String>;
}

/// A fixed policy (tests, embedding).
impl PolicySource for Policy {
    fn policy_for(&self, _cwd: &Path) -> Result<Policy, String> {
        Ok(self.clone())
    }
}

/// A policy with the path facts a call is judged with.
pub struct Judge {
    pub policy: Policy,
    pub facts: JudgeFacts,
}

/// The file-system facts of a call: this machine's (built from the policy's
/// workspace settings), or the ones an enrolled device reported with its
/// call — the device's paths are not this machine's.
pub enum JudgeFacts {
    Local(FsPaths),
    Reported(portcullis_policy::reported::Reported),
}

impl portcullis_policy::PathFacts for JudgeFacts {
    fn resolve(&self, raw: &str, cwd: &str) -> portcullis_policy::PathFact {
        match self {
            JudgeFacts::Local(f) => f.resolve(raw, cwd),
            JudgeFacts::Reported(f) => f.resolve(raw, cwd),
        }
    }

    fn home(&self) -> &str {
        match self {
            JudgeFacts::Local(f) => f.home(),
            JudgeFacts::Reported(f) => f.home(),
        }
    }

    fn expand_glob(&self, pattern: &str, cwd: &str) -> Option<Vec<String>> {
        match self {
            JudgeFacts::Local(f) => f.expand_glob(pattern, cwd),
            JudgeFacts::Reported(f) => f.expand_glob(pattern, cwd),
        }
    }

    fn exists(&self, raw: &str, cwd: &str) -> bool {
        match self {
            JudgeFacts::Local(f) => f.exists(raw, cwd),
            JudgeFacts::Reported(f) => f.exists(raw, cwd),
        }
    }
}

type Cached = (Instant, Result<Arc<Judge>, String>);

/// Policies by working directory, reloaded after [`POLICY_TTL`].
pub struct PolicyCache {
    source: Box<dyn PolicySource>,
    env: Environment,
    entries: Mutex<HashMap<String, Cached>>,
}

impl PolicyCache {
    /// The judge for calls made in `cwd`. Reads configuration files when
    /// the cached one is stale: blocking, and never under the cache's lock
    /// (two callers may load the same directory at once; the last one wins).
    fn get_blocking(&self, cwd: &str) -> Result<Arc<Judge>, String> {
        {
            let entries = self.entries.lock().unwrap_or_else(|p| p.into_inner());
            if let Some((at, judge)) = entries.get(cwd)
                && at.elapsed() < POLICY_TTL
            {
                return judge.clone();
            }
        }
        let judge = self.source.policy_for(Path::new(cwd)).map(|policy| {
            let scopes = Scopes::of(&policy.workspace);
            let facts = FsPaths::new(&scopes, &self.env);
            Arc::new(Judge {
                policy,
                facts: JudgeFacts::Local(facts),
            })
        });
        let mut entries = self.entries.lock().unwrap_or_else(|p| p.into_inner());
        if entries.len() > 1024 {
            entries.clear();
        }
        entries.insert(cwd.to_string(), (Instant::now(), judge.clone()));
        judge
    }

    /// [`PolicyCache::get_blocking`] on the blocking pool: for async callers.
    pub async fn get(self: &Arc<Self>, cwd: &str) -> Result<Arc<Judge>, String> {
        let cache = Arc::clone(self);
        let cwd = cwd.to_string();
        tokio::task::spawn_blocking(move || cache.get_blocking(&cwd))
            .await
            .map_err(|e| format!("loading the configuration failed: {e}"))?
    }
}

/// What a running server shares between requests.
pub struct AppState {
    /// Decisions: the engine on its own thread ([`decider`]).
    pub decider: Arc<decider::Decider>,
    /// Everything else (the UI, approvals, listings): a second connection,
    /// used on the blocking pool ([`AppState::with_store`]).
    store: Arc<Mutex<Store>>,
    policies: Arc<PolicyCache>,
    pub auth: Auth,
    pub hosts: Hosts,
    pub events: broadcast::Sender<ServerEvent>,
    pub metrics: Arc<Metrics>,
    pub data_dir: PathBuf,
    /// MCP servers served over HTTP at `/s/{session}/mcp/{name}`.
    pub mcp: mcp::McpFront,
    /// Whether decisions can be made (`/healthz`).
    pub health: Arc<Health>,
    pub limits: conn::Limits,
    /// `/v1/events` streams open now.
    pub event_streams: AtomicUsize,
    /// HTTPS, when served so.
    pub tls: Option<Arc<rustls::ServerConfig>>,
    _watcher: Watcher,
}

impl AppState {
    /// The store for people's actions and listings, for a synchronous
    /// caller (tests, the blocking pool). Held for one operation at a time,
    /// never across an `.await`.
    pub fn store(&self) -> MutexGuard<'_, Store> {
        self.store.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Runs `f` on the people's store connection on the blocking pool:
    /// SQLite never blocks the async runtime. The error is only a failed
    /// task (a panic in `f`).
    pub async fn with_store<T: Send + 'static>(
        &self,
        f: impl FnOnce(&Store) -> T + Send + 'static,
    ) -> Result<T, ApiError> {
        let store = Arc::clone(&self.store);
        tokio::task::spawn_blocking(move || {
            let store = store.lock().unwrap_or_else(|p| p.into_inner());
            f(&store)
        })
        .await
        .map_err(|e| ApiError::internal(format!("a store operation failed: {e}")))
    }

    async fn judge(&self, cwd: &str) -> Result<Arc<Judge>, String> {
        self.policies.get(cwd).await
    }

    /// Where "always" saves a rule for a call made in `cwd`: `user` (this
    /// user's configuration) or `project` (the project's `.portcullis.toml`,
    /// loaded only when the project is trusted).
    fn save_to(
        &self,
        place: &str,
        cwd: &str,
        judge: &Judge,
    ) -> Result<portcullis_engine::SaveTo, String> {
        let JudgeFacts::Local(facts) = &judge.facts else {
            return Err(
                "a rule cannot be saved from a device's call: its files are the device's".into(),
            );
        };
        portcullis_engine::SaveTo::for_call(place, cwd, &judge.policy, facts, &self.policies.env)
    }
}

/// Why a person's rule could not resolve a request; each front door words
/// it its own way (an HTTP status, a message on the page).
pub(crate) enum RuleError {
    /// There is no such request.
    NotFound(String),
    /// The request names no whole call, or the rule does not cover it.
    Refused(String),
    /// `save` is neither `user` nor `project`, or names no project.
    BadSave(String),
    /// The configuration or the engine failed.
    Internal(String),
}

impl AppState {
    /// Resolves request `id` with a person's rule: the call judged again
    /// under its directory's configuration on the decision thread, the rule
    /// checked to cover it there (and saved where `save` says). Answers the
    /// request, its grant and where the rule was saved.
    pub(crate) async fn resolve_with_rule(
        &self,
        id: i64,
        how: portcullis_store::Resolution,
        rule: String,
        save: Option<String>,
        approver: String,
        now: i64,
    ) -> Result<
        (
            portcullis_store::Request,
            Option<portcullis_store::Grant>,
            Option<String>,
        ),
        RuleError,
    > {
        let request = self
            .with_store(move |s| s.request(id))
            .await
            .map_err(|e| RuleError::Internal(e.message))?
            .map_err(|e| RuleError::Internal(e.to_string()))?
            .ok_or_else(|| RuleError::NotFound(format!("no request #{id}")))?;
        let portcullis_store::GrantTarget::Call { cwd, .. } = request.target else {
            return Err(RuleError::Refused(format!(
                "request #{id} does not name a whole call: approve it as it is"
            )));
        };
        let judge = self
            .judge(&cwd)
            .await
            .map_err(|why| RuleError::Internal(format!("configuration error: {why}")))?;
        let save = save
            .map(|place| self.save_to(&place, &cwd, &judge))
            .transpose()
            .map_err(RuleError::BadSave)?;
        let saved_to = save.as_ref().map(|s| s.path.display().to_string());
        let resolved = self
            .decider
            .with_engine(move |e| {
                let choice = portcullis_engine::RuleChoice {
                    rule: &rule,
                    save: save.as_ref(),
                    approver: &approver,
                    now,
                };
                e.resolve_with_rule(id, how, &choice, &judge.policy, &judge.facts)
            })
            .await
            .map_err(|e| RuleError::Internal(e.to_string()))?;
        match resolved {
            Ok((request, grant)) => Ok((request, grant, saved_to)),
            Err(refused) => Err(RuleError::Refused(refused.to_string())),
        }
    }
}

/// Why the server could not start.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    #[error("opening the store {store}: {source}")]
    Store {
        store: portcullis_store::Location,
        source: Box<portcullis_store::StoreError>,
    },
    #[error(transparent)]
    Token(#[from] auth::TokenError),
    #[error("starting the store watcher: {0}")]
    Watcher(std::io::Error),
    #[error("starting the decision thread: {0}")]
    Decider(std::io::Error),
    #[error(
        "the database in {} is damaged ({why}): move {} away (a new one is made) or restore it from a backup",
        dir.display(),
        dir.join(portcullis_store::DB_FILE).display()
    )]
    Damaged { dir: PathBuf, why: String },
}

/// Everything a server needs.
pub struct Options {
    /// The address it is bound to (for the `Host` checks and the printed URL).
    pub addr: SocketAddr,
    pub data_dir: PathBuf,
    /// The store: SQLite in `data_dir`, or a team's PostgreSQL.
    pub store: portcullis_store::Location,
    pub policy: Box<dyn PolicySource>,
    pub env: Environment,
    /// `[[mcp.servers]]` and the policy and directory their calls are judged in.
    pub mcp: mcp::McpConfig,
    /// Timeouts and caps.
    pub limits: conn::Limits,
    /// HTTPS ([`tls::load`]); `None`: plain HTTP.
    pub tls: Option<Arc<rustls::ServerConfig>>,
}

/// The state of a server, plus whether its login token was just created.
pub fn state(opts: Options) -> Result<(Arc<AppState>, bool), StartError> {
    let open = || {
        opts.store.open().map_err(|source| StartError::Store {
            store: opts.store.clone(),
            source: Box::new(source),
        })
    };
    // The login token, users' tokens and the hook socket live in the data
    // directory whichever database holds the state.
    portcullis_store::prepare_data_dir(&opts.data_dir).map_err(|source| StartError::Store {
        store: opts.store.clone(),
        source: Box::new(source),
    })?;
    let store = open()?;
    // A damaged store is refused at start (it is checked again on a timer).
    match store.quick_check() {
        Ok(Integrity::Ok) => {}
        Ok(damage) => {
            return Err(StartError::Damaged {
                dir: opts.data_dir.clone(),
                why: format!("PRAGMA quick_check: {damage}"),
            });
        }
        Err(source) => {
            return Err(StartError::Store {
                store: opts.store.clone(),
                source: Box::new(source),
            });
        }
    }
    let health = Arc::new(Health::of(&store));
    let admin_store = open()?;
    let (auth, created) = Auth::load_or_create(&opts.data_dir)?;
    let default_facts = FsPaths::new(&Scopes::default(), &opts.env);
    let engine = Engine::new(store, Policy::default(), default_facts);
    let decider = Arc::new(
        decider::Decider::start(engine, Arc::clone(&health)).map_err(StartError::Decider)?,
    );
    let policies = Arc::new(PolicyCache {
        source: opts.policy,
        env: opts.env.clone(),
        entries: Mutex::new(HashMap::new()),
    });
    // The `[[server.users]]` of the daemon's directory's configuration and
    // their tokens (`user-tokens`), now and again as either changes: a
    // revoked token or a removed user stops working within seconds.
    {
        let policies = Arc::clone(&policies);
        let cwd = opts.mcp.cwd.clone();
        let data_dir = opts.data_dir.clone();
        auth.keep_users(move || {
            let users = policies
                .get_blocking(&cwd)
                .map(|j| j.policy.server_users.clone())
                .unwrap_or_default();
            let hashes = portcullis_store::user_token_hashes(&data_dir).unwrap_or_default();
            (users, hashes)
        });
    }
    let (events, _) = broadcast::channel(1024);
    let metrics = Arc::new(Metrics::default());
    let watcher = events::watch(
        opts.store.clone(),
        events.clone(),
        Arc::clone(&metrics),
        Arc::clone(&health),
        opts.limits.quick_check_every,
        desktop::Desktop::from_env(
            &Hosts::for_addr(opts.addr)
                .with_tls(opts.tls.is_some())
                .base_url(),
        ),
    )
    .map_err(StartError::Watcher)?;
    let state = AppState {
        mcp: mcp::McpFront::new(opts.mcp, Arc::clone(&decider), Arc::clone(&policies)),
        decider,
        store: Arc::new(Mutex::new(admin_store)),
        policies,
        health,
        limits: opts.limits,
        event_streams: AtomicUsize::new(0),
        auth,
        hosts: Hosts::for_addr(opts.addr).with_tls(opts.tls.is_some()),
        tls: opts.tls,
        events,
        metrics,
        data_dir: opts.data_dir,
        _watcher: watcher,
    };
    Ok((Arc::new(state), created))
}

/// Every route: the API under `/v1`, the UI at the root.
pub fn router(state: Arc<AppState>) -> Router {
    routes::router(&state)
        .fallback(|| async {
            error::ApiError::not_found("no such endpoint (the API is under /v1, the UI at /)")
        })
        .method_not_allowed_fallback(|| async {
            error::ApiError::new(
                axum::http::StatusCode::METHOD_NOT_ALLOWED,
                "method-not-allowed",
                "this endpoint does not take that method",
            )
        })
        .layer(DefaultBodyLimit::max(MAX_BODY))
        .layer(middleware::from_fn_with_state(Arc::clone(&state), guard))
        .with_state(state)
}

/// Host and Origin checks before any handler runs.
async fn guard(State(state): State<Arc<AppState>>, req: Request, next: Next) -> Response {
    if let Err(e) = auth::check_request(&state.hosts, req.method(), req.headers()) {
        return e.into_response();
    }
    let mut res = next.run(req).await;
    let h = res.headers_mut();
    // Pages of the approval UI are never framed or sniffed, and never cached.
    use axum::http::HeaderValue;
    h.insert("x-frame-options", HeaderValue::from_static("DENY"));
    h.insert(
        "x-content-type-options",
        HeaderValue::from_static("nosniff"),
    );
    h.insert(
        "referrer-policy",
        // `same-origin`, not `no-referrer`: with no referrer, browsers send
        // `Origin: null` on form posts, which the Origin check refuses.
        HeaderValue::from_static("same-origin"),
    );
    h.insert("cache-control", HeaderValue::from_static("no-store"));
    res
}

/// Serves on `listener` until the future completes (or forever), within
/// the state's [`conn::Limits`].
pub async fn serve(
    listener: tokio::net::TcpListener,
    state: Arc<AppState>,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    conn::serve(listener, state, shutdown).await
}
