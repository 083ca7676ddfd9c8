//! portcullis' end-to-end tests: the binaries, the daemon, real agents, real browsers.
//!
//! One test binary for the crate (ripgrep's habit): each module is one
//! suite, run alone with `cargo test -p portcullis --test it -- MODULE::`.

// Test code: a failed unwrap, index or panic is a failed test.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

mod support;

// The real agents' harness and scripted model server, shared by the
// end-to-end suites (`claude_e2e`, `codex_e2e`, `gemini_e2e`, `pi_e2e`).
#[path = "claude_e2e/harness.rs"]
mod harness;
#[path = "claude_e2e/model_server.rs"]
mod model_server;

mod analyze_contract;
mod benign;
mod browser;
mod bypass;
mod check_contract;
mod claude_e2e;
mod codex_e2e;
mod destructive;
mod gemini_e2e;
mod hook_confine;
mod hook_daemon;
mod hook_guard;
mod hooks_contract;
mod hooks_fixtures;
mod install;
mod mcp_bridge;
mod mcp_http;
mod pi_e2e;
mod policy_conformance;
mod protected_config;
mod run_confined;
mod serve;
mod serve_limits;
mod state_contract;
mod store_trust;
mod team;
