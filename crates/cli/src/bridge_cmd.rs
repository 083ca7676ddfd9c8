//! `portcullis mcp-bridge`: the MCP proxy (run by `portcullis-daemon`).

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result, bail};
use portcullis_paths::{Environment, FsPaths, Scopes};

use crate::config_files;

#[derive(clap::Args)]
pub struct BridgeArgs {
    /// The server's name: its tools are `mcp__NAME__tool` to rules and grants.
    #[arg(long)]
    name: String,
    /// The session the calls belong to (else `PORTCULLIS_SESSION`).
    #[arg(long)]
    session: Option<String>,
    /// A configuration file, layered above the user's (also `PORTCULLIS_CONFIG`).
    #[arg(long)]
    config: Option<PathBuf>,
    /// The data directory of the store (else `PORTCULLIS_DATA_DIR`, else the default).
    #[arg(long)]
    data_dir: Option<PathBuf>,
    /// Withhold tools seen for the first time until a person approves them
    /// (default: trust on first use).
    #[arg(long)]
    refuse_unpinned: bool,
    /// Accepted for older configurations; changes nothing now: a pinned
    /// definition's `readOnlyHint` makes its path arguments reads for every
    /// server, and no other annotation loosens.
    #[arg(long, hide = true)]
    trusted: bool,
    /// Run the stdio server confined by the kernel (`portcullis run --network
    /// on`): it reads everything but secrets and portcullis' data and writes
    /// only in the workspace of the current directory (also `confine = true`
    /// in its `[[mcp.servers]]` entry).
    #[arg(long, conflicts_with = "url")]
    confine: bool,
    /// A Streamable HTTP server to bridge instead of a command: http://, or
    /// https:// verified against the system's roots (and --ca-file).
    #[arg(long, conflicts_with = "command")]
    url: Option<String>,
    /// A PEM file of CA certificates to trust for an https:// server, beside
    /// the system's roots (also `ca_file` in its `[[mcp.servers]]` entry).
    #[arg(long, requires = "url")]
    ca_file: Option<PathBuf>,
    /// The MCP server's command and arguments, after `--` (else the
    /// `command` or `url` of its `[[mcp.servers]]` entry).
    #[arg(last = true)]
    command: Vec<String>,
}

pub fn bridge(args: &BridgeArgs) -> Result<ExitCode> {
    if let Err(why) = portcullis_policy::McpServer::check_name(&args.name) {
        bail!("--name {:?}: {why}", args.name);
    }
    let env = Environment::from_process();
    let cwd = std::env::current_dir().context("finding the current directory")?;
    let policy = config_files::load(args.config.as_deref(), &cwd, &env)
        .context("reading the configuration")?;
    let scopes = Scopes::of(&policy.workspace);
    let facts = FsPaths::new(&scopes, &env);
    let data_dir = args
        .data_dir
        .clone()
        .unwrap_or_else(portcullis_store::default_data_dir);
    let configured = policy
        .mcp_servers
        .iter()
        .find(|m| m.name == args.name)
        .cloned();
    let confine = args.confine || configured.as_ref().is_some_and(|m| m.confine);
    // `portcullis run`, beside this binary: the server runs confined.
    let runner = std::env::current_exe()
        .context("finding portcullis itself")?
        .with_file_name("portcullis");
    // Only called with a non-empty argv (checked below); an empty one would
    // name no program, which the spawn then reports.
    let command = |argv: &[String]| {
        let (program, args) = argv
            .split_first()
            .map_or(("", &[][..]), |(p, a)| (p.as_str(), a));
        let mut c = if confine {
            let mut c = tokio::process::Command::new(&runner);
            c.args(["run", "--network", "on", "--", program]);
            c
        } else {
            tokio::process::Command::new(program)
        };
        c.args(args).kill_on_drop(true);
        portcullis_bridge::Target::Command(c)
    };
    let target = match (&configured, &args.url, args.command.is_empty()) {
        (_, Some(url), _) => portcullis_bridge::Target::Url(portcullis_bridge::Remote {
            url: url.clone(),
            ca_file: args.ca_file.clone(),
        }),
        (_, None, false) => command(&args.command),
        (Some(m), None, true) if !m.command.is_empty() => command(&m.command),
        (Some(m), None, true) if m.url.is_some() => portcullis_bridge::Target::Url(
            portcullis_bridge::Remote::configured(m, &env.home).context("the entry's url")?,
        ),
        _ => bail!(
            "no server: give its command after `--` or --url, or add a [[mcp.servers]] entry named `{}`",
            args.name
        ),
    };
    if confine && matches!(target, portcullis_bridge::Target::Url(_)) {
        bail!(
            "`{}` is a Streamable HTTP server: only a stdio server (a command) can be run confined",
            args.name
        );
    }
    let opts = portcullis_bridge::Options {
        name: args.name.clone(),
        session: args.session.clone(),
        env_session: std::env::var("PORTCULLIS_SESSION").ok(),
        refuse_unpinned: args.refuse_unpinned
            || configured.as_ref().is_some_and(|m| m.refuse_unpinned),
        trusted: args.trusted || configured.as_ref().is_some_and(|m| m.trusted),
        cwd: cwd.to_string_lossy().into_owned(),
        // The agent that runs this bridge: its hook links each call to the
        // agent's session (an agent that starts the bridge through a shell
        // is found past it).
        agent: crate::agent_process::own_agent(),
        agent_env_session: std::env::var("CLAUDE_CODE_SESSION_ID")
            .ok()
            .filter(|s| !s.is_empty()),
    };
    // Governed by a team server: it decides, as for the machine's hooks.
    let governing = crate::hook_remote::governing_server().or_else(|| policy.team_server.clone());
    let remote = match &governing {
        Some(server) => Some(
            crate::remote_hook::Remote::for_machine(
                server,
                &data_dir,
                policy.clone(),
                FsPaths::new(&scopes, &env),
                None,
            )
            .with_context(|| format!("bridging `{}` for the team server {server}", args.name))?,
        ),
        None => None,
    };
    let store = portcullis_store::Store::open(&data_dir)
        .with_context(|| format!("opening the store in {}", data_dir.display()))?;
    let local = portcullis_bridge::Local::new(portcullis_engine::Engine::new(store, policy, facts));
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    match (remote, governing) {
        (Some(remote), Some(server)) => {
            let authority = crate::bridge_remote::Governed::new(local, remote, &server);
            runtime.block_on(portcullis_bridge::run_stdio(opts, authority, target))?;
        }
        _ => runtime.block_on(portcullis_bridge::run_stdio(opts, local, target))?,
    }
    Ok(ExitCode::SUCCESS)
}
