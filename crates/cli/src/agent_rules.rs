//! The agent's own permission rules that a rewritten call would slip past.
//!
//! A hook that confines a call rewrites it into `portcullis run … -- bash -c
//! '<command>'`, and the agent then matches its own rules against the
//! rewritten command: Claude Code's `Bash(rm:*)` deny rule no longer sees
//! `rm` (tested with the real CLI in `tests/claude_e2e.rs`). So Claude Code's
//! own `Bash(…)` deny and ask rules — from its managed, user, project and
//! local settings — join portcullis' rules for Claude Code's calls: the
//! engine judges the original command by them (seeing through wrappers and
//! compounds, so at least as strictly as Claude Code), and a call they deny
//! or ask about is never rewritten. Its path rules (`Read(…)`, `Edit(…)`)
//! are left to Claude Code: they govern its file tools, which are never
//! rewritten, and their path syntax is its own.
//!
//! A settings file that is missing or not JSON adds nothing (Claude Code
//! reports its own broken settings); a rule portcullis cannot parse is
//! skipped, and Claude Code still applies it to calls that are not
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

#[cfg(test)]
mod tests {
    use super::*;

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
