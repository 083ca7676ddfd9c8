//! Arithmetic contexts.
//!
//! Bash evaluates variable values inside arithmetic (`$((x))`, `(( ))`, `let`,
//! array subscripts, `[[ a -eq b ]]`) as expressions themselves, and an array
//! subscript in such a value runs its command substitutions:
//! `x='a[$(id)]'; echo $((x))` runs `id`. An arithmetic context is therefore
//! only transparent when every name it reads is known to hold a plain value.

use std::collections::HashSet;

/// Names an arithmetic expression reads that are not known to be safe.
/// `$#`, `$?`, `$$` and `$!` are numbers bash controls; positional parameters
/// and every name outside `safe` are not.
pub(crate) fn unsafe_names(expr: &str, safe: &HashSet<String>) -> Vec<String> {
    // Command substitutions are analysed as commands; their words are not names.
    let expr = &without_substitutions(expr);
    let b = expr.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while let Some(&c) = b.get(i) {
        if c.is_ascii_digit() {
            // A number, possibly `0x1f` or `16#ff`: never a name.
            while b
                .get(i)
                .is_some_and(|&d| d.is_ascii_alphanumeric() || d == b'#' || d == b'_')
            {
                i += 1;
            }
        } else if c.is_ascii_alphabetic() || c == b'_' {
            let start = i;
            while b
                .get(i)
                .is_some_and(|&d| d.is_ascii_alphanumeric() || d == b'_')
            {
                i += 1;
            }
            // The span is ASCII, so always a slice of `expr`; were it not, the
            // whole expression is reported (fail closed).
            let name = expr.get(start..i).unwrap_or(expr);
            if !is_safe(name, safe) {
                out.push(name.to_string());
            }
        } else if c == b'$' {
            i += 1;
            match b.get(i) {
                Some(b'#' | b'?' | b'$' | b'!' | b'-') => i += 1,
                Some(d) if d.is_ascii_digit() || *d == b'@' || *d == b'*' => {
                    out.push(format!("${}", *d as char));
                    i += 1;
                }
                // `$name` and `${…}` are read by the name scan (or are substitutions,
                // which the word layer already reports).
                _ => {}
            }
        } else {
            i += 1;
        }
    }
    out
}

/// The expression with `$( … )` and `` ` … ` `` spans blanked out.
fn without_substitutions(expr: &str) -> String {
    let mut out = String::with_capacity(expr.len());
    let b = expr.as_bytes();
    let mut i = 0;
    while let Some(&c) = b.get(i) {
        if c == b'$' && b.get(i + 1) == Some(&b'(') && b.get(i + 2) != Some(&b'(') {
            let mut depth = 0;
            while let Some(&d) = b.get(i) {
                match d {
                    b'(' => depth += 1,
                    b')' => {
                        depth -= 1;
                        if depth == 0 {
                            break;
                        }
                    }
                    _ => {}
                }
                i += 1;
            }
            out.push(' ');
            i += 1;
        } else if c == b'`' {
            i += 1;
            while b.get(i).is_some_and(|&d| d != b'`') {
                i += 1;
            }
            out.push(' ');
            i += 1;
        } else {
            let ch = expr.get(i..).and_then(|t| t.chars().next()).unwrap_or(' ');
            out.push(ch);
            i += ch.len_utf8();
        }
    }
    out
}

fn is_safe(name: &str, safe: &HashSet<String>) -> bool {
    // Variables bash itself sets to numbers and that an assignment earlier in
    // the same text cannot have been given (those would be in `safe` anyway).
    const BASH_NUMERIC: &[&str] = &[
        "RANDOM",
        "SRANDOM",
        "LINENO",
        "SECONDS",
        "BASHPID",
        "EPOCHSECONDS",
    ];
    safe.contains(name) || BASH_NUMERIC.contains(&name)
}

/// Names given a plain number in an arithmetic expression (`i=0` in a `for ((…))`
/// initialiser): they hold plain values afterwards.
pub(crate) fn numeric_assignments(expr: &str) -> Vec<String> {
    let mut out = Vec::new();
    for part in expr.split(',') {
        if let Some((lhs, rhs)) = part.split_once('=') {
            let lhs = lhs.trim();
            let rhs = rhs.trim();
            let is_name = !lhs.is_empty()
                && lhs.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'_')
                && !lhs.starts_with(|c: char| c.is_ascii_digit());
            if is_name
                && !rhs.starts_with('=')
                && !rhs.is_empty()
                && rhs.bytes().all(|c| c.is_ascii_digit())
            {
                out.push(lhs.to_string());
            }
        }
    }
    out
}

/// A value that can be read in arithmetic without running code: no expansion
/// and no subscript syntax that could hold one later.
pub(crate) fn is_plain_value(value: &str) -> bool {
    !value.contains(['$', '`', '[', ']'])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn safe(names: &[&str]) -> HashSet<String> {
        names.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn numbers_are_not_names() {
        assert!(unsafe_names("1 + 0x1f * 16#ff", &safe(&[])).is_empty());
        assert!(unsafe_names("$# + $?", &safe(&[])).is_empty());
    }

    #[test]
    fn unknown_names_are_reported() {
        assert_eq!(unsafe_names("x + 1", &safe(&[])), ["x"]);
        assert_eq!(unsafe_names("$x + i", &safe(&["i"])), ["x"]);
        assert_eq!(unsafe_names("$1", &safe(&[])), ["$1"]);
        assert!(unsafe_names("i < 10", &safe(&["i"])).is_empty());
        assert!(unsafe_names("RANDOM % 6", &safe(&[])).is_empty());
    }

    #[test]
    fn substitutions_are_not_names() {
        assert_eq!(unsafe_names("z[$(uname -a)] + `id`", &safe(&[])), ["z"]);
    }

    #[test]
    fn initialisers() {
        assert_eq!(numeric_assignments("i=0, j = 10"), ["i", "j"]);
        assert!(numeric_assignments("i==0").is_empty());
        assert!(numeric_assignments("i=x").is_empty());
    }
}
