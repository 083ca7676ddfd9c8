//! The engine is the only way to a decision (rust-analyzer's "tidy" habit:
//! a test that reads the workspace's source).
//!
//! Outside `crates/engine` (and the crates that define what it composes),
//! no source file may
//! - call the policy's judgement (`portcullis_policy::decide`,
//!   `decide_with_skill`): every decision goes through `Engine::decide`;
//! - call a `Store` method that writes: requests, grants, audit rows, pins,
//!   sessions, tokens, holds. What a person does goes through
//!   `portcullis_engine::actions`; what the engine does for an agent
//!   (sessions on first use, pins, holds) through `Engine`'s own methods.
//!
//! Scanned: every `crates/*/src/**/*.rs`. Not scanned: `crates/engine`
//! (the authority), `crates/store` (defines the writes), `crates/policy`
//! (defines the judgement), and tests, benches and fuzz targets of any
//! crate (they set up state on purpose).
//! Allowed exceptions are listed in [`ALLOWED`], each with its reason.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

use std::path::{Path, PathBuf};

/// `Store` methods that write.
const STORE_WRITES: &[&str] = &[
    "raise_request",
    "resolve_request",
    "hold_request",
    "append_audit",
    "add_grant",
    "add_grant_at",
    "consume_once",
    "consume_once_all",
    "revoke_grant",
    "check_pin",
    "decide_pin",
    "register_session",
    "register_session_at",
    "ensure_session",
    "ensure_session_at",
    "revoke_session",
    "revoke_session_at",
    "issue_token",
    "enroll_device",
    "revoke_device",
    "mark_delivered",
];

/// The policy's judgement: only the engine calls it.
const JUDGEMENTS: &[&str] = &["decide", "decide_with_skill"];

/// Crates whose source is not scanned: the authority and what defines the
/// judgement and the writes.
const EXEMPT_CRATES: &[&str] = &["engine", "store", "policy"];

/// (file, what, why): the explicit exceptions. Empty today — the CLI's and
/// the UI's admin commands (`requests resolve`, `grants add|revoke`,
/// `sessions register|revoke`, `mcp pins approve`) all go through
/// `portcullis_engine::actions`, and the hook, the bridge and the server
/// through `Engine`. Add an entry only with the reason it cannot.
const ALLOWED: &[(&str, &str, &str)] = &[];

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap()
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// The source without comments and string literals (so documentation that
/// names a method is not a call).
fn code_only(text: &str) -> String {
    let b = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'/' && b.get(i + 1) == Some(&b'/') {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
        } else if b[i] == b'/' && b.get(i + 1) == Some(&b'*') {
            i += 2;
            while i + 1 < b.len() && !(b[i] == b'*' && b[i + 1] == b'/') {
                i += 1;
            }
            i += 2;
        } else if b[i] == b'r'
            && (i == 0 || !is_ident(b[i - 1] as char))
            && matches!(b.get(i + 1), Some(b'#' | b'"'))
        {
            // A raw string: r"…", r#"…"#.
            let hashes = b[i + 1..].iter().take_while(|c| **c == b'#').count();
            if b.get(i + 1 + hashes) != Some(&b'"') {
                out.push('r');
                i += 1;
                continue;
            }
            let close: Vec<u8> = std::iter::once(b'"')
                .chain(std::iter::repeat_n(b'#', hashes))
                .collect();
            i += 2 + hashes;
            while i < b.len() && !b[i..].starts_with(&close) {
                i += 1;
            }
            i += close.len();
            out.push_str("\"\"");
        } else if b[i] == b'\'' {
            // A char literal ('"', '\'', 'é'); else a lifetime.
            let end = if b.get(i + 1) == Some(&b'\\') {
                b[i + 2..]
                    .iter()
                    .position(|c| *c == b'\'')
                    .map(|p| i + 2 + p)
            } else {
                (i + 2..(i + 6).min(b.len())).find(|&j| b[j] == b'\'')
            };
            match end {
                Some(end) if !b[i + 1..end].contains(&b' ') => {
                    out.push_str("' '");
                    i = end + 1;
                }
                _ => {
                    out.push('\'');
                    i += 1;
                }
            }
        } else if b[i] == b'"' {
            i += 1;
            while i < b.len() && b[i] != b'"' {
                if b[i] == b'\\' {
                    i += 1;
                }
                i += 1;
            }
            i += 1;
            out.push_str("\"\"");
        } else {
            out.push(b[i] as char);
            i += 1;
        }
    }
    out
}

fn is_ident(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// The identifiers `use portcullis_policy::{…}` groups bring in, and the
/// paths `portcullis_policy::name` names.
fn policy_paths(code: &str) -> Vec<String> {
    let mut names = Vec::new();
    let mut rest = code;
    while let Some(at) = rest.find("portcullis_policy::") {
        rest = &rest[at + "portcullis_policy::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            let end = group.find('}').unwrap_or(group.len());
            names.extend(
                group[..end]
                    .split(|c: char| !is_ident(c))
                    .filter(|s| !s.is_empty())
                    .map(str::to_string),
            );
        } else {
            let name: String = rest.chars().take_while(|c| is_ident(*c)).collect();
            names.push(name);
        }
    }
    names
}

/// Method calls `.name(` (whitespace and line breaks allowed around the dot).
fn method_calls<'a>(code: &str, names: &[&'a str]) -> Vec<&'a str> {
    let squeezed: String = code.chars().filter(|c| !c.is_whitespace()).collect();
    names
        .iter()
        .filter(|n| squeezed.contains(&format!(".{n}(")))
        .copied()
        .collect()
}

#[test]
fn only_the_engine_decides_and_writes_the_store() {
    let root = workspace();
    let mut problems = Vec::new();
    let mut scanned = 0;
    for krate in std::fs::read_dir(root.join("crates")).unwrap().flatten() {
        let name = krate.file_name().to_string_lossy().into_owned();
        if EXEMPT_CRATES.contains(&name.as_str()) {
            continue;
        }
        let mut files = Vec::new();
        rust_files(&krate.path().join("src"), &mut files);
        for file in files {
            let rel = file
                .strip_prefix(&root)
                .unwrap()
                .to_string_lossy()
                .into_owned();
            let code = code_only(&std::fs::read_to_string(&file).unwrap());
            scanned += 1;
            let allowed = |what: &str| {
                ALLOWED
                    .iter()
                    .any(|(f, w, _)| *f == rel.as_str() && *w == what)
            };
            for name in policy_paths(&code) {
                if JUDGEMENTS.contains(&name.as_str()) && !allowed(&name) {
                    problems.push(format!(
                        "{rel}: names portcullis_policy::{name}: decide through portcullis_engine::Engine"
                    ));
                }
            }
            let squeezed: String = code.chars().filter(|c| !c.is_whitespace()).collect();
            for j in JUDGEMENTS {
                if squeezed.contains(&format!("policy::{j}(")) && !allowed(j) {
                    problems.push(format!(
                        "{rel}: calls policy::{j}: decide through portcullis_engine::Engine"
                    ));
                }
            }
            for m in method_calls(&code, STORE_WRITES) {
                if !allowed(m) {
                    problems.push(format!(
                        "{rel}: calls Store::{m}, which writes: go through portcullis_engine::actions or an Engine method"
                    ));
                }
            }
        }
    }
    assert!(scanned > 20, "only {scanned} files scanned: wrong root?");
    assert!(problems.is_empty(), "side doors:\n{}", problems.join("\n"));
}

/// The scanner itself: what it must catch and what it must let pass.
#[test]
fn the_scanner_catches_side_doors() {
    let code = code_only(
        "let q = '\"'; let r = r#\"x.add_grant(\"#;\nuse portcullis_policy::{Decision,\n    decide, Verdict};\n// store.append_audit(x)\nlet s = \"store.add_grant(\";\nstore\n    .raise_request(&r, now)?;",
    );
    assert!(policy_paths(&code).contains(&"decide".to_string()));
    assert_eq!(method_calls(&code, STORE_WRITES), ["raise_request"]);
    let fine = code_only("portcullis_engine::actions::resolve_request(&s, 1);\nengine.decide(&c);");
    assert!(method_calls(&fine, STORE_WRITES).is_empty());
    assert!(!policy_paths(&fine).contains(&"decide".to_string()));
}
