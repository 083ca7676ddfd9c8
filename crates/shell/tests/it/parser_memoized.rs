//! The parser portcullis builds (vendor/brush-parser: 0.4.0 with its
//! backtracking rules memoized, and a tokenizer guard) parses the shapes on
//! which the published crate backtracked exponentially or looped, in a moment. The analysis refuses these
//! texts before parsing anyway (a second line); here the parser is called
//! directly, so a build against the unmemoized crate fails this test instead
//! of hanging: each parse has 20 s on a thread before the test gives up.

// Test code: a failed unwrap, index or panic is a failed test.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

use std::sync::mpsc;
use std::time::Duration;

use brush_parser::{Parser, ParserOptions};

fn finishes(what: &str, parse: impl FnOnce() + Send + 'static) {
    let (done, wait) = mpsc::channel();
    std::thread::spawn(move || {
        parse();
        let _ = done.send(());
    });
    assert!(
        wait.recv_timeout(Duration::from_secs(20)).is_ok(),
        "{what}: the parser backtracks without end (is vendor/brush-parser patched in?)"
    );
}

fn program(text: String) -> impl FnOnce() + Send + 'static {
    move || {
        let _ = Parser::new(
            std::io::Cursor::new(text.as_bytes()),
            &ParserOptions::default(),
        )
        .parse_program();
    }
}

#[test]
fn unclosed_and_failing_parentheses_parse_in_a_moment() {
    // Each took seconds to minutes (2^n) with the published crate.
    finishes("40 unclosed (", program("(".repeat(40)));
    finishes(
        "32 nested ( around a `;`, twice",
        program(format!("{}x;{}", "(".repeat(32), ")".repeat(32)).repeat(2)),
    );
    finishes(
        "the fuzz input",
        program("cd sc& ((((((((((s &\x1f cd -2 && l((((((((((((((((s &\x1f cd 2.".into()),
    );
}

#[test]
fn heredoc_bodies_with_tangled_expansions_parse_in_a_moment() {
    let opts = ParserOptions::default();
    // A fuzz-found body (24 s before), and five quoted expansions.
    let body = "${x['_' | 'a/`..='z' | 'A'..r=':)}\nEOFjca t<<EOF\n${x['_| 'a'..=.=\"z' | %.=\"z'A'..=':))}\nEOFcat <<EOF\n${x[0t <<EOF\n${x['_'c| 'a'..='z' | |$'A'..=':)}\n".repeat(3);
    let quoted = "${x['_' | 'a'..='z' | 'A'..=':)}\n".repeat(12);
    for (what, text) in [("fuzz body", body), ("quoted expansions", quoted)] {
        let opts = opts.clone();
        finishes(what, move || {
            let _ = brush_parser::word::parse_heredoc(&text, &opts);
            let _ = brush_parser::word::parse(&text, &opts);
        });
    }
}

#[test]
fn a_heredoc_tag_cut_short_inside_a_substitution_ends_the_tokenizer() {
    // The published crate queued tokens without end on these (past 4 GB in
    // 7 s); each is a parse error now.
    for text in ["$(<<  o ", "ec$(isu -c  unIm +<<-   unIm +<<- ho "] {
        let text = text.to_string();
        finishes(&format!("{text:?}"), move || {
            let parsed = Parser::new(
                std::io::Cursor::new(text.as_bytes()),
                &ParserOptions::default(),
            )
            .parse_program();
            assert!(parsed.is_err());
        });
    }
}
