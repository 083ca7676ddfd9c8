//! `portcullis serve`: the HTTP API and approval UI on the embedded store.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result, bail};
use portcullis_paths::Environment;
use portcullis_policy::Policy;

use crate::config_files;

#[derive(clap::Args)]
pub struct ServeArgs {
    /// Where to listen (default: `[server] addr` of the configuration, else 127.0.0.1:7878).
    #[arg(long)]
    addr: Option<SocketAddr>,
    /// The data directory of the store (else `PORTCULLIS_DATA_DIR`, else the default).
    #[arg(long)]
    data_dir: Option<PathBuf>,
    /// A configuration file, layered above the user's (also `PORTCULLIS_CONFIG`).
    #[arg(long)]
    config: Option<PathBuf>,
    /// The store: `sqlite` (the default: portcullis.db in the data
    /// directory) or a team's PostgreSQL, postgres://USER@HOST[:PORT]/DB
    /// (its schema is brought up to date on start); else `[store] url` of
    /// the configuration. The login token, user tokens and the hook socket
    /// stay in the data directory.
    #[arg(long, value_name = "URL")]
    store: Option<String>,
    /// Listen on an address other than loopback. The approval UI is then
    /// reachable from the network: only behind something that authenticates.
    #[arg(long)]
    allow_non_loopback: bool,
    /// Serve HTTPS with this PEM certificate chain (leaf first), with
    /// --tls-key. Required off loopback unless --allow-plain-http.
    #[arg(long, value_name = "PEM", requires = "tls_key")]
    tls_cert: Option<PathBuf>,
    /// The PEM private key of --tls-cert.
    #[arg(long, value_name = "PEM", requires = "tls_cert")]
    tls_key: Option<PathBuf>,
    /// Serve plain HTTP off loopback (tokens and decisions in the clear):
    /// only behind something that encrypts, such as a TLS-terminating proxy.
    #[arg(long)]
    allow_plain_http: bool,
    /// Seconds a connection may take to send a request's head; idle and
    /// half-open connections are closed after it.
    #[arg(long, value_name = "SECS", default_value_t = 10.0, value_parser = seconds)]
    header_timeout: f64,
    /// Seconds a request's body may take to arrive after its head.
    #[arg(long, value_name = "SECS", default_value_t = 30.0, value_parser = seconds)]
    body_timeout: f64,
    /// Open connections at most (also kept within the open-file limit): past
    /// it, a new connection closes the oldest idle one.
    #[arg(long, value_name = "N", default_value_t = 512)]
    max_connections: usize,
    /// `/v1/events` streams (approval UI tabs) at most.
    #[arg(long, value_name = "N", default_value_t = 32)]
    max_event_streams: usize,
    /// Seconds between the store's `PRAGMA quick_check`s.
    #[arg(long, value_name = "SECS", default_value_t = 60.0, value_parser = seconds)]
    quick_check_every: f64,
}

/// A positive, finite number of seconds.
fn seconds(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if v.is_finite() && v > 0.0 && v < 1e9 => Ok(v),
        _ => Err(format!("`{s}` is not a positive number of seconds")),
    }
}

impl ServeArgs {
    fn limits(&self) -> portcullis_server::conn::Limits {
        use std::time::Duration;
        portcullis_server::conn::Limits {
            header_timeout: Duration::from_secs_f64(self.header_timeout),
            body_timeout: Duration::from_secs_f64(self.body_timeout),
            max_connections: self.max_connections,
            max_event_streams: self.max_event_streams,
            quick_check_every: Duration::from_secs_f64(self.quick_check_every),
        }
    }
}

/// The configuration layers for a call's working directory, read afresh.
struct Layers {
    explicit: Option<PathBuf>,
    env: Environment,
}

impl portcullis_server::PolicySource for Layers {
    fn policy_for(&self, cwd: &Path) -> Result<Policy, String> {
        config_files::load(self.explicit.as_deref(), cwd, &self.env).map_err(|e| format!("{e:#}"))
    }
}

pub fn run(args: &ServeArgs) -> Result<ExitCode> {
    let env = Environment::from_process();
    let here = std::env::current_dir().context("finding the current directory")?;
    let policy = config_files::load(args.config.as_deref(), &here, &env)
        .context("reading the configuration")?;
    let addr: SocketAddr = match args.addr {
        Some(a) => a,
        None => policy.server_addr.parse().with_context(|| {
            format!(
                "[server] addr = \"{}\" is not an address like 127.0.0.1:7878",
                policy.server_addr
            )
        })?,
    };
    if !addr.ip().is_loopback() && !args.allow_non_loopback {
        bail!(
            "{addr} is not a loopback address: the approval UI would be reachable from the network. \
             Pass --allow-non-loopback if that is really wanted"
        );
    }
    let tls = match (&args.tls_cert, &args.tls_key) {
        (Some(cert), Some(key)) => Some(portcullis_server::tls::load(cert, key)?),
        _ => None,
    };
    if !addr.ip().is_loopback() && tls.is_none() && !args.allow_plain_http {
        bail!(
            "{addr} is not a loopback address: serving it plain HTTP would carry tokens and              decisions in the clear. Give --tls-cert and --tls-key, or pass --allow-plain-http              behind something that encrypts"
        );
    }
    if policy.server_port() != Some(addr.port()) {
        let guarded = match policy.server_port() {
            Some(port) => format!("port {port}"),
            None => "no port".to_string(),
        };
        eprintln!(
            "portcullis: warning: listening on port {}, but the policy guards {guarded} \
             ([server] addr = \"{}\"); set [server] addr so tool calls to this server are refused",
            addr.port(),
            policy.server_addr
        );
    }
    let data_dir = args
        .data_dir
        .clone()
        .unwrap_or_else(portcullis_store::default_data_dir);
    // `--store`, else `[store] url` of the configuration, else SQLite.
    let (store, said_where) = match &args.store {
        Some(s) => (Some(s.as_str()), "--store"),
        None => (policy.store_url.as_deref(), "[store] url"),
    };
    let store = portcullis_store::Location::parse(store, &data_dir)
        .map_err(anyhow::Error::msg)
        .context(said_where)?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    runtime.block_on(async move {
        let listener = tokio::net::TcpListener::bind(addr)
            .await
            .with_context(|| format!("listening on {addr}"))?;
        let bound = listener.local_addr()?;
        let mcp = portcullis_server::mcp::McpConfig {
            cwd: here.to_string_lossy().into_owned(),
        };
        let opts = portcullis_server::Options {
            addr: bound,
            data_dir: data_dir.clone(),
            store: store.clone(),
            policy: Box::new(Layers {
                explicit: args.config.clone(),
                env: env.clone(),
            }),
            env,
            mcp,
            limits: args.limits(),
            tls,
        };
        // Opening and checking the store is file work: off the async runtime.
        let (state, created) =
            tokio::task::spawn_blocking(move || portcullis_server::state(opts)).await??;
        // Hooks for this data directory hand their calls to this server.
        let hook_socket = match crate::hook_socket::listen(
            &data_dir,
            std::sync::Arc::clone(&state.decider),
            tokio::runtime::Handle::current(),
        ) {
            Ok(socket) => Some(socket),
            Err(e) => {
                eprintln!("portcullis: warning: hooks will judge their calls themselves: {e:#}");
                None
            }
        };
        let base = state.hosts.base_url();
        println!("portcullis is serving on {base} (store: {store})");
        if created {
            println!(
                "a new UI login token was written to {}",
                data_dir.join(portcullis_server::auth::TOKEN_FILE).display()
            );
        }
        println!(
            "open the approval UI: {base}/login?token={}",
            state.auth.token()
        );
        use std::io::Write;
        std::io::stdout().flush().ok();
        // Ctrl-C or a service manager's SIGTERM: stop serving, remove the
        // hook socket, close the store.
        let mut terminate =
            tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
                .context("listening for SIGTERM")?;
        let shutdown = async move {
            tokio::select! {
                _ = tokio::signal::ctrl_c() => {}
                _ = terminate.recv() => {}
            }
        };
        portcullis_server::serve(listener, state, shutdown)
            .await
            .context("serving")?;
        drop(hook_socket);
        Ok(ExitCode::SUCCESS)
    })
}
