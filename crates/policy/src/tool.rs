//! Tool calls as the policy sees them: which tool, from where, with what input.

use serde::{Deserialize, Serialize};

/// The trust tier of a tool, assigned by the front door from what it knows —
/// never from a claim in the tool's own input or description.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Origin {
    /// The agent's own tools (Claude Code's `Bash`, `Read` …).
    Core,
    /// First-party tools with a known, fixed execution model (a sandboxed workflow tool).
    Builtin,
    /// Anything else registered by an extension. The default: fail closed.
    #[default]
    Extension,
    /// A tool proxied from an MCP server.
    Mcp,
}

impl Origin {
    pub fn as_str(self) -> &'static str {
        match self {
            Origin::Core => "core",
            Origin::Builtin => "builtin",
            Origin::Extension => "extension",
            Origin::Mcp => "mcp",
        }
    }

    /// Zero-trust origins: their inputs are analysed defensively.
    pub fn is_untrusted(self) -> bool {
        matches!(self, Origin::Extension | Origin::Mcp)
    }
}

impl std::str::FromStr for Origin {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "core" => Ok(Origin::Core),
            "builtin" => Ok(Origin::Builtin),
            "extension" => Ok(Origin::Extension),
            "mcp" => Ok(Origin::Mcp),
            other => Err(format!(
                "unknown origin `{other}` (expected core, builtin, extension or mcp)"
            )),
        }
    }
}

/// What a tool may touch on the file system, per its manifest.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FsAccess {
    #[default]
    None,
    Read,
    Write,
}

/// A capability manifest. What loosens (`filesystem = "read"` for an MCP
/// tool) comes from trusted configuration only; `destructive` only tightens,
/// so a front door may set it from a tool's own, untrusted annotations.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Manifest {
    /// The tool runs host shell commands (its shell-like inputs go to the analyser).
    #[serde(default)]
    pub shell: bool,
    #[serde(default)]
    pub filesystem: FsAccess,
    #[serde(default)]
    pub network: bool,
    /// JSON pointers (`/path`, `/files/0`) to the inputs that are paths.
    #[serde(default)]
    pub paths_in: Vec<String>,
    /// The tool declares itself destructive (MCP `destructiveHint`): like a
    /// hazard, only a rule naming it exactly (or full-access) allows it, never
    /// a wildcard such as `mcp__fs__*`.
    #[serde(default)]
    pub destructive: bool,
}

/// The longest tool name accepted (MCP allows 64 per part; room to spare).
pub const MAX_TOOL_NAME: usize = 256;

/// Checks a tool name where it enters (a hook payload, `/v1/decide`, `check
/// --tool`, an MCP server's list): not empty, not longer than
/// [`MAX_TOOL_NAME`], no control characters — a name with a tab or a
/// newline would forge lines wherever it is printed. The error names what
/// is wrong, for the caller to report.
pub fn check_tool_name(name: &str) -> Result<(), String> {
    if name.is_empty() {
        return Err("the tool name is empty".into());
    }
    if name.chars().count() > MAX_TOOL_NAME {
        return Err(format!(
            "the tool name is longer than {MAX_TOOL_NAME} characters"
        ));
    }
    if let Some(c) = name.chars().find(|c| c.is_control()) {
        return Err(format!(
            "the tool name {name:?} holds the control character {c:?}"
        ));
    }
    Ok(())
}

/// Which tool is called.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolRef {
    pub name: String,
    #[serde(default)]
    pub origin: Origin,
    /// The MCP server, for `mcp` tools.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub manifest: Option<Manifest>,
}

/// One tool call to judge.
#[derive(Clone, Debug, PartialEq)]
pub struct ToolCall {
    pub tool: ToolRef,
    pub input: serde_json::Value,
    /// The working directory of the call (absolute).
    pub cwd: String,
}
