//! Lays out `portcullis-hook`'s code (and the daemon's, which judges the
//! calls hooks hand it) so that what a hook call runs is contiguous: the
//! linker (rust-lld) places the functions listed in
//! `link/hook-symbol-order.txt` first, in that order. A hook is a process an
//! agent starts for every tool call, and each page of code it touches first
//! costs a page fault (≈ 4 µs on the build machine, the kernel mapping 16
//! pages around it); spread over the whole binary, a call took ≈ 76 of them.
//! The list is data: `scripts/hook-symbol-order` writes it from what a hook
//! call executes (valgrind), and a name it no longer matches is skipped, so
//! a stale list costs speed, never correctness.

fn main() {
    println!("cargo:rerun-if-changed=link/hook-symbol-order.txt");
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=PORTCULLIS_NO_SYMBOL_ORDER");
    // Only where the linker is rust-lld (Rust's default on this target since
    // 1.90); GNU ld has no such option: a build that links with it sets
    // PORTCULLIS_NO_SYMBOL_ORDER=1.
    if std::env::var("TARGET").as_deref() == Ok("x86_64-unknown-linux-gnu")
        && std::env::var_os("PORTCULLIS_NO_SYMBOL_ORDER").is_none()
    {
        let dir = std::env::var("CARGO_MANIFEST_DIR").unwrap_or_default();
        // `portcullis` too: pi's extension runs `portcullis hook pi`. And
        // `portcullis-daemon`: it runs the same judgement for every hook
        // handed to it, mostly after an idle while, when its code is out of
        // the caches (≈ 5 % off its answer, interleaved A/B, 600 calls).
        for bin in ["portcullis-hook", "portcullis", "portcullis-daemon"] {
            println!(
                "cargo:rustc-link-arg-bin={bin}=-Wl,--symbol-ordering-file={dir}/link/hook-symbol-order.txt"
            );
            println!("cargo:rustc-link-arg-bin={bin}=-Wl,--no-warn-symbol-ordering");
        }
    }
}
