//! `portcullis-daemon remote-hook AGENT`: a hook call on a machine governed
//! by a team server (`PORTCULLIS_SERVER`), judged there. `portcullis hook`
//! runs it (it holds the HTTPS client the hook's own binary does without)
//! with the payload on standard input, and prints what it prints: the
//! agent's reply, as [`hook_judge::ReplyText`] JSON.
//!
//! The call is translated here exactly as a local hook translates it
//! ([`hook_judge::judge`]), with a [`Remote`] authority in place of the
//! engine: it records the file-system facts a local decision of the call
//! asked for (the server has none of this machine's files) and asks the
//! server's `/v1/decide` with this machine's credential. The server decides;
//! nothing is decided here. Any failure — no credential, a credential for
//! another server, no answer in time, a refusal — is an error, which the
//! hook turns into the agent's refusal naming the server.

use std::io::Read;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, anyhow, bail};
use portcullis_engine::{CallContext, Engine, HandOff, HoldStatus, Outcome, SessionStatus};
use portcullis_paths::{Environment, FsPaths};
use portcullis_policy::reported::Recording;
use portcullis_policy::{Decision, Policy, Reason, ReasonCode, ToolCall, Verdict};
use portcullis_store::{DeviceCredential, NewSession};

use crate::config_files::Sources;
use crate::hook_judge::{self, Authority, ReplyText};

#[derive(clap::Args)]
pub struct RemoteHookArgs {
    /// The agent (`claude-code`, `codex`, `gemini`, `cursor`, `pi`).
    agent: String,
    #[arg(long)]
    config: Option<PathBuf>,
    #[arg(long)]
    data_dir: Option<PathBuf>,
    /// Milliseconds left of the hook's budget.
    #[arg(long, default_value_t = 5000)]
    budget_ms: u64,
}

pub fn run(args: &RemoteHookArgs) -> Result<ExitCode> {
    let deadline = Instant::now() + Duration::from_millis(args.budget_ms);
    let agent = hook_judge::agent_of(&args.agent)?;
    let mut payload = Vec::new();
    std::io::stdin()
        .read_to_end(&mut payload)
        .context("reading the hook's payload")?;
    let server = crate::hook_remote::governing_server().context("PORTCULLIS_SERVER is not set")?;
    let server = server.trim_end_matches('/').to_owned();
    let dir = args
        .data_dir
        .clone()
        .unwrap_or_else(portcullis_store::default_data_dir);
    let credential = portcullis_store::load_device_credential(&dir)
        .with_context(|| format!("reading this machine's credential in {}", dir.display()))?
        .ok_or_else(|| {
            anyhow!(
                "this machine is governed by {server} but is not enrolled: a person runs \
                 `portcullis device enroll --server {server}` on it"
            )
        })?;
    if credential.server.trim_end_matches('/') != server {
        bail!(
            "this machine is enrolled with {}, not with {server} (PORTCULLIS_SERVER): a person \
             enrols it again",
            credential.server
        );
    }
    let env = Environment::from_process();
    let config = args.config.clone();
    let reply = hook_judge::judge(
        agent,
        &payload,
        |cwd| Ok(Sources::read(config.as_deref(), cwd, &env)),
        &env,
        std::env::var("PORTCULLIS_SESSION").ok(),
        None,
        deadline,
        |policy, facts| Remote::new(credential, policy, facts, deadline),
    )?;
    let text = serde_json::to_string(&ReplyText::from(reply))?;
    println!("{text}");
    Ok(ExitCode::SUCCESS)
}

/// The team server as the authority: asks, never decides.
struct Remote {
    credential: DeviceCredential,
    policy: Policy,
    facts: FsPaths,
    deadline: Instant,
    client: reqwest::Client,
    runtime: tokio::runtime::Runtime,
}

impl Remote {
    fn new(
        credential: DeviceCredential,
        policy: Policy,
        facts: FsPaths,
        deadline: Instant,
    ) -> Result<Remote> {
        let client = portcullis_bridge::Remote::new(credential.server.clone())
            .client()
            .map_err(|e| anyhow!("{e}"))?;
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .context("starting the async runtime")?;
        Ok(Remote {
            credential,
            policy,
            facts,
            deadline,
            client,
            runtime,
        })
    }
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
        local
            .decide(call, &CallContext::default(), crate::state::now())
            .context("reading this machine's facts for the call")?;
        let recording = local.facts();
        let session = ctx.sources.body.clone().or_else(|| ctx.sources.env.clone());
        let body = serde_json::json!({
            "tool": call.tool.name,
            "origin": call.tool.origin,
            "server": call.tool.server,
            "input": call.input,
            "cwd": call.cwd,
            "session": session,
            "facts": recording.report(),
        });
        let server = &self.credential.server;
        // Leave the hook a moment to answer after the server's.
        let left = self
            .deadline
            .saturating_duration_since(Instant::now())
            .saturating_sub(Duration::from_millis(200));
        let (status, text) = self.runtime.block_on(async {
            let answer = self
                .client
                .post(format!("{server}/v1/decide"))
                .header("x-portcullis-device", &self.credential.token)
                .header("content-type", "application/json")
                .body(body.to_string())
                .timeout(left)
                .send()
                .await
                .map_err(|e| anyhow!("the team server {server} did not answer: {e}"))?;
            let status = answer.status().as_u16();
            let text = answer.text().await.unwrap_or_default();
            anyhow::Ok((status, text))
        })?;
        let v: serde_json::Value = serde_json::from_str(&text).unwrap_or_default();
        if status != 200 {
            let why = v.get("message").and_then(|m| m.as_str()).unwrap_or(&text);
            bail!("the team server {server} refused the call ({status}): {why}");
        }
        outcome_of(&v).with_context(|| format!("reading the answer of {server}"))
    }

    /// The device asks; only a person on the server resolves, and a device
    /// may not look: the agent is told the request's number to retry after.
    fn wait_for_person(&self, _request: i64, _now: i64, _timeout: Duration) -> Result<HoldStatus> {
        Ok(HoldStatus::TimedOut)
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
    Ok(Outcome {
        decision: Decision {
            decision: verdict,
            reasons,
            effects: Vec::new(),
            judgements: Vec::new(),
            confine: None,
        },
        session: v.get("session").and_then(|s| s.as_str()).map(str::to_owned),
        session_status,
        grants_used: Vec::new(),
        request,
        audit_id: v.get("audit_id").and_then(|a| a.as_i64()),
    })
}
