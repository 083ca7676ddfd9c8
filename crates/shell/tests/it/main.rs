//! The shell analysis' integration tests: oracle, differential, corpus, snapshots.
//!
//! One test binary for the crate (ripgrep's habit): each module is one
//! suite, run alone with `cargo test -p portcullis-shell --test it -- MODULE::`.

// Test code: a failed unwrap, index or panic is a failed test.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

mod common;

mod conformance;
mod constructs;
mod differential;
mod growth;
mod oracle;
mod parser_memoized;
mod props;
mod quotes_that_do_not_quote;
mod secret_environment;
mod snapshots;
