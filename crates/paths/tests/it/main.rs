//! The path facts' integration tests.
//!
//! One test binary for the crate (ripgrep's habit): each module is one
//! suite, run alone with `cargo test -p portcullis-paths --test it -- MODULE::`.

// Test code: a failed unwrap, index or panic is a failed test.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

mod confinement;
mod foreign_repository;
mod protected_config;
mod reported;
mod resolve;
