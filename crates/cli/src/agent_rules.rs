//! The agent's own permission rules that a rewritten call would slip past.
//!
//! A hook that confines a call rewrites it into `portcullis run … -- bash -c
//! '<command>'`, and the agent then matches its own rules against the
//! rewritten command: Claude Code's `Bash(rm:*)` deny rule no longer sees
//! `rm` (tested with the real CLI in `tests/it/claude_e2e.rs`). So Claude Code's
//! own `Bash(…)` deny and ask rules — from its managed, user, project and
//! local settings — join portcullis' rules for Claude Code's calls: the
//! engine judges the original command by them (seeing through wrappers and
//! compounds, so at least as strictly as Claude Code), and a call they deny
//! or ask about is never rewritten. Its path rules (`Read(…)`, `Edit(…)`)
//! are left to Claude Code: they govern its file tools, which are never
//! rewritten, and their path syntax is its own.
//!
//! Codex's own rules — `prefix_rule(pattern = […], decision = "forbidden" |
//! "prompt")` in `$CODEX_HOME/rules/*.rules` and a project's
//! `.codex/rules/*.rules` — join the same way, as deny and ask rules, for
//! Codex's calls. Those files are Starlark; only rules written as literal
//! calls (strings and lists, as `portcullis export codex-rules` and Codex's
//! own "always allow" write them) are read, a computed one is skipped.
//!
//! Gemini CLI's own policy rules — `[[rule]]` tables of `*.toml` in
//! `~/.gemini/policies` and the admin directory `/etc/gemini-cli/policies`
//! — join as well: a `commandPrefix` with decision `deny` or `ask_user`
//! becomes a deny or ask rule (Gemini re-checks its policy on the rewritten
//! call, where the prefix no longer matches). `commandRegex` and
//! `argsPattern` rules are left to Gemini.
//!
//! A settings file that is missing or not JSON adds nothing (Claude Code
//! reports its own broken settings); a rule portcullis cannot parse is
//! skipped, and the agent still applies it to calls that are not
//! rewritten.

use std::path::{Path, PathBuf};

use portcullis_policy::{Rule, RuleList};

/// Claude Code's settings files for a call in `cwd` (and its project root
/// `project`), most general first.
fn claude_code_files(home: &str, cwd: &str, project: Option<&str>) -> Vec<PathBuf> {
    let mut files = vec![
        PathBuf::from("/etc/claude-code/managed-settings.json"),
        Path::new(home).join(".claude/settings.json"),
    ];
    for dir in project.into_iter().chain([cwd]) {
        for name in ["settings.json", "settings.local.json"] {
            let f = Path::new(dir).join(".claude").join(name);
            if !files.contains(&f) {
                files.push(f);
            }
        }
    }
    files
}

/// Claude Code's own `Bash(…)` deny and ask rules, as portcullis rules whose
/// source names the settings file.
pub fn claude_code(home: &str, cwd: &str, project: Option<&str>) -> Vec<Rule> {
    let mut rules = Vec::new();
    for file in claude_code_files(home, cwd, project) {
        let Ok(text) = std::fs::read_to_string(&file) else {
            continue;
        };
        let Ok(json) = serde_json::from_str::<serde_json::Value>(&text) else {
            continue;
        };
        for (key, list) in [("deny", RuleList::Deny), ("ask", RuleList::Ask)] {
            let written = json
                .get("permissions")
                .and_then(|p| p.get(key))
                .and_then(serde_json::Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(serde_json::Value::as_str);
            for text in written {
                let t = text.trim();
                if !(t == "Bash" || t.starts_with("Bash(")) {
                    continue;
                }
                let source = format!("Claude Code's {} (permissions.{key})", file.display());
                if let Ok(rule) = Rule::parse(t, list, &source) {
                    rules.push(rule);
                }
            }
        }
    }
    rules
}

/// Codex's rules directories for a call in `cwd`: `$CODEX_HOME/rules` (else
/// `~/.codex/rules`), then the project's and the working directory's
/// `.codex/rules`.
fn codex_dirs(codex_home: &Path, cwd: &str, project: Option<&str>) -> Vec<PathBuf> {
    let mut dirs = vec![codex_home.join("rules")];
    for dir in project.into_iter().chain([cwd]) {
        let d = Path::new(dir).join(".codex/rules");
        if !dirs.contains(&d) {
            dirs.push(d);
        }
    }
    dirs
}

/// The most patterns one `prefix_rule` expands to (its alternatives
/// multiplied out); past it the rule is skipped.
const MAX_EXPANSION: usize = 64;

/// Codex's own `forbidden` and `prompt` prefix rules, as portcullis deny and
/// ask rules whose source names the file.
pub fn codex(codex_home: &Path, cwd: &str, project: Option<&str>) -> Vec<Rule> {
    let mut rules = Vec::new();
    for dir in codex_dirs(codex_home, cwd, project) {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        let mut files: Vec<PathBuf> = entries
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "rules"))
            .collect();
        files.sort();
        for file in files {
            let Ok(text) = std::fs::read_to_string(&file) else {
                continue;
            };
            for call in starlark::prefix_rules(&text) {
                let list = match call.decision.as_deref() {
                    Some("forbidden") => RuleList::Deny,
                    Some("prompt") => RuleList::Ask,
                    _ => continue,
                };
                let source = format!(
                    "Codex's {} (prefix_rule, {})",
                    file.display(),
                    list_name(list)
                );
                for words in expand(&call.pattern) {
                    let quoted: Vec<String> =
                        words.iter().map(|w| portcullis_shell::quote(w)).collect();
                    let text = format!("Bash({}:*)", quoted.join(" "));
                    if let Ok(rule) = Rule::parse(&text, list, &source) {
                        rules.push(rule);
                    }
                }
            }
        }
    }
    rules
}

fn list_name(list: RuleList) -> &'static str {
    match list {
        RuleList::Deny => "forbidden",
        RuleList::Ask => "prompt",
        RuleList::Allow => "allow",
    }
}

/// Every word sequence a pattern of alternatives names; empty past
/// [`MAX_EXPANSION`].
fn expand(pattern: &[Vec<String>]) -> Vec<Vec<String>> {
    let mut out: Vec<Vec<String>> = vec![Vec::new()];
    for alternatives in pattern {
        let mut next = Vec::new();
        for prefix in &out {
            for alt in alternatives {
                let mut words = prefix.clone();
                words.push(alt.clone());
                next.push(words);
            }
        }
        if next.len() > MAX_EXPANSION {
            return Vec::new();
        }
        out = next;
    }
    out.retain(|w| !w.is_empty());
    out
}

/// Gemini CLI's policy directories (user, then admin).
fn gemini_dirs(home: &str) -> Vec<PathBuf> {
    vec![
        Path::new(home).join(".gemini/policies"),
        PathBuf::from("/etc/gemini-cli/policies"),
    ]
}

/// Gemini CLI's own `deny` and `ask_user` shell rules with a
/// `commandPrefix`, as portcullis deny and ask rules.
pub fn gemini(home: &str) -> Vec<Rule> {
    let mut rules = Vec::new();
    for dir in gemini_dirs(home) {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        let mut files: Vec<PathBuf> = entries
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "toml"))
            .collect();
        files.sort();
        for file in files {
            let Some(table) = std::fs::read_to_string(&file)
                .ok()
                .and_then(|t| t.parse::<toml::Table>().ok())
            else {
                continue;
            };
            let entries = table
                .get("rule")
                .and_then(toml::Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(toml::Value::as_table);
            for rule in entries {
                let list = match rule.get("decision").and_then(toml::Value::as_str) {
                    Some("deny") => RuleList::Deny,
                    Some("ask_user") => RuleList::Ask,
                    _ => continue,
                };
                if rule.contains_key("argsPattern") {
                    continue;
                }
                let names = |v: Option<&toml::Value>| -> Vec<String> {
                    match v {
                        Some(toml::Value::String(s)) => vec![s.clone()],
                        Some(toml::Value::Array(a)) => a
                            .iter()
                            .filter_map(toml::Value::as_str)
                            .map(str::to_string)
                            .collect(),
                        _ => Vec::new(),
                    }
                };
                let tools = names(rule.get("toolName"));
                if !tools.is_empty() && !tools.iter().any(|t| t == "run_shell_command" || t == "*")
                {
                    continue;
                }
                let source = format!(
                    "Gemini CLI's {} (commandPrefix, {})",
                    file.display(),
                    if list == RuleList::Deny {
                        "deny"
                    } else {
                        "ask_user"
                    }
                );
                for prefix in names(rule.get("commandPrefix")) {
                    let prefix = prefix.trim();
                    if prefix.is_empty() {
                        continue;
                    }
                    if let Ok(rule) = Rule::parse(&format!("Bash({prefix}:*)"), list, &source) {
                        rules.push(rule);
                    }
                }
            }
        }
    }
    rules
}

/// Just enough of Starlark to read literal `prefix_rule(…)` calls.
mod starlark {
    /// One literal `prefix_rule` call: its pattern (each element's
    /// alternatives) and decision.
    #[derive(Debug, PartialEq)]
    pub struct PrefixRule {
        pub pattern: Vec<Vec<String>>,
        pub decision: Option<String>,
    }

    #[derive(Debug, PartialEq)]
    enum Tok {
        Str(String),
        Ident(String),
        Punct(char),
        Other,
    }

    fn tokens(text: &str) -> Vec<Tok> {
        let mut out = Vec::new();
        let mut chars = text.chars().peekable();
        while let Some(c) = chars.next() {
            match c {
                '#' => {
                    for c in chars.by_ref() {
                        if c == '\n' {
                            break;
                        }
                    }
                }
                '"' | '\'' => {
                    let quote = c;
                    let mut s = String::new();
                    let mut closed = false;
                    while let Some(c) = chars.next() {
                        match c {
                            '\\' => match chars.next() {
                                Some('n') => s.push('\n'),
                                Some('t') => s.push('\t'),
                                Some(other) => s.push(other),
                                None => break,
                            },
                            q if q == quote => {
                                closed = true;
                                break;
                            }
                            '\n' => break,
                            other => s.push(other),
                        }
                    }
                    out.push(if closed { Tok::Str(s) } else { Tok::Other });
                }
                c if c.is_alphanumeric() || c == '_' => {
                    let mut s = String::from(c);
                    while let Some(&n) = chars.peek() {
                        if n.is_alphanumeric() || n == '_' {
                            s.push(n);
                            chars.next();
                        } else {
                            break;
                        }
                    }
                    out.push(Tok::Ident(s));
                }
                '(' | ')' | '[' | ']' | ',' | '=' => out.push(Tok::Punct(c)),
                c if c.is_whitespace() => {}
                _ => out.push(Tok::Other),
            }
        }
        out
    }

    /// A literal value: a string, or a list of strings or lists of strings.
    #[derive(Debug)]
    enum Lit {
        Str(String),
        List(Vec<Lit>),
    }

    /// Parses a literal at `toks[*i..]`; `None` for anything else.
    fn literal(toks: &[Tok], i: &mut usize) -> Option<Lit> {
        match toks.get(*i)? {
            Tok::Str(s) => {
                *i += 1;
                Some(Lit::Str(s.clone()))
            }
            Tok::Punct('[') => {
                *i += 1;
                let mut items = Vec::new();
                loop {
                    if toks.get(*i) == Some(&Tok::Punct(']')) {
                        *i += 1;
                        return Some(Lit::List(items));
                    }
                    items.push(literal(toks, i)?);
                    match toks.get(*i)? {
                        Tok::Punct(',') => *i += 1,
                        Tok::Punct(']') => {}
                        _ => return None,
                    }
                }
            }
            _ => None,
        }
    }

    /// Skips one argument value of any shape (to the next `,` or `)` at
    /// this depth).
    fn skip_value(toks: &[Tok], i: &mut usize) {
        let mut depth = 0usize;
        while let Some(t) = toks.get(*i) {
            match t {
                Tok::Punct('(' | '[') => depth += 1,
                Tok::Punct(')' | ']') if depth == 0 => return,
                Tok::Punct(')' | ']') => depth -= 1,
                Tok::Punct(',') if depth == 0 => return,
                _ => {}
            }
            *i += 1;
        }
    }

    fn pattern_of(lit: Lit) -> Option<Vec<Vec<String>>> {
        let Lit::List(items) = lit else { return None };
        items
            .into_iter()
            .map(|item| match item {
                Lit::Str(s) => Some(vec![s]),
                Lit::List(alts) => alts
                    .into_iter()
                    .map(|a| match a {
                        Lit::Str(s) => Some(s),
                        Lit::List(_) => None,
                    })
                    .collect::<Option<Vec<String>>>()
                    .filter(|a| !a.is_empty()),
            })
            .collect::<Option<Vec<_>>>()
            .filter(|p| !p.is_empty())
    }

    /// Every `prefix_rule(…)` call whose `pattern` and `decision` are
    /// literals.
    pub fn prefix_rules(text: &str) -> Vec<PrefixRule> {
        let toks = tokens(text);
        let mut out = Vec::new();
        let mut i = 0;
        while i < toks.len() {
            let is_call = toks.get(i) == Some(&Tok::Ident("prefix_rule".into()))
                && toks.get(i + 1) == Some(&Tok::Punct('('));
            if !is_call {
                i += 1;
                continue;
            }
            i += 2;
            let mut pattern = None;
            let mut decision = None;
            let mut literal_ok = true;
            let mut positional = 0;
            loop {
                match toks.get(i) {
                    None => break,
                    Some(Tok::Punct(')')) => {
                        i += 1;
                        break;
                    }
                    Some(Tok::Punct(',')) => {
                        i += 1;
                        continue;
                    }
                    _ => {}
                }
                let key = match (toks.get(i), toks.get(i + 1)) {
                    (Some(Tok::Ident(k)), Some(Tok::Punct('='))) => {
                        i += 2;
                        Some(k.clone())
                    }
                    _ => {
                        // `prefix_rule(pattern, decision, …)`.
                        positional += 1;
                        match positional {
                            1 => Some("pattern".to_string()),
                            2 => Some("decision".to_string()),
                            _ => None,
                        }
                    }
                };
                let start = i;
                let value = literal(&toks, &mut i);
                if value.is_none() {
                    i = start;
                    skip_value(&toks, &mut i);
                }
                match (key.as_deref(), value) {
                    (Some("pattern"), Some(v)) => pattern = pattern_of(v),
                    (Some("pattern"), None) => literal_ok = false,
                    (Some("decision"), Some(Lit::Str(d))) => decision = Some(d),
                    (Some("decision"), _) => literal_ok = false,
                    _ => {}
                }
            }
            if let (true, Some(pattern)) = (literal_ok, pattern) {
                out.push(PrefixRule { pattern, decision });
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gemini_deny_and_ask_prefix_rules_are_read() {
        let dir = tempfile::tempdir().unwrap();
        let policies = dir.path().join(".gemini/policies");
        std::fs::create_dir_all(&policies).unwrap();
        std::fs::write(
            policies.join("mine.toml"),
            r#"
[[rule]]
toolName = "run_shell_command"
commandPrefix = ["git push", "rm"]
decision = "deny"
priority = 900

[[rule]]
commandPrefix = "npm publish"
decision = "ask_user"

[[rule]]
toolName = "run_shell_command"
commandRegex = "curl.*"
decision = "deny"

[[rule]]
toolName = "read_file"
commandPrefix = "x"
decision = "deny"

[[rule]]
commandPrefix = "ls"
decision = "allow"
"#,
        )
        .unwrap();
        let rules = gemini(&dir.path().to_string_lossy());
        let got: Vec<(&str, RuleList)> = rules.iter().map(|r| (r.text.as_str(), r.list)).collect();
        assert_eq!(
            got,
            vec![
                ("Bash(git push:*)", RuleList::Deny),
                ("Bash(rm:*)", RuleList::Deny),
                ("Bash(npm publish:*)", RuleList::Ask),
            ]
        );
    }

    #[test]
    fn codex_literal_prefix_rules_are_read_and_computed_ones_skipped() {
        let text = r#"
# comment with prefix_rule(pattern=["x"], decision="forbidden")
prefix_rule(
    pattern = ["git", ["push", "fetch"]],
    decision = "forbidden",
    justification = "no remote (really)",
    match = ["git push origin"],
)
prefix_rule(pattern=["npm", "publish"], decision='prompt')
prefix_rule(pattern=["ls"])                       # allow: not ours
prefix_rule(pattern=CMDS, decision="forbidden")   # computed: skipped
prefix_rule(["rm", "-rf"], "forbidden")
"#;
        let rules = starlark::prefix_rules(text);
        let got: Vec<(Vec<Vec<String>>, Option<String>)> =
            rules.into_iter().map(|r| (r.pattern, r.decision)).collect();
        let v = |x: &[&[&str]]| -> Vec<Vec<String>> {
            x.iter()
                .map(|a| a.iter().map(|s| s.to_string()).collect())
                .collect()
        };
        assert_eq!(
            got,
            vec![
                (v(&[&["git"], &["push", "fetch"]]), Some("forbidden".into())),
                (v(&[&["npm"], &["publish"]]), Some("prompt".into())),
                (v(&[&["ls"]]), None),
                (v(&[&["rm"], &["-rf"]]), Some("forbidden".into())),
            ]
        );
        let dir = tempfile::tempdir().unwrap();
        let rules_dir = dir.path().join("codex/rules");
        std::fs::create_dir_all(&rules_dir).unwrap();
        std::fs::write(rules_dir.join("default.rules"), text).unwrap();
        let rules = codex(&dir.path().join("codex"), "/nonexistent", None);
        let got: Vec<(&str, RuleList)> = rules.iter().map(|r| (r.text.as_str(), r.list)).collect();
        assert_eq!(
            got,
            vec![
                ("Bash(git push:*)", RuleList::Deny),
                ("Bash(git fetch:*)", RuleList::Deny),
                ("Bash(npm publish:*)", RuleList::Ask),
                ("Bash(rm -rf:*)", RuleList::Deny),
            ]
        );
    }

    #[test]
    fn bash_deny_and_ask_rules_are_read_and_path_rules_left_alone() {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().join("home");
        let proj = dir.path().join("proj");
        std::fs::create_dir_all(home.join(".claude")).unwrap();
        std::fs::create_dir_all(proj.join(".claude")).unwrap();
        std::fs::write(
            home.join(".claude/settings.json"),
            r#"{"permissions": {"deny": ["Bash(rm:*)", "Read(~/.ssh/**)"], "allow": ["Bash(ls)"]}}"#,
        )
        .unwrap();
        std::fs::write(
            proj.join(".claude/settings.local.json"),
            r#"{"permissions": {"ask": ["Bash(git push *)", "Bash(unclosed"]}}"#,
        )
        .unwrap();
        std::fs::write(proj.join(".claude/settings.json"), "not json").unwrap();
        let rules = claude_code(
            &home.to_string_lossy(),
            &proj.to_string_lossy(),
            Some(&proj.to_string_lossy()),
        );
        let got: Vec<(&str, RuleList)> = rules.iter().map(|r| (r.text.as_str(), r.list)).collect();
        assert_eq!(
            got,
            vec![
                ("Bash(rm:*)", RuleList::Deny),
                ("Bash(git push *)", RuleList::Ask)
            ]
        );
        assert!(
            rules[0].source.contains(".claude/settings.json"),
            "{:?}",
            rules[0]
        );
    }
}
