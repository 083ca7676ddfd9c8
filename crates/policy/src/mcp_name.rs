//! The name an agent gives an MCP tool: `mcp__<server>__<tool>`.
//!
//! Claude Code, Codex, the bridge and the rules all spell an MCP tool this
//! way; [`McpToolName`] is the one place that builds and splits it. (Gemini
//! CLI's `mcp_<server>_<tool>` is read by its adapter and by the policy's
//! ambiguous-name readings, which produce `McpToolName`s.)

use std::fmt;

use serde::Serialize;

/// An MCP tool of a server. `Display` gives `mcp__server__tool`; serialized
/// as its parts (`{"server": …, "tool": …}`), as a decision's effects show it.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct McpToolName {
    server: String,
    tool: String,
}

impl McpToolName {
    /// What every MCP tool name starts with.
    pub const PREFIX: &'static str = "mcp__";
    /// Between the server and the tool.
    pub const SEPARATOR: &'static str = "__";
    /// What Gemini CLI's MCP tool names start with (`mcp_<server>_<tool>`).
    pub const GEMINI_PREFIX: &'static str = "mcp_";

    /// The tool `tool` of `server`, taken as given (a configured server's
    /// name never holds `__` nor starts or ends with `_`:
    /// `McpServer::check_name`).
    pub fn new(server: impl Into<String>, tool: impl Into<String>) -> Self {
        McpToolName {
            server: server.into(),
            tool: tool.into(),
        }
    }

    /// Splits `mcp__server__tool` at the first `__` after the prefix, as the
    /// agents do: the server never holds `__`, the tool may
    /// (`mcp__gh__a__b` is tool `a__b` of `gh`). `None` without the prefix or
    /// without a second `__` (`mcp__gh`).
    ///
    /// Either part may be empty (`mcp____x`, `mcp__gh__`): such a name is
    /// still an MCP call, and judging it as one (its arguments read with zero
    /// trust) is stricter than taking it for an agent's own tool. A caller
    /// that needs a server (a rule) checks [`server`](Self::server) itself.
    pub fn parse(name: &str) -> Option<Self> {
        let (server, tool) = name
            .strip_prefix(Self::PREFIX)?
            .split_once(Self::SEPARATOR)?;
        Some(Self::new(server, tool))
    }

    /// Every reading of `mcp__server__tool` whose server holds no `__`. One,
    /// as [`parse`](Self::parse) splits it, unless the separator touches
    /// another `_`: `mcp__a___t` is tool `_t` of `a` or tool `t` of `a_`,
    /// and only a server known from elsewhere tells which (a configured
    /// server's name never starts or ends with `_`: `McpServer::check_name`).
    /// Empty when `name` is not an MCP name.
    pub fn readings(name: &str) -> Vec<Self> {
        let Some(first) = Self::parse(name) else {
            return Vec::new();
        };
        let mut out = Vec::new();
        // `_t` of `a` may also be `t` of `a_` (never `a__`: no `__` in a server).
        if let Some(tool) = first.tool.strip_prefix('_') {
            out.push(Self::new(format!("{}_", first.server), tool));
        }
        out.insert(0, first);
        out
    }

    /// `name` read as a tool of a server known from elsewhere (an agent's
    /// MCP context, the bridge's `--name`): `mcp__<server>__tool`. `None`
    /// when `name` is not spelt with that server, whatever `__` either holds.
    pub fn parse_for(server: &str, name: &str) -> Option<Self> {
        let tool = name
            .strip_prefix(Self::PREFIX)?
            .strip_prefix(server)?
            .strip_prefix(Self::SEPARATOR)?;
        Some(Self::new(server, tool))
    }

    /// Gemini CLI's spelling of the tool: `mcp_<server>_<tool>`. Several
    /// tools may share it (`my`'s `fs_write` and `my_fs`'s `write` are both
    /// `mcp_my_fs_write`).
    pub fn gemini_spelling(&self) -> String {
        format!("{}{}_{}", Self::GEMINI_PREFIX, self.server, self.tool)
    }

    /// Whether `name` is spelt as Gemini CLI spells MCP tools: `mcp_` not
    /// followed by another `_` (`mcp_my_fs_write`, never `mcp__my__fs_write`).
    pub fn is_gemini_spelling(name: &str) -> bool {
        name.strip_prefix(Self::GEMINI_PREFIX)
            .is_some_and(|rest| !rest.is_empty() && !rest.starts_with('_'))
    }

    /// The text every tool name of `server` starts with: `mcp__server__`.
    pub fn server_prefix(server: &str) -> String {
        format!("{}{server}{}", Self::PREFIX, Self::SEPARATOR)
    }

    pub fn server(&self) -> &str {
        &self.server
    }

    pub fn tool(&self) -> &str {
        &self.tool
    }

    /// `(server, tool)`.
    pub fn into_parts(self) -> (String, String) {
        (self.server, self.tool)
    }
}

impl fmt::Display for McpToolName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}{}{}{}",
            Self::PREFIX,
            self.server,
            Self::SEPARATOR,
            self.tool
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parts(name: &str) -> Option<(String, String)> {
        McpToolName::parse(name).map(McpToolName::into_parts)
    }

    fn pair(s: &str, t: &str) -> Option<(String, String)> {
        Some((s.to_string(), t.to_string()))
    }

    #[test]
    fn displays_as_agents_spell_it() {
        let n = McpToolName::new("github", "create_issue");
        assert_eq!(n.to_string(), "mcp__github__create_issue");
        assert_eq!((n.server(), n.tool()), ("github", "create_issue"));
        assert_eq!(McpToolName::server_prefix("github"), "mcp__github__");
    }

    #[test]
    fn parse_splits_at_the_first_separator() {
        assert_eq!(parts("mcp__gh__create_issue"), pair("gh", "create_issue"));
        // The tool may hold `__`; the server never does.
        assert_eq!(parts("mcp__gh__a__b"), pair("gh", "a__b"));
        // Single underscores belong to the names.
        assert_eq!(parts("mcp__my_fs__write_file"), pair("my_fs", "write_file"));
        assert_eq!(parts("mcp__a___b"), pair("a", "_b"));
        assert_eq!(parts("mcp___a__b"), pair("_a", "b"));
    }

    #[test]
    fn parse_keeps_empty_parts() {
        assert_eq!(parts("mcp____x"), pair("", "x"));
        assert_eq!(parts("mcp__gh__"), pair("gh", ""));
        assert_eq!(parts("mcp____"), pair("", ""));
    }

    #[test]
    fn parse_refuses_what_is_not_an_mcp_name() {
        for name in [
            "",
            "mcp",
            "mcp_",
            "mcp__",
            "mcp__gh",
            "mcp_gh_tool",
            "MCP__gh__t",
            "Bash",
            "xmcp__a__b",
        ] {
            assert_eq!(parts(name), None, "{name:?}");
        }
    }

    #[test]
    fn parsing_what_is_displayed_gives_it_back() {
        for name in [
            "mcp__gh__t",
            "mcp__gh__a__b",
            "mcp____x",
            "mcp__gh__",
            "mcp__a___b",
        ] {
            let n = McpToolName::parse(name).expect(name);
            assert_eq!(n.to_string(), name);
            assert_eq!(McpToolName::parse(&n.to_string()), Some(n));
        }
    }

    #[test]
    fn readings_where_the_separator_touches_an_underscore() {
        let r = |name: &str| {
            McpToolName::readings(name)
                .into_iter()
                .map(McpToolName::into_parts)
                .collect::<Vec<_>>()
        };
        let p = |s: &str, t: &str| (s.to_string(), t.to_string());
        assert_eq!(r("mcp__gh__t"), [p("gh", "t")]);
        assert_eq!(r("mcp__gh__a__b"), [p("gh", "a__b")]);
        assert_eq!(r("mcp__my_fs__x"), [p("my_fs", "x")]);
        assert_eq!(r("mcp___a__t"), [p("_a", "t")]);
        // Server `a_`, tool `t` is spelt as server `a`, tool `_t` is.
        assert_eq!(r("mcp__a___t"), [p("a", "_t"), p("a_", "t")]);
        assert_eq!(r("mcp__a____t"), [p("a", "__t"), p("a_", "_t")]);
        assert_eq!(r("mcp_____x"), [p("", "_x"), p("_", "x")]);
        for name in ["mcp__gh", "Bash", "mcp_a_b"] {
            assert!(r(name).is_empty(), "{name}");
        }
        // Every reading is spelt as the name.
        for name in ["mcp__a___t", "mcp__a____t", "mcp_____x"] {
            for n in McpToolName::readings(name) {
                assert_eq!(n.to_string(), name);
            }
        }
    }

    #[test]
    fn gemini_spelling_joins_with_single_underscores() {
        assert_eq!(
            McpToolName::new("my", "fs_write").gemini_spelling(),
            "mcp_my_fs_write"
        );
        assert_eq!(
            McpToolName::new("my_fs", "write").gemini_spelling(),
            "mcp_my_fs_write"
        );
        for name in ["mcp_my_fs_write", "mcp_a", "mcp_a__b"] {
            assert!(McpToolName::is_gemini_spelling(name), "{name}");
        }
        for name in ["mcp__a__b", "mcp__a", "mcp_", "mcp___a", "Bash", "xmcp_a_b"] {
            assert!(!McpToolName::is_gemini_spelling(name), "{name}");
        }
    }

    #[test]
    fn parse_for_a_known_server() {
        let p = |s: &str, n: &str| McpToolName::parse_for(s, n).map(McpToolName::into_parts);
        assert_eq!(p("gh", "mcp__gh__t"), pair("gh", "t"));
        // A server from an agent's context may hold `__`: it is taken whole.
        assert_eq!(p("a__b", "mcp__a__b__t"), pair("a__b", "t"));
        assert_eq!(p("a", "mcp__a__b__t"), pair("a", "b__t"));
        assert_eq!(p("gh", "mcp__gh__"), pair("gh", ""));
        assert_eq!(p("gh", "mcp__other__t"), None);
        assert_eq!(p("gh", "mcp__ghx__t"), None);
        assert_eq!(p("gh", "t"), None);
        assert_eq!(p("gh", "mcp__gh"), None);
    }

    #[test]
    fn serializes_as_its_parts() {
        let v = serde_json::to_value(McpToolName::new("s", "t")).expect("serializes");
        assert_eq!(v, serde_json::json!({"server": "s", "tool": "t"}));
    }
}
