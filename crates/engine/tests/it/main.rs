//! The engine's integration tests: properties, the seed's incidents, architecture rules.
//!
//! One test binary for the crate (ripgrep's habit): each module is one
//! suite, run alone with `cargo test -p portcullis-engine --test it -- MODULE::`.

// Test code: a failed unwrap, index or panic is a failed test.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

mod support;

mod architecture;
mod authority;
mod properties;
mod seed_002;
