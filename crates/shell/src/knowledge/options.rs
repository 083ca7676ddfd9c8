//! One option scanner for the program readers, reading an argument list the
//! way GNU `getopt_long` does: bundled short options (`-ne`), values attached
//! (`-n5`, `--lines=5`) or in the next word, optional values only attached
//! (`-i.bak`, `--in-place=.bak`), unambiguous prefixes of long options
//! (`--expr` for `--expression`), options after operands (permutation), and
//! `--` ending the options. Each reader declares its program's options once,
//! as a table ([`Opt`]), instead of walking the words by hand.
//!
//! What the scanner cannot know it says: a word known only at run time where
//! an option may stand could be any option (`sed s/a/b/ "$x" f` with
//! `x=-i`), and an option the table does not know could take a value. Readers
//! turn both into opaque parts.

use crate::word::Word;

/// Whether an option takes a value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Arity {
    /// No value.
    Flag,
    /// A value, attached or in the next word.
    Required,
    /// A value only when attached (`-i.bak`, `--in-place=.bak`).
    Optional,
}

/// One option of a program: its short letter, its long name, its arity, and
/// the name readers match on.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Opt {
    pub short: Option<char>,
    pub long: Option<&'static str>,
    pub arity: Arity,
    pub id: &'static str,
}

/// A short-and-long option.
pub(crate) const fn opt(short: char, long: &'static str, arity: Arity, id: &'static str) -> Opt {
    Opt {
        short: Some(short),
        long: Some(long),
        arity,
        id,
    }
}

/// A long-only option.
pub(crate) const fn long(long: &'static str, arity: Arity, id: &'static str) -> Opt {
    Opt {
        short: None,
        long: Some(long),
        arity,
        id,
    }
}

/// A short-only option.
pub(crate) const fn short(short: char, arity: Arity, id: &'static str) -> Opt {
    Opt {
        short: Some(short),
        long: None,
        arity,
        id,
    }
}

/// One option found: its id, its value (and whether that value is known only
/// at run time), and the index of the word it started in.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Found {
    pub id: &'static str,
    pub value: Option<String>,
    pub dynamic: bool,
    pub at: usize,
}

/// An argument list read with a table.
#[derive(Debug, Default)]
pub(crate) struct Scan<'w> {
    pub options: Vec<Found>,
    pub operands: Vec<&'w Word>,
    /// Words the table does not explain: options it does not know (or
    /// ambiguous prefixes), and words known only at run time that stand
    /// where an option may.
    pub unknown: Vec<String>,
}

impl Scan<'_> {
    /// Whether the option with this id was given.
    pub fn has(&self, id: &str) -> bool {
        self.options.iter().any(|o| o.id == id)
    }

    /// The values given to the option with this id, in order.
    pub fn values<'a>(&'a self, id: &'a str) -> impl Iterator<Item = &'a Found> + 'a {
        self.options.iter().filter(move |o| o.id == id)
    }
}

/// Reads `args` (the words after the program) with `table`, permuting as
/// GNU programs do.
pub(crate) fn scan<'w>(table: &[Opt], args: &'w [Word]) -> Scan<'w> {
    scan_with(table, args, true)
}

/// Reads `args` with `table`, options ending at the first operand (POSIX
/// order, and GNU programs whose option string starts with `+`, like gawk).
pub(crate) fn scan_in_order<'w>(table: &[Opt], args: &'w [Word]) -> Scan<'w> {
    scan_with(table, args, false)
}

fn scan_with<'w>(table: &[Opt], args: &'w [Word], permute: bool) -> Scan<'w> {
    let mut out = Scan::default();
    let mut i = 0;
    let mut only_operands = false;
    while let Some(w) = args.get(i) {
        let v = w.value.as_str();
        if only_operands || v == "-" || (!w.dynamic && !v.starts_with('-')) {
            out.operands.push(w);
            only_operands |= !permute;
            i += 1;
            continue;
        }
        if w.dynamic {
            // Its value decides whether it is an option: only a word that
            // visibly starts with something other than `-` is an operand.
            if !v.starts_with('-') && !v.is_empty() && !v.starts_with('$') && !v.starts_with('`') {
                out.operands.push(w);
            } else {
                out.unknown.push(v.to_string());
                out.operands.push(w);
            }
            i += 1;
            continue;
        }
        if v == "--" {
            only_operands = true;
            i += 1;
            continue;
        }
        if let Some(body) = v.strip_prefix("--") {
            let (name, attached) = match body.split_once('=') {
                Some((n, val)) => (n, Some(val)),
                None => (body, None),
            };
            let Some(o) = find_long(table, name) else {
                out.unknown.push(v.to_string());
                i += 1;
                continue;
            };
            let (value, dynamic, next) = match (o.arity, attached) {
                (Arity::Flag, Some(_)) => {
                    out.unknown.push(v.to_string());
                    i += 1;
                    continue;
                }
                (Arity::Flag, None) | (Arity::Optional, None) => (None, false, i + 1),
                (_, Some(val)) => (Some(val.to_string()), w.dynamic, i + 1),
                (Arity::Required, None) => match args.get(i + 1) {
                    Some(n) => (Some(n.value.clone()), n.dynamic, i + 2),
                    None => (None, false, i + 1),
                },
            };
            out.options.push(Found {
                id: o.id,
                value,
                dynamic,
                at: i,
            });
            i = next;
            continue;
        }
        // Short options, possibly bundled.
        // `v` starts with `-` (one byte): the letters are the chars after it.
        let letters: Vec<char> = v.chars().skip(1).collect();
        let mut k = 0;
        let mut next = i + 1;
        while let Some(&letter) = letters.get(k) {
            let Some(o) = table.iter().find(|o| o.short == Some(letter)) else {
                out.unknown.push(format!("-{letter}"));
                k += 1;
                continue;
            };
            let rest: String = letters.iter().skip(k + 1).collect();
            match o.arity {
                Arity::Flag => {
                    out.options.push(Found {
                        id: o.id,
                        value: None,
                        dynamic: false,
                        at: i,
                    });
                    k += 1;
                    continue;
                }
                Arity::Optional => out.options.push(Found {
                    id: o.id,
                    value: (!rest.is_empty()).then_some(rest),
                    dynamic: false,
                    at: i,
                }),
                Arity::Required if !rest.is_empty() => out.options.push(Found {
                    id: o.id,
                    value: Some(rest),
                    dynamic: false,
                    at: i,
                }),
                Arity::Required => {
                    let n = args.get(i + 1);
                    out.options.push(Found {
                        id: o.id,
                        value: n.map(|n| n.value.clone()),
                        dynamic: n.is_some_and(|n| n.dynamic),
                        at: i,
                    });
                    next = i + 2;
                }
            }
            break;
        }
        i = next;
    }
    out
}

/// The long option `name` names: itself, or the one option it is an
/// unambiguous prefix of.
fn find_long<'t>(table: &'t [Opt], name: &str) -> Option<&'t Opt> {
    if name.is_empty() {
        return None;
    }
    if let Some(exact) = table.iter().find(|o| o.long == Some(name)) {
        return Some(exact);
    }
    let mut candidates = table
        .iter()
        .filter(|o| o.long.is_some_and(|l| l.starts_with(name)));
    let first = candidates.next()?;
    // Several spellings of one option (same id) are not ambiguous.
    candidates.all(|o| o.id == first.id).then_some(first)
}

#[cfg(test)]
mod tests {
    use super::*;

    const T: &[Opt] = &[
        opt('e', "expression", Arity::Required, "expression"),
        opt('i', "in-place", Arity::Optional, "in-place"),
        opt('n', "quiet", Arity::Flag, "quiet"),
        long("silent", Arity::Flag, "quiet"),
        opt('l', "line-length", Arity::Required, "line-length"),
        long("sandbox", Arity::Flag, "sandbox"),
        long("separate", Arity::Flag, "separate"),
    ];

    fn words(text: &[&str]) -> Vec<Word> {
        text.iter()
            .map(|t| Word {
                value: t.to_string(),
                dynamic: t.starts_with('$'),
                nested: Vec::new(),
            })
            .collect()
    }

    fn ids(s: &Scan<'_>) -> Vec<(&'static str, Option<String>)> {
        s.options.iter().map(|o| (o.id, o.value.clone())).collect()
    }

    #[test]
    fn bundles_attached_values_and_the_next_word() {
        let w = words(&["-nl", "5", "-es/a/b/", "-i.bak", "f", "-e", "p"]);
        let s = scan(T, &w);
        assert_eq!(
            ids(&s),
            vec![
                ("quiet", None),
                ("line-length", Some("5".into())),
                ("expression", Some("s/a/b/".into())),
                ("in-place", Some(".bak".into())),
                ("expression", Some("p".into())),
            ]
        );
        assert_eq!(s.operands.len(), 1);
        assert!(s.unknown.is_empty());
    }

    #[test]
    fn long_prefixes_and_optional_values() {
        let w = words(&["--expr=p", "--in-place", "x", "--in-pl=.b", "--sil", "--s"]);
        let s = scan(T, &w);
        assert_eq!(
            ids(&s),
            vec![
                ("expression", Some("p".into())),
                ("in-place", None),
                ("in-place", Some(".b".into())),
                ("quiet", None),
            ]
        );
        // `--s` is ambiguous (silent, sandbox, separate): sed refuses it.
        assert_eq!(s.unknown, vec!["--s".to_string()]);
        assert_eq!(s.operands.len(), 1);
    }

    #[test]
    fn double_dash_unknown_and_run_time_words() {
        let w = words(&["-x", "$opt", "--", "-n"]);
        let s = scan(T, &w);
        assert_eq!(s.unknown, vec!["-x".to_string(), "$opt".to_string()]);
        assert_eq!(s.operands.len(), 2);
        assert!(s.options.is_empty());
    }
}
