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

// ----- rules in Gemini CLI's spelling ----------------------------------------------

/// Gemini CLI without `mcp_context`: the name as the agent spells it, no
/// server (`mcp_my_fs_write` is `my`'s `fs_write` or `my_fs`'s `write`).
fn gemini(name: &str) -> ToolCall {
    named(name)
}

fn rules(mode: &str, allow: &[&str], ask: &[&str], deny: &[&str]) -> Policy {
    let list = |l: &[&str]| {
        let quoted: Vec<String> = l.iter().map(|r| format!("{r:?}")).collect();
        format!("[{}]", quoted.join(", "))
    };
    policy(&format!(
        "mode = \"{mode}\"\n[permissions]\nallow = {}\nask = {}\ndeny = {}\n",
        list(allow),
        list(ask),
        list(deny)
    ))
}

/// Found by the engine's property test: a deny rule written with the very
/// name the agent sends matched none of the name's readings, so `mcp__*`
/// allowed the call.
#[test]
fn a_deny_rule_in_geminis_spelling_denies_the_call_so_named() {
    for mode in ["ask", "full-access"] {
        let p = rules(mode, &["mcp__*"], &[], &["mcp_my_fs_write"]);
        let d = decide(&gemini("mcp_my_fs_write"), &p, &facts());
        assert_eq!(d.decision, Verdict::Deny, "{mode}: {:?}", d.reasons);
        assert!(
            d.reasons.iter().any(|r| r.code == ReasonCode::RuleDeny
                && r.rule
                    .as_deref()
                    .is_some_and(|x| x.contains("mcp_my_fs_write"))),
            "{mode}: {:?}",
            d.reasons
        );
    }
}

#[test]
fn an_ask_rule_in_geminis_spelling_asks() {
    let p = rules("full-access", &["mcp__*"], &["mcp_my_fs_write"], &[]);
    let d = decide(&gemini("mcp_my_fs_write"), &p, &facts());
    assert_eq!(d.decision, Verdict::Ask, "{:?}", d.reasons);
    assert!(d.reasons.iter().any(|r| r.code == ReasonCode::RuleAsk));
    // Deny beats ask, whichever spelling either is in.
    let p = rules(
        "full-access",
        &["mcp__*"],
        &["mcp_my_fs_write"],
        &["mcp__my_fs__write"],
    );
    assert_eq!(verdict(&p, &gemini("mcp_my_fs_write")), Verdict::Deny);
    let p = rules(
        "full-access",
        &["mcp__*"],
        &["mcp__my"],
        &["mcp_my_fs_write"],
    );
    assert_eq!(verdict(&p, &gemini("mcp_my_fs_write")), Verdict::Deny);
}

/// The rule is about every tool Gemini spells so, however the server is
/// known: Gemini's `mcp_context`, the bridge, another agent's `mcp__…__…`.
#[test]
fn a_deny_rule_in_geminis_spelling_denies_each_tool_it_may_mean() {
    let p = rules("full-access", &["mcp__*"], &[], &["mcp_my_fs_write"]);
    for call in [
        known("my_fs", "write"),
        known("my", "fs_write"),
        named("mcp__my_fs__write"),
        named("mcp__my__fs_write"),
    ] {
        assert_eq!(verdict(&p, &call), Verdict::Deny, "{}", call.tool.name);
    }
    let p = rules("full-access", &["mcp__*"], &["mcp_my_fs_write"], &[]);
    assert_eq!(verdict(&p, &known("my_fs", "write")), Verdict::Ask);
}

#[test]
fn a_deny_rule_in_geminis_spelling_is_about_that_name_only() {
    let p = rules("full-access", &["mcp__*"], &[], &["mcp_my_fs_write"]);
    for call in [
        gemini("mcp_my_fs_read"),
        gemini("mcp_my_fs_write_file"),
        gemini("mcp_my_fs_writ"),
        gemini("mcp_my_fs"),
        gemini("mcp_your_fs_write"),
        known("my_fs", "write_file"),
        known("my", "fs_writer"),
        known("my_fs_write", "x"),
        named("mcp__my_fs__read"),
        named("mcp__fs__write"),
    ] {
        assert_eq!(verdict(&p, &call), Verdict::Allow, "{}", call.tool.name);
    }
}

#[test]
fn canonical_rules_keep_judging_geminis_names() {
    let call = gemini("mcp_my_fs_write");
    // Either reading's server or tool.
    for rule in [
        "mcp__my_fs__write",
        "mcp__my__fs_write",
        "mcp__my_fs",
        "mcp__my",
        "mcp__my__*",
    ] {
        let p = rules("full-access", &["mcp__*"], &[], &[rule]);
        assert_eq!(verdict(&p, &call), Verdict::Deny, "deny {rule}");
        let p = rules("full-access", &["mcp__*"], &[rule], &[]);
        assert_eq!(verdict(&p, &call), Verdict::Ask, "ask {rule}");
    }
    assert_eq!(
        verdict(&rules("ask", &["mcp__*"], &[], &[]), &call),
        Verdict::Allow
    );
    assert_eq!(verdict(&rules("ask", &[], &[], &[]), &call), Verdict::Ask);
    // An allow rule for one reading only does not allow the others.
    assert_eq!(
        verdict(&rules("ask", &["mcp__my_fs__write"], &[], &[]), &call),
        Verdict::Ask
    );
}

/// An allow rule in Gemini's spelling allows the call sent by that name —
/// and nothing wider: not the tools it may mean when another agent calls
/// them, not another name, not what the call's arguments name; and a deny
/// or ask rule about any reading still wins.
#[test]
fn an_allow_rule_in_geminis_spelling_allows_that_call_only() {
    let p = rules("ask", &["mcp_my_fs_write"], &[], &[]);
    let d = decide(&gemini("mcp_my_fs_write"), &p, &facts());
    assert_eq!(d.decision, Verdict::Allow, "{:?}", d.reasons);
    for call in [
        known("my_fs", "write"),
        known("my", "fs_write"),
        named("mcp__my__fs_write"),
        gemini("mcp_my_fs_write_file"),
        gemini("mcp_my_fs"),
    ] {
        assert_eq!(verdict(&p, &call), Verdict::Ask, "{}", call.tool.name);
    }
    // What the arguments name is judged on its own.
    let mut call = gemini("mcp_my_fs_write");
    call.input = json!({"path": "/etc/hosts", "content": "x"});
    assert!(verdict(&p, &call) >= Verdict::Ask);
    // Deny beats ask beats allow.
    for (ask, deny, want) in [
        (&[][..], &["mcp__my__fs_write"][..], Verdict::Deny),
        (&[], &["mcp__my_fs"], Verdict::Deny),
        (&["mcp__my_fs__write"], &[], Verdict::Ask),
        (&["mcp__my"], &[], Verdict::Ask),
        (&["mcp_my_fs_write"], &[], Verdict::Ask),
        (&[], &["mcp_my_fs_write"], Verdict::Deny),
    ] {
        let p = rules("ask", &["mcp_my_fs_write"], ask, deny);
        assert_eq!(
            verdict(&p, &gemini("mcp_my_fs_write")),
            want,
            "ask {ask:?} deny {deny:?}"
        );
    }
}

#[test]
fn a_pattern_in_geminis_spelling_is_refused_at_load() {
    for rule in ["mcp_my_*", "mcp_*", "mcp_my_fs_w*"] {
        let text = format!("[permissions]\ndeny = [\"{rule}\"]\n");
        let err = Layer::from_toml(LayerKind::User, "u.toml", &text)
            .unwrap_err()
            .to_string();
        assert!(err.contains("u.toml:2"), "{rule}: {err}");
        assert!(err.contains(rule), "{rule}: {err}");
        assert!(err.contains("`mcp__server__tool`"), "{rule}: {err}");
    }
}
