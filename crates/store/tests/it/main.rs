//! The store's integration tests: contracts, concurrency, crashes, trust.
//!
//! One test binary for the crate (ripgrep's habit): each module is one
//! suite, run alone with `cargo test -p portcullis-store --test it -- MODULE::`.

// Test code: a failed unwrap, index or panic is a failed test.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

mod support;

mod audit;
mod batch;
mod concurrency;
mod crash;
mod devices;
mod grants;
mod open;
mod pins;
#[cfg(feature = "postgres")]
mod postgres;
mod requests;
mod sessions;
mod trust;
