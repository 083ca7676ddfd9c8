//! `portcullis-hook AGENT [--config FILE] [--data-dir DIR]`: the hook agents
//! run (`portcullis install` writes it). The same code as `portcullis hook`
//! — the call handed to a running `portcullis serve` over its socket, else
//! judged in this process, or asked of the team server that governs the
//! machine — in a binary that links none of the rest of the command line
//! (clap, `install`, `run`, the state commands): a hook is a process an
//! agent starts for every tool call, and a smaller binary starts faster
//! (issue 14; figures in the README's performance table).
//!
//! It fails closed as `portcullis hook` does: the refusal is armed before
//! anything else (`guard`), the time budget is kept, and any error is a deny.

#![deny(unsafe_code)]
// Its entry point is `guard::c_entry!` below: std's start-up is not needed
// (the unit tests keep the test harness' own `main`).
#![cfg_attr(not(test), no_main)]

#[cfg(panic = "abort")]
compile_error!(
    "portcullis relies on unwinding (catch_unwind turns a panic into a refusal): build with panic = \"unwind\""
);

// Shared with the other binaries; this one uses the hook's part of each.
#[allow(dead_code)]
mod agent_process;
#[allow(dead_code)]
mod agent_rules;
#[allow(dead_code)]
mod config_files;
#[allow(unsafe_code, dead_code)]
mod guard;
mod hook;
mod hook_answer;
mod hook_client;
#[allow(dead_code)]
mod hook_judge;
mod hook_remote;
#[allow(dead_code)]
mod remote_hook;
#[allow(dead_code)]
mod state;
#[allow(dead_code)]
mod team_http;

use std::process::ExitCode;

#[global_allocator]
static ALLOCATOR: guard::CappedAlloc = guard::CappedAlloc;

#[cfg(not(test))]
guard::c_entry!(hook_main);

#[cfg_attr(test, allow(dead_code))]
fn hook_main() -> ExitCode {
    hook::main(1, || {
        // Anything but `AGENT [--config FILE] [--data-dir DIR]`: a refusal
        // in Claude Code's shape (the agent is unknown), the usage on stderr.
        eprintln!(
            "usage: portcullis-hook AGENT [--config FILE] [--data-dir DIR] \
             (AGENT: claude-code, codex, cursor, gemini or pi)"
        );
        guard::fire()
    })
}
