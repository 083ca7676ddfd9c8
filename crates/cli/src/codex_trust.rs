//! Whether Codex will run the portcullis hook it finds in a `hooks.json`.
//!
//! Codex runs a non-managed hook only once a person trusted it in `/hooks`,
//! and it keys that trust on a hash of the hook's definition: the event, the
//! group's matcher and the one handler (command, timeout, async, status
//! message), serialised as canonical JSON (keys sorted) and hashed with
//! SHA-256 (`sha256:<hex>`). It records the hash in its `config.toml` under
//! `[hooks.state."<hooks file>:pre_tool_use:<group>:<handler>"]` (and
//! `permission_request` for that event). A hook
//! whose definition changed since is "modified" and, like a hook never
//! trusted, silently skipped — Codex then runs every call without portcullis.
//! The hash below is checked against the one Codex itself lists
//! (`hooks/list`'s `currentHash`) in `tests/it/codex_e2e.rs`.

use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};

/// Codex's default for a command hook without a `timeout` (seconds).
const DEFAULT_TIMEOUT_SECS: u64 = 600;

/// Codex's trust in one portcullis hook handler.
#[derive(Debug, Serialize)]
pub struct HookTrust {
    /// Codex's key for the handler in `[hooks.state]`.
    pub key: String,
    /// The hash Codex computes for the handler as it is written now.
    pub hash: String,
    /// `trusted`, `modified` (trusted once, changed since), `untrusted` or
    /// `disabled`.
    pub status: &'static str,
}

/// The events portcullis installs for Codex: (`hooks.json` name, Codex's
/// name in trust keys and hashes).
pub const EVENTS: &[(&str, &str)] = &[
    ("PreToolUse", "pre_tool_use"),
    ("PermissionRequest", "permission_request"),
];

/// The hash Codex keys a command hook's trust on (`event`: Codex's name of
/// the event, `pre_tool_use`).
pub fn hook_hash(event: &str, matcher: Option<&str>, handler: &Value) -> String {
    let timeout = handler["timeout"]
        .as_u64()
        .unwrap_or(DEFAULT_TIMEOUT_SECS)
        .max(1);
    let mut normalized = Map::new();
    normalized.insert("type".into(), json!("command"));
    normalized.insert("command".into(), handler["command"].clone());
    normalized.insert("timeout".into(), json!(timeout));
    normalized.insert(
        "async".into(),
        json!(handler["async"].as_bool().unwrap_or(false)),
    );
    if let Some(message) = handler["statusMessage"].as_str() {
        normalized.insert("statusMessage".into(), json!(message));
    }
    let mut identity = Map::new();
    identity.insert("event_name".into(), json!(event));
    if let Some(m) = matcher {
        identity.insert("matcher".into(), json!(m));
    }
    identity.insert("hooks".into(), json!([normalized]));
    // A JSON value always serialises; were it not to, no hash would match
    // and the hook would read as not trusted (doctor fails: fail closed).
    let bytes = serde_json::to_vec(&canonical(&Value::Object(identity))).unwrap_or_default();
    let digest = Sha256::digest(&bytes);
    let mut hex = String::with_capacity(7 + 64);
    hex.push_str("sha256:");
    for b in digest {
        hex.push_str(&format!("{b:02x}"));
    }
    hex
}

/// The value with every object's keys in sorted order, whatever map type
/// `serde_json` was built with.
fn canonical(value: &Value) -> Value {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            let mut sorted = Map::new();
            for k in keys {
                sorted.insert(k.clone(), canonical(&map[k]));
            }
            Value::Object(sorted)
        }
        Value::Array(items) => Value::Array(items.iter().map(canonical).collect()),
        other => other.clone(),
    }
}

/// Codex's `config.toml`: `$CODEX_HOME/config.toml`, else `~/.codex/config.toml`.
fn codex_config() -> toml::Table {
    let dir = std::env::var_os("CODEX_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".codex")));
    dir.and_then(|d| std::fs::read_to_string(d.join("config.toml")).ok())
        .and_then(|t| t.parse().ok())
        .unwrap_or_default()
}

/// What Codex will do with the portcullis hooks in `hooks_file` (parsed as
/// `root`): one entry per handler `is_ours` accepts, and whether Codex reads
/// the project's `.codex/` at all (`None` for the user's own file).
pub fn check(
    hooks_file: &Path,
    root: &Value,
    project: Option<&Path>,
    is_ours: impl Fn(&str) -> bool,
) -> (Vec<HookTrust>, Option<bool>) {
    let config = codex_config();
    let project_trusted = project.map(|p| {
        config
            .get("projects")
            .and_then(|projects| projects.get(p.to_string_lossy().as_ref()))
            .and_then(|p| p.get("trust_level"))
            .and_then(toml::Value::as_str)
            == Some("trusted")
    });
    let states = config
        .get("hooks")
        .and_then(|h| h.get("state"))
        .and_then(toml::Value::as_table);
    // Codex names the file by its absolute path; a symlinked directory may
    // be recorded either way.
    let canonical_file = std::fs::canonicalize(hooks_file).ok();
    let names: Vec<String> = std::iter::once(hooks_file)
        .chain(canonical_file.as_deref())
        .map(|f| f.display().to_string())
        .collect();
    let mut found = Vec::new();
    for (event, codex_event) in EVENTS {
        let groups = root
            .get("hooks")
            .and_then(|h| h.get(*event))
            .and_then(Value::as_array)
            .into_iter()
            .flatten();
        for (g, group) in groups.enumerate() {
            let matcher = group.get("matcher").and_then(Value::as_str);
            let handlers = group
                .get("hooks")
                .and_then(Value::as_array)
                .into_iter()
                .flatten();
            for (h, handler) in handlers.enumerate() {
                let command = handler
                    .get("command")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                if !is_ours(command) {
                    continue;
                }
                let hash = hook_hash(codex_event, matcher, handler);
                let keys: Vec<String> = names
                    .iter()
                    .map(|n| format!("{n}:{codex_event}:{g}:{h}"))
                    .collect();
                let state = keys
                    .iter()
                    .find_map(|k| states.and_then(|s| s.get(k.as_str())));
                let status = match state {
                    Some(s) if s.get("enabled").and_then(toml::Value::as_bool) == Some(false) => {
                        "disabled"
                    }
                    Some(s) => match s.get("trusted_hash").and_then(toml::Value::as_str) {
                        Some(t) if t == hash => "trusted",
                        Some(_) => "modified",
                        None => "untrusted",
                    },
                    None => "untrusted",
                };
                found.push(HookTrust {
                    key: keys.first().cloned().unwrap_or_default(),
                    hash,
                    status,
                });
            }
        }
    }
    (found, project_trusted)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The identity Codex serialises, written out by hand: a change to the
    /// field names, their order or the defaults changes this hash.
    #[test]
    fn the_hash_is_sha256_of_the_sorted_identity() {
        let handler =
            json!({"type": "command", "command": "portcullis hook codex", "timeout": 600});
        let text = r#"{"event_name":"pre_tool_use","hooks":[{"async":false,"command":"portcullis hook codex","timeout":600,"type":"command"}],"matcher":"*"}"#;
        let digest = Sha256::digest(text.as_bytes());
        let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(
            hook_hash("pre_tool_use", Some("*"), &handler),
            format!("sha256:{hex}")
        );
    }

    #[test]
    fn an_absent_timeout_is_codexs_default() {
        let with = json!({"type": "command", "command": "x", "timeout": 600});
        let without = json!({"type": "command", "command": "x"});
        let hash = |h: &Value| hook_hash("pre_tool_use", None, h);
        assert_eq!(hash(&with), hash(&without));
        let other = json!({"type": "command", "command": "x", "timeout": 60});
        assert_ne!(hash(&with), hash(&other));
        assert_ne!(
            hook_hash("pre_tool_use", None, &with),
            hook_hash("pre_tool_use", Some("*"), &with)
        );
    }
}
