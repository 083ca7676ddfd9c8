//! Running a real agent CLI (Claude Code, pi): where it is installed, a throw-away
//! workspace, and a child process with a deadline whose output is kept.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// The repository root.
pub fn repo_root() -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    root.canonicalize().unwrap_or(root)
}

/// A pinned agent CLI from `e2e/node_modules/.bin`, checked to answer
/// `--version`. Missing is a failure with the install instructions: CI
/// installs it, and a silent pass would prove nothing.
pub fn agent_bin(agent: &str, name: &str) -> (PathBuf, String) {
    let bin = repo_root().join("e2e/node_modules/.bin").join(name);
    let hint = "Install the pinned agent CLIs with `npm ci --prefix e2e` from the repository \
                root (needs Node.js >= 18 and npm; `.ci/run` does this before the tests).";
    if !bin.exists() {
        panic!(
            "{agent} is not installed: {} does not exist.\n{hint}",
            bin.display()
        );
    }
    let out = Command::new(&bin)
        .arg("--version")
        .env("DISABLE_AUTOUPDATER", "1")
        .env("PI_OFFLINE", "1")
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("running `{} --version`: {e}\n{hint}", bin.display()));
    // pi prints its version on stderr.
    let mut version = String::from_utf8_lossy(&out.stdout).trim().to_string();
    if version.is_empty() {
        version = String::from_utf8_lossy(&out.stderr).trim().to_string();
    }
    if !out.status.success() || version.is_empty() {
        panic!(
            "`{} --version` failed ({}): {}{}\n{hint}",
            bin.display(),
            out.status,
            version,
            String::from_utf8_lossy(&out.stderr)
        );
    }
    (bin, version)
}

/// A directory under Cargo's test scratch space, removed when the test passed
/// and kept (its path printed) when it failed.
pub struct Scratch {
    pub path: PathBuf,
}

impl Scratch {
    pub fn new(name: &str) -> Scratch {
        let nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0);
        let path = Path::new(env!("CARGO_TARGET_TMPDIR"))
            .join(format!("{name}-{}-{nanos}", std::process::id()));
        std::fs::create_dir_all(&path).expect("create the scratch directory");
        let path = path.canonicalize().expect("canonical scratch path");
        Scratch { path }
    }

    pub fn join(&self, rel: &str) -> PathBuf {
        self.path.join(rel)
    }

    /// Creates `rel` (and its parents) and returns it.
    pub fn dir(&self, rel: &str) -> PathBuf {
        let p = self.join(rel);
        std::fs::create_dir_all(&p).expect("create a scratch subdirectory");
        p
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        if std::thread::panicking() {
            eprintln!("kept the test's files in {}", self.path.display());
        } else {
            let _ = std::fs::remove_dir_all(&self.path);
        }
    }
}

/// What a child process did.
pub struct Ran {
    /// `None` when it was killed at the deadline.
    pub status: Option<ExitStatus>,
    pub stdout: String,
    pub stderr: String,
    pub elapsed: Duration,
}

impl Ran {
    pub fn report(&self) -> String {
        format!(
            "status: {}, after {:.1} s\n--- stdout ---\n{}\n--- stderr ---\n{}\n",
            match self.status {
                Some(s) => s.to_string(),
                None => "killed at the deadline".into(),
            },
            self.elapsed.as_secs_f64(),
            self.stdout,
            self.stderr
        )
    }
}

/// Runs `cmd` with stdin closed, stdout and stderr into files under `logs`
/// (named `<name>.stdout` / `.stderr`), and kills its whole process group
/// when `timeout` passes.
pub fn run_with_deadline(cmd: &mut Command, logs: &Path, name: &str, timeout: Duration) -> Ran {
    use std::os::unix::process::CommandExt;
    let out_path = logs.join(format!("{name}.stdout"));
    let err_path = logs.join(format!("{name}.stderr"));
    let out = File::create(&out_path).expect("create the stdout file");
    let err = File::create(&err_path).expect("create the stderr file");
    let start = Instant::now();
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(out)
        .stderr(err)
        .process_group(0)
        .spawn()
        .unwrap_or_else(|e| panic!("spawning {cmd:?}: {e}"));
    let status = loop {
        match child.try_wait().expect("waiting for the child") {
            Some(s) => break Some(s),
            None if start.elapsed() > timeout => {
                // The whole group: Claude Code and whatever its Bash tool started.
                let _ = Command::new("kill")
                    .args(["-KILL", "--", &format!("-{}", child.id())])
                    .status();
                let _ = child.kill();
                let _ = child.wait();
                break None;
            }
            None => std::thread::sleep(Duration::from_millis(50)),
        }
    };
    Ran {
        status,
        stdout: std::fs::read_to_string(&out_path).unwrap_or_default(),
        stderr: std::fs::read_to_string(&err_path).unwrap_or_default(),
        elapsed: start.elapsed(),
    }
}
