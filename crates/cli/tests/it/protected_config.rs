//! Issue 12, item 10, through the real decision: a write to another agent's,
//! editor's, hook manager's or CI system's configuration is refused even under
//! a broad `Edit(./**)` allow (the file runs code or grants permissions), while
//! reading it is fine. The table itself is tested in `crates/paths`.

// Test code: a failed unwrap, index or panic is a failed test.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

use crate::support;

use serde_json::json;
use support::{Job, Sandbox, codes, config, explain, rules, verdict};

const FILES: &[&str] = &[
    "app.code-workspace",
    ".zed/tasks.json",
    ".roo/mcp.json",
    ".amazonq/mcp.json",
    "opencode.json",
    ".continue/config.yaml",
    ".windsurf/rules/x.md",
    ".aider.conf.yml",
    ".hg/hgrc",
    ".github/workflows/ci.yml",
    ".gitlab-ci.yml",
    ".pre-commit-config.yaml",
    ".devcontainer/devcontainer.json",
    ".husky/pre-commit",
];

#[test]
fn agent_and_editor_configuration_writes_are_refused_reads_are_not() {
    let sandbox = Sandbox::new("protected-config");
    let cfg = config("ask", &rules(&["Read(./**)", "Edit(./**)"]), &[], &[]);
    let mut jobs = Vec::new();
    for f in FILES {
        let path = Sandbox::s(&sandbox.write(&format!("home/proj/{f}"), "x\n"));
        let write = json!({"tool": "Write", "origin": "core",
            "input": {"file_path": path, "content": "y\n"}});
        let read = json!({"tool": "Read", "origin": "core", "input": {"file_path": path}});
        jobs.push(Job::new(cfg.clone(), write));
        jobs.push(Job::new(cfg.clone(), read));
    }
    let decisions = sandbox.decide(&jobs);
    let mut wrong = Vec::new();
    for (f, pair) in FILES.iter().zip(decisions.chunks(2)) {
        let (w, r) = (&pair[0], &pair[1]);
        if verdict(w) == "allow" || !codes(w).contains(&"protected-path") {
            wrong.push(format!("write {f}: {}\n{}", verdict(w), explain(w)));
        }
        if verdict(r) != "allow" {
            wrong.push(format!("read {f}: {}\n{}", verdict(r), explain(r)));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
