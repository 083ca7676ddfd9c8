//! Two `portcullis serve` replicas on one PostgreSQL store behave as one
//! service (issue 18): a session registered through one decides through the
//! other, a request raised through B is in A's queue, A's approval lets B's
//! retry through exactly once, and both verify the same audit chain.

// Test code: a failed unwrap, index or panic is a failed test.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

use std::process::Command;

use serde_json::{Value, json};

use crate::support::serve::Served;

#[path = "../../../store/tests/it/support/postgres.rs"]
mod postgres_cluster;

fn body(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("not JSON ({e}): {text}"))
}

#[test]
fn two_replicas_on_one_postgres_are_one_queue_one_grant_and_one_chain() {
    let url = postgres_cluster::fresh_database();
    // The schema first, as a team would before starting its replicas.
    let out = Command::new(env!("CARGO_BIN_EXE_portcullis"))
        .args(["store", "migrate", "--store", &url])
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{said}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(said.contains("schema version"), "{said}");
    let a = Served::start_opts(|_| String::new(), &["--store", &url], None);
    let b = Served::start_opts(|_| String::new(), &["--store", &url], None);

    // A session registered through A ...
    let (status, _, text) = a.request(
        "POST",
        "/v1/sessions",
        &[("Authorization", &a.bearer())],
        Some(&json!({"id": "s1", "agent": "claude-code", "cwd": a.work}).to_string()),
    );
    assert_eq!(status, 201, "{text}");
    let token = body(&text)["token"].as_str().unwrap().to_owned();
    let session_auth = format!("Bearer {token}");
    let read_outside = json!({
        "tool": "Read", "origin": "core",
        "input": {"file_path": a.outside}, "cwd": a.work,
    })
    .to_string();
    let decide_on_b = || {
        let (status, _, text) = b.request(
            "POST",
            "/v1/decide",
            &[("X-Session-ID", "s1"), ("Authorization", &session_auth)],
            Some(&read_outside),
        );
        assert_eq!(status, 200, "{text}");
        body(&text)
    };
    // ... decides through B: the refusal is a request ...
    let first = decide_on_b();
    assert_eq!(first["decision"], "ask", "{first}");
    let id = first["request"]["id"].as_i64().expect("a request");
    // ... in A's queue.
    let (status, _, text) = a.request(
        "GET",
        "/v1/requests",
        &[("Authorization", &a.bearer())],
        None,
    );
    assert_eq!(status, 200, "{text}");
    let queue = body(&text);
    assert_eq!(queue[0]["id"].as_i64(), Some(id), "{queue}");
    assert_eq!(queue[0]["session"], "s1", "{queue}");

    // Approved once on A: B's retry is allowed once, then asks again.
    let (status, _, text) = a.request(
        "POST",
        &format!("/v1/requests/{id}/resolve"),
        &[("Authorization", &a.bearer())],
        Some(r#"{"scope":"once"}"#),
    );
    assert_eq!(status, 200, "{text}");
    let grant = body(&text)["grant"]["id"].as_i64().unwrap();
    let retry = decide_on_b();
    assert_eq!(retry["decision"], "allow", "{retry}");
    assert_eq!(retry["grants_used"], json!([grant]), "{retry}");
    assert_eq!(
        decide_on_b()["decision"],
        "ask",
        "once means once, on any replica"
    );

    // One audit chain, the same from either replica.
    let verify = |s: &Served| {
        let (status, _, text) = s.request(
            "GET",
            "/v1/audit/verify",
            &[("Authorization", &s.bearer())],
            None,
        );
        assert_eq!(status, 200, "{text}");
        body(&text)
    };
    let (on_a, on_b) = (verify(&a), verify(&b));
    assert_eq!(on_a, on_b);
    assert_eq!(on_a["status"], "intact", "{on_a}");
    assert!(on_a["rows"].as_u64().unwrap() >= 3, "{on_a}");
}
