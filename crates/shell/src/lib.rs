//! Bash command analysis: from shell text to every command bash could run.
//!
//! This crate answers one question for portcullis: *if bash ran this text, which
//! programs could execute, with which arguments, and what would they touch?* It
//! parses with [`brush_parser`], normalises words (quote removal, `\<newline>`,
//! `$'…'`), descends into every place bash runs code from — substitutions,
//! compound commands, functions, `sh -c`, `eval` of literals, heredocs fed to
//! shells, wrappers such as `sudo`, `timeout`, `env`, `xargs`, `find -exec` — and
//! consults a program knowledge base ([`knowledge`]) for the paths a command
//! reads, writes or deletes and the options that execute code.
//!
//! What it is not: it does not decide. A policy reads the [`Analysis`]; anything the
//! analyser could not see through is reported as [`Opaque`] with a reason, never
//! dropped. It does no I/O: no file system, no environment, no processes. Paths
//! are reported as written (`~` and relative paths included) for the `paths`
//! crate to resolve.
//!
//! ```
//! let a = portcullis_shell::analyze("timeout 5 sh -c 'id' > out.txt");
//! let programs: Vec<&str> = a.programs().collect();
//! assert_eq!(programs, ["timeout", "sh", "id"]);
//! assert!(a.is_complete());
//! ```

mod arith;
pub mod knowledge;
mod limits;
mod model;
pub mod url;
mod walk;
mod word;
mod wrappers;

pub use limits::Limits;
pub use model::{
    Analysis, Command, Effect, EnvAssignment, EnvRead, Opaque, OpaqueReason, Redirect, RunsIn, Via,
    basename, join, quote,
};

/// Analyses shell text with the default [`Limits`].
pub fn analyze(text: &str) -> Analysis {
    analyze_with(text, &Limits::DEFAULT)
}

/// Analyses shell text that starts in directory `dir` (absolute, `~/…`, or
/// relative to the caller's working directory) instead of the working
/// directory: relative paths in the text resolve against it, as after a `cd`.
pub fn analyze_in(text: &str, dir: &str) -> Analysis {
    run_guarded(|| {
        walk::Walker::new(&Limits::DEFAULT)
            .starting_in(dir)
            .run(text)
    })
}

/// Analyses shell text with the given limits.
///
/// Never panics: should the parser or the walker fail unexpectedly, the result
/// is an analysis with a `parse-error` opaque part (fail closed).
pub fn analyze_with(text: &str, limits: &Limits) -> Analysis {
    run_guarded(|| walk::Walker::new(limits).run(text))
}

fn run_guarded(walk: impl FnOnce() -> Analysis + std::panic::UnwindSafe) -> Analysis {
    let run = std::panic::catch_unwind(walk);
    run.unwrap_or_else(|_| Analysis {
        opaque: vec![Opaque {
            reason: OpaqueReason::ParseError,
            text: "internal error while analysing; the text was not analysed".into(),
        }],
        ..Analysis::default()
    })
}
