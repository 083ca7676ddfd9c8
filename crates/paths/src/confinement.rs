//! The paths a confined run must treat specially, found on disk now: the
//! tables of [`crate::tables`] turned from patterns into the concrete files
//! and directories they name in one workspace.
//!
//! A pattern cannot be handed to the kernel: a mount or a Landlock rule names
//! one path. So the workspace roots are walked (symlinks are not followed),
//! every protected path found there is listed to be mounted read-only (with
//! the directories above it, which must not be renamed away), and every
//! secret found there or at the tables' anchored places (`~/.ssh`,
//! `~/.aws/credentials`, …) is listed to be hidden. The walk is bounded: a
//! workspace too large to walk is an error, never a partial answer.
//!
//! What this cannot list: protected paths that do not exist yet (a new
//! `.vscode/tasks.json`) — nothing on disk to mount over without creating it
//! on the host; `portcullis run` judges each new name when it is made
//! instead ([`FsPaths::refuses_new_name`]) — and `**/` secret rows outside
//! the workspace (a `.env` in another project): the analysis still judges
//! those.

use std::fmt;

use crate::pattern::{self, Seg};
use crate::{FsPaths, Rule, RuleKind};

/// The most entries a workspace walk visits before giving up.
pub const WALK_LIMIT: usize = 200_000;

/// Concrete paths, canonical, for one working directory.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Confinement {
    /// The workspace roots: writable trees.
    pub writable: Vec<String>,
    /// Protected paths that exist inside a writable tree: read-only.
    pub read_only: Vec<String>,
    /// Parts of a read-only directory that are writable again: the exempt
    /// parts of a protected directory (`.claude/worktrees` in `.claude`).
    pub writable_again: Vec<String>,
    /// Directories between a writable root and a read-only path: they must
    /// stay where they are (renaming `.git` away would leave a `.git/config`
    /// to be created afresh).
    pub pinned: Vec<String>,
    /// Secret paths that exist, and portcullis' data directory: hidden.
    pub hidden: Vec<String>,
    /// Where reading is allowed at all: everything outside the home
    /// directory; in it, its dot-entries (tools' configuration and caches),
    /// the tool directories of [`crate::tables::HOME_TOOL_DIRS`], the
    /// workspace and read roots — not other projects, documents or
    /// downloads. Empty: everything (a home of `/`, or none).
    pub readable: Vec<String>,
}

impl Confinement {
    /// Leaves exactly `paths` readable (secret files a call was allowed to
    /// read): a hidden path that is one of them is no longer hidden; a hidden
    /// directory holding one is replaced, level by level down to it, by its
    /// other entries (so revealing `~/.aws/credentials` leaves `~/.aws/config`
    /// hidden). Each path must be canonical; one under no hidden path needs
    /// nothing.
    pub fn reveal(&mut self, paths: &[String]) {
        for target in paths {
            if !self.readable.is_empty()
                && !self.readable.iter().any(|r| pattern::is_under(target, r))
            {
                self.readable.push(target.clone());
            }
            let mut next = Vec::new();
            for h in std::mem::take(&mut self.hidden) {
                if &h == target {
                    continue;
                }
                if !pattern::is_under(target, &h) {
                    next.push(h);
                    continue;
                }
                // Down from `h` to the target's parent: hide every sibling.
                let mut dir = h;
                for comp in target
                    .get(dir.len()..)
                    .unwrap_or("")
                    .split('/')
                    .filter(|c| !c.is_empty())
                    .collect::<Vec<_>>()
                {
                    if let Ok(entries) = std::fs::read_dir(&dir) {
                        for e in entries.flatten() {
                            let name = e.file_name();
                            if name.to_str() != Some(comp) {
                                next.push(format!("{dir}/{}", name.to_string_lossy()));
                            }
                        }
                    }
                    dir = format!("{dir}/{comp}");
                }
            }
            self.hidden = next;
        }
    }
}

/// Why the paths could not be listed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ConfinementError {
    /// The working directory has no workspace (it is `/`, not absolute, or
    /// cannot be resolved).
    NoWorkspace(String),
    /// The walk of a workspace root passed [`WALK_LIMIT`] entries.
    TooLarge { root: String, limit: usize },
}

impl fmt::Display for ConfinementError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ConfinementError::NoWorkspace(cwd) => write!(
                f,
                "`{cwd}` has no workspace to confine a run to (it is `/`, not absolute or cannot be resolved)"
            ),
            ConfinementError::TooLarge { root, limit } => write!(
                f,
                "the workspace `{root}` has more than {limit} entries: too many to find its protected and secret paths before every run"
            ),
        }
    }
}

impl std::error::Error for ConfinementError {}

impl FsPaths {
    /// The concrete paths a run confined to the workspace of `cwd` must
    /// treat specially (module documentation).
    pub fn confinement(&self, cwd: &str) -> Result<Confinement, ConfinementError> {
        self.confinement_with(cwd, false)
    }

    /// [`FsPaths::confinement`]; with `git_writes`, a repository's `.git`
    /// is pinned instead of read-only whole, and git's own data in it
    /// ([`crate::tables::GIT_DATA_TREES`], [`crate::tables::GIT_DATA_FILES`])
    /// left writable — everything else in it read-only.
    pub fn confinement_with(
        &self,
        cwd: &str,
        git_writes: bool,
    ) -> Result<Confinement, ConfinementError> {
        let writable = self.workspace_roots(cwd);
        if writable.is_empty() {
            return Err(ConfinementError::NoWorkspace(cwd.to_string()));
        }
        let mut out = Confinement {
            writable: writable.clone(),
            ..Confinement::default()
        };
        let tables = self.tables();
        for root in &writable {
            walk_root(
                root,
                &tables.protected,
                &tables.secrets,
                git_writes,
                &mut out,
            )?;
        }
        for rule in &tables.secrets {
            for found in anchored_matches(rule) {
                push_new(&mut out.hidden, found);
            }
        }
        for dir in [&self.data_dir, &walk_physical(&self.data_dir)] {
            if std::fs::symlink_metadata(dir).is_ok() {
                push_new(&mut out.hidden, dir.clone());
            }
        }
        out.readable = self.readable_places(cwd, &writable);
        // A hidden path inside another hidden one is hidden already.
        let hidden = out.hidden.clone();
        out.hidden.retain(|h| {
            !hidden
                .iter()
                .any(|other| other != h && pattern::is_under(h, other))
        });
        Ok(out)
    }
}

impl FsPaths {
    /// [`Confinement::readable`].
    fn readable_places(&self, cwd: &str, writable: &[String]) -> Vec<String> {
        let home = self.home.clone();
        if home == "/" || !std::path::Path::new(&home).is_dir() {
            return Vec::new();
        }
        let mut out = Vec::new();
        // Outside the home: each ancestor's entries but the one leading home.
        let comps = pattern::components(&home);
        let mut dir = String::from("/");
        for comp in &comps {
            if let Ok(entries) = std::fs::read_dir(&dir) {
                for e in entries.flatten() {
                    if e.file_name().to_str() != Some(comp) {
                        push_new(&mut out, join(&dir, &e.file_name().to_string_lossy()));
                    }
                }
            }
            dir = join(&dir, comp);
        }
        if let Ok(entries) = std::fs::read_dir(&home) {
            for e in entries.flatten() {
                let name = e.file_name();
                let name = name.to_string_lossy();
                if name.starts_with('.') || crate::tables::HOME_TOOL_DIRS.contains(&name.as_ref()) {
                    push_new(&mut out, join(&home, &name));
                }
            }
        }
        for root in writable.iter().chain(&self.places(cwd).read_roots) {
            push_new(&mut out, root.clone());
        }
        out
    }
}

fn join(dir: &str, name: &str) -> String {
    format!("{}/{name}", dir.trim_end_matches('/'))
}

fn walk_physical(path: &str) -> String {
    crate::walk::physical(path).path
}

/// Walks one workspace root, depth first, without following symlinks.
fn walk_root(
    root: &str,
    protected: &[Rule],
    secrets: &[Rule],
    git_writes: bool,
    out: &mut Confinement,
) -> Result<(), ConfinementError> {
    // The root itself, in full: a workspace that is itself protected (or
    // inside a protected tree) is read-only whole. Below it, each entry's
    // ancestors were checked on the way down, so a match must end at the
    // entry's own name (`first_rule_below`).
    let root_comps = pattern::components(root);
    if first_rule(protected, root, &root_comps).is_some() {
        push_new(&mut out.read_only, root.to_string());
        return Ok(());
    }
    // Anchored rows whose place is neither in nor above this root can match
    // nothing in it: leave them out of the walk.
    let near = |rules: &'_ [Rule]| -> Vec<Rule> {
        rules
            .iter()
            .filter(|r| match &r.kind {
                RuleKind::Anchored { prefixes, .. } => prefixes
                    .iter()
                    .any(|(p, _)| pattern::is_under(p, root) || pattern::is_under(root, p)),
                RuleKind::Anywhere { .. } => true,
            })
            .cloned()
            .collect()
    };
    let (protected, secrets) = (&near(protected)[..], &near(secrets)[..]);
    // (directory, inside a protected directory with exempt parts, that
    // directory itself: read-only, its exempt entries writable again)
    let mut stack = vec![(root.to_string(), false, false)];
    let mut seen = 0usize;
    while let Some((dir, exempted, in_read_only)) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            seen += 1;
            if seen > WALK_LIMIT {
                return Err(ConfinementError::TooLarge {
                    root: root.to_string(),
                    limit: WALK_LIMIT,
                });
            }
            let Some(name) = entry.file_name().to_str().map(str::to_string) else {
                // A name that is not UTF-8 matches no table row.
                if entry.file_type().is_ok_and(|t| t.is_dir()) {
                    stack.push((
                        format!("{dir}/{}", entry.file_name().to_string_lossy()),
                        exempted,
                        false,
                    ));
                }
                continue;
            };
            let path = format!("{dir}/{name}");
            let comps = pattern::components(&path);
            let is_dir = entry.file_type().is_ok_and(|t| t.is_dir());
            let matched = if exempted {
                first_rule(protected, &path, &comps)
            } else {
                first_rule_below(protected, &path, &comps)
            };
            if git_writes && matched.is_some() && name == ".git" && is_dir && !exempted {
                // A repository: git's own data stays writable so an allowed
                // `git commit` works inside; the directory is pinned and
                // everything else in it (config, hooks, info …) read-only.
                // New names in it are judged by the supervisor
                // (`FsPaths::is_git_data`).
                pin_ancestors(root, &path, &mut out.pinned);
                push_new(&mut out.pinned, path.clone());
                if let Ok(inner) = std::fs::read_dir(&path) {
                    for e in inner.flatten() {
                        seen += 1;
                        if seen > WALK_LIMIT {
                            return Err(ConfinementError::TooLarge {
                                root: root.to_string(),
                                limit: WALK_LIMIT,
                            });
                        }
                        let inner_name = e.file_name().to_string_lossy().into_owned();
                        if !crate::tables::is_git_data(&[inner_name.as_str()])
                            || !is_git_data_kind(&inner_name, &e)
                        {
                            push_new(&mut out.read_only, format!("{path}/{inner_name}"));
                        }
                    }
                }
                continue;
            }
            if let Some(rule) = matched {
                // Read-only whole; with exempt parts (`.claude/worktrees`),
                // each entry is judged on its own, in full, and the exempt
                // ones are made writable again inside it (so nothing new is
                // created in the protected directory itself).
                push_new(&mut out.read_only, path.clone());
                pin_ancestors(root, &path, &mut out.pinned);
                if has_exception(rule) && is_dir {
                    stack.push((path, true, true));
                }
                continue;
            }
            let secret = if exempted {
                first_rule(secrets, &path, &comps)
            } else {
                first_rule_below(secrets, &path, &comps)
            };
            if secret.is_some() {
                push_new(&mut out.hidden, path);
                continue;
            }
            if in_read_only {
                push_new(&mut out.writable_again, path.clone());
            }
            if is_dir {
                stack.push((path, exempted, false));
            }
        }
    }
    Ok(())
}

/// A top-level entry of `.git` named as git data is only data in its own
/// shape: a directory for the trees, a regular file for the files (a
/// symlink named `HEAD` pointing elsewhere is read-only).
fn is_git_data_kind(name: &str, entry: &std::fs::DirEntry) -> bool {
    let Ok(t) = entry.file_type() else {
        return false;
    };
    if crate::tables::GIT_DATA_TREES.contains(&name) {
        t.is_dir()
    } else {
        t.is_file()
    }
}

/// The directories strictly between `root` and `path`.
fn pin_ancestors(root: &str, path: &str, pinned: &mut Vec<String>) {
    let mut p = path;
    while let Some((parent, _)) = p.rsplit_once('/') {
        if parent.len() <= root.len() || !pattern::is_under(parent, root) {
            break;
        }
        push_new(pinned, parent.to_string());
        p = parent;
    }
}

/// The first rule that matches `path` as inside the workspace.
fn first_rule<'r>(rules: &'r [Rule], path: &str, comps: &[&str]) -> Option<&'r Rule> {
    rules
        .iter()
        .filter(|r| !r.outside_only)
        .find(|r| FsPaths::first_match(std::slice::from_ref(*r), path, comps, false).is_some())
}

/// [`first_rule`] for an entry whose ancestors matched nothing: an
/// any-depth row can only match with its last component on the entry's own
/// name (had it matched earlier, an ancestor would have), so one position is
/// tried instead of every one.
fn first_rule_below<'r>(rules: &'r [Rule], path: &str, comps: &[&str]) -> Option<&'r Rule> {
    rules
        .iter()
        .filter(|r| !r.outside_only)
        .find(|r| match &r.kind {
            RuleKind::Anywhere {
                segs,
                tree,
                except: None,
            } => comps
                .len()
                .checked_sub(segs.len())
                .and_then(|start| comps.get(start..))
                .is_some_and(|tail| pattern::matches_from(segs, *tree, tail)),
            _ => FsPaths::first_match(std::slice::from_ref(*r), path, comps, false).is_some(),
        })
}

fn has_exception(rule: &Rule) -> bool {
    matches!(
        &rule.kind,
        RuleKind::Anywhere {
            except: Some(_),
            ..
        }
    )
}

/// The existing paths an anchored rule names: each prefix, then each
/// component matched against the directory's entries.
fn anchored_matches(rule: &Rule) -> Vec<String> {
    let RuleKind::Anchored { prefixes, segs, .. } = &rule.kind else {
        return Vec::new();
    };
    let mut found = Vec::new();
    for (prefix, _) in prefixes {
        // A process' own `/proc` files are its own; other processes' are out
        // of a confined run's reach (Landlock's ptrace scoping).
        if pattern::is_under(prefix, "/proc") {
            continue;
        }
        let mut level = vec![prefix.clone()];
        for seg in segs {
            let mut next = Vec::new();
            for dir in &level {
                match seg {
                    Seg::Lit(name) => next.push(format!("{}/{name}", dir.trim_end_matches('/'))),
                    Seg::Glob(_) => {
                        let Ok(entries) = std::fs::read_dir(dir) else {
                            continue;
                        };
                        for e in entries.flatten() {
                            if let Some(name) = e.file_name().to_str()
                                && seg_matches(*seg, name)
                            {
                                next.push(format!("{}/{name}", dir.trim_end_matches('/')));
                            }
                        }
                    }
                }
            }
            level = next;
        }
        for p in level {
            if std::fs::symlink_metadata(&p).is_ok() {
                push_new(&mut found, walk_physical(&p));
                push_new(&mut found, p);
            }
        }
    }
    found
}

fn seg_matches(seg: Seg, name: &str) -> bool {
    pattern::matches_from(&[seg], false, &[name])
}

fn push_new(v: &mut Vec<String>, s: String) {
    if !v.contains(&s) {
        v.push(s);
    }
}
