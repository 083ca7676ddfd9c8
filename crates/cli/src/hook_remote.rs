//! Which team server governs this machine (`PORTCULLIS_SERVER`), read in
//! one place by all three binaries; the hook and the bridge then ask that
//! server ([`crate::remote_hook`]).

/// The team server this machine is governed by, if any.
pub fn governing_server() -> Option<String> {
    std::env::var("PORTCULLIS_SERVER")
        .ok()
        .map(|s| s.trim().to_owned())
        .filter(|s| !s.is_empty())
}
