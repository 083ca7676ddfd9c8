//! The policy's integration tests: decisions, every argument, properties.
//!
//! One test binary for the crate (ripgrep's habit): each module is one
//! suite, run alone with `cargo test -p portcullis-policy --test it -- MODULE::`.

// Test code: a failed unwrap, index or panic is a failed test.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

mod support;

mod decide;
mod every_argument;
mod git_global_options;
mod hidden_reads_and_writes;
mod mcp_servers;
mod programs_with_languages;
mod properties;
mod tool_fields;
