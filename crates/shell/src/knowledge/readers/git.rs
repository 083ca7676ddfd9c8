//! Git: global options, subcommands, configuration that names programs.

use super::*;

/// `git -c KEY=VALUE` keys whose value is a command git runs through the shell.
pub(super) const GIT_SHELL_KEYS: &[&str] = &[
    "core.pager",
    "core.editor",
    "core.sshcommand",
    "core.fsmonitor",
    "core.askpass",
    "core.gitproxy",
    "sequence.editor",
    "diff.external",
    "gpg.program",
    "gpg.ssh.program",
    "gpg.x509.program",
    "credential.helper",
    "uploadpack.packobjectshook",
    "web.browser",
];

pub(in crate::knowledge) fn git(args: &[Word], f: &mut Findings) {
    // Global options before the subcommand, split as git splits them.
    let split = crate::knowledge::git_split(&args.iter().map(|w| &w.value).collect::<Vec<_>>());
    let globals_end = split.subcommand.or(split.unknown).unwrap_or(args.len());
    if let Some(w) = args
        .iter()
        .take(globals_end)
        .chain(split.subcommand.and_then(|i| args.get(i)))
        .find(|w| w.dynamic)
    {
        f.opaque(
            OpaqueReason::DynamicCode,
            format!("git argument known only at run time: {}", w.value),
        );
        return;
    }
    if let Some(u) = split.unknown {
        f.opaque(
            OpaqueReason::UnknownWrapperOption,
            format!(
                "git option this analysis does not know: {}",
                args.get(u).map_or("", |w| w.value.as_str())
            ),
        );
        return;
    }
    for g in &split.globals {
        let opt = g.name.as_str();
        let value = g
            .value_at
            .and_then(|at| args.get(at))
            .zip(g.value.clone())
            .map(|(w, v)| (v, w.dynamic));
        match opt {
            "-c" => {
                if let Some((kv, dynamic)) = value {
                    git_config(&kv, dynamic, "git -c", f);
                }
            }
            "--config-env" => f.code(
                "git",
                opt,
                "sets configuration (which can name programs) from the environment",
            ),
            "--exec-path" if value.is_some() => {
                f.code("git", opt, "runs git's subcommands from another directory")
            }
            "--git-dir" | "--work-tree" => {
                if let Some((dir, dynamic)) = value {
                    f.read_path(&dir, dynamic);
                }
                f.code(
                    "git",
                    opt,
                    "uses another repository, whose configuration can run programs",
                );
                f.opaque(
                    OpaqueReason::CodeFromFile,
                    format!("git {opt}: another repository's configuration and hooks"),
                )
            }
            "-C" => {
                if let Some((dir, dynamic)) = value {
                    f.read_path(&dir, dynamic);
                }
            }
            "--shallow-file" => {
                if let Some((file, dynamic)) = value {
                    f.read_path(&file, dynamic);
                }
            }
            _ => {}
        }
    }
    let i = globals_end;
    let Some(sub) = args.get(i) else { return };
    let rest = args.get(i + 1..).unwrap_or_default();
    let sub = sub.value.as_str();
    let opt_value = |names: &[&str]| -> Vec<(String, bool)> {
        let mut out = Vec::new();
        let mut k = 0;
        while let Some(w) = rest.get(k) {
            let v = w.value.as_str();
            for n in names {
                if v == *n {
                    if let Some(next) = rest.get(k + 1) {
                        out.push((next.value.clone(), next.dynamic));
                    }
                } else if let Some(val) = v.strip_prefix(&format!("{n}=")) {
                    out.push((val.to_string(), w.dynamic));
                } else if n.len() == 2
                    && !n.starts_with("--")
                    && !v.starts_with("--")
                    && let Some(attached) = v.strip_prefix(*n)
                    && !attached.is_empty()
                {
                    out.push((attached.to_string(), w.dynamic));
                }
            }
            k += 1;
        }
        out
    };
    // Files git writes for any subcommand that takes them (`git log --output=F`,
    // `git format-patch -o DIR`, `git archive -o F`); `-o` means `--only` to
    // `git commit`, so it counts only where it names a file.
    let mut outputs = vec!["--output", "--output-directory", "--export-marks"];
    if matches!(sub, "format-patch" | "archive") {
        outputs.push("-o");
    }
    for (path, dynamic) in opt_value(&outputs) {
        f.write_path(&path, dynamic);
    }
    // A template directory's hooks are copied into the new repository and run.
    if matches!(sub, "clone" | "init") {
        for (dir, _) in opt_value(&["--template"]) {
            f.code("git", "--template", format!("copies hooks from {dir}"));
            f.opaque(
                OpaqueReason::CodeFromFile,
                format!("git {sub} --template {dir}: hooks from files"),
            );
        }
    }
    let operands: Vec<&Word> = rest.iter().filter(|w| !w.value.starts_with('-')).collect();
    match (sub, operands.as_slice()) {
        // `git clone URL [DIR]` writes DIR, or a directory named after the URL.
        // (Option values such as `--depth 1` are among the operands here:
        // every word that is not a URL or a number may be the directory.)
        ("clone", ops) => {
            let dirs: Vec<&&Word> = ops
                .iter()
                .skip(1)
                .filter(|w| {
                    let url =
                        w.value.contains("://") || (w.value.contains('@') && w.value.contains(':'));
                    let number = w.value.chars().all(|c| c.is_ascii_digit());
                    !url && !number
                })
                .collect();
            if dirs.is_empty() {
                f.write_path(".", true);
            }
            dirs.into_iter().for_each(|d| f.write(d));
        }
        // `git maintenance register` adds the repository to ~/.gitconfig.
        ("maintenance", [verb, ..]) if matches!(verb.value.as_str(), "register" | "start") => {
            f.write_path("~/.gitconfig", false)
        }
        // `git bundle create FILE …`, `git worktree add PATH …`: files written.
        ("bundle", [verb, file, ..]) if verb.value == "create" => f.write(file),
        ("worktree", [verb, path, ..]) if verb.value == "add" => f.write(path),
        // Patches and mailboxes are read from their files.
        ("apply" | "am", files) => files.iter().for_each(|w| f.read(w)),
        // `git hash-object FILE…` reads (and with -w stores) the files; with
        // `--stdin-paths` the names come from standard input.
        ("hash-object", files) => {
            if rest.iter().any(|w| w.value == "--stdin-paths") {
                f.opaque(
                    OpaqueReason::DynamicCode,
                    "git hash-object --stdin-paths reads files named on standard input",
                );
            }
            files.iter().for_each(|w| f.read(w));
        }
        _ => {}
    }
    match sub {
        "clone" | "fetch" | "pull" | "ls-remote" | "archive" | "submodule" | "remote" => {
            // `git remote -v` / `git remote add` stay local; `remote update|show|prune` do not.
            let local_remote = sub == "remote"
                && !rest
                    .iter()
                    .any(|w| matches!(w.value.as_str(), "update" | "show" | "prune" | "set-head"));
            if !local_remote {
                f.network("git", None);
            }
            for (cmd, dynamic) in opt_value(&["--upload-pack", "-u", "--exec"]) {
                f.code("git", "--upload-pack", "runs a program for the transport");
                f.shell("git --upload-pack", &cmd, dynamic);
            }
            if sub == "clone" {
                for (kv, dynamic) in opt_value(&["--config", "-c"]) {
                    git_config(&kv, dynamic, "git clone -c", f);
                }
            }
            if sub == "submodule" && rest.iter().any(|w| w.value == "foreach") {
                let pos = rest.iter().position(|w| w.value == "foreach").unwrap_or(0);
                let cmd_words: Vec<&Word> = rest
                    .iter()
                    .skip(pos + 1)
                    .filter(|w| !w.value.starts_with("--"))
                    .collect();
                let dynamic = cmd_words.iter().any(|w| w.dynamic);
                let text = cmd_words
                    .iter()
                    .map(|w| w.value.as_str())
                    .collect::<Vec<_>>()
                    .join(" ");
                f.shell("git submodule foreach", &text, dynamic);
            }
        }
        "push" | "send-email" | "request-pull" => {
            f.network("git", None);
            for (cmd, dynamic) in opt_value(&["--receive-pack", "--exec"]) {
                f.code("git", "--receive-pack", "runs a program for the transport");
                f.shell("git --receive-pack", &cmd, dynamic);
            }
            if sub == "send-email" {
                // Commands that pick recipients or send the mail; a server
                // given as a path is a sendmail program run as-is.
                for opt in ["--sendmail-cmd", "--to-cmd", "--cc-cmd", "--header-cmd"] {
                    for (cmd, dynamic) in opt_value(&[opt]) {
                        f.shell(format!("git send-email {opt}"), &cmd, dynamic);
                    }
                }
                for (server, dynamic) in opt_value(&["--smtp-server"]) {
                    if dynamic || server.starts_with('/') {
                        f.shell("git send-email --smtp-server", &server, dynamic);
                    }
                }
                f.code(
                    "git",
                    "send-email",
                    "sends mail with the configured sendmail program or server",
                );
            }
        }
        "instaweb" => {
            for (cmd, dynamic) in opt_value(&["--httpd", "-d", "--browser", "-b"]) {
                f.shell("git instaweb", &cmd, dynamic);
            }
            f.network("git", None);
            f.code("git", "instaweb", "starts a web server and a browser");
        }
        "daemon" => {
            f.network("git", None);
            f.code("git", "daemon", "serves repositories to the network");
        }
        // Prints stored credentials: a secret, and the helpers are programs.
        "credential" | "credential-store" | "credential-cache" => f.code(
            "git",
            sub,
            "asks the credential helpers for stored credentials and prints them",
        ),
        "config" => {
            let reading = rest.iter().any(|w| {
                matches!(
                    w.value.as_str(),
                    "--get"
                        | "--get-all"
                        | "--get-regexp"
                        | "-l"
                        | "--list"
                        | "--get-urlmatch"
                        | "get"
                        | "list"
                        | "--show-origin"
                )
            });
            if !reading {
                let global = rest.iter().any(|w| w.value == "--global");
                let system = rest.iter().any(|w| w.value == "--system");
                let file = opt_value(&["--file", "-f"]).into_iter().next();
                let target = match (file, global, system) {
                    (Some((p, d)), _, _) => (p, d),
                    (None, true, _) => ("~/.gitconfig".to_string(), false),
                    (None, _, true) => ("/etc/gitconfig".to_string(), false),
                    _ => (".git/config".to_string(), false),
                };
                f.write_path(&target.0, target.1);
                let operands: Vec<&Word> =
                    rest.iter().filter(|w| !w.value.starts_with('-')).collect();
                let operands = match operands.split_first() {
                    Some((first, tail)) if matches!(first.value.as_str(), "set" | "add") => tail,
                    _ => operands.as_slice(),
                };
                if let [key, value, ..] = operands {
                    f.code(
                        "git",
                        format!("config {}", key.value),
                        "stores configuration that later git commands act on",
                    );
                    git_config(
                        &format!("{}={}", key.value, value.value),
                        value.dynamic || key.dynamic,
                        "git config",
                        f,
                    );
                }
            }
        }
        "bisect" => {
            if let Some(pos) = rest.iter().position(|w| w.value == "run") {
                let start = i + 1 + pos + 1 + 1; // +1 for the program word in `words`
                f.commands
                    .push(("git bisect run".into(), start..args.len() + 1, None));
            }
        }
        "rebase" => {
            for (cmd, dynamic) in opt_value(&["--exec", "-x"]) {
                f.shell("git rebase --exec", &cmd, dynamic);
            }
        }
        "difftool" | "mergetool" => {
            for (cmd, dynamic) in opt_value(&["--extcmd", "-x"]) {
                f.shell(format!("git {sub} --extcmd"), &cmd, dynamic);
            }
            f.code("git", sub, "runs a configured diff or merge tool");
        }
        "grep" => {
            for w in rest {
                let v = w.value.as_str();
                if v == "-O" || v == "--open-files-in-pager" {
                    f.code("git", v, "runs the pager on the files");
                } else if let Some(cmd) = v
                    .strip_prefix("--open-files-in-pager=")
                    .or_else(|| v.strip_prefix("-O").filter(|s| !s.is_empty()))
                {
                    f.code(
                        "git",
                        "--open-files-in-pager",
                        "runs the given pager on the files",
                    );
                    f.shell("git grep -O", cmd, w.dynamic);
                }
            }
        }
        "filter-branch" => {
            for pair in rest.windows(2) {
                let [w, script] = pair else { continue };
                if w.value.ends_with("-filter") {
                    f.shell(
                        format!("git filter-branch {}", w.value),
                        &script.value,
                        script.dynamic,
                    );
                }
            }
        }
        // Removes untracked files below the work tree (not the tree itself).
        "clean" => f.effects.push(Effect::Write {
            path: ".".into(),
            dynamic: false,
        }),
        "rm" => rest
            .iter()
            .filter(|w| !w.value.starts_with('-'))
            .for_each(|w| f.delete(w)),
        "mv" => {
            let ops: Vec<&Word> = rest.iter().filter(|w| !w.value.starts_with('-')).collect();
            if let Some((to, from)) = ops.split_last() {
                for src in from {
                    f.effects.push(Effect::Move {
                        from: src.value.clone(),
                        to: to.value.clone(),
                        dynamic: src.dynamic || to.dynamic,
                    });
                }
            }
        }
        "reset" | "checkout" | "restore" | "switch" | "stash" | "merge" | "cherry-pick"
        | "revert" | "am" | "apply" => {
            // These rewrite files of the work tree (hooks in .git/hooks may run too;
            // those are protected paths, not commands of this text).
            f.effects.push(Effect::Write {
                path: ".".into(),
                dynamic: false,
            });
        }
        _ => {}
    }
}

/// A `KEY=VALUE` git setting: code-running keys and aliases are analysed.
pub(super) fn git_config(kv: &str, dynamic: bool, label: &str, f: &mut Findings) {
    let (key, value) = kv.split_once('=').unwrap_or((kv, ""));
    let lower = key.to_ascii_lowercase();
    f.code(
        "git",
        format!("-c {key}"),
        "sets configuration for this call; configuration can name programs git runs",
    );
    let shell_key = GIT_SHELL_KEYS.contains(&lower.as_str())
        || lower.starts_with("pager.")
        || (lower.starts_with("diff.")
            && (lower.ends_with(".textconv") || lower.ends_with(".command")))
        || (lower.starts_with("merge.") && lower.ends_with(".driver"))
        || (lower.starts_with("filter.")
            && (lower.ends_with(".clean")
                || lower.ends_with(".smudge")
                || lower.ends_with(".process")))
        || (lower.starts_with("remote.")
            && (lower.ends_with(".uploadpack") || lower.ends_with(".receivepack")))
        || (lower.starts_with("credential.") && lower.ends_with(".helper"));
    if lower.starts_with("alias.") {
        if let Some(cmd) = value.strip_prefix('!') {
            f.shell(format!("{label} {key}"), cmd, dynamic);
        }
    } else if shell_key && !value.is_empty() && !matches!(value, "true" | "false") {
        f.shell(
            format!("{label} {key}"),
            value.trim_start_matches('!'),
            dynamic,
        );
    } else if lower == "include.path"
        || lower.starts_with("includeif.")
        || lower == "core.hookspath"
        || lower == "core.worktree"
        || lower == "init.templatedir"
    {
        f.code(
            "git",
            format!("-c {key}"),
            format!("loads configuration or hooks from {value}"),
        );
        f.opaque(
            OpaqueReason::CodeFromFile,
            format!("git -c {key}={value} runs hooks or configured programs from files"),
        );
    }
}
