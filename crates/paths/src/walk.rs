//! Path walking: lexical normalisation, and the physical walk that resolves
//! symlinks one component at a time, as the kernel does.
//!
//! The physical walk is our own rather than `std::fs::canonicalize` because
//! `realpath(3)` fails as a whole on a dangling symlink or a missing tail, and
//! because it follows `/proc/self/…` as *this* process, which is not the
//! process that will open the path.

use std::fs;
use std::os::unix::fs::MetadataExt;

/// The kernel's limit on symlinks followed in one lookup (`MAXSYMLINKS`).
const MAX_LINKS: usize = 40;

/// The result of a physical walk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Walked {
    /// Absolute, no symlinks in the part that exists, `.`/`..` resolved, no
    /// trailing slash (`/` stays `/`).
    pub path: String,
    /// The walk reached a per-process or descriptor alias (`/proc/<pid>/…`,
    /// `/proc/self/…`, `/dev/fd/…`, `/dev/stdin` …): the rest was kept as
    /// written, since what it names depends on the process that opens it.
    pub alias: bool,
    /// The walk gave up: a symlink loop (more than 40 links), or a link
    /// target that is not UTF-8. The rest was kept as written.
    pub unresolved: bool,
    /// The whole path exists and is a regular file with more than one link.
    pub hard_linked: bool,
}

/// Lexically normalises an absolute path: collapses `//`, drops `.`, resolves
/// `..` against the text (never above `/`), drops a trailing slash.
pub(crate) fn lexical(abs: &str) -> String {
    let mut out = String::with_capacity(abs.len());
    for comp in abs.split('/') {
        match comp {
            "" | "." => {}
            ".." => pop(&mut out),
            c => {
                out.push('/');
                out.push_str(c);
            }
        }
    }
    if out.is_empty() {
        out.push('/');
    }
    out
}

/// Whether a path has a `..` component.
pub(crate) fn has_dotdot(path: &str) -> bool {
    path.split('/').any(|c| c == "..")
}

/// Removes the last component of `out` (kept without a trailing slash, `""`
/// being the root while walking).
fn pop(out: &mut String) {
    match out.rfind('/') {
        Some(i) => out.truncate(i),
        None => out.clear(),
    }
}

/// Where following a path any further would resolve it as *this* process:
/// per-process directories of `/proc` and the descriptor aliases of `/dev`.
/// `out` is the walked prefix (no trailing slash).
fn is_alias_point(out: &str) -> bool {
    if let Some(rest) = out.strip_prefix("/proc/") {
        return !rest.contains('/')
            && (rest == "self"
                || rest == "thread-self"
                || (!rest.is_empty() && rest.bytes().all(|b| b.is_ascii_digit())));
    }
    matches!(
        out,
        "/dev/fd" | "/dev/stdin" | "/dev/stdout" | "/dev/stderr"
    )
}

/// Walks an absolute path component by component: each existing component is
/// `lstat`ed, a symlink is replaced by its target (relative targets against
/// the link's directory, `..` after it physical), and once a component is
/// missing the rest is appended lexically. A `..` that climbs back out of the
/// missing part resumes the physical walk: the kernel would fail such a path
/// (`ENOENT`), and a tool that normalises the text first would open exactly
/// what the walk then finds.
///
/// Reads only: `lstat` and `readlink`.
pub(crate) fn physical(abs: &str) -> Walked {
    physical_from("", abs)
}

/// [`physical`] for `base` + `/` + `rel`, where `base` is already physical
/// (absolute, existing, no symlinks; `""` for `/`): saves the `lstat`s of the
/// base. `rel` may be absolute (then `base` is ignored) and may climb out of
/// `base` with `..`.
pub(crate) fn physical_from(base: &str, rel: &str) -> Walked {
    let base = if rel.starts_with('/') {
        ""
    } else {
        base.trim_end_matches('/')
    };
    let abs = rel;
    let mut out = String::with_capacity(base.len() + abs.len() + 16);
    out.push_str(base);
    // What is left to walk, and where in it we are. Replaced (one allocation)
    // each time a symlink is followed.
    let mut pending: String;
    let mut rest: &str = abs;
    let mut links = 0usize;
    // Everything in `out` up to `resolved` bytes exists and has no symlinks.
    let mut resolved = out.len();
    let mut missing = false;
    let mut alias = false;
    let mut unresolved = false;
    let mut last_regular_nlink: Option<u64> = None;

    while !rest.is_empty() {
        let (comp, tail) = rest.split_once('/').unwrap_or((rest, ""));
        rest = tail;
        match comp {
            "" | "." => continue,
            ".." => {
                pop(&mut out);
                last_regular_nlink = None;
                if out.len() <= resolved {
                    resolved = out.len();
                    missing = false;
                }
                continue;
            }
            _ => {}
        }
        out.push('/');
        out.push_str(comp);
        last_regular_nlink = None;
        if !alias && is_alias_point(&out) {
            alias = true;
        }
        if missing || alias || unresolved {
            continue;
        }
        match fs::symlink_metadata(&out) {
            Ok(meta) if meta.file_type().is_symlink() => {
                links += 1;
                let target = if links > MAX_LINKS {
                    None
                } else {
                    fs::read_link(&out)
                        .ok()
                        .and_then(|t| t.into_os_string().into_string().ok())
                };
                let Some(target) = target else {
                    // A loop, or a target we cannot represent: keep the rest
                    // as written.
                    unresolved = true;
                    continue;
                };
                pop(&mut out);
                if target.starts_with('/') {
                    out.clear();
                }
                resolved = out.len();
                let mut next = String::with_capacity(target.len() + 1 + rest.len());
                next.push_str(&target);
                next.push('/');
                next.push_str(rest);
                pending = next;
                rest = &pending;
                continue;
            }
            Ok(meta) => {
                resolved = out.len();
                if meta.file_type().is_file() {
                    last_regular_nlink = Some(meta.nlink());
                }
            }
            Err(_) => missing = true,
        }
    }
    if out.is_empty() {
        out.push('/');
    }
    Walked {
        path: out,
        alias,
        unresolved,
        hard_linked: !missing && !alias && !unresolved && last_regular_nlink.is_some_and(|n| n > 1),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lexical_normalises() {
        assert_eq!(lexical("/"), "/");
        assert_eq!(lexical("//"), "/");
        assert_eq!(lexical("//home//x/"), "/home/x");
        assert_eq!(lexical("/a/./b/../c"), "/a/c");
        assert_eq!(lexical("/../../a"), "/a");
        assert_eq!(lexical("/a/b/.."), "/a");
    }

    #[test]
    fn alias_points() {
        assert!(is_alias_point("/proc/self"));
        assert!(is_alias_point("/proc/thread-self"));
        assert!(is_alias_point("/proc/123"));
        assert!(is_alias_point("/dev/fd"));
        assert!(is_alias_point("/dev/stdout"));
        assert!(!is_alias_point("/proc"));
        assert!(!is_alias_point("/proc/sys"));
        assert!(!is_alias_point("/proc/"));
        assert!(!is_alias_point("/dev/null"));
        assert!(!is_alias_point("/proc/self/fd"));
    }

    #[test]
    fn walks_root_and_missing() {
        assert_eq!(physical("/").path, "/");
        let w = physical("/nonexistent-portcullis-test/a/../b");
        assert_eq!(w.path, "/nonexistent-portcullis-test/b");
        assert!(!w.alias && !w.unresolved && !w.hard_linked);
        let w = physical("/nonexistent-portcullis-test/../../tmp");
        assert_eq!(w.path, physical("/tmp").path);
    }

    #[test]
    fn stops_at_proc_self() {
        let w = physical("/proc/self/root/etc/passwd");
        assert_eq!(w.path, "/proc/self/root/etc/passwd");
        assert!(w.alias);
    }
}
