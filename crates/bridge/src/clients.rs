//! What the bridge knows about the MCP clients that call it, by the name each
//! gives in `initialize` (`clientInfo.name`):
//! - how long it waits for a tool call's answer: a held call must be answered
//!   before the client gives up, or the client reports a failure while the
//!   call may still run once a person approves it;
//! - where in a `tools/call`'s `_meta` it names the call (the id its hook
//!   receives too) and the agent's session.

use std::time::Duration;

/// `(clientInfo.name, seconds the client waits for a tool call)`; `None`: no
/// limit that matters for a person (Claude Code: `MCP_TOOL_TIMEOUT` about 28
/// hours, 30 minutes idle on stdio).
const CLIENT_TIMEOUTS: &[(&str, Option<u64>)] = &[
    ("claude-code", None),
    // Codex: `tool_timeout_sec`, 300 s unless configured per server
    // (observed with Codex 0.171.0: "timed out awaiting tools/call after 300s").
    ("codex-mcp-client", Some(300)),
    // Gemini CLI: `MCP_DEFAULT_TIMEOUT_MSEC`, 10 minutes unless the server's
    // `timeout` says otherwise (`packages/core/src/tools/mcp-client.ts`).
    ("gemini-cli-mcp-client", Some(600)),
];

/// A client not in the table: assume it waits a minute.
const UNKNOWN_CLIENT_TIMEOUT_SECS: u64 = 60;

/// How long the client named `name` waits for a tool call's answer.
pub fn tool_timeout(name: Option<&str>) -> Option<Duration> {
    let secs = match CLIENT_TIMEOUTS.iter().find(|(n, _)| Some(*n) == name) {
        Some((_, secs)) => *secs,
        None => Some(UNKNOWN_CLIENT_TIMEOUT_SECS),
    };
    secs.map(Duration::from_secs)
}

/// How long the bridge may hold a call of that client: `wanted`, but ending
/// a margin (a tenth of the client's timeout, at least 5 s) before the
/// client gives up.
pub fn hold_budget(name: Option<&str>, wanted: Duration) -> Duration {
    match tool_timeout(name) {
        None => wanted,
        Some(timeout) => {
            let margin = (timeout / 10).max(Duration::from_secs(5));
            wanted.min(timeout.saturating_sub(margin))
        }
    }
}

/// Where a client names its call and its session in a `tools/call`'s
/// `_meta`: `(clientInfo.name or any client, call id key, session key)`.
const CALL_META: &[(Option<&str>, &str, Option<&str>)] = &[
    // Claude Code 2.1.197: its hook's `tool_use_id`; the session is in the
    // server's environment instead (`CLAUDE_CODE_SESSION_ID`). The key is
    // Claude's own namespace, so any client may carry it.
    (None, "claudecode/toolUseId", None),
    // Codex 0.171.0 (observed): `callId` is its hook's `tool_use_id` (the
    // model's call id) and `threadId` its hook's `session_id`.
    (Some("codex-mcp-client"), "callId", Some("threadId")),
];

/// The call id and the session a `tools/call` from client `name` carries;
/// `meta` reads one `_meta` key as a string.
pub fn call_identity(
    name: Option<&str>,
    meta: impl Fn(&str) -> Option<String>,
) -> (Option<String>, Option<String>) {
    CALL_META
        .iter()
        .filter(|(client, _, _)| client.is_none() || *client == name)
        .map(|(_, call, session)| (meta(call), session.and_then(&meta)))
        .find(|(call, session)| call.is_some() || session.is_some())
        .unwrap_or((None, None))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_call_is_named_where_its_client_names_it() {
        let meta = |pairs: &'static [(&'static str, &'static str)]| {
            move |k: &str| {
                pairs
                    .iter()
                    .find(|(key, _)| *key == k)
                    .map(|(_, v)| v.to_string())
            }
        };
        let codex = meta(&[("callId", "call_1"), ("threadId", "thread-9")]);
        assert_eq!(
            call_identity(Some("codex-mcp-client"), codex),
            (Some("call_1".into()), Some("thread-9".into()))
        );
        // Another client's `callId`/`threadId` name nothing: keys are the
        // client's own.
        assert_eq!(call_identity(Some("other"), codex), (None, None));
        assert_eq!(call_identity(None, codex), (None, None));
        let claude = meta(&[("claudecode/toolUseId", "toolu_1")]);
        assert_eq!(
            call_identity(Some("claude-code"), claude),
            (Some("toolu_1".into()), None)
        );
        assert_eq!(call_identity(None, claude), (Some("toolu_1".into()), None));
    }

    #[test]
    fn a_hold_ends_before_the_client_gives_up() {
        let two_minutes = Duration::from_secs(120);
        assert_eq!(
            hold_budget(Some("codex-mcp-client"), two_minutes),
            two_minutes
        );
        assert_eq!(
            hold_budget(Some("codex-mcp-client"), Duration::from_secs(600)),
            Duration::from_secs(270)
        );
        assert_eq!(hold_budget(Some("claude-code"), two_minutes), two_minutes);
        assert_eq!(
            hold_budget(Some("gemini-cli-mcp-client"), two_minutes),
            two_minutes
        );
        assert_eq!(
            hold_budget(Some("gemini-cli-mcp-client"), Duration::from_secs(900)),
            Duration::from_secs(540)
        );
        assert_eq!(
            hold_budget(Some("something-new"), two_minutes),
            Duration::from_secs(54)
        );
        assert_eq!(
            hold_budget(None, Duration::from_secs(20)),
            Duration::from_secs(20)
        );
    }
}
