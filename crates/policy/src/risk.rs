//! How much is at stake in one judged effect, as a person approving it
//! should see it: one [`Risk`] per effect, from the reason that refused it
//! and the kind of effect. What a risk allows is the engine's and the UI's
//! business (a secret's read is never offered device-wide); this module only
//! names it.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::{Effect, ReasonCode};

/// The risk class of a judged effect, most severe first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Risk {
    /// A secret read (keys, credentials, tokens, secret-shaped variables).
    SecretRead,
    /// A write to something protected (agent configuration, shell startup
    /// files, git internals, blocked and critical paths).
    ProtectedWrite,
    /// A command matching a hazard pack (`rm -rf`, `git push --force` …), or
    /// a tool that says it destroys.
    Hazard,
    /// Code run that the analysis cannot vouch for, or cannot see at all.
    CodeExecution,
    /// Network use to a host no rule names.
    Network,
    /// A write, a delete or a move of an ordinary file.
    Write,
    /// A read of an ordinary file, or a call with no effect beyond the tool.
    Read,
}

impl Risk {
    /// Every class, most severe first.
    pub const ALL: &'static [Risk] = &[
        Risk::SecretRead,
        Risk::ProtectedWrite,
        Risk::Hazard,
        Risk::CodeExecution,
        Risk::Network,
        Risk::Write,
        Risk::Read,
    ];

    /// The class as the API and the UI show it.
    pub const fn as_str(self) -> &'static str {
        match self {
            Risk::SecretRead => "secret-read",
            Risk::ProtectedWrite => "protected-write",
            Risk::Hazard => "hazard",
            Risk::CodeExecution => "code-execution",
            Risk::Network => "network",
            Risk::Write => "write",
            Risk::Read => "read",
        }
    }

    /// Whether an approval of it must never outlive the person's attention:
    /// no device-wide grant, no saved rule, an explicit confirmation.
    pub const fn needs_confirmation(self) -> bool {
        matches!(self, Risk::SecretRead | Risk::Hazard)
    }

    /// The class of an effect refused (or allowed) for `code`: the reason
    /// first (a secret, a protected path, a hazard say more than the kind of
    /// effect), else the kind of effect.
    pub fn of(code: ReasonCode, effect: Option<&Effect>) -> Risk {
        use ReasonCode::*;
        match code {
            SecretPath => return Risk::SecretRead,
            ProtectedPath | BlockedPath | BlockedWritePath | CriticalPath | ReadOnlyRoot
            | HardLink => return Risk::ProtectedWrite,
            Hazard | GlobOptions | DestructiveTool => return Risk::Hazard,
            Code | Opaque => return Risk::CodeExecution,
            Network => return Risk::Network,
            _ => {}
        }
        match effect {
            Some(Effect::Read { .. }) => Risk::Read,
            Some(Effect::Write { .. } | Effect::Delete { .. } | Effect::Move { .. }) => Risk::Write,
            Some(Effect::Network { .. }) => Risk::Network,
            Some(Effect::Code { .. } | Effect::Opaque { .. }) => Risk::CodeExecution,
            // A command or a tool call refused as such (no rule allows the
            // program, the tool): what it runs is code the person vouches for.
            Some(Effect::Exec { .. } | Effect::McpCall(_) | Effect::ToolUse { .. }) => {
                Risk::CodeExecution
            }
            None => Risk::Read,
        }
    }
}

impl fmt::Display for Risk {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read() -> Effect {
        Effect::Read {
            path: "/x".into(),
            dynamic: false,
        }
    }

    fn write() -> Effect {
        Effect::Write {
            path: "/x".into(),
            dynamic: false,
        }
    }

    fn net() -> Effect {
        Effect::Network {
            program: Some("curl".into()),
            host: Some("x.example".into()),
        }
    }

    /// The table people read on a card: each reason with the effect it
    /// refuses gets the one class it names.
    #[test]
    fn each_refusal_has_the_class_it_names() {
        let cases: &[(ReasonCode, Effect, Risk)] = &[
            (ReasonCode::SecretPath, read(), Risk::SecretRead),
            (ReasonCode::ProtectedPath, write(), Risk::ProtectedWrite),
            (ReasonCode::CriticalPath, write(), Risk::ProtectedWrite),
            (ReasonCode::Hazard, read(), Risk::Hazard),
            (ReasonCode::Code, read(), Risk::CodeExecution),
            (ReasonCode::Network, net(), Risk::Network),
            (ReasonCode::NoRule, net(), Risk::Network),
            (ReasonCode::ExternalPath, read(), Risk::Read),
            (ReasonCode::ExternalPath, write(), Risk::Write),
            (ReasonCode::WorkspaceEdit, write(), Risk::Write),
            (
                ReasonCode::Opaque,
                Effect::Opaque {
                    reason: "r".into(),
                    text: "t".into(),
                },
                Risk::CodeExecution,
            ),
            (
                ReasonCode::NoRule,
                Effect::ToolUse { tool: "T".into() },
                Risk::CodeExecution,
            ),
        ];
        for (code, effect, risk) in cases {
            assert_eq!(Risk::of(*code, Some(effect)), *risk, "{code} on {effect:?}");
        }
    }

    /// Every reason code, with every kind of effect and with none, has one
    /// class, and the classes a secret or a hazard gets are the confirmed ones.
    #[test]
    fn every_code_and_effect_has_exactly_one_class() {
        let effects = [
            Some(read()),
            Some(write()),
            Some(net()),
            Some(Effect::ToolUse { tool: "T".into() }),
            None,
        ];
        for &code in ReasonCode::ALL {
            for e in &effects {
                let risk = Risk::of(code, e.as_ref());
                assert!(Risk::ALL.contains(&risk));
                if code == ReasonCode::SecretPath || code == ReasonCode::Hazard {
                    assert!(risk.needs_confirmation(), "{code}");
                }
            }
        }
        // Most severe first, and the order is the enum's.
        let mut sorted = Risk::ALL.to_vec();
        sorted.sort();
        assert_eq!(sorted, Risk::ALL);
        let names: std::collections::BTreeSet<&str> =
            Risk::ALL.iter().map(|r| r.as_str()).collect();
        assert_eq!(names.len(), Risk::ALL.len(), "each class has its own name");
    }
}
