//! One once-grant, 50 threads and 8 processes racing to consume it: exactly one wins.
//!
//! The processes are this test binary run again with `--exact
//! concurrency::consume_once_worker`: the worker test does nothing unless
//! `PORTCULLIS_STORE_TEST_CONSUME_WORKER` is set. Every racer opens its own
//! `Store` first, reports ready, then waits for a `go` file, so all 58 are
//! already connected when the race starts.

// Test code: a failed unwrap, index or panic is a failed test.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

use crate::support;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

use portcullis_store::{GrantScope, Op, Store};
use support::{file, grant, main_session};

const WORKER: &str = "PORTCULLIS_STORE_TEST_CONSUME_WORKER";
const THREADS: usize = 50;
const PROCESSES: usize = 8;
const NOW: i64 = 1_000;

fn wait_for(path: &Path, what: &str) {
    let start = Instant::now();
    while !path.exists() {
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "timed out waiting for {what}"
        );
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// Run by `once_grant_race`: `WORKER` = `<data dir>\t<grant id>\t<index>`.
#[test]
fn consume_once_worker() {
    let Ok(spec) = std::env::var(WORKER) else {
        return;
    };
    let mut parts = spec.split('\t');
    let dir = PathBuf::from(parts.next().unwrap());
    let id: i64 = parts.next().unwrap().parse().unwrap();
    let index = parts.next().unwrap();
    let store = Store::open(&dir).unwrap();
    std::fs::write(dir.join(format!("ready-{index}")), "").unwrap();
    wait_for(&dir.join("go"), "the go file");
    let won = store.consume_once(id, NOW).unwrap();
    // The harness may have printed `test … ` on this line already: start a new one.
    println!("\nCONSUMED={won}");
}

#[test]
fn once_grant_race() {
    let (dir, store) = support::store();
    store.register_session(&main_session("s")).unwrap();
    let g = store
        .add_grant(&grant(
            Some("s"),
            GrantScope::Once,
            Op::Write,
            file("/w/once"),
        ))
        .unwrap();

    let exe = std::env::current_exe().unwrap();
    let children: Vec<_> = (0..PROCESSES)
        .map(|i| {
            Command::new(&exe)
                .args([
                    "--exact",
                    "concurrency::consume_once_worker",
                    "--nocapture",
                    "--test-threads=1",
                ])
                .env(WORKER, format!("{}\t{}\t{i}", dir.path().display(), g.id))
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();

    let ready = Arc::new(Barrier::new(THREADS + 1));
    let threads: Vec<_> = (0..THREADS)
        .map(|_| {
            let dir = dir.path().to_owned();
            let ready = Arc::clone(&ready);
            std::thread::spawn(move || {
                let store = Store::open(&dir).unwrap();
                ready.wait();
                wait_for(&dir.join("go"), "the go file");
                store.consume_once(g.id, NOW).unwrap()
            })
        })
        .collect();

    ready.wait();
    for i in 0..PROCESSES {
        wait_for(&dir.path().join(format!("ready-{i}")), "a worker process");
    }
    std::fs::write(dir.path().join("go"), "").unwrap();

    let thread_wins = threads
        .into_iter()
        .map(|t| t.join().unwrap())
        .filter(|&w| w)
        .count();
    let mut process_wins = 0;
    for child in children {
        let out = child.wait_with_output().unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "worker failed:\n{stdout}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let results: Vec<_> = stdout
            .lines()
            .filter_map(|l| l.strip_prefix("CONSUMED="))
            .collect();
        assert_eq!(results.len(), 1, "one result per worker:\n{stdout}");
        if results[0] == "true" {
            process_wins += 1;
        }
    }
    assert_eq!(
        thread_wins + process_wins,
        1,
        "exactly one of {THREADS} threads and {PROCESSES} processes may use a once-grant \
         ({thread_wins} threads and {process_wins} processes did)"
    );
    let after = store.grant(g.id).unwrap().unwrap();
    assert_eq!(after.consumed_at, Some(NOW));
    assert!(store.active_grants(&["s"], NOW).unwrap().is_empty());
}
