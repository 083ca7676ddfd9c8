//! Errors: configuration and rules that do not parse stop the engine (fail closed).

use thiserror::Error;

/// A rule that does not parse.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
#[error("{location}: rule `{rule}`: {why}")]
pub struct RuleError {
    pub rule: String,
    /// Where the rule was written (`file:line`).
    pub location: String,
    pub why: String,
}

/// Configuration that cannot be used.
#[derive(Debug, Error)]
pub enum ConfigError {
    #[error("{file}:{line}: {message}")]
    Syntax {
        file: String,
        line: usize,
        message: String,
    },
    #[error(transparent)]
    Rule(#[from] RuleError),
    #[error("{file}: {message}")]
    Invalid { file: String, message: String },
}
