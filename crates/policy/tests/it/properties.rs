//! Properties of the decision, over generated commands and rule sets (the
//! Cedar habit: a small evaluator with precise semantics, checked against
//! what must always hold):
//! - adding a deny rule never loosens a decision;
//! - adding an allow rule never tightens one;
//! - deny beats ask beats allow when rules of several lists match.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

use portcullis_policy::{
    Layer, LayerKind, LexicalFacts, Origin, Policy, ToolCall, ToolRef, Verdict, decide,
};
use proptest::prelude::*;
use serde_json::json;

const CWD: &str = "/home/dev/proj";

fn facts() -> LexicalFacts {
    LexicalFacts {
        home: "/home/dev".into(),
        roots: vec![CWD.into()],
        protected: vec![("/home/dev/proj/.git/hooks".into(), "git hooks".into())],
        secret: vec![("/home/dev/.ssh".into(), "ssh keys".into())],
    }
}

fn verdict(
    mode: &str,
    allow: &[String],
    ask: &[String],
    deny: &[String],
    command: &str,
) -> Verdict {
    let list = |r: &[String]| serde_json::to_string(r).unwrap();
    let toml = format!(
        "mode = \"{mode}\"\n[permissions]\nallow = {}\nask = {}\ndeny = {}\n",
        list(allow),
        list(ask),
        list(deny)
    );
    let policy = Policy::from_layers(vec![
        Layer::from_toml(LayerKind::User, "p.toml", &toml).unwrap(),
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
    decide(&call, &policy, &facts()).decision
}

/// Deny > ask > allow, as a number.
fn strictness(v: Verdict) -> u8 {
    match v {
        Verdict::Allow => 0,
        Verdict::Ask => 1,
        Verdict::Deny => 2,
    }
}

fn word() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("git"),
        Just("status"),
        Just("push"),
        Just("--force"),
        Just("rm"),
        Just("-rf"),
        Just("ls"),
        Just("cat"),
        Just("README.md"),
        Just("~/.ssh/id_rsa"),
        Just("src"),
        Just("npm"),
        Just("test"),
        Just("echo"),
        Just("hi"),
        Just("curl"),
        Just("https://x.example"),
        Just("sed"),
        Just("-i"),
        Just("s/a/b/"),
        Just(".git/hooks/pre-commit"),
        Just("make"),
    ]
    .prop_map(str::to_string)
}

fn simple() -> impl Strategy<Value = String> {
    prop::collection::vec(word(), 1..5).prop_map(|w| w.join(" "))
}

fn command() -> impl Strategy<Value = String> {
    (
        simple(),
        prop::option::of((prop_oneof![Just(" && "), Just(" | "), Just("; ")], simple())),
    )
        .prop_map(|(a, b)| match b {
            Some((op, b)) => format!("{a}{op}{b}"),
            None => a,
        })
}

fn rule() -> impl Strategy<Value = String> {
    prop_oneof![
        (word(), prop::option::of(word())).prop_map(|(a, b)| match b {
            Some(b) => format!("Bash({a} {b} *)"),
            None => format!("Bash({a} *)"),
        }),
        Just("Bash(*)".to_string()),
        Just("Read(./**)".to_string()),
        Just("Edit(./**)".to_string()),
        Just("Read(~/.ssh/**)".to_string()),
    ]
}

fn mode() -> impl Strategy<Value = &'static str> {
    prop_oneof![
        Just("ask"),
        Just("approve-for-me"),
        Just("read-only"),
        Just("full-access")
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn a_deny_rule_never_loosens(
        mode in mode(),
        allow in prop::collection::vec(rule(), 0..4),
        deny in prop::collection::vec(rule(), 0..2),
        extra in rule(),
        cmd in command(),
    ) {
        let before = verdict(mode, &allow, &[], &deny, &cmd);
        let mut more = deny.clone();
        more.push(extra);
        let after = verdict(mode, &allow, &[], &more, &cmd);
        prop_assert!(strictness(after) >= strictness(before), "{cmd}: {before:?} → {after:?}");
    }

    #[test]
    fn an_allow_rule_never_tightens(
        mode in mode(),
        allow in prop::collection::vec(rule(), 0..4),
        extra in rule(),
        cmd in command(),
    ) {
        let before = verdict(mode, &allow, &[], &[], &cmd);
        let mut more = allow.clone();
        more.push(extra);
        let after = verdict(mode, &more, &[], &[], &cmd);
        prop_assert!(strictness(after) <= strictness(before), "{cmd}: {before:?} → {after:?}");
    }

    #[test]
    fn deny_beats_ask_beats_allow(mode in mode(), r in rule(), cmd in command()) {
        let rules = [r];
        let allowed = verdict(mode, &rules, &[], &[], &cmd);
        let asked = verdict(mode, &rules, &rules, &[], &cmd);
        let denied = verdict(mode, &rules, &rules, &rules, &cmd);
        prop_assert!(strictness(asked) >= strictness(allowed), "{cmd}");
        prop_assert!(strictness(denied) >= strictness(asked), "{cmd}");
    }
}
