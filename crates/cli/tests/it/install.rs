//! `portcullis install`, `doctor` and `export`, run as the real binary in a
//! throw-away home and project (the real `$HOME` is never touched).

// Test code: a failed unwrap, index or panic is a failed test.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::{Value, json};

/// A temporary home and project directory, removed on drop.
struct Env {
    root: PathBuf,
    home: PathBuf,
    proj: PathBuf,
}

impl Env {
    fn new(name: &str) -> Env {
        static COUNT: AtomicUsize = AtomicUsize::new(0);
        let root = std::env::temp_dir().join(format!(
            "portcullis-install-{name}-{}-{}",
            std::process::id(),
            COUNT.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir_all(root.join("home/.config")).expect("create home");
        std::fs::create_dir_all(root.join("proj")).expect("create project");
        let root = root.canonicalize().expect("canonical root");
        Env {
            home: root.join("home"),
            proj: root.join("proj"),
            root,
        }
    }

    /// Runs `portcullis ARGS` in the project directory with the temporary home.
    fn run(&self, args: &[&str]) -> Output {
        Command::new(env!("CARGO_BIN_EXE_portcullis"))
            .args(args)
            .current_dir(&self.proj)
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", &self.home)
            .env("XDG_CONFIG_HOME", self.home.join(".config"))
            .env("XDG_DATA_HOME", self.home.join(".local/share"))
            .env("PORTCULLIS_MANAGED_CONFIG", self.root.join("managed.toml"))
            .output()
            .expect("portcullis runs")
    }

    fn ok(&self, args: &[&str]) -> String {
        let out = self.run(args);
        assert!(
            out.status.success(),
            "portcullis {args:?}: {}\nstdout: {}\nstderr: {}",
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).expect("UTF-8 output")
    }

    fn write(&self, path: &Path, text: &str) {
        std::fs::create_dir_all(path.parent().expect("a parent")).expect("create dirs");
        std::fs::write(path, text).expect("write");
    }
}

impl Drop for Env {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.root);
    }
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn json_of(path: &Path) -> Value {
    serde_json::from_str(&read(path)).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// A binary as `install` names it: in the canonical directory of
/// `portcullis`, quoted for `sh` if it needs it.
fn bin(name: &str) -> String {
    let p = std::fs::canonicalize(env!("CARGO_BIN_EXE_portcullis"))
        .expect("binary path")
        .with_file_name(name);
    let s = p.to_str().expect("UTF-8 path").to_string();
    if s.chars()
        .all(|c| c.is_ascii_alphanumeric() || "_@%+=:,./-".contains(c))
    {
        s
    } else {
        format!("'{}'", s.replace('\'', r"'\''"))
    }
}

/// The hook command `install` writes: `portcullis-hook AGENT`, the lean
/// binary beside `portcullis`.
fn hook(agent: &str) -> String {
    format!("{} {agent}", bin("portcullis-hook"))
}

fn backup(path: &Path) -> PathBuf {
    PathBuf::from(format!("{}.portcullis-backup", path.display()))
}

#[test]
fn installs_into_an_empty_project() {
    let env = Env::new("empty");
    let out = env.ok(&["install", "claude-code"]);
    let file = env.proj.join(".claude/settings.json");
    assert!(out.contains(&file.display().to_string()), "{out}");
    let expected = format!(
        "{{\n  \"hooks\": {{\n    \"PreToolUse\": [\n      {{\n        \"matcher\": \"*\",\n        \
         \"hooks\": [\n          {{\n            \"type\": \"command\",\n            \
         \"command\": {},\n            \"timeout\": 600\n          }}\n        ]\n      }}\n    ]\n  }}\n}}\n",
        serde_json::to_string(&hook("claude-code")).expect("string")
    );
    assert_eq!(read(&file), expected);
    assert!(
        !backup(&file).exists(),
        "no backup of a file that did not exist"
    );

    let out = env.ok(&["install", "codex"]);
    assert!(
        out.contains("/hooks"),
        "Codex needs its hooks trusted: {out}"
    );
    assert_eq!(
        json_of(&env.proj.join(".codex/hooks.json")),
        json!({"hooks": {
            "PreToolUse": [{"matcher": "*",
                "hooks": [{"type": "command", "command": hook("codex"), "timeout": 600}]}],
            // Where Codex would ask about a shell command.
            "PermissionRequest": [{"matcher": "Bash",
                "hooks": [{"type": "command", "command": hook("codex"), "timeout": 600}]}]}})
    );

    env.ok(&["install", "cursor", "--project"]);
    let entry = json!([{"command": hook("cursor")}]);
    assert_eq!(
        json_of(&env.proj.join(".cursor/hooks.json")),
        json!({"version": 1, "hooks": {"beforeShellExecution": entry,
            "beforeMCPExecution": entry, "beforeReadFile": entry}})
    );

    env.ok(&["install", "gemini"]);
    assert_eq!(
        json_of(&env.proj.join(".gemini/settings.json")),
        json!({"hooks": {"BeforeTool": [{"matcher": ".*", "hooks": [{"type": "command",
            "command": hook("gemini"), "name": "portcullis", "timeout": 60000}]}]}})
    );

    env.ok(&["install", "pi"]);
    let ext = read(&env.proj.join(".pi/extensions/portcullis.ts"));
    let exe = std::fs::canonicalize(env!("CARGO_BIN_EXE_portcullis")).expect("binary");
    let line = format!(
        "const PORTCULLIS_BIN = {};",
        serde_json::to_string(exe.to_str().expect("UTF-8")).expect("string")
    );
    assert!(
        ext.contains(&line),
        "the extension names the binary: {line}"
    );
    assert!(ext.contains("pi.on(\"tool_call\""), "{ext}");

    // Nothing went to the home directory.
    for dir in [".claude", ".codex", ".cursor", ".gemini", ".pi"] {
        assert!(!env.home.join(dir).exists(), "{dir} in HOME");
    }
}

#[test]
fn a_portcullis_without_its_hook_binary_installs_portcullis_hook() {
    // `portcullis` copied alone (no `portcullis-hook` beside it): the hook
    // command is the one that binary has, `portcullis hook AGENT`.
    let env = Env::new("alone");
    let alone = env.root.join("bin/portcullis");
    std::fs::create_dir_all(alone.parent().expect("a parent")).expect("mkdir");
    if std::fs::hard_link(env!("CARGO_BIN_EXE_portcullis"), &alone).is_err() {
        std::fs::copy(env!("CARGO_BIN_EXE_portcullis"), &alone).expect("copy portcullis");
    }
    let install = || {
        let out = Command::new(&alone)
            .args(["install", "claude-code"])
            .current_dir(&env.proj)
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", &env.home)
            .env("PORTCULLIS_MANAGED_CONFIG", env.root.join("managed.toml"))
            .output()
            .expect("portcullis runs");
        assert!(out.status.success(), "{out:?}");
    };
    install();
    let settings = json_of(&env.proj.join(".claude/settings.json"));
    assert_eq!(
        settings["hooks"]["PreToolUse"][0]["hooks"][0]["command"],
        format!("{} hook claude-code", alone.display()),
        "{settings}"
    );
    // Once `portcullis-hook` is beside it, installing again points the same
    // entry at it (one entry, not two).
    let front = env.root.join("bin/portcullis-hook");
    if std::fs::hard_link(env!("CARGO_BIN_EXE_portcullis-hook"), &front).is_err() {
        std::fs::copy(env!("CARGO_BIN_EXE_portcullis-hook"), &front).expect("copy");
    }
    install();
    let settings = json_of(&env.proj.join(".claude/settings.json"));
    assert_eq!(
        settings["hooks"]["PreToolUse"],
        json!([{"matcher": "*", "hooks": [{"type": "command",
            "command": format!("{} claude-code", front.display()), "timeout": 600}]}]),
    );
}

#[test]
fn user_scope_writes_under_home() {
    let env = Env::new("user");
    env.ok(&["install", "claude-code", "--user"]);
    env.ok(&["install", "pi", "--user"]);
    assert!(env.home.join(".claude/settings.json").is_file());
    assert!(
        env.home
            .join(".pi/agent/extensions/portcullis.ts")
            .is_file()
    );
    assert!(!env.proj.join(".claude").exists());
    // --dir names a project: it makes no sense with --user.
    assert!(
        !env.run(&["install", "codex", "--user", "--dir", "."])
            .status
            .success()
    );
    // --dir installs into another project than the current directory.
    let other = env.root.join("other");
    std::fs::create_dir_all(&other).expect("mkdir");
    env.ok(&["install", "gemini", "--dir", other.to_str().expect("UTF-8")]);
    assert!(other.join(".gemini/settings.json").is_file());
}

/// A Claude Code settings file as Claude Code writes it (two-space JSON).
const CLAUDE_SETTINGS: &str = r#"{
  "permissions": {
    "allow": [
      "Bash(npm test)"
    ]
  },
  "hooks": {
    "PreToolUse": [
      {
        "matcher": "Bash",
        "hooks": [
          {
            "type": "command",
            "command": "./check.sh",
            "timeout": 30
          }
        ]
      }
    ],
    "PostToolUse": [
      {
        "matcher": "*",
        "hooks": [
          {
            "type": "command",
            "command": "log-it"
          }
        ]
      }
    ]
  },
  "model": "opus"
}
"#;

#[test]
fn merges_into_existing_settings_once_with_a_backup() {
    let env = Env::new("merge");
    let file = env.proj.join(".claude/settings.json");
    env.write(&file, CLAUDE_SETTINGS);

    let out = env.ok(&["install", "claude-code"]);
    assert!(out.contains(".portcullis-backup"), "{out}");
    let ours = format!(
        "      }},\n      {{\n        \"matcher\": \"*\",\n        \"hooks\": [\n          {{\n            \
         \"type\": \"command\",\n            \"command\": {},\n            \"timeout\": 600\n          }}\n        ]\n      }}\n    ],\n    \
         \"PostToolUse\"",
        serde_json::to_string(&hook("claude-code")).expect("string")
    );
    let expected = CLAUDE_SETTINGS.replacen("      }\n    ],\n    \"PostToolUse\"", &ours, 1);
    assert_eq!(
        read(&file),
        expected,
        "every other key and hook kept, in order"
    );
    assert_eq!(read(&backup(&file)), CLAUDE_SETTINGS);

    // Idempotent: a second run changes nothing.
    let out = env.ok(&["install", "claude-code"]);
    assert!(out.contains("already installed"), "{out}");
    assert_eq!(read(&file), expected);

    // The backup is the file before portcullis first changed it, kept once.
    env.write(&file, CLAUDE_SETTINGS);
    env.ok(&["install", "claude-code"]);
    assert_eq!(read(&file), expected);
    assert_eq!(read(&backup(&file)), CLAUDE_SETTINGS);
    env.write(&file, "{\"model\": \"sonnet\"}\n");
    env.ok(&["install", "claude-code"]);
    assert_eq!(read(&backup(&file)), CLAUDE_SETTINGS, "not overwritten");
    assert_eq!(json_of(&file)["model"], "sonnet");
}

#[test]
fn points_an_old_hook_at_this_binary_without_duplicating_it() {
    let env = Env::new("stale");
    let file = env.proj.join(".codex/hooks.json");
    env.write(
        &file,
        &json!({"hooks": {"PreToolUse": [{"matcher": "*", "hooks": [
            {"type": "command", "command": "/old/place/portcullis hook codex", "timeout": 9}]}]}})
        .to_string(),
    );
    let out = env.ok(&["install", "codex"]);
    assert!(out.contains("updated"), "{out}");
    // The timeout is the one the hook keeps under: a shorter one would let
    // Codex give up on a hook still judging, and run the call.
    assert_eq!(
        json_of(&file),
        json!({"hooks": {
            "PreToolUse": [{"matcher": "*", "hooks": [
                {"type": "command", "command": hook("codex"), "timeout": 600}]}],
            "PermissionRequest": [{"matcher": "Bash", "hooks": [
                {"type": "command", "command": hook("codex"), "timeout": 600}]}]}})
    );
    // Codex hashes command, timeout and matcher for its trust check.
    assert!(out.contains("trusted again"), "{out}");
    let out = env.ok(&["install", "codex"]);
    assert!(!out.contains("trusted again"), "nothing changed: {out}");

    // Cursor: other events and other commands stay; the version is kept.
    let file = env.proj.join(".cursor/hooks.json");
    env.write(
        &file,
        &json!({"version": 1, "hooks": {
            "beforeShellExecution": [{"command": "./audit.sh"}],
            "afterFileEdit": [{"command": "./fmt.sh"}]}})
        .to_string(),
    );
    env.ok(&["install", "cursor"]);
    let ours = json!({"command": hook("cursor")});
    assert_eq!(
        json_of(&file),
        json!({"version": 1, "hooks": {
            "beforeShellExecution": [{"command": "./audit.sh"}, ours],
            "afterFileEdit": [{"command": "./fmt.sh"}],
            "beforeMCPExecution": [ours], "beforeReadFile": [ours]}})
    );
    let before = read(&file);
    env.ok(&["install", "cursor"]);
    assert_eq!(read(&file), before);

    // Gemini: other settings stay.
    let file = env.proj.join(".gemini/settings.json");
    env.write(
        &file,
        "{\"theme\": \"dark\", \"hooksConfig\": {\"enabled\": true}}",
    );
    env.ok(&["install", "gemini"]);
    let v = json_of(&file);
    assert_eq!(v["theme"], "dark");
    assert_eq!(v["hooksConfig"], json!({"enabled": true}));
    assert_eq!(
        v["hooks"]["BeforeTool"][0]["hooks"][0]["command"],
        hook("gemini")
    );
}

#[test]
fn dry_run_prints_a_diff_and_writes_nothing() {
    let env = Env::new("dry");
    let out = env.ok(&["install", "claude-code", "--dry-run"]);
    let file = env.proj.join(".claude/settings.json");
    assert!(
        out.starts_with(&format!(
            "--- /dev/null\n+++ {}\n@@ -0,0 +1,16 @@\n+{{\n",
            file.display()
        )),
        "{out}"
    );
    assert!(out.contains("(dry run: nothing was written)"), "{out}");
    assert!(!env.proj.join(".claude").exists(), "nothing created");

    env.write(&file, CLAUDE_SETTINGS);
    let out = env.ok(&["install", "claude-code", "--dry-run"]);
    let command = serde_json::to_string(&hook("claude-code")).expect("string");
    let expected = format!(
        "--- {f}\n+++ {f}\n@@ -15,6 +15,16 @@\n             \"timeout\": 30\n           }}\n         ]\n\
         +      }},\n+      {{\n+        \"matcher\": \"*\",\n+        \"hooks\": [\n+          {{\n\
         +            \"type\": \"command\",\n+            \"command\": {command},\n+            \"timeout\": 600\n+          }}\n\
         +        ]\n       }}\n     ],\n     \"PostToolUse\": [\n(dry run: nothing was written)\n",
        f = file.display()
    );
    assert_eq!(out, expected);
    assert_eq!(read(&file), CLAUDE_SETTINGS, "unchanged");
    assert!(!backup(&file).exists());
}

#[test]
fn refuses_a_settings_file_that_is_not_json() {
    let env = Env::new("invalid");
    for (agent, rel) in [
        ("claude-code", ".claude/settings.json"),
        ("codex", ".codex/hooks.json"),
        ("cursor", ".cursor/hooks.json"),
        ("gemini", ".gemini/settings.json"),
    ] {
        let file = env.proj.join(rel);
        env.write(&file, "{\"hooks\": // a comment\n}");
        let out = env.run(&["install", agent]);
        assert_eq!(out.status.code(), Some(1), "{agent}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains(&file.display().to_string()) && err.contains("not valid JSON"),
            "{err}"
        );
        assert_eq!(
            read(&file),
            "{\"hooks\": // a comment\n}",
            "{agent}: untouched"
        );
        assert!(!backup(&file).exists());
    }
    // A `hooks` that is not an object is refused the same way.
    let file = env.proj.join(".claude/settings.json");
    env.write(&file, "{\"hooks\": []}");
    assert_eq!(env.run(&["install", "claude-code"]).status.code(), Some(1));
    assert_eq!(read(&file), "{\"hooks\": []}");
}

fn doctor(env: &Env) -> (Option<i32>, Value) {
    let out = env.run(&["doctor", "--json"]);
    let v = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "doctor --json: {e}: {}",
            String::from_utf8_lossy(&out.stdout)
        )
    });
    (out.status.code(), v)
}

fn check<'a>(report: &'a Value, agent: &str, scope: &str) -> &'a Value {
    report["checks"]
        .as_array()
        .expect("checks")
        .iter()
        .find(|c| c["agent"] == agent && c["scope"] == scope)
        .unwrap_or_else(|| panic!("no check for {agent} {scope}: {report}"))
}

#[test]
fn doctor_reports_installed_hooks_that_answer() {
    let env = Env::new("doctor");
    let (code, report) = doctor(&env);
    assert_eq!(code, Some(0), "{report}");
    assert!(
        report["checks"]
            .as_array()
            .expect("checks")
            .iter()
            .all(|c| c["status"] == "not-installed")
    );

    for agent in ["claude-code", "codex", "cursor", "gemini", "pi"] {
        env.ok(&["install", agent]);
    }
    env.ok(&["install", "claude-code", "--user"]);
    // Every hook answers, but Codex skips its hook until the person trusts it.
    let (code, report) = doctor(&env);
    assert_eq!(code, Some(1), "{report:#}");
    let codex = check(&report, "codex", "project");
    assert_eq!(codex["status"], "untrusted", "{codex:#}");
    let mut text = format!(
        "[projects.\"{}\"]\ntrust_level = \"trusted\"\n",
        env.proj.display()
    );
    for hook in codex["codex_trust"].as_array().expect("codex_trust") {
        text.push_str(&format!(
            "\n[hooks.state.{}]\ntrusted_hash = {}\n",
            hook["key"], hook["hash"]
        ));
    }
    env.write(&env.home.join(".codex/config.toml"), &text);
    let (code, report) = doctor(&env);
    assert_eq!(code, Some(0), "{report:#}");
    assert_eq!(report["ok"], true);
    for (agent, verdict) in [
        ("claude-code", "allow"),
        // Codex hooks cannot approve: no opinion leaves Codex's own policy in charge.
        ("codex", "no-opinion"),
        ("cursor", "allow"),
        ("gemini", "allow"),
        ("pi", "allow"),
    ] {
        let c = check(&report, agent, "project");
        assert_eq!(c["status"], "ok", "{c:#}");
        let h = &c["hooks"][0];
        assert_eq!(
            (&h["exists"], &h["executable"], &h["answers"], &h["verdict"]),
            (&json!(true), &json!(true), &json!(true), &json!(verdict)),
            "{agent}: {h:#}"
        );
    }
    assert_eq!(check(&report, "claude-code", "user")["status"], "ok");
    assert_eq!(check(&report, "codex", "user")["status"], "not-installed");
    // The check ran without a session: nothing was stored.
    assert!(!env.home.join(".local/share/portcullis").exists());

    let text = String::from_utf8(env.run(&["doctor"]).stdout).expect("UTF-8");
    assert!(text.contains("answers (allow)"), "{text}");
}

#[test]
fn doctor_fails_while_codex_would_skip_the_hook() {
    let env = Env::new("doctor-codex");
    env.ok(&["install", "codex"]);
    let (code, report) = doctor(&env);
    let c = check(&report, "codex", "project");
    assert_eq!(
        code,
        Some(1),
        "an untrusted Codex hook passed doctor: {report:#}"
    );
    assert_eq!(c["status"], "untrusted", "{c:#}");
    let notes = c["notes"].to_string();
    assert!(
        notes.contains("Codex has not trusted") && notes.contains("no trust recorded"),
        "{notes}"
    );
    let hooks = env.proj.join(".codex/hooks.json");
    // Two entries: PreToolUse, and PermissionRequest for shell commands.
    let mut trust = Vec::new();
    for (i, event) in ["pre_tool_use", "permission_request"].iter().enumerate() {
        let key = format!("{}:{event}:0:0", hooks.display());
        assert_eq!(c["codex_trust"][i]["key"], key.as_str(), "{c:#}");
        let hash = c["codex_trust"][i]["hash"]
            .as_str()
            .expect("a hash")
            .to_string();
        assert!(
            hash.starts_with("sha256:") && hash.len() == 7 + 64,
            "{hash}"
        );
        trust.push((key, hash));
    }
    assert_ne!(trust[0].1, trust[1].1, "the event is part of the hash");
    let codex_config = |trusted_hash: &str| {
        let mut text = format!(
            "[projects.\"{}\"]\ntrust_level = \"trusted\"\n",
            env.proj.display()
        );
        for (key, hash) in &trust {
            let hash = if trusted_hash.is_empty() {
                hash
            } else {
                trusted_hash
            };
            text.push_str(&format!(
                "\n[hooks.state.\"{key}\"]\ntrusted_hash = \"{hash}\"\n"
            ));
        }
        env.write(&env.home.join(".codex/config.toml"), &text)
    };

    // Trusted once, for another definition: Codex calls it modified and skips it.
    codex_config("sha256:00");
    let (code, report) = doctor(&env);
    let c = check(&report, "codex", "project");
    assert_eq!(code, Some(1), "{c:#}");
    assert_eq!(c["codex_trust"][0]["status"], "modified", "{c:#}");
    assert!(c["notes"].to_string().contains("stale"), "{c:#}");

    // What Codex writes when the person trusts the project and the hooks.
    codex_config("");
    let (code, report) = doctor(&env);
    let c = check(&report, "codex", "project");
    assert_eq!(code, Some(0), "{c:#}");
    assert_eq!(c["status"], "ok", "{c:#}");
    assert_eq!(c["notes"], json!([]), "{c:#}");

    // A changed timeout is a new definition: the trust no longer holds.
    let text = std::fs::read_to_string(&hooks).expect("hooks.json");
    env.write(&hooks, &text.replace("600", "599"));
    let (code, report) = doctor(&env);
    assert_eq!(code, Some(1), "{report:#}");
    let c = check(&report, "codex", "project");
    assert_eq!(c["codex_trust"][0]["status"], "modified", "{c:#}");
    // `install` puts the trusted definition back, so Codex trusts it again.
    let said = env.ok(&["install", "codex"]);
    assert!(!said.contains("trusted again"), "{said}");
    let (code, _) = doctor(&env);
    assert_eq!(code, Some(0), "install restored the trusted definition");
}

#[test]
fn doctor_fails_on_a_broken_hook() {
    let env = Env::new("broken");
    env.ok(&["install", "gemini"]);
    // The binary moved away.
    let file = env.proj.join(".claude/settings.json");
    env.write(
        &file,
        &json!({"hooks": {"PreToolUse": [{"matcher": "*", "hooks": [
            {"type": "command", "command": "/nonexistent/bin/portcullis hook claude-code"}]}]}})
        .to_string(),
    );
    // A "portcullis" that is not executable, and one that answers nonsense.
    let dir = env.root.join("fake");
    env.write(&dir.join("noexec/portcullis"), "#!/bin/sh\nexit 0\n");
    env.write(&dir.join("chatty/portcullis"), "#!/bin/sh\necho hello\n");
    {
        use std::os::unix::fs::PermissionsExt;
        let p = dir.join("chatty/portcullis");
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    }
    env.write(
        &env.home.join(".codex/hooks.json"),
        &json!({"hooks": {"PreToolUse": [{"hooks": [{"type": "command",
            "command": format!("{}/noexec/portcullis hook codex", dir.display())}]}]}})
        .to_string(),
    );
    env.write(
        &env.home.join(".cursor/hooks.json"),
        &json!({"version": 1, "hooks": {"beforeShellExecution": [
            {"command": format!("{}/chatty/portcullis hook cursor", dir.display())}]}})
        .to_string(),
    );

    let (code, report) = doctor(&env);
    assert_eq!(code, Some(1), "{report:#}");
    assert_eq!(report["ok"], false);
    let c = check(&report, "claude-code", "project");
    assert_eq!(c["status"], "broken");
    assert_eq!(c["hooks"][0]["exists"], false);
    assert!(
        c["hooks"][0]["problem"]
            .as_str()
            .expect("problem")
            .contains("does not exist")
    );

    let c = check(&report, "codex", "user");
    assert_eq!(c["status"], "broken");
    assert_eq!(
        (&c["hooks"][0]["exists"], &c["hooks"][0]["executable"]),
        (&json!(true), &json!(false))
    );

    let c = check(&report, "cursor", "user");
    assert_eq!(c["status"], "broken");
    assert_eq!(c["hooks"][0]["answers"], false);
    assert!(
        c["hooks"][0]["problem"]
            .as_str()
            .expect("problem")
            .contains("not JSON"),
        "{c:#}"
    );
    assert!(c["notes"].to_string().contains("beforeReadFile"), "{c:#}");

    assert_eq!(check(&report, "gemini", "project")["status"], "ok");

    let text = String::from_utf8(env.run(&["doctor"]).stdout).expect("UTF-8");
    assert!(text.contains("BROKEN"), "{text}");
}

/// A configuration with allow, ask and deny Bash rules (and one of each kind
/// that no prefix rule can say).
const RULES: &str = r#"mode = "ask"
[permissions]
allow = [
  "Bash(git diff *)",
  "Bash(npm run test:*)",
  "Bash(git status)",
  "Read(./**)",
]
ask = [
  "Bash(git push *)",
  "Bash(cargo test*)",
]
deny = [
  "Bash(rm -rf *)",
  "Bash(git * --force)",
  "Bash(curl)",
]
"#;

#[test]
fn exports_codex_rules() {
    let env = Env::new("codex-rules");
    let config = env.root.join("config.toml");
    env.write(&config, RULES);
    let c = config.display();
    let out = env.ok(&["export", "codex-rules", "--config", &c.to_string()]);
    let expected = format!(
        r#"# Codex execpolicy rules, generated by `portcullis export codex-rules`.
# Save as ~/.codex/rules/portcullis.rules (or .codex/rules/ of a trusted project).
# The portcullis hook still judges every call; these rules tell Codex what it may
# run without asking (allow), must ask about (prompt) or must refuse (forbidden).
# 1 rule(s) that are not Bash rules (files, web, MCP) have no Codex rule and are left out.

prefix_rule(pattern=["rm", "-rf"], decision="forbidden", justification="from portcullis rule Bash(rm -rf *) ({c}:14)")

# skipped portcullis rule Bash(git * --force) ({c}:15): a `*` between words: the agent's prefix rules match a fixed start of the command

prefix_rule(pattern=["curl"], decision="forbidden", justification="from portcullis rule Bash(curl) ({c}:16)")

prefix_rule(pattern=["git", "push"], decision="prompt", justification="from portcullis rule Bash(git push *) ({c}:10)")

# skipped portcullis rule Bash(cargo test*) ({c}:11): a wildcard inside a word: the agent's prefix rules match whole words

prefix_rule(pattern=["git", "diff"], decision="allow", justification="from portcullis rule Bash(git diff *) ({c}:4)")

prefix_rule(pattern=["npm", "run", "test"], decision="allow", justification="from portcullis rule Bash(npm run test:*) ({c}:5)")

# skipped portcullis rule Bash(git status) ({c}:6): allows one exact command: a prefix rule would also allow it with more arguments
"#
    );
    assert_eq!(out, expected);

    let file = env.root.join("out/portcullis.rules");
    let out = env.ok(&[
        "export",
        "codex-rules",
        "--config",
        &c.to_string(),
        "--out",
        file.to_str().expect("UTF-8"),
    ]);
    assert_eq!(out, "", "the rules went to the file");
    assert_eq!(read(&file), expected);
}

#[test]
fn exports_gemini_policy() {
    let env = Env::new("gemini-policy");
    let config = env.root.join("config.toml");
    env.write(&config, RULES);
    let c = config.display();
    let out = env.ok(&["export", "gemini-policy", "--config", &c.to_string()]);
    let expected = format!(
        r#"# Gemini CLI policy, generated by `portcullis export gemini-policy`.
# Save as ~/.gemini/policies/portcullis.toml.
# The portcullis hook still judges every call (its deny and ask always count);
# these rules let Gemini run the allowed commands without asking.
# 1 rule(s) that are not Bash rules (files, web, MCP) are left out.

# from portcullis rule Bash(rm -rf *) ({c}:14)
[[rule]]
toolName = "run_shell_command"
commandPrefix = "rm -rf"
decision = "deny"
priority = 999
denyMessage = "denied by portcullis rule Bash(rm -rf *) ({c}:14)"

# skipped portcullis rule Bash(git * --force) ({c}:15): a `*` between words: the agent's prefix rules match a fixed start of the command

# from portcullis rule Bash(curl) ({c}:16)
[[rule]]
toolName = "run_shell_command"
commandPrefix = "curl"
decision = "deny"
priority = 999
denyMessage = "denied by portcullis rule Bash(curl) ({c}:16)"

# from portcullis rule Bash(git push *) ({c}:10)
[[rule]]
toolName = "run_shell_command"
commandPrefix = "git push"
decision = "ask_user"
priority = 990

# skipped portcullis rule Bash(cargo test*) ({c}:11): a wildcard inside a word: the agent's prefix rules match whole words

# from portcullis rule Bash(git diff *) ({c}:4)
[[rule]]
toolName = "run_shell_command"
commandPrefix = "git diff"
decision = "allow"
priority = 300

# from portcullis rule Bash(npm run test:*) ({c}:5)
[[rule]]
toolName = "run_shell_command"
commandPrefix = "npm run test"
decision = "allow"
priority = 300

# skipped portcullis rule Bash(git status) ({c}:6): allows one exact command: a prefix rule would also allow it with more arguments
"#
    );
    assert_eq!(out, expected);
}

#[test]
fn export_stops_on_a_configuration_that_does_not_load() {
    let env = Env::new("export-bad");
    let config = env.root.join("config.toml");
    env.write(&config, "[permissions]\nallow = [\"Bash(\"]\n");
    let out = env.run(&[
        "export",
        "codex-rules",
        "--config",
        config.to_str().expect("UTF-8"),
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty());
    assert!(String::from_utf8_lossy(&out.stderr).contains("config.toml"));
}
