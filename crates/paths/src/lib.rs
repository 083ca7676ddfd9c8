//! Paths as the file system sees them, placed in portcullis' scopes.
//!
//! This crate answers one question for portcullis: *which file would this path
//! really name, and what is that file to the policy?* It is the production
//! implementation of [`PathFacts`], the policy's only window on the file
//! system. Given a path as written in a tool call (relative, `~`, `..`,
//! symlinks, `/proc/self/root/…`) and the call's working directory, it
//! reports:
//!
//! - **canonical**: `~` expanded, made absolute, and walked component by
//!   component as the kernel does: each existing component is `lstat`ed, a
//!   symlink is replaced by its target (so `..` after a symlink is physical),
//!   a missing tail is appended lexically, and a dangling symlink resolves to
//!   where a write would create the file. A final symlink is followed too (a
//!   delete of the link itself is judged by its target: stricter). At most 40
//!   symlinks are followed: a loop is reported unresolved (external), never
//!   hangs.
//! - **zone**: inside a workspace root (the call's project root — the nearest
//!   ancestor of `cwd` holding `.git`, see [`FsPaths::project_root`] — and the
//!   configured roots), an extra read root, or external. Paths are compared by
//!   components, never by string prefix: `/proj_evil` is not inside `/proj`.
//! - **blocked / blocked-write**: under a configured entry ([`Scopes`]).
//! - **protected** (never writable) and **secret** (not readable without a
//!   person), with a reason, from the two data tables in [`tables`]. A `.env`
//!   or key file is secret only outside the workspace.
//! - **hard-linked**: a regular file with more than one link.
//!
//! `/proc/<pid>/…`, `/proc/self/…`, `/dev/fd/…` and `/dev/std{in,out,err}`
//! name different files in every process: they are never followed and always
//! external. Their tails are still checked against the tables where their
//! meaning is clear (`/proc/self/root/etc/shadow` is secret).
//!
//! When the text and the file system disagree about `..` (`link/../x`, where
//! `link` is a symlink), a tool that normalises the text first opens one file
//! and the kernel another. Both readings are judged and the stricter answer
//! wins: the narrower zone, and any flag either reading raises. The flags are
//! also checked against the path as written, so a symlink named like a
//! protected file counts.
//!
//! What it is not: not a policy (it states facts; `portcullis-policy`
//! decides); not an enforcer (the file system can change between this answer
//! and the tool's `open`, a race that only a sandbox such as Landlock or
//! `openat2(RESOLVE_BENEATH)` closes); not a writer (it only reads: `lstat`,
//! `readlink`, `/etc/passwd`). The one function that reads the environment is
//! [`Environment::from_process`].
//!
//! Users are looked up in `/etc/passwd` only, so `~name` of a user from
//! another source (LDAP, sssd) and `~-` (`$OLDPWD`) are unresolvable, as are
//! empty paths and paths with NUL bytes: their canonical path is the text as
//! written (not absolute) and their zone is external.
//!
//! ```
//! use portcullis_paths::{Environment, FsPaths, PathFacts, Scopes, Zone};
//!
//! let env = Environment {
//!     home: "/home/u".into(),
//!     config_dir: "/home/u/.config/portcullis".into(),
//!     data_dir: "/home/u/.local/share/portcullis".into(),
//! };
//! let paths = FsPaths::new(&Scopes::default(), &env);
//! let fact = paths.resolve("/proc/self/root/etc/shadow", "/home/u");
//! assert_eq!(fact.zone, Zone::External);
//! assert_eq!(fact.secret.as_deref(), Some("password hashes"));
//! assert_eq!(paths.resolve("~/.bashrc", "/").protected.as_deref(), Some("shell startup file"));
//! ```

pub mod confinement;
mod env;
mod glob;
mod pattern;
pub mod tables;
mod walk;

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

pub use confinement::{Confinement, ConfinementError};
pub use env::Environment;
pub use portcullis_policy::{PathFact, PathFacts, Zone};

use env::User;
use pattern::{Anchor, Seg};
use tables::Entry;
use walk::Walked;

/// The configured scopes, paths as written in configuration: absolute, `~/…`
/// (`~user/…`), or relative to the project root of the call's working
/// directory. Literal paths, no globs; an entry that is a file names that file,
/// a directory names itself and everything under it. Entries are resolved
/// like any path (symlinks included). An entry whose `~user` is unknown, or a
/// relative entry when the working directory has no project root (it is `/`
/// or not absolute), is ignored.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Scopes {
    /// Workspace roots besides the project root: read and write.
    pub roots: Vec<String>,
    /// Extra read-only roots.
    pub read_roots: Vec<String>,
    /// Neither read nor written.
    pub blocked: Vec<String>,
    /// Never written.
    pub blocked_write: Vec<String>,
}

impl Scopes {
    /// The scopes a policy's `[workspace]` configures.
    pub fn of(w: &portcullis_policy::WorkspaceConfig) -> Scopes {
        Scopes {
            roots: w.roots.clone(),
            read_roots: w.read_roots.clone(),
            blocked: w.blocked.clone(),
            blocked_write: w.blocked_write.clone(),
        }
    }
}

/// Longer paths are not placed (external): the kernel refuses paths past
/// 4096 bytes anyway, and the walk should stay cheap.
const MAX_PATH_LEN: usize = 16 * 1024;

/// How many working directories' scopes are cached before the cache starts
/// over.
const CACHE_LIMIT: usize = 256;

/// [`PathFacts`] backed by the real file system.
///
/// The scopes of a working directory (its project root, the configured
/// entries resolved against it) are computed once and cached for the life of
/// the value: a `.git` created later does not move a project root. Call
/// [`FsPaths::forget_cwds`] to start over. Paths themselves are walked afresh
/// on every [`resolve`](PathFacts::resolve).
#[derive(Debug)]
pub struct FsPaths {
    /// Canonical home: what [`PathFacts::home`] returns.
    home: String,
    /// Home as given, for `~` (the walk resolves it).
    home_written: String,
    /// The environment's directories, kept until the tables are compiled.
    config_dir: String,
    data_dir: String,
    scopes: Scopes,
    /// `/etc/passwd` and the compiled protected and secret tables: built on
    /// first use, because resolving their anchors costs ≈90 `stat` calls and
    /// a hook judging `git status` judges no path at all.
    tables: OnceLock<Tables>,
    cwds: Mutex<HashMap<String, Arc<Places>>>,
}

/// What [`FsPaths`] compiles on first use.
#[derive(Debug)]
struct Tables {
    users: Vec<User>,
    protected: Vec<Rule>,
    secrets: Vec<Rule>,
}

/// A compiled table row.
#[derive(Clone, Debug)]
struct Rule {
    reason: &'static str,
    outside_only: bool,
    kind: RuleKind,
}

#[derive(Clone, Debug)]
enum RuleKind {
    /// Under one of `prefixes` (each with its number of components), then
    /// `segs`.
    Anchored {
        prefixes: Vec<(String, usize)>,
        segs: Vec<Seg>,
        tree: bool,
    },
    /// `segs` at any depth, unless followed by `except`.
    Anywhere {
        segs: Vec<Seg>,
        tree: bool,
        except: Option<(Vec<Seg>, bool)>,
    },
}

/// The scopes as seen from one working directory, canonical.
#[derive(Debug, Default)]
struct Places {
    project_root: Option<String>,
    workspace: Vec<String>,
    /// Configured roots that do not exist and look like files (`report.html`):
    /// they name that one path, never a tree below it.
    exact_workspace: Vec<String>,
    read_roots: Vec<String>,
    blocked: Vec<String>,
    blocked_write: Vec<String>,
}

impl Places {
    fn zone(&self, path: &str) -> Zone {
        if self.workspace.iter().any(|r| pattern::is_under(path, r))
            || self.exact_workspace.iter().any(|r| r == path)
        {
            Zone::Workspace
        } else if self.read_roots.iter().any(|r| pattern::is_under(path, r)) {
            Zone::ReadRoot
        } else {
            Zone::External
        }
    }
}

/// Orders zones from the narrowest (external) to the widest (workspace).
fn rank(zone: Zone) -> u8 {
    match zone {
        Zone::External => 0,
        Zone::ReadRoot => 1,
        Zone::Workspace => 2,
    }
}

impl FsPaths {
    /// Builds the resolver. Nothing is read yet: `/etc/passwd` (for `~user`
    /// and root's home) and the anchors of the protected and secret tables
    /// are resolved on first use, the working directories when first seen.
    pub fn new(scopes: &Scopes, env: &Environment) -> FsPaths {
        // The environment's paths should be absolute; one that is not is
        // taken from `/` (an empty one is `/` itself: everything under it
        // protected, which fails closed).
        let home_written = abs(&env.home);
        let home = Canon::default().get(&home_written);
        FsPaths {
            home,
            home_written,
            config_dir: abs(&env.config_dir),
            data_dir: abs(&env.data_dir),
            scopes: scopes.clone(),
            tables: OnceLock::new(),
            cwds: Mutex::new(HashMap::new()),
        }
    }

    fn tables(&self) -> &Tables {
        self.tables.get_or_init(|| {
            let users = env::read_passwd();
            let mut canon = Canon::default();
            let root_home = users
                .iter()
                .find(|u| u.name == "root" && u.home.starts_with('/'))
                .map_or_else(|| "/root".to_string(), |u| walk::lexical(&u.home));
            let bases = [
                (Anchor::Root, "/".to_string()),
                (Anchor::Home, self.home_written.clone()),
                (Anchor::RootHome, root_home),
                (Anchor::ConfigDir, self.config_dir.clone()),
                (Anchor::DataDir, self.data_dir.clone()),
            ]
            .map(|(a, written)| {
                let canonical = canon.get(&written);
                (a, written, canonical)
            });
            let mut compile = |table: &[Entry]| -> Vec<Rule> {
                table
                    .iter()
                    .filter_map(|e| compile_rule(e, &bases, &mut canon))
                    .collect()
            };
            let protected = compile(tables::PROTECTED);
            let secrets = compile(tables::SECRETS);
            Tables {
                users,
                protected,
                secrets,
            }
        })
    }

    /// The project root of a working directory: the nearest ancestor (the
    /// directory itself included) that holds `.git` (a directory or a file),
    /// canonical; the directory itself when there is none. Two exceptions
    /// keep a stray repository from widening the workspace: a `.git` in the
    /// home directory or in `/` counts only when `cwd` is that directory, and
    /// `/` is never a project root (`None`). `None` too when `cwd` is not
    /// absolute.
    pub fn project_root(&self, cwd: &str) -> Option<String> {
        self.places(cwd).project_root.clone()
    }

    /// The workspace roots seen from `cwd`, canonical: the project root, then
    /// the configured roots.
    pub fn workspace_roots(&self, cwd: &str) -> Vec<String> {
        self.places(cwd).workspace.clone()
    }

    /// Forgets the cached scopes of every working directory.
    pub fn forget_cwds(&self) {
        self.cwds
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .clear();
    }

    fn places(&self, cwd: &str) -> Arc<Places> {
        let cache = || self.cwds.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(p) = cache().get(cwd) {
            return Arc::clone(p);
        }
        // Computed outside the lock: it does file-system reads.
        let places = Arc::new(self.compute_places(cwd));
        let mut map = cache();
        if map.len() >= CACHE_LIMIT {
            map.clear();
        }
        Arc::clone(map.entry(cwd.to_string()).or_insert(places))
    }

    fn compute_places(&self, cwd: &str) -> Places {
        let mut places = Places::default();
        let project_root = if cwd.starts_with('/') && !cwd.contains('\0') {
            let w = walk::physical(cwd);
            if w.alias || w.unresolved {
                None
            } else {
                find_project_root(&w.path, &self.home)
            }
        } else {
            None
        };
        let base = project_root.as_deref();
        if let Some(root) = base {
            places.workspace.push(root.to_string());
        }
        // Workspace and read roots: where the entries really are, nothing
        // wider. Blocked entries: also as written, nothing narrower.
        for (entries, out) in [
            (&self.scopes.roots, &mut places.workspace),
            (&self.scopes.read_roots, &mut places.read_roots),
        ] {
            for entry in entries {
                if let Some((w, _)) = self.place_entry(entry, base)
                    && !w.alias
                    && !w.unresolved
                {
                    if looks_like_missing_file(&w.path) && std::ptr::eq(entries, &self.scopes.roots)
                    {
                        push_new(&mut places.exact_workspace, w.path);
                    } else {
                        push_new(out, w.path);
                    }
                }
            }
        }
        for (entries, out) in [
            (&self.scopes.blocked, &mut places.blocked),
            (&self.scopes.blocked_write, &mut places.blocked_write),
        ] {
            for entry in entries {
                if let Some((w, written)) = self.place_entry(entry, base) {
                    push_new(out, w.path);
                    push_new(out, written);
                }
            }
        }
        places.project_root = project_root;
        places
    }

    /// A configured entry: its physical walk and its lexical form.
    fn place_entry(&self, entry: &str, base: Option<&str>) -> Option<(Walked, String)> {
        if entry.is_empty() || entry.contains('\0') {
            return None;
        }
        let abs = self.expand(entry, base)?;
        Some((walk::physical(&abs), walk::lexical(&abs)))
    }

    /// `~` expansion and joining onto `base` (the cwd for a path, the project
    /// root for a configured entry). `None` when it cannot be placed.
    fn expand(&self, raw: &str, base: Option<&str>) -> Option<String> {
        if let Some(after) = raw.strip_prefix('~') {
            let (user, rest) = after.split_once('/').unwrap_or((after, ""));
            let dir: &str = match user {
                "" => &self.home_written,
                "+" => base.filter(|b| b.starts_with('/'))?,
                "-" => return None,
                name => self
                    .tables()
                    .users
                    .iter()
                    .find(|u| u.name == name && u.home.starts_with('/'))
                    .map(|u| u.home.as_str())?,
            };
            return Some(join(dir, rest));
        }
        if raw.starts_with('/') {
            return Some(raw.to_string());
        }
        base.filter(|b| b.starts_with('/')).map(|b| join(b, raw))
    }

    /// The first row of `rules` that matches `path` (normalised absolute).
    fn first_match(
        rules: &[Rule],
        path: &str,
        comps: &[&str],
        outside: bool,
    ) -> Option<&'static str> {
        rules
            .iter()
            .filter(|r| outside || !r.outside_only)
            .find(|r| match &r.kind {
                RuleKind::Anchored {
                    prefixes,
                    segs,
                    tree,
                } => prefixes.iter().any(|(prefix, k)| {
                    // Under `prefix`, `path` has at least its `k` components;
                    // were it not, the row matches (fail closed: stricter).
                    pattern::is_under(path, prefix)
                        && comps
                            .get(*k..)
                            .is_none_or(|rest| pattern::matches_from(segs, *tree, rest))
                }),
                RuleKind::Anywhere { segs, tree, except } => {
                    (0..comps.len()).filter_map(|i| comps.get(i..)).any(|rest| {
                        // A match leaves at least `segs.len()` components.
                        pattern::matches_from(segs, *tree, rest)
                            && !except.as_ref().is_some_and(|(x, xtree)| {
                                rest.get(segs.len()..)
                                    .is_some_and(|after| pattern::matches_from(x, *xtree, after))
                            })
                    })
                }
            })
            .map(|r| r.reason)
    }

    /// Whether `path` lies in git's own data inside a repository's `.git`
    /// directory ([`tables::GIT_DATA_TREES`], [`tables::GIT_DATA_FILES`]):
    /// writable inside a confined run, never to the agent's own writes.
    pub fn is_git_data(path: &str) -> bool {
        let comps = pattern::components(path);
        comps
            .iter()
            .position(|c| *c == ".git")
            .and_then(|i| comps.get(i + 1..))
            .is_some_and(tables::is_git_data)
    }

    /// Why a new name at `path` inside the workspace may not be made, by the
    /// protected table: `path` is canonical up to its last component (the
    /// new name, judged as written, not followed). With `tree` (a rename or
    /// a symlink, which may bring a whole tree), a name above a protected
    /// path is refused too (`.git`, which would hold `.git/config`). No I/O
    /// beyond the tables' first compilation.
    pub fn refuses_new_name(&self, path: &str, tree: bool) -> Option<&'static str> {
        let comps = pattern::components(path);
        let rules = &self.tables().protected;
        Self::first_match(rules, path, &comps, false).or_else(|| {
            if tree {
                Self::first_ancestor_match(rules, path, &comps)
            } else {
                None
            }
        })
    }

    /// The first protected row that names something *below* `path` along
    /// the pattern's own components: `path` is a directory whose
    /// replacement, move or removal changes a protected path (`.git` above
    /// `.git/hooks`, `~/.claude` above its settings). Directories above the
    /// anchors themselves (`/`, the home directory, a workspace root) are not
    /// counted: every path is below those.
    fn first_ancestor_match(rules: &[Rule], path: &str, comps: &[&str]) -> Option<&'static str> {
        rules
            .iter()
            .find(|r| match &r.kind {
                RuleKind::Anchored { prefixes, segs, .. } => prefixes.iter().any(|(prefix, k)| {
                    // As in `first_match`: out of range counts as a match.
                    pattern::is_under(path, prefix)
                        && comps
                            .get(*k..)
                            .is_none_or(|rest| pattern::begins(segs, rest))
                }),
                RuleKind::Anywhere { segs, .. } => (0..comps.len())
                    .filter_map(|i| comps.get(i..))
                    .any(|rest| pattern::begins(segs, rest)),
            })
            .map(|r| r.reason)
    }

    /// The answer for a path that cannot be placed: external, canonical as
    /// written; only the tables' any-depth rows are checked, on its text.
    fn unresolvable(&self, raw: &str) -> PathFact {
        let text = walk::lexical(&format!("/{raw}"));
        let comps = pattern::components(&text);
        // Anchored rows would mistake the text for an absolute path.
        let anywhere = |rules: &[Rule]| {
            rules
                .iter()
                .filter(|r| matches!(r.kind, RuleKind::Anywhere { .. }))
                .find(|r| Self::first_match(std::slice::from_ref(r), &text, &comps, true).is_some())
                .map(|r| r.reason.to_string())
        };
        PathFact {
            raw: raw.to_string(),
            canonical: raw.to_string(),
            zone: Zone::External,
            blocked: false,
            blocked_write: false,
            protected: anywhere(&self.tables().protected),
            secret: anywhere(&self.tables().secrets),
            hard_linked: false,
            contains_protected: None,
        }
    }
}

impl PathFacts for FsPaths {
    fn resolve(&self, raw: &str, cwd: &str) -> PathFact {
        let places = self.places(cwd);
        let cwd_abs = cwd.starts_with('/').then_some(cwd);
        let abs = if raw.is_empty() || raw.len() > MAX_PATH_LEN || raw.contains('\0') {
            None
        } else {
            self.expand(raw, cwd_abs)
        };
        let Some(abs) = abs else {
            return self.unresolvable(raw);
        };

        let first = walk::physical(&abs);
        let written = walk::lexical(&abs);
        let zone_of = |w: &Walked| {
            if w.alias || w.unresolved {
                Zone::External
            } else {
                places.zone(&w.path)
            }
        };
        let mut zone = zone_of(&first);
        let mut hard_linked = first.hard_linked;
        // Further readings, for the flags (and the zone where said).
        let mut readings: Vec<String> = Vec::new();
        if written != first.path {
            readings.push(written.clone());
        }
        if walk::has_dotdot(&abs) {
            // A tool that normalises the text before opening it.
            let second = walk::physical(&written);
            if second.path != first.path {
                if rank(zone_of(&second)) < rank(zone) {
                    zone = zone_of(&second);
                }
                hard_linked |= second.hard_linked;
                push_new(&mut readings, second.path);
            }
        }
        if first.alias
            && let Some(target) = alias_target(&first.path, cwd_abs)
        {
            push_new(&mut readings, walk::physical(&target).path);
        }

        let outside = zone != Zone::Workspace;
        let all =
            || std::iter::once(first.path.as_str()).chain(readings.iter().map(String::as_str));
        let under_any =
            |dirs: &[String]| all().any(|p| dirs.iter().any(|d| pattern::is_under(p, d)));
        let blocked = under_any(&places.blocked);
        let blocked_write = under_any(&places.blocked_write);
        let mut protected = None;
        let mut secret = None;
        for path in all() {
            if protected.is_some() && secret.is_some() {
                break;
            }
            let comps = pattern::components(path);
            if protected.is_none() {
                protected = Self::first_match(&self.tables().protected, path, &comps, outside);
            }
            if secret.is_none() {
                secret = Self::first_match(&self.tables().secrets, path, &comps, outside);
            }
        }

        let mut contains_protected = None;
        if protected.is_none() {
            for path in all() {
                let comps = pattern::components(path);
                contains_protected =
                    Self::first_ancestor_match(&self.tables().protected, path, &comps);
                if contains_protected.is_some() {
                    break;
                }
            }
        }
        PathFact {
            contains_protected: contains_protected.map(str::to_string),
            raw: raw.to_string(),
            canonical: first.path,
            zone,
            blocked,
            blocked_write,
            protected: protected.map(str::to_string),
            secret: secret.map(str::to_string),
            hard_linked,
        }
    }

    fn home(&self) -> &str {
        &self.home
    }

    fn expand_glob(&self, pattern: &str, cwd: &str) -> Option<Vec<String>> {
        glob::expand(pattern, cwd)
    }

    fn exists(&self, raw: &str, cwd: &str) -> bool {
        if raw.is_empty() || raw.contains('\0') {
            return false;
        }
        match self.expand(raw, Some(cwd)) {
            Some(abs) => std::fs::symlink_metadata(abs).is_ok(),
            None => true,
        }
    }
}

/// An environment path made absolute: one that is not is taken from `/`.
fn abs(p: &str) -> String {
    walk::lexical(&format!("/{p}"))
}

/// Compiles a table row against the anchors' directories (as written and
/// canonical). The literal part after the anchor is resolved too, so a
/// protected dotfile that is a symlink protects its target.
fn compile_rule(
    e: &Entry,
    bases: &[(Anchor, String, String); 5],
    canon: &mut Canon,
) -> Option<Rule> {
    let parsed = pattern::parse(e.pattern)?;
    let except = match e.except {
        Some(x) => Some(pattern::parse_relative(x)?),
        None => None,
    };
    let kind = if parsed.anchor == Anchor::Anywhere {
        RuleKind::Anywhere {
            segs: parsed.segs,
            tree: parsed.tree,
            except,
        }
    } else {
        let (_, written, canonical) = bases.iter().find(|(a, _, _)| *a == parsed.anchor)?;
        let literal_len = parsed
            .segs
            .iter()
            .take_while(|s| matches!(s, Seg::Lit(_)))
            .count();
        let mut rel = String::new();
        for s in parsed.segs.iter().take(literal_len) {
            if let Seg::Lit(l) = s {
                rel.push('/');
                rel.push_str(l);
            }
        }
        let from_canonical = walk::lexical(&format!("{canonical}{rel}"));
        let variants = [
            walk::lexical(&format!("{written}{rel}")),
            canon.get(&from_canonical),
            from_canonical,
        ];
        let mut prefixes: Vec<(String, usize)> = Vec::new();
        for v in variants {
            if prefixes.iter().all(|(p, _)| *p != v) {
                let k = pattern::components(&v).len();
                prefixes.push((v, k));
            }
        }
        RuleKind::Anchored {
            prefixes,
            segs: parsed.segs.iter().skip(literal_len).cloned().collect(),
            tree: parsed.tree,
        }
    };
    Some(Rule {
        reason: e.reason,
        outside_only: e.outside_workspace_only,
        kind,
    })
}

/// Canonical forms of lexically normalised absolute paths, remembered by
/// directory so that the table anchors (`~/.config/…`, `~/.local/share/…`)
/// are walked once each: one `lstat` per row.
#[derive(Default)]
struct Canon {
    memo: HashMap<String, String>,
}

impl Canon {
    /// The canonical form of `path`, or `path` itself where the walk cannot
    /// follow it (an alias, a loop).
    fn get(&mut self, path: &str) -> String {
        if path == "/" {
            return path.to_string();
        }
        if let Some(c) = self.memo.get(path) {
            return c.clone();
        }
        let (parent, last) = path.rsplit_once('/').unwrap_or(("", path));
        let parent = if parent.is_empty() {
            String::new()
        } else {
            self.get(parent)
        };
        let w = walk::physical_from(&parent, last);
        let c = if w.alias || w.unresolved {
            path.to_string()
        } else {
            w.path
        };
        self.memo.insert(path.to_string(), c.clone());
        c
    }
}

/// What a per-process alias names when that is clear from the text:
/// `/proc/<p>/root/REST` (and `/proc/<p>/task/<t>/root/REST`) is `/REST` in
/// the same mount namespace; `/proc/self/cwd/REST` is `REST` under the
/// call's working directory. Descriptors (`fd/N`) name nothing we can know.
fn alias_target(path: &str, cwd: Option<&str>) -> Option<String> {
    let comps = pattern::components(path);
    let (owner, rest) = match comps.as_slice() {
        ["proc", p, "task", _, rest @ ..] | ["proc", p, rest @ ..] => (*p, rest),
        _ => return None,
    };
    match rest {
        ["root", tail @ ..] => Some(format!("/{}", tail.join("/"))),
        ["cwd", tail @ ..] if owner == "self" || owner == "thread-self" => {
            cwd.map(|c| join(c, &tail.join("/")))
        }
        _ => None,
    }
}

/// Finds the project root of a canonical working directory (see
/// [`FsPaths::project_root`]).
fn find_project_root(cwd: &str, home: &str) -> Option<String> {
    let mut dir = cwd.to_string();
    let mut probe = String::with_capacity(cwd.len() + 6);
    let found = loop {
        probe.clear();
        probe.push_str(dir.trim_end_matches('/'));
        probe.push_str("/.git");
        if std::fs::symlink_metadata(&probe).is_ok() {
            break Some(dir);
        }
        if dir == "/" {
            break None;
        }
        match dir.rfind('/') {
            Some(0) | None => dir.truncate(1),
            Some(i) => dir.truncate(i),
        }
    };
    let root = match found {
        Some(d) if d != cwd && (d == "/" || d == home) => cwd.to_string(),
        Some(d) => d,
        None => cwd.to_string(),
    };
    (root != "/").then_some(root)
}

/// `dir` + `/` + `rest` (either may be empty).
/// A configured root that names a file, or does not exist and has a name with
/// an extension (`improve.html`, a file-to-be): it grants that path only, never
/// a tree below it. Fail closed: a directory not yet created with a dot in its
/// name is granted too narrowly, never too widely.
fn looks_like_missing_file(path: &str) -> bool {
    match std::fs::metadata(path) {
        Ok(m) => !m.is_dir(),
        Err(_) => {
            let name = path.rsplit('/').next().unwrap_or("");
            name.contains('.') && !name.starts_with('.')
        }
    }
}

fn join(dir: &str, rest: &str) -> String {
    let dir = dir.trim_end_matches('/');
    let mut s = String::with_capacity(dir.len() + 1 + rest.len());
    s.push_str(dir);
    s.push('/');
    s.push_str(rest);
    s
}

fn push_new(list: &mut Vec<String>, item: String) {
    if !list.contains(&item) {
        list.push(item);
    }
}
