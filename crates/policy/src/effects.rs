//! From a tool call to the effects it would have.
//!
//! The tool table says what the agent's own tools do; a manifest says what a
//! trusted builtin does; everything else is zero-trust: its shell-like fields
//! are analysed as shell and its path-like strings judged as paths.

use portcullis_shell::{Command, EnvRead, OpaqueReason};
use serde::Serialize;
use serde_json::Value;

use crate::config::Policy;
use crate::mcp_name::McpToolName;
use crate::tables::{SHELL_FIELDS, ToolKind};
use crate::tool::{FsAccess, Origin, ToolCall};

/// One thing a tool call would do.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Effect {
    /// A command the shell would run.
    Exec {
        program: String,
        argv: Option<Vec<String>>,
        via: String,
        #[serde(skip)]
        command: Box<Command>,
    },
    Read {
        path: String,
        #[serde(skip_serializing_if = "std::ops::Not::not")]
        dynamic: bool,
    },
    Write {
        path: String,
        #[serde(skip_serializing_if = "std::ops::Not::not")]
        dynamic: bool,
    },
    Delete {
        path: String,
        #[serde(skip_serializing_if = "std::ops::Not::not")]
        dynamic: bool,
    },
    Move {
        from: String,
        to: String,
        #[serde(skip_serializing_if = "std::ops::Not::not")]
        dynamic: bool,
    },
    Network {
        #[serde(skip_serializing_if = "Option::is_none")]
        program: Option<String>,
        #[serde(skip_serializing_if = "Option::is_none")]
        host: Option<String>,
    },
    /// Code run or loaded through an option, variable or file.
    Code {
        program: String,
        source: String,
        reason: String,
    },
    /// A call of an MCP server's tool (serialized as `server` and `tool`).
    McpCall(McpToolName),
    /// A call of a tool whose effects are not modelled (judged by tool rules).
    ToolUse { tool: String },
    /// Something the analysis could not see through.
    Opaque { reason: String, text: String },
}

/// The effects of a call, plus where each came from (for reasons).
#[derive(Clone, Debug, Default)]
pub struct Effects {
    pub items: Vec<Effect>,
    /// The rule name under which the call's tool is judged (`Bash`, `Read`, `mcp__s__t` …).
    pub tool_rule_name: String,
    /// Variables whose values the call's shell text reads (`$NAME`, `printenv`,
    /// `env`): the decision judges the secret-shaped ones like secret files.
    pub env_reads: Vec<EnvRead>,
    /// Effects on bare names in an untrusted tool's arguments (`.env`,
    /// `notes.txt`): judged only when the name is a path the file system
    /// knows — an existing file relative to the working directory, or a
    /// secret's or protected path's shape. The decision has the facts.
    pub candidates: Vec<Effect>,
}

/// Derives the effects of a call.
pub fn derive(call: &ToolCall, policy: &Policy) -> Effects {
    let mut out = Effects {
        items: Vec::new(),
        tool_rule_name: call.tool.name.clone(),
        env_reads: Vec::new(),
        candidates: Vec::new(),
    };
    let input = &call.input;
    let origin = call.tool.origin;
    if origin == Origin::Mcp
        || call.tool.name.starts_with(McpToolName::PREFIX) && origin != Origin::Core
    {
        let name = mcp_name(call);
        out.tool_rule_name = name.to_string();
        out.items.push(Effect::McpCall(name));
        let start = out.items.len();
        let mut budget = ZERO_TRUST_BUDGET;
        zero_trust(input, &mut out, "", &mut budget);
        // A manifest from trusted configuration (or from a bridge in front of a
        // server configured trusted) may say the tool only reads: its path
        // arguments are then reads, not writes. Nothing else loosens.
        let reads_only = call
            .tool
            .manifest
            .as_ref()
            .or_else(|| policy.manifest_for(&call.tool.name, origin))
            .is_some_and(|m| m.filesystem == FsAccess::Read && !m.shell);
        if reads_only {
            // `start` is a length `items` had: never past its end. Were it,
            // nothing is loosened (writes stay writes).
            let added = out.items.get_mut(start..).unwrap_or_default();
            for e in added.iter_mut().chain(out.candidates.iter_mut()) {
                if let Effect::Write { path, dynamic } = e {
                    *e = Effect::Read {
                        path: std::mem::take(path),
                        dynamic: *dynamic,
                    };
                }
            }
        }
        return out;
    }
    if origin == Origin::Core {
        match policy.table.kind(&call.tool.name) {
            Some(kind) => {
                tool_effects(kind, input, &call.cwd, &mut out.items, &mut out.env_reads);
                field_effects(policy.table.agent, &call.tool.name, input, &mut out.items);
                return out;
            }
            None => {
                out.items.push(Effect::ToolUse {
                    tool: call.tool.name.clone(),
                });
                return out;
            }
        }
    }
    // Builtin with a trusted manifest: judged by it. Otherwise zero trust.
    let manifest = call
        .tool
        .manifest
        .as_ref()
        .or_else(|| policy.manifest_for(&call.tool.name, origin));
    match (origin, manifest) {
        (Origin::Builtin, Some(m)) => {
            if m.shell {
                shell_fields(input, &mut out.items, &mut out.env_reads);
            }
            for pointer in &m.paths_in {
                if let Some(Value::String(p)) = input.pointer(pointer) {
                    let dynamic = false;
                    out.items.push(match m.filesystem {
                        FsAccess::Write => Effect::Write {
                            path: p.clone(),
                            dynamic,
                        },
                        _ => Effect::Read {
                            path: p.clone(),
                            dynamic,
                        },
                    });
                }
            }
            if m.network {
                out.items.push(Effect::Network {
                    program: Some(call.tool.name.clone()),
                    host: None,
                });
            }
            out.items.push(Effect::ToolUse {
                tool: call.tool.name.clone(),
            });
        }
        _ => {
            out.items.push(Effect::ToolUse {
                tool: call.tool.name.clone(),
            });
            let mut budget = ZERO_TRUST_BUDGET;
            zero_trust(input, &mut out, "", &mut budget);
        }
    }
    out
}

/// The MCP tool a call names. With a server given, the name is read as one
/// of its tools (taken whole when not spelt `mcp__<server>__…`). Without, a
/// call that says it is MCP is one whether or not its name has the prefix:
/// `server__tool` is split as `mcp__server__tool` is, anything else is a
/// tool of no server.
fn mcp_name(call: &ToolCall) -> McpToolName {
    let name = call.tool.name.as_str();
    if let Some(server) = &call.tool.server {
        return McpToolName::parse_for(server, name)
            .unwrap_or_else(|| McpToolName::new(server.as_str(), name));
    }
    let rest = name.strip_prefix(McpToolName::PREFIX).unwrap_or(name);
    match rest.split_once(McpToolName::SEPARATOR) {
        Some((server, tool)) => McpToolName::new(server, tool),
        None => McpToolName::new("", rest),
    }
}

/// `dir` names `cwd` itself (`.`, or the same absolute path up to a trailing slash).
fn same_dir(dir: &str, cwd: &str) -> bool {
    let trim = |p: &str| p.trim_end_matches('/').to_string();
    dir == "." || dir == "./" || (dir.starts_with('/') && trim(dir) == trim(cwd))
}

fn string_field<'a>(input: &'a Value, field: &str) -> Option<&'a str> {
    input.get(field).and_then(Value::as_str)
}

fn tool_effects(
    kind: ToolKind,
    input: &Value,
    cwd: &str,
    out: &mut Vec<Effect>,
    env: &mut Vec<EnvRead>,
) {
    match kind {
        ToolKind::Shell { command, dir } => match string_field(input, command) {
            // A start directory is a `cd` before the command: relative paths in
            // the command resolve against it, not against the project root.
            // The call's own working directory is no change at all.
            Some(text) => match dir.and_then(|d| string_field(input, d)) {
                Some(d) if !d.is_empty() && !same_dir(d, cwd) => {
                    shell_analysis(portcullis_shell::analyze_in(text, d), out, env)
                }
                _ => shell(text, out, env),
            },
            None => out.push(Effect::Opaque {
                reason: "missing-input".into(),
                text: format!("no `{command}` string in the input"),
            }),
        },
        ToolKind::Read { path } => match string_field(input, path) {
            Some(p) => out.push(Effect::Read {
                path: p.to_string(),
                dynamic: false,
            }),
            None => out.push(Effect::Opaque {
                reason: "missing-input".into(),
                text: format!("no `{path}` in the input"),
            }),
        },
        ToolKind::Write { path } => match string_field(input, path) {
            Some(p) => out.push(Effect::Write {
                path: p.to_string(),
                dynamic: false,
            }),
            None => out.push(Effect::Opaque {
                reason: "missing-input".into(),
                text: format!("no `{path}` in the input"),
            }),
        },
        ToolKind::Search { path } => {
            let p = string_field(input, path).unwrap_or(".");
            out.push(Effect::Read {
                path: p.to_string(),
                dynamic: false,
            });
        }
        ToolKind::Fetch { url } => {
            // The field is a URL (`WebFetch`) or text naming several (Gemini's
            // `web_fetch{prompt}`): every URL in it, read as clients read
            // URLs (`portcullis_shell::url`); `file:` URLs read their path.
            let text = string_field(input, url).unwrap_or("");
            let urls = urls_in(text);
            if urls.is_empty() {
                out.push(Effect::Network {
                    program: None,
                    host: None,
                });
            }
            for u in urls {
                out.push(if u.scheme == "file" {
                    Effect::Read {
                        path: u.path,
                        dynamic: false,
                    }
                } else {
                    Effect::Network {
                        program: None,
                        host: u.host,
                    }
                });
            }
        }
        ToolKind::WebSearch => out.push(Effect::Network {
            program: None,
            host: None,
        }),
        ToolKind::Patch { field } => {
            // The patch text may sit in the named field or be the whole input.
            let text = string_field(input, field)
                .or_else(|| input.as_str())
                .or_else(|| string_field(input, "input"));
            match text {
                Some(t) => patch_effects(t, out),
                None => out.push(Effect::Opaque {
                    reason: "missing-input".into(),
                    text: format!("no `{field}` patch text in the input"),
                }),
            }
        }
        ToolKind::Harmless => {}
    }
}

/// The files a tool's other fields name (`crate::tool_fields`): Grep's
/// `glob`, Glob's `pattern`, Gemini's `include`, Cursor's attachments.
fn field_effects(agent: &str, tool: &str, input: &Value, out: &mut Vec<Effect>) {
    use crate::tool_fields::{Field, fields_for};
    let Some((_, fields)) = fields_for(agent).iter().find(|(n, _)| *n == tool) else {
        return;
    };
    let strings = |v: &Value| -> Vec<String> {
        match v {
            Value::String(s) => vec![s.clone()],
            Value::Array(a) => a
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect(),
            _ => Vec::new(),
        }
    };
    for (name, field) in fields.iter() {
        let Some(v) = input.get(name) else { continue };
        match field {
            Field::FilePattern { root } => {
                let root = root.and_then(|r| string_field(input, r));
                strings(v).iter().for_each(|p| pattern_read(p, root, out));
            }
            Field::ReadList => strings(v).iter().for_each(|p| pattern_read(p, None, out)),
            Field::Attachments => {
                for a in v.as_array().into_iter().flatten() {
                    let path = a
                        .get("filePath")
                        .or_else(|| a.get("file_path"))
                        .and_then(Value::as_str);
                    if let Some(p) = path {
                        out.push(Effect::Read {
                            path: p.to_string(),
                            dynamic: false,
                        });
                    }
                }
            }
            Field::Primary | Field::SearchRoot | Field::Irrelevant(_) => {}
        }
    }
}

/// A file pattern searched below `root`: one that leaves the root (absolute,
/// `~`, `..`) is a read of what it names (a glob, judged by the files it
/// matches); a plain name is a read of that file; a relative glob stays below
/// the root, which the tool's kind already judged.
fn pattern_read(pattern: &str, root: Option<&str>, out: &mut Vec<Effect>) {
    let p = pattern.trim();
    if p.is_empty() {
        return;
    }
    let globby = p.contains(['*', '?', '[', '{']);
    let leaves =
        p.starts_with('/') || p.starts_with('~') || p.split(['/', '\\']).any(|c| c == "..");
    let joined = || {
        let root = root.filter(|r| !r.is_empty()).unwrap_or(".");
        if p.starts_with('/') || p.starts_with('~') {
            p.to_string()
        } else {
            format!("{}/{p}", root.trim_end_matches('/'))
        }
    };
    if leaves || !globby {
        out.push(Effect::Read {
            path: joined(),
            dynamic: globby,
        });
    }
}

/// Every URL in a text (a whole field, or a prompt naming several): each
/// whitespace-separated token holding `scheme:` or `scheme://`, trailing
/// punctuation of prose removed, read as clients read it.
fn urls_in(text: &str) -> Vec<portcullis_shell::url::ParsedUrl> {
    let mut out = Vec::new();
    for token in text.split_whitespace() {
        let token = token.trim_matches(|c: char| {
            matches!(
                c,
                '.' | ',' | ')' | '(' | ']' | '[' | '"' | '\'' | '>' | '<' | ';'
            )
        });
        // A URL may follow other text in the token (`see:https://…`).
        let lower = token.to_ascii_lowercase();
        let start = ["http:", "https:", "file:", "ftp:", "ws:", "wss:"]
            .iter()
            .filter_map(|s| lower.find(s))
            .min();
        if let Some(u) = start.and_then(|i| portcullis_shell::url::parse(&token[i..])) {
            out.push(u);
        }
    }
    out
}

/// The files a patch in Codex's `apply_patch` format writes, deletes or moves.
fn patch_effects(text: &str, out: &mut Vec<Effect>) {
    let mut any = false;
    for line in text.lines() {
        // Codex trims a header line before parsing it: so must we, or an
        // indented `*** Add File:` writes a file nobody judged.
        let line = line.trim();
        let (kind, path) = if let Some(p) = line.strip_prefix("*** Add File: ") {
            ("write", p)
        } else if let Some(p) = line.strip_prefix("*** Update File: ") {
            ("write", p)
        } else if let Some(p) = line.strip_prefix("*** Delete File: ") {
            ("delete", p)
        } else if let Some(p) = line.strip_prefix("*** Move to: ") {
            ("write", p)
        } else {
            continue;
        };
        any = true;
        let path = path.trim().to_string();
        out.push(if kind == "delete" {
            Effect::Delete {
                path,
                dynamic: false,
            }
        } else {
            Effect::Write {
                path,
                dynamic: false,
            }
        });
    }
    if !any {
        out.push(Effect::Opaque {
            reason: "unsupported-syntax".into(),
            text: "a patch that names no file".into(),
        });
    }
}

/// Shell text: every command and effect the analysis found, and the
/// variables it reads.
pub fn shell(text: &str, out: &mut Vec<Effect>, env: &mut Vec<EnvRead>) {
    shell_analysis(portcullis_shell::analyze(text), out, env)
}

fn shell_analysis(a: portcullis_shell::Analysis, out: &mut Vec<Effect>, env: &mut Vec<EnvRead>) {
    for r in a.env_reads {
        if !env.contains(&r) {
            env.push(r);
        }
    }
    for c in a.commands {
        out.push(Effect::Exec {
            program: c.program.clone(),
            argv: c.argv.clone(),
            via: c.via.as_string(),
            command: Box::new(c),
        });
    }
    for e in a.effects {
        out.push(match e {
            portcullis_shell::Effect::Read { path, dynamic } => Effect::Read { path, dynamic },
            portcullis_shell::Effect::Write { path, dynamic } => Effect::Write { path, dynamic },
            portcullis_shell::Effect::Delete { path, dynamic } => Effect::Delete { path, dynamic },
            portcullis_shell::Effect::Move { from, to, dynamic } => {
                Effect::Move { from, to, dynamic }
            }
            portcullis_shell::Effect::Network { program, host } => Effect::Network {
                program: Some(program),
                host,
            },
            portcullis_shell::Effect::Code {
                program,
                source,
                reason,
            } => Effect::Code {
                program,
                source,
                reason,
            },
        });
    }
    for o in a.opaque {
        out.push(Effect::Opaque {
            reason: o.reason.as_str().to_string(),
            text: o.text,
        });
    }
}

fn shell_fields(input: &Value, out: &mut Vec<Effect>, env: &mut Vec<EnvRead>) {
    if let Value::Object(map) = input {
        for (k, v) in map {
            if let (true, Value::String(s)) = (SHELL_FIELDS.contains(&k.as_str()), v) {
                shell(s, out, env);
            }
        }
    }
}

/// How many strings (values and keys) of an untrusted tool's input are read
/// one by one; past it the input is opaque.
const ZERO_TRUST_BUDGET: usize = 4096;

/// Zero-trust reading of an untrusted tool's input: every string — values
/// and object keys, at any depth — is considered. Shell-like fields are
/// shell; URLs (any scheme, any case) are network, or for `file:` a path;
/// path-like strings are paths (judged as writes: the tool may do anything
/// with them), after the normalisation servers apply (surrounding
/// whitespace, `\` separators, percent-encoding); bare names are
/// candidates the decision places against the file system.
fn zero_trust(v: &Value, out: &mut Effects, key: &str, budget: &mut usize) {
    match v {
        Value::String(s) => consider(s, key, out, budget),
        Value::Array(items) => items.iter().for_each(|i| zero_trust(i, out, key, budget)),
        Value::Object(map) => map.iter().for_each(|(k, v)| {
            consider(k, "", out, budget);
            zero_trust(v, out, k, budget);
        }),
        _ => {}
    }
}

fn consider(raw: &str, key: &str, out: &mut Effects, budget: &mut usize) {
    if *budget == 0 {
        return;
    }
    *budget -= 1;
    if *budget == 0 {
        out.items.push(Effect::Opaque {
            reason: "work-limit".into(),
            text: format!("more than {ZERO_TRUST_BUDGET} strings in the arguments"),
        });
        return;
    }
    if SHELL_FIELDS.contains(&key) {
        shell(raw, &mut out.items, &mut out.env_reads);
        return;
    }
    // Servers trim, and some take `\` for a separator.
    let s = raw.trim();
    if s.is_empty() || s.len() > 4096 {
        return;
    }
    if let Some(u) = portcullis_shell::url::parse(s) {
        if u.scheme == "file" {
            out.items.push(Effect::Write {
                path: u.path,
                dynamic: false,
            });
        } else if u.host.is_some() {
            out.items.push(Effect::Network {
                program: None,
                host: u.host,
            });
        }
        return;
    }
    let mut forms = vec![s.to_string()];
    if s.contains('\\') {
        forms.push(s.replace('\\', "/"));
    }
    if let Some(decoded) = percent_decoded_path(s) {
        forms.push(decoded);
    }
    // Control characters inside: each piece may be what a server uses.
    if s.chars().any(char::is_control) {
        forms.extend(
            s.split(char::is_control)
                .map(str::trim)
                .filter(|p| !p.is_empty())
                .map(str::to_string),
        );
    }
    for form in forms {
        if looks_like_path(&form) {
            // A server may expand `$VAR` or `~`: such a path is known only
            // at run time (`$HOME/…` is still placed by the policy).
            out.items.push(Effect::Write {
                dynamic: form.contains(['$', '`']),
                path: form,
            });
        } else if is_bare_name(&form) {
            out.candidates.push(Effect::Write {
                path: form,
                dynamic: false,
            });
        }
    }
}

/// A string that could be a file name in the working directory: one
/// component, no control characters, not too long.
fn is_bare_name(s: &str) -> bool {
    !s.is_empty() && s.len() <= 255 && !s.contains('/') && !s.chars().any(char::is_control)
}

/// A percent-encoded path (`%2f` for `/`), decoded, when the text has one.
fn percent_decoded_path(s: &str) -> Option<String> {
    let lower = s.to_ascii_lowercase();
    if !(lower.contains("%2f") || lower.contains("%5c") || lower.contains("%2e")) {
        return None;
    }
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while let Some(&c) = bytes.get(i) {
        let hex = |b: u8| (b as char).to_digit(16);
        if c == b'%'
            && let (Some(h), Some(l)) = (
                bytes.get(i + 1).and_then(|b| hex(*b)),
                bytes.get(i + 2).and_then(|b| hex(*b)),
            )
        {
            out.push((h * 16 + l) as u8);
            i += 3;
        } else {
            out.push(c);
            i += 1;
        }
    }
    let decoded = String::from_utf8_lossy(&out).replace('\\', "/");
    looks_like_path(&decoded).then_some(decoded)
}

/// `/abs`, `~/x`, `./x`, `../x`, `.`, `..`, or any text with a `/` (spaces
/// included: `my notes/../../.aws/credentials` is a path to a server).
fn looks_like_path(s: &str) -> bool {
    if s.is_empty() || s.len() > 4096 || s.chars().any(char::is_control) {
        return false;
    }
    s.starts_with('/')
        || s.starts_with('~')
        || s == "."
        || s == ".."
        || (s.contains('/') && !s.contains("://"))
}

/// The opaque reason of the shell analysis, for callers comparing.
pub fn is_code_from_file(reason: &str) -> bool {
    reason == OpaqueReason::CodeFromFile.as_str()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tool::ToolRef;

    fn named(name: &str, server: Option<&str>) -> (String, String) {
        let call = ToolCall {
            tool: ToolRef {
                name: name.into(),
                origin: Origin::Mcp,
                server: server.map(str::to_string),
                manifest: None,
            },
            input: serde_json::json!({}),
            cwd: "/w".into(),
        };
        mcp_name(&call).into_parts()
    }

    fn pair(s: &str, t: &str) -> (String, String) {
        (s.to_string(), t.to_string())
    }

    #[test]
    fn an_mcp_calls_tool_name() {
        // The server given is taken whole; the name is read against it.
        assert_eq!(named("mcp__gh__t", Some("gh")), pair("gh", "t"));
        assert_eq!(named("mcp__a__b__t", Some("a__b")), pair("a__b", "t"));
        assert_eq!(
            named("create_issue", Some("gh")),
            pair("gh", "create_issue")
        );
        assert_eq!(
            named("mcp__other__t", Some("gh")),
            pair("gh", "mcp__other__t")
        );
        // Without one: split at the first `__`, prefix or not.
        assert_eq!(named("mcp__gh__a__b", None), pair("gh", "a__b"));
        assert_eq!(named("gh__t", None), pair("gh", "t"));
        assert_eq!(named("mcp____t", None), pair("", "t"));
        assert_eq!(named("mcp__gh", None), pair("", "gh"));
        assert_eq!(named("tool", None), pair("", "tool"));
    }
}
