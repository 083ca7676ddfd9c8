//! `portcullis export codex-rules | gemini-policy`: the configuration's
//! `Bash(…)` rules in the agents' own policy languages, for what their hooks
//! cannot say. Codex's hook can only deny and Gemini CLI's cannot approve, so
//! "runs without a prompt" has to come from the agent's native rules.
//!
//! Both languages match a command by a fixed start (Codex: exact tokens;
//! Gemini: the text followed by a space or the end). A portcullis pattern
//! converts when it is literal words followed by an optional final `*`:
//! `git diff *` and legacy `git diff:*` become the prefix `git diff`. Anything
//! else is written as a comment saying why it was left out — never widened:
//! an allow rule for one exact command (`Bash(git status)`) is left out too,
//! since a prefix rule would also allow `git status --anything`. The
//! portcullis hook still judges every call; these files only tell the agent
//! what it may skip asking about.

use std::fmt::Write as _;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result};
use portcullis_paths::Environment;
use portcullis_policy::rules::{CommandPattern, PatternWord};
use portcullis_policy::{Rule, RuleList, Target};

use crate::config_files;

#[derive(clap::Subcommand)]
pub enum ExportCmd {
    /// Codex CLI `.rules` (prefix_rule) from the configuration's Bash rules.
    CodexRules(ExportArgs),
    /// Gemini CLI policy TOML from the configuration's Bash rules.
    GeminiPolicy(ExportArgs),
}

#[derive(clap::Args)]
pub struct ExportArgs {
    /// A configuration file (also `PORTCULLIS_CONFIG`), above the user's.
    #[arg(long)]
    config: Option<PathBuf>,
    /// Write to FILE instead of standard output.
    #[arg(long, value_name = "FILE")]
    out: Option<PathBuf>,
}

pub fn run(cmd: &ExportCmd) -> Result<ExitCode> {
    let (args, codex) = match cmd {
        ExportCmd::CodexRules(a) => (a, true),
        ExportCmd::GeminiPolicy(a) => (a, false),
    };
    let cwd = std::env::current_dir().context("finding the current directory")?;
    let env = Environment::from_process();
    let policy = config_files::load(args.config.as_deref(), &cwd, &env)
        .context("loading the configuration")?;
    let text = if codex {
        codex_rules(&policy.rules)
    } else {
        gemini_policy(&policy.rules)
    };
    match &args.out {
        Some(file) => {
            write_out(file, &text)?;
            eprintln!("wrote {}", file.display());
        }
        None => std::io::stdout().lock().write_all(text.as_bytes())?,
    }
    Ok(ExitCode::SUCCESS)
}

fn write_out(file: &Path, text: &str) -> Result<()> {
    if let Some(dir) = file.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    std::fs::write(file, text).with_context(|| format!("writing {}", file.display()))
}

/// A rule as a command prefix, or why it cannot be one.
fn prefix_of(rule: &Rule, pattern: &CommandPattern) -> Result<Vec<String>, &'static str> {
    let words = pattern.words();
    let (body, open_ended) = match words.split_last() {
        Some((PatternWord::Any, body)) => (body, true),
        _ => (words, false),
    };
    let mut prefix = Vec::new();
    for w in body {
        match w {
            PatternWord::Literal(s) => prefix.push(s.clone()),
            PatternWord::Any => {
                return Err(
                    "a `*` between words: the agent's prefix rules match a fixed start of the command",
                );
            }
            PatternWord::Glob(_) => {
                return Err("a wildcard inside a word: the agent's prefix rules match whole words");
            }
        }
    }
    if prefix.is_empty() {
        return Err("no program named");
    }
    if !open_ended && rule.list == RuleList::Allow {
        return Err(
            "allows one exact command: a prefix rule would also allow it with more arguments",
        );
    }
    Ok(prefix)
}

/// A Bash rule and its prefix, or why it has none.
type Converted<'a> = (&'a Rule, Result<Vec<String>, &'static str>);

/// The Bash rules to export, in the configuration's order, with what to do for each.
fn bash_rules(rules: &[Rule]) -> (Vec<Converted<'_>>, usize) {
    let mut out = Vec::new();
    let mut others = 0;
    for r in rules {
        match &r.target {
            Target::Command(pattern) => out.push((r, prefix_of(r, pattern))),
            Target::AnyCommand => {
                out.push((r, Err("every command: a prefix rule names a program")))
            }
            _ => others += 1,
        }
    }
    (out, others)
}

/// A double-quoted string literal for Starlark and TOML (both read these escapes).
fn quoted(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if c.is_control() => out.push('?'),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// A comment line's text (no line breaks).
fn one_line(s: &str) -> String {
    s.replace(['\n', '\r'], " ")
}

fn origin(rule: &Rule) -> String {
    format!("portcullis rule {} ({})", rule.text, rule.source)
}

/// Codex `.rules`: one `prefix_rule` per Bash rule.
pub fn codex_rules(rules: &[Rule]) -> String {
    let mut out = String::from(
        "# Codex execpolicy rules, generated by `portcullis export codex-rules`.\n\
         # Save as ~/.codex/rules/portcullis.rules (or .codex/rules/ of a trusted project).\n\
         # The portcullis hook still judges every call; these rules tell Codex what it may\n\
         # run without asking (allow), must ask about (prompt) or must refuse (forbidden).\n",
    );
    let (rules, others) = bash_rules(rules);
    if others > 0 {
        let _ = writeln!(
            out,
            "# {others} rule(s) that are not Bash rules (files, web, MCP) have no Codex rule and are left out."
        );
    }
    for (rule, prefix) in rules {
        out.push('\n');
        match prefix {
            Ok(words) => {
                let decision = match rule.list {
                    RuleList::Allow => "allow",
                    RuleList::Ask => "prompt",
                    RuleList::Deny => "forbidden",
                };
                let pattern: Vec<String> = words.iter().map(|w| quoted(w)).collect();
                let _ = writeln!(
                    out,
                    "prefix_rule(pattern=[{}], decision=\"{decision}\", justification={})",
                    pattern.join(", "),
                    quoted(&format!("from {}", origin(rule)))
                );
            }
            Err(why) => {
                let _ = writeln!(out, "# skipped {}: {why}", one_line(&origin(rule)));
            }
        }
    }
    out
}

/// Gemini CLI policy: one `[[rule]]` per Bash rule. Deny outranks ask, ask
/// outranks allow (and "always allow" answers given in Gemini's own UI, 950).
pub fn gemini_policy(rules: &[Rule]) -> String {
    let mut out = String::from(
        "# Gemini CLI policy, generated by `portcullis export gemini-policy`.\n\
         # Save as ~/.gemini/policies/portcullis.toml.\n\
         # The portcullis hook still judges every call (its deny and ask always count);\n\
         # these rules let Gemini run the allowed commands without asking.\n",
    );
    let (rules, others) = bash_rules(rules);
    if others > 0 {
        let _ = writeln!(
            out,
            "# {others} rule(s) that are not Bash rules (files, web, MCP) are left out."
        );
    }
    for (rule, prefix) in rules {
        out.push('\n');
        let prefix = prefix.and_then(|words| {
            // Gemini matches the command as written: a word that needs quoting
            // would never match the way the rule means it.
            if words.iter().all(|w| {
                !w.is_empty()
                    && w.chars()
                        .all(|c| c.is_ascii_alphanumeric() || "_@%+=:,./-".contains(c))
            }) {
                Ok(words.join(" "))
            } else {
                Err("a word that needs quoting: Gemini matches the command text as written")
            }
        });
        match prefix {
            Ok(text) => {
                let (decision, priority) = match rule.list {
                    RuleList::Deny => ("deny", 999),
                    RuleList::Ask => ("ask_user", 990),
                    RuleList::Allow => ("allow", 300),
                };
                let _ = writeln!(out, "# from {}", one_line(&origin(rule)));
                let _ = writeln!(out, "[[rule]]");
                let _ = writeln!(out, "toolName = \"run_shell_command\"");
                let _ = writeln!(out, "commandPrefix = {}", quoted(&text));
                let _ = writeln!(out, "decision = \"{decision}\"");
                let _ = writeln!(out, "priority = {priority}");
                if rule.list == RuleList::Deny {
                    let _ = writeln!(
                        out,
                        "denyMessage = {}",
                        quoted(&format!("denied by {}", origin(rule)))
                    );
                }
            }
            Err(why) => {
                let _ = writeln!(out, "# skipped {}: {why}", one_line(&origin(rule)));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule(text: &str, list: RuleList) -> Rule {
        Rule::parse(text, list, "c.toml:1").expect("rule parses")
    }

    #[test]
    fn prefixes() {
        let p = |t: &str, l| {
            let r = rule(t, l);
            match &r.target {
                Target::Command(pattern) => prefix_of(&r, pattern),
                other => panic!("{t} is not a command pattern: {other:?}"),
            }
        };
        assert_eq!(
            p("Bash(git diff *)", RuleList::Allow),
            Ok(vec!["git".into(), "diff".into()])
        );
        assert_eq!(
            p("Bash(npm run test:*)", RuleList::Allow),
            Ok(vec!["npm".into(), "run".into(), "test".into()])
        );
        assert_eq!(
            p("Bash(echo \"a b\" *)", RuleList::Ask),
            Ok(vec!["echo".into(), "a b".into()])
        );
        assert_eq!(
            p("Bash(echo '*')", RuleList::Deny),
            Ok(vec!["echo".into(), "*".into()])
        );
        assert_eq!(
            p("Bash(rm -rf /)", RuleList::Deny),
            Ok(vec!["rm".into(), "-rf".into(), "/".into()])
        );
        assert!(p("Bash(git status)", RuleList::Allow).is_err());
        assert!(p("Bash(git * main)", RuleList::Deny).is_err());
        assert!(p("Bash(ls*)", RuleList::Allow).is_err());
        assert!(p("Bash(cargo test*)", RuleList::Allow).is_err());
    }
}
