//! Differential test against an independent bash parser.
//!
//! The whole corpus is parsed with tree-sitter-bash as well. Every simple command
//! tree-sitter finds must also be found by portcullis, unless portcullis marked
//! the analysis opaque. tree-sitter is the weaker parser (it never descends into
//! `sh -c '…'`, `eval`, wrappers …), so the comparison is one way: what
//! tree-sitter sees, portcullis must see too.
//!
//! * A static command name (after bash-like quote removal: quotes, backslashes,
//!   `$'…'`) must be the program or the basename of some portcullis command,
//!   unless `analysis.opaque` is non-empty.
//! * A dynamic command name (`$x`, `` `…` ``, `$(…)`, a glob, a brace expansion)
//!   requires `analysis.opaque` to be non-empty.
//! * When tree-sitter reports a syntax error (ERROR or MISSING node), portcullis
//!   must either parse the text (bash accepts things tree-sitter does not) or mark
//!   it opaque. Such disagreements are printed, not failed; so are command
//!   mismatches in texts tree-sitter could not parse, since its error recovery
//!   invents structure bash never sees.

// Test code: a failed unwrap, index or panic is a failed test.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

use crate::common;

use portcullis_shell::{Analysis, analyze};
use tree_sitter::{Node, Parser, Tree};

// ---------------------------------------------------------------------------
// tree-sitter side
// ---------------------------------------------------------------------------

/// Removes `\<newline>` line continuations the way bash's input reader does
/// (outside single quotes, `$'…'` and comments), since tree-sitter-bash does not
/// join them inside a word (`r\<newline>m` would be command `r` to it, `rm` to
/// bash). Only ever merges text, so it cannot invent a command bash would not see.
fn join_continuations(text: &str) -> String {
    #[derive(Clone, Copy, PartialEq)]
    enum State {
        Unquoted,
        Single,
        AnsiC,
        Double,
        Comment,
    }
    let mut state = State::Unquoted;
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match state {
            State::Unquoted | State::Double if c == '\\' => match chars.next() {
                Some('\n') => {}
                Some(n) => {
                    out.push(c);
                    out.push(n);
                }
                None => out.push(c),
            },
            State::Unquoted => {
                let word_start = out
                    .chars()
                    .last()
                    .is_none_or(|p| p.is_whitespace() || ";|&()<>".contains(p));
                match c {
                    '\'' if out.ends_with('$') => state = State::AnsiC,
                    '\'' => state = State::Single,
                    '"' => state = State::Double,
                    '#' if word_start => state = State::Comment,
                    _ => {}
                }
                out.push(c);
            }
            State::Double => {
                if c == '"' {
                    state = State::Unquoted;
                }
                out.push(c);
            }
            State::Single => {
                if c == '\'' {
                    state = State::Unquoted;
                }
                out.push(c);
            }
            State::AnsiC => {
                out.push(c);
                match c {
                    '\\' => out.extend(chars.next()),
                    '\'' => state = State::Unquoted,
                    _ => {}
                }
            }
            State::Comment => {
                if c == '\n' {
                    state = State::Unquoted;
                }
                out.push(c);
            }
        }
    }
    out
}

fn parse(text: &str) -> Tree {
    let mut parser = Parser::new();
    parser
        .set_language(&tree_sitter_bash::LANGUAGE.into())
        .expect("tree-sitter-bash language loads");
    parser
        .parse(text, None)
        .expect("tree-sitter returns a tree")
}

/// What tree-sitter found in one text.
#[derive(Debug, Default)]
struct TsFindings {
    /// The source text of every `command` node's `command_name`, in order.
    names: Vec<String>,
    /// True when the tree holds an ERROR or MISSING node.
    has_error: bool,
}

/// Walks the whole tree iteratively (deep inputs must not recurse) and collects
/// the name of every `command` node.
fn ts_commands(text: &str) -> TsFindings {
    let joined;
    let text = if text.contains("\\\n") {
        joined = join_continuations(text);
        joined.as_str()
    } else {
        text
    };
    let tree = parse(text);
    let root = tree.root_node();
    let mut found = TsFindings {
        has_error: root.has_error(),
        ..TsFindings::default()
    };
    let mut cursor = root.walk();
    loop {
        let node: Node = cursor.node();
        if node.is_error() || node.is_missing() {
            found.has_error = true;
        }
        if node.kind() == "command"
            && let Some(name) = node.child_by_field_name("name")
        {
            found.names.push(text[name.byte_range()].to_string());
        }
        if cursor.goto_first_child() {
            continue;
        }
        loop {
            if cursor.goto_next_sibling() {
                break;
            }
            if !cursor.goto_parent() {
                return found;
            }
        }
    }
}

// ---------------------------------------------------------------------------
// Quote removal of a command name, as bash would do it when the name is static
// ---------------------------------------------------------------------------

/// A command name after quote removal.
#[derive(Debug, PartialEq, Eq)]
enum Name {
    /// Known without running anything.
    Static(String),
    /// Depends on an expansion: parameter, command substitution, glob, braces.
    Dynamic,
    /// Static, but uses an escape this test does not decode (`$'\cX'`).
    Unsupported,
}

fn is_name_start(c: char) -> bool {
    c.is_ascii_alphabetic() || c == '_'
}

/// Whether `$` followed by `next` starts an expansion (in or out of double quotes).
fn dollar_expands(next: Option<char>) -> bool {
    match next {
        Some(c) => {
            is_name_start(c)
                || c.is_ascii_digit()
                || matches!(c, '{' | '(' | '[' | '@' | '*' | '#' | '?' | '-' | '$' | '!')
        }
        None => false,
    }
}

/// Normalises the source text of a command name like bash's quote removal.
fn normalise_name(raw: &str) -> Name {
    let chars: Vec<char> = raw.chars().collect();
    let mut out = String::new();
    let mut i = 0;
    // Unquoted characters that may make the word a glob or brace pattern; judged
    // once the whole word is read.
    let mut unquoted_open_bracket = false;
    let mut unquoted_close_bracket_after_open = false;
    let mut brace_depth = 0u32;
    let mut brace_expands = false;
    while i < chars.len() {
        let c = chars[i];
        match c {
            '\\' => {
                match chars.get(i + 1) {
                    Some('\n') => {}
                    Some(&n) => out.push(n),
                    None => out.push('\\'),
                }
                i += 2;
            }
            '\'' => {
                let Some(end) = chars[i + 1..].iter().position(|&x| x == '\'') else {
                    return Name::Unsupported;
                };
                out.extend(&chars[i + 1..i + 1 + end]);
                i += end + 2;
            }
            '"' => match double_quoted(&chars, i + 1, &mut out) {
                Ok(next) => i = next,
                Err(n) => return n,
            },
            '$' if chars.get(i + 1) == Some(&'\'') => match ansi_c(&chars, i + 2, &mut out) {
                Ok(next) => i = next,
                Err(n) => return n,
            },
            '$' if chars.get(i + 1) == Some(&'"') => match double_quoted(&chars, i + 2, &mut out) {
                Ok(next) => i = next,
                Err(n) => return n,
            },
            '$' if dollar_expands(chars.get(i + 1).copied()) => return Name::Dynamic,
            '`' => return Name::Dynamic,
            '*' | '?' => return Name::Dynamic,
            '[' => {
                unquoted_open_bracket = true;
                out.push(c);
                i += 1;
            }
            ']' => {
                if unquoted_open_bracket {
                    unquoted_close_bracket_after_open = true;
                }
                out.push(c);
                i += 1;
            }
            '{' => {
                brace_depth += 1;
                out.push(c);
                i += 1;
            }
            '}' => {
                brace_depth = brace_depth.saturating_sub(1);
                out.push(c);
                i += 1;
            }
            ',' if brace_depth > 0 => {
                brace_expands = true;
                out.push(c);
                i += 1;
            }
            '.' if brace_depth > 0 && chars.get(i + 1) == Some(&'.') => {
                brace_expands = true;
                out.push(c);
                i += 1;
            }
            // extglob patterns: `@(…)`, `+(…)`, `!(…)` (off by default, but be safe).
            '@' | '+' | '!' if chars.get(i + 1) == Some(&'(') => return Name::Dynamic,
            _ => {
                out.push(c);
                i += 1;
            }
        }
    }
    if unquoted_close_bracket_after_open || brace_expands {
        return Name::Dynamic;
    }
    Name::Static(out)
}

/// Reads a double-quoted part starting after the opening quote; returns the index
/// after the closing quote.
fn double_quoted(chars: &[char], mut i: usize, out: &mut String) -> Result<usize, Name> {
    while i < chars.len() {
        match chars[i] {
            '"' => return Ok(i + 1),
            '\\' => {
                match chars.get(i + 1) {
                    Some('\n') => {}
                    Some(&n @ ('$' | '`' | '"' | '\\')) => out.push(n),
                    Some(&n) => {
                        out.push('\\');
                        out.push(n);
                    }
                    None => out.push('\\'),
                }
                i += 2;
            }
            '$' if dollar_expands(chars.get(i + 1).copied()) => return Err(Name::Dynamic),
            '`' => return Err(Name::Dynamic),
            c => {
                out.push(c);
                i += 1;
            }
        }
    }
    Err(Name::Unsupported)
}

/// Decodes a `$'…'` string starting after the opening quote; returns the index
/// after the closing quote.
fn ansi_c(chars: &[char], mut i: usize, out: &mut String) -> Result<usize, Name> {
    let mut bytes: Vec<u8> = Vec::new();
    let push_char = |bytes: &mut Vec<u8>, c: char| {
        let mut buf = [0u8; 4];
        bytes.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
    };
    let digits = |from: usize, max: usize, radix: u32| -> (u32, usize) {
        let mut value = 0u32;
        let mut n = 0;
        while n < max {
            match chars.get(from + n).and_then(|c| c.to_digit(radix)) {
                Some(d) => {
                    value = value * radix + d;
                    n += 1;
                }
                None => break,
            }
        }
        (value, n)
    };
    while i < chars.len() {
        match chars[i] {
            '\'' => {
                out.push_str(&String::from_utf8_lossy(&bytes));
                return Ok(i + 1);
            }
            '\\' => {
                let Some(&e) = chars.get(i + 1) else {
                    return Err(Name::Unsupported);
                };
                i += 2;
                match e {
                    'a' => bytes.push(7),
                    'b' => bytes.push(8),
                    'e' | 'E' => bytes.push(0x1b),
                    'f' => bytes.push(0x0c),
                    'n' => bytes.push(b'\n'),
                    'r' => bytes.push(b'\r'),
                    't' => bytes.push(b'\t'),
                    'v' => bytes.push(0x0b),
                    '\\' | '\'' | '"' | '?' => push_char(&mut bytes, e),
                    'x' => {
                        let (v, n) = digits(i, 2, 16);
                        if n == 0 {
                            bytes.extend_from_slice(b"\\x");
                        } else {
                            bytes.push(v as u8);
                            i += n;
                        }
                    }
                    '0'..='7' => {
                        let (v, n) = digits(i - 1, 3, 8);
                        bytes.push((v & 0xff) as u8);
                        i += n - 1;
                    }
                    'u' | 'U' => {
                        let max = if e == 'u' { 4 } else { 8 };
                        let (v, n) = digits(i, max, 16);
                        match (n, char::from_u32(v)) {
                            (0, _) => {
                                bytes.push(b'\\');
                                push_char(&mut bytes, e);
                            }
                            (_, Some(c)) => {
                                push_char(&mut bytes, c);
                                i += n;
                            }
                            (_, None) => return Err(Name::Unsupported),
                        }
                    }
                    'c' => return Err(Name::Unsupported),
                    other => {
                        bytes.push(b'\\');
                        push_char(&mut bytes, other);
                    }
                }
            }
            c => {
                push_char(&mut bytes, c);
                i += 1;
            }
        }
    }
    Err(Name::Unsupported)
}

// ---------------------------------------------------------------------------
// The comparison
// ---------------------------------------------------------------------------

/// Bash reserved words. Unquoted in command position bash never runs them as a
/// program, but tree-sitter-bash reads some as command names (`time ls`,
/// `coproc foo`, the `}` of `coproc NAME { …; }`); they are not compared.
const RESERVED: &[&str] = &[
    "!", "case", "coproc", "do", "done", "elif", "else", "esac", "fi", "for", "function", "if",
    "in", "select", "then", "until", "while", "{", "}", "time", "[[", "]]",
];

fn portcullis_has(analysis: &Analysis, name: &str) -> bool {
    analysis
        .commands
        .iter()
        .any(|c| c.program == name || c.basename() == name)
}

/// The outcome of comparing one text.
#[derive(Debug, Default)]
struct Comparison {
    /// Command names tree-sitter found (static ones compared, dynamic ones checked).
    compared: usize,
    /// Static names portcullis did not report, with no opaque mark.
    missing: Vec<String>,
    /// Dynamic names tree-sitter found while portcullis reported nothing opaque.
    dynamic_unmarked: Vec<String>,
    /// Names with an escape this test does not decode.
    unsupported: usize,
    /// Unquoted reserved words tree-sitter took for command names.
    reserved: usize,
}

fn compare(ts: &TsFindings, analysis: &Analysis) -> Comparison {
    let mut cmp = Comparison::default();
    let opaque = !analysis.opaque.is_empty();
    for raw in &ts.names {
        if RESERVED.contains(&raw.as_str()) {
            cmp.reserved += 1;
            continue;
        }
        match normalise_name(raw) {
            Name::Static(name) => {
                cmp.compared += 1;
                if !opaque && !portcullis_has(analysis, &name) {
                    cmp.missing.push(format!("{name:?} (written {raw:?})"));
                }
            }
            Name::Dynamic => {
                cmp.compared += 1;
                if !opaque {
                    cmp.dynamic_unmarked.push(raw.clone());
                }
            }
            Name::Unsupported => cmp.unsupported += 1,
        }
    }
    cmp
}

fn describe(origin: &str, text: &str, analysis: &Analysis, what: &str) -> String {
    let programs: Vec<&str> = analysis.programs().collect();
    let opaque: Vec<String> = analysis
        .opaque
        .iter()
        .map(|o| format!("{}: {:?}", o.reason.as_str(), o.text))
        .collect();
    format!(
        "[{origin}] {text:?}\n    {what}\n    portcullis programs: {programs:?}\n    portcullis opaque: {opaque:?}"
    )
}

#[test]
fn tree_sitter_commands_are_found_by_portcullis() {
    let corpus = common::extended_corpus();
    assert!(
        corpus.len() >= 100,
        "corpus unexpectedly small: {}",
        corpus.len()
    );

    let mut failures = Vec::new();
    let mut ts_error_disagreements = Vec::new();
    let mut ts_error_mismatches = Vec::new();
    let mut ts_error_texts = 0usize;
    let mut compared = 0usize;
    let mut unsupported = 0usize;
    let mut reserved = 0usize;

    for case in &corpus {
        let ts = ts_commands(&case.command);
        let analysis = analyze(&case.command);
        let opaque = !analysis.opaque.is_empty();
        let cmp = compare(&ts, &analysis);
        unsupported += cmp.unsupported;
        reserved += cmp.reserved;

        let mut problems = Vec::new();
        if !cmp.missing.is_empty() {
            problems.push(format!("missing names: {}", cmp.missing.join(", ")));
        }
        if !cmp.dynamic_unmarked.is_empty() {
            problems.push(format!(
                "dynamic command names without an opaque mark: {:?}",
                cmp.dynamic_unmarked
            ));
        }

        if ts.has_error {
            ts_error_texts += 1;
            if !opaque {
                ts_error_disagreements.push(describe(
                    &case.origin,
                    &case.command,
                    &analysis,
                    "tree-sitter reports a syntax error; portcullis parsed it without opaque parts",
                ));
            }
            if !problems.is_empty() {
                ts_error_mismatches.push(describe(
                    &case.origin,
                    &case.command,
                    &analysis,
                    &problems.join("; "),
                ));
            }
            continue;
        }
        compared += cmp.compared;
        if !problems.is_empty() {
            failures.push(describe(
                &case.origin,
                &case.command,
                &analysis,
                &problems.join("; "),
            ));
        }
    }

    eprintln!(
        "differential: {} texts, {compared} tree-sitter commands compared, \
         {ts_error_texts} texts tree-sitter could not parse, {unsupported} names with undecoded escapes, \
         {reserved} reserved words taken for command names skipped",
        corpus.len()
    );
    if !ts_error_disagreements.is_empty() {
        eprintln!(
            "\n{} texts where tree-sitter reports a syntax error but portcullis parsed them \
             (informational; bash accepts more than tree-sitter):",
            ts_error_disagreements.len()
        );
        for d in &ts_error_disagreements {
            eprintln!("  {d}");
        }
    }
    if !ts_error_mismatches.is_empty() {
        eprintln!(
            "\n{} command mismatches in texts tree-sitter could not parse (informational):",
            ts_error_mismatches.len()
        );
        for d in &ts_error_mismatches {
            eprintln!("  {d}");
        }
    }
    assert!(
        compared >= 100,
        "only {compared} commands compared: the walker or the corpus is broken"
    );
    if !failures.is_empty() {
        panic!(
            "{} corpus texts where tree-sitter finds a command portcullis does not report \
             (and portcullis marked nothing opaque):\n{}",
            failures.len(),
            failures.join("\n")
        );
    }
}

// ---------------------------------------------------------------------------
// The test must not pass vacuously: the walker and the normaliser work.
// ---------------------------------------------------------------------------

fn static_names(text: &str) -> Vec<String> {
    ts_commands(text)
        .names
        .iter()
        .map(|raw| match normalise_name(raw) {
            Name::Static(s) => s,
            other => panic!("{raw:?} in {text:?} is {other:?}"),
        })
        .collect()
}

#[test]
fn walker_finds_commands() {
    assert_eq!(static_names("ls; (rm x)"), ["ls", "rm"]);
    assert_eq!(static_names("echo $(id)"), ["echo", "id"]);
    assert_eq!(
        static_names("echo `whoami` | tee <(cat) >/dev/null"),
        ["echo", "whoami", "tee", "cat"]
    );
    assert_eq!(
        static_names("if true; then f() { curl x; }; fi && for i in 1; do wget y; done"),
        ["true", "curl", "wget"]
    );
    assert_eq!(static_names("FOO=1 r\"\"m -rf /"), ["rm"]);
    assert!(!ts_commands("ls; (rm x)").has_error);
    // tree-sitter reads `time` as a command; the comparison skips it.
    assert_eq!(
        compare(&ts_commands("time ls"), &Analysis::default()).reserved,
        1
    );
    let missed = compare(&ts_commands("ls; \"time\" x"), &Analysis::default());
    assert_eq!(missed.compared, 2);
    assert_eq!(missed.missing.len(), 2);
    assert!(ts_commands("echo (").has_error);
}

#[test]
fn continuations_are_joined_like_bash() {
    assert_eq!(join_continuations("r\\\nm -rf x"), "rm -rf x");
    assert_eq!(join_continuations("$\\\n'r\\x6d'"), "$'r\\x6d'");
    assert_eq!(join_continuations("echo 'a\\\nb'"), "echo 'a\\\nb'");
    assert_eq!(join_continuations("echo \"a\\\nb\""), "echo \"ab\"");
    assert_eq!(
        join_continuations("echo a # b \\\nrm c"),
        "echo a # b \\\nrm c"
    );
    assert_eq!(join_continuations("echo a#b \\\nc"), "echo a#b c");
    assert_eq!(static_names("r\\\nm -rf x"), ["rm"]);
}

#[test]
fn walker_survives_deep_nesting() {
    let text = format!("{}id{}", "$(".repeat(2000), ")".repeat(2000));
    let found = ts_commands(&text);
    assert!(found.names.iter().any(|n| n == "id") || found.has_error);
}

#[test]
fn names_are_normalised_like_bash() {
    let s = |x: &str| Name::Static(x.to_string());
    assert_eq!(normalise_name("rm"), s("rm"));
    assert_eq!(normalise_name("r\"\"m"), s("rm"));
    assert_eq!(normalise_name("r''m"), s("rm"));
    assert_eq!(normalise_name("\\rm"), s("rm"));
    assert_eq!(normalise_name("r\\\nm"), s("rm"));
    assert_eq!(normalise_name("\"r\\m\""), s("r\\m"));
    assert_eq!(normalise_name("\"\\$x\""), s("$x"));
    assert_eq!(normalise_name("'$x'"), s("$x"));
    assert_eq!(normalise_name("$'\\x72\\x6d'"), s("rm"));
    assert_eq!(normalise_name("$'\\162m'"), s("rm"));
    assert_eq!(normalise_name("$'a\\tb\\n\\\\'"), s("a\tb\n\\"));
    assert_eq!(normalise_name("$'\\u0072m'"), s("rm"));
    assert_eq!(normalise_name("$\"rm\""), s("rm"));
    assert_eq!(normalise_name("/bin/rm"), s("/bin/rm"));
    assert_eq!(normalise_name("["), s("["));
    assert_eq!(normalise_name("a$"), s("a$"));
    assert_eq!(normalise_name("'*'"), s("*"));
    assert_eq!(normalise_name("\\*"), s("*"));
    assert_eq!(normalise_name("{}"), s("{}"));
    assert_eq!(normalise_name("$'\\cA'"), Name::Unsupported);
    for dynamic in [
        "$cmd",
        "${cmd}",
        "\"$cmd\"",
        "$(echo rm)",
        "`echo rm`",
        "r*",
        "r?",
        "[r]m",
        "{rm,ls}",
        "x{1..3}",
        "$1",
        "$@",
        "$((1))",
        "\"a${b}\"",
    ] {
        assert_eq!(normalise_name(dynamic), Name::Dynamic, "{dynamic:?}");
    }
}
