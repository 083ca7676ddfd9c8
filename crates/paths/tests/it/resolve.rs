//! `FsPaths` against real temporary directories: symlinks, `..`, aliases,
//! hard links, scopes, and the protected and secret tables.

// Test code: a failed unwrap, index or panic is a failed test.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

use std::fs;
use std::os::unix::fs::symlink;

use portcullis_paths::{Environment, FsPaths, PathFact, PathFacts, Scopes, Zone};
use tempfile::TempDir;

/// A temporary world: `base/home` (the fake home, with portcullis' config and
/// data dirs inside), `base/proj` (a git project), `base/outside`.
struct Fx {
    _tmp: TempDir,
    base: String,
    env: Environment,
}

impl Fx {
    fn new() -> Fx {
        let tmp = tempfile::tempdir().unwrap();
        let base = fs::canonicalize(tmp.path())
            .unwrap()
            .into_os_string()
            .into_string()
            .unwrap();
        let env = Environment {
            home: format!("{base}/home"),
            config_dir: format!("{base}/home/.config/portcullis"),
            data_dir: format!("{base}/home/.local/share/portcullis"),
        };
        let fx = Fx {
            _tmp: tmp,
            base,
            env,
        };
        fx.mkdir("home");
        fx.mkdir("proj/.git");
        fx.mkdir("proj/src");
        fx.mkdir("outside");
        fx
    }

    /// An absolute path under the base.
    fn p(&self, rel: &str) -> String {
        format!("{}/{rel}", self.base)
    }

    fn mkdir(&self, rel: &str) {
        fs::create_dir_all(self.p(rel)).unwrap();
    }

    fn touch(&self, rel: &str) {
        let path = self.p(rel);
        if let Some(parent) = std::path::Path::new(&path).parent() {
            fs::create_dir_all(parent).unwrap();
        }
        fs::write(path, b"x").unwrap();
    }

    /// Makes `rel` a symlink to `target` (written as given).
    fn link(&self, target: &str, rel: &str) {
        symlink(target, self.p(rel)).unwrap();
    }

    fn paths(&self) -> FsPaths {
        FsPaths::new(&Scopes::default(), &self.env)
    }

    fn paths_with(&self, scopes: Scopes) -> FsPaths {
        FsPaths::new(&scopes, &self.env)
    }

    /// Resolves `raw` from `cwd` (relative to the base).
    fn resolve(&self, paths: &FsPaths, raw: &str, cwd: &str) -> PathFact {
        paths.resolve(raw, &self.p(cwd))
    }
}

fn strings(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| s.to_string()).collect()
}

// ---- resolution -------------------------------------------------------------

#[test]
fn plain_workspace_file() {
    let fx = Fx::new();
    fx.touch("proj/src/main.rs");
    let f = fx.resolve(&fx.paths(), "src/main.rs", "proj");
    assert_eq!(f.raw, "src/main.rs");
    assert_eq!(f.canonical, fx.p("proj/src/main.rs"));
    assert_eq!(f.zone, Zone::Workspace);
    assert!(!f.blocked && !f.blocked_write && !f.hard_linked);
    assert_eq!(f.protected, None);
    assert_eq!(f.secret, None);
}

#[test]
fn symlink_inside_workspace_pointing_outside_is_external() {
    let fx = Fx::new();
    fx.touch("outside/target.txt");
    fx.link(&fx.p("outside/target.txt"), "proj/innocent.txt");
    fx.link("../outside", "proj/rel_dir");
    let paths = fx.paths();
    let f = fx.resolve(&paths, "innocent.txt", "proj");
    assert_eq!(f.canonical, fx.p("outside/target.txt"));
    assert_eq!(f.zone, Zone::External);
    let f = fx.resolve(&paths, "rel_dir/target.txt", "proj");
    assert_eq!(f.canonical, fx.p("outside/target.txt"));
    assert_eq!(f.zone, Zone::External);
}

#[test]
fn dangling_symlink_resolves_to_where_a_write_would_land() {
    let fx = Fx::new();
    fx.link(&fx.p("outside/new.txt"), "proj/dangling");
    let f = fx.resolve(&fx.paths(), "dangling", "proj");
    assert_eq!(f.canonical, fx.p("outside/new.txt"));
    assert_eq!(f.zone, Zone::External);
}

#[test]
fn symlink_loops_do_not_hang_and_are_external() {
    let fx = Fx::new();
    fx.link("b", "proj/a");
    fx.link("a", "proj/b");
    fx.link("self", "proj/self");
    let paths = fx.paths();
    for raw in ["a", "a/file", "self/x", "b/../src"] {
        let f = fx.resolve(&paths, raw, "proj");
        assert_eq!(f.zone, Zone::External, "{raw}: {f:?}");
        assert!(f.canonical.starts_with(&fx.p("proj/")), "{raw}: {f:?}");
    }
}

#[test]
fn long_but_finite_symlink_chains_resolve() {
    let fx = Fx::new();
    fx.touch("proj/end.txt");
    fx.link("end.txt", "proj/l0");
    for i in 1..30 {
        fx.link(&format!("l{}", i - 1), &format!("proj/l{i}"));
    }
    let paths = fx.paths();
    let f = fx.resolve(&paths, "l29", "proj");
    assert_eq!(f.canonical, fx.p("proj/end.txt"));
    assert_eq!(f.zone, Zone::Workspace);
    // Past the kernel's 40 links the lookup fails (ELOOP): not placed.
    for i in 30..45 {
        fx.link(&format!("l{}", i - 1), &format!("proj/l{i}"));
    }
    let f = fx.resolve(&paths, "l44", "proj");
    assert_eq!(f.zone, Zone::External);
}

#[test]
fn dotdot_out_of_the_workspace() {
    let fx = Fx::new();
    fx.touch("outside/x.txt");
    let paths = fx.paths();
    let f = fx.resolve(&paths, "../outside/x.txt", "proj");
    assert_eq!(f.canonical, fx.p("outside/x.txt"));
    assert_eq!(f.zone, Zone::External);
    let f = fx.resolve(&paths, "src/../../outside/missing/../y", "proj");
    assert_eq!(f.canonical, fx.p("outside/y"));
    assert_eq!(f.zone, Zone::External);
    let f = fx.resolve(&paths, "../../../../../../../../etc/passwd", "proj/src");
    assert_eq!(f.canonical, "/etc/passwd");
    assert_eq!(f.zone, Zone::External);
    // Staying inside is fine.
    let f = fx.resolve(&paths, "src/../README.md", "proj");
    assert_eq!(f.canonical, fx.p("proj/README.md"));
    assert_eq!(f.zone, Zone::Workspace);
}

#[test]
fn dotdot_after_a_symlink_is_physical() {
    let fx = Fx::new();
    fx.mkdir("outside/deep");
    fx.link(&fx.p("outside/deep"), "proj/link");
    let f = fx.resolve(&fx.paths(), "link/../x.txt", "proj");
    // The kernel: outside/deep/.. = outside. A text normaliser: proj/x.txt.
    assert_eq!(f.canonical, fx.p("outside/x.txt"));
    assert_eq!(f.zone, Zone::External);
}

#[test]
fn dotdot_disagreement_takes_the_stricter_reading() {
    let fx = Fx::new();
    // The project lives in the home; `deep` points two levels down inside it.
    fx.mkdir("home/proj/.git");
    fx.mkdir("home/proj/x/y");
    fx.link(&fx.p("home/proj/x/y"), "home/proj/deep");
    let f = fx.resolve(&fx.paths(), "deep/../../.bashrc", "home/proj");
    // Physically: proj/x/y/../../.bashrc = proj/.bashrc, a workspace file.
    assert_eq!(f.canonical, fx.p("home/proj/.bashrc"));
    // Textually: home/.bashrc, outside and a shell startup file.
    assert_eq!(f.zone, Zone::External);
    assert_eq!(f.protected.as_deref(), Some("shell startup file"));
}

#[test]
fn dotdot_out_of_a_missing_part_resumes_the_walk() {
    let fx = Fx::new();
    fx.link(&fx.p("outside"), "proj/out");
    let f = fx.resolve(&fx.paths(), "missing/../out/file", "proj");
    assert_eq!(f.canonical, fx.p("outside/file"));
    assert_eq!(f.zone, Zone::External);
}

#[test]
fn sibling_with_common_prefix_is_not_inside() {
    let fx = Fx::new();
    fx.mkdir("proj_evil");
    fx.touch("proj_evil/x");
    let paths = fx.paths();
    let f = fx.resolve(&paths, "../proj_evil/x", "proj");
    assert_eq!(f.canonical, fx.p("proj_evil/x"));
    assert_eq!(f.zone, Zone::External);
    let f = fx.resolve(&paths, &fx.p("proj_evil"), "proj");
    assert_eq!(f.zone, Zone::External);
    let f = fx.resolve(&paths, &fx.p("proj"), "proj");
    assert_eq!(f.zone, Zone::Workspace);
}

#[test]
fn missing_file_under_a_symlinked_dir_resolves_through_the_symlink() {
    let fx = Fx::new();
    fx.mkdir("outside/real");
    fx.link(&fx.p("outside/real"), "proj/linked");
    fx.mkdir("proj/src/inner");
    fx.link("inner", "proj/src/alias");
    let paths = fx.paths();
    let f = fx.resolve(&paths, "linked/new/dir/file.txt", "proj");
    assert_eq!(f.canonical, fx.p("outside/real/new/dir/file.txt"));
    assert_eq!(f.zone, Zone::External);
    let f = fx.resolve(&paths, "src/alias/new.rs", "proj");
    assert_eq!(f.canonical, fx.p("proj/src/inner/new.rs"));
    assert_eq!(f.zone, Zone::Workspace);
}

#[test]
fn double_slashes_dots_and_trailing_slashes_are_normalised() {
    let fx = Fx::new();
    fx.touch("proj/src/lib.rs");
    let paths = fx.paths();
    let raw = format!("/{}//src/.//lib.rs", fx.p("proj"));
    assert!(raw.starts_with("//"));
    let f = paths.resolve(&raw, "/");
    assert_eq!(f.canonical, fx.p("proj/src/lib.rs"));
    let f = fx.resolve(&paths, "./src//", "proj");
    assert_eq!(f.canonical, fx.p("proj/src"));
    assert_eq!(f.zone, Zone::Workspace);
    let f = paths.resolve("//", "/");
    assert_eq!(f.canonical, "/");
    let f = fx.resolve(&paths, ".", "proj");
    assert_eq!(f.canonical, fx.p("proj"));
}

#[test]
fn tilde_expansion() {
    let fx = Fx::new();
    fx.touch("home/notes.txt");
    let paths = fx.paths();
    let f = fx.resolve(&paths, "~/notes.txt", "proj");
    assert_eq!(f.canonical, fx.p("home/notes.txt"));
    assert_eq!(f.zone, Zone::External);
    assert_eq!(fx.resolve(&paths, "~", "proj").canonical, fx.p("home"));
    assert_eq!(fx.resolve(&paths, "~/", "proj").canonical, fx.p("home"));
    assert_eq!(paths.home(), fx.p("home"));
    // `~+` is the working directory.
    let f = fx.resolve(&paths, "~+/src", "proj");
    assert_eq!(f.canonical, fx.p("proj/src"));
    assert_eq!(f.zone, Zone::Workspace);
    // A tilde that is not first is just a character.
    let f = fx.resolve(&paths, "src/~/x", "proj");
    assert_eq!(f.canonical, fx.p("proj/src/~/x"));
}

#[test]
fn home_through_a_symlink_is_canonical() {
    let fx = Fx::new();
    fx.link(&fx.p("home"), "homelink");
    fx.touch("home/.ssh/id_ed25519");
    let env = Environment {
        home: fx.p("homelink"),
        ..fx.env.clone()
    };
    let paths = FsPaths::new(&Scopes::default(), &env);
    assert_eq!(paths.home(), fx.p("home"));
    let f = fx.resolve(&paths, "~/.ssh/id_ed25519", "proj");
    assert_eq!(f.canonical, fx.p("home/.ssh/id_ed25519"));
    assert_eq!(f.secret.as_deref(), Some("ssh keys"));
    let f = fx.resolve(&paths, &fx.p("homelink/.ssh/new_key"), "proj");
    assert_eq!(f.secret.as_deref(), Some("ssh keys"));
}

#[test]
fn tilde_user_is_looked_up_or_unresolvable() {
    let fx = Fx::new();
    let paths = fx.paths();
    for raw in [
        "~no-such-user-portcullis/x",
        "~-/x",
        "~no-such-user-portcullis",
    ] {
        let f = fx.resolve(&paths, raw, "proj");
        assert_eq!(f.zone, Zone::External, "{raw}");
        assert_eq!(f.canonical, raw, "{raw}");
        assert!(!f.canonical.contains("nonexistent"));
    }
    // The text of an unresolvable path is still checked at any depth.
    let f = fx.resolve(
        &paths,
        "~no-such-user-portcullis/repo/.git/hooks/pre-push",
        "proj",
    );
    assert_eq!(f.protected.as_deref(), Some("git hooks"));

    let passwd = fs::read_to_string("/etc/passwd").unwrap_or_default();
    let root_home = passwd
        .lines()
        .find_map(|l| l.strip_prefix("root:"))
        .and_then(|l| l.split(':').nth(4))
        .expect("this machine's /etc/passwd has root");
    let f = fx.resolve(&paths, "~root/.bash_history", "proj");
    let expected = fs::canonicalize(root_home)
        .unwrap()
        .join(".bash_history")
        .into_os_string()
        .into_string()
        .unwrap();
    assert_eq!(f.canonical, expected);
    assert_eq!(f.secret.as_deref(), Some("shell or tool history"));
}

#[test]
fn empty_and_nul_paths_are_unresolvable() {
    let fx = Fx::new();
    let paths = fx.paths();
    for raw in ["", "src/a\0b"] {
        let f = fx.resolve(&paths, raw, "proj");
        assert_eq!(f.zone, Zone::External);
        assert_eq!(f.canonical, raw);
    }
}

#[test]
fn very_long_paths_are_not_placed() {
    let fx = Fx::new();
    let raw = "a/".repeat(10_000);
    let f = fx.resolve(&fx.paths(), &raw, "proj");
    assert_eq!(f.zone, Zone::External);
    assert_eq!(f.canonical, raw);
}

#[test]
fn relative_cwd_places_only_absolute_paths() {
    let fx = Fx::new();
    let paths = fx.paths();
    let f = paths.resolve("src/x", "relative/cwd");
    assert_eq!(f.zone, Zone::External);
    assert_eq!(f.canonical, "src/x");
    let f = paths.resolve(&fx.p("proj/src"), "");
    assert_eq!(f.canonical, fx.p("proj/src"));
    assert_eq!(f.zone, Zone::External);
}

// ---- aliases ----------------------------------------------------------------

#[test]
fn proc_and_dev_fd_aliases_are_external() {
    let fx = Fx::new();
    fx.touch("proj/src/main.rs");
    let paths = fx.paths();
    let in_ws = fx.p("proj/src/main.rs");
    for raw in [
        format!("/proc/self/root{in_ws}"),
        format!("/proc/thread-self/root{in_ws}"),
        format!("/proc/1/root{in_ws}"),
        format!("/proc/self/task/1/root{in_ws}"),
        "/proc/self/cwd/src/main.rs".to_string(),
        "/proc/self/fd/3".to_string(),
        "/proc/12345/fd/0".to_string(),
        "/dev/fd/3".to_string(),
        "/dev/stdin".to_string(),
        "/dev/stdout".to_string(),
        "/dev/stderr".to_string(),
    ] {
        let f = fx.resolve(&paths, &raw, "proj");
        assert_eq!(f.zone, Zone::External, "{raw}: {f:?}");
        // Never followed as this process.
        assert_eq!(f.canonical, raw, "{raw}");
    }
}

#[test]
fn symlinks_into_proc_are_external() {
    let fx = Fx::new();
    fx.link("/proc/self/root", "proj/root");
    fx.link("/dev/fd", "proj/fds");
    let paths = fx.paths();
    let ws = fx.p("proj/src");
    let f = fx.resolve(&paths, &format!("root{ws}"), "proj");
    assert_eq!(f.zone, Zone::External);
    assert_eq!(f.canonical, format!("/proc/self/root{ws}"));
    let f = fx.resolve(&paths, "fds/3", "proj");
    assert_eq!(f.zone, Zone::External);
    assert_eq!(f.canonical, "/dev/fd/3");
}

#[test]
fn aliases_are_checked_for_what_they_name() {
    let fx = Fx::new();
    let paths = fx.paths();
    let f = fx.resolve(&paths, "/proc/self/root/etc/shadow", "proj");
    assert_eq!(f.secret.as_deref(), Some("password hashes"));
    assert_eq!(f.protected.as_deref(), Some("system files"));
    let f = fx.resolve(&paths, "/proc/self/cwd/.git/hooks/pre-commit", "proj");
    assert_eq!(f.protected.as_deref(), Some("git hooks"));
    let f = fx.resolve(&paths, "/proc/self/environ", "proj");
    assert_eq!(f.secret.as_deref(), Some("process environment"));
    let f = fx.resolve(&paths, "/proc/1/environ", "proj");
    assert_eq!(f.secret.as_deref(), Some("process environment"));
}

#[test]
fn dev_null_is_an_ordinary_external_path() {
    let fx = Fx::new();
    let f = fx.resolve(&fx.paths(), "/dev/null", "proj");
    assert_eq!(f.canonical, "/dev/null");
    assert_eq!(f.zone, Zone::External);
    assert_eq!(f.protected, None);
    assert_eq!(f.secret, None);
    assert!(!f.hard_linked && !f.blocked && !f.blocked_write);
}

// ---- hard links -------------------------------------------------------------

#[test]
fn hard_links_are_detected() {
    let fx = Fx::new();
    fx.touch("outside/original");
    fx.touch("proj/single.txt");
    fs::hard_link(fx.p("outside/original"), fx.p("proj/linked.txt")).unwrap();
    fx.link("linked.txt", "proj/sym_to_linked");
    let paths = fx.paths();
    let f = fx.resolve(&paths, "linked.txt", "proj");
    assert!(f.hard_linked);
    assert_eq!(f.zone, Zone::Workspace);
    assert!(fx.resolve(&paths, "sym_to_linked", "proj").hard_linked);
    assert!(!fx.resolve(&paths, "single.txt", "proj").hard_linked);
    // Directories always have several links; they are not hard-linked files.
    assert!(!fx.resolve(&paths, "src", "proj").hard_linked);
    assert!(!fx.resolve(&paths, "missing.txt", "proj").hard_linked);
}

// ---- project root and scopes ------------------------------------------------

#[test]
fn project_root_is_the_nearest_git_ancestor() {
    let fx = Fx::new();
    fx.mkdir("proj/src/deep/er");
    fx.touch("proj/README.md");
    let paths = fx.paths();
    assert_eq!(
        paths.project_root(&fx.p("proj/src/deep/er")),
        Some(fx.p("proj"))
    );
    let f = fx.resolve(&paths, "../../../README.md", "proj/src/deep/er");
    assert_eq!(f.canonical, fx.p("proj/README.md"));
    assert_eq!(f.zone, Zone::Workspace);
    // Without `.git`, the working directory itself.
    fx.mkdir("outside/plain/sub");
    assert_eq!(
        paths.project_root(&fx.p("outside/plain/sub")),
        Some(fx.p("outside/plain/sub"))
    );
    let f = fx.resolve(&paths, "../x", "outside/plain/sub");
    assert_eq!(f.zone, Zone::External);
    assert_eq!(
        fx.resolve(&paths, "x", "outside/plain/sub").zone,
        Zone::Workspace
    );
}

#[test]
fn git_file_marks_a_project_root() {
    let fx = Fx::new();
    fx.touch("proj/wt/.git"); // a worktree: `.git` is a file
    fx.mkdir("proj/wt/src");
    let paths = fx.paths();
    assert_eq!(
        paths.project_root(&fx.p("proj/wt/src")),
        Some(fx.p("proj/wt"))
    );
    assert_eq!(
        fx.resolve(&paths, "../../main.rs", "proj/wt/src").zone,
        Zone::External
    );
}

#[test]
fn git_in_home_does_not_widen_a_subdirectory() {
    let fx = Fx::new();
    fx.mkdir("home/.git");
    fx.mkdir("home/scratch");
    let paths = fx.paths();
    assert_eq!(
        paths.project_root(&fx.p("home/scratch")),
        Some(fx.p("home/scratch"))
    );
    assert_eq!(
        fx.resolve(&paths, "../other.txt", "home/scratch").zone,
        Zone::External
    );
    assert_eq!(paths.project_root(&fx.p("home")), Some(fx.p("home")));
    // `/` is never a project root.
    assert_eq!(paths.project_root("/"), None);
    assert_eq!(paths.resolve("/srv/x", "/").zone, Zone::External);
}

#[test]
fn symlinked_cwd_uses_the_real_project() {
    let fx = Fx::new();
    fx.link(&fx.p("proj"), "outside/projlink");
    let paths = fx.paths();
    assert_eq!(
        paths.project_root(&fx.p("outside/projlink/src")),
        Some(fx.p("proj"))
    );
    let f = fx.resolve(&paths, "lib.rs", "outside/projlink/src");
    assert_eq!(f.canonical, fx.p("proj/src/lib.rs"));
    assert_eq!(f.zone, Zone::Workspace);
}

#[test]
fn configured_roots_relative_to_the_project_root() {
    let fx = Fx::new();
    fx.mkdir("sibling");
    fx.mkdir("home/docs");
    fx.mkdir("proj/src/sibling"); // must not be picked: entries are not cwd-relative
    let paths = fx.paths_with(Scopes {
        roots: strings(&["../sibling"]),
        read_roots: strings(&["~/docs", &fx.p("outside")]),
        ..Scopes::default()
    });
    assert_eq!(
        paths.workspace_roots(&fx.p("proj/src")),
        vec![fx.p("proj"), fx.p("sibling")]
    );
    let f = fx.resolve(&paths, "../../sibling/a.txt", "proj/src");
    assert_eq!(f.zone, Zone::Workspace);
    let f = fx.resolve(&paths, "~/docs/guide.md", "proj/src");
    assert_eq!(f.zone, Zone::ReadRoot);
    let f = fx.resolve(&paths, &fx.p("outside/y"), "proj/src");
    assert_eq!(f.zone, Zone::ReadRoot);
    let f = fx.resolve(&paths, &fx.p("outside_more/y"), "proj/src");
    assert_eq!(f.zone, Zone::External);
    let f = fx.resolve(&paths, "~/other.md", "proj/src");
    assert_eq!(f.zone, Zone::External);
}

#[test]
fn blocked_and_blocked_write_entries() {
    let fx = Fx::new();
    fx.mkdir("proj/secrets");
    fx.mkdir("proj/secrets_evil");
    fx.touch("proj/config/prod.toml");
    fx.mkdir("home/private");
    fx.mkdir("proj/vendor");
    let paths = fx.paths_with(Scopes {
        blocked: strings(&["secrets/", "~/private"]),
        blocked_write: strings(&["config/prod.toml", &fx.p("proj/vendor")]),
        ..Scopes::default()
    });
    let check = |raw: &str, blocked: bool, blocked_write: bool| {
        let f = fx.resolve(&paths, raw, "proj/src");
        assert_eq!(
            (f.blocked, f.blocked_write),
            (blocked, blocked_write),
            "{raw}: {f:?}"
        );
    };
    check("../secrets", true, false);
    check("../secrets/a/b.txt", true, false);
    check("../secrets_evil/a", false, false);
    check("~/private/diary", true, false);
    check("~/private2", false, false);
    check("../config/prod.toml", false, true);
    check("../config/prod.toml.bak", false, false);
    check("../config/dev.toml", false, false);
    check("../vendor/lib/x.c", false, true);
    check("main.rs", false, false);
    // Through a symlink to a blocked directory.
    fx.link(&fx.p("proj/secrets"), "proj/src/innocent");
    check("innocent/key", true, false);
    // Entries are relative to the project root, also from another cwd.
    fx.mkdir("proj/other/secrets");
    let f = fx.resolve(&paths, "secrets/x", "proj/other");
    assert!(!f.blocked);
}

#[test]
fn blocked_entry_that_is_a_symlink_blocks_both_names() {
    let fx = Fx::new();
    fx.mkdir("outside/vault");
    fx.link(&fx.p("outside/vault"), "proj/vault");
    let paths = fx.paths_with(Scopes {
        blocked: strings(&["vault"]),
        ..Scopes::default()
    });
    assert!(fx.resolve(&paths, "vault/k", "proj").blocked);
    assert!(fx.resolve(&paths, &fx.p("outside/vault/k"), "proj").blocked);
    assert!(!fx.resolve(&paths, &fx.p("outside/k"), "proj").blocked);
    // Retargeted after the scopes were cached: the name stays blocked.
    fx.mkdir("outside/elsewhere");
    fs::remove_file(fx.p("proj/vault")).unwrap();
    fx.link(&fx.p("outside/elsewhere"), "proj/vault");
    let f = fx.resolve(&paths, "vault/k", "proj");
    assert_eq!(f.canonical, fx.p("outside/elsewhere/k"));
    assert!(f.blocked);
}

#[test]
fn blocked_entry_in_a_symlink_loop_is_kept_as_written() {
    let fx = Fx::new();
    fx.link("loop", "proj/loop");
    let paths = fx.paths_with(Scopes {
        blocked: strings(&["loop"]),
        ..Scopes::default()
    });
    let f = fx.resolve(&paths, "loop/x", "proj");
    assert!(f.blocked);
    assert_eq!(f.zone, Zone::External);
    assert!(!fx.resolve(&paths, "loopy", "proj").blocked);
}

#[test]
fn cached_scopes_are_forgotten_on_request() {
    let fx = Fx::new();
    fx.mkdir("outside/late/sub");
    let paths = fx.paths();
    let cwd = fx.p("outside/late/sub");
    assert_eq!(paths.project_root(&cwd), Some(cwd.clone()));
    fx.mkdir("outside/late/.git");
    assert_eq!(paths.project_root(&cwd), Some(cwd.clone()));
    paths.forget_cwds();
    assert_eq!(paths.project_root(&cwd), Some(fx.p("outside/late")));
}

// ---- protected --------------------------------------------------------------

#[test]
fn protected_paths() {
    let fx = Fx::new();
    fx.mkdir("proj/.git/hooks");
    fx.touch("proj/.git/config");
    fx.mkdir("proj/.claude/worktrees/feature/src");
    let paths = fx.paths();
    let cases: &[(&str, Option<&str>)] = &[
        (".git/hooks/pre-commit", Some("git hooks")),
        ("src/../.git/hooks", Some("git hooks")),
        (".git/config", Some("git configuration")),
        (".git/HEAD", Some("git repository internals")),
        (".git", Some("git repository internals")),
        ("sub/repo/.git/config", Some("git configuration")),
        (".gitmodules", Some("git submodules")),
        ("src/.envrc", Some("direnv startup file")),
        (".mcp.json", Some("agent settings")),
        (".claude/settings.json", Some("agent settings")),
        (".claude", Some("agent settings")),
        (".claude/worktrees/feature/src/main.rs", None),
        (
            ".claude/worktrees/feature/.claude/settings.json",
            Some("agent settings"),
        ),
        (".codex/config.toml", Some("agent settings")),
        (".cursor/hooks.json", Some("agent settings")),
        (".gemini/settings.json", Some("agent settings")),
        (".vscode/tasks.json", Some("editor settings")),
        (".idea/workspace.xml", Some("editor settings")),
        (".husky/pre-commit", Some("git hook manager configuration")),
        (
            ".pre-commit-config.yaml",
            Some("git hook manager configuration"),
        ),
        (
            ".npmrc",
            Some("package manager or build tool configuration"),
        ),
        (
            ".yarnrc.yml",
            Some("package manager or build tool configuration"),
        ),
        (
            ".cargo/config.toml",
            Some("package manager or build tool configuration"),
        ),
        ("~/.bashrc", Some("shell startup file")),
        ("~/.zshenv", Some("shell startup file")),
        ("~/.profile", Some("shell startup file")),
        ("~/.config/fish/config.fish", Some("shell startup file")),
        ("~/.ssh/authorized_keys", Some("ssh configuration and keys")),
        ("~/.gitconfig", Some("git configuration")),
        ("~/.config/git/config", Some("git configuration")),
        ("~/.claude.json", Some("agent settings")),
        ("~/.claude/settings.json", Some("agent settings")),
        (
            "~/.config/portcullis/config.toml",
            Some("portcullis configuration"),
        ),
        ("~/.config/portcullis", Some("portcullis configuration")),
        (".portcullis.toml", Some("portcullis configuration")),
        ("sub/.portcullis.toml", Some("portcullis configuration")),
        (
            "~/.local/share/portcullis/portcullis.db",
            Some("portcullis data"),
        ),
        ("/etc/passwd", Some("system files")),
        ("/usr/bin/env", Some("system files")),
        ("/boot/vmlinuz", Some("system files")),
        ("/lib64/x.so", Some("system files")),
        // Not protected.
        ("src/main.rs", None),
        (".bashrc", None), // a workspace file of that name is not sourced
        ("~/.bashrc_backup", None),
        ("~/.config/portcullis_other/x", None),
        ("git/hooks/x", None),
        (".gitignore", None),
        ("/tmp/x", None),
        ("/usrx/y", None),
    ];
    for (raw, reason) in cases {
        let f = fx.resolve(&paths, raw, "proj");
        assert_eq!(f.protected.as_deref(), *reason, "{raw}: {f:?}");
    }
}

#[test]
fn protection_follows_symlinks_both_ways() {
    let fx = Fx::new();
    // A dotfile managed in a dotfiles repository.
    fx.touch("home/dotfiles/bashrc");
    fx.link(&fx.p("home/dotfiles/bashrc"), "home/.bashrc");
    // A workspace link to a hook, and a hook that is a link into the workspace.
    fx.mkdir("proj/.git/hooks");
    fx.link(&fx.p("proj/.git/hooks"), "proj/hooks");
    fx.touch("proj/scripts/pre-commit");
    fx.link("../../scripts/pre-commit", "proj/.git/hooks/pre-commit");
    let paths = fx.paths();
    let f = fx.resolve(&paths, "~/dotfiles/bashrc", "proj");
    assert_eq!(f.protected.as_deref(), Some("shell startup file"));
    let f = fx.resolve(&paths, "~/.bashrc", "proj");
    assert_eq!(f.canonical, fx.p("home/dotfiles/bashrc"));
    assert_eq!(f.protected.as_deref(), Some("shell startup file"));
    let f = fx.resolve(&paths, "hooks/post-checkout", "proj");
    assert_eq!(f.canonical, fx.p("proj/.git/hooks/post-checkout"));
    assert_eq!(f.protected.as_deref(), Some("git hooks"));
    // Written through the hook's name: protected, although the target is not.
    let f = fx.resolve(&paths, ".git/hooks/pre-commit", "proj");
    assert_eq!(f.canonical, fx.p("proj/scripts/pre-commit"));
    assert_eq!(f.protected.as_deref(), Some("git hooks"));
}

#[test]
fn portcullis_dirs_from_the_environment_are_protected() {
    let fx = Fx::new();
    let env = Environment {
        config_dir: fx.p("outside/cfg"),
        data_dir: fx.p("outside/data"),
        ..fx.env.clone()
    };
    let paths = FsPaths::new(&Scopes::default(), &env);
    let f = fx.resolve(&paths, &fx.p("outside/cfg/config.toml"), "proj");
    assert_eq!(f.protected.as_deref(), Some("portcullis configuration"));
    let f = fx.resolve(&paths, &fx.p("outside/data/portcullis.db"), "proj");
    assert_eq!(f.protected.as_deref(), Some("portcullis data"));
    assert_eq!(
        f.secret.as_deref(),
        Some("portcullis data (grants, session tokens)")
    );
    let f = fx.resolve(&paths, &fx.p("outside/cfg2"), "proj");
    assert_eq!(f.protected, None);
}

// ---- secrets ----------------------------------------------------------------

#[test]
fn secret_paths() {
    let fx = Fx::new();
    fx.touch("outside/app/.env");
    fx.touch("proj/.env");
    let paths = fx.paths();
    let cases: &[(&str, Option<&str>)] = &[
        ("~/.ssh/id_rsa", Some("ssh keys")),
        ("~/.aws/credentials", Some("cloud credentials")),
        (
            "~/.config/gcloud/application_default_credentials.json",
            Some("cloud credentials"),
        ),
        ("~/.azure/msal_token_cache.json", Some("cloud credentials")),
        ("~/.gnupg/private-keys-v1.d/x.key", Some("gpg keys")),
        ("~/.kube/config", Some("cluster credentials")),
        ("~/.docker/config.json", Some("registry credentials")),
        ("~/.netrc", Some("credentials")),
        ("~/.npmrc", Some("credentials")),
        ("~/.pypirc", Some("credentials")),
        ("~/.git-credentials", Some("credentials")),
        ("~/.config/gh/hosts.yml", Some("credentials")),
        ("~/.bash_history", Some("shell or tool history")),
        ("~/.zsh_history", Some("shell or tool history")),
        ("~/.python_history", Some("shell or tool history")),
        ("/etc/shadow", Some("password hashes")),
        ("/etc/gshadow", Some("password hashes")),
        ("/etc/sudoers", Some("sudo configuration")),
        ("/etc/sudoers.d/admins", Some("sudo configuration")),
        (
            "../outside/app/.env",
            Some("environment file with credentials"),
        ),
        (
            "../outside/app/.env.production",
            Some("environment file with credentials"),
        ),
        (
            "../outside/id_ed25519",
            Some("private key outside the workspace"),
        ),
        (
            "../outside/tls/server.pem",
            Some("private key outside the workspace"),
        ),
        (
            "../outside/tls/server.key",
            Some("private key outside the workspace"),
        ),
        // Not secret.
        // Even the project's own: it holds credentials (`curl -d @.env …`).
        (".env", Some("environment file with credentials")),
        (
            "config/.env.test",
            Some("environment file with credentials"),
        ),
        ("tests/fixtures/server.pem", None),
        ("~/.kube/cache/x", None),
        ("~/.docker/other.json", None),
        ("/etc/passwd", None),
        ("../outside/app/env", None),
        ("../outside/app/.environment", None),
        ("src/main.rs", None),
    ];
    for (raw, reason) in cases {
        let f = fx.resolve(&paths, raw, "proj");
        assert_eq!(f.secret.as_deref(), *reason, "{raw}: {f:?}");
    }
}

#[test]
fn env_file_in_a_read_root_is_secret() {
    let fx = Fx::new();
    fx.touch("outside/lib/.env");
    let paths = fx.paths_with(Scopes {
        read_roots: strings(&[&fx.p("outside/lib")]),
        ..Scopes::default()
    });
    let f = fx.resolve(&paths, &fx.p("outside/lib/.env"), "proj");
    assert_eq!(f.zone, Zone::ReadRoot);
    assert_eq!(
        f.secret.as_deref(),
        Some("environment file with credentials")
    );
}

#[test]
fn workspace_symlink_to_an_outside_env_is_secret() {
    let fx = Fx::new();
    fx.touch("outside/app/.env");
    fx.link(&fx.p("outside/app/.env"), "proj/app.env");
    let f = fx.resolve(&fx.paths(), "app.env", "proj");
    assert_eq!(f.zone, Zone::External);
    assert_eq!(
        f.secret.as_deref(),
        Some("environment file with credentials")
    );
}

#[test]
fn resolves_from_many_threads() {
    let fx = Fx::new();
    let paths = fx.paths();
    let cwd = fx.p("proj");
    std::thread::scope(|s| {
        for _ in 0..4 {
            s.spawn(|| {
                for _ in 0..50 {
                    assert_eq!(paths.resolve("src", &cwd).zone, Zone::Workspace);
                }
            });
        }
    });
}
