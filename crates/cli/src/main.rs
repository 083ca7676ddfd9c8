//! The `portcullis` binary: command-line front door to the analysis (and, as they
//! arrive, the engine). It translates arguments to calls and results to output;
//! it decides nothing itself.

#![deny(unsafe_code)]

#[cfg(panic = "abort")]
compile_error!(
    "portcullis relies on unwinding (catch_unwind turns a panic into a refusal): build with panic = \"unwind\""
);

#[allow(dead_code)]
mod agent_process;
mod agent_rules;
mod analyze;
mod check;
mod codex_trust;
mod config_files;
mod exit;
mod export;
#[allow(unsafe_code, dead_code)]
mod guard;
mod hook;
mod hook_answer;
mod hook_client;
mod hook_remote;
// Shared with `portcullis-daemon`, which uses the other part of it.
#[allow(dead_code)]
mod hook_judge;
mod install;
mod mcp;
mod remote_hook;
mod run;
mod state;
mod team_http;
mod users;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

#[global_allocator]
static ALLOCATOR: guard::CappedAlloc = guard::CappedAlloc;

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
    /// This machine's credential with a team server: `portcullis device enroll --server URL`
    /// (your login token on standard input), `device show`. Runs `portcullis-daemon device`.
    #[command(disable_help_flag = true)]
    Device {
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<std::ffi::OsString>,
    },
    /// The store: `portcullis store migrate [--store postgres://USER@HOST/DB]` applies
    /// the schema migrations. Runs `portcullis-daemon store`.
    #[command(disable_help_flag = true)]
    Store {
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<std::ffi::OsString>,
    },
    /// Run a program confined by the kernel to what the policy allows a shell call:
    /// `portcullis run [--cwd DIR] [--network off|on] -- PROGRAM ARGS…`.
    Run(run::RunArgs),
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
    /// The approval server's users (`[[server.users]]`): list, token, revoke.
    #[command(subcommand)]
    Users(users::UsersCmd),
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
        "portcullis: error: running {}: {err}\n\
         portcullis {subcommand} runs portcullis-daemon from the directory of portcullis: \
         `cargo build --release --locked` builds both, `cargo install --path crates/cli --locked` \
         installs both",
        path.display()
    );
    ExitCode::from(1)
}

fn main() -> ExitCode {
    if std::env::args_os().nth(1).is_some_and(|a| a == "hook") {
        return hook_main();
    }
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
        Commands::Store { args } => return daemon("store", &args),
        Commands::Device { args } => return daemon("device", &args),
        Commands::Run(args) => return run::main(&args),
        Commands::Mcp(cmd) => mcp::run(&cmd),
        Commands::Sessions(cmd) => state::sessions(&cmd),
        Commands::Grants(cmd) => state::grants(&cmd),
        Commands::Requests(cmd) => state::requests(&cmd),
        Commands::Audit(cmd) => state::audit(&cmd),
        Commands::Users(cmd) => users::run(&cmd),
    };
    exit::report(result)
}

/// `portcullis hook AGENT`: the hook process (`hook::main`); arguments it
/// does not read itself (`--help`, `--config=FILE`) go to clap.
fn hook_main() -> ExitCode {
    hook::main(2, || {
        let cli = match Cli::try_parse() {
            Ok(cli) => cli,
            Err(err) => {
                let _ = err.print();
                if err.use_stderr() {
                    guard::fire();
                }
                return ExitCode::SUCCESS; // --help
            }
        };
        match cli.command {
            Commands::Hook(args) => hook::run(&args),
            _ => guard::fire(),
        }
    })
}
