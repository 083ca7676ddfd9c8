//! What `portcullis run` adds (criterion): `bash -c true`, `bash -c 'git
//! status'` and 200 new files in a git workspace, each plain and confined
//! (`portcullis run --network off -- …`: reading the configuration, walking
//! the workspace for protected and secret paths, namespaces, mounts,
//! Landlock, seccomp, and each new name judged by the supervisor).
//!
//! `cargo bench -p portcullis --bench run_overhead` prints the median wall
//! time of each and what confinement adds between `====` lines, then
//! criterion's figures. The goal: ≤ 5 ms median added.

// Test code: a failed unwrap, index or panic is a failed test.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};

mod common;

struct Home {
    root: PathBuf,
}

impl Home {
    fn new() -> Home {
        let root =
            std::env::temp_dir().join(format!("portcullis-run-bench-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        let ws = root.join("home/proj");
        std::fs::create_dir_all(ws.join("src")).unwrap();
        std::fs::create_dir_all(root.join("home/.ssh")).unwrap();
        std::fs::write(root.join("home/.ssh/id_rsa"), "key\n").unwrap();
        // A workspace of some size: 20 directories of 25 files.
        for d in 0..20 {
            let dir = ws.join(format!("src/m{d}"));
            std::fs::create_dir_all(&dir).unwrap();
            for f in 0..25 {
                std::fs::write(dir.join(format!("f{f}.rs")), "fn f() {}\n").unwrap();
            }
        }
        let git = |args: &[&str]| {
            let ok = Command::new("git")
                .args(args)
                .current_dir(&ws)
                .env("GIT_AUTHOR_NAME", "b")
                .env("GIT_AUTHOR_EMAIL", "b@x")
                .env("GIT_COMMITTER_NAME", "b")
                .env("GIT_COMMITTER_EMAIL", "b@x")
                .stdout(Stdio::null())
                .status()
                .unwrap()
                .success();
            assert!(ok, "git {args:?}");
        };
        git(&["init", "-q"]);
        git(&["add", "-A"]);
        git(&["commit", "-qm", "bench"]);
        Home {
            root: root.canonicalize().unwrap(),
        }
    }

    fn command(&self, program: &Path) -> Command {
        let mut c = common::isolated(program, &self.root);
        c.stdin(Stdio::null());
        c
    }
}

impl Drop for Home {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.root);
    }
}

fn call(mut command: Command) -> Duration {
    let start = Instant::now();
    let out = command.output().expect("run");
    let took = start.elapsed();
    assert!(
        out.status.success(),
        "{:?}: {}",
        command,
        String::from_utf8_lossy(&out.stderr)
    );
    took
}

fn median(mut v: Vec<f64>) -> (f64, f64) {
    v.sort_by(f64::total_cmp);
    (v[v.len() / 2], v[v.len() * 9 / 10])
}

fn bench(c: &mut Criterion) {
    let home = Home::new();
    let bin = PathBuf::from(env!("CARGO_BIN_EXE_portcullis"));
    let plain = |script: &str| {
        let mut cmd = home.command(Path::new("bash"));
        cmd.arg("-c").arg(script);
        cmd
    };
    let confined = |script: &str| {
        let mut cmd = home.command(&bin);
        cmd.args(["run", "--network", "off", "--", "bash", "-c", script]);
        cmd
    };
    const N: usize = 200;
    let scripts = [
        "true",
        "git status --short",
        "mkdir out && touch out/f{1..200} && rm -r out",
    ];
    let mut times: Vec<[Vec<f64>; 2]> = scripts.iter().map(|_| [Vec::new(), Vec::new()]).collect();
    for _ in 0..N {
        for (i, s) in scripts.iter().enumerate() {
            times[i][0].push(call(plain(s)).as_secs_f64() * 1e3);
            times[i][1].push(call(confined(s)).as_secs_f64() * 1e3);
        }
    }
    eprintln!("\n==================================================================");
    for (s, [p, k]) in scripts.iter().zip(times) {
        let (pm, pp) = median(p);
        let (km, kp) = median(k);
        eprintln!(
            "bash -c '{s}': plain MEDIAN {pm:.3} ms (p90 {pp:.3}); under portcullis run MEDIAN {km:.3} ms (p90 {kp:.3}); added {:.3} ms",
            km - pm
        );
    }
    eprintln!(
        "goal: ≤ 5 ms median added; {N} calls each, interleaved; workspace of 500 files; the third makes 201 new names (each new name costs (its added - true's added) / 201)"
    );
    eprintln!("==================================================================\n");

    let mut g = c.benchmark_group("run");
    g.sample_size(20);
    g.measurement_time(Duration::from_secs(5));
    g.bench_function("bash -c true", |b| b.iter(|| call(plain("true"))));
    g.bench_function("portcullis run -- bash -c true", |b| {
        b.iter(|| call(confined("true")))
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
