//! The class "git's global options": every reader of a git command line (the
//! analysis, the hazard rules, the read-only check) finds the same
//! subcommand, whatever global option comes first and however its value is
//! spelled (`git --attr-source HEAD push --force` runs `push`).

// Test code: a failed unwrap, index or panic is a failed test.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

use crate::support;

use portcullis_policy::Verdict;
use portcullis_shell::knowledge::{GIT_GLOBAL_OPTIONS, GitValue};
use support::verdict;

/// Every spelling of every global option, with `VALUE` where a value goes.
fn spellings() -> Vec<String> {
    let mut out = Vec::new();
    for &(name, how) in GIT_GLOBAL_OPTIONS {
        match how {
            GitValue::None => out.push(name.to_string()),
            GitValue::Next => out.push(format!("{name} VALUE")),
            GitValue::NextOrEquals => {
                out.push(format!("{name} VALUE"));
                out.push(format!("{name}=VALUE"));
            }
            GitValue::EqualsOnly => out.push(format!("{name}=VALUE")),
        }
    }
    out
}

#[test]
fn a_global_option_never_hides_a_force_push() {
    let config = "mode = \"ask\"\n[permissions]\nallow = [\"Bash(git *)\"]\n";
    for global in spellings() {
        // `--list-cmds=…` and the `--*-path` queries exit before any subcommand.
        for value in ["HEAD", "log", "status"] {
            let global = global.replace("VALUE", value);
            let command = format!("git {global} push --force origin main");
            assert_ne!(verdict(config, &command), Verdict::Allow, "{command}");
        }
    }
}

#[test]
fn a_global_option_value_is_never_taken_for_a_read_only_subcommand() {
    // Approve-for-me allows read-only git without a rule: `log` as the value
    // of `--attr-source` must not make `push` read-only.
    let config = "mode = \"approve-for-me\"\n";
    for global in spellings() {
        let command = format!("git {} push origin main", global.replace("VALUE", "log"));
        assert_ne!(verdict(config, &command), Verdict::Allow, "{command}");
    }
    assert_eq!(
        verdict(config, "git --attr-source HEAD log --oneline"),
        Verdict::Allow
    );
    assert_eq!(verdict(config, "git -C sub --no-pager log"), Verdict::Allow);
}
