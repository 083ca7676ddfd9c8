//! Permission rules, in Claude Code's syntax: parsing and matching.
//!
//! `Bash(git diff *)` matches a *simple command* (after the shell analysis has
//! unwrapped it) token by token, never by string prefix: `git diff *` matches
//! `git diff --stat` but not `git -c core.pager=sh diff`. `Read(…)` and
//! `Edit(…)`/`Write(…)` match canonical paths with gitignore-style patterns;
//! `WebFetch(domain:…)` matches host names; `mcp__server[__tool]` match MCP tools.

use portcullis_shell::Command;
use serde::Serialize;

use crate::error::RuleError;
use crate::mcp_name::McpToolName;

/// Which list a rule is in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum RuleList {
    Deny,
    Ask,
    Allow,
}

/// One rule, with where it came from.
#[derive(Clone, Debug, PartialEq)]
pub struct Rule {
    /// The rule as written (`Bash(git diff *)`).
    pub text: String,
    /// Where it was written (`~/.config/portcullis/config.toml:7`).
    pub source: String,
    pub list: RuleList,
    pub target: Target,
}

/// What a rule applies to.
#[derive(Clone, Debug, PartialEq)]
pub enum Target {
    /// `Bash` or `Bash(*)`: every command.
    AnyCommand,
    /// `Bash(git diff *)`.
    Command(CommandPattern),
    /// `Read(…)`: reads of matching paths.
    Read(PathPattern),
    /// `Edit(…)` / `Write(…)`: writes, deletes and moves of matching paths.
    Write(PathPattern),
    /// `WebFetch(domain:…)`.
    Domain(DomainPattern),
    /// A bare tool name (`WebFetch`, `WebSearch`, `Read`, `TodoWrite`, `*`).
    Tool(String),
    /// `mcp__server`, `mcp__server__*` (tool `None`) or `mcp__server__tool`.
    Mcp {
        server: String,
        tool: Option<String>,
    },
    /// A tool with a specifier this engine does not evaluate (`Agent(Explore)`,
    /// `Skill(x)`): deny and ask rules match every call of the tool; an allow
    /// rule never matches (fail closed).
    Unevaluated { tool: String, specifier: String },
}

impl Rule {
    /// Parses one rule.
    pub fn parse(text: &str, list: RuleList, source: &str) -> Result<Rule, RuleError> {
        let err = |why: String| RuleError {
            rule: text.to_string(),
            location: source.to_string(),
            why,
        };
        let t = text.trim();
        if t.is_empty() {
            return Err(err("the rule is empty".into()));
        }
        let (tool, spec) = match t.split_once('(') {
            None => {
                if t.contains(')') {
                    return Err(err("a `)` without its `(`".into()));
                }
                (t, None)
            }
            Some((tool, rest)) => {
                let Some(spec) = rest.strip_suffix(')') else {
                    return Err(err(
                        "the specifier must end with `)`: write `Tool(specifier)`".into(),
                    ));
                };
                (tool, Some(spec))
            }
        };
        if tool.is_empty()
            || !tool
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-' || c == '*' || c == '.')
        {
            return Err(err(format!("`{tool}` is not a tool name")));
        }
        let target = match (tool, spec) {
            (_, Some(s)) if s.trim().is_empty() => {
                return Err(err(format!("`{tool}()` has an empty specifier")));
            }
            ("Bash", None) => Target::AnyCommand,
            ("Bash", Some(s)) if s.trim() == "*" => Target::AnyCommand,
            ("Bash", Some(s)) => Target::Command(CommandPattern::parse(s).map_err(err)?),
            ("Read", Some(s)) => Target::Read(PathPattern::parse(s, list)),
            ("Edit" | "Write" | "MultiEdit" | "NotebookEdit", Some(s)) => {
                Target::Write(PathPattern::parse(s, list))
            }
            ("WebFetch", Some(s)) => {
                let Some(domain) = s.trim().strip_prefix("domain:") else {
                    return Err(err(format!("WebFetch takes `domain:HOST`, not `{s}`")));
                };
                Target::Domain(DomainPattern::parse(domain).map_err(err)?)
            }
            (name, None) if name.starts_with(McpToolName::PREFIX) => {
                // `mcp__server__tool`, `mcp__server__*` or `mcp__server`.
                let rest = name.strip_prefix(McpToolName::PREFIX).unwrap_or(name);
                let every_tool = rest.strip_suffix("__*");
                let (server, tool) = match (every_tool, McpToolName::parse(name)) {
                    // `mcp__a___*` is every tool of `a_`, not tool `_*` of `a`.
                    (Some(server), _) => (server.to_string(), None),
                    (None, Some(n)) => {
                        let (server, tool) = n.into_parts();
                        (server, Some(tool))
                    }
                    (None, None) => (rest.to_string(), None),
                };
                if server.is_empty() {
                    return Err(err(
                        "an MCP rule names its server: `mcp__server` or `mcp__server__tool`".into(),
                    ));
                }
                if tool.is_none() && server.contains(McpToolName::SEPARATOR) {
                    return Err(err(format!(
                        "an MCP server's name holds no `__` (`mcp__{server}__*` is no server's tools): \
                         `mcp__server__*` or `mcp__server__tool`"
                    )));
                }
                Target::Mcp { server, tool }
            }
            (name, Some(_))
                if name.starts_with(McpToolName::PREFIX)
                    || McpToolName::is_gemini_spelling(name) =>
            {
                return Err(err(
                    "MCP rules take no specifier: `mcp__server__tool`".into()
                ));
            }
            // Gemini CLI's spelling (`mcp_my_fs_write`) names the tool the
            // agent calls so, exactly (`decide.rs`); a pattern over it cannot
            // say where the server's name ends.
            (name, None) if McpToolName::is_gemini_spelling(name) && name.contains('*') => {
                return Err(err(format!(
                    "`{name}` is a pattern over Gemini's spelling `mcp_<server>_<tool>`, which \
                     cannot say where the server's name ends: write `mcp__server` for every \
                     tool of a server, or `mcp__server__tool`"
                )));
            }
            (name, None) => Target::Tool(name.to_string()),
            (name, Some(s)) => Target::Unevaluated {
                tool: name.to_string(),
                specifier: s.to_string(),
            },
        };
        Ok(Rule {
            text: text.to_string(),
            source: source.to_string(),
            list,
            target,
        })
    }
}

// ----- command patterns --------------------------------------------------------------

/// A command pattern: tokens matched against a command's words.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CommandPattern {
    tokens: Vec<PatternWord>,
}

/// One word of a command pattern.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PatternWord {
    /// A word that must be equal.
    Literal(String),
    /// A word with `*` in it (`test*`): a glob within one word.
    Glob(String),
    /// A standalone `*`: one or more words, or zero at the end.
    Any,
}

/// How to treat words only known at run time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dynamics {
    /// Allow rules: a dynamic word matches nothing (it could be anything).
    Never,
    /// Deny and ask rules: a dynamic word could be what the rule names, so it matches.
    Possibly,
}

impl CommandPattern {
    /// The pattern's words, as parsed (quotes removed, `:*` read as ` *`).
    pub fn words(&self) -> &[PatternWord] {
        &self.tokens
    }

    /// Parses `git diff *`, legacy `npm run test:*`, quoted words (`echo "a b"`).
    pub fn parse(text: &str) -> Result<CommandPattern, String> {
        let text = text.trim();
        let text = match text.strip_suffix(":*") {
            Some(prefix) => format!("{prefix} *"),
            None => text.to_string(),
        };
        let mut tokens = Vec::new();
        let mut cur = String::new();
        let mut has_glob = false;
        let mut in_word = false;
        let mut chars = text.chars().peekable();
        while let Some(c) = chars.next() {
            match c {
                ' ' | '\t' | '\n' => {
                    if in_word {
                        tokens.push(Self::token(std::mem::take(&mut cur), has_glob));
                        has_glob = false;
                        in_word = false;
                    }
                }
                '\'' => {
                    in_word = true;
                    loop {
                        match chars.next() {
                            Some('\'') => break,
                            Some(ch) => cur.push(ch),
                            None => return Err("an unterminated `'` in the command pattern".into()),
                        }
                    }
                }
                '"' => {
                    in_word = true;
                    loop {
                        match chars.next() {
                            Some('"') => break,
                            Some('\\') => match chars.next() {
                                Some(ch) => cur.push(ch),
                                None => {
                                    return Err("a `\\` at the end of the command pattern".into());
                                }
                            },
                            Some(ch) => cur.push(ch),
                            None => {
                                return Err("an unterminated `\"` in the command pattern".into());
                            }
                        }
                    }
                }
                '\\' => {
                    in_word = true;
                    match chars.next() {
                        Some(ch) => cur.push(ch),
                        None => return Err("a `\\` at the end of the command pattern".into()),
                    }
                }
                '*' => {
                    in_word = true;
                    has_glob = true;
                    cur.push('\u{0}');
                }
                _ => {
                    in_word = true;
                    cur.push(c);
                }
            }
        }
        if in_word {
            tokens.push(Self::token(cur, has_glob));
        }
        if tokens.is_empty() {
            return Err("the command pattern is empty".into());
        }
        if tokens.first() == Some(&PatternWord::Any) {
            return Err(
                "a command pattern starts with the program (`Bash(*)` alone means every command)"
                    .into(),
            );
        }
        Ok(CommandPattern { tokens })
    }

    /// Unquoted `*` is stored as NUL (a character no shell word holds) so that
    /// a quoted `"*"` stays literal.
    fn token(word: String, has_glob: bool) -> PatternWord {
        if word == "\u{0}" {
            PatternWord::Any
        } else if has_glob {
            PatternWord::Glob(word)
        } else {
            PatternWord::Literal(word)
        }
    }

    /// The words the pattern names literally (for hazards and code-running options,
    /// which only a rule naming them literally may allow).
    pub fn literal_words(&self) -> impl Iterator<Item = &str> {
        self.tokens.iter().filter_map(|t| match t {
            PatternWord::Literal(w) => Some(w.as_str()),
            _ => None,
        })
    }

    /// Whether the pattern matches a command of the analysis.
    pub fn matches(&self, cmd: &Command, dynamics: Dynamics) -> bool {
        let Some((first, rest)) = self.tokens.split_first() else {
            return false;
        };
        if cmd.dynamic_words.contains(&0) {
            return false;
        }
        let program_ok = match first {
            PatternWord::Literal(p) => program_matches(p, &cmd.program),
            PatternWord::Glob(g) => {
                glob_word(g, &cmd.program) || glob_word(g, knowledge_name(&cmd.program))
            }
            PatternWord::Any => true,
        };
        if !program_ok {
            return false;
        }
        if rest.is_empty() && matches!(first, PatternWord::Glob(g) if g.ends_with('\u{0}')) {
            // `Bash(ls*)`: the program glob runs on over the arguments.
            return dynamics == Dynamics::Possibly || cmd.dynamic_words.is_empty();
        }
        let words: Vec<(&str, bool)> = cmd
            .words
            .iter()
            .enumerate()
            .skip(1)
            .map(|(i, w)| (w.as_str(), cmd.dynamic_words.contains(&i)))
            .collect();
        match_tokens(rest, &words, dynamics)
    }
}

/// The name knowledge applies to: bare, or the basename in a system directory.
fn knowledge_name(program: &str) -> &str {
    portcullis_shell::knowledge::lookup_key(program).unwrap_or(program)
}

/// `git` in a rule matches `git` and `/usr/bin/git`, not `./git`.
fn program_matches(rule: &str, program: &str) -> bool {
    rule == program || (!rule.contains('/') && knowledge_name(program) == rule)
}

fn match_tokens(tokens: &[PatternWord], words: &[(&str, bool)], d: Dynamics) -> bool {
    let Some((tok, rest)) = tokens.split_first() else {
        return words.is_empty();
    };
    match tok {
        PatternWord::Any => {
            if rest.is_empty() {
                // Trailing `*`: zero or more words; dynamic ones only where allowed.
                return d == Dynamics::Possibly || words.iter().all(|(_, dynamic)| !dynamic);
            }
            // `*` covers one word, then two, and so on: each covered word
            // dynamic only where allowed, the rest matching the rest.
            let mut after = words;
            while let Some(((_, dynamic), more)) = after.split_first() {
                if *dynamic && d != Dynamics::Possibly {
                    // Neither this run nor any longer one is covered.
                    return false;
                }
                after = more;
                if match_tokens(rest, after, d) {
                    return true;
                }
            }
            false
        }
        PatternWord::Literal(lit) => match words.split_first() {
            Some(((w, dynamic), more)) => {
                let ok = if *dynamic {
                    d == Dynamics::Possibly
                } else {
                    w == lit
                };
                ok && match_tokens(rest, more, d)
            }
            None => false,
        },
        PatternWord::Glob(g) => match words.split_first() {
            Some(((w, dynamic), more)) => {
                let ok = if *dynamic {
                    d == Dynamics::Possibly
                } else {
                    glob_word(g, w)
                };
                // A last token ending in `*` (`Bash(npm run test*)`) runs on over the
                // following words, as Claude Code's `*` matches spaces too.
                let absorbs = rest.is_empty() && g.ends_with('\u{0}');
                let tail_ok = || d == Dynamics::Possibly || more.iter().all(|(_, dy)| !dy);
                ok && (match_tokens(rest, more, d) || (absorbs && tail_ok()))
            }
            None => false,
        },
    }
}

/// Matches a word against a glob whose `*` are stored as NUL.
fn glob_word(glob: &str, word: &str) -> bool {
    let parts: Vec<&str> = glob.split('\u{0}').collect();
    let [first, mids @ .., last] = parts.as_slice() else {
        // No `*` (a glob always has one): the word itself.
        return glob == word;
    };
    // `first` and `last` without overlapping, the `mids` in order between.
    let Some(mut rest) = word
        .strip_prefix(first)
        .and_then(|after| after.strip_suffix(last))
    else {
        return false;
    };
    for mid in mids {
        match rest.split_once(mid) {
            Some((_, after)) => rest = after,
            None => return false,
        }
    }
    true
}

// ----- path patterns --------------------------------------------------------------------

/// A gitignore-style path pattern.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PathPattern {
    anchor: Anchor,
    /// Components after the anchor (`**`, `*.rs`, `src`).
    components: Vec<String>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Anchor {
    /// `//abs/path`.
    Root,
    /// `~/path`.
    Home,
    /// `./path`, `path/…`, `/path` (relative to the call's directory: the
    /// project-relative `/path` of Claude Code's settings is read the same way).
    Cwd,
    /// A bare name (`.env`): at any depth.
    AnyDepth,
}

impl PathPattern {
    pub fn parse(text: &str, list: RuleList) -> PathPattern {
        let t = text.trim();
        let (anchor, rest) = if let Some(r) = t.strip_prefix("//") {
            (Anchor::Root, r)
        } else if let Some(r) = t.strip_prefix("~/") {
            (Anchor::Home, r)
        } else if t == "~" {
            (Anchor::Home, "")
        } else if let Some(r) = t.strip_prefix("./") {
            (Anchor::Cwd, r)
        } else if let Some(r) = t.strip_prefix('/') {
            (Anchor::Cwd, r)
        } else if !t.trim_end_matches("/**").contains('/') && list != RuleList::Allow {
            // `.env`, `secrets/**` in deny/ask lists: at any depth.
            (Anchor::AnyDepth, t)
        } else if !t.contains('/') {
            (Anchor::AnyDepth, t)
        } else {
            (Anchor::Cwd, t)
        };
        let components = rest
            .split('/')
            .filter(|c| !c.is_empty() && *c != ".")
            .map(str::to_string)
            .collect();
        PathPattern { anchor, components }
    }

    /// Whether the pattern matches an absolute canonical path.
    pub fn matches(&self, canonical: &str, cwd: &str, home: &str) -> bool {
        let path: Vec<&str> = canonical.split('/').filter(|c| !c.is_empty()).collect();
        let pat: Vec<&str> = self.components.iter().map(String::as_str).collect();
        let base: Vec<&str> = match self.anchor {
            Anchor::Root => Vec::new(),
            Anchor::Home => home.split('/').filter(|c| !c.is_empty()).collect(),
            Anchor::Cwd => cwd.split('/').filter(|c| !c.is_empty()).collect(),
            Anchor::AnyDepth => {
                return suffixes(&path).any(|below| match_components(&pat, below, true));
            }
        };
        path.strip_prefix(base.as_slice())
            .is_some_and(|below| match_components(&pat, below, true))
    }
}

/// Component-wise glob: `**` spans any number of components; a pattern without
/// wildcards at its end also matches everything below (a directory).
fn match_components(pat: &[&str], path: &[&str], below_ok: bool) -> bool {
    match pat.split_first() {
        None => path.is_empty() || below_ok,
        Some((&"**", rest)) => suffixes(path).any(|below| match_components(rest, below, below_ok)),
        Some((p, rest)) => match path.split_first() {
            Some((c, more)) => {
                glob_component(p, c) && match_components(rest, more, below_ok && !p.contains('*'))
            }
            None => false,
        },
    }
}

/// Matches one path component against a glob with `*` and `?` (no `/`).
/// Shared with the paths crate, which expands globs with the same semantics.
pub fn glob_component(pattern: &str, name: &str) -> bool {
    if !pattern.contains(['*', '?']) {
        return pattern == name;
    }
    let p: Vec<char> = pattern.chars().collect();
    let n: Vec<char> = name.chars().collect();
    fn go(p: &[char], n: &[char]) -> bool {
        match p.split_first() {
            None => n.is_empty(),
            Some(('*', rest)) => suffixes(n).any(|m| go(rest, m)),
            Some(('?', rest)) => n.split_first().is_some_and(|(_, more)| go(rest, more)),
            Some((c, rest)) => n
                .split_first()
                .is_some_and(|(x, more)| x == c && go(rest, more)),
        }
    }
    go(&p, &n)
}

/// `s`, then `s` without its first element, and so on down to the empty
/// slice: `s[k..]` for every `k` from 0 to `s.len()`.
fn suffixes<T>(s: &[T]) -> impl Iterator<Item = &[T]> {
    std::iter::successors(Some(s), |s| s.split_first().map(|(_, rest)| rest))
}

// ----- domains ------------------------------------------------------------------------------

/// `example.com`, `*.example.com` (any subdomain, not the apex), or `*`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DomainPattern {
    labels: Vec<String>,
}

impl DomainPattern {
    pub fn parse(text: &str) -> Result<DomainPattern, String> {
        let t = text.trim().trim_end_matches('.').to_ascii_lowercase();
        if t.is_empty() || t.contains(['/', ' ', ':']) {
            return Err(format!("`{text}` is not a host name"));
        }
        Ok(DomainPattern {
            labels: t.split('.').map(str::to_string).collect(),
        })
    }

    pub fn matches(&self, host: &str) -> bool {
        let host = host.trim_end_matches('.').to_ascii_lowercase();
        let labels: Vec<&str> = host.split('.').collect();
        // A `*` label matches one label; a leading `*.` matches one or more.
        let label_eq = |p: &String, l: &&str| p == "*" || p == l;
        match self.labels.as_slice() {
            [only] if only == "*" => true,
            [star, tail @ ..] if star == "*" => {
                // The last `tail.len()` labels match the tail, after at least one.
                labels.len() > tail.len()
                    && labels
                        .iter()
                        .rev()
                        .zip(tail.iter().rev())
                        .all(|(l, p)| label_eq(p, l))
            }
            _ => {
                labels.len() == self.labels.len()
                    && labels.iter().zip(&self.labels).all(|(l, p)| label_eq(p, l))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cmd(text: &str) -> Command {
        portcullis_shell::analyze(text)
            .commands
            .into_iter()
            .next()
            .expect("a command")
    }

    fn pat(p: &str) -> CommandPattern {
        CommandPattern::parse(p).unwrap()
    }

    #[test]
    fn command_patterns_match_by_tokens() {
        assert!(pat("git diff *").matches(&cmd("git diff --stat"), Dynamics::Never));
        assert!(pat("git diff *").matches(&cmd("git diff"), Dynamics::Never));
        assert!(!pat("git diff *").matches(&cmd("git -c core.pager=sh diff"), Dynamics::Never));
        assert!(!pat("ls *").matches(&cmd("lsof"), Dynamics::Never));
        assert!(pat("ls*").matches(&cmd("lsof -i"), Dynamics::Never));
        assert!(pat("npm run test*").matches(&cmd("npm run test --watch"), Dynamics::Never));
        assert!(!pat("npm run test*").matches(&cmd("npm run lint"), Dynamics::Never));
        assert!(pat("npm run test:*").matches(&cmd("npm run test"), Dynamics::Never));
        assert!(pat("npm run test:*").matches(&cmd("npm run test --watch"), Dynamics::Never));
        assert!(!pat("npm run test:*").matches(&cmd("npm run testx"), Dynamics::Never));
        assert!(pat("git * main").matches(&cmd("git push origin main"), Dynamics::Never));
        assert!(!pat("git * main").matches(&cmd("git main"), Dynamics::Never));
        assert!(pat("git status").matches(&cmd("/usr/bin/git status"), Dynamics::Never));
        assert!(!pat("git status").matches(&cmd("./git status"), Dynamics::Never));
        assert!(pat("echo \"a b\"").matches(&cmd("echo 'a b'"), Dynamics::Never));
    }

    #[test]
    fn dynamic_words_match_only_deny_and_ask() {
        let c = cmd("rm -rf \"$DIR\"");
        assert!(!pat("rm *").matches(&c, Dynamics::Never));
        assert!(pat("rm *").matches(&c, Dynamics::Possibly));
        assert!(pat("rm -rf /").matches(&c, Dynamics::Possibly));
        assert!(!pat("rm -rf /").matches(&c, Dynamics::Never));
    }

    #[test]
    fn rules_parse_and_reject() {
        assert!(matches!(
            Rule::parse("Bash(git *)", RuleList::Allow, "t")
                .unwrap()
                .target,
            Target::Command(_)
        ));
        assert!(matches!(
            Rule::parse("Bash", RuleList::Allow, "t").unwrap().target,
            Target::AnyCommand
        ));
        assert!(matches!(
            Rule::parse("mcp__gh__*", RuleList::Allow, "t")
                .unwrap()
                .target,
            Target::Mcp { tool: None, .. }
        ));
        assert!(Rule::parse("Bash(git *", RuleList::Allow, "t").is_err());
        assert!(Rule::parse("Bash()", RuleList::Allow, "t").is_err());
        assert!(Rule::parse("WebFetch(example.com)", RuleList::Allow, "t").is_err());
        assert!(Rule::parse("Bash(echo 'x)", RuleList::Allow, "t").is_err());
        assert!(Rule::parse("", RuleList::Allow, "t").is_err());
    }

    /// An MCP rule's server ends at the first `__`, as a call's does; a rule
    /// for every tool (`__*`) names its server whole.
    #[test]
    fn mcp_rule_names() {
        let target = |text: &str| Rule::parse(text, RuleList::Allow, "t").map(|r| r.target);
        let mcp = |server: &str, tool: Option<&str>| Target::Mcp {
            server: server.into(),
            tool: tool.map(str::to_string),
        };
        assert_eq!(target("mcp__gh").unwrap(), mcp("gh", None));
        assert_eq!(target("mcp__gh__*").unwrap(), mcp("gh", None));
        assert_eq!(target("mcp__gh__issue").unwrap(), mcp("gh", Some("issue")));
        assert_eq!(target("mcp__gh__a__b").unwrap(), mcp("gh", Some("a__b")));
        assert_eq!(target("mcp__my_fs__x").unwrap(), mcp("my_fs", Some("x")));
        assert_eq!(target("mcp__gh__").unwrap(), mcp("gh", Some("")));
        for nameless in ["mcp__", "mcp____x", "mcp____*"] {
            assert!(target(nameless).is_err(), "{nameless}");
        }
        // Every tool of a server whose name touches the separator.
        assert_eq!(target("mcp__a___*").unwrap(), mcp("a_", None));
        assert_eq!(target("mcp__a_").unwrap(), mcp("a_", None));
        assert_eq!(target("mcp___a__*").unwrap(), mcp("_a", None));
        assert_eq!(target("mcp__a___t").unwrap(), mcp("a", Some("_t")));
        // No server's name holds `__`: such a rule would match nothing.
        let e = target("mcp__a__b__*").unwrap_err().to_string();
        assert!(e.contains("holds no `__`"), "{e}");
        assert_eq!(target("mcp__*").unwrap(), mcp("*", None));
        assert!(Rule::parse("mcp__gh__x(arg)", RuleList::Allow, "t").is_err());
    }

    /// Gemini CLI's spelling names the tool the agent calls so (`decide.rs`
    /// matches it); a pattern over it cannot say where the server ends.
    #[test]
    fn gemini_spelt_mcp_rule_names() {
        for list in [RuleList::Deny, RuleList::Ask, RuleList::Allow] {
            let target = |text: &str| Rule::parse(text, list, "t").map(|r| r.target);
            assert_eq!(
                target("mcp_my_fs_write").unwrap(),
                Target::Tool("mcp_my_fs_write".into())
            );
            for pattern in ["mcp_my_*", "mcp_*", "mcp_my_fs_w*"] {
                let e = target(pattern).unwrap_err().to_string();
                assert!(e.contains(pattern), "{e}");
                assert!(e.contains("`mcp__server`"), "{e}");
                assert!(e.contains("`mcp__server__tool`"), "{e}");
            }
            let e = target("mcp_my_fs_write(x)").unwrap_err().to_string();
            assert!(e.contains("no specifier"), "{e}");
        }
    }

    #[test]
    fn path_patterns() {
        let home = "/home/u";
        let cwd = "/home/u/proj";
        let p = PathPattern::parse("./src/**", RuleList::Allow);
        assert!(p.matches("/home/u/proj/src/a/b.rs", cwd, home));
        assert!(!p.matches("/home/u/proj/srcx/a.rs", cwd, home));
        assert!(PathPattern::parse("~/.ssh/**", RuleList::Deny).matches(
            "/home/u/.ssh/id_rsa",
            cwd,
            home
        ));
        assert!(PathPattern::parse("//etc/**", RuleList::Allow).matches("/etc/passwd", cwd, home));
        assert!(PathPattern::parse(".env", RuleList::Deny).matches(
            "/home/u/proj/a/.env",
            cwd,
            home
        ));
        assert!(PathPattern::parse("*.rs", RuleList::Allow).matches(
            "/home/u/proj/a/b.rs",
            cwd,
            home
        ));
        assert!(PathPattern::parse("./**", RuleList::Allow).matches("/home/u/proj/x", cwd, home));
        assert!(!PathPattern::parse("./**", RuleList::Allow).matches("/home/u/projx/x", cwd, home));
    }

    #[test]
    fn domains() {
        let d = DomainPattern::parse("*.example.com").unwrap();
        assert!(d.matches("a.b.example.com"));
        assert!(!d.matches("example.com"));
        assert!(
            DomainPattern::parse("example.com")
                .unwrap()
                .matches("EXAMPLE.com.")
        );
        assert!(
            !DomainPattern::parse("example.com")
                .unwrap()
                .matches("evilexample.com")
        );
    }
}
