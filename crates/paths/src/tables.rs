//! The data: which paths are protected (never writable) and which are secret
//! (not readable without a person). One place, two tables; the matching code
//! is generic (`pattern.rs`).
//!
//! Pattern syntax: an anchor — `/` absolute, `~/` the user's home, `~root/`
//! root's home (from `/etc/passwd`), `$config/` and `$data/` portcullis'
//! directories, `**/` at any depth — then components, where `*` and `?` glob
//! within one component, then optionally `/**`: "this path and everything
//! under it". Without `/**` a pattern names exactly one path.
//!
//! Patterns are matched against the canonical path *and* against the path as
//! written (made absolute, `..` resolved in the text), and the literal part of
//! an anchored pattern is itself resolved through symlinks, so a dotfile that
//! is a symlink into a dotfiles repository protects its target too. The first
//! matching row gives the reason.

/// One row of a table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Entry {
    /// The pattern (syntax in the module documentation).
    pub pattern: &'static str,
    /// Why, for people and models: short, lower case.
    pub reason: &'static str,
    /// Applies only to paths outside the workspace roots (a read root counts
    /// as outside): the project's own `.env` or test key is its business.
    pub outside_workspace_only: bool,
    /// A pattern below the matched part that is exempt, at that position
    /// (`.claude/worktrees/**`: Claude Code's worktrees are work, not
    /// settings). Same syntax without an anchor.
    pub except: Option<&'static str>,
}

const fn row(pattern: &'static str, reason: &'static str) -> Entry {
    Entry {
        pattern,
        reason,
        outside_workspace_only: false,
        except: None,
    }
}

const fn outside(pattern: &'static str, reason: &'static str) -> Entry {
    Entry {
        outside_workspace_only: true,
        ..row(pattern, reason)
    }
}

const fn except(pattern: &'static str, reason: &'static str, exempt: &'static str) -> Entry {
    Entry {
        except: Some(exempt),
        ..row(pattern, reason)
    }
}

const PORTCULLIS_CONFIG: &str = "portcullis configuration";
const PORTCULLIS_DATA: &str = "portcullis data";
const GIT_CONFIG: &str = "git configuration";
const SHELL_STARTUP: &str = "shell startup file";
const LOGIN_STARTUP: &str = "login or service startup";
const AGENT_SETTINGS: &str = "agent settings";
const EDITOR_SETTINGS: &str = "editor settings";
const GIT_HOOK_MANAGER: &str = "git hook manager configuration";
const BUILD_CONFIG: &str = "package manager or build tool configuration";
const CI_CONFIG: &str = "continuous integration configuration";
const SYSTEM: &str = "system files";

/// Never writable, even inside the workspace: what would let an agent change
/// its own policy, approve itself, or run code later outside any check
/// (hooks, shell startup files, agent and editor settings, tool
/// configuration that names programs to run), and the system.
///
/// All of `.git/` is protected, not only `hooks/` and `config`: `HEAD`,
/// `info/attributes`, `modules/*/config`, `worktrees/*` and a `.git` file
/// (a `gitdir:` pointer) all steer what git runs or which repository it
/// uses. Git itself writes there when the agent *runs* git; that is an
/// execution, judged as such, not a write by the agent.
pub static PROTECTED: &[Entry] = &[
    // portcullis itself: the agent must not edit its own policy or grants.
    row("$config/**", PORTCULLIS_CONFIG),
    row("$data/**", PORTCULLIS_DATA),
    row("~/.config/portcullis/**", PORTCULLIS_CONFIG),
    row("~/.local/share/portcullis/**", PORTCULLIS_DATA),
    // A project's own policy layer: trusted by path in the user's config, so an
    // agent that wrote it would choose its own rules.
    row("**/.portcullis.toml", PORTCULLIS_CONFIG),
    // git: hooks and configuration run programs.
    row("**/.git/hooks/**", "git hooks"),
    row("**/.git/config", GIT_CONFIG),
    row("**/.git/**", "git repository internals"),
    row("**/.gitmodules", "git submodules"),
    row("~/.gitconfig", GIT_CONFIG),
    row("~/.config/git/**", GIT_CONFIG),
    // Shell startup files of the user.
    row("~/.bashrc", SHELL_STARTUP),
    row("~/.bashrc.d/**", SHELL_STARTUP),
    row("~/.bash_profile", SHELL_STARTUP),
    row("~/.bash_login", SHELL_STARTUP),
    row("~/.bash_logout", SHELL_STARTUP),
    row("~/.profile", SHELL_STARTUP),
    row("~/.zshrc", SHELL_STARTUP),
    row("~/.zshenv", SHELL_STARTUP),
    row("~/.zprofile", SHELL_STARTUP),
    row("~/.zlogin", SHELL_STARTUP),
    row("~/.zlogout", SHELL_STARTUP),
    row("~/.config/zsh/**", SHELL_STARTUP),
    row("~/.config/fish/**", SHELL_STARTUP),
    row("~/.inputrc", SHELL_STARTUP),
    row("**/.envrc", "direnv startup file"),
    // Other things run at login or by the service manager.
    row("~/.pam_environment", LOGIN_STARTUP),
    row("~/.config/environment.d/**", LOGIN_STARTUP),
    row("~/.config/autostart/**", LOGIN_STARTUP),
    row("~/.config/systemd/**", LOGIN_STARTUP),
    row("~/.xprofile", LOGIN_STARTUP),
    row("~/.xsessionrc", LOGIN_STARTUP),
    row("~/.xinitrc", LOGIN_STARTUP),
    row("~/.ssh/**", "ssh configuration and keys"),
    // Agents' settings: permissions, hooks, MCP servers.
    row("**/.mcp.json", AGENT_SETTINGS),
    except("**/.claude/**", AGENT_SETTINGS, "worktrees/**"),
    row("~/.claude.json", AGENT_SETTINGS),
    row("**/.codex/**", AGENT_SETTINGS),
    row("**/.cursor/**", AGENT_SETTINGS),
    row("**/.gemini/**", AGENT_SETTINGS),
    row("**/.pi/**", AGENT_SETTINGS),
    // Other agents: modes, rules that grant tools, hooks, MCP servers, the
    // commands they run to lint and test.
    row("**/.roo/**", AGENT_SETTINGS),
    row("**/.roomodes", AGENT_SETTINGS),
    row("**/.amazonq/**", AGENT_SETTINGS),
    row("**/opencode.json", AGENT_SETTINGS),
    row("**/opencode.jsonc", AGENT_SETTINGS),
    row("**/.opencode/**", AGENT_SETTINGS),
    row("**/.continue/**", AGENT_SETTINGS),
    row("**/.windsurf/**", AGENT_SETTINGS),
    row("**/.aider*", AGENT_SETTINGS),
    row("**/.kiro/**", AGENT_SETTINGS),
    // Editors and dev containers: tasks, launch configurations, extensions.
    row("**/.vscode/**", EDITOR_SETTINGS),
    row("**/.idea/**", EDITOR_SETTINGS),
    row("**/.devcontainer/**", EDITOR_SETTINGS),
    row("**/.devcontainer.json", EDITOR_SETTINGS),
    row("**/*.code-workspace", EDITOR_SETTINGS),
    row("**/.zed/**", EDITOR_SETTINGS),
    // Other version control: Mercurial's configuration names hooks to run.
    row("**/.hg/hgrc", "mercurial configuration"),
    row("~/.hgrc", "mercurial configuration"),
    // Continuous integration: runs the code it names, with the project's secrets.
    row("**/.github/workflows/**", CI_CONFIG),
    row("**/.github/actions/**", CI_CONFIG),
    row("**/.gitlab-ci.yml", CI_CONFIG),
    row("**/.circleci/**", CI_CONFIG),
    row("**/.buildkite/**", CI_CONFIG),
    row("**/azure-pipelines.yml", CI_CONFIG),
    row("**/bitbucket-pipelines.yml", CI_CONFIG),
    row("**/.travis.yml", CI_CONFIG),
    // Git hook managers.
    row("**/.husky/**", GIT_HOOK_MANAGER),
    row("**/.pre-commit-config.yaml", GIT_HOOK_MANAGER),
    row("**/lefthook.yml", GIT_HOOK_MANAGER),
    row("**/lefthook.yaml", GIT_HOOK_MANAGER),
    row("**/.lefthook.yml", GIT_HOOK_MANAGER),
    row("**/.lefthook.yaml", GIT_HOOK_MANAGER),
    // Tool configuration that names programs to run (scripts, runners,
    // wrappers, preprocessors).
    row("**/.npmrc", BUILD_CONFIG),
    row("**/.yarnrc*", BUILD_CONFIG),
    row("**/.yarn/**", BUILD_CONFIG),
    row("**/.pnp.*", BUILD_CONFIG),
    row("**/bunfig.toml", BUILD_CONFIG),
    row("**/.cargo/**", BUILD_CONFIG),
    row("**/.mvn/**", BUILD_CONFIG),
    row("**/gradle/wrapper/gradle-wrapper.properties", BUILD_CONFIG),
    row("**/.bazelrc", BUILD_CONFIG),
    row("**/.ripgreprc", BUILD_CONFIG),
    // The system.
    row("/etc/**", SYSTEM),
    row("/usr/**", SYSTEM),
    row("/boot/**", SYSTEM),
    row("/bin/**", SYSTEM),
    row("/sbin/**", SYSTEM),
    row("/lib*/**", SYSTEM),
];

const SSH_KEYS: &str = "ssh keys";
const CLOUD: &str = "cloud credentials";
const TOKENS: &str = "credentials";
const AGENT_CREDENTIALS: &str = "agent credentials";
const HISTORY: &str = "shell or tool history";
const PASSWORDS: &str = "password hashes";
const ENV_OUTSIDE: &str = ".env outside the workspace";
const ENV_SECRET: &str = "environment file with credentials";
const KEY_OUTSIDE: &str = "private key outside the workspace";
const ACTS_FOR_USER: &str = "socket of a program that acts for the user";

/// Not readable without a person: keys, tokens, password stores, histories
/// (they hold pasted secrets), other processes' environments, and
/// portcullis' own data (grants and session tokens would let the agent
/// approve itself).
///
/// `.env` files and key files are secret only outside the workspace roots:
/// inside, they are the project's own files, which the agent works on.
pub static SECRETS: &[Entry] = &[
    row("$data/**", "portcullis data (grants, session tokens)"),
    row(
        "~/.local/share/portcullis/**",
        "portcullis data (grants, session tokens)",
    ),
    row("~/.ssh/**", SSH_KEYS),
    row("~/.aws/**", CLOUD),
    row("~/.config/gcloud/**", CLOUD),
    row("~/.azure/**", CLOUD),
    row("~/.kube/config", "cluster credentials"),
    row("~/.docker/config.json", "registry credentials"),
    row("~/.gnupg/**", "gpg keys"),
    row("~/.password-store/**", "password store"),
    row("~/.local/share/keyrings/**", "keyring"),
    row("~/.netrc", TOKENS),
    row("~/.git-credentials", TOKENS),
    row("~/.config/git/credentials", TOKENS),
    row("~/.config/gh/hosts.yml", TOKENS),
    row("~/.npmrc", TOKENS),
    row("~/.pypirc", TOKENS),
    row("~/.cargo/credentials", TOKENS),
    row("~/.cargo/credentials.toml", TOKENS),
    row("~/.gem/credentials", TOKENS),
    row("~/.vault-token", TOKENS),
    row("~/.claude/.credentials.json", AGENT_CREDENTIALS),
    row("~/.codex/auth.json", AGENT_CREDENTIALS),
    row("~/.gemini/oauth_creds.json", AGENT_CREDENTIALS),
    row("~/.bash_history", HISTORY),
    row("~/.zsh_history", HISTORY),
    row("~/.histfile", HISTORY),
    row("~/.python_history", HISTORY),
    row("~/.node_repl_history", HISTORY),
    row("~/.psql_history", HISTORY),
    row("~/.mysql_history", HISTORY),
    row("~/.sqlite_history", HISTORY),
    row("~/.local/share/fish/fish_history", HISTORY),
    row("~root/.ssh/**", SSH_KEYS),
    row("~root/.bash_history", HISTORY),
    row("~root/.zsh_history", HISTORY),
    row("~root/.histfile", HISTORY),
    row("~root/.python_history", HISTORY),
    row("~root/.node_repl_history", HISTORY),
    row("~root/.psql_history", HISTORY),
    row("~root/.mysql_history", HISTORY),
    row("~root/.sqlite_history", HISTORY),
    row("~root/.local/share/fish/fish_history", HISTORY),
    row("/etc/shadow", PASSWORDS),
    row("/etc/shadow-", PASSWORDS),
    row("/etc/gshadow", PASSWORDS),
    row("/etc/gshadow-", PASSWORDS),
    row("/etc/sudoers*/**", "sudo configuration"),
    row("/etc/ssh/ssh_host_*_key", "ssh host keys"),
    row("/proc/*/environ", "process environment"),
    row("/proc/*/task/*/environ", "process environment"),
    row("/proc/*/mem", "process memory"),
    row("/proc/*/task/*/mem", "process memory"),
    // A `.env` holds credentials even inside the project (and is an easy way to
    // exfiltrate them: `curl -d @.env …`): never read without a person.
    row("**/.env", ENV_SECRET),
    row("**/.env.*", ENV_SECRET),
    outside("**/.envrc", ENV_OUTSIDE),
    outside("**/id_rsa", KEY_OUTSIDE),
    outside("**/id_dsa", KEY_OUTSIDE),
    outside("**/id_ecdsa", KEY_OUTSIDE),
    outside("**/id_ed25519", KEY_OUTSIDE),
    outside("**/*.pem", KEY_OUTSIDE),
    outside("**/*.key", KEY_OUTSIDE),
    outside("**/*.p12", KEY_OUTSIDE),
    outside("**/*.pfx", KEY_OUTSIDE),
    // Sockets of programs that act for the user outside any confinement: a
    // container engine (a container with `/` mounted is the host), the
    // user's service manager and session bus (they start programs), an ssh
    // or gpg agent (it signs with the user's keys), the X server (it types
    // into other windows).
    row("/run/docker.sock", ACTS_FOR_USER),
    row("/var/run/docker.sock", ACTS_FOR_USER),
    row("/run/containerd/**", ACTS_FOR_USER),
    row("/run/podman/**", ACTS_FOR_USER),
    row("/run/dbus/system_bus_socket", ACTS_FOR_USER),
    row("/run/user/*/**", ACTS_FOR_USER),
    row("/tmp/ssh-*/**", ACTS_FOR_USER),
    row("/tmp/.X11-unix/**", ACTS_FOR_USER),
];

/// Entries of the home directory that hold programs and their libraries, not
/// projects: readable inside a confinement (with the home's dot-entries,
/// which hold tools' configuration and caches), while the rest of the home —
/// other projects, documents, downloads — is not.
pub static HOME_TOOL_DIRS: &[&str] = &[
    "bin",
    "go",
    "sdk",
    "snap",
    "perl5",
    "miniconda3",
    "anaconda3",
    "miniforge3",
    "mambaforge",
    "micromamba",
];

/// What git itself writes inside a repository's `.git` directory in
/// ordinary work (commit, fetch, checkout, merge, rebase, stash, gc):
/// writable inside a confined run, so an allowed `git commit` works there.
/// The analysis still protects all of `.git` from the agent's own writes;
/// everything else in `.git` — `config`, `hooks/`, `info/`, `modules/`,
/// `worktrees/`, `commondir` … which steer what git runs or which repository
/// it uses — stays read-only inside, and cannot be created. Directories
/// (with everything below them):
pub static GIT_DATA_TREES: &[&str] = &[
    "objects",
    "refs",
    "logs",
    "rebase-merge",
    "rebase-apply",
    "sequencer",
    "rr-cache",
    "lfs",
];

/// … and files, each also with a suffix after a dot (`index.lock`,
/// `index.stash.1234`, `packed-refs.new`: git writes a lock or temporary
/// file, then renames it into place), and the temporary indexes of a commit
/// with paths (`next-index-1234.lock`).
pub static GIT_DATA_FILES: &[&str] = &[
    "index",
    "HEAD",
    "ORIG_HEAD",
    "FETCH_HEAD",
    "MERGE_HEAD",
    "MERGE_MSG",
    "MERGE_MODE",
    "MERGE_RR",
    "AUTO_MERGE",
    "CHERRY_PICK_HEAD",
    "REVERT_HEAD",
    "REBASE_HEAD",
    "COMMIT_EDITMSG",
    "TAG_EDITMSG",
    "SQUASH_MSG",
    "NOTES_MERGE_PARTIAL",
    "NOTES_MERGE_REF",
    "packed-refs",
    "shallow",
    "gc.pid",
    "gc.log",
    "BISECT_LOG",
    "BISECT_START",
    "BISECT_TERMS",
    "BISECT_NAMES",
    "BISECT_EXPECTED_REV",
    "BISECT_ANCESTORS_OK",
    "BISECT_RUN",
];

/// Whether `rel`, the components below a `.git` directory, is git's own
/// data ([`GIT_DATA_TREES`], [`GIT_DATA_FILES`]).
pub fn is_git_data(rel: &[&str]) -> bool {
    match rel {
        [] => false,
        [first, rest @ ..] => {
            GIT_DATA_TREES.contains(first)
                || (rest.is_empty()
                    && (GIT_DATA_FILES.iter().any(|f| {
                        first
                            .strip_prefix(f)
                            .is_some_and(|tail| tail.is_empty() || tail.starts_with('.'))
                    }) || first.starts_with("next-index-")))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pattern::parse;

    #[test]
    fn every_pattern_parses() {
        for e in PROTECTED.iter().chain(SECRETS) {
            assert!(parse(e.pattern).is_some(), "bad pattern {}", e.pattern);
            if let Some(x) = e.except {
                assert!(parse_except(x), "bad exception {x}");
            }
            assert!(!e.reason.is_empty());
        }
    }

    fn parse_except(x: &'static str) -> bool {
        crate::pattern::parse_relative(x).is_some()
    }

    #[test]
    fn git_data_is_what_git_writes_and_nothing_that_steers_it() {
        for data in [
            &["objects", "ab", "cdef"][..],
            &["refs", "heads", "main"],
            &["index.lock"],
            &["index.stash.123.lock"],
            &["packed-refs.new"],
            &["next-index-99.lock"],
            &["HEAD"],
            &["logs"],
        ] {
            assert!(is_git_data(data), "{data:?}");
        }
        for steer in [
            &["config"][..],
            &["config.lock"],
            &["hooks", "pre-commit"],
            &["info", "attributes"],
            &["modules", "sub", "config"],
            &["worktrees", "w", "gitdir"],
            &["commondir"],
            &["HEAD", "x"],
            &["HEADS"],
            &["indexes"],
            &[],
        ] {
            assert!(!is_git_data(steer), "{steer:?}");
        }
    }

    #[test]
    fn no_duplicate_patterns() {
        for table in [PROTECTED, SECRETS] {
            for (i, a) in table.iter().enumerate() {
                assert!(
                    table[i + 1..].iter().all(|b| b.pattern != a.pattern),
                    "duplicate {}",
                    a.pattern
                );
            }
        }
    }
}
