//! The class "a directory git would take for a repository": a bare
//! repository's files (`HEAD`, `config`, `objects`) in the directory a `git`
//! runs in make git load that configuration, which can name programs. On a
//! real file system (the facts come from `FsPaths`).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

use std::fs;

use portcullis_paths::{Environment, FsPaths, Scopes};
use portcullis_policy::{Layer, LayerKind, Origin, Policy, ToolCall, ToolRef, Verdict, decide};
use serde_json::json;

#[test]
fn git_in_a_directory_shaped_like_a_repository_asks() {
    let tmp = tempfile::tempdir().unwrap();
    let base = fs::canonicalize(tmp.path()).unwrap().display().to_string();
    let proj = format!("{base}/proj");
    for d in [
        "home",
        "proj/.git",
        "proj/src",
        "proj/evil/objects",
        "proj/evil/refs",
    ] {
        fs::create_dir_all(format!("{base}/{d}")).unwrap();
    }
    fs::write(format!("{proj}/evil/HEAD"), "ref: refs/heads/main\n").unwrap();
    fs::write(
        format!("{proj}/evil/config"),
        "[core]\n\tfsmonitor = ./run.sh\n",
    )
    .unwrap();
    let env = Environment {
        home: format!("{base}/home"),
        config_dir: format!("{base}/home/.config/portcullis"),
        data_dir: format!("{base}/home/.local/share/portcullis"),
    };
    let facts = FsPaths::new(&Scopes::default(), &env);
    let policy = Policy::from_layers(vec![
        Layer::from_toml(LayerKind::User, "t.toml", "mode = \"approve-for-me\"\n").unwrap(),
    ]);
    let verdict = |command: &str| {
        let call = ToolCall {
            tool: ToolRef {
                name: "Bash".into(),
                origin: Origin::Core,
                server: None,
                manifest: None,
            },
            input: json!({ "command": command }),
            cwd: proj.clone(),
        };
        decide(&call, &policy, &facts).decision
    };
    assert_eq!(verdict("git status"), Verdict::Allow);
    assert_eq!(verdict("cd src && git status"), Verdict::Allow);
    for command in [
        "cd evil && git status",
        "cd evil/refs && git log",
        "git -C evil status",
        "echo 'ref: refs/heads/x' > src/HEAD && cd src && git status",
    ] {
        assert_ne!(verdict(command), Verdict::Allow, "{command}");
    }
}
