//! Word normalisation: quote removal, escapes, `$'…'` decoding, and the code a
//! word carries (`$( )`, backticks, arithmetic) for the walker to analyse.
//!
//! A word is *static* when its value is fully known before run time; then
//! [`Word::value`] is exactly what bash would pass (tilde kept as `~` for the
//! paths layer to expand). Otherwise it is *dynamic* and `value` is the source text.

use brush_parser::ParserOptions;
use brush_parser::word::{self as bw, Parameter, ParameterExpr, ParameterTransformOp, WordPiece};

use crate::model::OpaqueReason;

/// A normalised word.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Word {
    pub value: String,
    pub dynamic: bool,
    /// Code the word runs or evaluates when expanded.
    pub nested: Vec<Nested>,
}

/// Code inside a word.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Nested {
    /// `$( … )` or `` ` … ` `` (text already unescaped for backticks).
    Command { text: String, backticks: bool },
    /// An arithmetic context: `$(( … ))`, an array subscript, a substring offset.
    Arith(String),
    /// Something the walker must report as opaque.
    Opaque(OpaqueReason, String),
    /// A variable whose value the expansion produces (`$NAME`, `${NAME:-x}`),
    /// or `PREFIX*` for the names `${!PREFIX*}` lists.
    EnvRead(String),
}

/// Parser options for words: extglob on (bash's default for interactive use and
/// the superset for scripts), no POSIX mode.
pub(crate) fn parser_options() -> ParserOptions {
    ParserOptions::default()
}

/// Normalises one word given its raw source text.
pub(crate) fn normalize(raw: &str, opts: &ParserOptions) -> Word {
    if raw.is_empty() {
        return Word {
            value: String::new(),
            dynamic: false,
            nested: Vec::new(),
        };
    }
    // Fast path: plain words (the vast majority) need no parser.
    if raw.bytes().all(is_plain_byte) {
        return Word {
            value: raw.to_string(),
            dynamic: false,
            nested: Vec::new(),
        };
    }
    if let Some(why) = tangled(raw) {
        return Word {
            value: raw.to_string(),
            dynamic: true,
            nested: vec![Nested::Opaque(
                OpaqueReason::ParseError,
                format!("{why}: {raw}"),
            )],
        };
    }
    let pieces = match bw::parse(raw, opts) {
        Ok(p) => p,
        Err(_) => {
            return Word {
                value: raw.to_string(),
                dynamic: true,
                nested: vec![Nested::Opaque(OpaqueReason::ParseError, raw.to_string())],
            };
        }
    };
    let mut b = Builder::default();
    b.pieces(&pieces, false, opts);
    let dynamic = b.dynamic || b.brace_expansion();
    Word {
        value: if dynamic { raw.to_string() } else { b.value },
        dynamic,
        nested: b.nested,
    }
}

/// The output of a substitution that is exactly `cat` fed by a quoted heredoc
/// (`cat <<'EOF' … EOF`): the body, less trailing newlines (as `$( )` strips
/// them). Anything else — arguments, other redirects, expansions — is unknown.
fn static_heredoc_output(text: &str, opts: &ParserOptions) -> Option<String> {
    use brush_parser::ast;
    if !text.trim_start().starts_with("cat") || !text.contains("<<") {
        return None;
    }
    let program = brush_parser::Parser::new(std::io::Cursor::new(text.as_bytes()), opts)
        .parse_program()
        .ok()?;
    let [list] = program.complete_commands.as_slice() else {
        return None;
    };
    let [ast::CompoundListItem(and_or, _)] = list.0.as_slice() else {
        return None;
    };
    if !and_or.additional.is_empty() || and_or.first.seq.len() != 1 || and_or.first.bang {
        return None;
    }
    let Some(ast::Command::Simple(simple)) = and_or.first.seq.first() else {
        return None;
    };
    if simple.prefix.is_some()
        || simple.word_or_name.as_ref().map(|w| w.value.as_str()) != Some("cat")
    {
        return None;
    }
    let items = &simple.suffix.as_ref()?.0;
    let [ast::CommandPrefixOrSuffixItem::IoRedirect(ast::IoRedirect::HereDocument(fd, doc))] =
        items.as_slice()
    else {
        return None;
    };
    if fd.is_some_and(|f| f != 0) || doc.requires_expansion || doc.remove_tabs {
        return None;
    }
    Some(doc.doc.value.trim_end_matches('\n').to_string())
}

/// Expands the body of a heredoc with an unquoted delimiter the way bash does
/// before the reading command sees it: escapes `\$`, `` \` ``, `\\` and
/// `\<newline>` are removed; substitutions make it dynamic and are returned
/// as nested code. An unparsable body is dynamic with an opaque part.
pub(crate) fn expand_heredoc(body: &str, opts: &ParserOptions) -> Word {
    if let Some(why) = tangled(body) {
        return Word {
            value: body.to_string(),
            dynamic: true,
            nested: vec![Nested::Opaque(
                OpaqueReason::ParseError,
                format!("heredoc body: {why}: {body}"),
            )],
        };
    }
    match bw::parse_heredoc(body, opts) {
        Ok(pieces) => {
            let mut b = Builder::default();
            b.pieces(&pieces, true, opts);
            Word {
                value: if b.dynamic { body.to_string() } else { b.value },
                dynamic: b.dynamic,
                nested: b.nested,
            }
        }
        Err(_) => Word {
            value: body.to_string(),
            dynamic: true,
            nested: vec![Nested::Opaque(
                OpaqueReason::ParseError,
                format!("heredoc body: {body}"),
            )],
        },
    }
}

/// Most expansions (`${`, `$(`, `$[`) and brackets inside them left open at the end of a word or a
/// heredoc body before the word parser is not called. brush-parser's word
/// grammar backtracks exponentially over unclosed expansions (a 130-byte
/// heredoc body with five unclosed `${x['_' …` took a minute; found by the
/// fuzzer); closed ones parse in linear time, and bash itself rejects a word
/// with an unclosed expansion.
const MAX_UNCLOSED_EXPANSIONS: usize = 2;

/// Why a text must not reach the word parser, if it must not: too many
/// expansions left open. Counted without following quotes: a quoted `${`
/// counts too, which only makes more texts opaque.
/// More expansions with quotes inside than this in one word or heredoc body
/// are not handed to the parser.
const MAX_QUOTED_EXPANSIONS: usize = 3;

fn tangled(text: &str) -> Option<&'static str> {
    let b = text.as_bytes();
    // Open expansions: the byte that closes each, and the closers of the
    // brackets opened inside it, so that `${a[1]}` closes with its `}`,
    // `$(f(x))`-like nesting stays balanced, and a closer of another kind
    // (`${a[)}`: the `[` is still open) closes nothing — as in the grammar.
    let mut open: Vec<(u8, Vec<u8>)> = Vec::new();
    // Expansions with a quote inside (`${x['a' | 'b']}`): brush-parser's
    // grammar backtracks over each of them too (a fuzz-found 190-byte
    // heredoc body with four took 45 s).
    let mut quoted: Vec<bool> = Vec::new();
    let mut with_quotes = 0usize;
    let closer = |c: u8| match c {
        b'{' => b'}',
        b'(' => b')',
        _ => b']',
    };
    let mut i = 0;
    while let Some(&c) = b.get(i) {
        match c {
            b'$' if matches!(b.get(i + 1), Some(b'{' | b'(' | b'[')) => {
                open.push((closer(b.get(i + 1).copied().unwrap_or(b'[')), Vec::new()));
                quoted.push(false);
                i += 2;
                continue;
            }
            // A quote, or a backtick (which quotes up to its match), marks
            // every expansion it is inside: an enclosing one backtracks over
            // the inner one's quotes too (a fuzz-found heredoc body with four
            // such expansions, two of them nested, took 14 s).
            b'\'' | b'"' | b'`' => {
                for q in quoted.iter_mut() {
                    *q = true;
                }
            }
            b'{' | b'(' | b'[' => {
                if let Some((_, inner)) = open.last_mut() {
                    inner.push(closer(c));
                }
            }
            b'}' | b')' | b']' => {
                if let Some((own, inner)) = open.last_mut() {
                    if inner.last() == Some(&c) {
                        inner.pop();
                    } else if inner.is_empty() && *own == c {
                        open.pop();
                        with_quotes += usize::from(quoted.pop().unwrap_or(false));
                    }
                }
            }
            _ => {}
        }
        i += 1;
    }
    with_quotes += quoted.iter().filter(|q| **q).count();
    if with_quotes > MAX_QUOTED_EXPANSIONS {
        return Some("expansions with quotes inside");
    }
    // An open expansion counts with the brackets left open inside it
    // (`$(((((…` backtracks as badly as `${x[${x[…`).
    let unclosed: usize = open.iter().map(|(_, inner)| 1 + inner.len()).sum();
    (unclosed > MAX_UNCLOSED_EXPANSIONS).then_some("expansions left open")
}

/// Unquoted text that bash would expand as a pattern: `*`, `?`, a bracket
/// expression with its closing `]`, or an extglob group (`@(…)`, `!(…)` …).
fn is_glob(t: &str) -> bool {
    if t.contains(['*', '?']) {
        return true;
    }
    if let Some(open) = t.find('[')
        && t[open + 1..].contains(']')
    {
        return true;
    }
    ["+(", "@(", "!("].iter().any(|p| t.contains(p))
}

/// Bytes that never need quote removal or expansion.
fn is_plain_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"-_./=:@%+,^".contains(&b)
}

#[derive(Default)]
struct Builder {
    value: String,
    dynamic: bool,
    nested: Vec<Nested>,
    unquoted_open_brace: bool,
    unquoted_close_brace: bool,
    unquoted_brace_separator: bool,
    unquoted_open_bracket: bool,
}

impl Builder {
    fn brace_expansion(&self) -> bool {
        self.unquoted_open_brace && self.unquoted_close_brace && self.unquoted_brace_separator
    }

    fn pieces(&mut self, pieces: &[bw::WordPieceWithSource], quoted: bool, opts: &ParserOptions) {
        for p in pieces {
            self.piece(&p.piece, quoted, opts);
        }
    }

    fn piece(&mut self, piece: &WordPiece, quoted: bool, opts: &ParserOptions) {
        match piece {
            WordPiece::Text(t) => {
                if !quoted {
                    // Unquoted glob characters make the word expand to file names;
                    // `(` here can only be extglob syntax.
                    // A bracket expression may open in one piece and close in a
                    // later one (`['r']m`).
                    if is_glob(t) || (self.unquoted_open_bracket && t.contains(']')) {
                        self.dynamic = true;
                    }
                    self.unquoted_open_bracket |= t.contains('[');
                    self.unquoted_open_brace |= t.contains('{');
                    self.unquoted_close_brace |= t.contains('}');
                    self.unquoted_brace_separator |= t.contains(',') || t.contains("..");
                    self.value.push_str(t);
                } else {
                    // Inside double quotes a backslash-newline is removed.
                    self.value.push_str(&t.replace("\\\n", ""));
                }
            }
            WordPiece::SingleQuotedText(t) => self.value.push_str(t),
            WordPiece::AnsiCQuotedText(t) => self.value.push_str(&decode_ansi_c(t)),
            WordPiece::EscapeSequence(e) => {
                let escaped = e.strip_prefix('\\').unwrap_or(e);
                if escaped != "\n" {
                    self.value.push_str(escaped);
                }
            }
            WordPiece::DoubleQuotedSequence(inner)
            | WordPiece::GettextDoubleQuotedSequence(inner) => self.pieces(inner, true, opts),
            WordPiece::TildeExpansion(t) => {
                self.value.push('~');
                match t {
                    bw::TildeExpr::Home => {}
                    bw::TildeExpr::UserHome(user) => self.value.push_str(user),
                    bw::TildeExpr::WorkingDir => self.value.push('+'),
                    bw::TildeExpr::OldWorkingDir => self.value.push('-'),
                    // `~+N` / `~-N` read the directory stack.
                    _ => self.dynamic = true,
                }
            }
            WordPiece::ParameterExpansion(expr) => {
                self.dynamic = true;
                self.parameter_expr(expr, quoted, opts);
            }
            WordPiece::CommandSubstitution(text) => {
                // `"$(cat <<'EOF' … EOF)"` (how agents write commit messages) has a
                // value known before run time: the heredoc's text. Inside double
                // quotes it stays one word, so the word remains static. `cat`
                // still runs and is still reported.
                match static_heredoc_output(text, opts).filter(|_| quoted) {
                    Some(value) => self.value.push_str(&value),
                    None => self.dynamic = true,
                }
                self.nested.push(Nested::Command {
                    text: text.clone(),
                    backticks: false,
                });
            }
            WordPiece::BackquotedCommandSubstitution(text) => {
                self.dynamic = true;
                self.nested.push(Nested::Command {
                    text: unescape_backticks(text),
                    backticks: true,
                });
            }
            WordPiece::ArithmeticExpression(expr) => {
                self.dynamic = true;
                self.nested.push(Nested::Arith(expr.value.clone()));
            }
        }
    }

    /// Collects the code inside `${ … }`: default values, patterns and
    /// replacements are words themselves; subscripts and offsets are arithmetic.
    ///
    /// Inside double quotes (or an unquoted heredoc body) single quotes in an
    /// operand are literal characters: `"${x:-'$(id)'}"` runs `id`. Such an
    /// operand is read the way quotes-literal text is (see [`quotes_literal_code`]).
    fn parameter_expr(&mut self, expr: &ParameterExpr, quoted: bool, opts: &ParserOptions) {
        use ParameterExpr as P;
        let (parameter, indirect) = match expr {
            P::Parameter {
                parameter,
                indirect,
            }
            | P::UseDefaultValues {
                parameter,
                indirect,
                ..
            }
            | P::AssignDefaultValues {
                parameter,
                indirect,
                ..
            }
            | P::IndicateErrorIfNullOrUnset {
                parameter,
                indirect,
                ..
            }
            | P::UseAlternativeValue {
                parameter,
                indirect,
                ..
            }
            | P::ParameterLength {
                parameter,
                indirect,
            }
            | P::RemoveSmallestSuffixPattern {
                parameter,
                indirect,
                ..
            }
            | P::RemoveLargestSuffixPattern {
                parameter,
                indirect,
                ..
            }
            | P::RemoveSmallestPrefixPattern {
                parameter,
                indirect,
                ..
            }
            | P::RemoveLargestPrefixPattern {
                parameter,
                indirect,
                ..
            }
            | P::Substring {
                parameter,
                indirect,
                ..
            }
            | P::Transform {
                parameter,
                indirect,
                ..
            }
            | P::UppercaseFirstChar {
                parameter,
                indirect,
                ..
            }
            | P::UppercasePattern {
                parameter,
                indirect,
                ..
            }
            | P::LowercaseFirstChar {
                parameter,
                indirect,
                ..
            }
            | P::LowercasePattern {
                parameter,
                indirect,
                ..
            }
            | P::ReplaceSubstring {
                parameter,
                indirect,
                ..
            } => (parameter, *indirect),
            P::VariableNames { prefix, .. } => {
                self.nested.push(Nested::EnvRead(format!("{prefix}*")));
                return;
            }
            P::MemberKeys { .. } => return,
        };
        // The value is read, unless only whether it is set (`${x:+y}`) or its
        // length (`${#x}`) comes out.
        let value_hidden = matches!(
            expr,
            P::UseAlternativeValue { .. } | P::ParameterLength { .. }
        );
        match parameter {
            Parameter::Named(name)
            | Parameter::NamedWithIndex { name, .. }
            | Parameter::NamedWithAllIndices { name, .. }
                if !value_hidden || indirect =>
            {
                self.nested.push(Nested::EnvRead(name.clone()));
            }
            _ => {}
        }
        if let Parameter::NamedWithIndex { index, .. } = parameter {
            self.nested.push(Nested::Arith(index.clone()));
        }
        if indirect {
            // `${!x}` dereferences a name held in a variable; a name like
            // `a[$(cmd)]` runs its subscript.
            self.nested.push(Nested::Opaque(
                OpaqueReason::ArithmeticEvaluation,
                format!("indirect expansion {parameter}"),
            ));
        }
        if let P::AssignDefaultValues { parameter, .. } = expr {
            // `${PATH:=…}` sets the variable for every later command (`set -a`
            // exports it): one that runs or loads code cannot be judged here.
            let name = match parameter {
                brush_parser::word::Parameter::Named(n)
                | brush_parser::word::Parameter::NamedWithIndex { name: n, .. }
                | brush_parser::word::Parameter::NamedWithAllIndices { name: n, .. } => n.as_str(),
                _ => "",
            };
            if let Some(risk) = crate::knowledge::env_var(name) {
                self.nested.push(Nested::Opaque(
                    OpaqueReason::DynamicCode,
                    format!("${{{name}:=…}} sets {name}, which {}", risk.reason),
                ));
            }
        }
        let mut words: Vec<&str> = Vec::new();
        match expr {
            P::UseDefaultValues {
                default_value: v, ..
            }
            | P::AssignDefaultValues {
                default_value: v, ..
            } => words.extend(v.as_deref()),
            P::IndicateErrorIfNullOrUnset {
                error_message: v, ..
            } => words.extend(v.as_deref()),
            P::UseAlternativeValue {
                alternative_value: v,
                ..
            } => words.extend(v.as_deref()),
            P::RemoveSmallestSuffixPattern { pattern: v, .. }
            | P::RemoveLargestSuffixPattern { pattern: v, .. }
            | P::RemoveSmallestPrefixPattern { pattern: v, .. }
            | P::RemoveLargestPrefixPattern { pattern: v, .. }
            | P::UppercaseFirstChar { pattern: v, .. }
            | P::UppercasePattern { pattern: v, .. }
            | P::LowercaseFirstChar { pattern: v, .. }
            | P::LowercasePattern { pattern: v, .. } => words.extend(v.as_deref()),
            P::ReplaceSubstring {
                pattern,
                replacement,
                ..
            } => {
                words.push(pattern);
                words.extend(replacement.as_deref());
            }
            P::Substring { offset, length, .. } => {
                self.nested.push(Nested::Arith(offset.value.clone()));
                if let Some(l) = length {
                    self.nested.push(Nested::Arith(l.value.clone()));
                }
            }
            P::Transform {
                op: ParameterTransformOp::PromptExpand,
                ..
            } => {
                // `${x@P}` expands the value like a prompt string, running any
                // command substitution it holds.
                self.nested.push(Nested::Opaque(
                    OpaqueReason::DynamicCode,
                    format!("prompt expansion of {parameter}"),
                ));
            }
            _ => {}
        }
        for w in words {
            let nested = if quoted {
                quotes_literal_code(w, opts)
            } else {
                normalize(w, opts).nested
            };
            self.nested.extend(nested);
        }
    }
}

/// The code text runs when bash expands it where quotes do not quote:
/// arithmetic (`$(( ))`, `(( ))`, array subscripts, substring offsets) and
/// the operand of a double-quoted `${x:-…}`. There `'$(id)'` is a quote
/// character, a substitution that runs, and another quote character; and a
/// `$'…'` may be decoded first (`extquote`) and its result expanded
/// (`"${x:-$'\x24(id)'}"` runs `id`). Read every way bash might read it:
/// as an unquoted heredoc body (quotes literal), with each `$'…'` replaced by
/// what it decodes to, and as an ordinary word — whatever any of these finds
/// is reported (at worst a command that does not run is reported too).
/// More quotes than this in an arithmetic text with expansions: opaque.
const MAX_ARITH_QUOTES: usize = 8;

pub(crate) fn quotes_literal_code(text: &str, opts: &ParserOptions) -> Vec<Nested> {
    let mut out: Vec<Nested> = Vec::new();
    let mut add = |nested: Vec<Nested>| {
        for n in nested {
            if !out.contains(&n) {
                out.push(n);
            }
        }
    };
    if text.bytes().all(is_plain_byte) {
        return out;
    }
    // Arithmetic text is rarely quoted; many quotes around expansions make
    // brush-parser backtrack for seconds (a fuzz-found 180-byte value took
    // 12 s): code nobody can read at a glance is opaque.
    let quotes = text.bytes().filter(|b| matches!(b, b'\'' | b'"')).count();
    let expansions =
        text.matches("$(").count() + text.matches("${").count() + text.matches('`').count();
    if quotes > MAX_ARITH_QUOTES && expansions > 0 {
        return vec![Nested::Opaque(
            OpaqueReason::ArithmeticEvaluation,
            format!("arithmetic text with {quotes} quotes around expansions: {text}"),
        )];
    }
    add(normalize(text, opts).nested);
    add(expand_heredoc(text, opts).nested);
    if let Some(decoded) = ansi_c_decoded(text) {
        add(expand_heredoc(&decoded, opts).nested);
    }
    out
}

/// `text` with every `$'…'` replaced by what it decodes to, when it has one.
fn ansi_c_decoded(text: &str) -> Option<String> {
    if !text.contains("$'") {
        return None;
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("$'") {
        out.push_str(&rest[..at]);
        let body = &rest[at + 2..];
        let bytes = body.as_bytes();
        let mut k = 0;
        while let Some(&c) = bytes.get(k)
            && c != b'\''
        {
            k += if c == b'\\' { 2 } else { 1 };
        }
        let end = k.min(body.len());
        out.push_str(&decode_ansi_c(&body[..end]));
        rest = body.get(end + 1..).unwrap_or("");
    }
    out.push_str(rest);
    Some(out)
}

/// Inside backticks, a backslash escapes only `$`, `` ` `` and `\`.
fn unescape_backticks(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\\'
            && let Some(&n) = chars.peek()
            && (n == '$' || n == '`' || n == '\\')
        {
            out.push(n);
            chars.next();
            continue;
        }
        out.push(c);
    }
    out
}

/// Decodes the body of `$'…'` like bash does.
pub(crate) fn decode_ansi_c(body: &str) -> String {
    let mut out = String::with_capacity(body.len());
    let chars: Vec<char> = body.chars().collect();
    let mut i = 0;
    while let Some(&c) = chars.get(i) {
        i += 1;
        let Some(&e) = chars.get(i).filter(|_| c == '\\') else {
            out.push(c);
            continue;
        };
        i += 1;
        match e {
            'a' => out.push('\x07'),
            'b' => out.push('\x08'),
            'e' | 'E' => out.push('\x1b'),
            'f' => out.push('\x0c'),
            'n' => out.push('\n'),
            'r' => out.push('\r'),
            't' => out.push('\t'),
            'v' => out.push('\x0b'),
            '\\' | '\'' | '"' | '?' => out.push(e),
            '0'..='7' => {
                let mut v = e.to_digit(8).unwrap_or(0);
                let mut n = 1;
                while n < 3
                    && let Some(d) = chars.get(i).and_then(|c| c.to_digit(8))
                {
                    v = v * 8 + d;
                    i += 1;
                    n += 1;
                }
                push_code(&mut out, v & 0xff);
            }
            'x' | 'u' | 'U' => {
                let max = match e {
                    'x' => 2,
                    'u' => 4,
                    _ => 8,
                };
                let mut v: u32 = 0;
                let mut n = 0;
                while n < max
                    && let Some(d) = chars.get(i).and_then(|c| c.to_digit(16))
                {
                    v = v.wrapping_mul(16) + d;
                    i += 1;
                    n += 1;
                }
                if n == 0 {
                    out.push('\\');
                    out.push(e);
                } else {
                    push_code(&mut out, v);
                }
            }
            'c' if i < chars.len() => {
                if let Some(&ctl) = chars.get(i) {
                    i += 1;
                    push_code(&mut out, (ctl as u32) & 0x1f);
                }
            }
            _ => {
                out.push('\\');
                out.push(e);
            }
        }
    }
    out
}

/// Pushes a decoded code point; bytes above ASCII that are not valid on their
/// own become U+FFFD so the value stays a string (the name can then match no
/// real program the table knows, and it stays visible).
fn push_code(out: &mut String, v: u32) {
    if v == 0 {
        // bash truncates the word at a NUL byte; keep a visible marker.
        out.push('\u{FFFD}');
    } else {
        out.push(char::from_u32(v).unwrap_or('\u{FFFD}'));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn n(raw: &str) -> Word {
        normalize(raw, &parser_options())
    }

    #[test]
    fn unclosed_expansions_never_reach_the_word_parser() {
        // The fuzzer's slow body, and the same shape as a word.
        let body = "${x['_' | 'a'..='z' ".repeat(6);
        assert!(tangled("a[$[t $(((((((((((((((((((x]").is_some());
        assert!(tangled(&body).is_some());
        let w = expand_heredoc(&body, &parser_options());
        assert!(w.dynamic && matches!(w.nested[..], [Nested::Opaque(..)]));
        let w = n(&format!("\"{body}\""));
        assert!(w.dynamic && matches!(w.nested[..], [Nested::Opaque(..)]));
        // Arithmetic text with many quotes around expansions is opaque
        // before any parsing (a fuzz-found value took 12 s).
        let value = "z[$(\"a ${P[$H:$8u)^}\"; e\"\"\"a ${P[$H:$8\"\":2}\"u+(\"\"\"\"\"b";
        assert!(matches!(
            quotes_literal_code(value, &parser_options())[..],
            [Nested::Opaque(OpaqueReason::ArithmeticEvaluation, _)]
        ));
        assert!(
            !quotes_literal_code("a['$(id)']", &parser_options())
                .iter()
                .any(|n| matches!(n, Nested::Opaque(..)))
        );
        // Closed ones with quotes inside, past three: the parser backtracks
        // over each (a fuzz-found heredoc body with four took 45 s).
        let quoted = "${x['_' | 'a'..='z' | 'A'..=':)}\n".repeat(4);
        assert_eq!(tangled(&quoted), Some("expansions with quotes inside"));
        // A quote or backtick inside a nested expansion counts for the
        // enclosing one too (a fuzz-found body took 14 s).
        let nested = "${x['_' | 'a/`..='z'}\n${x[0t ${x['_'c| 'a'..='z'}\n${x['a' | 'A'..=':)}";
        assert_eq!(tangled(nested), Some("expansions with quotes inside"));
        // A closer of another kind closes nothing: `${unam[)}` leaves both
        // the `${` and its `[` open (a fuzz-found body of such took 15 s).
        assert_eq!(
            tangled("${unam[)}EO/\n${unam[)}"),
            Some("expansions left open")
        );
        assert_eq!(tangled("${x:-]}"), None);
        // Closed expansions, however many and however nested, are parsed.
        for ok in [
            "${a[1]}${b[2]}${c[$((1+2))]}",
            "$(echo $(id) ${x:-$(pwd)})",
            "$[1+$[2]]",
            "${a:-'x'} ${b:-\"y\"} ${c['k']}",
        ] {
            assert_eq!(tangled(ok), None, "{ok}");
        }
    }

    #[test]
    fn quote_removal() {
        assert_eq!(n("r\"\"m").value, "rm");
        assert_eq!(n("'r'm").value, "rm");
        assert_eq!(n("\\rm").value, "rm");
        assert_eq!(n("a\\ b").value, "a b");
        assert_eq!(n("\"a b\"").value, "a b");
        assert!(!n("\"a b\"").dynamic);
    }

    #[test]
    fn ansi_c() {
        assert_eq!(n("$'\\x72\\x6d'").value, "rm");
        assert_eq!(n("$'\\162\\155'").value, "rm");
        assert_eq!(n("$'\\u0072m'").value, "rm");
        assert_eq!(n("$'a\\tb'").value, "a\tb");
        assert_eq!(n("$'\\cA'").value, "\u{1}");
    }

    #[test]
    fn expansions_are_dynamic_and_carry_code() {
        let w = n("\"a$(id)b\"");
        assert!(w.dynamic);
        assert_eq!(
            w.nested,
            [Nested::Command {
                text: "id".into(),
                backticks: false
            }]
        );
        let w = n("`echo \\`id\\``");
        assert_eq!(
            w.nested,
            [Nested::Command {
                text: "echo `id`".into(),
                backticks: true
            }]
        );
        let w = n("${x:-$(id)}");
        assert!(w.dynamic);
        assert_eq!(
            w.nested,
            [
                Nested::EnvRead("x".into()),
                Nested::Command {
                    text: "id".into(),
                    backticks: false
                }
            ]
        );
        // Only whether it is set, or its length, comes out: no read of x.
        assert_eq!(n("${x:+y}${#x}").nested, []);
        assert_eq!(n("${!AWS*}").nested, [Nested::EnvRead("AWS*".into())]);
        let w = n("$((1+2))");
        assert_eq!(w.nested, [Nested::Arith("1+2".into())]);
    }

    #[test]
    fn globs_and_braces_are_dynamic() {
        assert!(n("*.rs").dynamic);
        assert!(n("/???/rm").dynamic);
        assert!(n("{rm,-rf}").dynamic);
        assert!(n("{a..c}").dynamic);
        assert!(!n("'*.rs'").dynamic);
        assert!(!n("{}").dynamic);
        assert_eq!(n("'*.rs'").value, "*.rs");
    }

    #[test]
    fn a_quoted_cat_heredoc_substitution_is_static() {
        let w = n("\"$(cat <<'EOF'\nfeat: add x\n\nBody line\nEOF\n)\"");
        assert!(!w.dynamic);
        assert_eq!(w.value, "feat: add x\n\nBody line");
        assert_eq!(w.nested.len(), 1, "cat still runs");
        // Unquoted: word splitting makes it several words.
        assert!(n("$(cat <<'EOF'\nx\nEOF\n)").dynamic);
        // An expanding heredoc, arguments, or another command: unknown.
        assert!(n("\"$(cat <<EOF\n$x\nEOF\n)\"").dynamic);
        assert!(n("\"$(cat f <<'EOF'\nx\nEOF\n)\"").dynamic);
        assert!(n("\"$(cat <<'EOF'\nx\nEOF\nid)\"").dynamic);
    }

    #[test]
    fn tilde_is_kept() {
        let w = n("~/.ssh/id_rsa");
        assert!(!w.dynamic);
        assert_eq!(w.value, "~/.ssh/id_rsa");
        assert_eq!(n("~root/x").value, "~root/x");
    }
}
