//! `portcullis check` and `portcullis explain`: the decision from the command line.

use std::io::{BufRead, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result};
use portcullis_engine::{CallContext, Engine, EngineError, SessionSources};
use portcullis_paths::{Environment, FsPaths, Scopes};
use portcullis_policy::{
    Decision, Effect, Mode, Origin, Reason, ReasonCode, ToolCall, ToolRef, Verdict,
};
use serde_json::{Value, json};

use crate::config_files;

#[derive(clap::Args)]
pub struct CheckArgs {
    /// A configuration file, layered above the user's (also `PORTCULLIS_CONFIG`).
    #[arg(long)]
    config: Option<PathBuf>,
    /// The call's working directory (default: the current directory).
    #[arg(long)]
    cwd: Option<PathBuf>,
    /// Overrides the configured mode: ask, approve-for-me, read-only, full-access.
    #[arg(long)]
    mode: Option<Mode>,
    /// No person can answer: every ask becomes deny.
    #[arg(long)]
    unattended: bool,
    /// The tool's name (`Bash`, `Read`, `mcp__server__tool` …).
    #[arg(long, required_unless_present = "batch")]
    tool: Option<String>,
    /// The tool's origin: core, builtin, extension (default: fail closed) or mcp.
    #[arg(long)]
    origin: Option<Origin>,
    /// The MCP server, for mcp tools.
    #[arg(long)]
    server: Option<String>,
    /// The tool's input, as JSON.
    #[arg(long, required_unless_present = "batch")]
    input: Option<String>,
    /// The active skill's `allowed-tools` (scalar form, e.g. `Bash(git add *) Read`).
    #[arg(long)]
    skill_allowed_tools: Option<String>,
    /// How the active skill's list acts: grant (Claude Code) or restrict (DeerFlow).
    #[arg(long, default_value = "grant", requires = "skill_allowed_tools")]
    skill_mode: String,
    /// The session making the call (also `PORTCULLIS_SESSION`): its grants apply,
    /// the decision is audited, and refusals raise permission requests. Without
    /// the session's `--token` it is a dry run: grants are consulted but no
    /// once-grant is spent.
    #[arg(long)]
    session: Option<String>,
    /// The session's token (also `PORTCULLIS_SESSION_TOKEN`), proving the
    /// caller is that session: only then are its once-grants spent.
    #[arg(long, requires = "session")]
    token: Option<String>,
    /// The data directory of the store (else `PORTCULLIS_DATA_DIR`, else the default).
    #[arg(long)]
    data_dir: Option<PathBuf>,
    /// Judge as a front door that runs shell calls confined when the decision
    /// says so (the Claude Code, Codex and Gemini hooks do, with `[confine]
    /// mode`): the decision then carries `confine`. Without it, a call allowed
    /// only because it would run confined is decided as if it could not be.
    #[arg(long)]
    confine: bool,
    /// Read calls as JSON Lines on stdin and print one decision per line.
    #[arg(long, conflicts_with_all = ["tool", "input", "origin", "server"])]
    batch: bool,
}

/// A JSON Lines request of `--batch`.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct BatchLine {
    tool: String,
    #[serde(default)]
    input: Value,
    #[serde(default)]
    origin: Origin,
    #[serde(default)]
    server: Option<String>,
    #[serde(default)]
    cwd: Option<String>,
    #[serde(default)]
    session: Option<String>,
}

/// The engines of `check`: a store-less one for pure queries, and — opened
/// once, on the first call that names a session — the stateful one, which
/// judges with the session's grants, audits and raises requests.
struct Engines {
    pure: Engine<FsPaths>,
    /// The session's token, when the caller proved it.
    token: Option<String>,
    stateful: std::cell::OnceCell<Engine<FsPaths>>,
    data_dir: Option<PathBuf>,
    skill: Option<portcullis_policy::skills::SkillTools>,
    can_confine: bool,
}

impl Engines {
    fn stateful(&self) -> Result<&Engine<FsPaths>> {
        if let Some(e) = self.stateful.get() {
            return Ok(e);
        }
        let dir = self
            .data_dir
            .clone()
            .unwrap_or_else(portcullis_store::default_data_dir);
        let store = portcullis_store::Store::open(&dir)
            .with_context(|| format!("opening the store in {}", dir.display()))?;
        let policy = self.pure.policy().clone();
        let facts = FsPaths::new(&Scopes::of(&policy.workspace), &Environment::from_process());
        let engine = Engine::new(store, policy, facts).with_skill(self.skill().cloned());
        Ok(self.stateful.get_or_init(|| engine))
    }

    fn skill(&self) -> Option<&portcullis_policy::skills::SkillTools> {
        self.skill.as_ref()
    }

    /// Decides a call; with a session (from the call or the environment) the
    /// stateful engine judges it, else the store-less one.
    fn decide(&self, call: &ToolCall, session: Option<&str>) -> Result<(Decision, Value)> {
        let env_session = std::env::var("PORTCULLIS_SESSION").ok();
        let proven = self.token.is_some();
        let ctx = CallContext {
            sources: SessionSources {
                body: session.map(str::to_string),
                env: env_session,
                ..Default::default()
            },
            token: self.token.clone(),
            // With a token the session must be proven by it; without one the
            // call spends nothing of the session's (a dry run).
            require_token: proven,
            dry_run: !proven,
            can_confine: self.can_confine,
            asked_in_agent: false,
            agent_link: None,
            remote_device: None,
        };
        let stateful = ctx.sources.body.is_some() || ctx.sources.env.is_some();
        let engine = if stateful {
            self.stateful()?
        } else {
            &self.pure
        };
        match engine.decide(call, &ctx, crate::state::now()) {
            Ok(outcome) if stateful => {
                let mut v = serde_json::to_value(&outcome)?;
                if !proven && let Some(o) = v.as_object_mut() {
                    o.insert(
                        "dry_run".into(),
                        json!("no --token: the session's grants were consulted, none was spent"),
                    );
                }
                Ok((outcome.decision, v))
            }
            Ok(outcome) => {
                let v = serde_json::to_value(&outcome.decision)?;
                Ok((outcome.decision, v))
            }
            Err(e @ EngineError::SessionConflict { .. }) => {
                let message = e.to_string();
                let v = refusal(ReasonCode::SessionConflict, message.clone());
                Ok((Decision::refused(ReasonCode::SessionConflict, message), v))
            }
            Err(e) => Err(e.into()),
        }
    }
}

fn absolute_cwd(cwd: Option<&PathBuf>) -> Result<String> {
    let dir = match cwd {
        Some(d) => d.clone(),
        None => std::env::current_dir().context("finding the current directory")?,
    };
    let dir = std::fs::canonicalize(&dir)
        .with_context(|| format!("--cwd {}: no such directory", dir.display()))?;
    Ok(dir.to_string_lossy().into_owned())
}

fn load_engine(args: &CheckArgs, cwd: &str) -> Result<Engines> {
    let env = Environment::from_process();
    let mut policy = config_files::load(args.config.as_deref(), std::path::Path::new(cwd), &env)?;
    if let Some(m) = args.mode {
        policy.mode = m;
    }
    policy.unattended |= args.unattended;
    let skill = match &args.skill_allowed_tools {
        Some(text) => {
            use portcullis_policy::skills::{
                AllowedToolsSource, SkillHost, SkillMode, ToolAliases,
            };
            let mode = match args.skill_mode.as_str() {
                "grant" => SkillMode::Grant,
                "restrict" => SkillMode::Restrict,
                other => anyhow::bail!("--skill-mode {other}: expected grant or restrict"),
            };
            let host = SkillHost::new(mode, ToolAliases::claude_code(), Vec::<String>::new());
            Some(
                host.parse(&AllowedToolsSource::Scalar(text.clone()))
                    .context("--skill-allowed-tools")?,
            )
        }
        None => None,
    };
    let scopes = Scopes::of(&policy.workspace);
    let facts = FsPaths::new(&scopes, &env);
    let token = args
        .token
        .clone()
        .or_else(|| std::env::var("PORTCULLIS_SESSION_TOKEN").ok())
        .filter(|t| !t.is_empty());
    Ok(Engines {
        pure: Engine::pure(policy, facts).with_skill(skill.clone()),
        token,
        stateful: std::cell::OnceCell::new(),
        data_dir: args.data_dir.clone(),
        skill,
        can_confine: args.confine,
    })
}

/// A decision that a call could not even be judged: fail closed.
fn refusal(code: ReasonCode, message: String) -> Value {
    json!({"decision": "deny", "reasons": [{"code": code, "message": message, "verdict": "deny"}], "effects": []})
}

pub fn run(args: &CheckArgs, explain: bool) -> Result<ExitCode> {
    let cwd = absolute_cwd(args.cwd.as_ref())?;
    let engine = match load_engine(args, &cwd) {
        Ok(e) => e,
        Err(err) => {
            // Configuration that cannot be used stops the engine: deny, and say why.
            let message = format!("configuration error: {err:#}");
            eprintln!("portcullis: {message}");
            if !explain {
                println!("{}", refusal(ReasonCode::ConfigError, message));
            }
            return Ok(ExitCode::from(2));
        }
    };
    let mut out = std::io::stdout().lock();
    if args.batch {
        let stdin = std::io::stdin().lock();
        for (n, line) in stdin.lines().enumerate() {
            let line = line.context("reading standard input")?;
            if line.trim().is_empty() {
                continue;
            }
            let parsed = serde_json::from_str::<BatchLine>(&line)
                .map_err(|e| (ReasonCode::BadInput, e.to_string()))
                .and_then(|req| match portcullis_policy::check_tool_name(&req.tool) {
                    Ok(()) => Ok(req),
                    Err(why) => Err((ReasonCode::BadToolName, why)),
                });
            let decision = match parsed {
                Ok(req) => {
                    let call = ToolCall {
                        tool: ToolRef {
                            name: req.tool,
                            origin: req.origin,
                            server: req.server,
                            manifest: None,
                        },
                        input: req.input,
                        cwd: req.cwd.clone().unwrap_or_else(|| cwd.clone()),
                    };
                    let session = req.session.clone();
                    let (d, v) =
                        engine.decide(&call, session.as_deref().or(args.session.as_deref()))?;
                    if explain {
                        Value::String(explain_text(&call, &d))
                    } else {
                        v
                    }
                }
                Err((code, why)) => refusal(code, format!("line {}: {why}", n + 1)),
            };
            match decision {
                Value::String(text) => writeln!(out, "{text}")?,
                v => writeln!(out, "{v}")?,
            }
            out.flush()?;
        }
        return Ok(ExitCode::SUCCESS);
    }
    let input_text = args.input.as_deref().unwrap_or("{}");
    let input: Value = match serde_json::from_str(input_text) {
        Ok(v) => v,
        Err(e) => {
            eprintln!("portcullis: --input is not JSON: {e}");
            return Ok(ExitCode::from(1));
        }
    };
    let tool = args.tool.clone().unwrap_or_default();
    if let Err(why) = portcullis_policy::check_tool_name(&tool) {
        eprintln!("portcullis: --tool is refused: {why}");
        return Ok(ExitCode::from(1));
    }
    let call = ToolCall {
        tool: ToolRef {
            name: tool,
            origin: args.origin.unwrap_or_default(),
            server: args.server.clone(),
            manifest: None,
        },
        input,
        cwd,
    };
    let (d, v) = engine.decide(&call, args.session.as_deref())?;
    if explain {
        write!(out, "{}", explain_text(&call, &d))?;
    } else {
        serde_json::to_writer(&mut out, &v)?;
        writeln!(out)?;
    }
    Ok(ExitCode::SUCCESS)
}

/// A readable account: each effect, what decided it, and what would change it.
fn explain_text(call: &ToolCall, d: &Decision) -> String {
    let mut s = format!(
        "{} — {} call of `{}` in {}\n",
        d.decision.as_str().to_uppercase(),
        call.tool.origin.as_str(),
        call.tool.name,
        call.cwd
    );
    if let Some(c) = &d.confine {
        s.push_str(&format!(
            "  runs confined by the kernel (`portcullis run --network {}{}`): reads outside the home and in it its tools and the workspace, never secrets or portcullis' data, writes only {}, protected paths read-only{}\n",
            if c.network { "on" } else { "off" },
            if c.write { "" } else { " --read-only" },
            if c.write { "in the workspace and a private temporary directory" } else { "in a private temporary directory" },
            if c.network { "" } else { ", no network" }
        ));
        for path in &c.reveal {
            s.push_str(&format!("  readable inside, as allowed: {path}\n"));
        }
        for path in &c.write_also {
            s.push_str(&format!("  writable inside, as allowed: {path}\n"));
        }
        if c.git_writes {
            s.push_str(
                "  git's own data in the repository writable inside (`[confine] git_writes`)\n",
            );
        }
        if c.unconfined.0 != d.decision {
            s.push_str(&format!(
                "  (unconfined it would be {}: see the reasons below)\n",
                c.unconfined.0.as_str()
            ));
        }
    }
    for r in d.judgements.iter().filter(|r| r.effect.is_none()) {
        s.push_str(&format!("  [{}] {}\n", r.verdict.as_str(), r.message));
    }
    // A deny no rule can lift (a critical or protected path, the approval
    // API …): suggesting an allow rule for another part would mislead.
    let final_deny = d.judgements.iter().find(|r| {
        r.verdict == Verdict::Deny
            && !matches!(
                r.code,
                ReasonCode::RuleAllow | ReasonCode::RuleAsk | ReasonCode::RuleDeny
            )
    });
    for (i, e) in d.effects.iter().enumerate() {
        s.push_str(&format!("\n  effect {}: {}\n", i + 1, describe(e)));
        for r in d.judgements.iter().filter(|r| r.effect == Some(i)) {
            s.push_str(&format!(
                "    [{}] {} ({})\n",
                r.verdict.as_str(),
                r.message,
                r.code
            ));
            if let Some(rule) = &r.rule {
                s.push_str(&format!("      decided by: {rule}\n"));
            }
            match final_deny {
                Some(deny) if r.verdict == Verdict::Ask => s.push_str(&format!(
                    "      to change: nothing here — the call is denied anyway ({})\n",
                    deny.code
                )),
                _ if r.verdict != Verdict::Allow => {
                    s.push_str(&format!("      to change: {}\n", suggestion(e, r)));
                }
                _ => {}
            }
        }
    }
    s
}

fn describe(e: &Effect) -> String {
    match e {
        Effect::Exec {
            program, argv, via, ..
        } => match argv {
            Some(a) => format!("runs `{}` (via {via})", a.join(" ")),
            None => format!("runs `{program}` with arguments known only at run time (via {via})"),
        },
        Effect::Read { path, .. } => format!("reads {path}"),
        Effect::Write { path, .. } => format!("writes {path}"),
        Effect::Delete { path, .. } => format!("deletes {path}"),
        Effect::Move { from, to, .. } => format!("moves {from} to {to}"),
        Effect::Network { program, host } => format!(
            "network access{}{}",
            program
                .as_ref()
                .map(|p| format!(" by {p}"))
                .unwrap_or_default(),
            host.as_ref()
                .map(|h| format!(" to {h}"))
                .unwrap_or_default()
        ),
        Effect::Code {
            program,
            source,
            reason,
        } => format!("{program} runs code through {source}: {reason}"),
        Effect::McpCall(name) => {
            format!("calls MCP tool {} of server {}", name.tool(), name.server())
        }
        Effect::ToolUse { tool } => format!("uses the tool {tool}"),
        Effect::Opaque { reason, text } => format!("cannot be analysed ({reason}): {text}"),
    }
}

/// What to add to the configuration (or change) for a different outcome.
fn suggestion(e: &Effect, r: &Reason) -> String {
    use ReasonCode::*;
    match r.code {
        CriticalPath | ProtectedPath | BlockedPath | BlockedWritePath | ApprovalApi | BadCwd => {
            return format!("nothing: no rule, grant or mode allows this ({})", r.code);
        }
        RuleDeny | RuleAsk => {
            return format!(
                "remove or narrow the {} rule {}",
                if r.code == RuleDeny { "deny" } else { "ask" },
                r.rule.clone().unwrap_or_default()
            );
        }
        _ => {}
    }
    match (e, r.code) {
        (Effect::Exec { argv: Some(a), .. }, Hazard) => {
            format!(
                "allow it literally: add \"Bash({})\" to [permissions] allow",
                a.join(" ")
            )
        }
        (Effect::Exec { argv: Some(a), .. }, _) => {
            let prefix: Vec<&str> = a.iter().take(2).map(String::as_str).collect();
            format!(
                "add \"Bash({} *)\" to [permissions] allow",
                prefix.join(" ")
            )
        }
        (Effect::Exec { .. }, _) => {
            "write the command without run-time values (variables, globs, substitutions)".into()
        }
        (Effect::Write { path, .. } | Effect::Delete { path, .. }, WorkspaceEdit) => {
            format!(
                "add \"Edit({path})\" (or \"Edit(./**)\") to [permissions] allow, or use mode = \"approve-for-me\""
            )
        }
        (Effect::Read { path, .. }, ExternalPath) => format!(
            "add \"Read(//{}/**)\" to [permissions] allow, or [workspace] read_roots",
            parent(path)
        ),
        (Effect::Write { path, .. } | Effect::Delete { path, .. }, ExternalPath) => {
            format!(
                "add \"Edit(//{}/**)\" to [permissions] allow, or add the directory to [workspace] roots",
                parent(path)
            )
        }
        (Effect::Code { source, .. }, _) => {
            format!("allow the command with a rule that names `{source}` literally")
        }
        (
            Effect::Network {
                host: Some(h),
                program: None,
            },
            _,
        ) => format!("add \"WebFetch(domain:{h})\" to [permissions] allow"),
        (Effect::McpCall(name), _) => format!("add \"{name}\" to [permissions] allow"),
        (Effect::ToolUse { tool }, _) => {
            format!("add \"{tool}\" to [permissions] allow (or a [[tools]] manifest)")
        }
        (_, ProtectedPath | BlockedPath | BlockedWritePath | ReadOnlyRoot) => {
            "this path is not writable by an agent; a person must do this".into()
        }
        (_, SecretPath) => "a person must approve reading secrets".into(),
        (_, Opaque | DynamicPath) => {
            "rewrite the call so it can be analysed, or ask a person".into()
        }
        _ => "ask a person, or change the mode".into(),
    }
}

fn parent(path: &str) -> String {
    let p = std::path::Path::new(path);
    p.parent()
        .map(|d| d.to_string_lossy().trim_start_matches('/').to_string())
        .unwrap_or_default()
}
