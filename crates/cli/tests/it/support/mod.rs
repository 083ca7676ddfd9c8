//! Shared by the policy suites (`bypass.rs`, `benign.rs`, `policy_conformance.rs`):
//! a throw-away workspace and home, and the real `portcullis check --batch`
//! run over many calls, one process per configuration. The hook suites use
//! [`hooks`] on top of it.
#![allow(dead_code)] // each suite uses a different part

pub mod hooks;
pub mod pki;
pub mod serve;

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::{Value, json};

/// The conformance cases vendored in `tests/data/conformance/`: `(line number, row)`.
/// Runs `command` with `stdin` on its standard input; what it printed.
pub fn fed(command: &mut Command, stdin: &[u8]) -> std::process::Output {
    let mut child = command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(stdin).unwrap();
    child.wait_with_output().unwrap()
}

pub fn conformance(name: &str) -> Vec<(usize, Value)> {
    let path = format!(
        "{}/../../tests/data/conformance/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| {
            let row = serde_json::from_str(l).unwrap_or_else(|e| panic!("{name}:{}: {e}", i + 1));
            (i + 1, row)
        })
        .collect()
}

/// A string field of a row (empty when absent).
pub fn field<'a>(row: &'a Value, name: &str) -> &'a str {
    row[name].as_str().unwrap_or("")
}

/// A Bash call of the agent's own shell tool.
pub fn bash(command: &str) -> Value {
    json!({"tool": "Bash", "origin": "core", "input": {"command": command}})
}

/// A configuration file's text. Rules are written as TOML strings.
pub fn config(mode: &str, allow: &[String], ask: &[String], deny: &[String]) -> String {
    let list = |rules: &[String]| serde_json::to_string(rules).expect("strings serialize");
    format!(
        "mode = \"{mode}\"\n[permissions]\nallow = {}\nask = {}\ndeny = {}\n",
        list(allow),
        list(ask),
        list(deny)
    )
}

/// `["a", "b"]` as owned rule strings.
pub fn rules(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| s.to_string()).collect()
}

/// The decision's verdict (`allow`, `ask`, `deny`).
pub fn verdict(d: &Value) -> &str {
    d["decision"].as_str().unwrap_or("?")
}

/// The codes of the deciding reasons.
pub fn codes(d: &Value) -> Vec<&str> {
    reasons(d)
        .iter()
        .filter_map(|r| r["code"].as_str())
        .collect()
}

pub fn reasons(d: &Value) -> &[Value] {
    d["reasons"].as_array().map(Vec::as_slice).unwrap_or(&[])
}

/// The deciding reasons, one per line, for failure reports.
pub fn explain(d: &Value) -> String {
    reasons(d)
        .iter()
        .map(|r| {
            let rule = r["rule"]
                .as_str()
                .map(|x| format!(" [{x}]"))
                .unwrap_or_default();
            format!("      {}: {}{rule}", field(r, "code"), field(r, "message"))
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// One call under one configuration (and extra `check` flags such as `--unattended`).
#[derive(Clone, Debug)]
pub struct Job {
    pub config: String,
    pub flags: Vec<String>,
    pub call: Value,
}

impl Job {
    pub fn new(config: String, call: Value) -> Job {
        Job {
            config,
            flags: Vec::new(),
            call,
        }
    }

    pub fn flag(mut self, flag: &str) -> Job {
        self.flags.push(flag.to_string());
        self
    }
}

/// A temporary directory holding a fake home (with secrets and shell rc files)
/// and a git repository inside it (`~/proj`, the workspace). Removed on drop.
pub struct Sandbox {
    pub root: PathBuf,
    pub home: PathBuf,
    pub repo: PathBuf,
    /// `portcullis serve` on the sandbox's data directory, once a hook run
    /// through the daemon started it ([`hooks::through_daemon`]).
    pub daemon: std::sync::OnceLock<hooks::Daemon>,
}

impl Sandbox {
    pub fn new(suite: &str) -> Sandbox {
        static COUNT: AtomicUsize = AtomicUsize::new(0);
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or_default();
        let name = format!(
            "portcullis-{suite}-{}-{nanos}-{}",
            std::process::id(),
            COUNT.fetch_add(1, Ordering::Relaxed)
        );
        let root = std::env::temp_dir().join(name);
        std::fs::create_dir_all(&root).expect("create the sandbox");
        let root = root.canonicalize().expect("canonical sandbox");
        let home = root.join("home");
        let repo = home.join("proj");
        let sandbox = Sandbox {
            root,
            home,
            repo,
            daemon: std::sync::OnceLock::new(),
        };
        for (path, text) in [
            ("home/.ssh/id_rsa", "-----BEGIN OPENSSH PRIVATE KEY-----\n"),
            ("home/.bashrc", "export PS1='$ '\n"),
            (
                "home/.aws/credentials",
                "[default]\naws_secret_access_key=x\n",
            ),
            ("home/proj/README.md", "# demo\n"),
            ("home/proj/Cargo.toml", "[package]\nname = \"demo\"\n"),
            ("home/proj/src/main.rs", "fn main() {}\n"),
            (
                "home/proj/package.json",
                "{\"scripts\": {\"build\": \"tsc\"}}\n",
            ),
            ("home/proj/.env", "API_KEY=secret\n"),
        ] {
            sandbox.write(path, text);
        }
        for dir in ["home/.config", "home/.local/share"] {
            std::fs::create_dir_all(sandbox.root.join(dir)).expect("create dir");
        }
        let git = Command::new("git")
            .args(["init", "-q"])
            .current_dir(&sandbox.repo)
            .env("HOME", &sandbox.home)
            .output()
            .expect("git runs");
        assert!(git.status.success(), "git init: {git:?}");
        sandbox
    }

    /// Writes a file below the sandbox root, creating its directories.
    pub fn write(&self, rel: &str, text: &str) -> PathBuf {
        let path = self.root.join(rel);
        std::fs::create_dir_all(path.parent().expect("a parent")).expect("create dirs");
        std::fs::write(&path, text).expect("write file");
        path
    }

    /// `path` as a string (paths in the sandbox are UTF-8).
    pub fn s(path: &Path) -> String {
        path.to_str().expect("UTF-8 path").to_string()
    }

    /// Decides every job; one `check --batch` process per distinct configuration
    /// and flags. Decisions come back in the jobs' order.
    pub fn decide(&self, jobs: &[Job]) -> Vec<Value> {
        let mut groups: BTreeMap<(&str, &[String]), Vec<usize>> = BTreeMap::new();
        for (i, j) in jobs.iter().enumerate() {
            groups
                .entry((j.config.as_str(), j.flags.as_slice()))
                .or_default()
                .push(i);
        }
        let mut out = vec![Value::Null; jobs.len()];
        for (n, ((config, flags), idx)) in groups.into_iter().enumerate() {
            let file = self.write(&format!("config-{n}.toml"), config);
            let calls: Vec<&Value> = idx.iter().map(|i| &jobs[*i].call).collect();
            for (i, d) in idx.iter().zip(self.batch(&file, flags, &calls)) {
                out[*i] = d;
            }
        }
        out
    }

    /// Runs `portcullis check --config FILE --cwd REPO --batch` over `calls` in a
    /// clean environment (no machine configuration leaks in).
    pub fn batch(&self, config: &Path, flags: &[String], calls: &[&Value]) -> Vec<Value> {
        let mut child = Command::new(env!("CARGO_BIN_EXE_portcullis"))
            .arg("check")
            .arg("--config")
            .arg(config)
            .arg("--cwd")
            .arg(&self.repo)
            .arg("--batch")
            .args(flags)
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", &self.home)
            .env("XDG_CONFIG_HOME", self.home.join(".config"))
            .env("XDG_DATA_HOME", self.home.join(".local/share"))
            .env("PORTCULLIS_MANAGED_CONFIG", self.root.join("managed.toml"))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn portcullis");
        let mut input = String::new();
        for c in calls {
            input.push_str(&c.to_string());
            input.push('\n');
        }
        let mut stdin = child.stdin.take().expect("stdin");
        let writer = std::thread::spawn(move || stdin.write_all(input.as_bytes()));
        let out = child.wait_with_output().expect("portcullis finishes");
        let wrote = writer.join().expect("writer thread");
        let text = String::from_utf8_lossy(&out.stdout);
        let decisions: Vec<Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
            .collect();
        // A configuration that does not load stops the engine: one refusal, exit 2,
        // and every call is denied.
        if out.status.code() == Some(2) && decisions.len() == 1 {
            assert_eq!(codes(&decisions[0]), ["config-error"], "{text}");
            return vec![decisions[0].clone(); calls.len()];
        }
        wrote.expect("write the calls");
        assert!(
            out.status.success() && decisions.len() == calls.len(),
            "portcullis check --batch: {} ({} decisions for {} calls)\nstderr: {}",
            out.status,
            decisions.len(),
            calls.len(),
            String::from_utf8_lossy(&out.stderr)
        );
        decisions
    }
}

impl Drop for Sandbox {
    fn drop(&mut self) {
        // The daemon first: it holds the store open.
        drop(self.daemon.take());
        let _ = std::fs::remove_dir_all(&self.root);
    }
}
