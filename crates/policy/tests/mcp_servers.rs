//! A rule about one MCP server never covers another server's tools, even
//! when their names start alike (`a`, `a_`, `ab`) or the agent's spelling
//! `mcp__a_` + `__` + `t` runs into `mcp__a___t`.

// Test code: a failed unwrap, index or panic is a failed test.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

use portcullis_policy::{
    Layer, LayerKind, LexicalFacts, McpToolName, Origin, Policy, ReasonCode, ToolCall, ToolRef,
    Verdict, decide,
};
use serde_json::json;

const CWD: &str = "/home/dev/proj";

fn facts() -> LexicalFacts {
    LexicalFacts {
        home: "/home/dev".into(),
        roots: vec![CWD.into()],
        protected: Vec::new(),
        secret: Vec::new(),
    }
}

fn policy(toml: &str) -> Policy {
    Policy::from_layers(vec![
        Layer::from_toml(LayerKind::User, "test.toml", toml).expect("config parses"),
    ])
}

/// Tool `tool` of `server`, the server known (the bridge, an agent's MCP
/// context), spelt `mcp__server__tool`.
fn known(server: &str, tool: &str) -> ToolCall {
    ToolCall {
        tool: ToolRef {
            name: McpToolName::new(server, tool).to_string(),
            origin: Origin::Mcp,
            server: Some(server.into()),
            manifest: None,
        },
        input: json!({}),
        cwd: CWD.into(),
    }
}

/// The name only, as Claude Code sends it.
fn named(name: &str) -> ToolCall {
    ToolCall {
        tool: ToolRef {
            name: name.into(),
            origin: Origin::Mcp,
            server: None,
            manifest: None,
        },
        input: json!({}),
        cwd: CWD.into(),
    }
}

fn verdict(p: &Policy, call: &ToolCall) -> Verdict {
    decide(call, p, &facts()).decision
}

#[test]
fn an_allow_rule_for_server_a_allows_only_server_a() {
    for rule in ["mcp__a", "mcp__a__*"] {
        let p = policy(&format!(
            "mode = \"ask\"\n[permissions]\nallow = [\"{rule}\"]\n"
        ));
        assert_eq!(verdict(&p, &known("a", "t")), Verdict::Allow, "{rule}");
        assert_eq!(verdict(&p, &named("mcp__a__t")), Verdict::Allow, "{rule}");
        for other in ["a_", "ab", "_a", "a-"] {
            assert_eq!(
                verdict(&p, &known(other, "t")),
                Verdict::Ask,
                "{rule} must not cover server {other}"
            );
        }
        // `a_`'s tool `t` as the agent spells it: also `a`'s `_t`, but the
        // rule for `a` does not decide for `a_`.
        let d = decide(&named("mcp__a___t"), &p, &facts());
        assert_eq!(d.decision, Verdict::Ask, "{rule}");
        assert!(
            d.reasons
                .iter()
                .any(|r| r.code == ReasonCode::AmbiguousMcpName),
            "{:?}",
            d.reasons
        );
        assert_eq!(verdict(&p, &named("mcp__ab__t")), Verdict::Ask, "{rule}");
    }
}

#[test]
fn a_deny_rule_for_either_reading_denies() {
    for rule in ["mcp__a", "mcp__a_", "mcp__a___*"] {
        let p = policy(&format!(
            "mode = \"full-access\"\n[permissions]\ndeny = [\"{rule}\"]\n"
        ));
        assert_eq!(verdict(&p, &named("mcp__a___t")), Verdict::Deny, "{rule}");
    }
    // A rule for `a_` is about `a_` only.
    let p = policy("mode = \"full-access\"\n[permissions]\ndeny = [\"mcp__a_\"]\n");
    assert_eq!(verdict(&p, &known("a_", "t")), Verdict::Deny);
    assert_eq!(verdict(&p, &known("a", "_t")), Verdict::Allow);
    assert_eq!(verdict(&p, &named("mcp__a__t")), Verdict::Allow);
}

#[test]
fn a_rule_naming_one_tool_matches_that_name() {
    let p = policy("mode = \"ask\"\n[permissions]\nallow = [\"mcp__a___t\"]\n");
    // Both readings are spelt as the rule is.
    assert_eq!(verdict(&p, &named("mcp__a___t")), Verdict::Allow);
    assert_eq!(verdict(&p, &known("a", "_t")), Verdict::Allow);
    assert_eq!(verdict(&p, &known("a", "t")), Verdict::Ask);
}

#[test]
fn configured_servers_may_not_blur_the_separator() {
    for name in ["a_", "_a", "a__b", "_"] {
        let text = format!("[[mcp.servers]]\nname = \"{name}\"\ncommand = [\"x\"]\n");
        let err = Layer::from_toml(LayerKind::User, "u.toml", &text)
            .unwrap_err()
            .to_string();
        assert!(err.contains(&format!("{name:?}")), "{name}: {err}");
        assert!(err.contains("`_`") || err.contains("`__`"), "{name}: {err}");
    }
    for name in ["a", "my_fs", "a-b", "a_b-c"] {
        let text = format!("[[mcp.servers]]\nname = \"{name}\"\ncommand = [\"x\"]\n");
        assert!(
            Layer::from_toml(LayerKind::User, "u.toml", &text).is_ok(),
            "{name}"
        );
    }
}
