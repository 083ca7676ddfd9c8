//! What the bridge knows about the MCP clients that call it: how long each
//! waits for a tool call's answer, by the name it gives in `initialize`
//! (`clientInfo.name`). A held call must be answered before the client gives
//! up, or the client reports a failure while the call may still run once a
//! person approves it.

use std::time::Duration;

/// `(clientInfo.name, seconds the client waits for a tool call)`; `None`: no
/// limit that matters for a person (Claude Code: `MCP_TOOL_TIMEOUT` about 28
/// hours, 30 minutes idle on stdio).
const CLIENT_TIMEOUTS: &[(&str, Option<u64>)] = &[
    ("claude-code", None),
    // Codex: `tool_timeout_sec`, 60 s unless configured per server.
    ("codex-mcp-client", Some(60)),
    // Gemini CLI: `MCP_DEFAULT_TIMEOUT_MSEC`, 10 minutes unless the server's
    // `timeout` says otherwise (`packages/core/src/tools/mcp-client.ts`).
    ("gemini-cli-mcp-client", Some(600)),
];

/// A client not in the table: assume it waits a minute, as Codex does.
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hold_ends_before_the_client_gives_up() {
        let two_minutes = Duration::from_secs(120);
        assert_eq!(
            hold_budget(Some("codex-mcp-client"), two_minutes),
            Duration::from_secs(54)
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
