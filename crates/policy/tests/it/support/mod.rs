//! What the policy's class tests share: a lexical file system for a project
//! in `/home/dev/proj`, and the verdict of a shell call under a configuration.

use portcullis_policy::{
    Layer, LayerKind, LexicalFacts, Origin, Policy, ToolCall, ToolRef, Verdict, decide,
};
use serde_json::json;

pub const CWD: &str = "/home/dev/proj";

/// Git hooks and configuration, the shell's and git's startup files are
/// protected; `~/.ssh` is secret.
pub fn facts() -> LexicalFacts {
    LexicalFacts {
        home: "/home/dev".into(),
        roots: vec![CWD.into()],
        protected: vec![
            ("/home/dev/proj/.git/hooks".into(), "git hooks".into()),
            (
                "/home/dev/proj/.git/config".into(),
                "git configuration".into(),
            ),
            ("/home/dev/.bashrc".into(), "shell startup file".into()),
            ("/home/dev/.gitconfig".into(), "git configuration".into()),
        ],
        secret: vec![("/home/dev/.ssh".into(), "ssh keys".into())],
    }
}

/// The verdict on the Bash call `command` in [`CWD`] under `config`, as a
/// front door that cannot confine it sees it (`[confine]` aside: the
/// analysis' own judgement).
pub fn verdict(config: &str, command: &str) -> Verdict {
    let policy = Policy::from_layers(vec![
        Layer::from_toml(LayerKind::User, "test.toml", config).expect("config parses"),
    ]);
    let call = ToolCall {
        tool: ToolRef {
            name: "Bash".into(),
            origin: Origin::Core,
            server: None,
            manifest: None,
        },
        input: json!({ "command": command }),
        cwd: CWD.into(),
    };
    decide(&call, &policy, &facts())
        .without_confinement()
        .decision
}
