//! The analysis' time grows linearly with its input: quadrupling a text
//! (within the size limit) may not multiply the time by much more than four.
//! A super-linear path is how a 216 KB command once took 72 s — past Gemini's
//! 60 s hook timeout, which then runs the call.
//!
//! Each shape stays within the structural limits, so the whole analysis runs
//! (an early `work-limit` or `depth-limit` exit would prove nothing). Times are
//! the fastest of several runs, and the bound is loose (12× for 4× the input:
//! linear is 4×, quadratic 16×), so a busy machine does not fail it.

// Test code: a failed unwrap, index or panic is a failed test.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

use std::time::{Duration, Instant};

use portcullis_shell::analyze;

/// `n` repetitions of a group, joined into one text.
fn repeat(group: &str, sep: &str, n: usize) -> String {
    vec![group; n].join(sep)
}

fn nested(open: &str, core: &str, close: &str, depth: usize) -> String {
    format!("{}{core}{}", open.repeat(depth), close.repeat(depth))
}

/// A named shape: a function from a repetition count to a text.
type Shape = (&'static str, Box<dyn Fn(usize) -> String>);

/// Shapes, each a function from a repetition count to a text.
fn shapes() -> Vec<Shape> {
    vec![
        (
            "long words",
            Box::new(|n| format!("echo {}", repeat("word", " ", n))),
        ),
        (
            "$[ nested 20 deep, in groups",
            Box::new(|n| repeat(&format!("echo {}", nested("$[", "1", "]", 20)), "; ", n / 8)),
        ),
        (
            "$( nested 20 deep, in groups",
            Box::new(|n| repeat(&nested("echo $(", "id", ")", 20), "; ", n / 16)),
        ),
        (
            "${x:- nested 20 deep, in groups",
            Box::new(|n| {
                repeat(
                    &format!("echo {}", nested("${x:-", "a", "}", 20)),
                    "; ",
                    n / 8,
                )
            }),
        ),
        (
            "[[ tests ]] with subscripts, in groups",
            Box::new(|n| repeat("[[ -n ${a[1]} ]]", "\n", n / 4)),
        ),
        (
            "eval of eval, in groups",
            Box::new(|n| repeat("eval \"eval 'eval echo hi'\"", "; ", n / 8)),
        ),
        (
            "bash -c of bash -c, in groups",
            Box::new(|n| repeat("bash -c \"bash -c 'sh -c id'\"", "; ", n / 8)),
        ),
        (
            "one long heredoc to a shell",
            Box::new(|n| format!("bash <<'EOF'\n{}\nEOF", repeat("echo hi", "\n", n / 2))),
        ),
        (
            "$[ nested n deep (past the depth limit: the scan's time)",
            Box::new(|n| format!("echo {}", nested("$[", "1", "]", n * 2))),
        ),
        (
            "[[ ! ! … ]] n deep (past the operator limit: the scan's time)",
            Box::new(|n| format!("[[ {}a ]]", "! ".repeat(n * 4))),
        ),
        (
            "( nested 6 deep around a `;`, in groups (each a failed (( attempt)",
            Box::new(|n| repeat(&nested("(", "x;", ")", 6), ";", n / 2)),
        ),
        (
            "( nested 16 deep around a `;`, in groups (past the parenthesis limit)",
            Box::new(|n| repeat(&nested("(", "x;", ")", 16), ";", n / 4)),
        ),
        (
            "( opened n times, never closed (past the parenthesis limit)",
            Box::new(|n| format!("{}x", "( ".repeat(n * 2))),
        ),
        (
            "arithmetic",
            Box::new(|n| format!("echo $(( {} ))", repeat("x+1", " + ", n))),
        ),
    ]
}

fn fastest(text: &str) -> Duration {
    (0..5)
        .map(|_| {
            let t = Instant::now();
            std::hint::black_box(analyze(std::hint::black_box(text)));
            t.elapsed()
        })
        .min()
        .unwrap_or_default()
}

#[test]
fn analysis_time_grows_linearly_with_the_input() {
    let mut failures = Vec::new();
    for (name, make) in shapes() {
        // Sizes chosen so that 4n stays under the 256 KiB limit.
        let small = make(2_500);
        let large = make(10_000);
        assert!(
            large.len() < 256 * 1024,
            "{name}: {} bytes is past the size limit",
            large.len()
        );
        let ratio_in = large.len() as f64 / small.len() as f64;
        let (t_small, t_large) = (fastest(&small), fastest(&large));
        let ratio = t_large.as_secs_f64() / t_small.as_secs_f64().max(1e-6);
        eprintln!(
            "{name}: {} → {} bytes ({ratio_in:.1}×): {t_small:?} → {t_large:?} ({ratio:.1}×)",
            small.len(),
            large.len()
        );
        // Below a millisecond the ratio is noise; past it, linear with room.
        if t_large > Duration::from_millis(5) && ratio > 3.0 * ratio_in {
            failures.push(format!(
                "{name}: {ratio:.1}× the time for {ratio_in:.1}× the input"
            ));
        }
        // Whatever the shape, a text within the size limit takes well under a second (debug build).
        if t_large > Duration::from_secs(5) {
            failures.push(format!("{name}: {t_large:?} for {} bytes", large.len()));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
