//! `portcullis install <agent>` and `portcullis doctor`: putting the portcullis
//! hook into each agent's own configuration, and checking that what is there
//! works.
//!
//! `install` writes or merges one file per agent and scope (see [`target`]):
//! every other key, hook and matcher group in it is kept, in its order; a
//! second run changes nothing; the file as it was before portcullis first
//! changed it is kept beside it (`<file>.portcullis-backup`); `--dry-run`
//! prints the diff and writes nothing. A file that is not JSON is never
//! overwritten. `doctor` finds the hooks that name portcullis, checks that
//! the program exists and is executable, runs it on a harmless call in the
//! agent's own payload format and checks that the reply is one the agent reads.
//! These calls carry no session id, so the check leaves no trace in the store.

use std::fmt::Write as _;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use portcullis_adapters::Agent;
use serde::de::{self, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::ser::{SerializeMap, SerializeSeq, Serializer};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// The pi extension, with `const PORTCULLIS_BIN = "portcullis";` as the line
/// `install` rewrites to the binary's absolute path.
const PI_EXTENSION: &str = include_str!("../../../integrations/pi/portcullis.ts");
const PI_BIN_LINE: &str = "const PORTCULLIS_BIN = ";

/// Cursor's events portcullis gates.
const CURSOR_EVENTS: [&str; 3] = [
    "beforeShellExecution",
    "beforeMCPExecution",
    "beforeReadFile",
];

#[derive(clap::Args)]
pub struct InstallArgs {
    /// claude-code, codex, cursor, gemini or pi.
    agent: Agent,
    /// Install for the project in DIR (the default).
    #[arg(long, conflicts_with = "user")]
    project: bool,
    /// Install for the user (under $HOME).
    #[arg(long)]
    user: bool,
    /// Print the change as a diff and write nothing.
    #[arg(long)]
    dry_run: bool,
    /// The project directory (default: the current directory).
    #[arg(long, value_name = "DIR", conflicts_with = "user")]
    dir: Option<PathBuf>,
}

#[derive(clap::Args)]
pub struct DoctorArgs {
    /// The project directory to check (default: the current directory).
    #[arg(long, value_name = "DIR")]
    dir: Option<PathBuf>,
    /// Print the report as JSON.
    #[arg(long)]
    json: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Scope {
    Project,
    User,
}

impl Scope {
    fn as_str(self) -> &'static str {
        match self {
            Scope::Project => "project",
            Scope::User => "user",
        }
    }
}

/// The file an agent reads its hooks from, for one scope.
fn target(agent: Agent, scope: Scope, project: &Path, home: &Path) -> PathBuf {
    let rel = match (agent, scope) {
        (Agent::ClaudeCode, _) => ".claude/settings.json",
        (Agent::Codex, _) => ".codex/hooks.json",
        (Agent::Cursor, _) => ".cursor/hooks.json",
        (Agent::Gemini, _) => ".gemini/settings.json",
        (Agent::Pi, Scope::Project) => ".pi/extensions/portcullis.ts",
        (Agent::Pi, Scope::User) => ".pi/agent/extensions/portcullis.ts",
    };
    match scope {
        Scope::Project => project.join(rel),
        Scope::User => home.join(rel),
    }
}

fn home_dir() -> Result<PathBuf> {
    match std::env::var_os("HOME") {
        Some(h) if !h.is_empty() => Ok(PathBuf::from(h)),
        _ => bail!("$HOME is not set: cannot find the user's configuration"),
    }
}

fn project_dir(dir: Option<&Path>) -> Result<PathBuf> {
    let dir = match dir {
        Some(d) => d.to_path_buf(),
        None => std::env::current_dir().context("finding the current directory")?,
    };
    std::fs::canonicalize(&dir).with_context(|| format!("{}: no such directory", dir.display()))
}

/// The running binary, as an absolute canonical path.
fn own_binary() -> Result<PathBuf> {
    let exe = std::env::current_exe().context("finding the portcullis binary")?;
    std::fs::canonicalize(&exe).with_context(|| format!("resolving {}", exe.display()))
}

/// The words of a hook command's first simple command, quotes removed (a
/// word bash would expand stays as written); `None` when it has no command
/// or does not parse.
fn shell_words(s: &str) -> Option<Vec<String>> {
    let analysis = portcullis_shell::analyze(s);
    if analysis
        .opaque
        .iter()
        .any(|o| o.reason == portcullis_shell::OpaqueReason::ParseError)
    {
        return None;
    }
    analysis.commands.into_iter().next().map(|c| c.words)
}

/// The hook binary installed beside `portcullis`: `portcullis hook` without
/// the rest of the command line, so each call loads less.
const HOOK_BINARY: &str = "portcullis-hook";

/// The hook command `install` writes for an agent: `portcullis-hook AGENT`
/// beside `bin`, or `bin hook AGENT` where there is no such binary (a
/// `portcullis` copied alone).
fn hook_command(bin: &Path, agent: Agent) -> String {
    let front = bin.with_file_name(HOOK_BINARY);
    let (program, hook) = if is_executable(&front) {
        (front.as_path(), "")
    } else {
        (bin, " hook")
    };
    format!(
        "{}{hook} {}",
        portcullis_shell::quote(&program.to_string_lossy()),
        agent.as_str()
    )
}

/// Whether a hook command runs `portcullis-hook <agent>` or `portcullis hook
/// <agent>` (any path, any options after).
fn is_portcullis_hook(command: &str, agent: Agent) -> bool {
    let Some(words) = shell_words(command) else {
        return false;
    };
    let program = words.first().map(|w| w.rsplit('/').next().unwrap_or(w));
    let rest = match program {
        Some(HOOK_BINARY) => words.get(1),
        Some("portcullis") if words.get(1).map(String::as_str) == Some("hook") => words.get(2),
        _ => None,
    };
    rest.map(String::as_str) == Some(agent.as_str())
}

// ----- JSON that keeps its key order -----------------------------------------------

/// A JSON value whose objects keep their keys in the order written, so a
/// merged settings file differs from the original only where portcullis
/// changed it.
#[derive(Clone, Debug, PartialEq)]
enum Json {
    Null,
    Bool(bool),
    Num(serde_json::Number),
    Str(String),
    Arr(Vec<Json>),
    Obj(Vec<(String, Json)>),
}

impl Json {
    fn get(&self, key: &str) -> Option<&Json> {
        match self {
            Json::Obj(m) => m.iter().rev().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    fn get_mut(&mut self, key: &str) -> Option<&mut Json> {
        match self {
            Json::Obj(m) => m.iter_mut().rev().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    fn as_str(&self) -> Option<&str> {
        match self {
            Json::Str(s) => Some(s),
            _ => None,
        }
    }

    /// The value under `key`, created as `default` when absent; an error naming
    /// `what` when it is there with another type than `default`'s.
    fn child(&mut self, key: &str, default: Json, what: &str) -> Result<&mut Json> {
        let Json::Obj(m) = self else {
            bail!("{what}: expected a JSON object");
        };
        let pos = match m.iter().rposition(|(k, _)| k == key) {
            Some(p) => p,
            None => {
                m.push((key.to_string(), default.clone()));
                m.len() - 1
            }
        };
        let Some((_, v)) = m.get_mut(pos) else {
            bail!("{what}: `{key}` vanished while being read");
        };
        if std::mem::discriminant(v) != std::mem::discriminant(&default) {
            bail!(
                "`{what}.{key}` is not a JSON {}",
                if matches!(default, Json::Arr(_)) {
                    "array"
                } else {
                    "object"
                }
            );
        }
        Ok(v)
    }

    fn from_value(v: Value) -> Json {
        match v {
            Value::Null => Json::Null,
            Value::Bool(b) => Json::Bool(b),
            Value::Number(n) => Json::Num(n),
            Value::String(s) => Json::Str(s),
            Value::Array(a) => Json::Arr(a.into_iter().map(Json::from_value).collect()),
            // `json!` objects are sorted; callers build small ones in the order wanted
            // through `obj`.
            Value::Object(o) => Json::Obj(
                o.into_iter()
                    .map(|(k, v)| (k, Json::from_value(v)))
                    .collect(),
            ),
        }
    }
}

/// An object with its keys in the order given.
fn obj(pairs: &[(&str, Json)]) -> Json {
    Json::Obj(
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.clone()))
            .collect(),
    )
}

fn jstr(s: &str) -> Json {
    Json::Str(s.to_string())
}

impl Serialize for Json {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Json::Null => s.serialize_unit(),
            Json::Bool(b) => s.serialize_bool(*b),
            Json::Num(n) => n.serialize(s),
            Json::Str(t) => s.serialize_str(t),
            Json::Arr(a) => {
                let mut seq = s.serialize_seq(Some(a.len()))?;
                for v in a {
                    seq.serialize_element(v)?;
                }
                seq.end()
            }
            Json::Obj(m) => {
                let mut map = s.serialize_map(Some(m.len()))?;
                for (k, v) in m {
                    map.serialize_entry(k, v)?;
                }
                map.end()
            }
        }
    }
}

impl<'de> Deserialize<'de> for Json {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Json, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Json;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a JSON value")
            }
            fn visit_unit<E>(self) -> Result<Json, E> {
                Ok(Json::Null)
            }
            fn visit_bool<E>(self, b: bool) -> Result<Json, E> {
                Ok(Json::Bool(b))
            }
            fn visit_i64<E>(self, n: i64) -> Result<Json, E> {
                Ok(Json::Num(n.into()))
            }
            fn visit_u64<E>(self, n: u64) -> Result<Json, E> {
                Ok(Json::Num(n.into()))
            }
            fn visit_f64<E: de::Error>(self, n: f64) -> Result<Json, E> {
                serde_json::Number::from_f64(n)
                    .map(Json::Num)
                    .ok_or_else(|| E::custom("a number JSON cannot hold"))
            }
            fn visit_str<E>(self, s: &str) -> Result<Json, E> {
                Ok(Json::Str(s.to_string()))
            }
            fn visit_string<E>(self, s: String) -> Result<Json, E> {
                Ok(Json::Str(s))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut a: A) -> Result<Json, A::Error> {
                let mut v = Vec::new();
                while let Some(x) = a.next_element()? {
                    v.push(x);
                }
                Ok(Json::Arr(v))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut a: A) -> Result<Json, A::Error> {
                let mut m: Vec<(String, Json)> = Vec::new();
                while let Some((k, v)) = a.next_entry::<String, Json>()? {
                    // A repeated key: the last one counts (as for every JSON reader here).
                    m.retain(|(old, _)| *old != k);
                    m.push((k, v));
                }
                Ok(Json::Obj(m))
            }
        }
        d.deserialize_any(V)
    }
}

/// Parses a settings file's text; empty text is an empty object.
fn parse_settings(path: &Path, text: &str) -> Result<Json> {
    if text.trim().is_empty() {
        return Ok(Json::Obj(Vec::new()));
    }
    let v: Json = serde_json::from_str(text).map_err(|e| {
        anyhow::anyhow!(
            "{} is not valid JSON (line {}, column {}: {e}); portcullis left it unchanged — \
             fix it, or add the hook by hand",
            path.display(),
            e.line(),
            e.column()
        )
    })?;
    if !matches!(v, Json::Obj(_)) {
        bail!(
            "{}: expected a JSON object at the top level; portcullis left it unchanged",
            path.display()
        );
    }
    Ok(v)
}

fn render(v: &Json) -> Result<String> {
    let mut s = serde_json::to_string_pretty(v).context("writing the settings as JSON")?;
    s.push('\n');
    Ok(s)
}

// ----- merging the hook into each agent's file -------------------------------------

/// Whether a matcher runs the hook for every tool: `*`, empty or absent for
/// Claude Code and Codex; a regex matching everything (`.*`, `*`, empty) for Gemini.
fn matches_all(agent: Agent, matcher: Option<&Json>) -> bool {
    match matcher {
        None | Some(Json::Null) => true,
        Some(Json::Str(m)) => match agent {
            Agent::Gemini => matches!(m.as_str(), "" | "*" | ".*" | "^.*$" | ".*?"),
            _ => matches!(m.as_str(), "" | "*"),
        },
        Some(_) => false,
    }
}

/// The tools Codex's `PermissionRequest` hook of portcullis is asked about:
/// shell commands (Codex's matcher; `NetworkAccess` is left to Codex).
const CODEX_PERMISSION_MATCHER: &str = "Bash";

/// What a merge did.
#[derive(Debug, PartialEq, Eq)]
enum Change {
    Unchanged,
    Added,
    Updated,
}

/// Claude Code, Codex and Gemini: `hooks.<event>` is a list of matcher groups,
/// each with `hooks` handlers. Ours: a group matching every tool with one
/// `command` handler. An existing portcullis handler in such a group is kept
/// (same command) or pointed at this binary (another path).
fn merge_matcher_groups(
    root: &mut Json,
    agent: Agent,
    event: &str,
    matcher: &str,
    handler: Json,
    file: &Path,
) -> Result<Change> {
    let what = file.display().to_string();
    let command = handler
        .get("command")
        .and_then(Json::as_str)
        .unwrap_or("")
        .to_string();
    let hooks = root.child("hooks", Json::Obj(Vec::new()), &what)?;
    let groups = hooks.child(event, Json::Arr(Vec::new()), &format!("{what}: hooks"))?;
    let Json::Arr(groups) = groups else {
        unreachable!("child checked the type")
    };
    for group in groups.iter_mut() {
        let same_matcher = matches!(group.get("matcher"), Some(Json::Str(m)) if m == matcher);
        if !same_matcher && !matches_all(agent, group.get("matcher")) {
            continue;
        }
        let Some(Json::Arr(handlers)) = group.get_mut("hooks") else {
            continue;
        };
        for h in handlers.iter_mut() {
            let Some(existing) = h.get("command").and_then(Json::as_str) else {
                continue;
            };
            if existing == command || is_portcullis_hook(existing, agent) {
                // Every field install writes (command, timeout, name) is brought
                // up to date; the user's other fields are kept.
                return Ok(update_fields(h, &handler));
            }
        }
    }
    groups.push(obj(&[
        ("matcher", jstr(matcher)),
        ("hooks", Json::Arr(vec![handler])),
    ]));
    Ok(Change::Added)
}

/// Sets each of `wanted`'s fields on the handler `h`: `Unchanged` when all
/// already held.
fn update_fields(h: &mut Json, wanted: &Json) -> Change {
    let (Json::Obj(have), Json::Obj(want)) = (h, wanted) else {
        return Change::Unchanged;
    };
    let mut change = Change::Unchanged;
    for (key, value) in want {
        match have.iter_mut().find(|(k, _)| k == key) {
            Some((_, v)) if v == value => {}
            Some((_, v)) => {
                *v = value.clone();
                change = Change::Updated;
            }
            None => {
                have.push((key.clone(), value.clone()));
                change = Change::Updated;
            }
        }
    }
    change
}

/// The `timeout` field of an agent's hook entry, in the agent's unit: the
/// agent's hook timeout the hook itself keeps under (`Agent::hook_timeout`).
fn timeout_field(agent: Agent) -> Json {
    let t = agent.hook_timeout();
    let n = match agent {
        Agent::Gemini => t.as_millis() as u64,
        _ => t.as_secs(),
    };
    Json::Num(n.into())
}

/// Cursor: `{"version": 1, "hooks": {"<event>": [{"command": …}]}}`.
fn merge_cursor(root: &mut Json, command: &str, file: &Path) -> Result<Change> {
    let what = file.display().to_string();
    if root.get("version").is_none()
        && let Json::Obj(m) = root
    {
        m.insert(0, ("version".into(), Json::Num(1.into())));
    }
    let hooks = root.child("hooks", Json::Obj(Vec::new()), &what)?;
    let mut change = Change::Unchanged;
    for event in CURSOR_EVENTS {
        let entries = hooks.child(event, Json::Arr(Vec::new()), &format!("{what}: hooks"))?;
        let Json::Arr(entries) = entries else {
            unreachable!("child checked the type")
        };
        let mut found = false;
        for e in entries.iter_mut() {
            let Some(existing) = e.get("command").and_then(Json::as_str) else {
                continue;
            };
            if existing == command {
                found = true;
                break;
            }
            if is_portcullis_hook(existing, Agent::Cursor) {
                if let Some(c) = e.get_mut("command") {
                    *c = jstr(command);
                }
                found = true;
                change = Change::Updated;
                break;
            }
        }
        if !found {
            entries.push(obj(&[("command", jstr(command))]));
            if change == Change::Unchanged {
                change = Change::Added;
            }
        }
    }
    Ok(change)
}

/// The pi extension with the binary's path written in.
fn pi_extension(bin: &Path) -> String {
    // A string always serialises (`"…"` with escapes).
    let literal = serde_json::to_string(&bin.to_string_lossy()).unwrap_or_default();
    let mut out = String::with_capacity(PI_EXTENSION.len() + 64);
    for line in PI_EXTENSION.split_inclusive('\n') {
        if line.starts_with(PI_BIN_LINE) {
            let _ = writeln!(
                out,
                "{PI_BIN_LINE}{literal}; // written by `portcullis install pi`"
            );
        } else {
            out.push_str(line);
        }
    }
    out
}

/// The binary path a pi extension names (`None` if the line is missing or garbled).
fn pi_extension_bin(text: &str) -> Option<String> {
    let line = text.lines().find(|l| l.starts_with(PI_BIN_LINE))?;
    let rest = line[PI_BIN_LINE.len()..].trim_start();
    let end = rest.find(';')?;
    serde_json::from_str(&rest[..end]).ok()
}

/// The new text of an agent's file, and what changed (the old text when nothing did).
fn new_text(agent: Agent, file: &Path, old: Option<&str>, bin: &Path) -> Result<(String, Change)> {
    let command = hook_command(bin, agent);
    if agent == Agent::Pi {
        let text = pi_extension(bin);
        let change = match old {
            None => Change::Added,
            Some(o) if o == text => Change::Unchanged,
            Some(_) => Change::Updated,
        };
        return Ok((text, change));
    }
    let mut root = parse_settings(file, old.unwrap_or(""))?;
    let handler = |extra: &[(&str, Json)]| {
        let mut pairs = vec![("type", jstr("command")), ("command", jstr(&command))];
        pairs.extend(extra.iter().cloned());
        obj(&pairs)
    };
    let change = match agent {
        // Codex also gets `PermissionRequest` (shell commands only): where
        // Codex would ask, what portcullis allows runs without Codex asking
        // and what it denies is refused. Codex's `NetworkAccess` requests
        // stay Codex's own.
        Agent::ClaudeCode | Agent::Codex => {
            let pre = merge_matcher_groups(
                &mut root,
                agent,
                "PreToolUse",
                "*",
                handler(&[("timeout", timeout_field(agent))]),
                file,
            )?;
            if agent == Agent::Codex {
                let permission = merge_matcher_groups(
                    &mut root,
                    agent,
                    "PermissionRequest",
                    CODEX_PERMISSION_MATCHER,
                    handler(&[("timeout", timeout_field(agent))]),
                    file,
                )?;
                match (pre, permission) {
                    (Change::Unchanged, Change::Unchanged) => Change::Unchanged,
                    (Change::Added, Change::Added) => Change::Added,
                    _ => Change::Updated,
                }
            } else {
                pre
            }
        }
        Agent::Gemini => merge_matcher_groups(
            &mut root,
            agent,
            "BeforeTool",
            ".*",
            handler(&[
                ("name", jstr("portcullis")),
                ("timeout", timeout_field(agent)),
            ]),
            file,
        )?,
        Agent::Cursor => merge_cursor(&mut root, &command, file)?,
        Agent::Pi => unreachable!("handled above"),
    };
    if change == Change::Unchanged
        && let Some(o) = old
    {
        return Ok((o.to_string(), change));
    }
    Ok((render(&root)?, change))
}

/// What the person should know after installing, per agent.
fn after_note(agent: Agent, scope: Scope) -> &'static str {
    match (agent, scope) {
        (Agent::ClaudeCode, Scope::Project) => {
            "Claude Code runs project hooks once the workspace is trusted (always in -p mode). \
             Check with /hooks inside Claude Code, or `portcullis doctor`."
        }
        (Agent::ClaudeCode, Scope::User) => {
            "Claude Code runs this hook in every project. Check with /hooks, or `portcullis doctor`."
        }
        (Agent::Codex, Scope::Project) => {
            "Codex reads a project's .codex/ only once the project is trusted, and runs new or \
             changed hooks only after you review and trust them: start Codex here, trust the \
             project, and open /hooks (trust both portcullis entries). Until then Codex runs \
             without them, silently. Where Codex would ask about a shell command, portcullis \
             answers its PermissionRequest: what portcullis allows runs without Codex asking."
        }
        (Agent::Codex, Scope::User) => {
            "Codex runs new or changed hooks only after you review and trust them: start Codex \
             and open /hooks (trust both portcullis entries). Until then Codex runs without them, \
             silently. Where Codex would ask about a shell command, portcullis answers its \
             PermissionRequest: what portcullis allows runs without Codex asking."
        }
        (Agent::Cursor, Scope::Project) => {
            "Cursor runs project hooks in trusted workspaces; restart Cursor to load them."
        }
        (Agent::Cursor, Scope::User) => "Restart Cursor to load the hooks.",
        (Agent::Gemini, _) => {
            "Gemini CLI warns once about a new hook and then runs it. Its own policy still \
             decides what runs without a prompt: see `portcullis export gemini-policy`."
        }
        (Agent::Pi, _) => "pi loads the extension when it starts (or on /reload).",
    }
}

/// The backup of a file: `<file>.portcullis-backup`.
fn backup_path(file: &Path) -> PathBuf {
    let mut name = file.as_os_str().to_owned();
    name.push(".portcullis-backup");
    PathBuf::from(name)
}

/// Writes `text` to `file` through a temporary file and a rename, keeping the
/// old file's permissions.
fn write_file(file: &Path, text: &str) -> Result<()> {
    if let Some(dir) = file.parent() {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    let mut tmp = file.as_os_str().to_owned();
    tmp.push(".portcullis-tmp");
    let tmp = PathBuf::from(tmp);
    std::fs::write(&tmp, text).with_context(|| format!("writing {}", tmp.display()))?;
    if let Ok(meta) = std::fs::metadata(file) {
        let _ = std::fs::set_permissions(&tmp, meta.permissions());
    }
    std::fs::rename(&tmp, file).with_context(|| format!("replacing {}", file.display()))
}

pub fn install(args: &InstallArgs) -> Result<ExitCode> {
    let scope = if args.user {
        Scope::User
    } else {
        Scope::Project
    };
    let (project, home) = match scope {
        Scope::Project => (project_dir(args.dir.as_deref())?, PathBuf::new()),
        Scope::User => (PathBuf::new(), home_dir()?),
    };
    let bin = own_binary()?;
    let file = target(args.agent, scope, &project, &home);
    // A settings file that is a symlink (dotfile managers) is changed where it points.
    let file = std::fs::canonicalize(&file).unwrap_or(file);
    let old = match std::fs::read_to_string(&file) {
        Ok(t) => Some(t),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(e).with_context(|| format!("reading {}", file.display())),
    };
    let (text, change) = new_text(args.agent, &file, old.as_deref(), &bin)?;
    let mut out = std::io::stdout().lock();
    let shown = file.display();
    if change == Change::Unchanged {
        writeln!(
            out,
            "{shown}: the portcullis hook is already installed ({}); nothing to change",
            hook_command(&bin, args.agent)
        )?;
        return Ok(ExitCode::SUCCESS);
    }
    if args.dry_run {
        out.write_all(unified_diff(&file, old.as_deref(), &text).as_bytes())?;
        writeln!(out, "(dry run: nothing was written)")?;
        return Ok(ExitCode::SUCCESS);
    }
    if old.is_some() {
        let backup = backup_path(&file);
        if !backup.exists() {
            std::fs::copy(&file, &backup)
                .with_context(|| format!("keeping a backup in {}", backup.display()))?;
            writeln!(out, "kept the previous {shown} as {}", backup.display())?;
        }
    }
    write_file(&file, &text)?;
    let verb = match (&change, old.is_some()) {
        (Change::Updated, _) => "updated the portcullis hook in",
        (_, true) => "added the portcullis hook to",
        (_, false) => "wrote",
    };
    writeln!(out, "{verb} {shown}")?;
    match args.agent {
        Agent::Pi => writeln!(
            out,
            "  extension runs: {} hook pi",
            portcullis_shell::quote(&bin.to_string_lossy())
        )?,
        Agent::Cursor => writeln!(
            out,
            "  beforeShellExecution, beforeMCPExecution, beforeReadFile: {}",
            hook_command(&bin, args.agent)
        )?,
        Agent::Gemini => writeln!(
            out,
            "  hooks.BeforeTool (matcher .*): {}",
            hook_command(&bin, args.agent)
        )?,
        Agent::Codex => writeln!(
            out,
            "  hooks.PreToolUse (matcher *) and hooks.PermissionRequest (matcher {CODEX_PERMISSION_MATCHER}): {}",
            hook_command(&bin, args.agent)
        )?,
        _ => writeln!(
            out,
            "  hooks.PreToolUse (matcher *): {}",
            hook_command(&bin, args.agent)
        )?,
    }
    writeln!(out, "{}", after_note(args.agent, scope))?;
    if args.agent == Agent::Codex && change == Change::Updated && !codex_trusts(&file) {
        // Codex keys its trust on a hash of the hook's command, timeout and
        // matcher: a changed entry is a new, untrusted hook that Codex skips.
        writeln!(
            out,
            "The hook entry changed, so Codex treats it as a new hook and skips it until it is \
             trusted again: open /hooks in Codex and trust it. `portcullis doctor` fails until then."
        )?;
    }
    Ok(ExitCode::SUCCESS)
}

/// `value[key]` without the panic indexing may bring: `Null` when `value`
/// is no object or has no such key.
fn at<'a>(value: &'a serde_json::Value, key: &str) -> &'a serde_json::Value {
    static NULL: serde_json::Value = serde_json::Value::Null;
    value.get(key).unwrap_or(&NULL)
}

// ----- a small line diff -------------------------------------------------------------

#[derive(Clone, Copy, PartialEq, Eq)]
enum Op {
    Keep,
    Del,
    Add,
}

/// The edit script from `a` to `b` (longest common subsequence; above a size
/// where that gets costly, everything is replaced).
fn diff_ops<'a>(a: &[&'a str], b: &[&'a str]) -> Vec<(Op, &'a str)> {
    let pre = a.iter().zip(b).take_while(|(x, y)| x == y).count();
    let (a_rest, b_rest) = (
        a.get(pre..).unwrap_or_default(),
        b.get(pre..).unwrap_or_default(),
    );
    let suf = a_rest
        .iter()
        .rev()
        .zip(b_rest.iter().rev())
        .take_while(|(x, y)| x == y)
        .count();
    let am = a_rest.get(..a_rest.len() - suf).unwrap_or_default();
    let bm = b_rest.get(..b_rest.len() - suf).unwrap_or_default();
    let mut ops: Vec<(Op, &str)> = a.iter().take(pre).map(|l| (Op::Keep, *l)).collect();
    let (n, m) = (am.len(), bm.len());
    if n.saturating_mul(m) > 4_000_000 {
        ops.extend(am.iter().map(|l| (Op::Del, *l)));
        ops.extend(bm.iter().map(|l| (Op::Add, *l)));
    } else {
        // lcs[i][j]: the longest common subsequence of am[i..] and bm[j..],
        // row by row; outside the table, 0.
        let w = m + 1;
        let mut lcs = vec![0u32; (n + 1) * w];
        let at = |lcs: &[u32], i: usize, j: usize| lcs.get(i * w + j).copied().unwrap_or(0);
        for (i, x) in am.iter().enumerate().rev() {
            for (j, y) in bm.iter().enumerate().rev() {
                let v = if x == y {
                    at(&lcs, i + 1, j + 1) + 1
                } else {
                    at(&lcs, i + 1, j).max(at(&lcs, i, j + 1))
                };
                if let Some(cell) = lcs.get_mut(i * w + j) {
                    *cell = v;
                }
            }
        }
        let (mut i, mut j) = (0, 0);
        loop {
            match (am.get(i), bm.get(j)) {
                (Some(x), Some(y)) if x == y => {
                    ops.push((Op::Keep, *x));
                    i += 1;
                    j += 1;
                }
                (Some(x), None) => {
                    ops.push((Op::Del, *x));
                    i += 1;
                }
                (Some(x), Some(_)) if at(&lcs, i + 1, j) >= at(&lcs, i, j + 1) => {
                    ops.push((Op::Del, *x));
                    i += 1;
                }
                (_, Some(y)) => {
                    ops.push((Op::Add, *y));
                    j += 1;
                }
                (None, None) => break,
            }
        }
    }
    ops.extend(
        a_rest
            .iter()
            .skip(a_rest.len() - suf)
            .map(|l| (Op::Keep, *l)),
    );
    ops
}

/// A unified diff (three lines of context) of a file's old and new text.
pub fn unified_diff(file: &Path, old: Option<&str>, new: &str) -> String {
    const CONTEXT: usize = 3;
    let a: Vec<&str> = old.map(|o| o.lines().collect()).unwrap_or_default();
    let b: Vec<&str> = new.lines().collect();
    let ops = diff_ops(&a, &b);
    let mut out = String::new();
    let shown = file.display();
    match old {
        Some(_) => {
            let _ = writeln!(out, "--- {shown}");
        }
        None => {
            let _ = writeln!(out, "--- /dev/null");
        }
    }
    let _ = writeln!(out, "+++ {shown}");
    let changed: Vec<usize> = ops
        .iter()
        .enumerate()
        .filter(|(_, o)| o.0 != Op::Keep)
        .map(|(k, _)| k)
        .collect();
    let mut rest = changed.iter().copied().peekable();
    while let Some(first) = rest.next() {
        let start = first.saturating_sub(CONTEXT);
        let mut end = first;
        while let Some(next) = rest.next_if(|&c| c <= end + 2 * CONTEXT + 1) {
            end = next;
        }
        let end = (end + CONTEXT + 1).min(ops.len());
        // Line numbers where the hunk starts, in each file.
        let old_before = ops.iter().take(start).filter(|o| o.0 != Op::Add).count();
        let new_before = ops.iter().take(start).filter(|o| o.0 != Op::Del).count();
        let hunk = ops.get(start..end).unwrap_or_default();
        let old_len = hunk.iter().filter(|o| o.0 != Op::Add).count();
        let new_len = hunk.iter().filter(|o| o.0 != Op::Del).count();
        let at = |before: usize, len: usize| if len == 0 { before } else { before + 1 };
        let _ = writeln!(
            out,
            "@@ -{},{old_len} +{},{new_len} @@",
            at(old_before, old_len),
            at(new_before, new_len)
        );
        for (op, line) in hunk {
            let sign = match op {
                Op::Keep => ' ',
                Op::Del => '-',
                Op::Add => '+',
            };
            let _ = writeln!(out, "{sign}{line}");
        }
    }
    out
}

// ----- doctor ------------------------------------------------------------------------

/// One hook command found in an agent's file, and how it fared.
#[derive(Serialize)]
struct HookCheck {
    command: String,
    program: Option<String>,
    exists: bool,
    executable: bool,
    answers: bool,
    /// The verdict of the harmless call (`allow`, `ask`, `deny`, `no-opinion`).
    verdict: Option<String>,
    reason: Option<String>,
    problem: Option<String>,
}

/// One agent and scope.
#[derive(Serialize)]
struct AgentCheck {
    agent: &'static str,
    scope: &'static str,
    file: String,
    /// `not-installed`, `ok`, `broken`, `unreadable` or (Codex) `untrusted`:
    /// the hook works but Codex skips it.
    status: &'static str,
    hooks: Vec<HookCheck>,
    notes: Vec<String>,
    /// Codex only: its trust in each portcullis hook handler.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    codex_trust: Vec<crate::codex_trust::HookTrust>,
}

pub fn doctor(args: &DoctorArgs) -> Result<ExitCode> {
    let project = project_dir(args.dir.as_deref())?;
    let home = home_dir().ok();
    let mut checks = Vec::new();
    for agent in Agent::ALL {
        for scope in [Scope::Project, Scope::User] {
            let home = match (scope, &home) {
                (Scope::User, None) => continue,
                (_, h) => h.clone().unwrap_or_default(),
            };
            let file = target(agent, scope, &project, &home);
            checks.push(check_agent(agent, scope, &file, &project));
        }
    }
    let failed = checks
        .iter()
        .any(|c| matches!(c.status, "broken" | "unreadable" | "untrusted"));
    let store = crate::state::doctor_store();
    let mut out = std::io::stdout().lock();
    if args.json {
        let report = json!({"ok": !failed && store.ok(), "checks": checks, "store": store});
        writeln!(out, "{report}")?;
    } else {
        for c in &checks {
            let head = format!("{:<11} {:<7}", c.agent, c.scope);
            match c.status {
                "not-installed" => writeln!(out, "{head} not installed ({})", c.file)?,
                "unreadable" => {
                    writeln!(out, "{head} UNREADABLE {}: {}", c.file, c.notes.join("; "))?
                }
                status => {
                    writeln!(
                        out,
                        "{head} {} {}",
                        match status {
                            "ok" => "ok",
                            "untrusted" => "SKIPPED BY CODEX",
                            _ => "BROKEN",
                        },
                        c.file
                    )?;
                    for h in &c.hooks {
                        let verdict = h.verdict.as_deref().unwrap_or("-");
                        match &h.problem {
                            None => writeln!(out, "    {} → answers ({verdict})", h.command)?,
                            Some(p) => writeln!(out, "    {} → {p}", h.command)?,
                        }
                    }
                    for n in &c.notes {
                        writeln!(out, "    note: {n}")?;
                    }
                }
            }
        }
        writeln!(out, "{}", store.line())?;
        if failed {
            writeln!(
                out,
                "portcullis doctor: a hook that names portcullis does not work or is skipped \
                 (see above)"
            )?;
        }
    }
    Ok(if failed || !store.ok() {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// The portcullis hook commands an agent's settings name, with notes on how
/// much they cover.
fn hook_commands(agent: Agent, root: &Value, notes: &mut Vec<String>) -> Vec<String> {
    let mut found = Vec::new();
    let handlers_of = |group: &Value| -> Vec<String> {
        at(group, "hooks")
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|h| at(h, "command").as_str())
            .filter(|c| is_portcullis_hook(c, agent))
            .map(str::to_string)
            .collect()
    };
    match agent {
        Agent::ClaudeCode | Agent::Codex | Agent::Gemini => {
            let event = if agent == Agent::Gemini {
                "BeforeTool"
            } else {
                "PreToolUse"
            };
            for group in at(at(root, "hooks"), event)
                .as_array()
                .into_iter()
                .flatten()
            {
                let cmds = handlers_of(group);
                if cmds.is_empty() {
                    continue;
                }
                let matcher = group.get("matcher").map(|m| Json::from_value(m.clone()));
                if !matches_all(agent, matcher.as_ref()) {
                    notes.push(format!(
                        "the hook runs only for tools matching {}",
                        at(group, "matcher")
                    ));
                }
                found.extend(cmds);
            }
        }
        Agent::Cursor => {
            for event in CURSOR_EVENTS {
                let cmds: Vec<String> = at(at(root, "hooks"), event)
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|h| at(h, "command").as_str())
                    .filter(|c| is_portcullis_hook(c, agent))
                    .map(str::to_string)
                    .collect();
                if cmds.is_empty() && at(root, "hooks").is_object() {
                    notes.push(format!("no portcullis hook for {event}"));
                }
                found.extend(cmds);
            }
            if found.is_empty() {
                notes.clear();
            }
        }
        Agent::Pi => {}
    }
    found.sort();
    found.dedup();
    found
}

fn check_agent(agent: Agent, scope: Scope, file: &Path, project: &Path) -> AgentCheck {
    let mut check = AgentCheck {
        agent: agent.as_str(),
        scope: scope.as_str(),
        file: file.display().to_string(),
        status: "not-installed",
        hooks: Vec::new(),
        notes: Vec::new(),
        codex_trust: Vec::new(),
    };
    let text = match std::fs::read_to_string(file) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return check,
        Err(e) => {
            check.status = "unreadable";
            check.notes.push(format!("cannot read it: {e}"));
            return check;
        }
    };
    let run_dir = match agent {
        // Cursor resolves relative hook commands against the hooks.json's directory.
        Agent::Cursor => file.parent().unwrap_or(project).to_path_buf(),
        _ => project.to_path_buf(),
    };
    let commands = if agent == Agent::Pi {
        match pi_extension_bin(&text) {
            Some(bin) => vec![format!("{} hook pi", portcullis_shell::quote(&bin))],
            None => {
                check.status = "broken";
                check.notes.push(format!(
                    "the extension has no `{PI_BIN_LINE}\"…\";` line naming the portcullis binary; \
                     run `portcullis install pi` again"
                ));
                return check;
            }
        }
    } else {
        let root: Value = if text.trim().is_empty() {
            json!({})
        } else {
            match serde_json::from_str(&text) {
                Ok(v) => v,
                Err(e) => {
                    // Only a file that may hold our hook makes doctor fail.
                    if text.contains("portcullis") {
                        check.status = "unreadable";
                    }
                    check.notes.push(format!("not valid JSON: {e}"));
                    return check;
                }
            }
        };
        hook_commands(agent, &root, &mut check.notes)
    };
    if commands.is_empty() {
        check.notes.clear();
        return check;
    }
    check.hooks = commands
        .into_iter()
        .map(|c| check_hook(agent, &c, &run_dir))
        .collect();
    check.status = if check.hooks.iter().all(|h| h.problem.is_none()) {
        "ok"
    } else {
        "broken"
    };
    if agent == Agent::Codex {
        codex_trust_check(&mut check, scope, file, project);
    }
    check
}

/// Codex runs a hook only once a person trusted it (by its hash, in `/hooks`),
/// and reads a project's `.codex/` only once the project is trusted; until
/// then it runs every call without the hook and says nothing. A working hook
/// that Codex skips is a failure: notes name what to do.
fn codex_trust_check(check: &mut AgentCheck, scope: Scope, file: &Path, project: &Path) {
    let root: Value = std::fs::read_to_string(file)
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or_default();
    let project = (scope == Scope::Project).then_some(project);
    let (hooks, project_trusted) = crate::codex_trust::check(file, &root, project, |c| {
        is_portcullis_hook(c, Agent::Codex)
    });
    let mut skipped = false;
    if let (Some(project), Some(false)) = (project, project_trusted) {
        skipped = true;
        check.notes.push(format!(
            "Codex has not trusted {}: it ignores the project's .codex/, this hook included, \
             until you trust the project in Codex",
            project.display()
        ));
    }
    for hook in &hooks {
        let note = match hook.status {
            "trusted" => continue,
            "modified" => {
                "Codex's trust for this hook is stale (the entry changed since it was \
                 trusted): it does not run until you trust it again in Codex's /hooks"
            }
            "disabled" => "the hook is disabled in Codex's /hooks: Codex does not run it",
            _ => {
                "Codex has no trust recorded for this hook: it does not run until you review \
                 and trust it in Codex's /hooks"
            }
        };
        skipped = true;
        check.notes.push(note.to_string());
    }
    if skipped && check.status == "ok" {
        check.status = "untrusted";
    }
    check.codex_trust = hooks;
}

/// Whether Codex trusts every portcullis hook in `file` as written now.
fn codex_trusts(file: &Path) -> bool {
    let root: Value = std::fs::read_to_string(file)
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or_default();
    let (hooks, _) =
        crate::codex_trust::check(file, &root, None, |c| is_portcullis_hook(c, Agent::Codex));
    hooks.iter().all(|h| h.status == "trusted")
}

/// Finds a program the way `sh` does: a path as written, else in `$PATH`.
fn locate(program: &str, dir: &Path) -> Option<PathBuf> {
    if program.contains('/') {
        return Some(dir.join(program));
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(program))
        .find(|p| p.is_file())
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// A harmless call in the agent's payload format (no session id: nothing is stored).
fn benign_payload(agent: Agent, cwd: &Path) -> Value {
    let cwd = cwd.to_string_lossy();
    match agent {
        Agent::ClaudeCode => json!({
            "hook_event_name": "PreToolUse", "cwd": cwd, "permission_mode": "default",
            "tool_name": "Bash", "tool_input": {"command": "git status"},
            "tool_use_id": "portcullis-doctor"}),
        Agent::Codex => json!({
            "hook_event_name": "PreToolUse", "cwd": cwd, "permission_mode": "default",
            "turn_id": "portcullis-doctor", "model": "portcullis-doctor",
            "tool_name": "Bash", "tool_input": {"command": "git status"},
            "tool_use_id": "portcullis-doctor"}),
        Agent::Cursor => json!({
            "hook_event_name": "beforeShellExecution", "command": "git status", "cwd": cwd,
            "workspace_roots": [cwd]}),
        Agent::Gemini => json!({
            "hook_event_name": "BeforeTool", "cwd": cwd, "tool_name": "run_shell_command",
            "tool_input": {"command": "git status"}}),
        Agent::Pi => json!({
            "toolName": "read", "toolCallId": "portcullis-doctor",
            "input": {"path": "README.md"}, "cwd": cwd, "has_ui": false}),
    }
}

/// A reply the agent reads: `Ok((verdict, reason))`, else what is wrong with it.
fn read_reply(
    agent: Agent,
    code: Option<i32>,
    stdout: &str,
    stderr: &str,
) -> Result<(String, String), String> {
    let out = stdout.trim();
    let err = stderr.trim().to_string();
    let parsed: Option<Value> = if out.is_empty() {
        None
    } else {
        match serde_json::from_str(out) {
            Ok(v) => Some(v),
            Err(_) => return Err(format!("prints something that is not JSON: {}", clip(out))),
        }
    };
    let s = |v: &Value| v.as_str().unwrap_or("").to_string();
    match agent {
        Agent::ClaudeCode | Agent::Codex => {
            if code == Some(2) {
                return if err.is_empty() {
                    Err("exits 2 with nothing on stderr".into())
                } else {
                    Ok(("deny".into(), err))
                };
            }
            if code != Some(0) {
                return Err(format!(
                    "exits {} (the agent ignores the hook)",
                    show_code(code)
                ));
            }
            let Some(v) = parsed else {
                return Ok(("no-opinion".into(), String::new()));
            };
            let out = at(&v, "hookSpecificOutput");
            let decision = s(at(out, "permissionDecision"));
            let valid: &[&str] = if agent == Agent::Codex {
                &["deny"]
            } else {
                &["allow", "ask", "deny", "defer"]
            };
            if at(out, "hookEventName") == "PreToolUse" && valid.contains(&decision.as_str()) {
                Ok((decision, s(at(out, "permissionDecisionReason"))))
            } else if agent == Agent::Codex && at(&v, "decision") == "block" {
                Ok(("deny".into(), s(at(&v, "reason"))))
            } else {
                Err(format!(
                    "answers in a shape the agent does not read: {}",
                    clip(out.to_string().as_str())
                ))
            }
        }
        Agent::Cursor => {
            let Some(v) = parsed.filter(|_| code == Some(0)) else {
                return Err(format!("exits {} without a JSON answer", show_code(code)));
            };
            let p = s(at(&v, "permission"));
            if ["allow", "deny", "ask"].contains(&p.as_str()) {
                Ok((p, s(at(&v, "agent_message"))))
            } else {
                Err(format!(
                    "answers without `permission`: {}",
                    clip(&v.to_string())
                ))
            }
        }
        Agent::Gemini | Agent::Pi => {
            let Some(v) = parsed else {
                return Err(format!("exits {} without a JSON answer", show_code(code)));
            };
            let d = s(at(&v, "decision"));
            let valid: &[&str] = if agent == Agent::Gemini {
                &["allow", "deny", "block", "ask", "approve"]
            } else {
                &["allow", "deny", "ask"]
            };
            if valid.contains(&d.as_str()) && (agent == Agent::Gemini || code == Some(0)) {
                Ok((d, s(at(&v, "reason"))))
            } else {
                Err(format!(
                    "answers in a shape the agent does not read: {}",
                    clip(&v.to_string())
                ))
            }
        }
    }
}

fn show_code(code: Option<i32>) -> String {
    code.map(|c| c.to_string())
        .unwrap_or_else(|| "on a signal".into())
}

fn clip(s: &str) -> String {
    let mut t: String = s.chars().take(200).collect();
    if t.len() < s.len() {
        t.push('…');
    }
    t
}

fn check_hook(agent: Agent, command: &str, dir: &Path) -> HookCheck {
    let mut h = HookCheck {
        command: command.to_string(),
        program: None,
        exists: false,
        executable: false,
        answers: false,
        verdict: None,
        reason: None,
        problem: None,
    };
    let Some(program) = shell_words(command).and_then(|w| w.into_iter().next()) else {
        h.problem = Some("the command's quoting does not parse".into());
        return h;
    };
    let path = locate(&program, dir);
    h.program = Some(
        path.as_ref()
            .map_or(program.clone(), |p| p.display().to_string()),
    );
    h.exists = path.as_ref().is_some_and(|p| p.is_file());
    h.executable = path.as_ref().is_some_and(|p| is_executable(p));
    if !h.exists {
        h.problem = Some(format!(
            "{program} does not exist (the agent would run no check)"
        ));
        return h;
    }
    if !h.executable {
        h.problem = Some(format!("{program} is not executable"));
        return h;
    }
    let payload = benign_payload(agent, dir).to_string();
    // The agents run hook commands with `sh -c`; pi's extension runs the binary itself.
    let mut cmd = if agent == Agent::Pi {
        let mut c = Command::new(path.as_deref().unwrap_or(Path::new(&program)));
        c.args(["hook", "pi"]);
        c
    } else {
        let mut c = Command::new("sh");
        c.arg("-c").arg(command);
        c
    };
    // The probe is not an agent's call: it must leave no row in the user's
    // store, so the hook gets a throwaway data directory (its own store
    // health is `doctor`'s store check).
    let probe_store = std::env::temp_dir().join(format!(
        "portcullis-doctor-{}-{}",
        std::process::id(),
        agent.as_str()
    ));
    {
        use std::os::unix::fs::DirBuilderExt;
        let _ = std::fs::DirBuilder::new().mode(0o700).create(&probe_store);
    }
    cmd.env("PORTCULLIS_DATA_DIR", &probe_store);
    let ran = run_with_timeout(cmd.current_dir(dir), &payload, Duration::from_secs(30));
    let _ = std::fs::remove_dir_all(&probe_store);
    match ran {
        Err(e) => h.problem = Some(format!("could not run it: {e:#}")),
        Ok((code, stdout, stderr)) => match read_reply(agent, code, &stdout, &stderr) {
            Ok((verdict, reason)) => {
                h.answers = true;
                if reason.contains("could not judge") || reason.contains("failed while judging") {
                    h.problem = Some(format!(
                        "answers, but cannot judge calls (every call is denied): {reason}"
                    ));
                }
                h.verdict = Some(verdict);
                h.reason = (!reason.is_empty()).then_some(reason);
            }
            Err(p) => {
                let err = stderr.trim();
                h.problem = Some(if err.is_empty() {
                    p
                } else {
                    format!("{p}; stderr: {}", clip(err))
                });
            }
        },
    }
    h
}

/// Runs a command with `input` on stdin; kills it after `timeout`.
fn run_with_timeout(
    cmd: &mut Command,
    input: &str,
    timeout: Duration,
) -> Result<(Option<i32>, String, String)> {
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .context("spawning")?;
    let (Some(mut stdin), Some(mut stdout), Some(mut stderr)) =
        (child.stdin.take(), child.stdout.take(), child.stderr.take())
    else {
        let _ = child.kill();
        bail!("the child's standard streams were not piped");
    };
    let input = input.to_string();
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(input.as_bytes());
    });
    let out_reader = std::thread::spawn(move || {
        let mut s = Vec::new();
        let _ = stdout.read_to_end(&mut s);
        s
    });
    let err_reader = std::thread::spawn(move || {
        let mut s = Vec::new();
        let _ = stderr.read_to_end(&mut s);
        s
    });
    let start = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().context("waiting")? {
            break s;
        }
        if start.elapsed() > timeout {
            let _ = child.kill();
            let _ = child.wait();
            bail!("no answer within {} s", timeout.as_secs());
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let _ = writer.join();
    let out = out_reader.join().unwrap_or_default();
    let err = err_reader.join().unwrap_or_default();
    Ok((
        status.code(),
        String::from_utf8_lossy(&out).into_owned(),
        String::from_utf8_lossy(&err).into_owned(),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoting_round_trips() {
        for s in ["/usr/bin/portcullis", "/a b/it's", "", "$HOME/x", "a\"b\\c"] {
            assert_eq!(
                shell_words(&portcullis_shell::quote(s)),
                Some(vec![s.to_string()]),
                "{s}"
            );
        }
        assert_eq!(
            portcullis_shell::quote("/opt/portcullis"),
            "/opt/portcullis"
        );
    }

    #[test]
    fn recognises_portcullis_hooks() {
        assert!(is_portcullis_hook("/x/portcullis hook codex", Agent::Codex));
        assert!(is_portcullis_hook("/x/portcullis-hook codex", Agent::Codex));
        assert!(is_portcullis_hook(
            "portcullis-hook codex --config c",
            Agent::Codex
        ));
        assert!(!is_portcullis_hook(
            "/x/portcullis-hook cursor",
            Agent::Codex
        ));
        assert!(!is_portcullis_hook(
            "/x/portcullis-hook hook codex",
            Agent::Codex
        ));
        assert!(is_portcullis_hook(
            "'/a b/portcullis' hook codex --config c",
            Agent::Codex
        ));
        assert!(!is_portcullis_hook(
            "/x/portcullis hook cursor",
            Agent::Codex
        ));
        assert!(!is_portcullis_hook("/x/other hook codex", Agent::Codex));
    }

    #[test]
    fn keeps_key_order() {
        let text =
            "{\n  \"z\": 1,\n  \"a\": [\n    true,\n    null,\n    1.5,\n    \"s\"\n  ]\n}\n";
        let v = parse_settings(Path::new("f"), text).expect("parses");
        assert_eq!(render(&v).unwrap(), text);
    }

    #[test]
    fn pi_template_has_one_bin_line() {
        assert_eq!(
            PI_EXTENSION
                .lines()
                .filter(|l| l.starts_with(PI_BIN_LINE))
                .count(),
            1
        );
        let text = pi_extension(Path::new("/opt/p \"q\"/portcullis"));
        assert_eq!(
            pi_extension_bin(&text).as_deref(),
            Some("/opt/p \"q\"/portcullis")
        );
    }

    #[test]
    fn diff_shows_only_changes() {
        let old = "a\nb\nc\nd\ne\nf\ng\nh\n";
        let new = "a\nb\nc\nd\nX\nf\ng\nh\ni\n";
        let d = unified_diff(Path::new("f"), Some(old), new);
        assert_eq!(
            d,
            "--- f\n+++ f\n@@ -2,7 +2,8 @@\n b\n c\n d\n-e\n+X\n f\n g\n h\n+i\n"
        );
        let d = unified_diff(Path::new("f"), None, "x\n");
        assert_eq!(d, "--- /dev/null\n+++ f\n@@ -0,0 +1,1 @@\n+x\n");
    }
}
