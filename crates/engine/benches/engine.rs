//! A stateful decision: session lookup, grant lookup, one audit write (criterion).
//!
//! `cargo bench -p portcullis-engine --bench engine` prints the median between
//! `====` lines, then criterion's figures. WAL, `synchronous=NORMAL`.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

use std::time::Instant;

use criterion::{Criterion, criterion_group, criterion_main};
use portcullis_engine::{CallContext, Engine, SessionSources};
use portcullis_paths::{Environment, FsPaths, Scopes};
use portcullis_policy::{Layer, LayerKind, Origin, Policy, ToolCall, ToolRef};
use portcullis_store::{AgentKind, GrantScope, GrantTarget, NewGrant, NewSession, Op, Store};
use serde_json::json;

fn bench(c: &mut Criterion) {
    let tmp = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(tmp.path()).unwrap();
    for d in ["home/proj/.git", "outside", "data"] {
        std::fs::create_dir_all(root.join(d)).unwrap();
    }
    std::fs::write(root.join("outside/report.txt"), "x").unwrap();
    let env = Environment {
        home: root.join("home").to_string_lossy().into(),
        config_dir: root
            .join("home/.config/portcullis")
            .to_string_lossy()
            .into(),
        data_dir: root.join("data").to_string_lossy().into(),
    };
    let policy = Policy::from_layers(vec![
        Layer::from_toml(LayerKind::User, "b.toml", "mode = \"ask\"").unwrap(),
    ]);
    let store = Store::open(&root.join("data")).unwrap();
    store
        .register_session(&NewSession {
            id: "S".into(),
            agent: None,
            cwd: None,
            parent: None,
            kind: AgentKind::Main,
            workflow: None,
            ttl_secs: None,
        })
        .unwrap();
    // A few grants to look through; the one that applies is a folder read grant.
    for i in 0..20 {
        store
            .add_grant(&NewGrant {
                session: Some("S".into()),
                scope: GrantScope::Session,
                op: Op::Read,
                target: GrantTarget::Path {
                    canonical: format!("/nowhere/{i}"),
                    folder: true,
                },
                expires_at: None,
                approver: "bench".into(),
                request: None,
            })
            .unwrap();
    }
    store
        .add_grant(&NewGrant {
            session: Some("S".into()),
            scope: GrantScope::Session,
            op: Op::Read,
            target: GrantTarget::Path {
                canonical: root.join("outside").to_string_lossy().into(),
                folder: true,
            },
            expires_at: None,
            approver: "bench".into(),
            request: None,
        })
        .unwrap();
    let engine = Engine::new(store, policy, FsPaths::new(&Scopes::default(), &env));
    let ctx = CallContext {
        sources: SessionSources {
            body: Some("S".into()),
            ..Default::default()
        },
        ..Default::default()
    };
    let call = ToolCall {
        tool: ToolRef {
            name: "Bash".into(),
            origin: Origin::Core,
            server: None,
            manifest: None,
        },
        input: json!({ "command": format!("cat {}", root.join("outside/report.txt").display()) }),
        cwd: root.join("home/proj").to_string_lossy().into(),
    };
    let first = engine.decide(&call, &ctx, 1).unwrap();
    assert_eq!(
        first.decision.decision.as_str(),
        "allow",
        "{:?}",
        first.decision.reasons
    );
    assert!(!first.grants_used.is_empty());
    let mut samples: Vec<f64> = (0..2000)
        .map(|_| {
            let t = Instant::now();
            std::hint::black_box(engine.decide(&call, &ctx, 2).unwrap());
            t.elapsed().as_secs_f64() * 1e6
        })
        .collect();
    samples.sort_by(f64::total_cmp);
    eprintln!("\n==================================================================");
    eprintln!(
        "portcullis-engine decide: MEDIAN per decision (grant lookup + audit write) = {:.1}µs",
        samples[samples.len() / 2]
    );
    eprintln!(
        "  p90 {:.1}µs  p99 {:.1}µs over {} decisions",
        samples[samples.len() * 9 / 10],
        samples[samples.len() * 99 / 100],
        samples.len()
    );
    eprintln!("==================================================================\n");
    let mut g = c.benchmark_group("engine");
    g.sample_size(30);
    g.measurement_time(std::time::Duration::from_secs(4));
    g.bench_function("decide with grant + audit", |b| {
        b.iter(|| engine.decide(&call, &ctx, 3).unwrap())
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
