//! Where a bridge's decisions are made: the one engine, reached without
//! blocking the async runtime. On stdio the bridge owns an engine
//! ([`Local`]: every use runs on tokio's blocking pool); in the daemon, MCP
//! over HTTP goes through the daemon's decision thread (its own
//! implementation, in `portcullis-server`), like every other decision there.

use std::future::Future;
use std::sync::{Arc, Mutex};

use std::time::Duration;

use portcullis_engine::{CallContext, Engine, EngineError, HOLD_POLL, HoldStatus, Outcome};
use portcullis_paths::FsPaths;
use portcullis_policy::{Policy, ToolCall};
use portcullis_store::unix_now;

/// The engine, as a bridge reaches it. Errors are messages: the bridge
/// refuses the call (or withholds the tool) and says why.
pub trait Authority: Send + Sync + 'static {
    /// The policy calls are judged under now (the hold settings, the UI's address).
    fn policy(&self) -> impl Future<Output = Result<Arc<Policy>, String>> + Send;

    /// Decides a call.
    fn decide(
        &self,
        call: ToolCall,
        ctx: CallContext,
    ) -> impl Future<Output = Result<Outcome, String>> + Send;

    /// Runs `f` on the engine, off the async runtime (pins, sessions).
    fn with_engine<R, G>(&self, f: G) -> impl Future<Output = Result<R, String>> + Send
    where
        R: Send + 'static,
        G: FnOnce(&Engine<FsPaths>) -> Result<R, EngineError> + Send + 'static;

    /// Keeps a call waiting until a person resolves the request it raised,
    /// or `timeout` passes. The engine holds (it stores the deadline, for the
    /// UI's countdown) and reads the request; the bridge only sleeps between
    /// looks. Never [`HoldStatus::Waiting`].
    fn wait_for_person(
        &self,
        request: i64,
        timeout: Duration,
    ) -> impl Future<Output = Result<HoldStatus, String>> + Send {
        async move {
            let hold = self
                .with_engine(move |e| e.hold(request, unix_now(), timeout))
                .await?;
            loop {
                match self.with_engine(move |e| e.hold_status(&hold)).await? {
                    HoldStatus::Waiting => tokio::time::sleep(HOLD_POLL).await,
                    done => return Ok(done),
                }
            }
        }
    }

    /// The person at the agent approved the request once (an MCP
    /// elicitation the client answered).
    fn approve_once(
        &self,
        request: i64,
        by: String,
    ) -> impl Future<Output = Result<(), String>> + Send {
        async move {
            self.with_engine(move |e| e.approve_once(request, &by, unix_now()))
                .await
        }
    }
}

/// A bridge's own engine (`portcullis mcp-bridge` on stdio). The lock is
/// taken on the blocking pool, never held across an `.await`.
#[derive(Clone)]
pub struct Local {
    engine: Arc<Mutex<Engine<FsPaths>>>,
    policy: Arc<Policy>,
}

impl Local {
    pub fn new(engine: Engine<FsPaths>) -> Local {
        Local {
            policy: Arc::new(engine.policy().clone()),
            engine: Arc::new(Mutex::new(engine)),
        }
    }
}

impl Authority for Local {
    async fn policy(&self) -> Result<Arc<Policy>, String> {
        Ok(Arc::clone(&self.policy))
    }

    async fn decide(&self, call: ToolCall, ctx: CallContext) -> Result<Outcome, String> {
        self.with_engine(move |e| e.decide(&call, &ctx, portcullis_store::unix_now()))
            .await
    }

    async fn with_engine<R, G>(&self, f: G) -> Result<R, String>
    where
        R: Send + 'static,
        G: FnOnce(&Engine<FsPaths>) -> Result<R, EngineError> + Send + 'static,
    {
        let engine = Arc::clone(&self.engine);
        tokio::task::spawn_blocking(move || {
            let engine = engine.lock().unwrap_or_else(|p| p.into_inner());
            f(&engine)
        })
        .await
        .map_err(|e| format!("the engine failed: {e}"))?
        .map_err(|e| e.to_string())
    }
}
