//! Benchmark: parse + analyse a typical agent command.
//!
//! A deterministic set of realistic agent commands (git, cargo, npm, file
//! inspection, pipelines, heredocs, loops …) is generated from templates with a
//! seeded PRNG. Benches:
//!
//! * `analyze/agent-commands`: the whole set per iteration, reported per command
//!   (`Throughput::Elements`).
//! * `analyze/single/*`: a few fixed commands.
//!
//! Before criterion runs, each command is also timed on its own over a few
//! hundred repetitions and the median per-command time is printed to stderr:
//! that is the figure the README reports.
//!
//! ```text
//! cargo bench -p portcullis-shell --bench analyze
//! ```

// Test code: a failed unwrap, index or panic is a failed test.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use portcullis_shell::analyze;

/// Commands in the generated set.
const COMMANDS: usize = 1_200;
/// Repetitions per command for the median figure.
const MEDIAN_REPS: u32 = 300;
const SEED: u64 = 0x5eed_2026_0001;

// ---------------------------------------------------------------------------
// Deterministic generator
// ---------------------------------------------------------------------------

/// splitmix64: small, fast, good enough to pick templates.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len())]
    }

    fn chance(&mut self, percent: usize) -> bool {
        self.below(100) < percent
    }
}

const DIRS: &[&str] = &[
    "src",
    "src/lib",
    "crates/core/src",
    "tests",
    "docs",
    "scripts",
    "web/src/components",
    "pkg/api",
    ".",
];
const FILES: &[&str] = &[
    "src/main.rs",
    "src/lib.rs",
    "crates/core/src/parser.rs",
    "Cargo.toml",
    "package.json",
    "README.md",
    "tests/test_api.py",
    "web/src/components/Button.tsx",
    "pkg/api/handler.go",
    "src/utils/format.ts",
    "docs/design.md",
    "Makefile",
    ".github/workflows/ci.yml",
    "pyproject.toml",
];
const PATTERNS: &[&str] = &[
    "TODO",
    "fn main",
    "unwrap()",
    "import React",
    "def test_",
    "async fn",
    "panic!",
    "console.log",
    "FIXME",
    "struct Config",
];
const CRATES: &[&str] = &["core", "cli", "parser", "server", "portcullis-shell"];
const SCRIPTS: &[&str] = &["build", "test", "lint", "dev", "typecheck", "format"];
const MESSAGES: &[&str] = &[
    "Fix parser edge case",
    "Add tests for config loading",
    "Refactor handler; keep behaviour",
    "Bump dependencies",
    "docs: explain the limits",
    "WIP: split module",
];
const PACKAGES: &[&str] = &[
    "lodash",
    "zod",
    "vitest",
    "@types/node",
    "serde",
    "requests",
];

fn file(r: &mut Rng) -> &'static str {
    r.pick(FILES)
}

/// One simple agent command, no chaining.
fn simple(r: &mut Rng) -> String {
    let f = file(r);
    let d = r.pick(DIRS);
    let p = r.pick(PATTERNS);
    let n = 5 + r.below(200);
    match r.below(56) {
        0 => "git status".into(),
        1 => "git status --short".into(),
        2 => "git diff".into(),
        3 => format!("git diff --stat HEAD~{}", 1 + r.below(5)),
        4 => format!("git diff -- {f}"),
        5 => format!("git log --oneline -n {n}"),
        6 => "git log -p -1".into(),
        7 => format!("git add {f}"),
        8 => "git add -A".into(),
        9 => format!("git commit -m \"{}\"", r.pick(MESSAGES)),
        10 => format!("git show HEAD:{f}"),
        11 => "git branch --show-current".into(),
        12 => format!("git checkout -b feat/{}", r.pick(SCRIPTS)),
        13 => "cargo build".into(),
        14 => "cargo build --release".into(),
        15 => format!("cargo test -p {}", r.pick(CRATES)),
        16 => "cargo test --workspace -- --nocapture".into(),
        17 => "cargo clippy --all-targets -- -D warnings".into(),
        18 => "cargo fmt --all".into(),
        19 => "cargo check --message-format=short".into(),
        20 => format!("npm run {}", r.pick(SCRIPTS)),
        21 => "npm test".into(),
        22 => "npm install".into(),
        23 => format!("npm install --save-dev {}", r.pick(PACKAGES)),
        24 => format!("pnpm run {}", r.pick(SCRIPTS)),
        25 => "pnpm test".into(),
        26 => "yarn install --frozen-lockfile".into(),
        27 => format!("yarn {}", r.pick(SCRIPTS)),
        28 => "npx tsc --noEmit".into(),
        29 => format!("ls -la {d}"),
        30 => format!("cat {f}"),
        31 => format!("head -n {n} {f}"),
        32 => format!("tail -n {n} {f}"),
        33 => format!("wc -l {f} {}", file(r)),
        34 => format!("grep -rn \"{p}\" {d}"),
        35 => format!("rg -n '{p}' {d}"),
        36 => format!("rg --files {d}"),
        37 => format!("find {d} -name '*.rs' -type f"),
        38 => format!("find {d} -maxdepth 2 -type d"),
        39 => format!("sed -n '{},{}p' {f}", n, n + 40),
        40 => format!("awk '{{print $1}}' {f}"),
        41 => format!("awk -F: '{{print $2}}' {f}"),
        42 => "python3 -m pytest -q".into(),
        43 => format!("python3 -m pytest tests/ -x -k {}", r.pick(SCRIPTS)),
        44 => "make".into(),
        45 => format!("make {}", r.pick(SCRIPTS)),
        46 => format!("mkdir -p {d}/generated"),
        47 => format!("cp {f} {f}.bak"),
        48 => format!("mv {f}.bak {f}"),
        49 => format!("rm {f}.bak"),
        50 => "rm -rf target/tmp".into(),
        51 => format!("touch {d}/.keep"),
        52 => format!("sed -i 's/{p}/DONE/g' {f}"),
        53 => "go test ./...".into(),
        54 => format!("diff -u {f} {f}.orig"),
        _ => "jq '.scripts' package.json".into(),
    }
}

/// One agent command: a simple command, often dressed with `cd`, pipes,
/// redirects; now and then a loop or a heredoc.
fn agent_command(r: &mut Rng) -> String {
    let mut cmd = simple(r);
    match r.below(100) {
        0..=14 => cmd = format!("{cmd} | head -n {}", 10 + r.below(90)),
        15..=26 => cmd = format!("{cmd} 2>&1 | tail -n {}", 20 + r.below(80)),
        27..=31 => cmd = format!("{cmd} | grep -v '^$' | wc -l"),
        32..=36 => cmd = format!("{cmd} > /tmp/out.txt 2>&1"),
        37..=40 => cmd = format!("{cmd} && {}", simple(r)),
        41..=43 => cmd = format!("{cmd} || true"),
        44..=46 => cmd = format!("timeout 120 {cmd}"),
        47..=50 => {
            let f = file(r);
            cmd = format!("echo \"{}\" >> {f}", r.pick(MESSAGES));
        }
        51..=53 => {
            let d = r.pick(DIRS);
            cmd = format!("for f in {d}/*; do wc -l \"$f\"; done");
        }
        54..=56 => {
            let f = file(r);
            cmd = format!(
                "cat > {f} <<'EOF'\n# {}\n\nSome generated content for {f}.\n\
                 - item one\n- item two with `code` and $VAR\nEOF",
                r.pick(MESSAGES)
            );
        }
        57..=58 => {
            cmd = format!(
                "git add -A && git commit -m \"$(cat <<'EOF'\n{}\n\nDetails.\nEOF\n)\"",
                r.pick(MESSAGES)
            );
        }
        59..=60 => cmd = format!("{cmd}; echo \"exit: $?\""),
        _ => {}
    }
    if r.chance(20) {
        let d = r.pick(DIRS);
        cmd = format!("cd {d} && {cmd}");
    }
    cmd
}

fn agent_commands(n: usize) -> Vec<String> {
    let mut r = Rng(SEED);
    (0..n).map(|_| agent_command(&mut r)).collect()
}

const SINGLE: &[(&str, &str)] = &[
    ("git status", "git status"),
    (
        "3-stage pipeline",
        "grep -rn \"TODO\" src | sort -u | head -n 20",
    ),
    (
        "heredoc",
        "cat > notes.md <<'EOF'\n# Notes\n\nRun `cargo test` before $COMMIT.\nEOF",
    ),
];

// ---------------------------------------------------------------------------
// Median per-command time, printed once
// ---------------------------------------------------------------------------

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let i = ((sorted.len() - 1) as f64 * p).round() as usize;
    sorted[i]
}

fn report_median(commands: &[String]) {
    // Under `cargo test --benches` (no `--bench` argument) keep it quick.
    let bench_mode = std::env::args().any(|a| a == "--bench");
    let reps = if bench_mode { MEDIAN_REPS } else { 2 };
    let mut per_command: Vec<Duration> = commands
        .iter()
        .map(|c| {
            black_box(analyze(black_box(c)));
            let start = Instant::now();
            for _ in 0..reps {
                black_box(analyze(black_box(c)));
            }
            start.elapsed() / reps
        })
        .collect();
    per_command.sort();
    let mean = per_command.iter().sum::<Duration>() / per_command.len() as u32;
    let bytes: usize = commands.iter().map(String::len).sum();
    eprintln!();
    eprintln!("==================================================================");
    eprintln!(
        "portcullis-shell analyze: MEDIAN per-command time = {:.2?}",
        percentile(&per_command, 0.5)
    );
    eprintln!(
        "  {} generated agent commands (mean {} bytes), each timed alone over {reps} reps",
        commands.len(),
        bytes / commands.len()
    );
    eprintln!(
        "  p10 {:.2?}  p90 {:.2?}  p99 {:.2?}  max {:.2?}  mean {:.2?}",
        percentile(&per_command, 0.1),
        percentile(&per_command, 0.9),
        percentile(&per_command, 0.99),
        percentile(&per_command, 1.0),
        mean
    );
    eprintln!("==================================================================");
    eprintln!();
}

// ---------------------------------------------------------------------------
// Criterion benches
// ---------------------------------------------------------------------------

fn bench_analyze(c: &mut Criterion) {
    let commands = agent_commands(COMMANDS);
    // `PORTCULLIS_BENCH_SHOW=N` prints the first N generated commands.
    if let Some(n) = std::env::var("PORTCULLIS_BENCH_SHOW")
        .ok()
        .and_then(|v| v.parse::<usize>().ok())
    {
        for cmd in commands.iter().take(n) {
            eprintln!("{cmd}\n---");
        }
    }
    report_median(&commands);

    let mut group = c.benchmark_group("analyze");
    group.throughput(Throughput::Elements(commands.len() as u64));
    group.bench_function(format!("agent-commands (x{})", commands.len()), |b| {
        b.iter(|| {
            for cmd in &commands {
                black_box(analyze(black_box(cmd)));
            }
        })
    });
    group.finish();

    let mut single = c.benchmark_group("analyze/single");
    single.throughput(Throughput::Elements(1));
    for (name, cmd) in SINGLE {
        single.bench_function(*name, |b| b.iter(|| black_box(analyze(black_box(cmd)))));
    }
    single.finish();
}

fn config() -> Criterion {
    Criterion::default()
        .sample_size(20)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(5))
}

criterion_group! {
    name = benches;
    config = config();
    targets = bench_analyze
}
criterion_main!(benches);
