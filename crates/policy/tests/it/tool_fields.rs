//! The class "every field of every tool": each agent's tools, as the agent
//! declares their input (kept in `tests/data/agent_tool_schemas.json`), are
//! all in the tool table, and every field of every tool is judged or set
//! aside with a reason — a new field fails this test until it is placed.
//! Then the fields that name files are judged, through each agent's table.

// Test code: a failed unwrap, index or panic is a failed test.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

use portcullis_policy::tables::{self, ToolTable};
use portcullis_policy::tool_fields::{Field, fields_for};
use portcullis_policy::{
    Layer, LayerKind, LexicalFacts, Origin, Policy, ToolCall, ToolRef, Verdict, decide,
};
use serde_json::{Value, json};

/// Every agent's tool table; each names its agent.
const TABLES: [fn() -> ToolTable; 5] = [
    tables::claude_code_table,
    tables::codex_table,
    tables::gemini_table,
    tables::cursor_table,
    tables::pi_table,
];

fn table_of(agent: &str) -> ToolTable {
    TABLES
        .iter()
        .map(|table| table())
        .find(|t| t.agent == agent)
        .expect("a tool table")
}

fn schemas() -> Value {
    serde_json::from_str(include_str!("../data/agent_tool_schemas.json"))
        .expect("the schemas parse")
}

#[test]
fn every_field_of_every_tool_is_placed() {
    let schemas = schemas();
    for table in TABLES.map(|table| table()) {
        let agent = table.agent;
        let fields = fields_for(agent);
        let declared = schemas[agent].as_object().expect("the agent's tools");
        for (tool, declared_fields) in declared {
            assert!(
                table.kind(tool).is_some(),
                "{agent}: the tool `{tool}` is not in the tool table"
            );
            let Some((_, placed)) = fields.iter().find(|(n, _)| n == tool) else {
                panic!("{agent}: the tool `{tool}` has no field table");
            };
            for f in declared_fields.as_array().expect("field names") {
                let f = f.as_str().expect("a field name");
                assert!(
                    placed.iter().any(|(n, _)| *n == f),
                    "{agent}: `{tool}.{f}` is neither judged nor set aside with a reason"
                );
            }
            for (name, field) in placed.iter() {
                if let Field::Irrelevant(why) = field {
                    assert!(!why.is_empty(), "{agent}: `{tool}.{name}` needs a reason");
                }
            }
        }
        // Every tool the table knows has its fields declared.
        for (tool, _) in table.tools {
            assert!(
                declared.contains_key(*tool),
                "{agent}: `{tool}` is in the table but not in the schemas"
            );
        }
    }
}

fn verdict(agent: &str, tool: &str, input: Value) -> Verdict {
    let mut policy = Policy::from_layers(vec![
        Layer::from_toml(
            LayerKind::User,
            "test.toml",
            "mode = \"approve-for-me\"\n[permissions]\nallow = [\"Read(./**)\"]\n",
        )
        .expect("config parses"),
    ]);
    policy.table = table_of(agent);
    let facts = LexicalFacts {
        home: "/home/dev".into(),
        roots: vec!["/home/dev/proj".into()],
        protected: vec![],
        secret: vec![("/home/dev/.ssh".into(), "ssh keys".into())],
    };
    let call = ToolCall {
        tool: ToolRef {
            name: tool.into(),
            origin: Origin::Core,
            server: None,
            manifest: None,
        },
        input,
        cwd: "/home/dev/proj".into(),
    };
    decide(&call, &policy, &facts).decision
}

#[test]
fn fields_that_name_files_are_judged() {
    for (agent, tool, input) in [
        ("claude-code", "Glob", json!({"pattern": "~/.ssh/*"})),
        (
            "claude-code",
            "Glob",
            json!({"pattern": "/home/dev/.ssh/id_*"}),
        ),
        (
            "claude-code",
            "Glob",
            json!({"pattern": "../.ssh/*", "path": "."}),
        ),
        (
            "claude-code",
            "Grep",
            json!({"pattern": "KEY", "glob": "/home/dev/.ssh/*"}),
        ),
        (
            "claude-code",
            "Grep",
            json!({"pattern": "KEY", "path": ".", "glob": "../.ssh/id_rsa"}),
        ),
        ("gemini", "glob", json!({"pattern": "~/.ssh/*"})),
        (
            "gemini",
            "read_many_files",
            json!({"include": ["src/**", "~/.ssh/id_rsa"]}),
        ),
        (
            "gemini",
            "read_many_files",
            json!({"include": "/home/dev/.ssh/id_rsa"}),
        ),
        (
            "gemini",
            "grep_search",
            json!({"pattern": "x", "include_pattern": "/home/dev/.ssh/*"}),
        ),
        ("pi", "find", json!({"pattern": "~/.ssh/*"})),
        (
            "pi",
            "grep",
            json!({"pattern": "x", "glob": "../.ssh/id_rsa"}),
        ),
        (
            "cursor",
            "ReadFile",
            json!({"file_path": "/home/dev/proj/a.txt", "attachments": [{"type": "file", "filePath": "/home/dev/.ssh/id_rsa"}]}),
        ),
    ] {
        assert_ne!(
            verdict(agent, tool, input.clone()),
            Verdict::Allow,
            "{agent} {tool} {input}"
        );
    }
    for (agent, tool, input) in [
        ("claude-code", "Glob", json!({"pattern": "src/**/*.rs"})),
        (
            "claude-code",
            "Grep",
            json!({"pattern": "fn main", "glob": "*.rs", "type": "rust"}),
        ),
        (
            "gemini",
            "read_many_files",
            json!({"include": ["src/**/*.ts", "README.md"]}),
        ),
        ("pi", "find", json!({"pattern": "*.md", "path": "docs"})),
    ] {
        assert_eq!(
            verdict(agent, tool, input.clone()),
            Verdict::Allow,
            "{agent} {tool} {input}"
        );
    }
}
