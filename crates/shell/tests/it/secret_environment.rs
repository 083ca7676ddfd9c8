//! The class "secret environment": the analysis reports which variables'
//! values a text reads — expanded anywhere bash expands (`$NAME`,
//! `"${NAME:-x}"`, heredocs, nested scripts), printed by name (`printenv
//! NAME`, `declare -p NAME`), or all at once (`env`, `printenv`, `set`,
//! `declare -p`, `export -p`, `ps e` …). Which names are secrets is decided by
//! the policy (`crates/policy/tests/it/decide.rs`).

// Test code: a failed unwrap, index or panic is a failed test.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

use portcullis_shell::analyze;

/// The names (or `*`, `PREFIX*`) the analysis says are read.
fn reads(text: &str) -> Vec<String> {
    analyze(text)
        .env_reads
        .into_iter()
        .map(|r| r.name)
        .collect()
}

fn reads_all(text: &str) -> bool {
    analyze(text).env_reads.iter().any(|r| r.is_all())
}

#[test]
fn programs_that_print_the_whole_environment() {
    for text in [
        "printenv",
        "printenv -0",
        "/usr/bin/printenv",
        "printenv \"$name\"",
        "env",
        "env -0",
        "env -u PATH",
        "env FOO=1",
        "env | grep KEY",
        "sudo env",
        "command env",
        "set",
        "builtin set",
        "set | grep -i token",
        "bash -c set",
        "sh -c 'env'",
        "declare",
        "declare -p",
        "declare -x",
        "typeset",
        "typeset -p",
        "export",
        "export -p",
        "readonly -p",
        "declare \"$opt\"",
        "xargs printenv < names",
        "envsubst < template",
        "ps eww",
        "ps auxe",
        "awk 'BEGIN { for (k in ENVIRON) print k, ENVIRON[k] }'",
        "jq -n env",
        "jq -n '$ENV'",
        "tmux show-environment",
    ] {
        assert!(reads_all(text), "{text}: {:?}", analyze(text).env_reads);
    }
}

#[test]
fn named_reads() {
    for (text, name) in [
        ("printenv OPENAI_API_KEY", "OPENAI_API_KEY"),
        ("printenv HOME PATH", "PATH"),
        ("declare -p AWS_SECRET_ACCESS_KEY", "AWS_SECRET_ACCESS_KEY"),
        ("typeset -p GH_TOKEN", "GH_TOKEN"),
        ("echo $GITHUB_TOKEN", "GITHUB_TOKEN"),
        ("echo \"${GITHUB_TOKEN}\"", "GITHUB_TOKEN"),
        ("echo ${GITHUB_TOKEN:-none}", "GITHUB_TOKEN"),
        ("echo ${GITHUB_TOKEN@Q}", "GITHUB_TOKEN"),
        ("echo ${GITHUB_TOKEN:0:4}", "GITHUB_TOKEN"),
        ("printf %s \"$NPM_TOKEN\" > out", "NPM_TOKEN"),
        ("cat <<EOF\n$ANTHROPIC_API_KEY\nEOF", "ANTHROPIC_API_KEY"),
        ("cat <<< \"$ANTHROPIC_API_KEY\"", "ANTHROPIC_API_KEY"),
        ("x=$AWS_SECRET_ACCESS_KEY; echo $x", "AWS_SECRET_ACCESS_KEY"),
        ("sh -c 'echo $GH_TOKEN'", "GH_TOKEN"),
        ("eval 'echo $GH_TOKEN'", "GH_TOKEN"),
        ("trap 'echo $GH_TOKEN' EXIT", "GH_TOKEN"),
        ("echo $(echo $DB_PASSWORD)", "DB_PASSWORD"),
        ("declare -n r=GH_TOKEN; echo $r", "GH_TOKEN"),
        ("[ \"$GH_TOKEN\" = x ]", "GH_TOKEN"),
        ("[[ $GH_TOKEN == ghp_* ]]", "GH_TOKEN"),
        (
            "curl -H \"Authorization: Bearer $GH_TOKEN\" https://example.com",
            "GH_TOKEN",
        ),
        ("echo ${!AWS*}", "AWS*"),
        ("echo ${!OPENAI@}", "OPENAI*"),
    ] {
        let r = reads(text);
        assert!(r.iter().any(|n| n == name), "{text}: {r:?}");
        assert!(!reads_all(text), "{text}: reads everything");
    }
}

#[test]
fn what_does_not_read_a_value() {
    for text in [
        "echo hi",
        "echo '$GH_TOKEN'",
        "echo \\$GH_TOKEN",
        "[[ -n $GH_TOKEN ]] && echo set",
        "[[ -z \"$GH_TOKEN\" ]]",
        "[ -n \"$GH_TOKEN\" ]",
        "test -z \"$GH_TOKEN\"",
        "echo ${GH_TOKEN:+set}",
        "echo ${#GH_TOKEN}",
        "export GH_TOKEN",
        "export FOO=1",
        "declare -f",
        "declare -F",
        "declare x=1",
        "set -euo pipefail",
        "set -- a b",
        "env -i PATH=/bin ls",
        "env -i",
        "env FOO=1 ls",
        "ps aux",
        "ps -ef",
        "ps -o user,pid,command",
        "jq '.environment' f.json",
        "compgen -v",
    ] {
        let r = reads(text);
        assert!(
            !r.iter().any(|n| n == "GH_TOKEN" || n == "*"),
            "{text}: {r:?}"
        );
    }
}
