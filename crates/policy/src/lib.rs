//! The judging half of portcullis: a tool call becomes effects, each effect is
//! authorized or not, and the answer is allow, ask or deny with reasons.
//!
//! What it is for: [`decide`] — the one decision function every front door
//! reaches through the engine. It takes a [`ToolCall`], a [`Policy`] (rules,
//! mode, scopes, manifests, parsed by [`config`]) and the file-system facts it
//! needs through [`PathFacts`]. What it is not: it does no I/O (the `paths`
//! crate resolves paths, the binary reads configuration files), keeps no state
//! (grants and sessions belong to the store), and knows no tool by name outside
//! the tool tables in [`tables`].

pub mod approval_api;
pub mod config;
pub mod decide;
pub mod effects;
pub mod error;
pub mod facts;
pub mod hazards;
pub mod mcp_name;
pub mod reason;
pub mod reported;
pub mod risk;
pub mod rules;
pub mod skills;
pub mod tables;
pub mod tool;
pub mod tool_fields;

pub use config::{
    AgentSettings, ConfineMode, DEFAULT_ONCE_TTL_SECS, Layer, LayerKind, McpServer, Mode,
    ONCE_TTL_BOUNDS, OnAsk, Policy, Role, ServerUser, WorkspaceConfig, trusts_project,
};
pub use decide::{Confine, Decision, Reason, Verdict, decide, decide_with_skill};
pub use effects::Effect;
pub use error::{ConfigError, RuleError};
pub use facts::{LexicalFacts, PathFact, PathFacts, Zone};
pub use mcp_name::McpToolName;
pub use reason::{ReasonCode, UnknownReasonCode};
pub use risk::Risk;
pub use rules::{Rule, RuleList, Target};
pub use tool::{FsAccess, Manifest, Origin, ToolCall, ToolRef, check_tool_name};
