//! Hooks that enforce (`[confine] mode`): a shell call the policy allows only
//! if it runs confined comes back rewritten into `portcullis run … -- bash -c
//! '<command>'` in each agent's own rewrite channel; the rewritten command,
//! run by a shell as the agent would, runs the original confined. Agents
//! without a rewrite channel (Cursor, pi) get the decision as if confinement
//! did not exist.

// Test code: a failed unwrap, index or panic is a failed test.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

use crate::support;

use std::path::Path;
use std::process::Command;

use serde_json::{Value, json};
use support::Sandbox;
use support::hooks::payload;

/// Would ask in approve-for-me only for reads known at run time.
const DYNAMIC_READS: &str = "find . -name '*.txt' | xargs grep -l needle";

fn sandbox(confine: &str) -> (Sandbox, std::path::PathBuf) {
    let sb = Sandbox::new("hook-confine");
    std::fs::write(sb.repo.join("a.txt"), "a needle\n").unwrap();
    std::fs::write(sb.repo.join("b.txt"), "nothing\n").unwrap();
    let config = sb.root.join("portcullis.toml");
    std::fs::write(
        &config,
        format!("mode = \"approve-for-me\"\n[confine]\nmode = \"{confine}\"\n"),
    )
    .unwrap();
    (sb, config)
}

/// The command a reply rewrote the call into, per agent.
fn rewritten(agent: &str, reply: &Value) -> Option<String> {
    let input = match agent {
        "claude-code" | "codex" => {
            assert_eq!(
                reply["hookSpecificOutput"]["permissionDecision"], "allow",
                "{reply}"
            );
            &reply["hookSpecificOutput"]["updatedInput"]
        }
        "gemini" => {
            assert_eq!(reply["decision"], "allow", "{reply}");
            &reply["hookSpecificOutput"]["tool_input"]
        }
        "pi" | "pi-rewrites" => {
            assert_eq!(reply["decision"], "allow", "{reply}");
            &reply["input"]
        }
        _ => return None,
    };
    input["command"].as_str().map(str::to_string)
}

fn payload_for(agent: &str, cwd: &Path, command: &str) -> Value {
    match agent {
        "claude-code" => payload::claude(
            "PreToolUse",
            Some("s1"),
            cwd,
            "Bash",
            json!({"command": command, "description": "search"}),
        ),
        "codex" => payload::codex("PreToolUse", "s1", cwd, "Bash", json!({"command": command})),
        "gemini" => payload::gemini(
            "s1",
            cwd,
            "run_shell_command",
            json!({"command": command, "description": "search"}),
        ),
        "cursor" => payload::cursor_shell("c1", cwd, cwd, command),
        "pi" => payload::pi(Some("s1"), cwd, "bash", json!({"command": command}), false),
        // The extension `install pi` writes says it applies rewrites.
        "pi-rewrites" => {
            let mut v = payload::pi(Some("s1"), cwd, "bash", json!({"command": command}), false);
            v["rewrites"] = json!(true);
            v
        }
        other => panic!("no payload for {other}"),
    }
}

/// Runs `command` as the agent's shell would (`bash -c`), in the sandbox.
fn shell(sb: &Sandbox, command: &str) -> std::process::Output {
    sb.command("bash").arg("-c").arg(command).output().unwrap()
}

#[test]
fn dynamic_reads_come_back_rewritten_and_run_confined() {
    let (sb, config) = sandbox("dynamic");
    for agent in ["claude-code", "codex", "gemini", "pi-rewrites"] {
        let run = sb.hook(
            agent.trim_end_matches("-rewrites"),
            Some(&config),
            &payload_for(agent, &sb.repo, DYNAMIC_READS).to_string(),
        );
        let reply = run
            .reply()
            .unwrap_or_else(|| panic!("{agent}: no reply {run:?}"));
        let command = rewritten(agent, &reply).unwrap_or_else(|| panic!("{agent}: {reply}"));
        assert!(
            command.contains(" run --network off -- bash -c "),
            "{agent}: {command}"
        );
        // The rest of the input is kept (Claude Code replaces it whole).
        if agent != "codex" && agent != "pi-rewrites" {
            let input = if agent == "gemini" {
                &reply["hookSpecificOutput"]["tool_input"]
            } else {
                &reply["hookSpecificOutput"]["updatedInput"]
            };
            assert_eq!(input["description"], "search", "{agent}: {reply}");
        }
        // Run as the agent would: the original command, confined.
        let out = shell(&sb, &command);
        assert!(out.status.success(), "{agent}: {out:?}");
        assert_eq!(String::from_utf8_lossy(&out.stdout), "./a.txt\n", "{agent}");
    }
}

#[test]
fn without_a_rewrite_channel_the_call_is_asked_as_before() {
    let (sb, config) = sandbox("dynamic");
    // An older pi extension (no `rewrites: true`) would ignore a rewrite.
    for agent in ["cursor", "pi"] {
        let run = sb.hook(
            agent,
            Some(&config),
            &payload_for(agent, &sb.repo, DYNAMIC_READS).to_string(),
        );
        let text = run.stdout.clone();
        assert!(
            !text.contains("portcullis run") && !text.contains("\"allow\""),
            "{agent}: {run:?}"
        );
    }
}

#[test]
fn off_asks_and_always_confines_plain_allows() {
    let (sb, config) = sandbox("off");
    let run = sb.hook(
        "claude-code",
        Some(&config),
        &payload_for("claude-code", &sb.repo, DYNAMIC_READS).to_string(),
    );
    let reply = run.reply().unwrap();
    assert_eq!(
        reply["hookSpecificOutput"]["permissionDecision"], "ask",
        "{reply}"
    );

    let (sb, config) = sandbox("always");
    let run = sb.hook(
        "claude-code",
        Some(&config),
        &payload_for("claude-code", &sb.repo, "cat a.txt").to_string(),
    );
    let reply = run.reply().unwrap();
    let command = rewritten("claude-code", &reply).unwrap();
    assert!(command.ends_with("-- bash -c 'cat a.txt'"), "{command}");
    // A write the analysis cannot see, stopped by the kernel: `always` is the
    // second line behind the analysis.
    let sneaky = "cat a.txt; $(printf 'ec%s' ho) x >> ~/.bashrc";
    std::fs::write(sb.home.join(".bashrc"), "# rc\n").unwrap();
    let line = portcullis_adapters::confined_command(
        env!("CARGO_BIN_EXE_portcullis"),
        sneaky,
        false,
        true,
        &[],
        &[],
        false,
    );
    let out = shell(&sb, &line);
    assert_eq!(
        std::fs::read_to_string(sb.home.join(".bashrc")).unwrap(),
        "# rc\n",
        "{out:?}"
    );
}

#[test]
fn the_confined_form_runs_the_same_text_in_bash() {
    // Whatever the text, the inner bash receives it byte for byte: a fake
    // `portcullis` that prints its arguments stands in for the real one.
    let dir = tempfile::tempdir().unwrap();
    let fake = dir.path().join("portcullis");
    std::fs::write(&fake, "#!/bin/sh\nprintf '%s\\0' \"$@\"\n").unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
    let mut texts: Vec<String> = [
        "echo hi",
        "it's \"quoted\" $HOME `id` $(id) \\ back",
        "a\nb\tc",
        "'",
        "''''",
        "!event ~user *glob* {a,b} [x] ; & | < > ( )",
        "",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    // Every byte value but NUL, alone and around quotes.
    for b in 1u8..=255 {
        if let Ok(s) = String::from_utf8(vec![b]) {
            texts.push(format!("{s}'{s}\"{s}"));
        }
    }
    texts.push("é ü 中文 🚀".into());
    for text in texts {
        let line = portcullis_adapters::confined_command(
            &fake.to_string_lossy(),
            &text,
            false,
            true,
            &[],
            &[],
            false,
        );
        let out = Command::new("bash").arg("-c").arg(&line).output().unwrap();
        let args: Vec<&[u8]> = out.stdout.split(|&b| b == 0).collect();
        let last = args.len().saturating_sub(2);
        assert_eq!(
            args.get(last).copied(),
            Some(text.as_bytes()),
            "{line:?} gave {:?}",
            String::from_utf8_lossy(&out.stdout)
        );
        assert_eq!(
            &args[..last],
            &[
                b"run".as_slice(),
                b"--network",
                b"off",
                b"--",
                b"bash",
                b"-c"
            ],
            "{line:?}"
        );
    }
}

#[test]
fn in_ask_mode_without_edit_rules_the_confined_call_is_read_only() {
    let sb = Sandbox::new("hook-confine-ro");
    std::fs::write(sb.repo.join("a.txt"), "a needle\n").unwrap();
    let config = sb.root.join("portcullis.toml");
    std::fs::write(
        &config,
        "mode = \"ask\"\n[permissions]\nallow = [\"Bash(find *)\", \"Bash(xargs *)\", \"Bash(grep *)\"]\n",
    )
    .unwrap();
    // The policy allows no edits here: the kernel holds the call to reading.
    let command = "find . -name '*.txt' | xargs grep -l needle";
    let run = sb.hook(
        "claude-code",
        Some(&config),
        &payload_for("claude-code", &sb.repo, command).to_string(),
    );
    let reply = run.reply().unwrap();
    let line = rewritten("claude-code", &reply).unwrap();
    assert!(line.contains(" --read-only -- bash -c "), "{line}");
    let out = shell(&sb, &line);
    assert!(out.status.success(), "{out:?}");
    assert_eq!(String::from_utf8_lossy(&out.stdout), "./a.txt\n");
}

/// The rewritten form of `command` once a person granted `op` on `paths`
/// for the session: without the grants it asks (the session registers
/// itself), with them it comes back rewritten.
fn rewritten_after_grants(
    sb: &Sandbox,
    config: &Path,
    command: &str,
    op: &str,
    paths: &[std::path::PathBuf],
) -> String {
    let payload = payload_for("claude-code", &sb.repo, command).to_string();
    let run = sb.hook("claude-code", Some(config), &payload);
    assert_eq!(
        run.reply().unwrap()["hookSpecificOutput"]["permissionDecision"],
        "ask",
        "{run:?}"
    );
    for path in paths {
        let out = sb.cli(&[
            "grants",
            "add",
            "--session",
            "s1",
            "--scope",
            "session",
            "--op",
            op,
            "--path",
            &path.to_string_lossy(),
        ]);
        assert!(out.status.success(), "{out:?}");
    }
    let run = sb.hook("claude-code", Some(config), &payload);
    rewritten("claude-code", &run.reply().unwrap()).unwrap()
}

/// A person's grant to read a secret is part of the profile: the call runs
/// confined with exactly that file revealed (`--reveal`), the rest of its
/// directory still hidden.
#[test]
fn a_granted_secret_read_is_revealed_and_nothing_else() {
    let (sb, config) = sandbox("always");
    let aws = sb.home.join(".aws");
    std::fs::create_dir_all(&aws).unwrap();
    std::fs::write(aws.join("credentials"), "KEYDATA\n").unwrap();
    std::fs::write(aws.join("config"), "CONFIGDATA\n").unwrap();
    let line = rewritten_after_grants(
        &sb,
        &config,
        "cat ~/.aws/credentials ~/.aws/config",
        "read",
        &[aws.join("credentials"), aws.join("config")],
    );
    assert!(line.contains(" --reveal "), "{line}");
    let out = shell(&sb, &line);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("KEYDATA") && stdout.contains("CONFIGDATA"),
        "{out:?}"
    );

    // `portcullis run --reveal` itself: exactly the file named.
    let out = shell(
        &sb,
        &format!(
            "'{}' run --reveal ~/.aws/credentials -- bash -c 'cat ~/.aws/credentials; cat ~/.aws/config'",
            env!("CARGO_BIN_EXE_portcullis")
        ),
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("KEYDATA"), "{out:?}");
    assert!(!stdout.contains("CONFIGDATA"), "{out:?}");
}

/// A person's grant to write a file outside the workspace is part of the
/// profile too: the call runs confined with exactly that file writable
/// (`--write`); its neighbours stay as they are.
#[test]
fn a_granted_write_outside_the_workspace_is_writable_and_nothing_else() {
    let (sb, config) = sandbox("always");
    let downloads = sb.home.join("Downloads");
    std::fs::create_dir_all(&downloads).unwrap();
    std::fs::write(downloads.join("other.txt"), "OTHER\n").unwrap();
    std::fs::write(downloads.join("out.txt"), "OLD\n").unwrap();
    let out_txt = std::fs::canonicalize(downloads.join("out.txt")).unwrap();
    let line = rewritten_after_grants(
        &sb,
        &config,
        "echo done > ~/Downloads/out.txt",
        "write",
        std::slice::from_ref(&out_txt),
    );
    assert!(line.contains(" --write "), "{line}");
    let out = shell(&sb, &line);
    assert!(out.status.success(), "{out:?}");
    assert_eq!(std::fs::read_to_string(&out_txt).unwrap(), "done\n");
    // The same profile: the granted file again works, a neighbour is
    // refused by the kernel.
    let profile = |text: &str| {
        portcullis_adapters::confined_command(
            env!("CARGO_BIN_EXE_portcullis"),
            text,
            false,
            true,
            &[],
            &[out_txt.to_string_lossy().into_owned()],
            false,
        )
    };
    let out = shell(&sb, &profile("echo again >> ~/Downloads/out.txt"));
    assert!(out.status.success(), "{out:?}");
    let sneaky = profile("echo x > ~/Downloads/other.txt");
    let out = shell(&sb, &sneaky);
    assert!(!out.status.success(), "{sneaky}: {out:?}");
    assert_eq!(
        std::fs::read_to_string(downloads.join("other.txt")).unwrap(),
        "OTHER\n"
    );
}

/// `[confine] git_writes = true`: the rewrite leaves git's own data writable
/// (`--git-writes`), so an allowed `git commit` runs confined and works;
/// without it, the confined commit fails (all of `.git` is protected).
#[test]
fn git_writes_lets_a_confined_commit_work() {
    for (git_writes, works) in [(false, false), (true, true)] {
        let sb = Sandbox::new("hook-confine-git");
        std::fs::write(sb.repo.join("a.txt"), "a\n").unwrap();
        let config = sb.root.join("portcullis.toml");
        std::fs::write(
            &config,
            format!(
                "mode = \"approve-for-me\"\n[permissions]\nallow = [\"Bash(git add *)\", \"Bash(git commit *)\"]\n[confine]\nmode = \"always\"\ngit_writes = {git_writes}\n"
            ),
        )
        .unwrap();
        for (k, v) in [("user.name", "t"), ("user.email", "t@x")] {
            let ok = std::process::Command::new("git")
                .args(["config", k, v])
                .current_dir(&sb.repo)
                .status()
                .unwrap();
            assert!(ok.success());
        }
        let command = "git add a.txt && git commit -qm confined";
        let run = sb.hook(
            "claude-code",
            Some(&config),
            &payload_for("claude-code", &sb.repo, command).to_string(),
        );
        let line = rewritten("claude-code", &run.reply().unwrap()).unwrap();
        assert_eq!(line.contains(" --git-writes "), git_writes, "{line}");
        let out = shell(&sb, &line);
        assert_eq!(out.status.success(), works, "{line}: {out:?}");
        let log = std::process::Command::new("git")
            .args(["log", "--format=%s"])
            .current_dir(&sb.repo)
            .output()
            .unwrap();
        assert_eq!(
            String::from_utf8_lossy(&log.stdout).contains("confined"),
            works,
            "{out:?}"
        );
    }
}
