//! Why an effect got its verdict, as a closed set of codes.
//!
//! A [`ReasonCode`] is what a front door shows (`reasons[].code` in JSON, the
//! code in `explain`), what the audit log records, and what the engine reads
//! to decide whether a person's grant may override a refusal
//! ([`ReasonCode::overridable`]). Its text form (`as_str`, serde, `Display`)
//! is the stable kebab-case code; it never changes for an existing variant.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::Verdict;

/// Declares the codes once: the enum, [`ReasonCode::ALL`] and
/// [`ReasonCode::as_str`] come from the same list, so none can miss a code.
macro_rules! reason_codes {
    ($($(#[$doc:meta])* $variant:ident = $text:literal,)+) => {
        /// A stable reason code. Serialized as its kebab-case text (`rule-allow`).
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
        #[serde(rename_all = "kebab-case")]
        pub enum ReasonCode {
            $($(#[$doc])* $variant,)+
        }

        impl ReasonCode {
            /// Every code, in declaration order.
            pub const ALL: &'static [ReasonCode] = &[$(ReasonCode::$variant,)+];

            /// The code as JSON and the audit log show it.
            pub const fn as_str(self) -> &'static str {
                match self {
                    $(ReasonCode::$variant => $text,)+
                }
            }
        }
    };
}

reason_codes! {
    // ----- rules ------------------------------------------------------------
    /// An allow rule matched.
    RuleAllow = "rule-allow",
    /// An ask rule matched.
    RuleAsk = "rule-ask",
    /// A deny rule matched.
    RuleDeny = "rule-deny",
    // ----- outside the policy -------------------------------------------------
    /// A person's grant covered what the policy refused (engine).
    Grant = "grant",
    /// A person denied this very call, and the denial stands (engine).
    PersonDenied = "person-denied",
    // ----- modes and defaults -------------------------------------------------
    /// Allowed because the mode is `full-access`.
    ModeFullAccess = "mode-full-access",
    /// A known program allowed because the mode is `approve-for-me`.
    ModeApproveForMe = "mode-approve-for-me",
    /// A write refused because the mode is `read-only`.
    ReadOnlyMode = "read-only-mode",
    /// No rule allows it, and the mode does not either.
    NoRule = "no-rule",
    // ----- commands -----------------------------------------------------------
    /// A command matched a hazard pack.
    Hazard = "hazard",
    /// A glob where options stand can expand to option names (`rm *`).
    GlobOptions = "glob-options",
    /// A read-only program: its effects are judged one by one.
    ReadOnlyProgram = "read-only-program",
    /// A shell or a transparent wrapper (`sh`, `timeout`, `env`): it runs what
    /// it is given, and that is judged as commands of its own.
    CommandRunner = "command-runner",
    /// Code run from somewhere the analysis cannot vouch for (an option, a
    /// file written and run in one call, a foreign git repository).
    Code = "code",
    /// Network access no rule allows.
    Network = "network",
    /// Something the analysis cannot see through.
    Opaque = "opaque",
    /// An MCP tool declaring itself destructive, allowed by no literal rule.
    DestructiveTool = "destructive-tool",
    // ----- paths --------------------------------------------------------------
    /// `/dev/null` and friends.
    HarmlessDevice = "harmless-device",
    /// A path known only at run time.
    DynamicPath = "dynamic-path",
    /// A path the configuration blocks.
    BlockedPath = "blocked-path",
    /// Deleting the root, the home directory or the working directory.
    CriticalPath = "critical-path",
    /// A path the configuration blocks for writes.
    BlockedWritePath = "blocked-write-path",
    /// A protected path (or one holding it): never written by an agent.
    ProtectedPath = "protected-path",
    /// A write to a file with several hard links.
    HardLink = "hard-link",
    /// A secret (a file or an environment variable).
    SecretPath = "secret-path",
    /// A read inside the workspace or a read root.
    WorkspaceRead = "workspace-read",
    /// Reads known only at run time, allowed because the call runs confined
    /// by the kernel (`[confine] mode = "dynamic"`).
    Confined = "confined",
    /// A write inside the workspace.
    WorkspaceEdit = "workspace-edit",
    /// A write inside a read-only root.
    ReadOnlyRoot = "read-only-root",
    /// A path outside the workspace.
    ExternalPath = "external-path",
    // ----- the call as a whole ------------------------------------------------
    /// The working directory is not absolute: no path can be placed.
    BadCwd = "bad-cwd",
    /// The call reaches the approval API or portcullis' own state.
    ApprovalApi = "approval-api",
    /// The call has no effect to judge.
    NoEffect = "no-effect",
    /// An MCP name without a server, judged as each reading.
    AmbiguousMcpName = "ambiguous-mcp-name",
    /// An Agent Skill's `allowed-tools` makes the tool unavailable.
    SkillRestricted = "skill-restricted",
    /// No person can answer, so an ask became a deny.
    Unattended = "unattended",
    /// An MCP call the hook leaves to the portcullis MCP bridge its agent
    /// runs for that server: the bridge judges it, with the tool's pinned
    /// definition, as the one judge of that call.
    LeftToBridge = "left-to-bridge",
    // ----- front doors' refusals (the call was not judged) --------------------
    /// The call's session sources disagree.
    SessionConflict = "session-conflict",
    /// The configuration cannot be used.
    ConfigError = "config-error",
    /// A batch line is not a call.
    BadInput = "bad-input",
    /// A tool name fails `check_tool_name`.
    BadToolName = "bad-tool-name",
    /// The configuration names a team server (`[server] url`) that decides
    /// this machine's calls: nothing here decides them.
    GovernedElsewhere = "governed-elsewhere",
}

impl ReasonCode {
    /// Whether a person may override a refusal with this code by a grant
    /// (and so whether a permission request is raised for it). Exhaustive on
    /// purpose: a new code must say whether a person may lift it.
    pub const fn overridable(self) -> bool {
        use ReasonCode::*;
        match self {
            // What a person may decide: no rule decided either way, or a
            // rule deferred to a person, or what the policy asks about
            // precisely so that someone approves it.
            NoRule | RuleAsk => true,
            // Asked because a rule must name the hazardous words literally;
            // a person seeing the exact command may approve it instead.
            Hazard | GlobOptions => true,
            // Paths a person can see and vouch for: outside the workspace, a
            // secret to read, a workspace edit in ask mode.
            ExternalPath | SecretPath | WorkspaceEdit => true,
            // Code and network use that no rule allows: approvable per call.
            Code | Network => true,
            // A deny rule is the configuration's word; no grant lifts it.
            RuleDeny => false,
            // A person's denial stands until it expires; asking again would
            // put the same question to them.
            PersonDenied => false,
            // Never written or deleted by an agent, whoever approves.
            ProtectedPath | BlockedPath | BlockedWritePath | CriticalPath | ReadOnlyRoot => false,
            // The mode says no writes at all.
            ReadOnlyMode => false,
            // A grant is checked against the path as it resolves: a file
            // with other names, or a path known only at run time, cannot be.
            HardLink | DynamicPath => false,
            // What the analysis cannot see, a person cannot approve either.
            Opaque => false,
            // Only a rule naming a destructive MCP tool literally allows it.
            DestructiveTool => false,
            // The approval surface is off limits to agents; a call with no
            // placeable working directory can be judged by no one.
            ApprovalApi | BadCwd => false,
            // The active skill's restriction, not a question for a person.
            SkillRestricted => false,
            // Unattended turns asks into denies: nobody is there to approve
            // (the engine sets these aside before it looks for grants).
            Unattended => false,
            // Front doors' refusals: the call was never judged.
            SessionConflict | ConfigError | BadInput | BadToolName => false,
            // Another server decides this machine's calls: ask it.
            GovernedElsewhere => false,
            // Allows and notes: nothing refused, nothing to override.
            RuleAllow | Grant | ModeFullAccess | ModeApproveForMe | ReadOnlyProgram
            | CommandRunner | HarmlessDevice | WorkspaceRead | Confined | NoEffect
            | AmbiguousMcpName | LeftToBridge => false,
        }
    }

    /// Whether a person who sees the whole call may approve a refusal with
    /// this code for that one call (a permission request): what a grant may
    /// lift ([`ReasonCode::overridable`]), and the asks no standing grant can
    /// cover but a person reading the exact text can — what the analysis
    /// cannot see through, and paths known only at run time. Never a deny
    /// (a deny rule, a protected path): the verdict is checked too.
    pub const fn approvable_in_call(self, verdict: Verdict) -> bool {
        match verdict {
            Verdict::Allow => false,
            Verdict::Deny => self.overridable(),
            Verdict::Ask => {
                self.overridable() || matches!(self, ReasonCode::Opaque | ReasonCode::DynamicPath)
            }
        }
    }
}

impl fmt::Display for ReasonCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A text that is no reason code.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown reason code `{0}`")]
pub struct UnknownReasonCode(pub String);

impl FromStr for ReasonCode {
    type Err = UnknownReasonCode;

    /// Exactly the text `as_str` gives; anything else is an error.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        ReasonCode::ALL
            .iter()
            .copied()
            .find(|c| c.as_str() == s)
            .ok_or_else(|| UnknownReasonCode(s.to_string()))
    }
}

impl TryFrom<&str> for ReasonCode {
    type Error = UnknownReasonCode;

    fn try_from(s: &str) -> Result<Self, Self::Error> {
        s.parse()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serde_form_is_as_str_and_parses_back() {
        for &c in ReasonCode::ALL {
            let json = serde_json::to_string(&c).unwrap();
            assert_eq!(json, format!("\"{}\"", c.as_str()), "{c:?}");
            assert_eq!(serde_json::from_str::<ReasonCode>(&json).unwrap(), c);
            assert_eq!(c.as_str().parse::<ReasonCode>(), Ok(c));
            assert_eq!(ReasonCode::try_from(c.as_str()), Ok(c));
            assert_eq!(c.to_string(), c.as_str());
        }
    }

    #[test]
    fn codes_are_distinct_kebab_case() {
        let mut seen = std::collections::BTreeSet::new();
        for &c in ReasonCode::ALL {
            let s = c.as_str();
            assert!(seen.insert(s), "{s} twice");
            assert!(
                s.bytes().all(|b| b.is_ascii_lowercase() || b == b'-'),
                "{s}"
            );
        }
    }

    #[test]
    fn unknown_codes_fail_closed() {
        for s in [
            "",
            "Rule-Allow",
            "rule_allow",
            "rule-allow ",
            "grants",
            "hazard-x",
        ] {
            assert_eq!(
                s.parse::<ReasonCode>(),
                Err(UnknownReasonCode(s.to_string()))
            );
            assert!(serde_json::from_str::<ReasonCode>(&format!("{s:?}")).is_err());
        }
    }

    /// The list the engine matched strings against before the enum.
    #[test]
    fn overridable_is_the_old_coverable_list() {
        const COVERABLE: &[&str] = &[
            "no-rule",
            "hazard",
            "glob-options",
            "rule-ask",
            "external-path",
            "secret-path",
            "workspace-edit",
            "code",
            "network",
        ];
        for &c in ReasonCode::ALL {
            assert_eq!(c.overridable(), COVERABLE.contains(&c.as_str()), "{c}");
        }
        for s in COVERABLE {
            assert!(s.parse::<ReasonCode>().is_ok(), "{s}");
        }
    }
}
