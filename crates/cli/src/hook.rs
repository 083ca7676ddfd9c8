//! `portcullis hook <agent>`: an agent's native hook payload on stdin, its native
//! reply on stdout (and stderr / exit code where the agent reads those).
//!
//! Never crashes and never answers anything but the agent's format: any error
//! — a payload that does not parse, a configuration or store error, a panic —
//! becomes a deny with the reason (several agents treat a crashed hook as allow).

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use portcullis_adapters::{Agent, Answer, HookCall, Reply, deny_reply, parse, reply};
use portcullis_engine::{CallContext, Engine, HoldStatus, SessionSources};
use portcullis_paths::{Environment, FsPaths, Scopes};
use portcullis_policy::{Decision, Mode, OnAsk, Verdict};
use portcullis_store::{AgentKind, NewSession, Store};

use crate::{config_files, guard};

/// What a hold leaves of the hook's budget for judging again and answering.
const HOLD_MARGIN: Duration = Duration::from_secs(2);

#[derive(clap::Args)]
pub struct HookArgs {
    /// claude-code, codex, cursor, gemini or pi.
    agent: Agent,
    /// A configuration file (also `PORTCULLIS_CONFIG`), above the user's.
    #[arg(long)]
    config: Option<PathBuf>,
    /// The store's data directory (else `PORTCULLIS_DATA_DIR`, else the default).
    #[arg(long)]
    data_dir: Option<PathBuf>,
}

/// What the agent reads when judging failed in a way no code path could report.
const FAILED: &str = "portcullis failed while judging this call and denies it";

pub fn run(args: &HookArgs) -> ExitCode {
    let agent = args.agent;
    // The refusal is ready before anything can go wrong, and the watchdog
    // answers it should anything take longer than the agent waits.
    let budget = budget(agent);
    let deadline = Instant::now() + budget;
    guard::arm(&deny_reply(agent, "", FAILED));
    guard::watchdog(budget);
    let mut input = Vec::new();
    let read = std::io::stdin().read_to_end(&mut input);
    guard::arm(&deny_reply(agent, event_of(&input), FAILED));
    guard::arm_timeout(&deny_reply(
        agent,
        event_of(&input),
        &format!(
            "portcullis ran out of time judging this call ({} ms, kept under {}'s {} s hook \
             timeout) and denies it",
            budget.as_millis(),
            agent.as_str(),
            agent.hook_timeout().as_secs()
        ),
    ));
    let outcome = match read {
        Ok(_) => std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            guard::inject_fault();
            handle(args, &input, deadline)
        })),
        Err(e) => Ok(Err(anyhow::anyhow!("reading the hook input: {e}"))),
    };
    let reply = match outcome {
        Ok(Ok(r)) => r,
        Ok(Err(e)) => deny_reply(
            agent,
            event_of(&input),
            &format!("portcullis could not judge this call and denies it: {e:#}"),
        ),
        Err(_) => deny_reply(agent, event_of(&input), FAILED),
    };
    emit(&reply)
}

/// The hook's time budget: its agent's (`Agent::hook_budget`), or shorter
/// with `PORTCULLIS_HOOK_BUDGET_MS` (never longer: a budget past the agent's
/// own timeout would let the agent give up first and run the call).
fn budget(agent: Agent) -> Duration {
    let own = agent.hook_budget();
    std::env::var("PORTCULLIS_HOOK_BUDGET_MS")
        .ok()
        .and_then(|v| v.trim().parse::<u64>().ok())
        .map_or(own, |ms| own.min(Duration::from_millis(ms)))
}

/// The event name, for replying in the right shape even to a payload that failed.
fn event_of(input: &[u8]) -> &'static str {
    let v: serde_json::Value = serde_json::from_slice(input).unwrap_or_default();
    match v.get("hook_event_name").and_then(|e| e.as_str()) {
        Some("PermissionRequest") => "PermissionRequest",
        Some("beforeReadFile") => "beforeReadFile",
        _ => "",
    }
}

fn emit(r: &Reply) -> ExitCode {
    if !guard::claim_answer() {
        // The watchdog is writing the refusal and ends the process.
        loop {
            std::thread::sleep(Duration::from_secs(1));
        }
    }
    let code = u8::try_from(r.exit).unwrap_or(2);
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(r.stdout.as_bytes());
    if !r.stdout.is_empty() {
        let _ = out.write_all(b"\n");
    }
    let _ = out.flush();
    if !r.stderr.is_empty() {
        let _ = std::io::stderr().write_all(r.stderr.as_bytes());
    }
    guard::answered(code);
    ExitCode::from(code)
}

/// The default on-ask behaviour: the agent's own prompt where it can ask.
fn default_on_ask(agent: Agent) -> OnAsk {
    match agent {
        Agent::Codex => OnAsk::Notify,
        _ => OnAsk::Agent,
    }
}

fn handle(args: &HookArgs, input: &[u8], deadline: Instant) -> Result<Reply> {
    let hook = parse(args.agent, input)?;
    let cwd = std::fs::canonicalize(&hook.call.cwd)
        .map(|p| p.to_string_lossy().into_owned())
        .unwrap_or(hook.call.cwd.clone());
    let mut call = hook.call.clone();
    call.cwd = cwd.clone();
    let env = Environment::from_process();
    let mut policy = config_files::load(args.config.as_deref(), Path::new(&cwd), &env)
        .context("loading the configuration")?;
    policy.table = args.agent.tool_table();
    // The agent's own mode may only tighten portcullis': plan mode reads only,
    // dontAsk never asks. bypassPermissions cannot beat a portcullis deny.
    match hook.permission_mode.as_deref() {
        Some("plan") => policy.mode = Mode::ReadOnly,
        Some("dontAsk") => policy.unattended = true,
        _ => {}
    }
    let settings = policy
        .agents
        .get(args.agent.as_str())
        .cloned()
        .unwrap_or_default();
    let on_ask = settings
        .on_ask
        .unwrap_or_else(|| default_on_ask(args.agent));
    let facts = FsPaths::new(&Scopes::of(&policy.workspace), &env);
    // Every decision made for an agent is the engine's and is audited, with
    // or without a session: without one, the audit row names none and no
    // request can be raised (nobody could be said to have asked).
    let dir = args
        .data_dir
        .clone()
        .unwrap_or_else(portcullis_store::default_data_dir);
    let store =
        Store::open(&dir).with_context(|| format!("opening the store in {}", dir.display()))?;
    let engine = Engine::new(store, policy, facts);
    let session = match &hook.session {
        Some(session) => Some(register(&engine, &hook, session, &cwd)?),
        None => None,
    };
    let ctx = CallContext {
        sources: SessionSources {
            body: session.clone(),
            env: std::env::var("PORTCULLIS_SESSION").ok(),
            ..Default::default()
        },
        token: None,
        require_token: false,
        dry_run: false,
    };
    let now = crate::state::now();
    let outcome = engine.decide(&call, &ctx, now)?;
    let text = reasons(&outcome.decision);
    let server_addr = &engine.policy().server_addr;
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
                let timeout = wanted.min(left);
                match engine.wait_for_person(r.id, now, timeout)? {
                    HoldStatus::Approved => {
                        // The approval made a grant: judge again (nothing ran meanwhile).
                        let again = engine.decide(&call, &ctx, crate::state::now())?;
                        match again.decision.decision {
                            Verdict::Allow => Answer::Allow(reasons(&again.decision)),
                            _ => Answer::Deny(reasons(&again.decision)),
                        }
                    }
                    HoldStatus::Refused => {
                        Answer::Deny(format!("{text} — a person denied request #{}", r.id))
                    }
                    HoldStatus::TimedOut | HoldStatus::Waiting => {
                        Answer::Deny(notify_text(&text, r.id, server_addr))
                    }
                }
            }
            (_, Some(r)) => Answer::Deny(notify_text(&text, r.id, server_addr)),
            (_, None) if outcome.session.is_none() => {
                Answer::Deny(format!("{text} (no session: no request could be raised)"))
            }
            (_, None) => Answer::Deny(format!("{text} (no person can approve this here)")),
        },
    };
    Ok(reply(args.agent, &hook.event, &answer))
}

/// The first call of a session registers it; a sub-agent is a child of its session.
fn register(engine: &Engine<FsPaths>, hook: &HookCall, session: &str, cwd: &str) -> Result<String> {
    let base = NewSession {
        id: session.to_string(),
        agent: Some(hook.agent.as_str().into()),
        cwd: Some(cwd.into()),
        parent: None,
        kind: AgentKind::Main,
        workflow: None,
        ttl_secs: None,
    };
    engine.enter_session(&base)?;
    match &hook.subagent {
        Some(sub) => {
            let id = format!("{session}.{sub}");
            engine.enter_session(&NewSession {
                id: id.clone(),
                parent: Some(session.into()),
                kind: AgentKind::Subagent,
                ..base
            })?;
            Ok(id)
        }
        None => Ok(session.to_string()),
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
