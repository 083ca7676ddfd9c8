//! What the MCP bridge adds to a `tools/call`: the same call to
//! `@modelcontextprotocol/server-everything`'s `echo`, directly and through
//! `portcullis mcp-bridge` (pins checked, the call judged and audited),
//! interleaved, from rmcp's client. Not a test: a measurement.
//!
//!     cargo bench -p portcullis --bench mcp_latency
//!
//! Needs `npm ci --prefix e2e`. Medians and p99 are printed between `====` lines.

// Test code: a failed unwrap, index or panic is a failed test.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

use std::path::PathBuf;
use std::time::{Duration, Instant};

use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use rmcp::transport::TokioChildProcess;

const CALLS: usize = 1000;
const WARMUP: usize = 100;

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    sorted[((sorted.len() as f64 - 1.0) * p).round() as usize]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let server = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../e2e/node_modules/.bin/mcp-server-everything");
    assert!(server.exists(), "run `npm ci --prefix e2e` first");
    let tmp = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(tmp.path()).unwrap();
    std::fs::create_dir_all(root.join("work/.git")).unwrap();
    std::fs::create_dir_all(root.join("home")).unwrap();
    std::fs::write(
        root.join("config.toml"),
        "mode = \"ask\"\n[permissions]\nallow = [\"mcp__everything__echo\"]\n",
    )
    .unwrap();

    let mut direct = tokio::process::Command::new(&server);
    direct.kill_on_drop(true).current_dir(root.join("work"));
    let direct = ().serve(TokioChildProcess::new(direct).unwrap()).await.unwrap();

    let mut bridged = tokio::process::Command::new(env!("CARGO_BIN_EXE_portcullis"));
    bridged
        .kill_on_drop(true)
        .current_dir(root.join("work"))
        .env("HOME", root.join("home"))
        .env("PORTCULLIS_DATA_DIR", root.join("data"))
        .env("PORTCULLIS_CONFIG", root.join("config.toml"))
        .env("PORTCULLIS_MANAGED_CONFIG", root.join("none.toml"))
        .args([
            "mcp-bridge",
            "--name",
            "everything",
            "--session",
            "bench",
            "--",
        ])
        .arg(&server);
    let bridged = ().serve(TokioChildProcess::new(bridged).unwrap()).await.unwrap();
    bridged.list_all_tools().await.unwrap();

    let call = || {
        CallToolRequestParams::new("echo").with_arguments(
            serde_json::json!({"message": "hello from the bench"})
                .as_object()
                .cloned()
                .unwrap(),
        )
    };
    let mut times = (Vec::new(), Vec::new());
    for i in 0..WARMUP + CALLS {
        let t = Instant::now();
        let r = direct.call_tool(call()).await.unwrap();
        let d = t.elapsed();
        assert_ne!(r.is_error, Some(true));
        let t = Instant::now();
        let r = bridged.call_tool(call()).await.unwrap();
        let b = t.elapsed();
        assert_ne!(r.is_error, Some(true), "the bridge must allow echo: {r:?}");
        if i >= WARMUP {
            times.0.push(d);
            times.1.push(b);
        }
    }
    times.0.sort();
    times.1.sort();
    let (d50, d99) = (percentile(&times.0, 0.5), percentile(&times.0, 0.99));
    let (b50, b99) = (percentile(&times.1, 0.5), percentile(&times.1, 0.99));
    println!("==================================================================");
    println!(
        "tools/call echo, direct:          median {:.3} ms, p99 {:.3} ms",
        ms(d50),
        ms(d99)
    );
    println!(
        "tools/call echo, through bridge:  median {:.3} ms, p99 {:.3} ms",
        ms(b50),
        ms(b99)
    );
    println!(
        "added by the bridge: median {:.3} ms, p99 {:.3} ms over {CALLS} interleaved calls (goal ≤ 0.3 ms median)",
        ms(b50.saturating_sub(d50)),
        ms(b99.saturating_sub(d99))
    );
    println!("==================================================================");
    let _ = direct.cancel().await;
    let _ = bridged.cancel().await;
}
