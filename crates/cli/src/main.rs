//! The `portcullis` binary: command-line front door to the analysis (and, as they
//! arrive, the engine). It translates arguments to calls and results to output;
//! it decides nothing itself.

mod analyze;
mod check;
mod config_files;
mod exit;
mod export;
mod hook;
mod install;
mod mcp;
mod state;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(
    name = "portcullis",
    version,
    about = "A permission kernel for AI coding agents"
)]
struct Cli {
    #[command(subcommand)]
    command: Commands,
}

#[derive(Subcommand)]
enum Commands {
    /// Show every command a shell text could run, its effects and its opaque parts.
    Analyze(analyze::AnalyzeArgs),
    /// Decide a tool call: allow, ask or deny, with reasons (JSON).
    Check(check::CheckArgs),
    /// Explain a decision: each effect, what decided it, and what would change it.
    Explain(check::CheckArgs),
    /// Judge an agent's tool call from its native hook payload on stdin.
    Hook(hook::HookArgs),
    /// Add the portcullis hook to an agent's configuration (merged, idempotent, backed up).
    Install(install::InstallArgs),
    /// Check every agent's installed portcullis hook: present, executable, answering.
    Doctor(install::DoctorArgs),
    /// Write the configuration's Bash rules in an agent's own policy language.
    #[command(subcommand)]
    Export(export::ExportCmd),
    /// Serve the HTTP API and the approval UI (prints the URL to open). Runs `portcullis-daemon serve`.
    #[command(disable_help_flag = true)]
    Serve {
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<std::ffi::OsString>,
    },
    /// Run an MCP server behind portcullis: `portcullis mcp-bridge --name NAME -- CMD ARGS…`.
    /// Runs `portcullis-daemon mcp-bridge`.
    #[command(disable_help_flag = true)]
    McpBridge {
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<std::ffi::OsString>,
    },
    /// MCP tool definition pins: list, approve, reject.
    #[command(subcommand)]
    Mcp(mcp::McpCmd),
    /// Sessions: register, list, revoke.
    #[command(subcommand)]
    Sessions(state::SessionsCmd),
    /// Grants: add, list, revoke.
    #[command(subcommand)]
    Grants(state::GrantsCmd),
    /// Permission requests: list, resolve.
    #[command(subcommand)]
    Requests(state::RequestsCmd),
    /// The audit log: tail, verify, export.
    #[command(subcommand)]
    Audit(state::AuditCmd),
}

/// Runs `portcullis-daemon SUBCOMMAND ARGS…` in this process' place. The
/// long-running front doors (HTTP server, MCP bridge) live in their own
/// binary so this one — loaded for every hook call — stays small.
fn daemon(subcommand: &str, args: &[std::ffi::OsString]) -> ExitCode {
    use std::os::unix::process::CommandExt;
    let path = std::env::current_exe()
        .map(|p| p.with_file_name("portcullis-daemon"))
        .unwrap_or_else(|_| "portcullis-daemon".into());
    let err = std::process::Command::new(&path)
        .arg(subcommand)
        .args(args)
        .exec();
    eprintln!(
        "portcullis: error: running {}: {err} (install portcullis-daemon beside portcullis)",
        path.display()
    );
    ExitCode::from(1)
}

fn main() -> ExitCode {
    let cli: Cli = match exit::parse() {
        Ok(cli) => cli,
        Err(code) => return code,
    };
    let result = match cli.command {
        Commands::Analyze(args) => analyze::run(&args),
        Commands::Check(args) => check::run(&args, false),
        Commands::Explain(args) => check::run(&args, true),
        Commands::Hook(args) => return hook::run(&args),
        Commands::Install(args) => install::install(&args),
        Commands::Doctor(args) => install::doctor(&args),
        Commands::Export(cmd) => export::run(&cmd),
        Commands::Serve { args } => return daemon("serve", &args),
        Commands::McpBridge { args } => return daemon("mcp-bridge", &args),
        Commands::Mcp(cmd) => mcp::run(&cmd),
        Commands::Sessions(cmd) => state::sessions(&cmd),
        Commands::Grants(cmd) => state::grants(&cmd),
        Commands::Requests(cmd) => state::requests(&cmd),
        Commands::Audit(cmd) => state::audit(&cmd),
    };
    exit::report(result)
}
