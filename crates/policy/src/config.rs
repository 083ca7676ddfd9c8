//! Configuration: TOML layers (and Claude Code settings) parsed from text into
//! one [`Policy`]. Reading the files is the caller's job; this module only
//! parses, so it can be tested without a file system.
//!
//! Merging: rule lists are concatenated across layers (deny beats ask beats
//! allow whatever the layer); scalar settings come from the highest layer that
//! sets them, except that a managed layer's mode cannot be overridden.

use serde::Deserialize;
use toml::Spanned;

use crate::error::ConfigError;
use crate::mcp_name::McpToolName;
use crate::rules::{Rule, RuleList};
use crate::tables::{ToolTable, claude_code_table};
use crate::tool::{Manifest, Origin};

/// Permission modes (presets).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Mode {
    /// Ask for anything not allowed by a rule (read-only commands need no rule).
    #[default]
    Ask,
    /// Allow what the engine can prove harmless: read-only commands, known
    /// commands whose effects stay in the workspace, workspace edits. Ask for the rest.
    ApproveForMe,
    /// No writes, no execution beyond read-only programs: everything else is denied.
    ReadOnly,
    /// Allow everything but explicit deny rules and the managed layer.
    FullAccess,
}

impl std::str::FromStr for Mode {
    type Err = String;
    fn from_str(s: &str) -> Result<Mode, String> {
        match s {
            "ask" => Ok(Mode::Ask),
            "approve-for-me" => Ok(Mode::ApproveForMe),
            "read-only" => Ok(Mode::ReadOnly),
            "full-access" => Ok(Mode::FullAccess),
            other => Err(format!(
                "unknown mode `{other}` (expected ask, approve-for-me, read-only or full-access)"
            )),
        }
    }
}

impl Mode {
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Ask => "ask",
            Mode::ApproveForMe => "approve-for-me",
            Mode::ReadOnly => "read-only",
            Mode::FullAccess => "full-access",
        }
    }
}

/// Where a layer comes from, in increasing priority.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum LayerKind {
    /// Claude Code `settings.json` permissions, imported unchanged.
    ClaudeSettings,
    /// `~/.config/portcullis/config.toml`.
    User,
    /// `.portcullis.toml` of a trusted project.
    Project,
    /// `--config FILE`.
    Explicit,
    /// `/etc/portcullis/config.toml`: cannot be relaxed.
    Managed,
}

/// The scopes of `[workspace]`, as written (the paths crate resolves them).
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WorkspaceConfig {
    #[serde(default)]
    pub roots: Vec<String>,
    #[serde(default)]
    pub read_roots: Vec<String>,
    #[serde(default)]
    pub blocked: Vec<String>,
    #[serde(default)]
    pub blocked_write: Vec<String>,
}

/// What a hook does when the decision is ask (`[agents.<name>] on_ask`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum OnAsk {
    /// The agent's own prompt, where the agent has one.
    Agent,
    /// Deny with a permission request; the model is told it may retry after approval.
    Notify,
    /// Keep the hook waiting for a person's answer (up to `hold_timeout_secs`).
    Hold,
}

/// `[confine] mode`: when an allowed shell call runs confined by the kernel
/// (`portcullis run`), where the front door can rewrite the call.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ConfineMode {
    /// Never: calls run as the agent runs them.
    Off,
    /// A call that would ask only because some of its reads are known only at
    /// run time (`find … | xargs grep`, a loop over a glob) runs confined
    /// instead of asking.
    #[default]
    Dynamic,
    /// Every shell call the policy allows runs confined.
    Always,
}

/// `[confine]`.
#[derive(Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct ConfineToml {
    mode: Option<ConfineMode>,
    git_writes: Option<bool>,
}

/// Per-agent settings (`[agents.claude-code]` …).
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AgentSettings {
    pub on_ask: Option<OnAsk>,
    /// How long `hold` waits; keep it below the agent's own hook timeout.
    pub hold_timeout_secs: Option<u64>,
}

/// A `[[mcp.servers]]` entry: an MCP server run behind `portcullis mcp-bridge`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct McpServer {
    /// Its tools are `mcp__NAME__tool` to rules and grants.
    pub name: String,
    /// The stdio server's command and arguments.
    pub command: Vec<String>,
    /// A Streamable HTTP server's URL (instead of `command`): `http://` or
    /// `https://`.
    pub url: Option<String>,
    /// A PEM file of CA certificates trusted for an `https://` server, beside
    /// the system's roots (absolute or `~/…`).
    pub ca_file: Option<String>,
    /// Accepted for older configurations; changes nothing now (a pinned
    /// definition's `readOnlyHint` makes its path arguments reads for every
    /// server).
    pub trusted: bool,
    /// Withhold tools seen for the first time until a person approves them.
    pub refuse_unpinned: bool,
    /// Run the stdio server confined (`portcullis run`): it reads what a
    /// confined shell call reads and writes only in the workspace.
    pub confine: bool,
}

impl McpServer {
    /// `ca_file` with a leading `~/` made `home`'s (checked on load: absolute
    /// or `~/…`).
    pub fn ca_file_under(&self, home: &str) -> Option<String> {
        self.ca_file.as_deref().map(|f| match f.strip_prefix("~/") {
            Some(rest) => format!("{}/{rest}", home.trim_end_matches('/')),
            None => f.to_owned(),
        })
    }

    /// A server name must keep `mcp__NAME__tool` unambiguous: its tools are
    /// found by splitting at the first `__`, so the name holds no `__` and
    /// neither starts nor ends with `_` (server `a_`'s tool `t` would be
    /// spelt `mcp__a___t`, which is server `a`'s tool `_t`, and a rule for
    /// `a` would cover it).
    pub fn check_name(name: &str) -> Result<(), &'static str> {
        if name.is_empty() || name.len() > 64 {
            Err("a server name has 1 to 64 characters")
        } else if !name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        {
            Err("use letters, digits, `-` and `_` only")
        } else if name.contains(McpToolName::SEPARATOR) {
            Err("a server name holds no `__`: `mcp__SERVER__tool` is split at the first `__`")
        } else if name.starts_with('_') || name.ends_with('_') {
            Err(
                "a server name neither starts nor ends with `_`: `mcp__SERVER__tool` would run \
                 into `___` and read as another server's tool (`a_`'s `t` is `a`'s `_t`)",
            )
        } else {
            Ok(())
        }
    }
}

/// A `[[tools]]` entry: a capability manifest for a trusted tool.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ToolManifest {
    pub name: String,
    pub origin: Origin,
    pub manifest: Manifest,
}

/// One parsed configuration layer.
#[derive(Clone, Debug)]
pub struct Layer {
    pub kind: LayerKind,
    pub file: String,
    pub mode: Option<Mode>,
    pub unattended: Option<bool>,
    pub import_claude_settings: Option<bool>,
    /// Project roots whose `.portcullis.toml` is read (user and managed layers only).
    pub trusted_projects: Vec<String>,
    pub rules: Vec<Rule>,
    pub workspace: WorkspaceConfig,
    pub tools: Vec<ToolManifest>,
    pub agents: std::collections::BTreeMap<String, AgentSettings>,
    /// `[server] addr`: where `portcullis serve` listens.
    pub server_addr: Option<String>,
    /// `[[mcp.servers]]`.
    pub mcp_servers: Vec<McpServer>,
    /// `[secrets] env`: replaces the default secret variable shapes.
    pub secret_env: Option<Vec<String>>,
    /// `[secrets] extra_env`: shapes added to them.
    pub extra_secret_env: Vec<String>,
    /// `[confine] mode`.
    pub confine: Option<ConfineMode>,
    /// `[confine] git_writes`.
    pub confine_git_writes: Option<bool>,
    /// `[approvals] once_ttl_secs`.
    pub once_ttl_secs: Option<u64>,
    /// `[[server.users]]` (user, managed and explicit layers only).
    pub server_users: Vec<ServerUser>,
    /// `[store] url` (user, managed and explicit layers only).
    pub store_url: Option<String>,
    /// `[server] url`: the team server governing this machine's hooks (user,
    /// managed and explicit layers only).
    pub team_server: Option<String>,
}

/// `[secrets]`: which environment variables hold secrets, as name shapes
/// (`*` matches any run of characters, case ignored).
#[derive(Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct SecretsToml {
    env: Option<Vec<String>>,
    #[serde(default)]
    extra_env: Vec<String>,
}

/// The environment variables that hold secrets unless `[secrets] env` says
/// otherwise: reading one (`echo $NAME`, `printenv NAME`) is judged like
/// reading a secret file, and so is reading all of them (`env`, `printenv`,
/// `set`, `declare -p`).
pub const DEFAULT_SECRET_ENV: &[&str] = &[
    "*_API_KEY",
    "*_APIKEY",
    "*_KEY",
    "*_KEY_ID",
    "*_TOKEN",
    "TOKEN",
    "*_PAT",
    "*SECRET*",
    "*PASSWORD*",
    "*PASSWD*",
    "*_PASS",
    "*_PWD",
    "*_AUTH",
    "*DATABASE_URL",
    "*_DSN",
    "AWS_*",
    "ANTHROPIC_*",
    "OPENAI_*",
];

/// `[mcp]`.
#[derive(Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct McpToml {
    #[serde(default)]
    servers: Vec<McpServerToml>,
}

/// One `[[mcp.servers]]` table: the server, and rules naming its tools.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct McpServerToml {
    name: String,
    #[serde(default)]
    command: Vec<String>,
    #[serde(default)]
    url: Option<String>,
    #[serde(default)]
    ca_file: Option<String>,
    #[serde(default)]
    trusted: bool,
    #[serde(default)]
    refuse_unpinned: bool,
    #[serde(default)]
    confine: bool,
    #[serde(default)]
    allow: Vec<Spanned<String>>,
    #[serde(default)]
    ask: Vec<Spanned<String>>,
    #[serde(default)]
    deny: Vec<Spanned<String>>,
}

/// `[approvals]`: how a person's approvals behave.
#[derive(Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct ApprovalsToml {
    once_ttl_secs: Option<u64>,
}

/// How long an "allow once" waits for the retry it was made for, unless
/// `[approvals] once_ttl_secs` says otherwise (10 minutes).
pub const DEFAULT_ONCE_TTL_SECS: u64 = 600;

/// The bounds of `[approvals] once_ttl_secs`: at least the time an agent
/// takes to retry, at most a day (a once-grant is not a standing one).
pub const ONCE_TTL_BOUNDS: std::ops::RangeInclusive<u64> = 10..=86_400;

/// `[store]`: where `portcullis serve` keeps its state.
#[derive(Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct StoreToml {
    /// `sqlite` (the default) or `postgres://USER@HOST[:PORT]/DB`.
    url: Option<String>,
}

/// `[server]`: the approval server.
#[derive(Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct ServerToml {
    addr: Option<String>,
    /// The team server whose decisions this machine's hooks take.
    url: Option<String>,
    #[serde(default)]
    users: Vec<ServerUser>,
}

/// A person who may use the approval server with a login of their own
/// (`[[server.users]]`): `portcullis users token NAME` makes it.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ServerUser {
    pub name: String,
    pub role: Role,
}

/// What a user of the approval server may do.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// Resolves requests, revokes grants, approves tool definitions.
    Approver,
    /// Looks: pages, listings, the audit log; changes nothing.
    Viewer,
}

impl Role {
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Approver => "approver",
            Role::Viewer => "viewer",
        }
    }
}

impl ServerUser {
    /// A user name is 1 to 64 letters, digits, `.`, `_` or `-`: it appears
    /// in the audit log (`ui:NAME`) and the token file.
    pub fn check_name(name: &str) -> Result<(), &'static str> {
        if name.is_empty()
            || name.len() > 64
            || !name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
        {
            Err("a user name is 1 to 64 letters, digits, `.`, `_` or `-`")
        } else {
            Ok(())
        }
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FileToml {
    mode: Option<Spanned<String>>,
    unattended: Option<bool>,
    import_claude_settings: Option<bool>,
    #[serde(default)]
    trusted_projects: Vec<String>,
    #[serde(default)]
    permissions: PermissionsToml,
    #[serde(default)]
    workspace: WorkspaceConfig,
    #[serde(default)]
    tools: Vec<ToolToml>,
    #[serde(default)]
    agents: std::collections::BTreeMap<String, AgentSettings>,
    #[serde(default)]
    server: ServerToml,
    #[serde(default)]
    mcp: McpToml,
    #[serde(default)]
    secrets: SecretsToml,
    #[serde(default)]
    confine: ConfineToml,
    #[serde(default)]
    approvals: ApprovalsToml,
    #[serde(default)]
    store: StoreToml,
    /// Rules a person allowed from a permission request and saved ("always"):
    /// portcullis appends one `[[approved]]` table per rule, so the rest of the
    /// file — its comments included — is never rewritten.
    #[serde(default)]
    approved: Vec<ApprovedToml>,
}

/// `[[approved]]`: an allow rule a person saved from a permission request.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ApprovedToml {
    rule: Spanned<String>,
    /// Who saved it (`ui`, `cli:alice`).
    #[allow(dead_code)]
    by: Option<String>,
    /// The request it answered.
    #[allow(dead_code)]
    request: Option<i64>,
}

#[derive(Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct PermissionsToml {
    #[serde(default)]
    allow: Vec<Spanned<String>>,
    #[serde(default)]
    ask: Vec<Spanned<String>>,
    #[serde(default)]
    deny: Vec<Spanned<String>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ToolToml {
    name: String,
    #[serde(default)]
    origin: Origin,
    #[serde(default)]
    shell: bool,
    #[serde(default)]
    filesystem: crate::tool::FsAccess,
    #[serde(default)]
    network: bool,
    #[serde(default)]
    paths_in: Vec<String>,
    #[serde(default)]
    destructive: bool,
}

/// The line of byte `offset` (which may come from a parser's error span: no
/// need for it to be on a char boundary, or inside `text`).
fn line_of(text: &str, offset: usize) -> usize {
    text.bytes().take(offset).filter(|b| *b == b'\n').count() + 1
}

impl Layer {
    /// Parses a portcullis TOML file's text.
    pub fn from_toml(kind: LayerKind, file: &str, text: &str) -> Result<Layer, ConfigError> {
        let parsed: FileToml = toml::from_str(text).map_err(|e| ConfigError::Syntax {
            file: file.to_string(),
            line: e.span().map(|s| line_of(text, s.start)).unwrap_or(1),
            message: e.message().to_string(),
        })?;
        let mode = match &parsed.mode {
            Some(m) => {
                Some(
                    m.get_ref()
                        .parse::<Mode>()
                        .map_err(|message| ConfigError::Syntax {
                            file: file.to_string(),
                            line: line_of(text, m.span().start),
                            message,
                        })?,
                )
            }
            None => None,
        };
        let mut rules = Vec::new();
        for (list, entries) in [
            (RuleList::Deny, &parsed.permissions.deny),
            (RuleList::Ask, &parsed.permissions.ask),
            (RuleList::Allow, &parsed.permissions.allow),
        ] {
            for e in entries {
                let location = format!("{file}:{}", line_of(text, e.span().start));
                rules.push(Rule::parse(e.get_ref(), list, &location)?);
            }
        }
        for a in &parsed.approved {
            let location = format!("{file}:{} (approved)", line_of(text, a.rule.span().start));
            rules.push(Rule::parse(a.rule.get_ref(), RuleList::Allow, &location)?);
        }
        let server_users = parsed.server.users.clone();
        if !server_users.is_empty() && kind == LayerKind::Project {
            return Err(ConfigError::Invalid {
                file: file.into(),
                message: "[[server.users]] belongs in your own or the managed configuration: \
                          a project cannot name who approves"
                    .into(),
            });
        }
        for u in &server_users {
            if let Err(why) = ServerUser::check_name(&u.name) {
                return Err(ConfigError::Invalid {
                    file: file.into(),
                    message: format!("[[server.users]] name {:?}: {why}", u.name),
                });
            }
        }
        if parsed.store.url.is_some() && kind == LayerKind::Project {
            return Err(ConfigError::Invalid {
                file: file.into(),
                message: "[store] belongs in your own or the managed configuration: a project \
                          cannot choose where grants and the audit log are kept"
                    .into(),
            });
        }
        if let Some(url) = &parsed.server.url {
            if kind == LayerKind::Project {
                return Err(ConfigError::Invalid {
                    file: file.into(),
                    message: "[server] url belongs in your own or the managed configuration: a \
                              project cannot choose who decides its calls"
                        .into(),
                });
            }
            if !(url.starts_with("https://") || url.starts_with("http://")) {
                return Err(ConfigError::Invalid {
                    file: file.into(),
                    message: format!(
                        "[server] url {url:?} is not a team server's http:// or https:// URL"
                    ),
                });
            }
        }
        let once_ttl_secs = parsed.approvals.once_ttl_secs;
        if let Some(t) = once_ttl_secs
            && !ONCE_TTL_BOUNDS.contains(&t)
        {
            return Err(ConfigError::Invalid {
                file: file.into(),
                message: format!(
                    "[approvals] once_ttl_secs = {t}: give {} to {} seconds",
                    ONCE_TTL_BOUNDS.start(),
                    ONCE_TTL_BOUNDS.end()
                ),
            });
        }
        let mut mcp_servers = Vec::new();
        for m in parsed.mcp.servers {
            let name = &m.name;
            if let Err(why) = McpServer::check_name(name) {
                return Err(ConfigError::Invalid {
                    file: file.into(),
                    message: format!("[[mcp.servers]] name {name:?}: {why}"),
                });
            }
            if m.command.is_empty() == m.url.is_none() {
                return Err(ConfigError::Invalid {
                    file: file.into(),
                    message: format!(
                        "[[mcp.servers]] `{name}`: give exactly one of `command` and `url`"
                    ),
                });
            }
            if let Some(url) = &m.url
                && !(url.starts_with("http://") || url.starts_with("https://"))
            {
                return Err(ConfigError::Invalid {
                    file: file.into(),
                    message: format!(
                        "[[mcp.servers]] `{name}`: url {url:?} is neither http:// nor https://"
                    ),
                });
            }
            if let Some(ca) = &m.ca_file {
                let why = if !m.url.as_deref().is_some_and(|u| u.starts_with("https://")) {
                    Some("`ca_file` is for an https:// `url` only")
                } else if !(ca.starts_with('/') || ca.starts_with("~/")) {
                    Some("`ca_file` is an absolute path or starts with `~/`")
                } else {
                    None
                };
                if let Some(why) = why {
                    return Err(ConfigError::Invalid {
                        file: file.into(),
                        message: format!("[[mcp.servers]] `{name}`: {why}"),
                    });
                }
            }
            let prefix = McpToolName::server_prefix(name);
            for (list, entries) in [
                (RuleList::Deny, &m.deny),
                (RuleList::Ask, &m.ask),
                (RuleList::Allow, &m.allow),
            ] {
                for e in entries {
                    let location = format!("{file}:{}", line_of(text, e.span().start));
                    if !e.get_ref().starts_with(&prefix) {
                        return Err(ConfigError::Invalid {
                            file: location,
                            message: format!(
                                "rule {:?} of server `{name}` must name its tools: `{prefix}TOOL` or `{prefix}*`",
                                e.get_ref()
                            ),
                        });
                    }
                    rules.push(Rule::parse(e.get_ref(), list, &location)?);
                }
            }
            mcp_servers.push(McpServer {
                name: m.name,
                command: m.command,
                url: m.url,
                ca_file: m.ca_file,
                trusted: m.trusted,
                refuse_unpinned: m.refuse_unpinned,
                confine: m.confine,
            });
        }
        for shape in parsed
            .secrets
            .env
            .iter()
            .flatten()
            .chain(&parsed.secrets.extra_env)
        {
            if let Err(why) = check_env_shape(shape) {
                return Err(ConfigError::Invalid {
                    file: file.into(),
                    message: format!("[secrets] shape {shape:?}: {why}"),
                });
            }
        }
        let tools = parsed
            .tools
            .into_iter()
            .map(|t| ToolManifest {
                name: t.name,
                origin: t.origin,
                manifest: Manifest {
                    shell: t.shell,
                    filesystem: t.filesystem,
                    network: t.network,
                    paths_in: t.paths_in,
                    destructive: t.destructive,
                },
            })
            .collect();
        Ok(Layer {
            kind,
            file: file.to_string(),
            mode,
            unattended: parsed.unattended,
            import_claude_settings: parsed.import_claude_settings,
            trusted_projects: parsed.trusted_projects,
            rules,
            workspace: parsed.workspace,
            tools,
            agents: parsed.agents,
            server_addr: parsed.server.addr,
            mcp_servers,
            secret_env: parsed.secrets.env,
            extra_secret_env: parsed.secrets.extra_env,
            confine: parsed.confine.mode,
            confine_git_writes: parsed.confine.git_writes,
            once_ttl_secs,
            server_users,
            store_url: parsed.store.url,
            team_server: parsed.server.url,
        })
    }

    /// Parses a Claude Code `settings.json`: its `permissions.{allow,ask,deny}`
    /// become a layer, unchanged. Other keys are ignored (they are Claude's).
    pub fn from_claude_settings(file: &str, text: &str) -> Result<Layer, ConfigError> {
        let v: serde_json::Value = serde_json::from_str(text).map_err(|e| ConfigError::Syntax {
            file: file.to_string(),
            line: e.line(),
            message: e.to_string(),
        })?;
        let mut rules = Vec::new();
        let perms = v.get("permissions");
        for (list, key) in [
            (RuleList::Deny, "deny"),
            (RuleList::Ask, "ask"),
            (RuleList::Allow, "allow"),
        ] {
            let Some(entries) = perms.and_then(|p| p.get(key)) else {
                continue;
            };
            let Some(entries) = entries.as_array() else {
                return Err(ConfigError::Invalid {
                    file: file.into(),
                    message: format!("permissions.{key} is not a list"),
                });
            };
            for e in entries {
                let Some(rule) = e.as_str() else {
                    return Err(ConfigError::Invalid {
                        file: file.into(),
                        message: format!("permissions.{key} holds a non-string: {e}"),
                    });
                };
                let line = text
                    .find(&serde_json::to_string(rule).unwrap_or_default())
                    .map(|o| line_of(text, o))
                    .unwrap_or(1);
                rules.push(Rule::parse(rule, list, &format!("{file}:{line}"))?);
            }
        }
        Ok(Layer {
            kind: LayerKind::ClaudeSettings,
            file: file.to_string(),
            mode: None,
            unattended: None,
            import_claude_settings: None,
            trusted_projects: Vec::new(),
            rules,
            workspace: WorkspaceConfig::default(),
            tools: Vec::new(),
            agents: Default::default(),
            server_addr: None,
            mcp_servers: Vec::new(),
            secret_env: None,
            extra_secret_env: Vec::new(),
            confine: None,
            confine_git_writes: None,
            once_ttl_secs: None,
            server_users: Vec::new(),
            store_url: None,
            team_server: None,
        })
    }
}

/// The merged configuration the engine judges with.
#[derive(Clone, Debug)]
pub struct Policy {
    pub mode: Mode,
    /// No person can answer: every ask becomes deny.
    pub unattended: bool,
    pub rules: Vec<Rule>,
    pub workspace: WorkspaceConfig,
    pub tools: Vec<ToolManifest>,
    /// Which of the agent's tools are shells, file tools … (Claude Code's by default).
    pub table: ToolTable,
    /// Per-agent settings, merged: a higher layer's value wins key by key.
    pub agents: std::collections::BTreeMap<String, AgentSettings>,
    /// Where `portcullis serve` listens (`[server] addr`). Tool calls that
    /// reach this port are denied: the agent must not approve itself.
    pub server_addr: String,
    /// `[[mcp.servers]]`, by name; a higher layer's entry replaces a lower one's.
    pub mcp_servers: Vec<McpServer>,
    /// Shapes of the environment variables that hold secrets (`*_TOKEN` …);
    /// [`DEFAULT_SECRET_ENV`] unless configured.
    pub secret_env: Vec<String>,
    /// When allowed shell calls run confined (`[confine] mode`).
    pub confine: ConfineMode,
    /// Inside a confinement, git's own data in a repository (objects, refs,
    /// the index) is writable, so an allowed `git commit` works
    /// (`[confine] git_writes`, default off: all of `.git` is protected).
    pub confine_git_writes: bool,
    /// The projects whose `.portcullis.toml` is loaded (`trusted_projects`
    /// of the user's and the managed configuration), as written.
    pub trusted_projects: Vec<String>,
    /// How long an "allow once" waits for its retry, in seconds (`[approvals]
    /// once_ttl_secs`, the shortest of the layers; default 600).
    pub once_ttl_secs: u64,
    /// The approval server's users (`[[server.users]]`; a higher layer's
    /// entry for a name replaces a lower one's).
    pub server_users: Vec<ServerUser>,
    /// Where `portcullis serve` keeps its state (`[store] url`; the highest
    /// layer that says wins; `None`: SQLite in the data directory).
    pub store_url: Option<String>,
    /// The team server that judges this machine's hook calls (`[server] url`,
    /// as `PORTCULLIS_SERVER`; the highest layer that says wins).
    pub team_server: Option<String>,
}

/// The approval server's default address.
pub const DEFAULT_SERVER_ADDR: &str = "127.0.0.1:7878";

/// Whether a `trusted_projects` list names the project at `root`: each
/// entry a path, a leading `~` standing for `home`.
pub fn trusts_project(trusted: &[String], home: &str, root: &std::path::Path) -> bool {
    trusted.iter().any(|p| {
        let p = p.replacen('~', home, usize::from(p.starts_with('~')));
        std::path::Path::new(&p) == root
    })
}

impl Policy {
    /// The approval server's port, from [`Policy::server_addr`].
    pub fn server_port(&self) -> Option<u16> {
        self.server_addr.rsplit_once(':')?.1.parse().ok()
    }
}

impl Default for Policy {
    fn default() -> Self {
        Policy {
            mode: Mode::Ask,
            unattended: false,
            rules: Vec::new(),
            workspace: WorkspaceConfig::default(),
            tools: Vec::new(),
            table: claude_code_table(),
            agents: Default::default(),
            server_addr: DEFAULT_SERVER_ADDR.to_string(),
            confine: ConfineMode::default(),
            confine_git_writes: false,
            mcp_servers: Vec::new(),
            secret_env: DEFAULT_SECRET_ENV.iter().map(|s| s.to_string()).collect(),
            trusted_projects: Vec::new(),
            once_ttl_secs: DEFAULT_ONCE_TTL_SECS,
            server_users: Vec::new(),
            store_url: None,
            team_server: None,
        }
    }
}

impl Policy {
    /// Merges layers (in any order) into one policy.
    pub fn from_layers(mut layers: Vec<Layer>) -> Policy {
        layers.sort_by_key(|l| l.kind);
        let mut p = Policy {
            trusted_projects: layers
                .iter()
                .filter(|l| matches!(l.kind, LayerKind::User | LayerKind::Managed))
                .flat_map(|l| l.trusted_projects.iter().cloned())
                .collect(),
            ..Policy::default()
        };
        let mut managed_mode = None;
        let mut seen_once_ttl = false;
        for l in &layers {
            if let Some(m) = l.mode {
                p.mode = m;
                if l.kind == LayerKind::Managed {
                    managed_mode = Some(m);
                }
            }
            if let Some(u) = l.unattended {
                p.unattended = u || (p.unattended && l.kind != LayerKind::Managed);
            }
            p.rules.extend(l.rules.iter().cloned());
            // The files the policy came from are never written by an agent,
            // wherever they live (`--config ./policy.toml` in the project).
            if l.file.starts_with('/') {
                p.workspace.blocked_write.push(l.file.clone());
            }
            let w = &l.workspace;
            p.workspace.roots.extend(w.roots.iter().cloned());
            p.workspace.read_roots.extend(w.read_roots.iter().cloned());
            p.workspace.blocked.extend(w.blocked.iter().cloned());
            p.workspace
                .blocked_write
                .extend(w.blocked_write.iter().cloned());
            p.tools.extend(l.tools.iter().cloned());
            for (name, a) in &l.agents {
                let e = p.agents.entry(name.clone()).or_default();
                e.on_ask = a.on_ask.or(e.on_ask);
                e.hold_timeout_secs = a.hold_timeout_secs.or(e.hold_timeout_secs);
            }
            if let Some(addr) = &l.server_addr {
                p.server_addr = addr.clone();
            }
            if let Some(url) = &l.store_url {
                p.store_url = Some(url.clone());
            }
            if let Some(url) = &l.team_server {
                p.team_server = Some(url.clone());
            }
            if let Some(c) = l.confine {
                p.confine = c;
            }
            if let Some(g) = l.confine_git_writes {
                p.confine_git_writes = g;
            }
            // The shortest wins: no layer lengthens what another shortened.
            if let Some(t) = l.once_ttl_secs {
                p.once_ttl_secs = if seen_once_ttl {
                    p.once_ttl_secs.min(t)
                } else {
                    t
                };
                seen_once_ttl = true;
            }
            for m in &l.mcp_servers {
                p.mcp_servers.retain(|x| x.name != m.name);
                p.mcp_servers.push(m.clone());
            }
            for u in &l.server_users {
                p.server_users.retain(|x| x.name != u.name);
                p.server_users.push(u.clone());
            }
            // The highest layer's list replaces the defaults; extra shapes add up.
            if let Some(list) = &l.secret_env {
                p.secret_env = list.clone();
            }
        }
        for l in &layers {
            let managed = l.kind == LayerKind::Managed;
            let kept = l
                .extra_secret_env
                .iter()
                .chain(l.secret_env.iter().flatten().filter(|_| managed));
            // What the managed layer calls a secret stays one whatever a lower
            // layer's list says.
            for shape in kept {
                if !p.secret_env.contains(shape) {
                    p.secret_env.push(shape.clone());
                }
            }
        }
        if let Some(m) = managed_mode {
            p.mode = m;
        }
        p
    }

    /// The first secret shape (`[secrets] env`) some variable read by `name`
    /// could match: `name` is a variable's name, `PREFIX*` (every name with
    /// that prefix) or `*` (all of them).
    pub fn secret_env_shape(&self, name: &str) -> Option<&str> {
        self.secret_env
            .iter()
            .find(|shape| globs_overlap(shape.as_bytes(), name.as_bytes()))
            .map(String::as_str)
    }

    /// Whether any layer asks for Claude Code settings to be imported.
    pub fn wants_claude_settings(layers: &[Layer]) -> bool {
        layers
            .iter()
            .filter_map(|l| l.import_claude_settings)
            .next_back()
            .unwrap_or(false)
    }

    /// The manifest configured for a tool, if any (matched by name and origin).
    pub fn manifest_for(&self, name: &str, origin: Origin) -> Option<&Manifest> {
        self.tools
            .iter()
            .find(|t| t.name == name && t.origin == origin)
            .map(|t| &t.manifest)
    }
}

/// A secret shape: letters, digits, `_` and `*`, not empty.
fn check_env_shape(shape: &str) -> Result<(), &'static str> {
    if !shape.is_empty()
        && shape
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'*')
    {
        Ok(())
    } else {
        Err("use letters, digits, `_` and `*` (any run of characters)")
    }
}

/// Whether some name matches both patterns, where `*` matches any run of
/// characters and letters match regardless of case.
fn globs_overlap(a: &[u8], b: &[u8]) -> bool {
    // memo[i][j]: the suffixes a[i..] and b[j..] have a common match.
    let mut memo = vec![vec![None; b.len() + 1]; a.len() + 1];
    fn go(a: &[u8], b: &[u8], i: usize, j: usize, memo: &mut Vec<Vec<Option<bool>>>) -> bool {
        if let Some(&Some(v)) = memo.get(i).and_then(|row| row.get(j)) {
            return v;
        }
        let v = match (a.get(i), b.get(j)) {
            (None, None) => true,
            (Some(b'*'), _) => {
                go(a, b, i + 1, j, memo) || (j < b.len() && go(a, b, i, j + 1, memo))
            }
            (_, Some(b'*')) => {
                go(a, b, i, j + 1, memo) || (i < a.len() && go(a, b, i + 1, j, memo))
            }
            (Some(x), Some(y)) => x.eq_ignore_ascii_case(y) && go(a, b, i + 1, j + 1, memo),
            _ => false,
        };
        // i <= a.len() and j <= b.len(), so the cell exists; a missing one
        // only goes unremembered.
        if let Some(cell) = memo.get_mut(i).and_then(|row| row.get_mut(j)) {
            *cell = Some(v);
        }
        v
    }
    go(a, b, 0, 0, &mut memo)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_of_takes_any_offset() {
        let text = "a\né\nb";
        assert_eq!(line_of(text, 0), 1);
        assert_eq!(line_of(text, 2), 2);
        // Inside `é`, and past the end: no panic.
        assert_eq!(line_of(text, 3), 2);
        assert_eq!(line_of(text, 99), 3);
    }

    #[test]
    fn secret_shapes_match_names_prefixes_and_everything() {
        let p = Policy::default();
        for secret in [
            "OPENAI_API_KEY",
            "openai_api_key",
            "GITHUB_TOKEN",
            "AWS_SECRET_ACCESS_KEY",
            "AWS_REGION",
            "ANTHROPIC_BASE_URL",
            "DB_PASSWORD",
            "PGPASSWORD",
            "MYSQL_PWD",
            "CLIENT_SECRET",
            "SECRET_KEY_BASE",
            "DATABASE_URL",
            "AWS*",
            "OPENAI*",
            "GH*",
            "*",
        ] {
            assert!(p.secret_env_shape(secret).is_some(), "{secret}");
        }
        for plain in [
            "HOME",
            "PATH",
            "PWD",
            "OLDPWD",
            "USER",
            "SHELL",
            "TERM",
            "LANG",
            "EDITOR",
            "MAX_TOKENS",
            "TOKENIZERS_PARALLELISM",
            "KEY",
            "CARGO_HOME",
            "x",
        ] {
            assert_eq!(p.secret_env_shape(plain), None, "{plain}");
        }
        assert!(globs_overlap(b"*_TOKEN", b"GH*"));
        assert!(globs_overlap(b"A*B", b"*C*"));
        assert!(!globs_overlap(b"A*B", b"C*"));
        assert!(globs_overlap(b"**", b""));
        // A prefix could name a secret: `${!HO*}` may list `HO_API_KEY`.
        assert!(p.secret_env_shape("HO*").is_some());
    }

    #[test]
    fn secret_shapes_are_configured_and_the_managed_layer_keeps_its_own() {
        let user = Layer::from_toml(
            LayerKind::User,
            "u.toml",
            "[secrets]\nenv = [\"MY_*\"]\nextra_env = [\"CORP_*\"]\n",
        )
        .unwrap();
        let p = Policy::from_layers(vec![user.clone()]);
        assert_eq!(p.secret_env, ["MY_*", "CORP_*"]);
        assert_eq!(p.secret_env_shape("GITHUB_TOKEN"), None);
        let managed = Layer::from_toml(
            LayerKind::Managed,
            "m.toml",
            "[secrets]\nenv = [\"*_TOKEN\"]\n",
        )
        .unwrap();
        let project =
            Layer::from_toml(LayerKind::Project, "p.toml", "[secrets]\nenv = []\n").unwrap();
        let p = Policy::from_layers(vec![project, managed, user]);
        assert!(p.secret_env_shape("GITHUB_TOKEN").is_some());
        assert!(p.secret_env_shape("CORP_X").is_some());
        let err = Layer::from_toml(LayerKind::User, "u.toml", "[secrets]\nenv = [\"A-B\"]\n")
            .unwrap_err()
            .to_string();
        assert!(err.contains("[secrets]"), "{err}");
    }

    #[test]
    fn the_store_is_chosen_by_people_not_projects() {
        let at = |url: &str| format!("[store]\nurl = \"{url}\"\n");
        let user = Layer::from_toml(LayerKind::User, "u.toml", &at("postgres://u@h/a")).unwrap();
        assert_eq!(user.store_url.as_deref(), Some("postgres://u@h/a"));
        let managed =
            Layer::from_toml(LayerKind::Managed, "m.toml", &at("postgres://u@team/db")).unwrap();
        let p = Policy::from_layers(vec![managed, user.clone()]);
        assert_eq!(p.store_url.as_deref(), Some("postgres://u@team/db"));
        assert_eq!(
            Policy::from_layers(vec![user]).store_url.as_deref(),
            Some("postgres://u@h/a")
        );
        assert_eq!(Policy::default().store_url, None);
        let e = Layer::from_toml(LayerKind::Project, "p.toml", &at("postgres://evil@h/x"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("a project cannot choose where grants"), "{e}");
        let e = Layer::from_toml(LayerKind::User, "u.toml", "[store]\npath = \"x\"\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("path"), "{e}");
    }

    #[test]
    fn the_team_server_is_chosen_by_people_not_projects() {
        let at = |url: &str| format!("[server]\nurl = \"{url}\"\n");
        let user = Layer::from_toml(LayerKind::User, "u.toml", &at("https://a.example")).unwrap();
        let managed =
            Layer::from_toml(LayerKind::Managed, "m.toml", &at("https://team.example")).unwrap();
        assert_eq!(
            Policy::from_layers(vec![managed, user.clone()])
                .team_server
                .as_deref(),
            Some("https://team.example")
        );
        assert_eq!(
            Policy::from_layers(vec![user]).team_server.as_deref(),
            Some("https://a.example")
        );
        assert_eq!(Policy::default().team_server, None);
        let e = Layer::from_toml(LayerKind::Project, "p.toml", &at("https://evil.example"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("a project cannot choose who decides"), "{e}");
        let e = Layer::from_toml(LayerKind::User, "u.toml", &at("team.example"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("not a team server's"), "{e}");
    }

    #[test]
    fn server_users_come_from_people_not_projects() {
        let text = "[[server.users]]\nname = \"alice\"\nrole = \"approver\"\n[[server.users]]\nname = \"bob\"\nrole = \"viewer\"\n";
        let user = Layer::from_toml(LayerKind::User, "u.toml", text).unwrap();
        assert_eq!(user.server_users.len(), 2);
        // The managed configuration can demote alice.
        let managed = Layer::from_toml(
            LayerKind::Managed,
            "m.toml",
            "[[server.users]]\nname = \"alice\"\nrole = \"viewer\"\n",
        )
        .unwrap();
        let p = Policy::from_layers(vec![managed, user]);
        let role = |n: &str| p.server_users.iter().find(|u| u.name == n).map(|u| u.role);
        assert_eq!(
            (role("alice"), role("bob")),
            (Some(Role::Viewer), Some(Role::Viewer))
        );
        let e = Layer::from_toml(LayerKind::Project, "p.toml", text)
            .unwrap_err()
            .to_string();
        assert!(e.contains("a project cannot name who approves"), "{e}");
        for (bad, why) in [
            (
                "[[server.users]]\nname = \"a b\"\nrole = \"viewer\"\n",
                "user name",
            ),
            (
                "[[server.users]]\nname = \"a\"\nrole = \"owner\"\n",
                "owner",
            ),
            ("[[server.users]]\nname = \"a\"\n", "role"),
        ] {
            let e = Layer::from_toml(LayerKind::User, "u.toml", bad)
                .unwrap_err()
                .to_string();
            assert!(e.contains(why), "{bad}: {e}");
        }
    }

    #[test]
    fn the_once_ttl_is_bounded_and_the_shortest_layer_wins() {
        let layer = |kind, text: &str| Layer::from_toml(kind, "c.toml", text);
        assert_eq!(Policy::default().once_ttl_secs, DEFAULT_ONCE_TTL_SECS);
        let user = layer(LayerKind::User, "[approvals]\nonce_ttl_secs = 1800\n").unwrap();
        assert_eq!(user.once_ttl_secs, Some(1800));
        assert_eq!(Policy::from_layers(vec![user]).once_ttl_secs, 1800);
        let user = layer(LayerKind::User, "[approvals]\nonce_ttl_secs = 1800\n").unwrap();
        let managed = layer(LayerKind::Managed, "[approvals]\nonce_ttl_secs = 60\n").unwrap();
        let project = layer(LayerKind::Project, "[approvals]\nonce_ttl_secs = 3600\n").unwrap();
        assert_eq!(
            Policy::from_layers(vec![project, managed, user]).once_ttl_secs,
            60
        );
        for bad in ["5", "86401", "0"] {
            let err = layer(
                LayerKind::User,
                &format!("[approvals]\nonce_ttl_secs = {bad}\n"),
            )
            .unwrap_err()
            .to_string();
            assert!(
                err.contains("once_ttl_secs") && err.contains("10 to 86400"),
                "{err}"
            );
        }
        let err = layer(LayerKind::User, "[approvals]\nonce_ttl = 60\n")
            .unwrap_err()
            .to_string();
        assert!(err.contains("once_ttl"), "{err}");
    }

    #[test]
    fn mcp_servers_carry_their_rules_and_are_checked() {
        let text = "[[mcp.servers]]\nname = \"fs\"\ncommand = [\"npx\", \"server-filesystem\", \"/w\"]\ntrusted = true\nallow = [\"mcp__fs__read_text_file\"]\ndeny = [\"mcp__fs__write_file\"]\n";
        let layer = Layer::from_toml(LayerKind::User, "u.toml", text).unwrap();
        assert_eq!(layer.mcp_servers.len(), 1);
        assert!(layer.mcp_servers[0].trusted);
        assert_eq!(
            layer.mcp_servers[0].command,
            ["npx", "server-filesystem", "/w"]
        );
        assert_eq!(layer.rules.len(), 2);
        assert!(layer.rules.iter().any(|r| r.list == RuleList::Deny));

        for (bad, why) in [
            (
                "[[mcp.servers]]\nname = \"fs\"\ncommand = [\"x\"]\nallow = [\"Bash(*)\"]\n",
                "must name its tools",
            ),
            (
                "[[mcp.servers]]\nname = \"a__b\"\ncommand = [\"x\"]\n",
                "\"a__b\": a server name holds no `__`",
            ),
            (
                "[[mcp.servers]]\nname = \"a_\"\ncommand = [\"x\"]\n",
                "\"a_\": a server name neither starts nor ends with `_`",
            ),
            (
                "[[mcp.servers]]\nname = \"_a\"\ncommand = [\"x\"]\n",
                "\"_a\": a server name neither starts nor ends with `_`",
            ),
            (
                "[[mcp.servers]]\nname = \"a.b\"\ncommand = [\"x\"]\n",
                "\"a.b\": use letters",
            ),
            (
                "[[mcp.servers]]\nname = \"\"\ncommand = [\"x\"]\n",
                "1 to 64",
            ),
            ("[[mcp.servers]]\nname = \"fs\"\n", "exactly one of"),
            (
                "[[mcp.servers]]\nname = \"fs\"\ncommand = [\"x\"]\nurl = \"http://h\"\n",
                "exactly one of",
            ),
            (
                "[[mcp.servers]]\nname = \"fs\"\ncommand = [\"x\"]\nsurprise = 1\n",
                "surprise",
            ),
            (
                "[[mcp.servers]]\nname = \"fs\"\nurl = \"ftp://h/mcp\"\n",
                "neither http:// nor https://",
            ),
            (
                "[[mcp.servers]]\nname = \"fs\"\nurl = \"http://h/mcp\"\nca_file = \"/ca.pem\"\n",
                "for an https:// `url` only",
            ),
            (
                "[[mcp.servers]]\nname = \"fs\"\ncommand = [\"x\"]\nca_file = \"/ca.pem\"\n",
                "for an https:// `url` only",
            ),
            (
                "[[mcp.servers]]\nname = \"fs\"\nurl = \"https://h/mcp\"\nca_file = \"ca.pem\"\n",
                "absolute path or starts with `~/`",
            ),
        ] {
            let err = Layer::from_toml(LayerKind::User, "u.toml", bad)
                .unwrap_err()
                .to_string();
            assert!(err.contains(why), "{bad}: {err}");
        }
        let https = Layer::from_toml(
            LayerKind::User,
            "u.toml",
            "[[mcp.servers]]\nname = \"web\"\nurl = \"https://h/mcp\"\nca_file = \"~/ca/team.pem\"\n",
        )
        .unwrap();
        assert_eq!(
            https.mcp_servers[0].ca_file_under("/home/u/").as_deref(),
            Some("/home/u/ca/team.pem")
        );
        // A higher layer's entry for the same name replaces the lower one.
        let user = Layer::from_toml(LayerKind::User, "u.toml", text).unwrap();
        let managed = Layer::from_toml(
            LayerKind::Managed,
            "m.toml",
            "[[mcp.servers]]\nname = \"fs\"\ncommand = [\"other\"]\n",
        )
        .unwrap();
        let p = Policy::from_layers(vec![managed, user]);
        assert_eq!(p.mcp_servers.len(), 1);
        assert_eq!(p.mcp_servers[0].command, ["other"]);
        assert!(!p.mcp_servers[0].trusted);
    }

    const EXAMPLE: &str = r#"
mode = "ask"                      # ask | approve-for-me | read-only | full-access
[permissions]
allow = ["Bash(git *)", "Read(./**)", "Edit(./**)"]
ask   = []
deny  = ["Bash(rm -rf *)"]
[workspace]
roots = []                        # extra roots; the call's project root is always one
read_roots = []
blocked = []
blocked_write = []
[[tools]]                         # capability manifests for trusted tools
name = "workflow"
origin = "builtin"
shell = false
filesystem = "none"
"#;

    #[test]
    fn the_documented_example_loads() {
        let l = Layer::from_toml(LayerKind::User, "config.toml", EXAMPLE).unwrap();
        assert_eq!(l.mode, Some(Mode::Ask));
        assert_eq!(l.rules.len(), 4);
        assert_eq!(l.rules[0].list, RuleList::Deny);
        assert_eq!(l.rules[0].source, "config.toml:6");
        assert_eq!(l.tools[0].origin, Origin::Builtin);
        assert!(!l.tools[0].manifest.shell);
    }

    #[test]
    fn errors_name_the_file_and_line() {
        let e = Layer::from_toml(
            LayerKind::User,
            "c.toml",
            "mode = \"ask\"\n[permissions]\nallow = [\"Bash(git *\"]\n",
        )
        .unwrap_err();
        assert!(
            e.to_string().starts_with("c.toml:3: rule `Bash(git *`"),
            "{e}"
        );
        let e = Layer::from_toml(LayerKind::User, "c.toml", "mode = \"yolo\"\n").unwrap_err();
        assert!(
            e.to_string().contains("c.toml:1") && e.to_string().contains("unknown mode"),
            "{e}"
        );
        let e = Layer::from_toml(LayerKind::User, "c.toml", "\nmodes = \"ask\"\n").unwrap_err();
        assert!(e.to_string().starts_with("c.toml:2"), "{e}");
    }

    #[test]
    fn managed_mode_wins() {
        let managed = Layer::from_toml(LayerKind::Managed, "m", "mode = \"ask\"").unwrap();
        let user = Layer::from_toml(LayerKind::Explicit, "u", "mode = \"full-access\"").unwrap();
        assert_eq!(Policy::from_layers(vec![user, managed]).mode, Mode::Ask);
    }

    #[test]
    fn claude_settings_import() {
        let text = r#"{"permissions": {"allow": ["Bash(npm run test:*)"], "deny": ["Read(./.env)"]}, "model": "x"}"#;
        let l = Layer::from_claude_settings(".claude/settings.json", text).unwrap();
        assert_eq!(l.rules.len(), 2);
        assert!(Layer::from_claude_settings("s.json", "{").is_err());
    }

    #[test]
    fn trusted_projects_name_a_root_with_a_leading_tilde_for_home() {
        let list = vec!["~/proj".to_string(), "/srv/app".to_string()];
        let root = |p: &str| std::path::PathBuf::from(p);
        assert!(trusts_project(&list, "/home/u", &root("/home/u/proj")));
        assert!(trusts_project(&list, "/home/u", &root("/srv/app")));
        assert!(!trusts_project(&list, "/home/u", &root("/home/u/proj/sub")));
        assert!(!trusts_project(&list, "/home/v", &root("/home/u/proj")));
        // A `~` that does not lead is a name like any other.
        assert!(!trusts_project(
            &["/a/~/b".into()],
            "/home/u",
            &root("/a/home/u/b")
        ));
    }
}
