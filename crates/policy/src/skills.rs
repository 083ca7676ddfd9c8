//! Agent Skills `allowed-tools`: from a skill's frontmatter value to the tools
//! the skill names, and what an active skill says about a tool.
//!
//! The frontmatter value comes in two forms (the caller parses the YAML and
//! hands over an [`AllowedToolsSource`]):
//!
//! - **scalar** (`allowed-tools: Read Bash(git add *)`): split into entries on
//!   whitespace (and on commas, the form Claude Code's documentation uses:
//!   `Read, Grep, Glob`). Parentheses group, so `Bash(git add *)` is one entry;
//!   single quotes, double quotes and backslash escapes are respected inside and
//!   outside parentheses, so `Bash(echo "a)b")`, `Bash(echo ')')` and
//!   `Bash(echo \) x)` are one entry each. The text is kept as written (quotes
//!   and backslashes included): the pattern goes to the command-rule matcher
//!   untouched. Portable spellings are mapped to the host's tool names through
//!   its [`ToolAliases`].
//! - **list** (`allowed-tools: [bash, read_file]`): each item is one entry,
//!   taken verbatim (surrounding whitespace trimmed): no alias mapping, no case
//!   change, because list items name the host's runtime tools exactly.
//!
//! Nothing is guessed. Unbalanced parentheses, unterminated quotes, a dangling
//! backslash, text after the closing parenthesis, an empty pattern, or quotes in
//! a tool name are errors that name the position: a skill whose `allowed-tools`
//! does not parse is rejected (fail closed).
//!
//! Aliases apply only to the exact documented spellings ([`PORTABLE_TOOL_NAMES`]):
//! `Write` may become `write_file`, a literal `write` stays `write`. Any other
//! name (`mcp__github__create_issue`, `my_custom_tool`, `webfetch`) is kept
//! exactly as written.
//!
//! `Bash(...)` never becomes the bare shell tool: it is an
//! [`AllowedTool::CommandPattern`], an authorization for the commands that match
//! the pattern, which the policy evaluates with its own command-rule matcher
//! ([`SkillTools::command_patterns`]). Other `Tool(specifier)` entries are
//! [`AllowedTool::Scoped`].
//!
//! What the list means is a per-host setting ([`SkillMode`]): Claude Code
//! *grants* (the listed tools are additionally allowed while the skill is
//! active), DeerFlow *restricts* (only the listed tools and the host's framework
//! built-ins are available).
//!
//! ```
//! use portcullis_policy::skills::{AllowedToolsSource, SkillHost, ToolAccess};
//!
//! let host = SkillHost::deerflow();
//! let skill = host
//!     .parse(&AllowedToolsSource::Scalar("WebFetch Bash(git add *)".into()))
//!     .unwrap();
//! assert_eq!(skill.tool_access("web_fetch"), ToolAccess::Available);
//! // The shell tool is available only for commands matching a pattern...
//! assert_eq!(skill.tool_access("bash"), ToolAccess::AvailableIfMatching);
//! assert_eq!(skill.command_patterns().collect::<Vec<_>>(), [("bash", "git add *")]);
//! // ...and the words of the pattern are not tool names.
//! assert_eq!(skill.tool_access("add"), ToolAccess::Unavailable);
//! ```

use std::collections::BTreeSet;
use std::fmt;

use serde::{Deserialize, Serialize};

/// The documented portable tool spellings, the only names an alias table maps.
/// Case-sensitive: `write`, `WRITE` or `webFetch` are not portable names.
pub const PORTABLE_TOOL_NAMES: [&str; 8] = [
    "Read",
    "Write",
    "Edit",
    "Bash",
    "WebFetch",
    "WebSearch",
    "Glob",
    "Grep",
];

/// Claude Code's alias table: its tools carry the portable names themselves.
pub const CLAUDE_CODE_ALIASES: &[(&str, &str)] = &[
    ("Read", "Read"),
    ("Write", "Write"),
    ("Edit", "Edit"),
    ("Bash", "Bash"),
    ("WebFetch", "WebFetch"),
    ("WebSearch", "WebSearch"),
    ("Glob", "Glob"),
    ("Grep", "Grep"),
];

/// DeerFlow's alias table (`_PORTABLE_TOOL_ALIASES` in `deerflow/skills/parser.py`).
pub const DEERFLOW_ALIASES: &[(&str, &str)] = &[
    ("Bash", "bash"),
    ("Edit", "str_replace"),
    ("Glob", "glob"),
    ("Grep", "grep"),
    ("Read", "read_file"),
    ("WebFetch", "web_fetch"),
    ("WebSearch", "web_search"),
    ("Write", "write_file"),
];

/// DeerFlow's framework built-ins, available even while a restricting skill is
/// active (`ALWAYS_AVAILABLE_BUILTIN_TOOL_NAMES` in `deerflow/skills/tool_policy.py`).
pub const DEERFLOW_BUILTINS: &[&str] = &[
    "describe_skill",
    "read_file",
    "review_skill_package",
    "tool_search",
];

/// The `allowed-tools` value of a skill's frontmatter, as the caller's YAML
/// parser found it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AllowedToolsSource {
    /// The key is missing: the skill declares nothing (legacy: no restriction, no grant).
    Absent,
    /// A string: the portable form, tokenized, portable names aliased.
    Scalar(String),
    /// A YAML list of strings: exact host tool names, kept verbatim.
    List(Vec<String>),
}

/// One entry of `allowed-tools`, with tool names already in the host's terms.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum AllowedTool {
    /// A whole tool: `Read` (aliased to e.g. `read_file`), `mcp__github__create_issue`.
    Tool(String),
    /// `Bash(git add *)`: the shell tool, for commands matching `pattern` only
    /// (`git add *`, or the legacy prefix form `git:*`), kept as written.
    CommandPattern { tool: String, pattern: String },
    /// Any other `Tool(specifier)`: `Read(./src/**)`, `WebFetch(domain:example.com)`.
    Scoped { tool: String, specifier: String },
}

impl AllowedTool {
    /// The host tool name the entry is about.
    pub fn tool(&self) -> &str {
        match self {
            AllowedTool::Tool(tool)
            | AllowedTool::CommandPattern { tool, .. }
            | AllowedTool::Scoped { tool, .. } => tool,
        }
    }
}

impl fmt::Display for AllowedTool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AllowedTool::Tool(tool) => f.write_str(tool),
            AllowedTool::CommandPattern {
                tool,
                pattern: inner,
            }
            | AllowedTool::Scoped {
                tool,
                specifier: inner,
            } => write!(f, "{tool}({inner})"),
        }
    }
}

/// What a skill's list means on a host. Explicit per host, in config.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SkillMode {
    /// Claude Code: the listed tools are additionally allowed while the skill is
    /// active; tools not listed are judged by the rest of the policy as usual.
    Grant,
    /// DeerFlow: while the skill is active, only the listed tools and the host's
    /// framework built-ins are available.
    Restrict,
}

/// Where in the `allowed-tools` value something is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Position {
    /// For the list form, the item number, counting from 1; `None` for the scalar form.
    pub item: Option<usize>,
    /// The character column in the scalar (or in the list item), counting from 1.
    pub column: usize,
}

impl fmt::Display for Position {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.item {
            Some(item) => write!(f, "list item {item}, column {}", self.column),
            None => write!(f, "column {}", self.column),
        }
    }
}

/// Why an `allowed-tools` value was rejected. The skill must not be loaded.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum AllowedToolsError {
    #[error(
        "allowed-tools: the '(' at {at} is never closed (in `{token}`); add the missing ')', \
         or quote or escape a literal parenthesis ('(' or \\()"
    )]
    UnclosedParen { at: Position, token: String },

    #[error(
        "allowed-tools: the ')' at {at} has no matching '('; quote or escape a literal \
         parenthesis (')' or \\))"
    )]
    UnmatchedCloseParen { at: Position },

    #[error(
        "allowed-tools: the {quote} quote opened at {at} is never closed; close it, or escape a \
         literal quote with a backslash"
    )]
    UnterminatedQuote { at: Position, quote: char },

    #[error(
        "allowed-tools: the backslash at {at} ends the value and escapes nothing; remove it or \
         write \\\\ for a literal backslash"
    )]
    DanglingEscape { at: Position },

    #[error(
        "allowed-tools: unexpected text after the closing ')' at {at} in `{token}`; write one \
         Tool(pattern) per entry and separate entries with spaces"
    )]
    TextAfterPattern { at: Position, token: String },

    #[error(
        "allowed-tools: `{token}` at {at} has a pattern but no tool name before '('; write e.g. \
         Bash(git status *)"
    )]
    MissingToolName { at: Position, token: String },

    #[error(
        "allowed-tools: the tool name `{name}` has {found:?} at {at}, which cannot be part of a \
         tool name (quotes and escapes only belong inside a Tool(pattern))"
    )]
    InvalidToolName {
        at: Position,
        name: String,
        found: char,
    },

    #[error(
        "allowed-tools: `{tool}()` at {at} has an empty pattern; list `{tool}` alone for the \
         whole tool, or give the commands or paths it covers"
    )]
    EmptyPattern { at: Position, tool: String },

    #[error("allowed-tools: list item {item} is empty; remove it or name a tool")]
    EmptyListItem { item: usize },

    #[error(
        "allowed-tools: list item {item} `{text}` holds more than one entry; a list item is \
         exactly one tool name or Tool(pattern), so use one item per tool"
    )]
    ListItemNotSingle { item: usize, text: String },
}

/// Why an alias table (host configuration) was rejected.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum AliasTableError {
    #[error(
        "skill tool aliases: `{name}` is not a portable tool name; aliases apply only to the \
         exact spellings Read, Write, Edit, Bash, WebFetch, WebSearch, Glob, Grep"
    )]
    NotPortable { name: String },

    #[error("skill tool aliases: `{name}` is mapped more than once")]
    Duplicate { name: String },

    #[error("skill tool aliases: `{name}` maps to `{target}`, which is not a valid tool name")]
    InvalidTarget { name: String, target: String },
}

/// A host's mapping from the portable spellings to its own tool names.
///
/// Only the exact names of [`PORTABLE_TOOL_NAMES`] can be keys; a portable name
/// without an entry is kept as written (and so matches no tool unless the host
/// has one by that name).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ToolAliases {
    pairs: Vec<(&'static str, String)>,
}

impl ToolAliases {
    /// Builds a table, rejecting keys that are not exact portable spellings,
    /// duplicate keys and targets that are not tool names.
    pub fn new<I, K, V>(pairs: I) -> Result<Self, AliasTableError>
    where
        I: IntoIterator<Item = (K, V)>,
        K: AsRef<str>,
        V: AsRef<str>,
    {
        let mut table = ToolAliases { pairs: Vec::new() };
        for (name, target) in pairs {
            let (name, target) = (name.as_ref(), target.as_ref());
            let Some(portable) = PORTABLE_TOOL_NAMES.iter().find(|p| **p == name) else {
                return Err(AliasTableError::NotPortable { name: name.into() });
            };
            if table.resolve(name).is_some() {
                return Err(AliasTableError::Duplicate { name: name.into() });
            }
            if target.is_empty() || target.chars().any(is_forbidden_in_name) {
                return Err(AliasTableError::InvalidTarget {
                    name: name.into(),
                    target: target.into(),
                });
            }
            table.pairs.push((portable, target.into()));
        }
        Ok(table)
    }

    /// No aliases: portable names are kept as written.
    pub fn none() -> Self {
        ToolAliases { pairs: Vec::new() }
    }

    /// Claude Code's table, the identity.
    pub fn claude_code() -> Self {
        Self::from_static(CLAUDE_CODE_ALIASES)
    }

    /// DeerFlow's table.
    pub fn deerflow() -> Self {
        Self::from_static(DEERFLOW_ALIASES)
    }

    /// A built-in table, taken as written: a unit test checks that each one
    /// passes [`ToolAliases::new`] and builds the same table.
    fn from_static(pairs: &[(&'static str, &'static str)]) -> Self {
        ToolAliases {
            pairs: pairs
                .iter()
                .map(|&(portable, target)| (portable, target.to_string()))
                .collect(),
        }
    }

    /// The host name for an exact portable spelling, if the table maps it.
    pub fn resolve(&self, name: &str) -> Option<&str> {
        self.pairs
            .iter()
            .find(|(portable, _)| *portable == name)
            .map(|(_, target)| target.as_str())
    }

    /// The host's shell tool: what `Bash` maps to (`Bash` if unmapped).
    pub fn shell_tool(&self) -> &str {
        self.resolve("Bash").unwrap_or("Bash")
    }

    /// The host name for a scalar entry's tool name: aliased if it is an exact
    /// portable spelling in the table, otherwise unchanged.
    fn map<'a>(&'a self, name: &'a str) -> &'a str {
        self.resolve(name).unwrap_or(name)
    }
}

/// A host's skill configuration: what a list means, its tool names, and the
/// framework built-ins a restricting skill cannot take away.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SkillHost {
    mode: SkillMode,
    aliases: ToolAliases,
    builtins: BTreeSet<String>,
}

impl SkillHost {
    /// A host with the given semantics, alias table and framework built-ins
    /// (the built-ins matter in [`SkillMode::Restrict`] only).
    pub fn new<I, S>(mode: SkillMode, aliases: ToolAliases, builtins: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        SkillHost {
            mode,
            aliases,
            builtins: builtins.into_iter().map(Into::into).collect(),
        }
    }

    /// Claude Code: grant, identity aliases, no built-ins.
    pub fn claude_code() -> Self {
        Self::new(
            SkillMode::Grant,
            ToolAliases::claude_code(),
            std::iter::empty::<String>(),
        )
    }

    /// DeerFlow: restrict, DeerFlow's aliases and framework built-ins.
    pub fn deerflow() -> Self {
        Self::new(
            SkillMode::Restrict,
            ToolAliases::deerflow(),
            DEERFLOW_BUILTINS.iter().copied(),
        )
    }

    pub fn mode(&self) -> SkillMode {
        self.mode
    }

    pub fn aliases(&self) -> &ToolAliases {
        &self.aliases
    }

    pub fn builtins(&self) -> impl Iterator<Item = &str> {
        self.builtins.iter().map(String::as_str)
    }

    /// Parses one skill's `allowed-tools`. An error means the skill must be rejected.
    pub fn parse(&self, source: &AllowedToolsSource) -> Result<SkillTools, AllowedToolsError> {
        Ok(self.tools(parse_entries(source, &self.aliases)?))
    }

    /// What the active skills say together (all parsed for this host): the union
    /// of the explicit declarations. A skill without `allowed-tools` contributes
    /// nothing once any active skill declares; only when none declares is there
    /// no say at all. An active skill that cannot be authorized should be passed
    /// as an explicit empty list, which leaves only the framework built-ins.
    pub fn combine<'a, I>(&self, active: I) -> SkillTools
    where
        I: IntoIterator<Item = &'a SkillTools>,
    {
        let mut union: Option<Vec<AllowedTool>> = None;
        for skill in active {
            if let Some(entries) = &skill.entries {
                let union = union.get_or_insert_with(Vec::new);
                for entry in entries {
                    if !union.contains(entry) {
                        union.push(entry.clone());
                    }
                }
            }
        }
        self.tools(union)
    }

    fn tools(&self, entries: Option<Vec<AllowedTool>>) -> SkillTools {
        SkillTools {
            entries,
            mode: self.mode,
            builtins: self.builtins.clone(),
        }
    }
}

/// What an active skill (or the union of the active skills) says about a tool.
///
/// There is deliberately no plain yes/no: a tool listed only with patterns
/// (`Bash(git add *)`) is neither allowed nor unavailable, it depends on the
/// call, and a yes/no would invite treating it as the bare tool.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ToolAccess {
    /// No say: the skill declares nothing, or (grant) does not list the tool.
    /// The rest of the policy decides as if no skill were active.
    NoOpinion,
    /// Grant: the tool is listed whole; its calls are additionally allowed.
    Granted,
    /// Grant: the tool is listed only with patterns or specifiers; a call that
    /// matches one of them is additionally allowed, any other call gets
    /// [`ToolAccess::NoOpinion`].
    GrantedIfMatching,
    /// Restrict: the tool is listed whole or is a framework built-in; the rest
    /// of the policy decides.
    Available,
    /// Restrict: the tool is listed only with patterns or specifiers; a call that
    /// matches none of them is unavailable (and one the policy cannot match, e.g.
    /// a specifier it does not understand, counts as matching none).
    AvailableIfMatching,
    /// Restrict: not listed and not a framework built-in: the tool may not be used.
    Unavailable,
}

/// A skill's parsed `allowed-tools` on one host.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SkillTools {
    /// `None`: the skill declares nothing.
    entries: Option<Vec<AllowedTool>>,
    mode: SkillMode,
    builtins: BTreeSet<String>,
}

impl SkillTools {
    pub fn mode(&self) -> SkillMode {
        self.mode
    }

    /// The declared entries in order, `None` when `allowed-tools` is absent.
    pub fn declared(&self) -> Option<&[AllowedTool]> {
        self.entries.as_deref()
    }

    fn entries(&self) -> &[AllowedTool] {
        self.entries.as_deref().unwrap_or_default()
    }

    /// What the skill says about calls to `host_tool_name` (exact, case-sensitive).
    pub fn tool_access(&self, host_tool_name: &str) -> ToolAccess {
        if self.entries.is_none() {
            return ToolAccess::NoOpinion;
        }
        let whole = self
            .entries()
            .iter()
            .any(|e| matches!(e, AllowedTool::Tool(t) if t == host_tool_name));
        let scoped = self
            .entries()
            .iter()
            .any(|e| !matches!(e, AllowedTool::Tool(_)) && e.tool() == host_tool_name);
        match self.mode {
            SkillMode::Grant if whole => ToolAccess::Granted,
            SkillMode::Grant if scoped => ToolAccess::GrantedIfMatching,
            SkillMode::Grant => ToolAccess::NoOpinion,
            SkillMode::Restrict if whole || self.builtins.contains(host_tool_name) => {
                ToolAccess::Available
            }
            SkillMode::Restrict if scoped => ToolAccess::AvailableIfMatching,
            SkillMode::Restrict => ToolAccess::Unavailable,
        }
    }

    /// The command patterns, `(shell tool, pattern)`, for the policy's
    /// command-rule matcher: `("bash", "git add *")`, `("Bash", "git:*")`.
    pub fn command_patterns(&self) -> impl Iterator<Item = (&str, &str)> {
        self.entries().iter().filter_map(|e| match e {
            AllowedTool::CommandPattern { tool, pattern } => {
                Some((tool.as_str(), pattern.as_str()))
            }
            _ => None,
        })
    }

    /// The other scoped entries, `(tool, specifier)`: `("Read", "./src/**")`.
    pub fn scoped(&self) -> impl Iterator<Item = (&str, &str)> {
        self.entries().iter().filter_map(|e| match e {
            AllowedTool::Scoped { tool, specifier } => Some((tool.as_str(), specifier.as_str())),
            _ => None,
        })
    }

    /// The tools a model may still be offered while the skill is active: all of
    /// them except the [`ToolAccess::Unavailable`] ones, in the given order.
    pub fn available_tools<'t, I>(&self, host_tools: I) -> Vec<&'t str>
    where
        I: IntoIterator<Item = &'t str>,
    {
        host_tools
            .into_iter()
            .filter(|t| self.tool_access(t) != ToolAccess::Unavailable)
            .collect()
    }

    /// The reason to give for a call to a [`ToolAccess::Unavailable`] tool.
    pub fn unavailable_reason(&self, host_tool_name: &str) -> String {
        let listed: Vec<String> = self.entries().iter().map(ToString::to_string).collect();
        let listed = if listed.is_empty() {
            "nothing".to_string()
        } else {
            listed.join(" ")
        };
        format!(
            "tool '{host_tool_name}' is not allowed by the active skill policy \
             (allowed-tools: {listed})"
        )
    }
}

/// Parses `allowed-tools` into entries in host terms; `Ok(None)` when absent.
pub fn parse_entries(
    source: &AllowedToolsSource,
    aliases: &ToolAliases,
) -> Result<Option<Vec<AllowedTool>>, AllowedToolsError> {
    match source {
        AllowedToolsSource::Absent => Ok(None),
        AllowedToolsSource::Scalar(text) => tokenize(text, true, None)?
            .iter()
            .map(|token| classify(token, None, aliases, true))
            .collect::<Result<Vec<_>, _>>()
            .map(Some),
        AllowedToolsSource::List(items) => items
            .iter()
            .zip(1..)
            .map(|(text, item)| {
                let tokens = tokenize(text, false, Some(item))?;
                match tokens.as_slice() {
                    [] => Err(AllowedToolsError::EmptyListItem { item }),
                    [token] => classify(token, Some(item), aliases, false),
                    _ => Err(AllowedToolsError::ListItemNotSingle {
                        item,
                        text: text.clone(),
                    }),
                }
            })
            .collect::<Result<Vec<_>, _>>()
            .map(Some),
    }
}

/// Splits the scalar form into its entries, as written (quotes and backslashes
/// kept): `Bash(echo ')') Read` gives `["Bash(echo ')')", "Read"]`.
pub fn split_scalar(text: &str) -> Result<Vec<&str>, AllowedToolsError> {
    Ok(tokenize(text, true, None)?
        .into_iter()
        .map(|t| t.text)
        .collect())
}

/// One entry as written, with where its first `(` and the matching `)` are.
struct RawToken<'a> {
    text: &'a str,
    /// Column of the token's first character.
    column: usize,
    /// Byte offsets in `text` of the first top-level `(` and its matching `)`.
    group: Option<(usize, usize)>,
}

impl RawToken<'_> {
    fn position(&self, item: Option<usize>, byte: usize) -> Position {
        Position {
            item,
            column: self.column + self.text[..byte].chars().count(),
        }
    }
}

fn tokenize(
    text: &str,
    commas_separate: bool,
    item: Option<usize>,
) -> Result<Vec<RawToken<'_>>, AllowedToolsError> {
    let at = |column| Position { item, column };
    let mut tokens = Vec::new();
    // (byte, column) where the current token starts.
    let mut start: Option<(usize, usize)> = None;
    // Columns of the `(` not yet closed, outermost first.
    let mut open_columns: Vec<usize> = Vec::new();
    // Byte offsets (in `text`) of the current token's first `(` and its `)`.
    let mut group_open: Option<usize> = None;
    let mut group_close: Option<usize> = None;
    let mut quote: Option<(char, usize)> = None;
    let mut escape: Option<usize> = None;

    let mut finish =
        |start: (usize, usize), end: usize, open: &mut Option<usize>, close: &mut Option<usize>| {
            let (begin, column) = start;
            let group = match (open.take(), close.take()) {
                (Some(o), Some(c)) => Some((o - begin, c - begin)),
                _ => None,
            };
            tokens.push(RawToken {
                text: &text[begin..end],
                column,
                group,
            });
        };

    for (column, (byte, ch)) in (1..).zip(text.char_indices()) {
        if escape.take().is_some() {
            continue;
        }
        if let Some((q, _)) = quote {
            if q == '"' && ch == '\\' {
                escape = Some(column);
            } else if ch == q {
                quote = None;
            }
            continue;
        }
        let separator = ch.is_whitespace() || (commas_separate && ch == ',');
        if separator && open_columns.is_empty() {
            if let Some(s) = start.take() {
                finish(s, byte, &mut group_open, &mut group_close);
            }
            continue;
        }
        if start.is_none() {
            start = Some((byte, column));
        }
        match ch {
            '\\' => escape = Some(column),
            '\'' | '"' => quote = Some((ch, column)),
            '(' => {
                if open_columns.is_empty() && group_open.is_none() {
                    group_open = Some(byte);
                }
                open_columns.push(column);
            }
            ')' => {
                if open_columns.pop().is_none() {
                    return Err(AllowedToolsError::UnmatchedCloseParen { at: at(column) });
                }
                if open_columns.is_empty() && group_close.is_none() {
                    group_close = Some(byte);
                }
            }
            _ => {}
        }
    }
    if let Some((quote, column)) = quote {
        return Err(AllowedToolsError::UnterminatedQuote {
            at: at(column),
            quote,
        });
    }
    if let Some(column) = escape {
        return Err(AllowedToolsError::DanglingEscape { at: at(column) });
    }
    if let Some(&column) = open_columns.first() {
        let begin = start.map_or(0, |(b, _)| b);
        return Err(AllowedToolsError::UnclosedParen {
            at: at(column),
            token: text[begin..].to_string(),
        });
    }
    if let Some(s) = start.take() {
        finish(s, text.len(), &mut group_open, &mut group_close);
    }
    Ok(tokens)
}

/// Characters that cannot be part of a tool name.
fn is_forbidden_in_name(ch: char) -> bool {
    ch.is_whitespace() || ch.is_control() || matches!(ch, '\'' | '"' | '\\' | '(' | ')' | ',')
}

fn classify(
    token: &RawToken<'_>,
    item: Option<usize>,
    aliases: &ToolAliases,
    map_aliases: bool,
) -> Result<AllowedTool, AllowedToolsError> {
    let name = match token.group {
        Some((open, _)) => &token.text[..open],
        None => token.text,
    };
    if name.is_empty() {
        return Err(AllowedToolsError::MissingToolName {
            at: token.position(item, 0),
            token: token.text.into(),
        });
    }
    if let Some((byte, found)) = name.char_indices().find(|(_, c)| is_forbidden_in_name(*c)) {
        return Err(AllowedToolsError::InvalidToolName {
            at: token.position(item, byte),
            name: name.into(),
            found,
        });
    }
    let host_name = if map_aliases { aliases.map(name) } else { name };
    let Some((open, close)) = token.group else {
        return Ok(AllowedTool::Tool(host_name.into()));
    };
    if close + 1 != token.text.len() {
        return Err(AllowedToolsError::TextAfterPattern {
            at: token.position(item, close + 1),
            token: token.text.into(),
        });
    }
    let inner = &token.text[open + 1..close];
    if inner.trim().is_empty() {
        return Err(AllowedToolsError::EmptyPattern {
            at: token.position(item, open),
            tool: name.into(),
        });
    }
    // `Bash(...)`, or the host's own shell tool name with a pattern, is a
    // command pattern; never the bare shell tool.
    if name == "Bash" || name == aliases.shell_tool() {
        Ok(AllowedTool::CommandPattern {
            tool: host_name.into(),
            pattern: inner.into(),
        })
    } else {
        Ok(AllowedTool::Scoped {
            tool: host_name.into(),
            specifier: inner.into(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn built_in_alias_tables_are_valid() {
        for (table, built) in [
            (CLAUDE_CODE_ALIASES, ToolAliases::claude_code()),
            (DEERFLOW_ALIASES, ToolAliases::deerflow()),
        ] {
            assert_eq!(ToolAliases::new(table.iter().copied()), Ok(built));
        }
    }

    fn scalar(text: &str) -> AllowedToolsSource {
        AllowedToolsSource::Scalar(text.into())
    }

    fn list(items: &[&str]) -> AllowedToolsSource {
        AllowedToolsSource::List(items.iter().map(|s| s.to_string()).collect())
    }

    fn tool(name: &str) -> AllowedTool {
        AllowedTool::Tool(name.into())
    }

    fn pattern(tool: &str, pattern: &str) -> AllowedTool {
        AllowedTool::CommandPattern {
            tool: tool.into(),
            pattern: pattern.into(),
        }
    }

    fn scoped(tool: &str, specifier: &str) -> AllowedTool {
        AllowedTool::Scoped {
            tool: tool.into(),
            specifier: specifier.into(),
        }
    }

    fn deerflow(source: &AllowedToolsSource) -> SkillTools {
        SkillHost::deerflow().parse(source).expect("parses")
    }

    fn entries(skill: &SkillTools) -> Vec<AllowedTool> {
        skill.declared().expect("declared").to_vec()
    }

    fn error(text: &str) -> AllowedToolsError {
        SkillHost::deerflow()
            .parse(&scalar(text))
            .expect_err("must be rejected")
    }

    fn col(column: usize) -> Position {
        Position { item: None, column }
    }

    // ---- seed_cases.jsonl: bytedance/deer-flow and agentskills/agentskills rows ----

    /// Row: deer-flow test_skills_parser.py, `(allowed-tools absent)` -> None (legacy allow-all).
    #[test]
    fn row_absent_is_legacy_allow_all() {
        for host in [SkillHost::deerflow(), SkillHost::claude_code()] {
            let skill = host.parse(&AllowedToolsSource::Absent).unwrap();
            assert_eq!(skill.declared(), None);
            for t in ["bash", "task", "write_file", "anything"] {
                assert_eq!(skill.tool_access(t), ToolAccess::NoOpinion);
            }
            assert_eq!(skill.command_patterns().count(), 0);
        }
    }

    /// Row: deer-flow test_skills_parser.py, `allowed-tools: ["bash", "read_file"]` -> ("bash","read_file").
    #[test]
    fn row_yaml_list_exact_runtime_names() {
        let skill = deerflow(&list(&["bash", "read_file"]));
        assert_eq!(entries(&skill), [tool("bash"), tool("read_file")]);
        assert_eq!(skill.tool_access("bash"), ToolAccess::Available);
        assert_eq!(skill.tool_access("write_file"), ToolAccess::Unavailable);
    }

    /// Row: deer-flow test_skills_parser.py, `allowed-tools: []` -> only framework built-ins.
    #[test]
    fn row_explicit_empty_list_leaves_only_builtins() {
        let skill = deerflow(&list(&[]));
        assert_eq!(skill.declared(), Some(&[][..]));
        assert_eq!(skill.tool_access("bash"), ToolAccess::Unavailable);
        assert_eq!(skill.tool_access("read_file"), ToolAccess::Available);
        assert_eq!(skill.tool_access("tool_search"), ToolAccess::Available);
    }

    /// Row: deer-flow test_skills_parser.py, `allowed-tools: bash` -> skill rejected (pre-#4912).
    /// Deliberate: we follow #4912/#4984, which accept the scalar form; `bash`
    /// is not a portable spelling, so it stays `bash`.
    #[test]
    fn row_scalar_accepted_since_4912() {
        assert_eq!(entries(&deerflow(&scalar("bash"))), [tool("bash")]);
    }

    /// Row: deer-flow PR #4984, `allowed-tools: Read Write` -> {read_file, write_file}.
    #[test]
    fn row_read_write_aliases() {
        let skill = deerflow(&scalar("Read Write"));
        assert_eq!(entries(&skill), [tool("read_file"), tool("write_file")]);
    }

    /// Row: deer-flow PR #4984, `allowed-tools: WebFetch WebSearch` -> {web_fetch, web_search}.
    #[test]
    fn row_web_aliases() {
        let skill = deerflow(&scalar("WebFetch WebSearch"));
        assert_eq!(entries(&skill), [tool("web_fetch"), tool("web_search")]);
    }

    /// Row: deer-flow PR #4984, `allowed-tools: Bash` -> {bash}: the bare alias is the whole shell tool.
    #[test]
    fn row_bare_bash_is_the_shell_tool() {
        let skill = deerflow(&scalar("Bash"));
        assert_eq!(entries(&skill), [tool("bash")]);
        assert_eq!(skill.tool_access("bash"), ToolAccess::Available);
    }

    /// Row: deer-flow PR #4984, `allowed-tools: Edit` -> {str_replace}.
    #[test]
    fn row_edit_is_str_replace() {
        assert_eq!(entries(&deerflow(&scalar("Edit"))), [tool("str_replace")]);
    }

    /// Row: deer-flow PR #4984, `allowed-tools: Bash(git:*) Read` -> {'Bash(git:*)', read_file}.
    /// DeerFlow keeps `Bash(git:*)` as an inert literal; here it is a command
    /// pattern on the shell tool (DESIGN §3). Either way it is not the bare `bash`.
    #[test]
    fn row_legacy_bash_pattern_and_read() {
        let skill = deerflow(&scalar("Bash(git:*) Read"));
        assert_eq!(
            entries(&skill),
            [pattern("bash", "git:*"), tool("read_file")]
        );
        assert_eq!(skill.tool_access("bash"), ToolAccess::AvailableIfMatching);
        assert_eq!(
            skill.command_patterns().collect::<Vec<_>>(),
            [("bash", "git:*")]
        );
    }

    /// Row: deer-flow PR #4984, `allowed-tools: Bash(git add *) Bash(git commit *)` -> no bash.
    #[test]
    fn row_spaced_bash_patterns_stay_whole() {
        let skill = deerflow(&scalar("Bash(git add *) Bash(git commit *)"));
        assert_eq!(
            entries(&skill),
            [
                pattern("bash", "git add *"),
                pattern("bash", "git commit *")
            ]
        );
        assert_ne!(skill.tool_access("bash"), ToolAccess::Available);
        for fragment in ["git", "add", "*", "commit", "Bash(git", "*)"] {
            assert_eq!(skill.tool_access(fragment), ToolAccess::Unavailable);
        }
    }

    /// Row: deer-flow PR #4984, `allowed-tools: "Bash(echo ')') Read"` -> ['Bash(echo \')\')', 'Read'].
    /// The YAML double quotes are removed by the YAML parser; the scalar is what is inside.
    #[test]
    fn row_quoted_paren_does_not_close() {
        assert_eq!(
            split_scalar("Bash(echo ')') Read").unwrap(),
            ["Bash(echo ')')", "Read"]
        );
        let skill = deerflow(&scalar("Bash(echo ')') Read"));
        assert_eq!(
            entries(&skill),
            [pattern("bash", "echo ')'"), tool("read_file")]
        );
    }

    /// Row: deer-flow PR #4984, `allowed-tools: Bash(echo \) x) Read` -> ['Bash(echo \) x)', 'Read'].
    #[test]
    fn row_escaped_paren_does_not_close() {
        assert_eq!(
            split_scalar(r"Bash(echo \) x) Read").unwrap(),
            [r"Bash(echo \) x)", "Read"]
        );
        let skill = deerflow(&scalar(r"Bash(echo \) x) Read"));
        assert_eq!(
            entries(&skill),
            [pattern("bash", r"echo \) x"), tool("read_file")]
        );
    }

    /// Row: deer-flow PR #4984, `allowed-tools: mcp__github__create_issue my_custom_tool` -> verbatim.
    #[test]
    fn row_unknown_names_verbatim() {
        let skill = deerflow(&scalar("mcp__github__create_issue my_custom_tool"));
        assert_eq!(
            entries(&skill),
            [tool("mcp__github__create_issue"), tool("my_custom_tool")]
        );
    }

    /// Row: deer-flow PR #4984, `allowed-tools: Glob Grep` -> requested {glob, grep}
    /// (DeerFlow's alias table has Glob -> glob, Grep -> grep).
    #[test]
    fn row_glob_grep_aliases() {
        assert_eq!(
            entries(&deerflow(&scalar("Glob Grep"))),
            [tool("glob"), tool("grep")]
        );
    }

    /// Row: deer-flow test_skill_tool_policy_middleware.py, restricted[web_search] +
    /// second[bash] + legacy(None); tools [task,bash,web_search] -> [bash, web_search].
    #[test]
    fn row_union_of_declarations_ignores_legacy() {
        let host = SkillHost::deerflow();
        let restricted = host.parse(&list(&["web_search"])).unwrap();
        let second = host.parse(&list(&["bash"])).unwrap();
        let legacy = host.parse(&AllowedToolsSource::Absent).unwrap();
        let active = host.combine([&restricted, &second, &legacy]);
        assert_eq!(
            active.available_tools(["task", "bash", "web_search"]),
            ["bash", "web_search"]
        );
    }

    /// Row: deer-flow test_skill_tool_policy_middleware.py, legacy(None) only; tools [task,bash] -> [task, bash].
    #[test]
    fn row_legacy_only_is_allow_all() {
        let host = SkillHost::deerflow();
        let legacy = host.parse(&AllowedToolsSource::Absent).unwrap();
        let active = host.combine([&legacy]);
        assert_eq!(active.available_tools(["task", "bash"]), ["task", "bash"]);
        assert_eq!(active.tool_access("bash"), ToolAccess::NoOpinion);
    }

    /// Row: deer-flow test_skill_tool_policy_middleware.py, restricted[] with
    /// [task,list_background_tasks,cancel_background_task,read_file,review_skill_package,tool_search,describe_skill]
    /// -> [read_file, review_skill_package, tool_search, describe_skill].
    #[test]
    fn row_empty_declaration_keeps_framework_builtins() {
        let skill = deerflow(&list(&[]));
        let tools = [
            "task",
            "list_background_tasks",
            "cancel_background_task",
            "read_file",
            "review_skill_package",
            "tool_search",
            "describe_skill",
        ];
        assert_eq!(
            skill.available_tools(tools),
            [
                "read_file",
                "review_skill_package",
                "tool_search",
                "describe_skill"
            ]
        );
    }

    /// Row: deer-flow test_skill_tool_policy_middleware.py, restricted[web_search] not in the
    /// agent's available_skills; tools [task, web_search] -> []. The caller, unable to
    /// authorize the active skill, passes an explicit empty list (fail closed).
    #[test]
    fn row_unauthorized_active_skill_fails_closed() {
        let host = SkillHost::deerflow();
        let unauthorized = host.parse(&list(&[])).unwrap();
        let active = host.combine([&unauthorized]);
        assert!(active.available_tools(["task", "web_search"]).is_empty());
    }

    /// Row: deer-flow test_skill_tool_policy_middleware.py, tool call 'bash' while the active
    /// skill allows [web_search] -> error "Tool 'bash' is not allowed by the active skill policy."
    #[test]
    fn row_call_to_unlisted_tool_is_refused_with_reason() {
        let skill = deerflow(&list(&["web_search"]));
        assert_eq!(skill.tool_access("bash"), ToolAccess::Unavailable);
        assert_eq!(
            skill.unavailable_reason("bash"),
            "tool 'bash' is not allowed by the active skill policy (allowed-tools: web_search)"
        );
    }

    /// Row: agentskills specification, `allowed-tools: Bash(git:*) Bash(jq:*) Read` -> 3 patterns.
    #[test]
    fn row_agentskills_three_patterns() {
        assert_eq!(
            split_scalar("Bash(git:*) Bash(jq:*) Read").unwrap(),
            ["Bash(git:*)", "Bash(jq:*)", "Read"]
        );
        let skill = SkillHost::claude_code()
            .parse(&scalar("Bash(git:*) Bash(jq:*) Read"))
            .unwrap();
        assert_eq!(
            entries(&skill),
            [
                pattern("Bash", "git:*"),
                pattern("Bash", "jq:*"),
                tool("Read")
            ]
        );
    }

    /// Row: agentskills skills-ref test_read_with_allowed_tools, `allowed-tools: Bash(jq:*) Bash(git:*)`.
    #[test]
    fn row_agentskills_two_patterns() {
        assert_eq!(
            split_scalar("Bash(jq:*) Bash(git:*)").unwrap(),
            ["Bash(jq:*)", "Bash(git:*)"]
        );
        let skill = SkillHost::claude_code()
            .parse(&scalar("Bash(jq:*) Bash(git:*)"))
            .unwrap();
        assert_eq!(
            skill.command_patterns().collect::<Vec<_>>(),
            [("Bash", "jq:*"), ("Bash", "git:*")]
        );
        assert_eq!(skill.tool_access("Bash"), ToolAccess::GrantedIfMatching);
    }

    /// The commands of the skills rows the tests above handle, one per row.
    const HANDLED_SKILL_ROWS: [&str; 21] = [
        "(allowed-tools absent)",
        "allowed-tools: [\"bash\", \"read_file\"]",
        "allowed-tools: []",
        "allowed-tools: bash",
        "allowed-tools: Read Write",
        "allowed-tools: WebFetch WebSearch",
        "allowed-tools: Bash",
        "allowed-tools: Edit",
        "allowed-tools: Bash(git:*) Read",
        "allowed-tools: Bash(git add *) Bash(git commit *)",
        "allowed-tools: \"Bash(echo ')') Read\"",
        "allowed-tools: Bash(echo \\) x) Read",
        "allowed-tools: mcp__github__create_issue my_custom_tool",
        "allowed-tools: Glob Grep",
        "active skills: restricted[web_search] + second[bash] + legacy(None); tools [task,bash,web_search]",
        "active skills: legacy(None) only; tools [task,bash]",
        "active skill: restricted[]; tools [task,list_background_tasks,cancel_background_task,read_file,review_skill_package,tool_search,describe_skill]",
        "active skill: restricted[web_search] not in agent's available_skills; tools [task, web_search]",
        "tool call 'bash' while active skill allows [web_search]",
        "allowed-tools: Bash(git:*) Bash(jq:*) Read",
        "allowed-tools: Bash(jq:*) Bash(git:*)",
    ];

    /// Every skills row of the shared seed file is handled above: none added
    /// unseen, none silently gone.
    #[test]
    fn seed_file_skill_rows_are_all_handled() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../tests/data/conformance/seed_cases.jsonl"
        );
        let text = std::fs::read_to_string(path).expect("seed_cases.jsonl is readable");
        let mut rows = Vec::new();
        for line in text.lines().filter(|l| !l.trim().is_empty()) {
            let row: serde_json::Value = serde_json::from_str(line).expect("valid JSON line");
            let source = row["source"].as_str().expect("source");
            if source.contains("deer-flow") || source.contains("agentskills") {
                rows.push(row["command"].as_str().expect("command").to_string());
            }
        }
        assert_eq!(rows.len(), HANDLED_SKILL_ROWS.len());
        for command in &rows {
            assert!(
                HANDLED_SKILL_ROWS.contains(&command.as_str()),
                "skills row not handled by a test: {command}"
            );
        }
        for command in HANDLED_SKILL_ROWS {
            assert!(
                rows.iter().any(|r| r == command),
                "handled skills row no longer in the seed file: {command}"
            );
        }
    }

    // ---- seed 003 (DeerFlow PR #4984 review) regressions ----

    /// P1: a literal `write` must not be substituted by `write_file`.
    #[test]
    fn literal_lowercase_write_stays_write() {
        let skill = deerflow(&scalar("write"));
        assert_eq!(entries(&skill), [tool("write")]);
        assert_eq!(skill.tool_access("write"), ToolAccess::Available);
        assert_eq!(skill.tool_access("write_file"), ToolAccess::Unavailable);
        assert_eq!(
            skill.available_tools(["write", "write_file", "task"]),
            ["write"]
        );
        // And the portable spelling picks the host tool, not the custom one.
        let portable = deerflow(&scalar("Write"));
        assert_eq!(
            portable.available_tools(["write", "write_file", "task"]),
            ["write_file"]
        );
    }

    /// No case folding anywhere: only the exact portable spellings are aliased.
    #[test]
    fn near_miss_spellings_are_not_aliased() {
        let skill = deerflow(&scalar(
            "read WRITE webfetch Web_Search glob grep bash edit",
        ));
        assert_eq!(
            entries(&skill),
            [
                tool("read"),
                tool("WRITE"),
                tool("webfetch"),
                tool("Web_Search"),
                tool("glob"),
                tool("grep"),
                tool("bash"),
                tool("edit"),
            ]
        );
        assert_eq!(skill.tool_access("read_file"), ToolAccess::Available); // built-in
        assert_eq!(skill.tool_access("write_file"), ToolAccess::Unavailable);
        assert_eq!(skill.tool_access("web_fetch"), ToolAccess::Unavailable);
        assert_eq!(skill.tool_access("str_replace"), ToolAccess::Unavailable);
    }

    /// Suggestion: `Bash(git add *)` with a tool named `add` present: neither
    /// `add` nor unrestricted `bash` becomes available.
    #[test]
    fn bash_pattern_fragments_are_not_tools() {
        let skill = deerflow(&scalar("WebFetch Bash(git add *)"));
        assert_eq!(skill.tool_access("add"), ToolAccess::Unavailable);
        assert_eq!(skill.tool_access("git"), ToolAccess::Unavailable);
        assert_eq!(skill.tool_access("bash"), ToolAccess::AvailableIfMatching);
        assert_eq!(skill.tool_access("web_fetch"), ToolAccess::Available);
        assert_eq!(
            skill.command_patterns().collect::<Vec<_>>(),
            [("bash", "git add *")]
        );
        assert!(!skill.declared().unwrap().contains(&tool("bash")));
        // Grant semantics: the pattern grants matching commands only, never the bare tool.
        let granted = SkillHost::claude_code()
            .parse(&scalar("Bash(git add *)"))
            .unwrap();
        assert_eq!(granted.tool_access("Bash"), ToolAccess::GrantedIfMatching);
        assert_eq!(granted.tool_access("add"), ToolAccess::NoOpinion);
    }

    /// Mixed-case MCP and custom names are preserved in both forms.
    #[test]
    fn mixed_case_mcp_names_preserved() {
        let names = ["mcp__GitHub__Create_Issue", "MyCustomTool", "mcp__x__*"];
        let from_scalar = deerflow(&scalar(&names.join(" ")));
        let from_list = deerflow(&list(&names));
        for skill in [from_scalar, from_list] {
            assert_eq!(entries(&skill), names.map(tool));
            assert_eq!(
                skill.tool_access("mcp__GitHub__Create_Issue"),
                ToolAccess::Available
            );
            assert_eq!(
                skill.tool_access("mcp__github__create_issue"),
                ToolAccess::Unavailable
            );
        }
    }

    /// The list form is verbatim: no aliases, no case change, only trimming.
    #[test]
    fn list_items_are_not_aliased() {
        let skill = deerflow(&list(&["Read", " Write ", "write", "Bash(git add *)"]));
        assert_eq!(
            entries(&skill),
            [
                tool("Read"),
                tool("Write"),
                tool("write"),
                pattern("Bash", "git add *")
            ]
        );
        // `Bash(...)` in a DeerFlow list names no DeerFlow shell tool: inert.
        assert_eq!(skill.tool_access("bash"), ToolAccess::Unavailable);
        assert_eq!(skill.tool_access("write_file"), ToolAccess::Unavailable);
    }

    /// Quoted and escaped parentheses in every combination stay in one entry.
    #[test]
    fn quoted_and_escaped_parentheses() {
        let cases: [(&str, &[&str]); 9] = [
            (r#"Bash(echo "a)b")"#, &[r#"Bash(echo "a)b")"#]),
            ("Bash(echo ')')", &["Bash(echo ')')"]),
            (r"Bash(echo \) x)", &[r"Bash(echo \) x)"]),
            (r"Bash(echo \( x)", &[r"Bash(echo \( x)"]),
            (r#"Bash(echo "(") Read"#, &[r#"Bash(echo "(")"#, "Read"]),
            (r#"Bash(echo "a \" ) b")"#, &[r#"Bash(echo "a \" ) b")"#]),
            (r"Bash(echo '\') Read", &[r"Bash(echo '\')", "Read"]),
            ("Bash(echo (a b)) Read", &["Bash(echo (a b))", "Read"]),
            ("Bash(echo 'x y' \"z w\")", &["Bash(echo 'x y' \"z w\")"]),
        ];
        for (text, expected) in cases {
            assert_eq!(split_scalar(text).unwrap(), expected, "{text}");
        }
        assert_eq!(
            entries(&deerflow(&scalar(r#"Bash(echo "a)b")"#))),
            [pattern("bash", r#"echo "a)b""#)]
        );
    }

    // ---- tokenizer details ----

    #[test]
    fn separators_whitespace_and_commas() {
        assert_eq!(
            split_scalar("  Read,Grep, Glob\tWebFetch\n Bash(git diff *, x) ").unwrap(),
            ["Read", "Grep", "Glob", "WebFetch", "Bash(git diff *, x)"]
        );
        assert_eq!(
            entries(
                &SkillHost::claude_code()
                    .parse(&scalar("Read, Grep, Glob"))
                    .unwrap()
            ),
            [tool("Read"), tool("Grep"), tool("Glob")]
        );
        // An empty scalar declares nothing but the built-ins (as DeerFlow does).
        assert_eq!(deerflow(&scalar("  ")).declared(), Some(&[][..]));
    }

    #[test]
    fn scoped_entries() {
        let skill = deerflow(&scalar(
            "Read(./src/**) WebFetch(domain:example.com) mcp__x__y(arg)",
        ));
        assert_eq!(
            entries(&skill),
            [
                scoped("read_file", "./src/**"),
                scoped("web_fetch", "domain:example.com"),
                scoped("mcp__x__y", "arg"),
            ]
        );
        assert_eq!(
            skill.tool_access("web_fetch"),
            ToolAccess::AvailableIfMatching
        );
        // A framework built-in stays whole even when listed with a scope.
        assert_eq!(skill.tool_access("read_file"), ToolAccess::Available);
        assert_eq!(skill.command_patterns().count(), 0);
        assert_eq!(skill.scoped().count(), 3);
        let grant = SkillHost::claude_code()
            .parse(&scalar("Read(./src/**) Read"))
            .unwrap();
        assert_eq!(grant.tool_access("Read"), ToolAccess::Granted);
        assert_eq!(grant.tool_access("Edit"), ToolAccess::NoOpinion);
    }

    #[test]
    fn host_shell_name_with_pattern_is_a_command_pattern() {
        let skill = deerflow(&scalar("bash(git status)"));
        assert_eq!(entries(&skill), [pattern("bash", "git status")]);
        assert_eq!(skill.tool_access("bash"), ToolAccess::AvailableIfMatching);
    }

    #[test]
    fn whole_tool_and_pattern_together() {
        let skill = deerflow(&scalar("Bash(git *) Bash"));
        assert_eq!(skill.tool_access("bash"), ToolAccess::Available);
        let grant = SkillHost::claude_code()
            .parse(&scalar("Bash(git *) Bash"))
            .unwrap();
        assert_eq!(grant.tool_access("Bash"), ToolAccess::Granted);
    }

    #[test]
    fn display_round_trips_scalar_entries() {
        let text = r#"Bash(echo "a)b") Read(./src/**) mcp__x"#;
        let skill = SkillHost::new(SkillMode::Grant, ToolAliases::none(), ["x"])
            .parse(&scalar(text))
            .unwrap();
        let shown: Vec<String> = entries(&skill).iter().map(ToString::to_string).collect();
        assert_eq!(shown.join(" "), text);
    }

    /// Every short string over the tricky characters: no panic, and an accepted
    /// value's entries are exactly its tokens, each a non-empty piece of the input.
    #[test]
    fn exhaustive_short_inputs() {
        const ALPHABET: [char; 9] = ['a', 'B', '(', ')', '\'', '"', '\\', ' ', ','];
        let mut inputs = vec![String::new()];
        let mut frontier = vec![String::new()];
        for _ in 0..5 {
            frontier = frontier
                .iter()
                .flat_map(|s| ALPHABET.map(|c| format!("{s}{c}")))
                .collect();
            inputs.extend(frontier.iter().cloned());
        }
        let aliases = ToolAliases::none();
        for input in &inputs {
            let Ok(tokens) = split_scalar(input) else {
                continue;
            };
            for token in &tokens {
                assert!(!token.is_empty() && input.contains(token), "{input:?}");
            }
            if let Ok(Some(entries)) = parse_entries(&scalar(input), &aliases) {
                let shown: Vec<String> = entries.iter().map(ToString::to_string).collect();
                assert_eq!(shown, tokens, "{input:?}");
            }
            let _ = parse_entries(&list(&[input]), &aliases);
        }
    }

    // ---- errors: fail closed, with the position ----

    #[test]
    fn unbalanced_parentheses_are_errors() {
        assert_eq!(
            error("Read Bash(git add *"),
            AllowedToolsError::UnclosedParen {
                at: col(10),
                token: "Bash(git add *".into()
            }
        );
        assert_eq!(
            error("Read git)"),
            AllowedToolsError::UnmatchedCloseParen { at: col(9) }
        );
        assert_eq!(
            error("Bash(echo (a) Read"),
            AllowedToolsError::UnclosedParen {
                at: col(5),
                token: "Bash(echo (a) Read".into()
            }
        );
    }

    #[test]
    fn unterminated_quotes_and_escapes_are_errors() {
        assert_eq!(
            error("Bash(echo ') Read"),
            AllowedToolsError::UnterminatedQuote {
                at: col(11),
                quote: '\''
            }
        );
        assert_eq!(
            error(r#"Bash(echo "a\")"#),
            AllowedToolsError::UnterminatedQuote {
                at: col(11),
                quote: '"'
            }
        );
        assert_eq!(
            error("Read \\"),
            AllowedToolsError::DanglingEscape { at: col(6) }
        );
    }

    #[test]
    fn malformed_entries_are_errors() {
        assert_eq!(
            error("Bash(git *)x"),
            AllowedToolsError::TextAfterPattern {
                at: col(12),
                token: "Bash(git *)x".into()
            }
        );
        assert_eq!(
            error("Read(a)(b)"),
            AllowedToolsError::TextAfterPattern {
                at: col(8),
                token: "Read(a)(b)".into()
            }
        );
        assert_eq!(
            error("Read (git *)"),
            AllowedToolsError::MissingToolName {
                at: col(6),
                token: "(git *)".into()
            }
        );
        assert_eq!(
            error("Bash() Read"),
            AllowedToolsError::EmptyPattern {
                at: col(5),
                tool: "Bash".into()
            }
        );
        assert_eq!(
            error("Bash(  )"),
            AllowedToolsError::EmptyPattern {
                at: col(5),
                tool: "Bash".into()
            }
        );
        assert_eq!(
            error("Read \"Write\""),
            AllowedToolsError::InvalidToolName {
                at: col(6),
                name: "\"Write\"".into(),
                found: '"'
            }
        );
        assert_eq!(
            error(r"Ba\sh(x)"),
            AllowedToolsError::InvalidToolName {
                at: col(3),
                name: r"Ba\sh".into(),
                found: '\\'
            }
        );
    }

    #[test]
    fn list_item_errors_name_the_item() {
        let host = SkillHost::deerflow();
        assert_eq!(
            host.parse(&list(&["bash", "  "])),
            Err(AllowedToolsError::EmptyListItem { item: 2 })
        );
        assert_eq!(
            host.parse(&list(&["Read Write"])),
            Err(AllowedToolsError::ListItemNotSingle {
                item: 1,
                text: "Read Write".into()
            })
        );
        assert_eq!(
            host.parse(&list(&["read_file", "Bash(git add *"])),
            Err(AllowedToolsError::UnclosedParen {
                at: Position {
                    item: Some(2),
                    column: 5
                },
                token: "Bash(git add *".into()
            })
        );
        // No comma splitting in a list item: a stray comma is not silently dropped.
        assert!(matches!(
            host.parse(&list(&["Read,"])),
            Err(AllowedToolsError::InvalidToolName { found: ',', .. })
        ));
    }

    #[test]
    fn error_messages_are_actionable() {
        let message = error("Read Bash(git add *").to_string();
        assert_eq!(
            message,
            "allowed-tools: the '(' at column 10 is never closed (in `Bash(git add *`); add the \
             missing ')', or quote or escape a literal parenthesis ('(' or \\()"
        );
        let message = SkillHost::deerflow()
            .parse(&list(&["x", "y)"]))
            .unwrap_err()
            .to_string();
        assert!(message.contains("list item 2, column 2"), "{message}");
        assert!(
            error("Bash(echo ') Read")
                .to_string()
                .contains("' quote opened at column 11 is never closed")
        );
    }

    // ---- alias tables ----

    #[test]
    fn alias_tables_accept_only_portable_spellings() {
        assert_eq!(
            ToolAliases::new([("write", "write_file")]),
            Err(AliasTableError::NotPortable {
                name: "write".into()
            })
        );
        assert_eq!(
            ToolAliases::new([("Read", "a"), ("Read", "b")]),
            Err(AliasTableError::Duplicate {
                name: "Read".into()
            })
        );
        assert_eq!(
            ToolAliases::new([("Read", "")]),
            Err(AliasTableError::InvalidTarget {
                name: "Read".into(),
                target: String::new()
            })
        );
        let codex = ToolAliases::new([("Bash", "shell")]).unwrap();
        assert_eq!(codex.shell_tool(), "shell");
        assert_eq!(codex.resolve("Read"), None);
        // An unmapped portable name is kept as written.
        let entries = parse_entries(&scalar("Bash(ls) Read"), &codex).unwrap();
        assert_eq!(entries, Some(vec![pattern("shell", "ls"), tool("Read")]));
        assert_eq!(ToolAliases::none().shell_tool(), "Bash");
    }

    #[test]
    fn claude_code_is_identity_and_grants() {
        let skill = SkillHost::claude_code()
            .parse(&scalar(
                "Read Write Edit Bash WebFetch WebSearch Glob Grep write",
            ))
            .unwrap();
        assert_eq!(
            entries(&skill),
            [
                "Read",
                "Write",
                "Edit",
                "Bash",
                "WebFetch",
                "WebSearch",
                "Glob",
                "Grep",
                "write"
            ]
            .map(tool)
        );
        assert_eq!(skill.mode(), SkillMode::Grant);
        assert_eq!(skill.tool_access("Read"), ToolAccess::Granted);
        assert_eq!(skill.tool_access("NotebookEdit"), ToolAccess::NoOpinion);
        assert_eq!(
            skill.available_tools(["Read", "NotebookEdit"]),
            ["Read", "NotebookEdit"]
        );
    }

    #[test]
    fn skill_mode_serde_names() {
        assert_eq!(
            serde_json::to_string(&SkillMode::Restrict).unwrap(),
            "\"restrict\""
        );
        let mode: SkillMode = serde_json::from_str("\"grant\"").unwrap();
        assert_eq!(mode, SkillMode::Grant);
    }
}
