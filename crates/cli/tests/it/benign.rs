//! Everyday agent commands under the allowlist a developer would write must run
//! without a prompt (issue 3: allow rate ≥ 95 %). Read-only programs (`ls`, `cat`,
//! `grep`, `head`, `wc` …) need no rule. Commands are never dropped to make the
//! rate: a command that is not allowed is printed with its reasons.

// Test code: a failed unwrap, index or panic is a failed test.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

use crate::support;

use support::{Job, Sandbox, bash, config, explain, rules, verdict};

const MIN_RATE: f64 = 0.95;

/// What a developer puts in `[permissions] allow` for an agent working on a
/// Rust/JS project.
const ALLOW: &[&str] = &[
    "Bash(git status)",
    "Bash(git diff *)",
    "Bash(git log *)",
    "Bash(git show *)",
    "Bash(git add *)",
    "Bash(git commit *)",
    "Bash(git branch *)",
    "Bash(git stash *)",
    "Bash(git checkout *)",
    "Bash(cargo build *)",
    "Bash(cargo test *)",
    "Bash(cargo clippy *)",
    "Bash(cargo fmt *)",
    "Bash(cargo check *)",
    "Bash(cargo run *)",
    "Bash(npm run *)",
    "Bash(npm test *)",
    "Bash(npm install *)",
    "Bash(npx tsc *)",
    "Bash(python3 -m pytest *)",
    "Bash(make *)",
    "Bash(rg *)",
    "Bash(sed -n *)",
    "Bash(mkdir -p *)",
    "Bash(touch *)",
    "Bash(cp *)",
    "Bash(mv *)",
    "Read(./**)",
    "Edit(./**)",
];

const COMMANDS: &[&str] = &[
    // git
    "git status",
    "git diff",
    "git diff --stat",
    "git diff HEAD~1 -- src/main.rs",
    "git diff --cached",
    "git diff main...HEAD --stat",
    "git log --oneline -5",
    "git log -p -3 -- src",
    "git log --format='%h %s' -10",
    "git log --oneline main..HEAD",
    "git show HEAD",
    "git show --stat HEAD",
    "git add -A",
    "git add src/main.rs README.md",
    "git commit -m \"Fix the parser\"",
    "git commit -m \"$(cat <<'EOF'\nAdd the check command\n\nIt reads JSON lines.\nEOF\n)\"",
    "git add . && git commit -m 'wip: checkpoint'",
    "git branch -a",
    "git stash list",
    "git checkout -b feature/x",
    "git rev-parse HEAD",
    "git remote -v",
    "git blame src/main.rs",
    "git status && git diff --stat",
    "git diff | head -50",
    "git log --oneline | wc -l",
    // cargo
    "cargo build",
    "cargo build --release",
    "cargo test --workspace",
    "cargo test -p portcullis -- --nocapture",
    "cargo clippy --all-targets -- -D warnings",
    "cargo fmt --check",
    "cargo fmt --all",
    "cargo check --all-targets",
    "cargo run -- --help",
    "cargo fmt && cargo clippy -- -D warnings",
    "cargo test 2>&1 | tail -20",
    "cargo build 2>&1 | grep -E 'error|warning' | head",
    "cargo test --workspace 2>&1 | grep -E '^test result'",
    "cargo test 2>&1 | tee test.log",
    "cargo --version",
    "rustc --version",
    // npm, python, make
    "npm run build",
    "npm run lint -- --fix",
    "npm test",
    "npm test -- --watch=false",
    "npm install",
    "npm run build && npm test",
    "npx tsc --noEmit",
    "node --version",
    "python3 -m pytest -q",
    "make test",
    // search and read
    "rg -n TODO src",
    "rg --files",
    "rg -n 'fn main' -g '*.rs'",
    "grep -rn fn src",
    "grep -c main src/main.rs",
    "grep -rn 'TODO' . --include='*.rs'",
    "sed -n '1,20p' src/main.rs",
    "sed -n 5p Cargo.toml",
    "head -n 20 README.md",
    "head -c 200 README.md",
    "tail -n 50 src/main.rs",
    "wc -l src/main.rs",
    "wc -l src/*.rs",
    "ls -la",
    "ls src",
    "ls -R src",
    "ls -la src/ 2>/dev/null",
    "cat Cargo.toml",
    "cat README.md src/main.rs",
    "cat src/main.rs | grep -n fn",
    "find . -name '*.rs'",
    "find src -type f -name '*.rs' | head -20",
    "diff README.md Cargo.toml",
    "sort Cargo.toml | uniq -c",
    "stat src/main.rs",
    "du -sh src",
    "tree -L 2",
    "jq . package.json",
    "ls src | sort",
    "git diff --name-only | xargs wc -l",
    "rg -l 'use std' src | xargs grep -c fn",
    // files in the workspace
    "mkdir -p target/tmp",
    "mkdir -p src/bin && touch src/bin/tool.rs",
    "echo x > notes.txt",
    "echo 'more' >> notes.txt",
    "echo 'line' | tee -a notes.txt",
    "printf '%s\\n' hello > out.txt",
    "cp README.md README.bak",
    "mv notes.txt docs.txt",
    "cat > notes.md <<'EOF'\n# Notes\n\n- item\nEOF",
    "mkdir -p docs && cat > docs/design.md <<'EOF'\nText with $dollar and `ticks`.\nEOF",
    // shell glue
    "cd src && ls",
    "cd src && grep -n main main.rs",
    "for f in a b; do echo $f; done",
    "for f in src/*.rs; do wc -l \"$f\"; done",
    "test -f Cargo.toml && echo yes",
    "[ -d src ] && ls src",
    "echo done; date",
    "pwd",
    "echo $HOME",
    "which cargo",
    "sleep 1",
    "while IFS= read -r line; do echo \"$line\"; done < README.md",
    "export RUST_BACKTRACE=1 && cargo test",
    "cd src && cargo build",
];

#[test]
fn everyday_commands_run_without_a_prompt() {
    assert!(COMMANDS.len() >= 60, "the benign set has ≥ 60 commands");
    let sandbox = Sandbox::new("benign");
    let cfg = config("ask", &rules(ALLOW), &[], &[]);
    let jobs: Vec<Job> = COMMANDS
        .iter()
        .map(|c| Job::new(cfg.clone(), bash(c)))
        .collect();
    let decisions = sandbox.decide(&jobs);

    let mut prompts = Vec::new();
    for (c, d) in COMMANDS.iter().zip(&decisions) {
        if verdict(d) != "allow" {
            prompts.push(format!("  {}: {c:?}\n{}", verdict(d), explain(d)));
        }
    }
    let allowed = COMMANDS.len() - prompts.len();
    let rate = allowed as f64 / COMMANDS.len() as f64;
    println!(
        "benign allow rate: {allowed}/{} = {:.1} % (minimum {:.0} %)",
        COMMANDS.len(),
        rate * 100.0,
        MIN_RATE * 100.0
    );
    println!("not allowed ({}):\n{}", prompts.len(), prompts.join("\n"));
    assert!(
        rate >= MIN_RATE,
        "benign allow rate {:.1} % is below {:.0} %; not allowed:\n{}",
        rate * 100.0,
        MIN_RATE * 100.0,
        prompts.join("\n")
    );
}

/// `[confine] mode = "dynamic"` as a confining hook judges (`check --confine`):
/// the commands that asked only because their reads are known at run time run
/// confined instead, nothing else changes, and none of them is allowed
/// without the confinement.
#[test]
fn dynamic_reads_run_confined_instead_of_asking() {
    let sandbox = Sandbox::new("benign-confine");
    let cfg = config("ask", &rules(ALLOW), &[], &[]);
    let plain: Vec<Job> = COMMANDS
        .iter()
        .map(|c| Job::new(cfg.clone(), bash(c)))
        .collect();
    let confining: Vec<Job> = COMMANDS
        .iter()
        .map(|c| Job::new(cfg.clone(), bash(c)).flag("--confine"))
        .collect();
    let before = sandbox.decide(&plain);
    let after = sandbox.decide(&confining);
    let mut confined = Vec::new();
    for ((c, b), a) in COMMANDS.iter().zip(&before).zip(&after) {
        let only_dynamic_reads = verdict(b) == "ask"
            && support::reasons(b)
                .iter()
                .all(|r| r["code"] == "dynamic-path");
        if a.get("confine").is_some() {
            assert_eq!(verdict(a), "allow", "{c:?}: confined but {}", explain(a));
            confined.push(*c);
        } else {
            assert_eq!(verdict(a), verdict(b), "{c:?}: changed without confinement");
        }
        if verdict(b) != "allow" && verdict(a) == "allow" {
            assert!(
                only_dynamic_reads,
                "{c:?}: allowed confined but asked for: {}",
                explain(b)
            );
        }
    }
    let allowed = after.iter().filter(|d| verdict(d) == "allow").count();
    println!(
        "benign under [confine] dynamic: {allowed}/{} allowed, {} of them confined: {confined:?}",
        COMMANDS.len(),
        confined.len()
    );
    assert!(
        !confined.is_empty(),
        "no benign command ran confined: the set has run-time reads (`for f in src/*.rs …`)"
    );
}
