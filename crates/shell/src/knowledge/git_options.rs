//! Git's global options, split from the subcommand the way git itself reads
//! them (`handle_options` in git's `git.c`). One function for every reader of
//! a git command line — the analysis, the hazard rules, the read-only check —
//! so that none of them can disagree on which word is the subcommand
//! (`git --attr-source HEAD push --force` runs `push`, not `HEAD`).

/// How a global option takes its value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GitValue {
    /// No value (`--bare`, `-p`).
    None,
    /// The next word (`-C DIR`, `-c KEY=VALUE`).
    Next,
    /// The next word or after `=` (`--git-dir DIR`, `--git-dir=DIR`).
    NextOrEquals,
    /// Only after `=` (`--list-cmds=…`); `--exec-path` alone takes none.
    EqualsOnly,
}

/// Every global option git accepts before the subcommand.
pub const GIT_GLOBAL_OPTIONS: &[(&str, GitValue)] = &[
    ("-C", GitValue::Next),
    ("-c", GitValue::Next),
    ("--config-env", GitValue::NextOrEquals),
    ("--git-dir", GitValue::NextOrEquals),
    ("--work-tree", GitValue::NextOrEquals),
    ("--namespace", GitValue::NextOrEquals),
    ("--super-prefix", GitValue::NextOrEquals),
    ("--attr-source", GitValue::NextOrEquals),
    ("--shallow-file", GitValue::Next),
    ("--exec-path", GitValue::EqualsOnly),
    ("--list-cmds", GitValue::EqualsOnly),
    ("--html-path", GitValue::None),
    ("--man-path", GitValue::None),
    ("--info-path", GitValue::None),
    ("-p", GitValue::None),
    ("--paginate", GitValue::None),
    ("-P", GitValue::None),
    ("--no-pager", GitValue::None),
    ("--no-lazy-fetch", GitValue::None),
    ("--no-replace-objects", GitValue::None),
    ("--bare", GitValue::None),
    ("--literal-pathspecs", GitValue::None),
    ("--no-literal-pathspecs", GitValue::None),
    ("--glob-pathspecs", GitValue::None),
    ("--noglob-pathspecs", GitValue::None),
    ("--icase-pathspecs", GitValue::None),
    ("--no-optional-locks", GitValue::None),
    ("--no-advice", GitValue::None),
];

/// Options that end the global options and act as the subcommand.
const AS_SUBCOMMAND: &[&str] = &["--help", "-h", "--version", "-v"];

/// One global option as written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GitGlobal {
    /// The option's name (`--git-dir`, `-c`).
    pub name: String,
    /// Its value, if it takes one and it is there.
    pub value: Option<String>,
    /// The index of the option's word in the arguments.
    pub at: usize,
    /// The index of the word holding the value (the option's own for `--x=v`).
    pub value_at: Option<usize>,
}

/// A git command line (the arguments after `git`) split as git reads it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct GitSplit {
    pub globals: Vec<GitGlobal>,
    /// The index of the subcommand's word (`--help`/`--version` count as one);
    /// `None` when there is none, or when an option git does not know comes
    /// first (git refuses to run; readers must not guess past it).
    pub subcommand: Option<usize>,
    /// An option git does not know, at this index: git exits with an error.
    pub unknown: Option<usize>,
}

/// Splits `args` (the words after `git`) into global options and the
/// subcommand's position.
pub fn git_split<S: AsRef<str>>(args: &[S]) -> GitSplit {
    let mut out = GitSplit::default();
    let mut i = 0;
    while let Some(word) = args.get(i) {
        let word = word.as_ref();
        if !word.starts_with('-') || AS_SUBCOMMAND.contains(&word) {
            out.subcommand = Some(i);
            return out;
        }
        let (name, inline) = match word.split_once('=') {
            Some((n, v)) => (n, Some(v)),
            None => (word, None),
        };
        let Some(&(_, how)) = GIT_GLOBAL_OPTIONS.iter().find(|(n, _)| *n == name) else {
            out.unknown = Some(i);
            return out;
        };
        let (value, value_at, next) = match (how, inline) {
            (GitValue::None, None) => (None, None, i + 1),
            (GitValue::Next, None) | (GitValue::NextOrEquals, None) => (
                args.get(i + 1).map(|v| v.as_ref().to_string()),
                Some(i + 1),
                i + 2,
            ),
            (GitValue::NextOrEquals | GitValue::EqualsOnly, Some(v)) => {
                (Some(v.to_string()), Some(i), i + 1)
            }
            (GitValue::EqualsOnly, None) => (None, None, i + 1),
            // `-c=x`, `--bare=x`: not an option git knows.
            (GitValue::None | GitValue::Next, Some(_)) => {
                out.unknown = Some(i);
                return out;
            }
        };
        out.globals.push(GitGlobal {
            name: name.to_string(),
            value,
            at: i,
            value_at,
        });
        i = next;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every option that takes a value, in every spelling git accepts, keeps
    /// the subcommand after it: `push` is found, never the value.
    #[test]
    fn every_value_taking_option_keeps_the_subcommand() {
        for &(name, how) in GIT_GLOBAL_OPTIONS {
            let spellings: Vec<Vec<String>> = match how {
                GitValue::None => vec![vec![name.into()]],
                GitValue::Next => vec![vec![name.into(), "HEAD".into()]],
                GitValue::NextOrEquals => vec![
                    vec![name.into(), "HEAD".into()],
                    vec![format!("{name}=HEAD")],
                ],
                GitValue::EqualsOnly => vec![vec![format!("{name}=HEAD")]],
            };
            for mut args in spellings {
                let before = args.len();
                args.extend(["push".to_string(), "--force".to_string()]);
                let split = git_split(&args);
                assert_eq!(split.subcommand, Some(before), "{args:?}");
                assert_eq!(split.globals.len(), 1, "{args:?}");
                if how != GitValue::None {
                    assert_eq!(split.globals[0].value.as_deref(), Some("HEAD"), "{args:?}");
                }
            }
        }
    }

    #[test]
    fn unknown_options_stop_the_split() {
        let s = git_split(&["--frobnicate", "x", "push"]);
        assert_eq!((s.subcommand, s.unknown), (None, Some(0)));
        let s = git_split(&["-c=x", "push"]);
        assert_eq!((s.subcommand, s.unknown), (None, Some(0)));
        let s = git_split(&["--version"]);
        assert_eq!(s.subcommand, Some(0));
        let s = git_split(&["-C", "a", "-c", "k=v", "--no-pager", "log"]);
        assert_eq!(s.subcommand, Some(5));
        assert_eq!(s.globals.len(), 3);
    }
}
