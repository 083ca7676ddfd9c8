//! `portcullis hook <agent>`: an agent's native hook payload on stdin, its native
//! reply on stdout (and stderr / exit code where the agent reads those).
//!
//! Never crashes and never answers anything but the agent's format: any error
//! — a payload that does not parse, a configuration or store error, a panic —
//! becomes a deny with the reason (several agents treat a crashed hook as allow).

use std::io::Read;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use anyhow::{Context, Result};
use portcullis_adapters::{Agent, Reply, deny_reply};
use portcullis_engine::Engine;
use portcullis_paths::Environment;
use portcullis_store::Store;

use crate::config_files::Sources;
use crate::hook_answer::{budget, emit, event_of};
use crate::hook_judge::Authority;
use crate::remote_hook::Remote;
use crate::{guard, hook_client, hook_judge};

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

impl HookArgs {
    /// `AGENT [--config FILE] [--data-dir DIR]` (as `install` writes it),
    /// read without building clap's whole command tree — a measurable part
    /// of a hook call. Anything else (`--help`, `--config=FILE`, a typo)
    /// is `None`, and clap reads it.
    pub fn from_plain_args(mut args: impl Iterator<Item = std::ffi::OsString>) -> Option<Self> {
        let agent = args.next()?.to_str()?.parse::<Agent>().ok()?;
        let mut parsed = HookArgs {
            agent,
            config: None,
            data_dir: None,
        };
        while let Some(flag) = args.next() {
            let value = PathBuf::from(args.next()?);
            let slot = match flag.to_str()? {
                "--config" => &mut parsed.config,
                "--data-dir" => &mut parsed.data_dir,
                _ => return None,
            };
            if slot.replace(value).is_some() {
                return None;
            }
        }
        Some(parsed)
    }
}

/// What the agent reads when judging failed in a way no code path could report.
const FAILED: &str = "portcullis failed while judging this call and denies it";

/// What one hook process may hold at once: judging a 256 KiB text needs a few
/// MiB; a runaway allocation stops here and is answered by the refusal.
const HOOK_MEMORY_CAP: usize = 1 << 30;

/// A hook process from its first instruction on (`portcullis hook AGENT …`,
/// `portcullis-hook AGENT …`; the agent is argument `first`): whatever
/// happens — arguments that do not parse, a panic anywhere, an abort, a stack
/// overflow — the agent reads a refusal in its own format (`guard`).
/// Arguments other than `AGENT [--config FILE] [--data-dir DIR]` go to
/// `other`, which runs under the same guard.
pub fn main(first: usize, other: impl FnOnce() -> ExitCode + std::panic::UnwindSafe) -> ExitCode {
    let agent = std::env::args()
        .nth(first)
        .and_then(|a| a.parse::<Agent>().ok());
    // Until the agent is known, a refusal that Claude Code, Codex and Gemini
    // all honour: their JSON deny on stdout, the reason on stderr, exit 2.
    guard::arm(&deny_reply(
        agent.unwrap_or(Agent::ClaudeCode),
        "",
        "portcullis could not start judging this call and denies it",
    ));
    guard::cap_memory(HOOK_MEMORY_CAP);
    // Panic messages would only add noise to the reason an agent reads.
    std::panic::set_hook(Box::new(|_| {}));
    let run = std::panic::catch_unwind(|| {
        match HookArgs::from_plain_args(std::env::args_os().skip(first)) {
            Some(args) => run(&args),
            None => other(),
        }
    });
    run.unwrap_or_else(|_| guard::fire())
}

pub fn run(args: &HookArgs) -> ExitCode {
    let agent = args.agent;
    // The refusal is ready before anything can go wrong, and the watchdog
    // answers it should anything take longer than the agent waits.
    let budget = budget(agent);
    let deadline = Instant::now() + budget;
    guard::arm(&deny_reply(agent, "", FAILED));
    guard::watchdog(budget);
    // Room for a usual payload at once: read_to_end would otherwise start at
    // 32 bytes and take six reads for a 300-byte call.
    let mut input = Vec::with_capacity(16 * 1024);
    let read = std::io::stdin().read_to_end(&mut input);
    let event = event_of(&input);
    if !event.is_empty() {
        // An event answered in a shape of its own (the refusal armed above
        // has the agent's usual one).
        guard::arm(&deny_reply(agent, event, FAILED));
    }
    guard::arm_timeout(&deny_reply(
        agent,
        event,
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
            event,
            &format!("portcullis could not judge this call and denies it: {e:#}"),
        ),
        Err(_) => deny_reply(agent, event, FAILED),
    };
    emit(&reply)
}

/// Whether the hook hands its calls to a running daemon
/// (`PORTCULLIS_HOOK_DAEMON`): `auto` (the default) when one serves the data
/// directory, `off` never, `require` always — without a daemon the call is
/// denied (tests use it to prove which path answered).
#[derive(Clone, Copy, PartialEq, Eq)]
enum DaemonUse {
    Auto,
    Off,
    Require,
}

fn daemon_use() -> DaemonUse {
    match std::env::var("PORTCULLIS_HOOK_DAEMON").as_deref() {
        Ok("off" | "0" | "no") => DaemonUse::Off,
        Ok("require") => DaemonUse::Require,
        _ => DaemonUse::Auto,
    }
}

fn handle(args: &HookArgs, input: &[u8], deadline: Instant) -> Result<Reply> {
    let env = Environment::from_process();
    let session_env = std::env::var("PORTCULLIS_SESSION").ok();
    let dir = args
        .data_dir
        .clone()
        .unwrap_or_else(portcullis_store::default_data_dir);
    // Governed by a team server (`PORTCULLIS_SERVER`, or `[server] url`
    // found with the configuration): it judges, or the call is refused. A
    // daemon beside the hook answers `Governed` for a configured one.
    let governing = crate::hook_remote::governing_server();
    let daemon = daemon_use();
    if daemon != DaemonUse::Off && governing.is_none() {
        match hook_client::forward(
            args.agent,
            input,
            args.config.as_deref(),
            &env,
            session_env.clone(),
            &dir,
            deadline,
        ) {
            Ok(judged) => return judged.map_err(|why| anyhow::anyhow!(why)),
            Err(why) if daemon == DaemonUse::Require => {
                return Err(anyhow::Error::new(why)
                    .context("PORTCULLIS_HOOK_DAEMON=require: no daemon answered"));
            }
            // No daemon (or one that cannot take the call): judge here.
            Err(_) => {}
        }
    }
    hook_judge::judge(
        args.agent,
        input,
        |cwd| Ok(Sources::read(args.config.as_deref(), cwd, &env)),
        &env,
        session_env,
        Some(i64::from(std::process::id())),
        deadline,
        |policy, facts| -> Result<&'static dyn Authority> {
            // Never dropped: the process ends right after its answer, and the
            // kernel releases the store's descriptors and locks then. Closing
            // SQLite first freed every parsed schema object and statement,
            // ≈ 117 k instructions (7 % of a call), before the answer went
            // out. Nothing waits on the close: every write is committed by
            // the time a decision returns.
            if let Some(server) = governing.or_else(|| policy.team_server.clone()) {
                let remote = Remote::for_machine(&server, &dir, policy, facts, Some(deadline))?;
                return Ok(Box::leak(Box::new(remote)));
            }
            let store = Store::open(&dir)
                .with_context(|| format!("opening the store in {}", dir.display()))?;
            Ok(Box::leak(Box::new(Engine::new(store, policy, facts))))
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plain(args: &[&str]) -> Option<(Agent, Option<PathBuf>, Option<PathBuf>)> {
        HookArgs::from_plain_args(args.iter().map(std::ffi::OsString::from))
            .map(|a| (a.agent, a.config, a.data_dir))
    }

    #[test]
    fn plain_hook_arguments_are_read_without_clap_and_anything_else_is_left_to_it() {
        assert_eq!(plain(&["codex"]), Some((Agent::Codex, None, None)));
        assert_eq!(
            plain(&["claude-code", "--config", "/c.toml", "--data-dir", "/d"]),
            Some((
                Agent::ClaudeCode,
                Some(PathBuf::from("/c.toml")),
                Some(PathBuf::from("/d"))
            ))
        );
        for other in [
            &[][..],
            &["nobody"],
            &["codex", "--help"],
            &["codex", "--config"],
            &["codex", "--config=/c.toml"],
            &["codex", "--config", "/a", "--config", "/b"],
            &["codex", "extra"],
        ] {
            assert_eq!(plain(other), None, "{other:?}");
        }
    }
}
