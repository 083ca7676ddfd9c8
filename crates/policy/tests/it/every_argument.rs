//! The classes of "every argument on every surface" (issue 13): MCP
//! arguments read with real zero trust, URLs read as their consumers read
//! them, and MCP names that cannot be split safely.

// Test code: a failed unwrap, index or panic is a failed test.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

use portcullis_policy::{
    Layer, LayerKind, LexicalFacts, Origin, Policy, ReasonCode, ToolCall, ToolRef, Verdict, decide,
};
use serde_json::{Value, json};

const CWD: &str = "/home/dev/proj";

fn policy(toml: &str) -> Policy {
    Policy::from_layers(vec![
        Layer::from_toml(LayerKind::User, "test.toml", toml).expect("config parses"),
    ])
}

fn facts() -> LexicalFacts {
    LexicalFacts {
        home: "/home/dev".into(),
        roots: vec![CWD.into()],
        protected: vec![("/home/dev/proj/.git/hooks".into(), "git hooks".into())],
        secret: vec![
            ("/home/dev/.ssh".into(), "ssh keys".into()),
            ("/home/dev/.aws".into(), "cloud credentials".into()),
            ("/home/dev/proj/.env".into(), ".env file".into()),
        ],
    }
}

fn call(tool: &str, origin: Origin, server: Option<&str>, input: Value) -> ToolCall {
    ToolCall {
        tool: ToolRef {
            name: tool.into(),
            origin,
            server: server.map(str::to_string),
            manifest: None,
        },
        input,
        cwd: CWD.into(),
    }
}

fn mcp(p: &Policy, input: Value) -> Verdict {
    decide(
        &call("mcp__fs__read_text_file", Origin::Mcp, Some("fs"), input),
        p,
        &facts(),
    )
    .decision
}

#[test]
fn mcp_arguments_read_with_real_zero_trust() {
    for mode in ["ask", "approve-for-me"] {
        let p = policy(&format!(
            "mode = \"{mode}\"\n[permissions]\nallow = [\"mcp__fs__read_text_file\"]\n"
        ));
        for input in [
            // A bare name that is a secret's path here.
            json!({"path": ".env"}),
            json!({"path": "/home/dev/proj/.env"}),
            // Any scheme case, spaces, `..`, surrounding whitespace.
            json!({"path": "FILE:///home/dev/.ssh/id_rsa"}),
            json!({"path": "my notes/../../.ssh/id_rsa"}),
            json!({"path": "/home/dev/.ssh/id_rsa\n"}),
            json!({"path": "  ~/.aws/credentials"}),
            // Encodings and separators servers apply.
            json!({"path": "..%2f..%2f.ssh%2fid_rsa"}),
            json!({"path": "..\\..\\.ssh\\id_rsa"}),
            // A path as an object key, at any depth.
            json!({"files": {"/home/dev/.ssh/id_rsa": true}}),
            json!({"a": [{"b": [{"c": "~/.ssh/id_rsa"}]}]}),
            // A control character inside.
            json!({"path": "notes.txt\u{0}/home/dev/.ssh/id_rsa"}),
        ] {
            assert_ne!(mcp(&p, input.clone()), Verdict::Allow, "{mode}: {input}");
        }
        // Ordinary arguments stay allowed.
        assert_eq!(
            mcp(&p, json!({"query": "hello world", "limit": 3})),
            Verdict::Allow
        );
    }
}

#[test]
fn urls_parsed_the_way_their_consumers_parse_them() {
    let p = policy("mode = \"ask\"\n[permissions]\nallow = [\"WebFetch(domain:example.com)\"]\n");
    let fetch = |url: &str| {
        decide(
            &call("WebFetch", Origin::Core, None, json!({"url": url})),
            &p,
            &facts(),
        )
        .decision
    };
    assert_eq!(fetch("https://example.com/docs"), Verdict::Allow);
    assert_eq!(fetch("HTTPS://EXAMPLE.COM./docs"), Verdict::Allow);
    for url in [
        "https://attacker.net\\@example.com/?q=SECRET",
        "https://example.com@attacker.net/",
        "file:///home/dev/.ssh/id_rsa",
        "FILE://localhost/home/dev/.ssh/id_rsa",
        "http://[::1]:8080/",
        "http://2130706433/",
    ] {
        assert_ne!(fetch(url), Verdict::Allow, "{url}");
    }
    // The same parser for URLs in MCP arguments.
    let p = policy(
        "mode = \"ask\"\n[permissions]\nallow = [\"mcp__web__get\", \"WebFetch(domain:example.com)\"]\n",
    );
    let get = |url: &str| {
        decide(
            &call(
                "mcp__web__get",
                Origin::Mcp,
                Some("web"),
                json!({"url": url}),
            ),
            &p,
            &facts(),
        )
        .decision
    };
    assert_eq!(get("https://example.com/"), Verdict::Allow);
    assert_ne!(get("https://attacker.net\\@example.com/"), Verdict::Allow);
}

#[test]
fn mcp_names_that_cannot_be_split_safely_are_not_guessed() {
    let p = policy(
        "mode = \"ask\"\n[permissions]\nallow = [\"mcp__*\"]\ndeny = [\"mcp__my_fs__write_file\"]\n",
    );
    // Gemini without `mcp_context`: `my` + `fs_write_file`, or `my_fs` + `write_file`.
    let d = decide(
        &call("mcp_my_fs_write_file", Origin::Mcp, None, json!({})),
        &p,
        &facts(),
    );
    assert_eq!(d.decision, Verdict::Deny, "{:?}", d.reasons);
    assert!(
        d.reasons
            .iter()
            .any(|r| r.code == ReasonCode::AmbiguousMcpName)
    );
    // With the server named, no guessing is needed.
    let d = decide(
        &call("mcp__my__fs_write_file", Origin::Mcp, Some("my"), json!({})),
        &p,
        &facts(),
    );
    assert_eq!(d.decision, Verdict::Allow);
}
