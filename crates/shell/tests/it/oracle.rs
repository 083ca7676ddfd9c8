//! The oracle test: real bash says what executes, the analysis must have seen it.
//!
//! Every command of the corpus runs as `bash -c COMMAND` inside a throwaway
//! bubblewrap sandbox: read-only root, tmpfs `/tmp`, `/run` and `/home` (HOME
//! and the work dir), fresh `/dev` and `/proc`, no network, all capabilities
//! dropped, empty environment. Every program name on PATH, and every program in
//! the system's bin directories, is a stub ([`STUB`]) that logs its name and
//! argv. Wrappers (`env`, `xargs`, `sh`, `git` …) and plain data filters (`cat`,
//! `base64` …) then run for real, so what they execute is logged too. The bin
//! directories themselves are covered with stubs, so absolute paths (`/bin/rm`),
//! a cleared PATH (`env -i id`) and `command -p` are logged as well.
//!
//! A case fails when the log shows a program that `analyze` neither reported
//! (compared by basename) nor covered with an opaque part. All failures are
//! collected and listed at the end, each with how the missed program was run
//! (path and parent process) and what the analysis had.
//!
//! Choices that keep the oracle honest:
//! - the command runs with the real `/bin/bash` (bound at `/run/oracle/bash`, as
//!   the stub's interpreter is, since `/usr/bin` holds only stubs);
//! - every word of the corpus that could be a program name gets a stub too, so
//!   a program that is not installed (`cargo`, `npx`) still "runs" and is seen;
//! - the work dir starts as a small git repository ([`make_template`]), so git
//!   really runs the hooks, aliases and upload-pack commands a case asks for;
//! - bash's startup files (`/etc/profile` …) are empty, so a login shell runs
//!   only what the case says;
//! - the sandbox waits for processes the case left in the background.
//!
//! Needs `bwrap` (`apt-get install -y bubblewrap`) and a kernel that lets it
//! create namespaces. The whole corpus takes about 10 s on two cores.

// Test code: a failed unwrap, index or panic is a failed test.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

use crate::common;

use common::CorpusCase;
use portcullis_shell::{Analysis, Effect, analyze};
use std::collections::BTreeSet;
use std::ffi::{OsStr, OsString};
use std::fs;
use std::os::unix::fs::{PermissionsExt, symlink};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::thread;
use std::time::{Duration, Instant};

/// The stub every program name points to (see the script's comments).
const STUB: &str = include_str!("../oracle_stub.sh");

/// Runs one case inside the sandbox. `$1` is the real `cp`, `$2` the real
/// `sleep` (absolute paths to the real programs, so the runner's own work is
/// not logged), `$3` the command under test.
const RUNNER: &str = r#"
"$1" -a /run/oracle/template/. . || { echo "oracle: cannot copy the work dir template" >&2; exit 90; }
/run/oracle/bash -c "$3" bash </dev/null
# Processes the case left running (`cmd &`, `setsid -f`, `nohup`) die with the
# sandbox: give them up to 3 s to finish so what they execute is logged.
for _ in {1..60}; do
    busy=
    for p in /proc/[0-9]*; do
        case ${p#/proc/} in 1 | "$$") ;; *) busy=1 ;; esac
    done
    [[ -z $busy ]] && break
    "$2" 0.05
done
exit 0
"#;

/// Where the oracle's own files live inside the sandbox (under a tmpfs `/run`).
const ORACLE: &str = "/run/oracle";
const HOME: &str = "/home/user";
const WORK_DIR: &str = "/home/user/proj";

/// The system's program directories, in the usual PATH order. Each one that
/// exists is covered with the stub directory inside the sandbox.
const BIN_DIRS: &[&str] = &[
    "/usr/local/sbin",
    "/usr/local/bin",
    "/usr/sbin",
    "/usr/bin",
    "/sbin",
    "/bin",
];

/// Programs that run other programs. Their stub logs and then runs the real
/// program, so nested executions go through the stubs too.
const WRAPPERS: &str = "bash sh dash env nice nohup setsid stdbuf timeout xargs find flock ionice \
    taskset chrt chroot script sudo strace su awk gawk mawk nawk sed busybox git make split sdiff diff3";

/// Programs that only move data (or touch files in the sandbox's tmpfs). They
/// run for real so that pipelines carry real data: `echo ~ | xargs rm`,
/// `base64 -d | sh`, a script written with `cat >` and then run.
const FILTERS: &str = "cat tac head tail tr cut sort uniq wc base64 base32 basenc xxd od rev \
    paste fold nl comm join printf echo seq basename dirname realpath readlink pwd true false \
    test [ expr grep tee md5sum sha256sum date ls chmod mkdir touch cp mv ln";

/// The names of [`WRAPPERS`] and [`FILTERS`]: the programs that run for real.
fn pass_through() -> impl Iterator<Item = &'static str> {
    WRAPPERS
        .split_whitespace()
        .chain(FILTERS.split_whitespace())
}

/// Bash startup files. They are emptied in the sandbox so that what a login or
/// interactive shell executes comes from the command under test alone.
const STARTUP_FILES: &[&str] = &["/etc/profile", "/etc/bash.bashrc", "/etc/bashrc"];
const STARTUP_DIRS: &[&str] = &["/etc/profile.d"];

const CASE_TIMEOUT: Duration = Duration::from_secs(5);
/// The machine is shared: a small pool keeps the whole test short but polite.
const THREADS: usize = 3;
const MIN_CORPUS: usize = 150;

/// One program execution seen by a stub.
#[derive(Clone, Debug)]
struct Execution {
    /// The path it was run as (`/run/oracle/bin/id`, `/bin/rm`, `./x`).
    path: String,
    /// The name of the process that started it (`bash`, `git` …).
    parent: String,
    args: Vec<String>,
}

impl Execution {
    fn name(&self) -> &str {
        portcullis_shell::basename(&self.path)
    }
}

/// What one sandboxed run produced.
struct Run {
    executions: Vec<Execution>,
    status: Option<ExitStatus>,
    timed_out: bool,
    /// The sandbox's stdout and stderr, for diagnostics.
    output: String,
}

/// A system bin directory, covered with stubs inside the sandbox; the real one
/// stays reachable at `inside`.
struct BinDir {
    host: PathBuf,
    inside: String,
}

/// The prepared sandbox: host-side scratch files and the bwrap arguments
/// shared by every run.
struct Sandbox {
    scratch: PathBuf,
    args: Vec<OsString>,
    /// Real `cp` and `sleep` inside the sandbox, for the runner.
    cp: String,
    sleep: String,
    runs: AtomicUsize,
}

impl Sandbox {
    /// Builds stubs for every installed program and every word of `corpus`
    /// (so a program that is not installed still runs, and is logged).
    fn new(corpus: &[CorpusCase]) -> Sandbox {
        let scratch = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
            .join(format!("oracle-{}", std::process::id()));
        let _ = fs::remove_dir_all(&scratch);
        fs::create_dir_all(scratch.join("logs")).unwrap();

        let dirs = bin_dirs();
        let stub = scratch.join("stub");
        fs::write(&stub, STUB).unwrap();
        fs::set_permissions(&stub, fs::Permissions::from_mode(0o755)).unwrap();
        make_stub_dir(&scratch.join("bin"), &stub_names(corpus));
        make_wrap_dir(&scratch.join("wrap"), &dirs);
        make_template(&scratch.join("template"));

        let real = |name: &str| {
            real_program(name, &dirs).unwrap_or_else(|| panic!("oracle: `{name}` is not installed"))
        };
        let (cp, sleep) = (real("cp"), real("sleep"));
        let bash = fs::canonicalize("/bin/bash").expect("oracle: /bin/bash is missing");
        let args = bwrap_args(&scratch, &bash, &dirs);
        Sandbox {
            scratch,
            args,
            cp,
            sleep,
            runs: AtomicUsize::new(0),
        }
    }

    /// Whether `name` runs for real after logging (it is installed and a wrapper or filter).
    fn runs_for_real(&self, name: &str) -> bool {
        self.scratch.join("wrap").join(name).exists()
    }

    /// Runs `command` with bash in a fresh sandbox and reads back its log.
    fn run(&self, command: &str) -> Run {
        let id = self.runs.fetch_add(1, Ordering::Relaxed);
        let log = self.scratch.join("logs").join(id.to_string());
        fs::create_dir(&log).unwrap();
        let out_path = self.scratch.join("logs").join(format!("{id}.out"));
        let out = fs::File::create(&out_path).unwrap();

        let mut child = Command::new("bwrap")
            .args(&self.args)
            .arg("--bind")
            .arg(&log)
            .arg(format!("{ORACLE}/log"))
            .arg(format!("{ORACLE}/bash"))
            .args([
                "-c",
                RUNNER,
                "oracle-runner",
                &self.cp,
                &self.sleep,
                command,
            ])
            .stdin(Stdio::null())
            .stdout(out.try_clone().unwrap())
            .stderr(out)
            .spawn()
            .expect("oracle: cannot start bwrap");
        let (status, timed_out) = wait_with_timeout(&mut child, CASE_TIMEOUT);
        Run {
            executions: read_log(&log),
            status,
            timed_out,
            output: fs::read_to_string(&out_path).unwrap_or_default(),
        }
    }
}

impl Drop for Sandbox {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.scratch);
    }
}

/// The existing bin directories, deduplicated by their real location (on a
/// merged-/usr system `/bin` is `/usr/bin`), each with the place inside the
/// sandbox where the real one stays visible.
fn bin_dirs() -> Vec<BinDir> {
    let mut out: Vec<BinDir> = Vec::new();
    for dir in BIN_DIRS {
        let Ok(host) = fs::canonicalize(dir) else {
            continue;
        };
        if host.is_dir() && !out.iter().any(|d| d.host == host) {
            let inside = format!("{ORACLE}/real/{}", out.len());
            out.push(BinDir { host, inside });
        }
    }
    out
}

/// Names to stub: every entry of the bin directories, every word of the corpus
/// that could be a program name, and the wrappers and filters.
fn stub_names(corpus: &[CorpusCase]) -> BTreeSet<String> {
    let mut names: BTreeSet<String> = BTreeSet::new();
    for dir in BIN_DIRS {
        let Ok(entries) = fs::read_dir(dir) else {
            continue;
        };
        names.extend(entries.filter_map(|e| e.ok()?.file_name().into_string().ok()));
    }
    for case in corpus {
        names.extend(corpus_words(&case.command));
    }
    names.extend(pass_through().map(str::to_string));
    names
}

/// Words that could name a program: runs of `[A-Za-z0-9._+-]` that start with
/// a letter, digit or `_`.
fn corpus_words(text: &str) -> impl Iterator<Item = String> + '_ {
    text.split(|c: char| !(c.is_ascii_alphanumeric() || "._+-".contains(c)))
        .filter(|w| w.len() <= 64 && w.starts_with(|c: char| c.is_ascii_alphanumeric() || c == '_'))
        .map(str::to_string)
}

/// A directory of symlinks, one per name, all to the stub.
fn make_stub_dir(dir: &Path, names: &BTreeSet<String>) {
    fs::create_dir(dir).unwrap();
    for name in names {
        symlink(format!("{ORACLE}/stub"), dir.join(name)).unwrap();
    }
}

/// A directory with, for each wrapper and filter that is installed, a symlink
/// to the real program as seen inside the sandbox.
fn make_wrap_dir(dir: &Path, dirs: &[BinDir]) {
    fs::create_dir(dir).unwrap();
    for name in pass_through() {
        if let Some(real) = real_program(name, dirs) {
            symlink(real, dir.join(name)).unwrap();
        }
    }
}

/// Where the real, installed program `name` is reachable inside the sandbox.
/// Symlinks are resolved on the host (`awk` → `/etc/alternatives/awk` →
/// `/usr/bin/mawk`) because inside, `/usr/bin` holds only stubs. A program that
/// is a script is left out: its interpreter and whatever it runs would be
/// logged, executions no analysis of the command text can know about.
fn real_program(name: &str, dirs: &[BinDir]) -> Option<String> {
    let path = BIN_DIRS
        .iter()
        .map(|d| Path::new(d).join(name))
        .find_map(|p| fs::canonicalize(p).ok().filter(|p| p.is_file()))?;
    let head = fs::read(&path).ok()?;
    if head.starts_with(b"#!") {
        return None;
    }
    let inside = match dirs.iter().find(|d| path.starts_with(&d.host)) {
        Some(d) => format!(
            "{}/{}",
            d.inside,
            path.strip_prefix(&d.host).unwrap().display()
        ),
        None => path.display().to_string(),
    };
    Some(inside)
}

/// The work dir each case starts in: a few files the corpus names, in a git
/// repository with two commits and an uncommitted change, so that git
/// subcommands that run hooks, editors, diff tools or upload-pack commands
/// really run them. The remote is https, which git serves with its own helpers
/// (and which fails at once without network): an ssh remote would make every
/// `git fetch` start `ssh`, which no analysis of the text reports as a command.
fn make_template(dir: &Path) {
    let files: &[(&str, &str)] = &[
        (
            "README.md",
            "# demo\nTODO: document the build\nhello world\n",
        ),
        ("data.txt", "alpha\nbeta\ngamma\n"),
        ("payload.txt", "hello\n"),
        ("src/main.rs", "fn main() {}\n"),
        ("Cargo.toml", "[package]\nname = \"demo\"\n"),
        ("package.json", "{\"name\": \"demo\"}\n"),
    ];
    for (name, text) in files {
        let path = dir.join(name);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, text).unwrap();
    }
    let git = |args: &[&str]| {
        Command::new("git")
            .args(args)
            .current_dir(dir)
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .stdout(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    };
    let repo = git(&["init", "-q", "--template=", "-b", "main"])
        && git(&["config", "user.name", "Oracle"])
        && git(&["config", "user.email", "oracle@example.invalid"])
        && git(&["config", "commit.gpgsign", "false"])
        && git(&[
            "remote",
            "add",
            "origin",
            "https://example.invalid/demo.git",
        ])
        && git(&["add", "-A"])
        && git(&["commit", "-qm", "initial"]);
    if !repo {
        eprintln!("oracle: git is not available; the work dir is not a repository");
        return;
    }
    fs::write(
        dir.join("README.md"),
        "# demo\nTODO: document the build\nhello oracle\n",
    )
    .unwrap();
    assert!(
        git(&["commit", "-qam", "docs"]),
        "oracle: cannot commit in the template"
    );
    fs::write(dir.join("data.txt"), "alpha\nbeta\ngamma\ndelta\n").unwrap();
}

/// The bwrap arguments every run shares. Order matters only for mounts on the
/// same path: the stub directory goes over the bin directories last.
fn bwrap_args(scratch: &Path, bash: &Path, dirs: &[BinDir]) -> Vec<OsString> {
    let mut a = Args::default();
    a.words("--ro-bind / / --dev /dev --proc /proc --tmpfs /tmp --tmpfs /run --tmpfs /home");
    a.words(&format!("--dir {WORK_DIR} --chdir {WORK_DIR}"));
    for file in STARTUP_FILES.iter().filter(|f| Path::new(f).is_file()) {
        a.mount("--ro-bind", "/dev/null", file);
    }
    for dir in STARTUP_DIRS.iter().filter(|d| Path::new(d).is_dir()) {
        a.words(&format!("--tmpfs {dir}"));
    }
    a.mount("--ro-bind", scratch.join("stub"), format!("{ORACLE}/stub"));
    a.mount("--ro-bind", bash, format!("{ORACLE}/bash"));
    a.mount("--ro-bind", scratch.join("bin"), format!("{ORACLE}/bin"));
    a.mount("--ro-bind", scratch.join("wrap"), format!("{ORACLE}/wrap"));
    a.mount(
        "--ro-bind",
        scratch.join("template"),
        format!("{ORACLE}/template"),
    );
    for dir in dirs {
        a.mount("--ro-bind", &dir.host, &dir.inside);
    }
    for dir in dirs {
        a.mount("--ro-bind", scratch.join("bin"), &dir.host);
    }
    a.words("--unshare-all --die-with-parent --new-session --cap-drop ALL --clearenv");
    a.words(&format!("--setenv PATH {ORACLE}/bin --setenv HOME {HOME}"));
    a.0
}

/// A bwrap command line under construction.
#[derive(Default)]
struct Args(Vec<OsString>);

impl Args {
    /// Adds space-separated words (none of which contains a space).
    fn words(&mut self, words: &str) {
        self.0.extend(words.split_whitespace().map(OsString::from));
    }

    /// Adds a mount (`--ro-bind SOURCE DEST`, `--bind …`) whose paths may hold anything.
    fn mount(&mut self, kind: &str, source: impl AsRef<OsStr>, dest: impl AsRef<OsStr>) {
        self.0.push(kind.into());
        self.0.push(source.as_ref().to_os_string());
        self.0.push(dest.as_ref().to_os_string());
    }
}

/// Waits for `child`, killing it after `limit`. bwrap's `--die-with-parent`
/// takes everything in the sandbox down with it.
fn wait_with_timeout(
    child: &mut std::process::Child,
    limit: Duration,
) -> (Option<ExitStatus>, bool) {
    let start = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return (Some(status), false);
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            return (None, true);
        }
        thread::sleep(Duration::from_millis(5));
    }
}

/// Reads a run's log: one file per execution, NUL-terminated fields (the path
/// run, the parent's name, the arguments), ordered by write time (close to
/// execution order).
fn read_log(dir: &Path) -> Vec<Execution> {
    let mut records: Vec<(std::time::SystemTime, Execution)> = fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| {
            let e = e.ok()?;
            let when = e.metadata().ok()?.modified().ok()?;
            let bytes = fs::read(e.path()).ok()?;
            let mut fields = bytes
                .split(|b| *b == 0)
                .map(|f| String::from_utf8_lossy(f).into_owned());
            let (path, parent) = (fields.next()?, fields.next()?);
            let mut args: Vec<String> = fields.collect();
            args.pop(); // the empty piece after the last NUL
            Some((when, Execution { path, parent, args }))
        })
        .collect();
    records.sort_by_key(|(when, _)| *when);
    records.into_iter().map(|(_, e)| e).collect()
}

/// Fails the test unless bwrap is installed and can build the sandbox.
fn check_bwrap(sandbox: &Sandbox) {
    match Command::new("bwrap").arg("--version").output() {
        Ok(out) if out.status.success() => {}
        Ok(out) => panic!("oracle: `bwrap --version` failed: {out:?}"),
        Err(e) => panic!(
            "oracle: bubblewrap (`bwrap`) is not installed ({e}). The oracle test runs every \
             corpus command with real bash inside bubblewrap; install it with \
             `apt-get install -y bubblewrap`."
        ),
    }
    let run = sandbox.run("true");
    if run.status.is_none_or(|s| !s.success()) {
        panic!(
            "oracle: bwrap cannot create the sandbox (status {:?}). The kernel may refuse \
             unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1, or on \
             Ubuntu ≥ 23.10 kernel.apparmor_restrict_unprivileged_userns=0). Output:\n{}",
            run.status, run.output
        );
    }
}

/// Proves the logging works, so the corpus cannot pass vacuously: each command
/// must log at least the given programs.
fn check_logging(sandbox: &Sandbox) {
    let probes: &[(&str, &[&str])] = &[
        ("ls", &["ls"]),
        ("sh -c 'id'", &["sh", "id"]),
        ("/bin/rm -rf ./nothing", &["rm"]),
        ("env -i id", &["env", "id"]),
        ("echo uname | xargs", &["xargs", "echo"]),
        (
            "nohup sh -c 'sleep 0.2; id' >/dev/null 2>&1 &",
            &["nohup", "sh", "sleep", "id"],
        ),
        ("printf 'id\\n' > s.sh && bash s.sh", &["bash", "id"]),
        ("git -c alias.x='!uname' x", &["git", "uname"]),
    ];
    for (command, expected) in probes {
        let is_wrapper = |n: &str| WRAPPERS.split_whitespace().any(|w| w == n);
        if expected
            .iter()
            .any(|n| is_wrapper(n) && !sandbox.runs_for_real(n))
        {
            continue; // a wrapper the probe needs (git) is not installed here
        }
        let run = sandbox.run(command);
        let names: BTreeSet<&str> = run.executions.iter().map(Execution::name).collect();
        let missing: Vec<&&str> = expected.iter().filter(|n| !names.contains(**n)).collect();
        assert!(
            missing.is_empty(),
            "oracle self-check: `{command}` should log {expected:?} but logged {names:?} \
             (missing {missing:?}); sandbox output:\n{}",
            run.output
        );
    }
}

/// The verdict on one case.
struct Outcome {
    case: CorpusCase,
    run: Run,
    analysis: Result<Analysis, String>,
    missed: Vec<String>,
}

/// Runs one case and compares the log with the analysis.
fn check_case(sandbox: &Sandbox, case: &CorpusCase) -> Outcome {
    let run = sandbox.run(&case.command);
    let text = case.command.clone();
    let analysis =
        std::panic::catch_unwind(move || analyze(&text)).map_err(|p| panic_message(p.as_ref()));
    let missed = match &analysis {
        Ok(a) if a.opaque.is_empty() => {
            let found: BTreeSet<&str> = a.commands.iter().map(|c| c.basename()).collect();
            let logged: BTreeSet<&str> = run.executions.iter().map(Execution::name).collect();
            logged.difference(&found).map(|s| s.to_string()).collect()
        }
        Ok(_) => Vec::new(),
        Err(_) => vec!["(the analyser panicked)".to_string()],
    };
    Outcome {
        case: case.clone(),
        run,
        analysis,
        missed,
    }
}

fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "non-string panic".to_string())
}

/// Checks every case on a small thread pool; outcomes come back in corpus order.
fn check_all(sandbox: &Sandbox, corpus: &[CorpusCase]) -> Vec<Outcome> {
    let next = AtomicUsize::new(0);
    let slots: Mutex<Vec<Option<Outcome>>> = Mutex::new((0..corpus.len()).map(|_| None).collect());
    thread::scope(|scope| {
        for _ in 0..THREADS {
            scope.spawn(|| {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(case) = corpus.get(i) else { break };
                    let outcome = check_case(sandbox, case);
                    slots.lock().unwrap()[i] = Some(outcome);
                }
            });
        }
    });
    slots
        .into_inner()
        .unwrap()
        .into_iter()
        .map(Option::unwrap)
        .collect()
}

/// A failure, readable: where the case is from, what ran, what the analysis had.
fn describe(o: &Outcome) -> String {
    let mut s = format!("--- {}\ncommand: {}\n", o.case.origin, o.case.command);
    let missed: Vec<String> = o
        .missed
        .iter()
        .map(|name| {
            let how: BTreeSet<String> = o
                .run
                .executions
                .iter()
                .filter(|e| e.name() == name)
                .map(|e| format!("{} from {}", e.path, e.parent))
                .collect();
            format!("{name} ({})", Vec::from_iter(how).join("; "))
        })
        .collect();
    s += &format!("missed:  {}\n", missed.join(", "));
    let logged: Vec<String> = o
        .run
        .executions
        .iter()
        .map(|e| format!("{} {:?} (from {})", e.path, e.args, e.parent))
        .collect();
    s += &format!("logged:  {}\n", logged.join(" | "));
    match &o.analysis {
        Ok(a) => {
            let programs: Vec<&str> = a.programs().collect();
            s += &format!("analysis programs: {programs:?}\n");
            let code: Vec<String> = a
                .effects
                .iter()
                .filter_map(|e| match e {
                    Effect::Code {
                        program, source, ..
                    } => Some(format!("{program}: {source}")),
                    _ => None,
                })
                .collect();
            if !code.is_empty() {
                s += &format!("analysis code effects (not commands): {code:?}\n");
            }
            s += "analysis opaque: none\n";
        }
        Err(message) => s += &format!("analyser panic: {message}\n"),
    }
    if o.run.timed_out {
        s += "(the run timed out: the log may be incomplete)\n";
    }
    s
}

#[test]
fn every_execution_is_found_by_the_analysis() {
    let started = Instant::now();
    let corpus = common::full_corpus();
    assert!(
        corpus.len() >= MIN_CORPUS,
        "oracle corpus has {} commands, needs at least {MIN_CORPUS}",
        corpus.len()
    );
    let sandbox = Sandbox::new(&corpus);
    check_bwrap(&sandbox);
    check_logging(&sandbox);

    let outcomes = check_all(&sandbox, &corpus);
    let executions: usize = outcomes.iter().map(|o| o.run.executions.len()).sum();
    let timed_out: Vec<&str> = outcomes
        .iter()
        .filter(|o| o.run.timed_out)
        .map(|o| o.case.origin.as_str())
        .collect();
    let failures: Vec<&Outcome> = outcomes.iter().filter(|o| !o.missed.is_empty()).collect();
    println!(
        "oracle: {} commands, {executions} executions logged, {} failing, {} timed out {timed_out:?}, {:.1?}",
        corpus.len(),
        failures.len(),
        timed_out.len(),
        started.elapsed()
    );
    assert!(
        executions > corpus.len(),
        "oracle: suspiciously few executions logged ({executions})"
    );
    if !failures.is_empty() {
        let report: Vec<String> = failures.iter().map(|o| describe(o)).collect();
        panic!(
            "{} of {} commands executed programs the analysis did not find and did not \
             mark opaque:\n{}",
            failures.len(),
            corpus.len(),
            report.join("\n")
        );
    }
}
