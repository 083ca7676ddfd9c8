//! Issue 12, item 10, the class "other agents' and editors' configuration
//! that runs code or grants permissions": every entry of the protected table
//! added for it is protected (never written, even inside the workspace) and
//! not secret (reading it is fine), and its near neighbours are neither.

// Test code: a failed unwrap, index or panic is a failed test.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

use std::fs;

use portcullis_paths::{Environment, FsPaths, PathFacts, Scopes};
use tempfile::TempDir;

const AGENT: &str = "agent settings";
const EDITOR: &str = "editor settings";
const HOOKS: &str = "git hook manager configuration";
const HG: &str = "mercurial configuration";
const CI: &str = "continuous integration configuration";

/// `(path written from the project, reason)`, one or more per table entry.
const PROTECTED: &[(&str, &str)] = &[
    ("app.code-workspace", EDITOR),
    ("sub/team.code-workspace", EDITOR),
    (".zed/settings.json", EDITOR),
    (".zed/tasks.json", EDITOR),
    (".roo/mcp.json", AGENT),
    (".roo/rules/01-style.md", AGENT),
    (".roomodes", AGENT),
    (".amazonq/mcp.json", AGENT),
    (".amazonq/rules/x.md", AGENT),
    ("opencode.json", AGENT),
    ("opencode.jsonc", AGENT),
    (".opencode/agent/review.md", AGENT),
    (".continue/config.yaml", AGENT),
    (".continue/mcpServers/x.yaml", AGENT),
    (".windsurf/rules/x.md", AGENT),
    (".windsurf/workflows/deploy.md", AGENT),
    (".aider.conf.yml", AGENT),
    (".aiderignore", AGENT),
    (".aider.model.settings.yml", AGENT),
    (".kiro/hooks/on-save.kiro.hook", AGENT),
    (".hg/hgrc", HG),
    ("vendor/lib/.hg/hgrc", HG),
    ("~/.hgrc", HG),
    (".github/workflows/ci.yml", CI),
    (".github/workflows", CI),
    (".github/actions/setup/action.yml", CI),
    (".gitlab-ci.yml", CI),
    (".circleci/config.yml", CI),
    (".buildkite/pipeline.yml", CI),
    ("azure-pipelines.yml", CI),
    ("bitbucket-pipelines.yml", CI),
    (".travis.yml", CI),
    (".pre-commit-config.yaml", HOOKS),
    (".devcontainer/devcontainer.json", EDITOR),
    (".devcontainer/Dockerfile", EDITOR),
    (".husky/pre-commit", HOOKS),
    (".husky/_/husky.sh", HOOKS),
];

/// Neighbours that stay ordinary project files.
const ORDINARY: &[&str] = &[
    "code-workspace.md",
    "docs/zed.md",
    "roo/notes.txt",
    "opencode.md",
    "continue.txt",
    "aider.md",
    "hg/hgrc",
    ".hg/store/data",
    ".github/CODEOWNERS",
    ".github/ISSUE_TEMPLATE/bug.md",
    "gitlab-ci.yml.md",
    "src/main.rs",
];

fn world() -> (TempDir, String, FsPaths) {
    let tmp = tempfile::tempdir().unwrap();
    let base = fs::canonicalize(tmp.path())
        .unwrap()
        .into_os_string()
        .into_string()
        .unwrap();
    fs::create_dir_all(format!("{base}/home")).unwrap();
    fs::create_dir_all(format!("{base}/proj/.git")).unwrap();
    let env = Environment {
        home: format!("{base}/home"),
        config_dir: format!("{base}/home/.config/portcullis"),
        data_dir: format!("{base}/home/.local/share/portcullis"),
    };
    let paths = FsPaths::new(&Scopes::default(), &env);
    (tmp, base, paths)
}

#[test]
fn other_agents_editors_and_ci_configuration_is_protected() {
    let (_tmp, base, paths) = world();
    let cwd = format!("{base}/proj");
    let mut wrong = Vec::new();
    for (raw, reason) in PROTECTED {
        let f = paths.resolve(raw, &cwd);
        if f.protected.as_deref() != Some(*reason) {
            wrong.push(format!(
                "{raw}: protected {:?}, want {reason:?}",
                f.protected
            ));
        }
        // Reading it is fine: none of them is a secret.
        if f.secret.is_some() {
            wrong.push(format!("{raw}: secret {:?}", f.secret));
        }
    }
    for raw in ORDINARY {
        let f = paths.resolve(raw, &cwd);
        if f.protected.is_some() || f.secret.is_some() {
            wrong.push(format!("{raw}: {:?} / {:?}", f.protected, f.secret));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
