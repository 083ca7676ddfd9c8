//! The public data types: what goes into the store and what comes out.

use std::fmt;
use std::str::FromStr;

use rusqlite::types::{FromSql, FromSqlError, FromSqlResult, ToSql, ToSqlOutput, ValueRef};
use serde::{Deserialize, Serialize};

/// A word that names no variant of one of the store's enums (`Op`, `AgentKind` …).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, thiserror::Error)]
#[error("unknown {what} `{value}` (expected one of: {})", expected.join(", "))]
pub struct ParseError {
    /// What was being parsed (`operation`, `agent kind` …).
    pub what: &'static str,
    /// The text that did not parse.
    pub value: String,
    /// The words that would have.
    pub expected: &'static [&'static str],
}

/// An enum stored and shown as one lowercase word: serde, `as_str`, `Display`,
/// `FromStr` and the SQLite conversions all use the same word.
macro_rules! word_enum {
    ($(#[$meta:meta])* $name:ident, $what:literal { $($(#[$vmeta:meta])* $variant:ident => $word:literal),+ $(,)? }) => {
        $(#[$meta])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
        pub enum $name {
            $($(#[$vmeta])* #[serde(rename = $word)] $variant),+
        }

        impl $name {
            /// Every variant, in declaration order.
            pub const ALL: &'static [$name] = &[$($name::$variant),+];

            /// The lowercase word for this variant.
            pub fn as_str(self) -> &'static str {
                match self {
                    $($name::$variant => $word),+
                }
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl FromStr for $name {
            type Err = ParseError;

            fn from_str(s: &str) -> Result<Self, ParseError> {
                match s {
                    $($word => Ok($name::$variant),)+
                    _ => Err(ParseError { what: $what, value: s.to_owned(), expected: &[$($word),+] }),
                }
            }
        }

        impl ToSql for $name {
            fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
                Ok(ToSqlOutput::from(self.as_str()))
            }
        }

        impl FromSql for $name {
            fn column_result(value: ValueRef<'_>) -> FromSqlResult<Self> {
                value.as_str()?.parse().map_err(|e| FromSqlError::Other(Box::new(e)))
            }
        }
    };
}

word_enum! {
    /// What kind of agent a session is (its principal). Defaults to `main`.
    #[derive(Default)]
    AgentKind, "agent kind" {
        /// The agent a person is talking to. Has no parent.
        #[default]
        Main => "main",
        /// An agent started by another agent for a task. Always has a parent.
        Subagent => "subagent",
        /// An agent running in the background (a parent is optional).
        Background => "background",
        /// A step of a workflow run. Always names its workflow.
        Workflow => "workflow",
        /// A scheduled run.
        Scheduled => "scheduled",
    }
}

word_enum! {
    /// How long a grant lasts.
    GrantScope, "grant scope" {
        /// One use: consumed atomically by the first decision that uses it.
        Once => "once",
        /// Until the session ends (revoked or expired).
        Session => "session",
        /// Durable on this device, every session; read-only operations only.
        Device => "device",
    }
}

word_enum! {
    /// The operation a grant allows or a request asks for.
    Op, "operation" {
        /// Read a file or list a folder.
        Read => "read",
        /// Create or modify.
        Write => "write",
        /// Remove.
        Delete => "delete",
        /// Rename or move.
        Move => "move",
        /// Run a command.
        Exec => "exec",
    }
}

word_enum! {
    /// How a person answered a permission request.
    Resolution, "resolution" {
        /// Allow this one call.
        Once => "once",
        /// Allow for the rest of the session.
        Session => "session",
        /// Always allow on this device (read-only requests only).
        Device => "device",
        /// Deny.
        Deny => "deny",
    }
}

word_enum! {
    /// Where a permission request stands.
    RequestStatus, "request status" {
        /// Waiting for a person.
        Pending => "pending",
        /// Approved: a grant was made.
        Approved => "approved",
        /// Denied: no grant.
        Denied => "denied",
    }
}

word_enum! {
    /// Where a pinned MCP tool definition stands.
    PinStatus, "pin status" {
        /// A person (or trust on first use) approved it: the tool is listed.
        Approved => "approved",
        /// Seen, differs from what was approved: withheld until a person decides.
        Pending => "pending",
        /// A person refused it: withheld.
        Rejected => "rejected",
    }
}

impl Resolution {
    /// The grant scope this resolution creates, `None` for [`Resolution::Deny`].
    pub fn grant_scope(self) -> Option<GrantScope> {
        match self {
            Resolution::Once => Some(GrantScope::Once),
            Resolution::Session => Some(GrantScope::Session),
            Resolution::Device => Some(GrantScope::Device),
            Resolution::Deny => None,
        }
    }
}

/// What a grant or request is about: a canonical path (one file, or a folder
/// and everything below it) or a command pattern.
///
/// Stored as JSON text: `{"kind":"path","canonical":"/x","folder":true}` or
/// `{"kind":"command","pattern":"git status"}` or
/// `{"kind":"tool","name":"mcp__github__get_issue"}` or
/// `{"kind":"call","call":"…","cwd":"/p","effects":[…]}`. The store does not interpret
/// it beyond checking that a path is absolute and a pattern or name not empty;
/// matching is the engine's.
// A whole call is much larger than a path or a name; a target is read and
// written a few at a time (a request, a grant), so the size does not matter.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum GrantTarget {
    /// A canonical path (symlinks resolved when the grant was made).
    Path {
        /// The canonical absolute path.
        canonical: String,
        /// `true`: the folder and everything below it; `false`: this one file.
        folder: bool,
    },
    /// A command pattern, in the policy's rule syntax.
    Command {
        /// The pattern.
        pattern: String,
    },
    /// One tool by its full name (an MCP tool, `mcp__server__tool`, or another
    /// tool judged by name): the call itself, not what its input names.
    Tool {
        /// The tool's name.
        name: String,
    },
    /// One tool call as the agent sent it, and every effect of it the policy
    /// refused, as they resolved when it was asked: what a person approving a
    /// permission request sees and approves. It covers that very call again
    /// (the same text in the same directory) while its refused effects are
    /// still these — no other call, and not this one once a path it names
    /// resolves elsewhere.
    Call {
        /// The tool called.
        tool: String,
        /// The call, canonical: a shell tool's command text, or another
        /// tool's input as canonical JSON (without its cosmetic fields).
        call: String,
        /// The working directory it was made in (canonical).
        cwd: String,
        /// Every refused effect.
        effects: Vec<CallEffect>,
        /// The call as the agent sent it, to judge it again when a person
        /// offers a rule instead of approving the call itself.
        #[serde(default)]
        input: serde_json::Value,
        /// The tool's origin (`core`, `mcp` …).
        #[serde(default)]
        origin: String,
        /// The MCP server, for an MCP tool.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        server: Option<String>,
        /// The agent whose tool table judged it (`claude-code` …).
        #[serde(default)]
        table: String,
        /// Rules a person may grant instead of the call (`Bash(npm install *)`,
        /// `Read(/home/u/Downloads/**)`), each checked to cover the call when
        /// the request was raised.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        rules: Vec<String>,
        /// What the front door knew of the tool when it was judged (the MCP
        /// bridge: the pinned definition's hints, as a policy `Manifest`), so
        /// that it is judged again the same way.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        manifest: Option<serde_json::Value>,
    },
}

/// One refused effect of a [`GrantTarget::Call`].
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct CallEffect {
    /// What identifies it when the call is judged again (the engine's:
    /// the operation and the canonical path, or the effect itself).
    pub key: String,
    /// As people read it: `read /home/u/.aws/credentials`, `network x.example`.
    pub what: String,
    /// Its risk class (`secret-read`, `hazard`, `network` …: the policy's
    /// `Risk`).
    #[serde(default)]
    pub risk: String,
    /// The reason code that refused it.
    pub code: String,
    /// `ask` or `deny`.
    pub verdict: String,
    /// Why it was refused, in words.
    pub reason: String,
}

/// As people read it: `/a/file`, `/a/folder/**`, `Bash(pattern)`, a tool's name.
impl fmt::Display for GrantTarget {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GrantTarget::Path {
                canonical,
                folder: true,
            } => write!(f, "{canonical}/**"),
            GrantTarget::Path { canonical, .. } => f.write_str(canonical),
            GrantTarget::Command { pattern } => write!(f, "Bash({pattern})"),
            GrantTarget::Tool { name } => f.write_str(name),
            GrantTarget::Call { call, .. } => f.write_str(call),
        }
    }
}

impl GrantTarget {
    pub(crate) fn to_json(&self) -> serde_json::Result<String> {
        serde_json::to_string(self)
    }

    /// Why the target is not a valid one (a relative path, an empty tool …).
    pub fn check(&self) -> Result<(), String> {
        match self {
            GrantTarget::Path { canonical, .. } => {
                if !canonical.starts_with('/') {
                    return Err(format!("path `{canonical}` is not canonical (absolute)"));
                }
                if canonical.contains('\0') {
                    return Err("path contains a NUL byte".into());
                }
            }
            GrantTarget::Command { pattern } => {
                if pattern.trim().is_empty() {
                    return Err("command pattern is empty".into());
                }
            }
            GrantTarget::Tool { name } => {
                if name.is_empty() || name.contains(char::is_whitespace) {
                    return Err(format!("tool name `{name}` is empty or has spaces"));
                }
            }
            GrantTarget::Call {
                tool,
                call,
                cwd,
                effects,
                ..
            } => {
                if tool.is_empty() || call.is_empty() {
                    return Err("the call is empty".into());
                }
                if !cwd.starts_with('/') {
                    return Err(format!("working directory `{cwd}` is not absolute"));
                }
                if effects.is_empty() {
                    return Err("a call grant names no refused effect".into());
                }
            }
        }
        Ok(())
    }
}

impl ToSql for GrantTarget {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        let json = self
            .to_json()
            .map_err(|e| rusqlite::Error::ToSqlConversionFailure(Box::new(e)))?;
        Ok(ToSqlOutput::from(json))
    }
}

impl FromSql for GrantTarget {
    fn column_result(value: ValueRef<'_>) -> FromSqlResult<Self> {
        serde_json::from_str(value.as_str()?).map_err(|e| FromSqlError::Other(Box::new(e)))
    }
}

/// A session to register.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct NewSession {
    /// The session id (as the agent names it). 1–200 bytes, no whitespace,
    /// control characters or `/`.
    pub id: String,
    /// The agent program (`claude-code`, `codex` …), informational.
    pub agent: Option<String>,
    /// The session's working directory, informational.
    pub cwd: Option<String>,
    /// The parent session, which must exist and be active.
    pub parent: Option<String>,
    /// The principal kind.
    pub kind: AgentKind,
    /// The workflow this session belongs to. Inherited from the parent when
    /// `None`; a child can never name a different workflow than its parent.
    pub workflow: Option<String>,
    /// Lifetime in seconds; the session expires at `created_at + ttl_secs`
    /// (never later than its parent).
    pub ttl_secs: Option<i64>,
}

/// A registered session and its token. The token is shown once: the store
/// keeps only its BLAKE3 hash.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Registered {
    /// The session as stored.
    pub session: Session,
    /// 32 random bytes, hex: the proof of this session for HTTP callers.
    pub token: String,
}

/// A session (and its principal: kind, parent, workflow).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Session {
    /// The session id.
    pub id: String,
    /// The agent program, informational.
    pub agent: Option<String>,
    /// The working directory, informational.
    pub cwd: Option<String>,
    /// The parent session.
    pub parent: Option<String>,
    /// The principal kind.
    pub kind: AgentKind,
    /// The workflow it belongs to.
    pub workflow: Option<String>,
    /// When it was registered (unix seconds).
    pub created_at: i64,
    /// When it stops being active (unix seconds), if ever.
    pub expires_at: Option<i64>,
    /// When it was revoked (unix seconds).
    pub revoked_at: Option<i64>,
}

impl Session {
    /// Not revoked and not expired at `now` (a session is expired from
    /// `expires_at` on).
    pub fn is_active(&self, now: i64) -> bool {
        self.revoked_at.is_none() && self.expires_at.is_none_or(|e| now < e)
    }
}

/// A grant to add.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct NewGrant {
    /// The session it belongs to; `None` exactly for [`GrantScope::Device`].
    pub session: Option<String>,
    /// How long it lasts.
    pub scope: GrantScope,
    /// The operation it allows.
    pub op: Op,
    /// What it allows the operation on.
    pub target: GrantTarget,
    /// When it stops being usable (unix seconds), if ever.
    pub expires_at: Option<i64>,
    /// Who approved it (a person, `cli`, a request's approver …). Not empty.
    pub approver: String,
    /// The permission request it answers, if any.
    pub request: Option<i64>,
}

/// A grant as stored.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Grant {
    /// Its id.
    pub id: i64,
    /// The session it belongs to; `None` for device grants.
    pub session: Option<String>,
    /// How long it lasts.
    pub scope: GrantScope,
    /// The operation it allows.
    pub op: Op,
    /// What it allows the operation on.
    pub target: GrantTarget,
    /// When it stops being usable (unix seconds).
    pub expires_at: Option<i64>,
    /// Who approved it.
    pub approver: String,
    /// The request it answers.
    pub request: Option<i64>,
    /// When it was made (unix seconds).
    pub created_at: i64,
    /// When a once-grant was used.
    pub consumed_at: Option<i64>,
    /// When it was revoked.
    pub revoked_at: Option<i64>,
}

impl Grant {
    /// Usable at `now`: not revoked, not consumed (once), not expired.
    pub fn is_active(&self, now: i64) -> bool {
        self.revoked_at.is_none()
            && self.consumed_at.is_none()
            && self.expires_at.is_none_or(|e| now < e)
    }
}

/// A permission request to raise (DESIGN §5's structured permission-denied event).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct NewRequest {
    /// The session that asked. Must exist.
    pub session: String,
    /// The tool that was called.
    pub tool: String,
    /// The operation that was refused.
    pub op: Op,
    /// The canonical path or command.
    pub target: GrantTarget,
    /// Why it was refused (a reason code or sentence; never file contents).
    pub reason: String,
    /// Whether a person may approve it at all.
    pub eligible: bool,
    /// The policy scope that refused it.
    pub policy_scope: String,
    /// The resolutions to offer, safest first. [`Resolution::Device`] only for reads.
    pub suggested: Vec<Resolution>,
    /// How long a `once` grant made from it waits for the retry (`None`:
    /// [`crate::ONCE_GRANT_TTL_SECS`]).
    pub once_ttl_secs: Option<i64>,
    /// The enrolled device whose call raised it: a device-wide approval is
    /// delivered to that device, never made a grant in this store.
    #[serde(default)]
    pub device: Option<String>,
}

/// A permission request as stored.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Request {
    /// Its id.
    pub id: i64,
    /// The session that asked.
    pub session: String,
    /// The tool that was called.
    pub tool: String,
    /// The operation that was refused.
    pub op: Op,
    /// The canonical path or command.
    pub target: GrantTarget,
    /// Why it was refused.
    pub reason: String,
    /// Whether a person may approve it.
    pub eligible: bool,
    /// The policy scope that refused it.
    pub policy_scope: String,
    /// The resolutions to offer, safest first.
    pub suggested: Vec<Resolution>,
    /// How many identical requests collapsed into this one.
    pub count: i64,
    /// When it was first raised.
    pub created_at: i64,
    /// When it was last raised.
    pub last_seen: i64,
    /// Where it stands.
    pub status: RequestStatus,
    /// Who resolved it.
    pub resolved_by: Option<String>,
    /// When it was resolved.
    pub resolved_at: Option<i64>,
    /// The grant its approval made.
    pub grant: Option<i64>,
    /// Until when (unix seconds) an agent's call waits for the answer: the
    /// latest deadline a hook or the bridge stored; `None` if none waited.
    pub held_until: Option<i64>,
    /// A denial that stands for the same call's next attempts ([`Denial`]):
    /// the person's message to the agent.
    pub deny_message: Option<String>,
    /// Until when that denial stands (`None` with a message: the session's life).
    pub deny_until: Option<i64>,
    /// Whether the denial stands for the same call's next attempts.
    pub deny_standing: bool,
    /// How long a `once` grant made from it waits for the retry (`None`:
    /// [`crate::ONCE_GRANT_TTL_SECS`]).
    pub once_ttl_secs: Option<i64>,
    /// The enrolled device whose call raised it.
    pub device: Option<String>,
    /// When that device confirmed it holds the device-wide approval.
    pub delivered_at: Option<i64>,
}

/// How a person's denial reaches the agent: the same call attempted again in
/// the same session is refused with `message`, without asking anyone, until
/// `until` (`None`: for the session's life).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Denial {
    /// What the agent reads as the refusal (the person's words).
    pub message: String,
    /// Until when (unix seconds); `None`: as long as the session lives.
    pub until: Option<i64>,
}

word_enum! {
    /// What an audit row records. Its text is part of the hashed row, so a
    /// variant's word never changes once written; a new kind is a new variant.
    AuditKind, "audit kind" {
        /// An agent's call judged without a grant.
        Decision => "decision",
        /// An agent's call judged with the help of one or more grants (named
        /// in the row).
        GrantUsed => "grant-used",
        /// A person approved a request or made a grant.
        Approval => "approval",
        /// A person denied a request.
        Denial => "denial",
        /// A person revoked a grant or a session.
        Revoke => "revoke",
        /// An MCP tool definition pinned on first use.
        ToolPinned => "tool-pinned",
        /// A changed MCP tool definition withheld until a person decides.
        ToolWithheld => "tool-withheld",
        /// A person approved a pending MCP tool definition.
        ToolApproved => "tool-approved",
        /// A person rejected a pending MCP tool definition.
        ToolRejected => "tool-rejected",
        /// A person enrolled a device with the team server.
        DeviceEnrolled => "device-enrolled",
        /// A person revoked a device's credential.
        DeviceRevoked => "device-revoked",
    }
}

word_enum! {
    /// The verdict an audit row records (the policy's `Verdict`, which the
    /// store does not depend on; the engine converts).
    AuditVerdict, "audit verdict" {
        /// Allowed.
        Allow => "allow",
        /// A person must decide.
        Ask => "ask",
        /// Refused.
        Deny => "deny",
    }
}

/// One audit event. `detail` carries reason codes, effect kinds with canonical
/// paths and rule ids — never file contents, secrets or tokens.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct AuditEvent {
    /// What happened.
    pub kind: AuditKind,
    /// The session concerned.
    pub session: Option<String>,
    /// The tool concerned.
    pub tool: Option<String>,
    /// The verdict, for a decision.
    pub verdict: Option<AuditVerdict>,
    /// Structured detail (at most 64 KiB of JSON).
    pub detail: serde_json::Value,
}

/// One row of the audit log.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct AuditRow {
    /// Its id: 1, 2, 3 … without gaps.
    pub id: i64,
    /// When it was written (unix seconds).
    pub at: i64,
    /// The event.
    pub event: AuditEvent,
    /// The previous row's hash (hex); 64 zeros for the first row.
    pub prev_hash: String,
    /// BLAKE3(prev_hash bytes ‖ canonical row JSON), hex.
    pub hash: String,
}

/// The result of [`crate::Store::verify_audit`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "lowercase")]
pub enum AuditCheck {
    /// Every row links to the one before and hashes to its stored hash.
    Intact {
        /// How many rows were checked.
        rows: u64,
    },
    /// The first row that does not.
    Broken {
        /// Its id (for missing rows: the first row after the gap, or the first
        /// missing id when rows were cut from the end).
        row: i64,
        /// What did not match.
        why: String,
    },
}

impl AuditCheck {
    /// Whether the chain holds.
    pub fn is_intact(&self) -> bool {
        matches!(self, AuditCheck::Intact { .. })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_round_trip_through_serde_and_from_str() {
        for op in Op::ALL {
            let json = serde_json::to_string(op).unwrap();
            assert_eq!(json, format!("\"{}\"", op.as_str()));
            assert_eq!(op.as_str().parse::<Op>().unwrap(), *op);
        }
        for k in AgentKind::ALL {
            assert_eq!(k.as_str().parse::<AgentKind>().unwrap(), *k);
        }
        let err = "Write".parse::<Op>().unwrap_err();
        assert_eq!(
            err.to_string(),
            "unknown operation `Write` (expected one of: read, write, delete, move, exec)"
        );
    }

    #[test]
    fn audit_kinds_keep_the_text_they_were_hashed_with() {
        // The words written before `AuditKind` existed, literally: a row's
        // hash covers its kind's text, so these never change.
        let old = [
            "decision",
            "grant-used",
            "approval",
            "denial",
            "revoke",
            "tool-pinned",
            "tool-withheld",
            "tool-approved",
            "tool-rejected",
            "device-enrolled",
            "device-revoked",
        ];
        assert_eq!(AuditKind::ALL.len(), old.len(), "a kind added or removed");
        for (k, word) in AuditKind::ALL.iter().zip(old) {
            assert_eq!(k.as_str(), word);
            assert_eq!(k.to_string(), word);
            assert_eq!(serde_json::to_string(k).unwrap(), format!("\"{word}\""));
            assert_eq!(word.parse::<AuditKind>().unwrap(), *k);
            assert_eq!(
                serde_json::from_str::<AuditKind>(&format!("\"{word}\"")).unwrap(),
                *k
            );
        }
        for bad in [
            "",
            "Decision",
            "grant_used",
            "expiry",
            "session",
            " decision",
        ] {
            let err = bad.parse::<AuditKind>().unwrap_err();
            assert_eq!(err.value, bad);
            assert!(err.to_string().starts_with("unknown audit kind"), "{err}");
        }
        for (v, word) in AuditVerdict::ALL.iter().zip(["allow", "ask", "deny"]) {
            assert_eq!(v.as_str(), word);
            assert_eq!(serde_json::to_string(v).unwrap(), format!("\"{word}\""));
            assert_eq!(word.parse::<AuditVerdict>().unwrap(), *v);
        }
        assert_eq!(AuditVerdict::ALL.len(), 3);
        assert!("Allow".parse::<AuditVerdict>().is_err());
    }

    #[test]
    fn target_json_is_tagged_and_stable() {
        let t = GrantTarget::Path {
            canonical: "/d".into(),
            folder: true,
        };
        assert_eq!(
            t.to_json().unwrap(),
            r#"{"kind":"path","canonical":"/d","folder":true}"#
        );
        let c = GrantTarget::Command {
            pattern: "git status".into(),
        };
        assert_eq!(
            c.to_json().unwrap(),
            r#"{"kind":"command","pattern":"git status"}"#
        );
        assert!(
            GrantTarget::Path {
                canonical: "rel".into(),
                folder: false
            }
            .check()
            .is_err()
        );
        assert!(
            GrantTarget::Command {
                pattern: " ".into()
            }
            .check()
            .is_err()
        );
    }

    #[test]
    fn session_activity() {
        let mut s = Session {
            id: "s".into(),
            agent: None,
            cwd: None,
            parent: None,
            kind: AgentKind::Main,
            workflow: None,
            created_at: 0,
            expires_at: Some(10),
            revoked_at: None,
        };
        assert!(s.is_active(9));
        assert!(!s.is_active(10));
        s.expires_at = None;
        assert!(s.is_active(i64::MAX));
        s.revoked_at = Some(5);
        assert!(!s.is_active(0));
    }
}

/// A pinned definition of one MCP tool.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Pin {
    pub server: String,
    pub tool: String,
    /// BLAKE3 (hex) of the canonical JSON of the definition.
    pub hash: String,
    /// The definition as seen (canonical JSON).
    pub definition: serde_json::Value,
    pub status: PinStatus,
    pub created_at: i64,
    /// `first-use` for trust on first use, else who decided.
    pub decided_by: Option<String>,
    pub decided_at: Option<i64>,
}

/// What a tool's current definition is, against its pins.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "state", rename_all = "kebab-case")]
pub enum PinCheck {
    /// This definition is approved: list the tool.
    Approved,
    /// First sight, trusted on first use (now approved).
    FirstUse,
    /// Not approved (changed since the approved one, or first sight when
    /// unpinned servers are refused): withhold; `previous` is the last
    /// approved definition, if any.
    Withheld {
        previous: Option<Box<Pin>>,
        pending: Box<Pin>,
    },
    /// A person rejected this definition: withhold.
    Rejected,
}
