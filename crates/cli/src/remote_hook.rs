//! The hook on a machine governed by a team server (`PORTCULLIS_SERVER`, or
//! `[server] url` in the person's or the managed configuration):
//! the call is judged by the server, never here. A server that does not
//! answer, answers late or refuses is the agent's refusal, naming it.
//!
//! The call is translated exactly as a local hook translates it
//! (`hook_judge::judge`), with a [`Remote`] authority in place of the
//! engine: it records the file-system facts a local decision of the call
//! asked for (the server has none of this machine's files) and asks the
//! server's `/v1/decide` with this machine's credential, over the blocking
//! client of [`crate::team_http`] — in the hook's own process, so the
//! remote path costs one request over the local one. Nothing is decided
//! here.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, anyhow, bail};
use portcullis_engine::{
    CallContext, Engine, HandOff, HeldApproval, HoldStatus, Outcome, SessionStatus,
};
use portcullis_paths::FsPaths;
use portcullis_policy::reported::Recording;
use portcullis_policy::{Decision, Policy, Reason, ReasonCode, ToolCall, Verdict};
use portcullis_store::{DeviceCredential, GrantScope, NewGrant, NewSession, Op, Store};

use crate::hook_judge::Authority;
use crate::team_http;

/// The team server as the authority: asks, never decides.
pub struct Remote {
    credential: DeviceCredential,
    data_dir: PathBuf,
    target: team_http::Server,
    policy: Policy,
    facts: FsPaths,
    /// The caller's deadline (a hook's, within its agent's timeout); `None`:
    /// each request has its own ([`DECISION_WAIT`]).
    deadline: Option<Instant>,
}

impl Remote {
    /// The team server `server` (from `PORTCULLIS_SERVER` or `[server]
    /// url`) as this machine's authority, with the credential enrolled in
    /// `data_dir`: refused when the machine is not enrolled, or enrolled with
    /// another server.
    pub fn for_machine(
        server: &str,
        data_dir: &Path,
        policy: Policy,
        facts: FsPaths,
        deadline: Option<Instant>,
    ) -> Result<Remote> {
        let server = server.trim_end_matches('/');
        let credential = portcullis_store::load_device_credential(data_dir)
            .with_context(|| {
                format!(
                    "reading this machine's credential for {server} in {}",
                    data_dir.display()
                )
            })?
            .ok_or_else(|| {
                anyhow!(
                    "this machine is governed by {server} but is not enrolled: a person runs \
                     `portcullis device enroll --server {server}` on it"
                )
            })?;
        if credential.server.trim_end_matches('/') != server {
            bail!(
                "this machine is enrolled with {}, not with {server}, which governs it: a \
                 person enrols it again",
                credential.server
            );
        }
        let target = team_http::Server::parse(server, credential.ca_file.as_deref())?;
        // The policy records what this machine's files say; a configuration
        // naming the team server would refuse every call here unasked.
        let mut policy = policy;
        policy.team_server = None;
        Ok(Remote {
            credential,
            data_dir: data_dir.to_path_buf(),
            target,
            policy,
            facts,
            deadline,
        })
    }
}

/// How long a decision may take on the team server when the caller has no
/// deadline of its own (the MCP bridge; a hook has its agent's).
const DECISION_WAIT: Duration = Duration::from_secs(30);

impl Remote {
    /// When a request that may take `wanted` must be answered by: within
    /// the caller's deadline, leaving a hook a moment to answer after the
    /// server's.
    fn until(&self, wanted: Duration) -> Instant {
        let wanted = Instant::now() + wanted;
        match self.deadline {
            Some(deadline) => wanted.min(
                deadline
                    - Duration::from_millis(100)
                        .min(deadline.saturating_duration_since(Instant::now())),
            ),
            None => wanted,
        }
    }

    /// `POST`s `body` to the server's `path` with this machine's
    /// credential, to be answered within `wanted`: its JSON answer. Why
    /// there is none, or a refusal, is the error ("did not answer: …",
    /// "refused (401): …"), to follow the server's name.
    fn ask(
        &self,
        path: &str,
        body: &serde_json::Value,
        wanted: Duration,
    ) -> Result<serde_json::Value> {
        let (status, text) = self
            .target
            .post_json(
                path,
                &[("x-portcullis-device", &self.credential.token)],
                body.to_string().as_bytes(),
                self.until(wanted),
            )
            .map_err(|e| anyhow!("did not answer: {e:#}"))?;
        let text = String::from_utf8_lossy(&text);
        let v: serde_json::Value = serde_json::from_str(&text).unwrap_or_default();
        if status != 200 {
            let why = v.get("message").and_then(|m| m.as_str()).unwrap_or(&text);
            bail!("refused the call ({status}): {why}");
        }
        Ok(v)
    }

    /// How this server's device-wide approvals are marked in the local
    /// store (its own approvals, made before the machine was governed, are
    /// not the server's to apply).
    fn marker(&self) -> String {
        format!(
            "on the team server {}",
            self.credential.server.trim_end_matches('/')
        )
    }

    /// The device-wide approvals this machine keeps from its team server,
    /// as the server reads them: the request each answers and its target.
    fn held_grants(&self) -> Result<Vec<HeldApproval>> {
        // Opening the store costs a governed call more than its request to
        // the server: only a machine that was delivered an approval opens it.
        if !self.data_dir.join(APPROVALS_KEPT).exists() {
            return Ok(Vec::new());
        }
        self.kept(&self.local_store()?)
    }

    /// This machine's own store.
    fn local_store(&self) -> Result<Store> {
        Store::open(&self.data_dir).with_context(|| {
            format!(
                "opening this machine's store in {}",
                self.data_dir.display()
            )
        })
    }

    /// The server's device-wide approvals `store` keeps.
    fn kept(&self, store: &Store) -> Result<Vec<HeldApproval>> {
        let marker = self.marker();
        Ok(store
            .active_grants(&[], crate::state::now())?
            .into_iter()
            .filter(|g| g.scope == GrantScope::Device)
            .filter_map(|g| {
                Some(HeldApproval {
                    request: delivered_request(&g.approver, &marker)?,
                    target: g.target,
                    approver: None,
                })
            })
            .collect())
    }

    /// Keeps the device-wide approvals the server delivered in this
    /// machine's own store (DESIGN: device grants stay on their device); the
    /// next call reports them, and the server stops delivering them.
    fn keep(&self, deliveries: &[HeldApproval]) -> Result<()> {
        if deliveries.is_empty() {
            return Ok(());
        }
        let store = self.local_store()?;
        let marker = self.marker();
        let now = crate::state::now();
        let kept: Vec<i64> = self.kept(&store)?.iter().map(|h| h.request).collect();
        for d in deliveries {
            let request = d.request;
            if kept.contains(&request) {
                continue;
            }
            let approver = d.approver.as_deref().unwrap_or("a person");
            portcullis_engine::actions::add_grant(
                &store,
                &NewGrant {
                    session: None,
                    scope: GrantScope::Device,
                    op: Op::Read,
                    target: d.target.clone(),
                    expires_at: None,
                    approver: format!("{approver} (request #{request}) {marker}"),
                    // The server's request: not one of this store's.
                    request: None,
                },
                now,
            )?;
        }
        std::fs::write(self.data_dir.join(APPROVALS_KEPT), b"")
            .with_context(|| format!("marking {} as keeping approvals", self.data_dir.display()))
    }
}

/// In the data directory (secret to agents): this machine's store keeps
/// device-wide approvals from its team server. Without it a governed call
/// opens no store; removing it only makes the machine be asked again.
const APPROVALS_KEPT: &str = "team-approvals-kept";

/// The team server's request a local grant's approver names (`… (request
/// #N) on the team server URL`), if the grant came from that server.
fn delivered_request(approver: &str, marker: &str) -> Option<i64> {
    let head = approver.strip_suffix(marker)?.strip_suffix(") ")?;
    let (_, number) = head.rsplit_once("(request #")?;
    number.parse().ok().filter(|n| *n > 0)
}

impl Authority for Remote {
    fn decide(
        &self,
        _sessions: &[NewSession],
        call: &ToolCall,
        ctx: &CallContext,
        _now: i64,
    ) -> Result<Outcome> {
        // What this machine's files say, for the server to judge with: the
        // questions a (store-less, unrecorded) decision of the call asks.
        let local = Engine::pure(self.policy.clone(), Recording::new(&self.facts));
        let asked = CallContext {
            can_confine: ctx.can_confine,
            ..CallContext::default()
        };
        local
            .decide(call, &asked, crate::state::now())
            .context("reading this machine's facts for the call")?;
        let recording = local.facts();
        let session = ctx.sources.body.clone().or_else(|| ctx.sources.env.clone());
        let body = serde_json::json!({
            "tool": call.tool.name,
            "origin": call.tool.origin,
            "server": call.tool.server,
            "manifest": call.tool.manifest,
            "input": call.input,
            "cwd": call.cwd,
            "session": session,
            "facts": recording.report(),
            "device_grants": self.held_grants()?,
            "can_confine": ctx.can_confine,
        });
        let server = &self.credential.server;
        let v = self
            .ask("/v1/decide", &body, DECISION_WAIT)
            .map_err(|e| anyhow!("the team server {server} {e}"))?;
        let outcome = outcome_of(&v).with_context(|| format!("reading the answer of {server}"))?;
        self.keep(&outcome.deliveries)?;
        Ok(outcome)
    }

    /// The server holds the request (its own device's only) until a person
    /// resolves it or `timeout` passes, and says which.
    fn wait_for_person(&self, request: i64, _now: i64, timeout: Duration) -> Result<HoldStatus> {
        let server = &self.credential.server;
        let body = serde_json::json!({ "timeout_ms": timeout.as_millis() as u64 });
        let v = self
            .ask(
                &format!("/v1/device/requests/{request}/hold"),
                &body,
                timeout + Duration::from_secs(1),
            )
            .map_err(|e| anyhow!("the team server {server}, holding request #{request}, {e}"))?;
        match serde_json::from_value(v.get("status").cloned().unwrap_or_default()) {
            // A hold ends decided or timed out; still waiting is neither.
            Ok(HoldStatus::Waiting) | Err(_) => {
                bail!("the team server {server} held request #{request} to {v}")
            }
            Ok(status) => Ok(status),
        }
    }

    fn leave_to_bridge(
        &self,
        _sessions: &[NewSession],
        _call: &ToolCall,
        _ctx: &CallContext,
        _to: &HandOff,
        _now: i64,
    ) -> Result<Option<Outcome>> {
        Ok(None)
    }
}

/// The server's decision, as much of it as the hook's reply needs: the
/// verdict, the reasons' words, the session and the request raised.
fn outcome_of(v: &serde_json::Value) -> Result<Outcome> {
    let verdict = match v.get("decision").and_then(|d| d.as_str()) {
        Some("allow") => Verdict::Allow,
        Some("ask") => Verdict::Ask,
        Some("deny") => Verdict::Deny,
        other => bail!("no decision in the answer ({other:?})"),
    };
    let reasons = v
        .get("reasons")
        .and_then(|r| r.as_array())
        .map(|list| {
            list.iter()
                .map(|r| Reason {
                    code: r
                        .get("code")
                        .cloned()
                        .and_then(|c| serde_json::from_value::<ReasonCode>(c).ok())
                        .unwrap_or(ReasonCode::ConfigError),
                    message: r
                        .get("message")
                        .and_then(|m| m.as_str())
                        .unwrap_or_default()
                        .to_owned(),
                    rule: None,
                    effect: None,
                    verdict,
                })
                .collect()
        })
        .unwrap_or_default();
    let session_status = match v.get("session_status").and_then(|s| s.as_str()) {
        Some("active") => SessionStatus::Active,
        Some("unknown") => SessionStatus::Unknown,
        Some("inactive") => SessionStatus::Inactive,
        Some("unauthenticated") => SessionStatus::Unauthenticated,
        _ => SessionStatus::None,
    };
    let request = match v.get("request") {
        Some(r) if !r.is_null() => Some(serde_json::from_value(r.clone())?),
        _ => None,
    };
    // How the call runs confined, where the server allowed it so.
    let confine = match v.get("confine") {
        Some(c) if !c.is_null() => Some(serde_json::from_value(c.clone())?),
        _ => None,
    };
    Ok(Outcome {
        decision: Decision {
            decision: verdict,
            reasons,
            effects: Vec::new(),
            judgements: Vec::new(),
            confine,
        },
        session: v.get("session").and_then(|s| s.as_str()).map(str::to_owned),
        session_status,
        grants_used: Vec::new(),
        request,
        audit_id: v.get("audit_id").and_then(|a| a.as_i64()),
        // The device-wide approvals made for this machine since, to keep.
        deliveries: match v.get("deliveries") {
            Some(d) if !d.is_null() => serde_json::from_value(d.clone())?,
            _ => Vec::new(),
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_this_servers_deliveries_are_read_back_from_the_local_store() {
        let marker = "on the team server https://team.example";
        let mine = format!("alice (request #12) {marker}");
        assert_eq!(delivered_request(&mine, marker), Some(12));
        for other in [
            "alice".to_owned(),
            "alice (request #12) on the team server https://other.example".to_owned(),
            format!("alice (request #x) {marker}"),
            format!("alice (request #-3) {marker}"),
            format!("alice (request #0) {marker}"),
            format!("alice request #4 {marker}"),
        ] {
            assert_eq!(delivered_request(&other, marker), None, "{other}");
        }
    }
}
