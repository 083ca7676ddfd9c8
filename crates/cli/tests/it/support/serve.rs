//! A real `portcullis serve` on a free loopback port, with its own home, data
//! directory and configuration (whose `[server] addr` is that port, so the
//! policy guards it), and a minimal HTTP/1.1 client to talk to it.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

pub struct Served {
    pub child: Child,
    pub port: u16,
    pub login_url: String,
    pub token: String,
    pub root: tempfile::TempDir,
    /// A git workspace inside `root`.
    pub work: PathBuf,
    /// A readable file outside the workspace.
    pub outside: PathBuf,
    /// The tokens of the sessions registered with [`Served::register`].
    pub session_tokens: std::cell::RefCell<std::collections::HashMap<String, String>>,
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

impl Served {
    pub fn start() -> Served {
        Served::start_with(|_| String::new())
    }

    /// Starts with more configuration, made from the world's root directory.
    pub fn start_with(extra: impl FnOnce(&Path) -> String) -> Served {
        Served::start_opts(extra, &[], None)
    }

    /// Starts with more configuration, more `serve` arguments, and (when
    /// `nofile` is set) that open-file limit (`ulimit -n`) for the server.
    pub fn start_opts(
        extra: impl FnOnce(&Path) -> String,
        args: &[&str],
        nofile: Option<u64>,
    ) -> Served {
        Served::start_full(extra, args, nofile, &[])
    }

    /// Starts with these environment variables added for the server.
    #[allow(dead_code)] // the suites that need no extra environment
    pub fn start_with_env(env: &[(&str, &str)]) -> Served {
        Served::start_full(|_| String::new(), &[], None, env)
    }

    fn start_full(
        extra: impl FnOnce(&Path) -> String,
        args: &[&str],
        nofile: Option<u64>,
        env: &[(&str, &str)],
    ) -> Served {
        let root = tempfile::tempdir().unwrap();
        let base = std::fs::canonicalize(root.path()).unwrap();
        let work = base.join("work");
        std::fs::create_dir_all(work.join(".git")).unwrap();
        std::fs::create_dir_all(base.join("home/.config/portcullis")).unwrap();
        std::fs::create_dir_all(base.join("elsewhere")).unwrap();
        let outside = base.join("elsewhere/notes.txt");
        std::fs::write(&outside, "outside the workspace\n").unwrap();
        let port = free_port();
        std::fs::write(
            base.join("config.toml"),
            format!(
                "mode = \"ask\"\n{}\n[server]\naddr = \"127.0.0.1:{port}\"\n",
                extra(&base)
            ),
        )
        .unwrap();
        let mut command = Served::command_in(&base);
        for (k, v) in env {
            command.env(k, v);
        }
        if let Some(n) = nofile {
            // `sh` sets the limit, then becomes portcullis (which becomes the daemon).
            let inner = command;
            command = Command::new("/bin/sh");
            command.env_clear();
            for (k, v) in inner.get_envs() {
                if let Some(v) = v {
                    command.env(k, v);
                }
            }
            command
                .arg("-c")
                .arg(format!("ulimit -n {n} && exec \"$0\" \"$@\""))
                .arg(inner.get_program());
        }
        command.current_dir(&work).stderr(Stdio::inherit());
        let (child, login_url) = serve_and_login(command, args);
        let token = login_url.rsplit_once("token=").unwrap().1.to_string();
        let served = Served {
            child,
            port,
            login_url,
            token,
            root,
            work,
            outside,
            session_tokens: Default::default(),
        };
        let deadline = Instant::now() + Duration::from_secs(20);
        while served.request("GET", "/healthz", &[], None).0 != 200 {
            assert!(Instant::now() < deadline, "serve never became healthy");
            std::thread::sleep(Duration::from_millis(50));
        }
        served
    }

    fn base(&self) -> PathBuf {
        std::fs::canonicalize(self.root.path()).unwrap()
    }

    /// `portcullis` with this server's home, configuration and data dir.
    fn command_in(base: &Path) -> Command {
        let mut c = Command::new(env!("CARGO_BIN_EXE_portcullis"));
        c.env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", base.join("home"))
            .env("XDG_CONFIG_HOME", base.join("home/.config"))
            .env("PORTCULLIS_DATA_DIR", base.join("data"))
            .env("PORTCULLIS_CONFIG", base.join("config.toml"))
            .env("PORTCULLIS_MANAGED_CONFIG", base.join("no-managed.toml"));
        c
    }

    pub fn portcullis(&self) -> Command {
        let mut c = Served::command_in(&self.base());
        c.current_dir(&self.work);
        c
    }

    /// Runs `portcullis ARGS…`; it must succeed and print JSON.
    #[track_caller]
    pub fn cli_json(&self, args: &[&str]) -> Value {
        let out = self
            .portcullis()
            .args(args)
            .stdin(Stdio::null())
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "portcullis {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("{args:?}: {e}: {}", String::from_utf8_lossy(&out.stdout)))
    }

    /// `portcullis sessions register --id ID --agent claude-code`.
    pub fn register(&self, id: &str) {
        let cwd = self.work.display().to_string();
        let registered = self.cli_json(&[
            "sessions",
            "register",
            "--id",
            id,
            "--agent",
            "claude-code",
            "--cwd",
            &cwd,
            "--json",
        ]);
        if let Some(token) = registered["token"].as_str() {
            self.session_tokens
                .borrow_mut()
                .insert(id.to_string(), token.to_string());
        }
    }

    /// `portcullis check --session ID` of a Read outside the workspace.
    /// With the session's token when it was registered here: its
    /// once-grants are spent, as an agent proving its session would.
    pub fn check_outside_read(&self, session: &str) -> Value {
        let input = serde_json::json!({"file_path": self.outside}).to_string();
        let token = self.session_tokens.borrow().get(session).cloned();
        let mut args = vec![
            "check",
            "--session",
            session,
            "--tool",
            "Read",
            "--origin",
            "core",
            "--input",
            &input,
        ];
        if let Some(t) = token.as_deref() {
            args.extend(["--token", t]);
        }
        self.cli_json(&args)
    }

    /// One HTTP/1.1 request; answers status, headers (lowercase names) and body.
    pub fn request(
        &self,
        method: &str,
        path: &str,
        headers: &[(&str, &str)],
        body: Option<&str>,
    ) -> (u16, Vec<(String, String)>, String) {
        http(self.port, method, path, headers, body)
    }

    pub fn bearer(&self) -> String {
        format!("Bearer {}", self.token)
    }
}

pub fn http(
    port: u16,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: Option<&str>,
) -> (u16, Vec<(String, String)>, String) {
    let Ok(mut s) = TcpStream::connect(("127.0.0.1", port)) else {
        return (0, Vec::new(), String::new());
    };
    s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    let mut req = format!("{method} {path} HTTP/1.1\r\nConnection: close\r\n");
    if !headers.iter().any(|(k, _)| k.eq_ignore_ascii_case("host")) {
        req.push_str(&format!("Host: 127.0.0.1:{port}\r\n"));
    }
    for (k, v) in headers {
        req.push_str(&format!("{k}: {v}\r\n"));
    }
    if let Some(b) = body {
        req.push_str(&format!(
            "Content-Type: application/json\r\nContent-Length: {}\r\n",
            b.len()
        ));
    }
    req.push_str("\r\n");
    if let Some(b) = body {
        req.push_str(b);
    }
    s.write_all(req.as_bytes()).unwrap();
    let mut raw = Vec::new();
    let _ = s.read_to_end(&mut raw);
    let text = String::from_utf8_lossy(&raw).into_owned();
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let mut lines = head.lines();
    let status = lines
        .next()
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    let headers = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    (status, headers, body.to_string())
}

/// Runs `command` (a `portcullis` to which `serve` and these arguments are
/// added) and reads its login link, draining its output after: the child
/// and the link.
pub fn serve_and_login<S: AsRef<std::ffi::OsStr>>(
    mut command: Command,
    args: &[S],
) -> (std::process::Child, String) {
    let mut child = command
        .arg("serve")
        .args(args)
        .stdout(Stdio::piped())
        .spawn()
        .expect("start portcullis serve");
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let login = loop {
        let line = lines
            .next()
            .expect("serve printed its login URL")
            .expect("serve's stdout");
        if let Some(url) = line.strip_prefix("open the approval UI: ") {
            break url.to_string();
        }
    };
    // Keep draining stdout so the server never blocks on a full pipe.
    std::thread::spawn(move || for _ in lines {});
    (child, login)
}
