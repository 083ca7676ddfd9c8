//! `portcullis-hook AGENT [--config FILE] [--data-dir DIR]`: the hook's fast
//! front, an experiment towards issue 14's latency goal. It hands the call to
//! a running `portcullis serve` (`hook_client`) and prints its answer; when no
//! daemon takes the call it becomes `portcullis hook` (exec, the payload on
//! its standard input), which judges in its own process. It links none of the
//! analysis or the store, so it starts faster than `portcullis` itself.
//!
//! It fails closed as `portcullis hook` does: the refusal is armed before
//! anything else (`guard`), the time budget is kept, and any error is a deny.
//! `install` does not write it yet.

#![deny(unsafe_code)]

#[cfg(panic = "abort")]
compile_error!(
    "portcullis relies on unwinding (catch_unwind turns a panic into a refusal): build with panic = \"unwind\""
);

// Shared with the other binaries; this one uses a part of each.
// Used by hook_judge.
#[allow(dead_code)]
mod agent_process;
#[allow(dead_code)]
mod agent_rules;
#[allow(dead_code)]
mod config_files;
#[allow(unsafe_code, dead_code)]
mod guard;
mod hook_answer;
mod hook_client;
// Shared with `portcullis`; this binary asks only whether a server governs.
#[allow(dead_code)]
mod hook_remote;
// Shared with the other binaries; this one uses the request types only.
#[allow(dead_code)]
mod hook_judge;
#[allow(dead_code)]
mod state;

use std::ffi::OsString;
use std::io::{Read, Write};

use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use portcullis_adapters::{Agent, deny_reply};
use portcullis_paths::Environment;

use crate::hook_answer::{budget, emit, event_of};

#[global_allocator]
static ALLOCATOR: guard::CappedAlloc = guard::CappedAlloc;

const FAILED: &str = "portcullis failed while judging this call and denies it";

fn main() -> ExitCode {
    let args: Vec<OsString> = std::env::args_os().skip(1).collect();
    let agent = args
        .first()
        .and_then(|a| a.to_str())
        .and_then(|a| a.parse::<Agent>().ok());
    let agent_or_claude = agent.unwrap_or(Agent::ClaudeCode);
    guard::arm(&deny_reply(
        agent_or_claude,
        "",
        "portcullis could not start judging this call and denies it",
    ));
    guard::cap_memory(1 << 30);
    std::panic::set_hook(Box::new(|_| {}));
    let Some(agent) = agent else {
        guard::fire();
    };
    let budget = budget(agent);
    let deadline = Instant::now() + budget;
    guard::watchdog(budget);
    let mut input = Vec::new();
    if std::io::stdin().read_to_end(&mut input).is_err() {
        guard::fire();
    }
    let (mut config, mut data_dir) = (None, None);
    let mut rest = args.iter().skip(1);
    while let Some(flag) = rest.next() {
        let value = rest.next().map(PathBuf::from);
        match flag.to_str() {
            Some("--config") => config = value,
            Some("--data-dir") => data_dir = value,
            _ => become_hook(&args, &input),
        }
    }
    // A machine governed by a team server: `portcullis hook` asks it.
    if hook_remote::governing_server().is_some() {
        become_hook(&args, &input);
    }
    let env = Environment::from_process();
    let dir = data_dir.unwrap_or_else(portcullis_store::default_data_dir);
    let judged = std::panic::catch_unwind(|| {
        hook_client::forward(
            agent,
            &input,
            config.as_deref(),
            &env,
            std::env::var("PORTCULLIS_SESSION").ok(),
            &dir,
            deadline,
        )
    });
    let reply = match judged {
        Ok(Ok(Ok(reply))) => reply,
        Ok(Ok(Err(why))) => deny_reply(
            agent,
            event_of(&input),
            &format!("portcullis could not judge this call and denies it: {why}"),
        ),
        // No daemon took the call: judge it in-process.
        Ok(Err(_)) => become_hook(&args, &input),
        Err(_) => deny_reply(agent, event_of(&input), FAILED),
    };
    emit(&reply)
}

/// Becomes `portcullis hook ARGS…` (the binary beside this one), the payload
/// on its standard input. Returns only by refusing.
fn become_hook(args: &[OsString], input: &[u8]) -> ! {
    let Some(program) = std::env::current_exe()
        .ok()
        .map(|p| p.with_file_name("portcullis"))
    else {
        guard::fire();
    };
    let Ok(fd) = rustix::fs::memfd_create("portcullis-hook-input", rustix::fs::MemfdFlags::empty())
    else {
        guard::fire();
    };
    let mut file = std::fs::File::from(fd);
    if file.write_all(input).is_err()
        || std::io::Seek::rewind(&mut file).is_err()
        || !guard::stop_watchdog()
    {
        guard::fire();
    }
    let err = std::process::Command::new(program)
        .arg("hook")
        .args(args)
        .stdin(file)
        .exec();
    let _ = err;
    guard::fire();
}
