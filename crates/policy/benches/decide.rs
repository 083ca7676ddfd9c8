//! The cost of one Bash decision with 200 rules loaded (criterion).
//!
//! `cargo bench -p portcullis-policy --bench decide` prints the median per
//! decision between `====` lines, then criterion's figures.

// Test code: a failed unwrap, index or panic is a failed test.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

use std::time::Instant;

use criterion::{Criterion, criterion_group, criterion_main};
use portcullis_policy::{
    Layer, LayerKind, LexicalFacts, Origin, Policy, ToolCall, ToolRef, decide,
};

/// 200 rules of the shapes people write: command prefixes, paths, domains, MCP.
fn policy() -> Policy {
    let programs = [
        "git",
        "cargo",
        "npm",
        "pnpm",
        "yarn",
        "rg",
        "make",
        "docker",
        "kubectl",
        "python3",
        "pytest",
        "go",
        "node",
        "terraform",
        "aws",
        "gh",
        "jq",
        "sed",
        "awk",
        "curl",
    ];
    let subs = [
        "status", "diff", "log", "build", "test", "run", "lint", "fmt",
    ];
    let mut allow = Vec::new();
    for p in programs {
        for s in subs.iter().take(6) {
            allow.push(format!("\"Bash({p} {s} *)\""));
        }
    }
    for i in 0..30 {
        allow.push(format!("\"Read(./dir{i}/**)\""));
        allow.push(format!("\"Edit(./src/mod{i}/**)\""));
    }
    let mut deny = Vec::new();
    for i in 0..10 {
        deny.push(format!("\"Bash(rm -rf /{i} *)\""));
        deny.push(format!("\"Read(~/.secret{i}/**)\""));
    }
    let total = allow.len() + deny.len();
    assert_eq!(total, 200, "{total} rules");
    let text = format!(
        "mode = \"ask\"\n[permissions]\nallow = [{}]\ndeny = [{}]\n",
        allow.join(", "),
        deny.join(", ")
    );
    let layer =
        Layer::from_toml(LayerKind::User, "bench.toml", &text).expect("bench config parses");
    Policy::from_layers(vec![layer])
}

fn facts() -> LexicalFacts {
    LexicalFacts {
        home: "/home/dev".into(),
        roots: vec!["/home/dev/proj".into()],
        ..Default::default()
    }
}

fn call(command: &str) -> ToolCall {
    ToolCall {
        tool: ToolRef {
            name: "Bash".into(),
            origin: Origin::Core,
            server: None,
            manifest: None,
        },
        input: serde_json::json!({ "command": command }),
        cwd: "/home/dev/proj".into(),
    }
}

const COMMANDS: &[&str] = &[
    "git status",
    "git diff --stat HEAD~1",
    "cargo test --workspace 2>&1 | tail -n 20",
    "rg -n 'fn main' src",
    "npm run build && npm test",
    "cat src/main.rs | head -50",
    "echo done > out.txt",
    "git log --oneline -10",
];

fn bench(c: &mut Criterion) {
    let p = policy();
    let f = facts();
    let calls: Vec<ToolCall> = COMMANDS.iter().map(|c| call(c)).collect();
    // The median of single decisions, each timed over many repetitions.
    let mut per: Vec<f64> = calls
        .iter()
        .map(|call| {
            let n = 2000;
            let t = Instant::now();
            for _ in 0..n {
                std::hint::black_box(decide(call, &p, &f));
            }
            t.elapsed().as_secs_f64() * 1e6 / n as f64
        })
        .collect();
    per.sort_by(f64::total_cmp);
    eprintln!("\n==================================================================");
    eprintln!(
        "portcullis-policy decide: MEDIAN per Bash decision = {:.2}µs (200 rules)",
        per[per.len() / 2]
    );
    eprintln!(
        "  {} commands: min {:.2}µs max {:.2}µs",
        per.len(),
        per[0],
        per[per.len() - 1]
    );
    eprintln!("==================================================================\n");
    let mut g = c.benchmark_group("decide");
    g.sample_size(30);
    g.measurement_time(std::time::Duration::from_secs(4));
    g.bench_function("git status (200 rules)", |b| {
        b.iter(|| decide(&calls[0], &p, &f))
    });
    g.bench_function("pipeline with redirect (200 rules)", |b| {
        b.iter(|| decide(&calls[2], &p, &f))
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
