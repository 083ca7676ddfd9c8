//! `portcullis sessions|grants|requests|audit`: the store from the command line.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result, bail};
use clap::Subcommand;
use portcullis_store::{
    AgentKind, AuditCheck, GrantScope, GrantTarget, Integrity, NewGrant, NewSession, Op,
    Resolution, Store,
};
use serde::Serialize;

/// Where the store lives: `--data-dir`, else `PORTCULLIS_DATA_DIR`, else the default.
#[derive(clap::Args, Clone, Debug, Default)]
pub struct StoreArgs {
    /// The data directory (else `PORTCULLIS_DATA_DIR`, else `$XDG_DATA_HOME/portcullis`).
    #[arg(long, global = true)]
    pub data_dir: Option<PathBuf>,
    /// Print JSON.
    #[arg(long, global = true)]
    pub json: bool,
}

impl StoreArgs {
    pub fn open(&self) -> Result<Store> {
        let dir = self
            .data_dir
            .clone()
            .unwrap_or_else(portcullis_store::default_data_dir);
        Store::open(&dir).with_context(|| format!("opening the store in {}", dir.display()))
    }
}

pub fn now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0)
}

fn print<T: Serialize>(args: &StoreArgs, value: &T, text: impl FnOnce() -> String) -> Result<()> {
    let mut out = std::io::stdout().lock();
    if args.json {
        serde_json::to_writer(&mut out, value)?;
        writeln!(out)?;
    } else {
        write!(out, "{}", text())?;
    }
    Ok(())
}

#[derive(Subcommand)]
pub enum SessionsCmd {
    /// Register a session (prints its token once).
    Register {
        #[arg(long)]
        id: String,
        #[arg(long)]
        agent: Option<String>,
        #[arg(long)]
        cwd: Option<String>,
        #[arg(long, requires = "kind")]
        parent: Option<String>,
        /// main, subagent, background, workflow or scheduled.
        #[arg(long)]
        kind: Option<AgentKind>,
        #[arg(long)]
        workflow: Option<String>,
        /// Seconds until the session expires.
        #[arg(long)]
        ttl: Option<i64>,
        #[command(flatten)]
        store: StoreArgs,
    },
    /// List sessions.
    List {
        #[command(flatten)]
        store: StoreArgs,
    },
    /// Revoke a session: its grants stop applying at the next decision.
    Revoke {
        id: String,
        #[command(flatten)]
        store: StoreArgs,
    },
}

pub fn sessions(cmd: &SessionsCmd) -> Result<ExitCode> {
    match cmd {
        SessionsCmd::Register {
            id,
            agent,
            cwd,
            parent,
            kind,
            workflow,
            ttl,
            store,
        } => {
            let s = store.open()?;
            let r = portcullis_engine::actions::register_session(
                &s,
                &NewSession {
                    id: id.clone(),
                    agent: agent.clone(),
                    cwd: cwd.clone(),
                    parent: parent.clone(),
                    kind: kind.unwrap_or(AgentKind::Main),
                    workflow: workflow.clone(),
                    ttl_secs: *ttl,
                },
                now(),
            )?;
            print(store, &r, || {
                format!(
                    "registered session {}\ntoken (shown once): {}\n",
                    r.session.id, r.token
                )
            })?;
        }
        SessionsCmd::List { store } => {
            let list = store.open()?.sessions()?;
            print(store, &list, || {
                list.iter()
                    .map(|s| {
                        format!(
                            "{}\t{}\t{}\tparent={}\t{}\n",
                            printable(&s.id),
                            s.kind.as_str(),
                            printable(s.agent.as_deref().unwrap_or_default()),
                            printable(s.parent.as_deref().unwrap_or("-")),
                            if s.revoked_at.is_some() {
                                "revoked"
                            } else {
                                "active"
                            }
                        )
                    })
                    .collect()
            })?;
        }
        SessionsCmd::Revoke { id, store } => {
            let s = store.open()?;
            if !portcullis_engine::actions::revoke_session(&s, id, &approver(), now())? {
                bail!("no active session {id}");
            }
            print(store, &serde_json::json!({"revoked": id}), || {
                format!("revoked session {id}\n")
            })?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

#[derive(Subcommand)]
pub enum GrantsCmd {
    /// Add a grant (as a person approving).
    Add {
        /// The session it belongs to (device grants belong to none).
        #[arg(long)]
        session: Option<String>,
        /// once, session or device (device: read-only operations only).
        #[arg(long)]
        scope: String,
        /// read, write, delete, move or exec.
        #[arg(long)]
        op: Op,
        /// The path (canonicalised now; a directory grants everything below it).
        #[arg(long, conflicts_with_all = ["command", "tool"], required_unless_present_any = ["command", "tool"])]
        path: Option<PathBuf>,
        /// A command pattern, in rule syntax (`git push *`).
        #[arg(long, conflicts_with = "tool")]
        command: Option<String>,
        /// One tool by its full name (`mcp__github__get_issue`); with `--op exec`.
        #[arg(long)]
        tool: Option<String>,
        /// Seconds until the grant expires.
        #[arg(long)]
        ttl: Option<i64>,
        #[command(flatten)]
        store: StoreArgs,
    },
    /// List grants.
    List {
        #[command(flatten)]
        store: StoreArgs,
    },
    /// Revoke a grant: it stops applying at the next decision.
    Revoke {
        id: i64,
        #[command(flatten)]
        store: StoreArgs,
    },
}

fn scope(s: &str) -> Result<GrantScope> {
    match s {
        "once" => Ok(GrantScope::Once),
        "session" => Ok(GrantScope::Session),
        "device" => Ok(GrantScope::Device),
        other => bail!("--scope {other}: expected once, session or device"),
    }
}

pub fn grants(cmd: &GrantsCmd) -> Result<ExitCode> {
    match cmd {
        GrantsCmd::Add {
            session,
            scope: sc,
            op,
            path,
            command,
            tool,
            ttl,
            store,
        } => {
            let scope = scope(sc)?;
            let target = match (path, command, tool) {
                (Some(p), _, _) => {
                    let canonical = std::fs::canonicalize(p).with_context(|| {
                        format!("--path {}: no such file or directory", p.display())
                    })?;
                    GrantTarget::Path {
                        folder: canonical.is_dir(),
                        canonical: canonical.to_string_lossy().into_owned(),
                    }
                }
                (None, Some(c), _) => {
                    portcullis_policy::rules::CommandPattern::parse(c)
                        .map_err(|e| anyhow::anyhow!("--command {c:?}: {e}"))?;
                    GrantTarget::Command { pattern: c.clone() }
                }
                (None, None, Some(t)) => GrantTarget::Tool { name: t.clone() },
                (None, None, None) => bail!("give --path, --command or --tool"),
            };
            if scope != GrantScope::Device && session.is_none() {
                bail!("--session is required for once and session grants");
            }
            let s = store.open()?;
            let g = portcullis_engine::actions::add_grant(
                &s,
                &NewGrant {
                    session: if scope == GrantScope::Device {
                        None
                    } else {
                        session.clone()
                    },
                    scope,
                    op: *op,
                    target,
                    expires_at: ttl.map(|t| now() + t),
                    approver: approver(),
                    request: None,
                },
                now(),
            )?;
            print(store, &g, || format!("grant #{} added\n", g.id))?;
        }
        GrantsCmd::List { store } => {
            let list = store.open()?.grants()?;
            print(store, &list, || {
                list.iter()
                    .map(|g| {
                        format!(
                            "#{}\t{}\t{}\t{}\n",
                            g.id,
                            g.scope.as_str(),
                            g.op.as_str(),
                            printable(&g.target.to_string())
                        )
                    })
                    .collect()
            })?;
        }
        GrantsCmd::Revoke { id, store } => {
            let s = store.open()?;
            if !portcullis_engine::actions::revoke_grant(&s, *id, &approver(), now())? {
                bail!("no active grant #{id}");
            }
            print(store, &serde_json::json!({"revoked": id}), || {
                format!("revoked grant #{id}\n")
            })?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Who approves from this command line.
pub fn approver() -> String {
    std::env::var("USER")
        .map(|u| format!("cli:{u}"))
        .unwrap_or_else(|_| "cli".into())
}

#[derive(Subcommand)]
pub enum RequestsCmd {
    /// List pending permission requests.
    List {
        /// Include resolved requests.
        #[arg(long)]
        all: bool,
        #[command(flatten)]
        store: StoreArgs,
    },
    /// Approve or deny a pending request.
    Resolve {
        id: i64,
        /// once, session, device (reads only) or deny.
        #[arg(long)]
        scope: String,
        /// With `--scope deny`: what the agent reads as the refusal of its next
        /// attempts of the same call in the session (for ten minutes, or the
        /// session's life with `--for session`).
        #[arg(long)]
        message: Option<String>,
        /// With `--scope deny`: how long the denial stands for the same call,
        /// `call` (ten minutes) or `session`.
        #[arg(long = "for", value_name = "call|session")]
        lasting: Option<String>,
        /// With an approval: grant a rule instead of the call itself
        /// (`Bash(npm install *)`, `Read(~/Downloads/**)`, `Edit(./src/**)`, an
        /// MCP tool's name). It must cover the call, judged again under the
        /// configuration of its directory.
        #[arg(long, conflicts_with_all = ["message", "lasting"])]
        rule: Option<String>,
        /// With `--rule`: "always" — also save the rule to the `user`'s
        /// configuration or the `project`'s `.portcullis.toml` (committed and
        /// shared; refused unless the project is in `trusted_projects`).
        #[arg(long, requires = "rule", value_name = "user|project")]
        save: Option<String>,
        /// The configuration file layered above the user's, as for `check`.
        #[arg(long)]
        config: Option<PathBuf>,
        #[command(flatten)]
        store: StoreArgs,
    },
}

pub fn requests(cmd: &RequestsCmd) -> Result<ExitCode> {
    match cmd {
        RequestsCmd::List { all, store } => {
            let opened = store.open()?;
            // What nobody can use any more is not listed as waiting.
            opened.expire_stale_requests(now(), portcullis_store::REQUEST_IDLE_SECS)?;
            let list = opened.requests(!all)?;
            print(store, &list, || {
                list.iter()
                    .map(|r| {
                        format!(
                            "#{}\t{}\t{}\t{}\t×{}\t{}\n",
                            r.id,
                            printable(&r.session),
                            r.op.as_str(),
                            printable(&r.target.to_string()),
                            r.count,
                            printable(&r.reason)
                        )
                    })
                    .collect()
            })?;
        }
        RequestsCmd::Resolve {
            id,
            scope,
            message,
            lasting,
            rule,
            save,
            config,
            store,
        } => {
            let how = match scope.as_str() {
                "once" => Resolution::Once,
                "session" => Resolution::Session,
                "device" => Resolution::Device,
                "deny" => Resolution::Deny,
                other => bail!("--scope {other}: expected once, session, device or deny"),
            };
            let at = now();
            let (r, g) = match rule {
                Some(rule) => resolve_with_rule(
                    store,
                    config.as_deref(),
                    *id,
                    how,
                    rule,
                    save.as_deref(),
                    at,
                )?,
                None => {
                    let denial = portcullis_engine::actions::denial(
                        how,
                        message.as_deref(),
                        lasting.as_deref(),
                        at,
                    )
                    .map_err(anyhow::Error::msg)?;
                    let s = store.open()?;
                    portcullis_engine::actions::resolve_request_with(
                        &s,
                        *id,
                        how,
                        denial.as_ref(),
                        &approver(),
                        at,
                    )?
                }
            };
            print(
                store,
                &serde_json::json!({"request": r, "grant": g}),
                || match &g {
                    Some(g) if rule.is_some() => format!(
                        "request #{} approved with the rule {}: grant #{}; the agent may retry\n",
                        r.id, g.target, g.id
                    ),
                    Some(g) => format!(
                        "request #{} approved: grant #{}; the agent may retry\n",
                        r.id, g.id
                    ),
                    None => format!("request #{} denied\n", r.id),
                },
            )?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

#[derive(Subcommand)]
pub enum AuditCmd {
    /// The last audit rows.
    Tail {
        #[arg(long, default_value_t = 20)]
        n: usize,
        #[command(flatten)]
        store: StoreArgs,
    },
    /// Check the database (`PRAGMA integrity_check`) and the hash chain: exit
    /// 0 when both hold, 1 and what is wrong otherwise.
    Verify {
        #[command(flatten)]
        store: StoreArgs,
    },
    /// Every row as JSON Lines.
    Export {
        /// JSON Lines (the only format).
        #[arg(long)]
        jsonl: bool,
        #[command(flatten)]
        store: StoreArgs,
    },
}

/// Text an agent may have chosen, safe to print in a line of columns: control
/// characters (a tab, a newline that would forge a row, terminal escapes)
/// written as Rust escapes (`\t`, `\n`, `\u{1b}`).
pub fn printable(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if c.is_control() {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    out
}

pub fn audit(cmd: &AuditCmd) -> Result<ExitCode> {
    match cmd {
        AuditCmd::Tail { n, store } => {
            let rows = store.open()?.audit_tail(*n)?;
            print(store, &rows, || {
                rows.iter()
                    .map(|r| {
                        format!(
                            "{}\t{}\t{}\t{}\t{}\n",
                            r.id,
                            printable(r.event.kind.as_str()),
                            printable(r.event.session.as_deref().unwrap_or_default()),
                            printable(r.event.tool.as_deref().unwrap_or_default()),
                            printable(r.event.verdict.map_or("", |v| v.as_str()))
                        )
                    })
                    .collect()
            })?;
        }
        AuditCmd::Verify { store: args } => {
            let store = args.open()?;
            // A damaged file can hold an intact-looking chain (or lose rows
            // the chain cannot see): SQLite's full check comes first.
            let integrity = store.integrity_check()?;
            if let Integrity::Damaged { .. } = &integrity {
                print(args, &integrity, || {
                    format!(
                        "database {} is damaged, so its audit log cannot be trusted \
                         (PRAGMA integrity_check): {}\nrestore it from a backup\n",
                        store.path().display(),
                        integrity.to_string().trim_start_matches("damaged: ")
                    )
                })?;
                return Ok(ExitCode::from(1));
            }
            let check = store.verify_audit()?;
            print(args, &check, || match &check {
                AuditCheck::Intact { rows } => format!("audit chain intact ({rows} rows)\n"),
                AuditCheck::Broken { row, why } => {
                    format!("audit chain broken at row {row}: {why}\n")
                }
            })?;
            if let AuditCheck::Broken { .. } = check {
                return Ok(ExitCode::from(1));
            }
        }
        AuditCmd::Export { jsonl: _, store } => {
            let rows = store.open()?.audit_all()?;
            let mut out = std::io::stdout().lock();
            for r in rows {
                serde_json::to_writer(&mut out, &r)?;
                writeln!(out)?;
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// `doctor`'s look at the store in the default data directory: trusted
/// (ours, writable by nobody else), openable, and `PRAGMA quick_check` clean.
#[derive(Serialize)]
pub struct StoreCheck {
    /// `ok`, `not-created`, `refused` or `damaged`.
    pub status: &'static str,
    pub dir: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub problem: Option<String>,
}

impl StoreCheck {
    pub fn ok(&self) -> bool {
        matches!(self.status, "ok" | "not-created")
    }

    /// One line of `doctor`'s report.
    pub fn line(&self) -> String {
        let head = format!("{:<11} {:<7}", "store", "");
        match (self.status, &self.problem) {
            ("ok", _) => format!("{head} ok {}", self.dir),
            ("not-created", _) => format!("{head} not created yet ({})", self.dir),
            (status, problem) => format!(
                "{head} {} {}: {}",
                status.to_uppercase(),
                self.dir,
                problem.as_deref().unwrap_or_default()
            ),
        }
    }
}

pub fn doctor_store() -> StoreCheck {
    let dir = portcullis_store::default_data_dir();
    let check = |status, problem| StoreCheck {
        status,
        dir: dir.display().to_string(),
        problem,
    };
    // Never create a store just to look at it.
    if !dir.join(portcullis_store::DB_FILE).exists() {
        return check("not-created", None);
    }
    match Store::open(&dir).and_then(|s| s.quick_check()) {
        Ok(Integrity::Ok) => check("ok", None),
        Ok(damage) => check(
            "damaged",
            Some(format!(
                "PRAGMA quick_check: {damage}; restore {} from a backup",
                portcullis_store::DB_FILE
            )),
        ),
        Err(e) => check("refused", Some(e.to_string())),
    }
}

/// `requests resolve --rule`: the request's call judged again under the
/// configuration of its directory, by the engine, which checks the rule
/// covers it before it grants it.
fn resolve_with_rule(
    store: &StoreArgs,
    config: Option<&Path>,
    id: i64,
    how: Resolution,
    rule: &str,
    save: Option<&str>,
    at: i64,
) -> Result<(portcullis_store::Request, Option<portcullis_store::Grant>)> {
    let s = store.open()?;
    let Some(request) = s.request(id)? else {
        bail!("no request #{id}");
    };
    let portcullis_store::GrantTarget::Call { cwd, .. } = &request.target else {
        bail!("request #{id} does not name a whole call: approve it as it is");
    };
    let env = portcullis_paths::Environment::from_process();
    let policy = crate::config_files::load(config, Path::new(cwd), &env)
        .context("loading the configuration of the request's directory")?;
    let facts =
        portcullis_paths::FsPaths::new(&portcullis_paths::Scopes::of(&policy.workspace), &env);
    let save = save
        .map(|place| portcullis_engine::SaveTo::for_call(place, cwd, &policy, &facts, &env))
        .transpose()
        .map_err(anyhow::Error::msg)?;
    let engine = portcullis_engine::Engine::new(s, policy, facts);
    let by = approver();
    let choice = portcullis_engine::RuleChoice {
        rule,
        save: save.as_ref(),
        approver: &by,
        now: at,
    };
    match engine.resolve_with_rule(id, how, &choice, engine.policy(), engine.facts())? {
        Ok(resolved) => Ok(resolved),
        Err(refused) => bail!("{refused}"),
    }
}
