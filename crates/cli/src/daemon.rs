//! `portcullis-daemon`: the long-running front doors — `serve` (HTTP API and
//! approval UI) and `mcp-bridge` (the MCP proxy). `portcullis serve` and
//! `portcullis mcp-bridge` run this binary in their place: the `portcullis`
//! binary is loaded for every hook call, and stays small without axum,
//! tokio's server side, rmcp and their HTTP stacks.

#[cfg(panic = "abort")]
compile_error!(
    "portcullis relies on unwinding (catch_unwind turns a panic into a refusal): build with panic = \"unwind\""
);

// mimalloc: the server allocates and frees per request on several threads;
// glibc malloc returned memory to the kernel and faulted it back in (madvise,
// page faults) at every turn. Measured with bench/load/run.sh (README).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

// Used by hook_judge.
#[allow(dead_code)]
mod agent_process;
#[allow(dead_code)]
mod agent_rules;
mod bridge_cmd;
mod bridge_remote;
mod config_files;
mod device_cmd;
mod exit;
// Shared with the `portcullis` binary (the hook), which uses the other part of it.
#[allow(dead_code)]
mod hook_judge;
mod hook_socket;
// Shared with `portcullis`: the governed bridge asks the team server as a
// governed hook does.
#[allow(dead_code)]
mod hook_remote;
mod remote_hook;
mod serve;
#[allow(dead_code)]
mod state;
mod store_cmd;
// The team server's client, shared with the hook (`device enroll` here).
mod team_http;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(
    name = "portcullis",
    bin_name = "portcullis",
    version,
    about = "A permission kernel for AI coding agents (daemon front doors)"
)]
struct Cli {
    #[command(subcommand)]
    command: Commands,
}

#[derive(Subcommand)]
enum Commands {
    /// Serve the HTTP API and the approval UI (prints the URL to open).
    Serve(serve::ServeArgs),
    /// Run an MCP server behind portcullis: `mcp-bridge --name NAME -- CMD ARGS…`.
    McpBridge(bridge_cmd::BridgeArgs),
    /// This machine's credential with a team server: enroll, show.
    #[command(subcommand)]
    Device(device_cmd::DeviceCmd),
    /// The store: `store migrate --store postgres://…`.
    #[command(subcommand)]
    Store(store_cmd::StoreCmd),
}

fn main() -> ExitCode {
    let cli: Cli = match exit::parse() {
        Ok(cli) => cli,
        Err(code) => return code,
    };
    let result = match cli.command {
        Commands::Serve(args) => serve::run(&args),
        Commands::McpBridge(args) => bridge_cmd::bridge(&args),
        Commands::Store(cmd) => store_cmd::run(&cmd),
        Commands::Device(cmd) => device_cmd::run(&cmd),
    };
    exit::report(result)
}
