//! Facts about the file system, supplied by the caller.
//!
//! The policy never touches the file system: whoever calls [`crate::decide`]
//! passes an implementation of [`PathFacts`] — the `portcullis-paths` crate in
//! production (it resolves symlinks and `..` for real), a lexical fake in tests.

use serde::{Deserialize, Serialize};

/// Where a path lies relative to the configured scopes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Zone {
    /// Inside a workspace root (the call's project root, or a configured root): read and write.
    Workspace,
    /// Inside an extra read root: read only.
    ReadRoot,
    /// Anywhere else, including `/proc/*/root`, `/proc/*/cwd`, `/proc/*/fd/*` and `/dev/fd/*`,
    /// which are always outside whatever they point at.
    External,
}

/// Everything the policy needs to know about one path.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PathFact {
    /// The path as written.
    pub raw: String,
    /// Absolute, `~` expanded, `..` and symlinks resolved along the longest
    /// existing prefix, no trailing slash (`/` stays `/`).
    pub canonical: String,
    pub zone: Zone,
    /// Under a blocked path: neither read nor written.
    pub blocked: bool,
    /// Under a blocked-write path: never written.
    pub blocked_write: bool,
    /// Never writable, even inside the workspace, with the reason (`portcullis
    /// configuration`, `git hooks`, `shell startup file`, `agent settings` …).
    pub protected: Option<String>,
    /// Not readable without a person, with the reason (`ssh keys`, `cloud credentials`, `.env outside the workspace` …).
    pub secret: Option<String>,
    /// A regular file with more than one hard link: writing it may write a file
    /// elsewhere, so it is not writable through a rule or grant.
    pub hard_linked: bool,
    /// A directory above a protected path, along the protected pattern's own
    /// components (`.git` above `.git/hooks`), with the reason: replacing,
    /// moving or removing it changes the protected path, so it is never
    /// written either.
    pub contains_protected: Option<String>,
}

/// Resolves paths for the policy.
pub trait PathFacts {
    /// Resolves `raw` (as written in a tool call: relative, `~`, `..` allowed)
    /// against the call's working directory `cwd` (absolute).
    fn resolve(&self, raw: &str, cwd: &str) -> PathFact;

    /// The user's home directory (absolute), for `~` in rules.
    fn home(&self) -> &str;

    /// The files an unquoted glob (`src/*.rs`) would expand to, as bash would
    /// pass them (relative patterns give relative paths; no hidden files unless
    /// the pattern starts with `.`), or `None` when it cannot tell (too many
    /// matches, unreadable directories, no file system).
    fn expand_glob(&self, _pattern: &str, _cwd: &str) -> Option<Vec<String>> {
        None
    }

    /// Whether `raw` names something that exists (a dangling symlink counts).
    /// A cheap first look before [`PathFacts::resolve`] where only existing
    /// files matter; `true` when it cannot tell.
    fn exists(&self, _raw: &str, _cwd: &str) -> bool {
        true
    }
}

/// A lexical stand-in for the file system: `~` and `..` resolved as text, no
/// symlinks, no protected or secret paths unless listed. For tests and
/// benchmarks of the policy without a file system; production uses
/// `portcullis-paths`.
#[derive(Clone, Debug, Default)]
pub struct LexicalFacts {
    pub home: String,
    /// Workspace roots (absolute).
    pub roots: Vec<String>,
    /// Absolute path prefixes that are protected, with reasons.
    pub protected: Vec<(String, String)>,
    /// Absolute path prefixes that are secret, with reasons.
    pub secret: Vec<(String, String)>,
}

impl LexicalFacts {
    fn under(path: &str, dir: &str) -> bool {
        path == dir
            || path
                .strip_prefix(dir)
                .is_some_and(|below| below.starts_with('/'))
            || dir == "/"
    }

    /// Absolute, `~` expanded, `.` and `..` removed lexically.
    pub fn normalize(&self, raw: &str, cwd: &str) -> String {
        let joined = if let Some(rest) = raw.strip_prefix("~/") {
            format!("{}/{rest}", self.home)
        } else if raw == "~" {
            self.home.clone()
        } else if raw.starts_with('/') {
            raw.to_string()
        } else {
            format!("{cwd}/{raw}")
        };
        let mut parts: Vec<&str> = Vec::new();
        for c in joined.split('/') {
            match c {
                "" | "." => {}
                ".." => {
                    parts.pop();
                }
                c => parts.push(c),
            }
        }
        format!("/{}", parts.join("/"))
    }
}

impl LexicalFacts {
    /// A protected prefix strictly below `canonical`, unless `canonical` is
    /// `/`, the home directory, the working directory, a root, or above one
    /// of them (every path is below those).
    fn contains_protected(&self, canonical: &str, cwd: &str) -> Option<String> {
        let anchors = std::iter::once(self.home.as_str())
            .chain(std::iter::once(cwd))
            .chain(self.roots.iter().map(String::as_str));
        if canonical == "/" || anchors.into_iter().any(|a| Self::under(a, canonical)) {
            return None;
        }
        self.protected
            .iter()
            .find(|(p, _)| p != canonical && Self::under(p, canonical))
            .map(|(_, why)| why.clone())
    }
}

impl PathFacts for LexicalFacts {
    fn resolve(&self, raw: &str, cwd: &str) -> PathFact {
        let canonical = self.normalize(raw, cwd);
        let in_root =
            self.roots.iter().any(|r| Self::under(&canonical, r)) || Self::under(&canonical, cwd);
        let find = |list: &[(String, String)]| {
            list.iter()
                .find(|(p, _)| Self::under(&canonical, p))
                .map(|(_, why)| why.clone())
        };
        PathFact {
            raw: raw.to_string(),
            zone: if in_root {
                Zone::Workspace
            } else {
                Zone::External
            },
            blocked: false,
            blocked_write: false,
            protected: find(&self.protected),
            secret: find(&self.secret),
            hard_linked: false,
            contains_protected: self.contains_protected(&canonical, cwd),
            canonical,
        }
    }

    fn home(&self) -> &str {
        &self.home
    }

    /// No file system: only what the lists name exists.
    fn exists(&self, raw: &str, cwd: &str) -> bool {
        let fact = self.resolve(raw, cwd);
        fact.protected.is_some() || fact.secret.is_some()
    }
}
