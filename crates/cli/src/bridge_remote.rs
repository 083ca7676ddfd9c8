//! The MCP bridge on a machine governed by a team server (`PORTCULLIS_SERVER`
//! or `[server] url`): each tool call is decided by the server, as a
//! governed hook's is ([`Remote`]: this machine's facts and device-wide
//! approvals reported, its credential shown), and a hold waits on the
//! server. What concerns only this machine's downstream server stays in its
//! own store: the tool-definition pins and the withheld tools. A device
//! cannot approve anything, so a client's own prompt (elicitation) approves
//! nothing here: the person approves in the team server's UI.

use std::sync::Arc;
use std::time::Duration;

use portcullis_bridge::{Authority, Local};
use portcullis_engine::{CallContext, Engine, EngineError, HoldStatus, Outcome};
use portcullis_paths::FsPaths;
use portcullis_policy::{Policy, ToolCall};

use crate::hook_judge::Authority as _;
use crate::remote_hook::Remote;

/// The team server decides; this machine's store keeps its pins.
#[derive(Clone)]
pub struct Governed {
    local: Local,
    remote: Arc<Remote>,
    server: String,
}

impl Governed {
    pub fn new(local: Local, remote: Remote, server: &str) -> Governed {
        Governed {
            local,
            remote: Arc::new(remote),
            server: server.to_owned(),
        }
    }
}

impl Authority for Governed {
    async fn policy(&self) -> Result<Arc<Policy>, String> {
        self.local.policy().await
    }

    async fn decide(&self, call: ToolCall, ctx: CallContext) -> Result<Outcome, String> {
        let remote = Arc::clone(&self.remote);
        tokio::task::spawn_blocking(move || remote.decide(&[], &call, &ctx, crate::state::now()))
            .await
            .map_err(|e| format!("asking the team server failed: {e}"))?
            .map_err(|e| format!("{e:#}"))
    }

    async fn with_engine<R, G>(&self, f: G) -> Result<R, String>
    where
        R: Send + 'static,
        G: FnOnce(&Engine<FsPaths>) -> Result<R, EngineError> + Send + 'static,
    {
        self.local.with_engine(f).await
    }

    async fn wait_for_person(&self, request: i64, timeout: Duration) -> Result<HoldStatus, String> {
        let remote = Arc::clone(&self.remote);
        tokio::task::spawn_blocking(move || {
            remote.wait_for_person(request, crate::state::now(), timeout)
        })
        .await
        .map_err(|e| format!("asking the team server failed: {e}"))?
        .map_err(|e| format!("{e:#}"))
    }

    async fn approve_once(&self, request: i64, _by: String) -> Result<(), String> {
        Err(format!(
            "request #{request} is the team server {}'s: a person approves it there",
            self.server
        ))
    }
}
