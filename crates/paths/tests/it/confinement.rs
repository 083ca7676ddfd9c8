//! `FsPaths::confinement`: the protected and secret tables turned into the
//! paths found on disk in one workspace.

// Test code: a failed unwrap, index or panic is a failed test.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

use portcullis_paths::{ConfinementError, Environment, FsPaths, Scopes};

fn world(files: &[&str]) -> (tempfile::TempDir, String) {
    let tmp = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(tmp.path()).unwrap();
    for f in files {
        let p = root.join(f);
        if f.ends_with('/') {
            std::fs::create_dir_all(&p).unwrap();
        } else {
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(&p, "x").unwrap();
        }
    }
    (tmp, root.to_string_lossy().into_owned())
}

fn paths(root: &str) -> FsPaths {
    FsPaths::new(
        &Scopes::default(),
        &Environment {
            home: format!("{root}/home"),
            config_dir: format!("{root}/home/.config/portcullis"),
            data_dir: format!("{root}/data"),
        },
    )
}

#[test]
fn protected_paths_in_the_workspace_are_read_only_and_their_parents_pinned() {
    let (_tmp, root) = world(&[
        "home/proj/.git/config",
        "home/proj/.github/workflows/ci.yml",
        "home/proj/.github/ISSUE_TEMPLATE.md",
        "home/proj/.claude/settings.json",
        "home/proj/.claude/worktrees/w1/file.rs",
        "home/proj/sub/.envrc",
        "home/proj/sub/deep/.vscode/tasks.json",
        "home/proj/src/main.rs",
        "home/proj/.env",
        "home/proj/keys/id_rsa",
        "home/.ssh/id_rsa",
        "home/.aws/credentials",
        "home/.bashrc",
        "data/portcullis.db",
    ]);
    let ws = format!("{root}/home/proj");
    let c = paths(&root).confinement(&ws).unwrap();
    assert_eq!(c.writable, vec![ws.clone()]);
    let mut ro = c.read_only.clone();
    ro.sort();
    let expect_ro: Vec<String> = [
        ".claude",
        ".claude/settings.json",
        ".git",
        ".github/workflows",
        "sub/.envrc",
        "sub/deep/.vscode",
    ]
    .iter()
    .map(|p| format!("{ws}/{p}"))
    .collect();
    assert_eq!(ro, expect_ro);
    // The worktrees under .claude are work, not settings: writable again
    // inside the read-only .claude (where nothing new can be created).
    assert!(!c.read_only.iter().any(|p| p.contains("worktrees")));
    assert_eq!(c.writable_again, vec![format!("{ws}/.claude/worktrees")]);
    let mut pinned = c.pinned.clone();
    pinned.sort();
    let expect_pinned: Vec<String> = [".claude", ".github", "sub", "sub/deep"]
        .iter()
        .map(|p| format!("{ws}/{p}"))
        .collect();
    assert_eq!(pinned, expect_pinned);
    // Secrets: the workspace's .env (a key inside the workspace is the
    // project's own), the anchored ones in the home, the data directory.
    for hidden in [
        format!("{ws}/.env"),
        format!("{root}/home/.ssh"),
        format!("{root}/home/.aws"),
        format!("{root}/data"),
    ] {
        assert!(c.hidden.contains(&hidden), "{hidden} not in {:?}", c.hidden);
    }
    assert!(!c.hidden.iter().any(|h| h.ends_with("keys/id_rsa")));
    // Outside the workspace nothing is listed read-only: it is not writable.
    assert!(!c.read_only.iter().any(|p| p.ends_with(".bashrc")));
}

#[test]
fn a_workspace_inside_a_protected_tree_is_read_only_whole() {
    let (_tmp, root) = world(&[
        "home/proj/.git/",
        "home/proj/.vscode/ext/.git/",
        "home/proj/.vscode/ext/a.txt",
    ]);
    let ws = format!("{root}/home/proj/.vscode/ext");
    let c = paths(&root).confinement(&ws).unwrap();
    assert_eq!(c.read_only, vec![ws]);
}

#[test]
fn revealing_a_secret_file_hides_its_siblings_instead() {
    let (_tmp, root) = world(&[
        "home/proj/.git/",
        "home/.aws/credentials",
        "home/.aws/config",
        "home/.aws/sso/cache/token.json",
    ]);
    let mut c = paths(&root)
        .confinement(&format!("{root}/home/proj"))
        .unwrap();
    c.reveal(&[format!("{root}/home/.aws/credentials")]);
    assert!(!c.hidden.contains(&format!("{root}/home/.aws")));
    assert!(!c.hidden.contains(&format!("{root}/home/.aws/credentials")));
    assert!(c.hidden.contains(&format!("{root}/home/.aws/config")));
    assert!(c.hidden.contains(&format!("{root}/home/.aws/sso")));
}

#[test]
fn no_workspace_no_confinement() {
    let (_tmp, root) = world(&["home/"]);
    let err = paths(&root).confinement("/").unwrap_err();
    assert!(matches!(err, ConfinementError::NoWorkspace(_)), "{err}");
    assert!(err.to_string().contains("no workspace"));
}

#[test]
fn a_new_name_is_refused_where_a_write_would_be() {
    let (_tmp, root) = world(&["home/proj/.git/config", "home/proj/src/main.rs"]);
    let ws = format!("{root}/home/proj");
    let p = paths(&root);
    // (name, a whole tree arriving, refused)
    let cases: &[(&str, bool, bool)] = &[
        ("src/new.rs", false, false),
        ("src/new.rs", true, false),
        ("build", false, false),
        (".vscode", false, true),
        (".vscode/tasks.json", false, true),
        (".envrc", false, true),
        (".mcp.json", false, true),
        ("sub/.git", false, true),
        ("sub/.git/config", false, true),
        ("a.code-workspace", false, true),
        // A directory above a protected path: made empty, fine (what goes
        // in it is judged in turn); arriving whole, refused.
        (".github", false, false),
        (".github", true, true),
        (".github/ISSUE_TEMPLATE.md", false, false),
        (".github/workflows", false, true),
        ("gradle", true, true),
        ("gradle", false, false),
        // The exempt part of a protected directory.
        (".claude/worktrees/w2", false, false),
        (".claude/settings.local.json", false, true),
    ];
    for (name, tree, refused) in cases {
        let path = format!("{ws}/{name}");
        assert_eq!(
            p.refuses_new_name(&path, *tree).is_some(),
            *refused,
            "{name} (tree: {tree})"
        );
    }
}
