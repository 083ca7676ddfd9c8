//! Readers for programs whose argument language is richer than options and
//! operands: `git`, `find`, `sed`, `awk`, `tar`, network tools, editors,
//! debuggers, database shells, interpreters, builds and package managers.

use super::{Findings, ProgramSpec, generic, join, split};
use crate::model::{Effect, OpaqueReason};
use crate::word::Word;

// ----- git ---------------------------------------------------------------------

/// `git -c KEY=VALUE` keys whose value is a command git runs through the shell.
const GIT_SHELL_KEYS: &[&str] = &[
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

pub(super) fn git(args: &[Word], f: &mut Findings) {
    // Global options before the subcommand.
    let mut i = 0;
    while i < args.len() {
        let w = &args[i];
        if w.dynamic {
            f.opaque(
                OpaqueReason::DynamicCode,
                format!("git argument known only at run time: {}", w.value),
            );
            return;
        }
        let v = w.value.as_str();
        if !v.starts_with('-') {
            break;
        }
        let (opt, inline) = match v.split_once('=') {
            Some((o, val)) => (o, Some(val.to_string())),
            None => (v, None),
        };
        let takes = matches!(
            opt,
            "-c" | "-C"
                | "--git-dir"
                | "--work-tree"
                | "--namespace"
                | "--config-env"
                | "--exec-path"
                | "--super-prefix"
                | "--list-cmds"
                | "--attr-source"
        );
        let value = if takes && inline.is_none() && !(opt == "--exec-path" && v == "--exec-path") {
            i += 1;
            args.get(i).map(|n| (n.value.clone(), n.dynamic))
        } else {
            inline.map(|s| (s, false))
        };
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
            "--exec-path" if v.contains('=') => {
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
            _ => {}
        }
        i += 1;
    }
    let Some(sub) = args.get(i) else { return };
    let rest = &args[i + 1..];
    let sub = sub.value.as_str();
    let opt_value = |names: &[&str]| -> Vec<(String, bool)> {
        let mut out = Vec::new();
        let mut k = 0;
        while k < rest.len() {
            let v = rest[k].value.as_str();
            for n in names {
                if v == *n {
                    if let Some(next) = rest.get(k + 1) {
                        out.push((next.value.clone(), next.dynamic));
                    }
                } else if let Some(val) = v.strip_prefix(&format!("{n}=")) {
                    out.push((val.to_string(), rest[k].dynamic));
                } else if n.len() == 2
                    && !n.starts_with("--")
                    && v.starts_with(n)
                    && v.len() > 2
                    && !v.starts_with("--")
                {
                    out.push((v[2..].to_string(), rest[k].dynamic));
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
        // `git bundle create FILE …`, `git worktree add PATH …`: files written.
        ("bundle", [verb, file, ..]) if verb.value == "create" => f.write(file),
        ("worktree", [verb, path, ..]) if verb.value == "add" => f.write(path),
        // Patches and mailboxes are read from their files.
        ("apply" | "am", files) => files.iter().for_each(|w| f.read(w)),
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
                let cmd_words: Vec<&Word> = rest[pos + 1..]
                    .iter()
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
                let operands = match operands.first().map(|w| w.value.as_str()) {
                    Some("set" | "add") => &operands[1..],
                    _ => &operands[..],
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
            for w in rest.windows(2) {
                if w[0].value.ends_with("-filter") {
                    f.shell(
                        format!("git filter-branch {}", w[0].value),
                        &w[1].value,
                        w[1].dynamic,
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
fn git_config(kv: &str, dynamic: bool, label: &str, f: &mut Findings) {
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

// ----- find ----------------------------------------------------------------------

/// `find` tests and actions that take one argument.
const FIND_ONE_ARG: &[&str] = &[
    "-name",
    "-iname",
    "-path",
    "-ipath",
    "-wholename",
    "-iwholename",
    "-regex",
    "-iregex",
    "-lname",
    "-ilname",
    "-type",
    "-xtype",
    "-maxdepth",
    "-mindepth",
    "-newer",
    "-anewer",
    "-cnewer",
    "-perm",
    "-user",
    "-group",
    "-uid",
    "-gid",
    "-size",
    "-mtime",
    "-atime",
    "-ctime",
    "-mmin",
    "-amin",
    "-cmin",
    "-used",
    "-links",
    "-inum",
    "-samefile",
    "-fstype",
    "-printf",
    "-regextype",
    "-context",
    "-files0-from",
    "-D",
    "-O",
];

pub(super) fn find(args: &[Word], f: &mut Findings) {
    // Leading paths (and -H/-L/-P) come before the expression.
    let mut i = 0;
    let mut roots = Vec::new();
    while i < args.len() {
        let v = args[i].value.as_str();
        if matches!(v, "-H" | "-L" | "-P") {
            i += 1;
            continue;
        }
        if v.starts_with('-') || v == "(" || v == "!" || v == "," {
            break;
        }
        roots.push(&args[i]);
        i += 1;
    }
    if roots.is_empty() {
        f.read_path(".", false);
    }
    for r in &roots {
        f.read(r);
    }
    while i < args.len() {
        let w = &args[i];
        let v = w.value.as_str();
        if w.dynamic && v.starts_with('-') {
            f.opaque(
                OpaqueReason::DynamicCode,
                format!("find expression known only at run time: {v}"),
            );
        }
        match v {
            "-exec" | "-execdir" | "-ok" | "-okdir" => {
                let start = i + 1;
                let mut end = start;
                while end < args.len() && args[end].value != ";" && args[end].value != "+" {
                    end += 1;
                }
                if end == args.len() {
                    f.opaque(
                        OpaqueReason::ParseError,
                        format!("find {v} without ';' or '+'"),
                    );
                }
                // Ranges index `words`, where args start at 1.
                f.commands
                    .push((format!("find {v}"), start + 1..end + 1, Some("{}".into())));
                i = end + 1;
                continue;
            }
            "-delete" => {
                if roots.is_empty() {
                    f.effects.push(Effect::Delete {
                        path: ".".into(),
                        dynamic: true,
                    });
                }
                for r in &roots {
                    f.effects.push(Effect::Delete {
                        path: r.value.clone(),
                        dynamic: true,
                    });
                }
            }
            "-fprint" | "-fprint0" | "-fls" => {
                if let Some(file) = args.get(i + 1) {
                    f.write(file);
                }
                i += 1;
            }
            "-fprintf" => {
                if let Some(file) = args.get(i + 1) {
                    f.write(file);
                }
                i += 2;
            }
            _ if FIND_ONE_ARG.contains(&v) || v.starts_with("-newer") => i += 1,
            _ => {}
        }
        i += 1;
    }
}

// ----- sed ------------------------------------------------------------------------

pub(super) fn sed(args: &[Word], f: &mut Findings) {
    let mut scripts: Vec<&Word> = Vec::new();
    let mut operands: Vec<&Word> = Vec::new();
    let mut in_place = false;
    let mut has_script_opt = false;
    let mut i = 0;
    let mut only_operands = false;
    while i < args.len() {
        let w = &args[i];
        let v = w.value.as_str();
        if only_operands || w.dynamic || !v.starts_with('-') || v == "-" {
            operands.push(w);
            i += 1;
            continue;
        }
        if v == "--" {
            only_operands = true;
            i += 1;
            continue;
        }
        // What the option (or the last letter of a bundle such as `-ne`) takes.
        // `-i[SUFFIX]` takes an attached suffix, so `-ie` is in-place with suffix `e`.
        let (takes_script, takes_file) = if let Some(long) = v.strip_prefix("--") {
            in_place |= long.starts_with("in-place");
            if long.starts_with("expression=") {
                has_script_opt = true;
                scripts.push(w);
            }
            (long == "expression", long == "file")
        } else if v.starts_with("-i") {
            in_place = true;
            (false, false)
        } else {
            in_place |= v.contains('i');
            (v.ends_with('e'), v.ends_with('f'))
        };
        if takes_script || takes_file {
            has_script_opt = true;
            if let Some(next) = args.get(i + 1) {
                if takes_script {
                    scripts.push(next);
                } else {
                    f.read(next);
                    f.opaque(
                        OpaqueReason::InterpretedCode,
                        format!("sed script file {} (may run commands with `e`)", next.value),
                    );
                }
            }
            i += 1;
        }
        i += 1;
    }
    if !has_script_opt && !operands.is_empty() {
        scripts.push(operands.remove(0));
    }
    for s in scripts {
        let text = s.value.strip_prefix("--expression=").unwrap_or(&s.value);
        if s.dynamic {
            f.opaque(
                OpaqueReason::InterpretedCode,
                format!("sed script known only at run time: {text}"),
            );
        } else {
            sed_script(text, f);
        }
    }
    for o in operands {
        if in_place {
            f.write(o);
        }
        f.read(o);
    }
}

/// Reads a sed script for the commands that touch files or run programs:
/// `e`, `s///e`, `w`/`W`, `s///w`, `r`/`R`.
fn sed_script(script: &str, f: &mut Findings) {
    let chars: Vec<char> = script.chars().collect();
    let mut i = 0;
    let rest_of_line = |i: &mut usize| -> String {
        let start = *i;
        while *i < chars.len() && chars[*i] != '\n' {
            *i += 1;
        }
        chars[start..*i]
            .iter()
            .collect::<String>()
            .trim()
            .to_string()
    };
    while i < chars.len() {
        let c = chars[i];
        // Addresses.
        if c.is_ascii_digit()
            || matches!(
                c,
                '$' | ',' | '!' | '~' | '+' | ' ' | '\t' | ';' | '\n' | '{' | '}'
            )
        {
            i += 1;
            continue;
        }
        if c == '/' || c == '\\' {
            let delim = if c == '\\' {
                i += 1;
                chars.get(i).copied().unwrap_or('/')
            } else {
                '/'
            };
            i += 1;
            while i < chars.len() && chars[i] != delim {
                if chars[i] == '\\' {
                    i += 1;
                }
                i += 1;
            }
            i += 1;
            // `I` / `M` address flags.
            while i < chars.len() && matches!(chars[i], 'I' | 'M') {
                i += 1;
            }
            continue;
        }
        i += 1;
        match c {
            's' | 'y' => {
                let Some(&delim) = chars.get(i) else { break };
                i += 1;
                for _ in 0..2 {
                    while i < chars.len() && chars[i] != delim {
                        if chars[i] == '\\' {
                            i += 1;
                        }
                        i += 1;
                    }
                    i += 1;
                }
                if c == 'y' {
                    continue;
                }
                // Flags.
                while i < chars.len() && !matches!(chars[i], ';' | '\n' | '}') {
                    match chars[i] {
                        'e' => f.opaque(
                            OpaqueReason::InterpretedCode,
                            format!("sed s///e runs the pattern space as a command: {script}"),
                        ),
                        'w' => {
                            i += 1;
                            let file = rest_of_line(&mut i);
                            sed_file(&file, true, f);
                            break;
                        }
                        _ => {}
                    }
                    i += 1;
                }
            }
            'e' => {
                let cmd = rest_of_line(&mut i);
                if cmd.is_empty() {
                    f.opaque(
                        OpaqueReason::InterpretedCode,
                        format!("sed e runs the pattern space as a command: {script}"),
                    );
                } else {
                    f.shell("sed e", &cmd, false);
                }
            }
            'w' | 'W' => {
                let file = rest_of_line(&mut i);
                sed_file(&file, true, f);
            }
            'r' | 'R' => {
                let file = rest_of_line(&mut i);
                sed_file(&file, false, f);
            }
            'a' | 'i' | 'c' | ':' | 'b' | 't' | 'T' | 'q' | 'Q' | 'l' | 'L' => {
                // Text or a label runs to the end of the line (or `;` for labels).
                while i < chars.len()
                    && chars[i] != '\n'
                    && !(matches!(c, 'b' | 't' | 'T' | 'q' | 'Q' | 'l' | 'L') && chars[i] == ';')
                {
                    if chars[i] == '\\' {
                        i += 1;
                    }
                    i += 1;
                }
            }
            '=' | 'd' | 'D' | 'n' | 'N' | 'p' | 'P' | 'h' | 'H' | 'g' | 'G' | 'x' | 'z' | 'F'
            | '#' => {
                if c == '#' {
                    rest_of_line(&mut i);
                }
            }
            'v' => {
                rest_of_line(&mut i);
            }
            _ => {
                f.opaque(
                    OpaqueReason::InterpretedCode,
                    format!("sed script not understood at '{c}': {script}"),
                );
                return;
            }
        }
    }
}

fn sed_file(file: &str, write: bool, f: &mut Findings) {
    match (file, write) {
        ("/dev/stdout" | "/dev/stderr", _) | ("/dev/stdin", false) => {}
        (_, true) => f.write_path(file, false),
        (_, false) => f.read_path(file, false),
    }
}

// ----- awk ------------------------------------------------------------------------

pub(super) fn awk(name: &str, args: &[Word], f: &mut Findings) {
    let mut program: Option<&Word> = None;
    let mut from_file = false;
    let mut i = 0;
    let mut operands = Vec::new();
    while i < args.len() {
        let w = &args[i];
        let v = w.value.as_str();
        if !w.dynamic
            && v.starts_with('-')
            && v.len() > 1
            && operands.is_empty()
            && program.is_none()
        {
            match v {
                "-f" | "--file" | "-E" | "--exec" | "-i" | "--include" | "-l" | "--load" => {
                    if let Some(file) = args.get(i + 1) {
                        f.read(file);
                        f.code(
                            name,
                            v,
                            format!("runs or loads the awk code in {}", file.value),
                        );
                        f.opaque(
                            OpaqueReason::InterpretedCode,
                            format!("{name} {v} {}", file.value),
                        );
                    }
                    from_file |= matches!(v, "-f" | "--file" | "-E" | "--exec");
                    i += 2;
                    continue;
                }
                "-e" | "--source" => {
                    // gawk: program text given as an option.
                    if let Some(text) = args.get(i + 1) {
                        if text.dynamic {
                            f.opaque(
                                OpaqueReason::InterpretedCode,
                                format!("{name} program known only at run time: {}", text.value),
                            );
                        } else {
                            awk_program(name, &text.value, f);
                        }
                    }
                    from_file = true;
                    i += 2;
                    continue;
                }
                "-v" | "-F" | "--assign" | "--field-separator" => {
                    i += 2;
                    continue;
                }
                "--" => {
                    i += 1;
                    continue;
                }
                _ => {
                    i += 1;
                    continue;
                }
            }
        }
        if program.is_none() && !from_file {
            program = Some(w);
        } else {
            operands.push(w);
        }
        i += 1;
    }
    if let Some(p) = program {
        if p.dynamic {
            f.opaque(
                OpaqueReason::InterpretedCode,
                format!("{name} program known only at run time: {}", p.value),
            );
        } else {
            awk_program(name, &p.value, f);
        }
    }
    for o in operands {
        if !o.value.contains('=') || o.value.starts_with('/') || o.value.starts_with('.') {
            f.read(o);
        }
    }
}

/// awk runs commands through `system()` and pipes (`print | "cmd"`,
/// `"cmd" | getline`), and writes files with `print > "file"`.
fn awk_program(name: &str, text: &str, f: &mut Findings) {
    let stripped = strip_awk_strings(text);
    if stripped.contains("system") || stripped.contains('|') {
        f.opaque(
            OpaqueReason::InterpretedCode,
            format!("{name} program runs commands: {text}"),
        );
    }
    // gawk's `@load "ext"` loads a shared library, `@include "f.awk"` more code.
    if stripped.contains("@load") || stripped.contains("@include") {
        f.code(name, "@load", "loads an extension library or a source file");
        f.opaque(
            OpaqueReason::CodeFromFile,
            format!("{name} program loads code from files: {text}"),
        );
    }
    // `> "file"` / `>> "file"` after print/printf.
    let b = text.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'>' {
            let mut j = i + 1;
            if j < b.len() && b[j] == b'>' {
                j += 1;
            }
            while j < b.len() && b[j] == b' ' {
                j += 1;
            }
            if j < b.len() && b[j] == b'"' {
                if let Some(end) = text[j + 1..].find('"') {
                    let before = &text[..i];
                    if before.contains("print") {
                        f.write_path(&text[j + 1..j + 1 + end], false);
                    }
                }
            } else if j < b.len() && before_is_print(&text[..i]) && !b[j].is_ascii_digit() {
                f.opaque(
                    OpaqueReason::InterpretedCode,
                    format!("{name} writes to a file named at run time: {text}"),
                );
            }
            i = j;
            continue;
        }
        i += 1;
    }
    if stripped.contains("getline") && stripped.contains('<') {
        f.opaque(
            OpaqueReason::InterpretedCode,
            format!("{name} reads files named in its program: {text}"),
        );
    }
}

fn before_is_print(before: &str) -> bool {
    let last_stmt = before.rsplit([';', '{', '\n']).next().unwrap_or(before);
    last_stmt.trim_start().starts_with("print")
}

/// The program text with string literals blanked, so `"a|b"` is not a pipe.
fn strip_awk_strings(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut in_str = false;
    let mut escaped = false;
    for c in text.chars() {
        if in_str {
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == '"' {
                in_str = false;
                out.push('"');
            }
            continue;
        }
        if c == '"' {
            in_str = true;
        }
        out.push(c);
    }
    out
}

// ----- tar, zip, dd ------------------------------------------------------------------

pub(super) fn tar(name: &str, args: &[Word], f: &mut Findings) {
    let mut mode = ' ';
    let mut archive: Option<&Word> = None;
    let mut dir: Option<&Word> = None;
    let mut absolute = false;
    let mut operands = Vec::new();
    let mut i = 0;
    let mut first = true;
    while i < args.len() {
        let w = &args[i];
        let mut v = w.value.clone();
        // Old-style bundled first argument: `tar xzf file`.
        if first && !v.starts_with('-') && !w.dynamic {
            v = format!("-{v}");
        }
        first = false;
        if w.dynamic || !v.starts_with('-') {
            operands.push(w);
            i += 1;
            continue;
        }
        if let Some(long) = v.strip_prefix("--") {
            let (opt, val) = match long.split_once('=') {
                Some((o, val)) => (o.to_string(), Some(val.to_string())),
                None => (long.to_string(), None),
            };
            let needs = matches!(
                opt.as_str(),
                "file"
                    | "directory"
                    | "to-command"
                    | "use-compress-program"
                    | "info-script"
                    | "new-volume-script"
                    | "checkpoint-action"
                    | "rsh-command"
                    | "exclude"
                    | "transform"
                    | "xform"
                    | "owner"
                    | "group"
                    | "mode"
                    | "mtime"
                    | "files-from"
                    | "exclude-from"
                    | "index-file"
                    | "format"
                    | "blocking-factor"
            );
            let value = match val {
                Some(v) => Some(v),
                None if needs && opt != "checkpoint-action" => {
                    i += 1;
                    args.get(i).map(|n| n.value.clone())
                }
                None => None,
            };
            match opt.as_str() {
                "extract" | "get" => mode = 'x',
                "create" => mode = 'c',
                "append" | "update" => mode = 'r',
                "list" => mode = 't',
                "file" => archive = args.get(i).filter(|_| value.is_some()),
                "directory" => dir = args.get(i),
                "absolute-names" => absolute = true,
                "to-command" | "use-compress-program" | "rsh-command" => {
                    if let Some(cmd) = value {
                        f.code(name, format!("--{opt}"), "runs a command for the archive");
                        f.shell(format!("{name} --{opt}"), &cmd, false);
                    }
                }
                "checkpoint-action" => {
                    if let Some(action) = value {
                        if let Some(cmd) = action.strip_prefix("exec=") {
                            f.shell(format!("{name} --checkpoint-action"), cmd, false);
                        }
                        f.code(name, "--checkpoint-action", "runs an action at checkpoints");
                    }
                }
                "info-script" | "new-volume-script" => f.code(
                    name,
                    format!("--{opt}"),
                    "runs a script at the end of each volume",
                ),
                "files-from" | "exclude-from" => {
                    if let Some(p) = value {
                        f.read_path(&p, false);
                    }
                }
                _ => {}
            }
            i += 1;
            continue;
        }
        let letters: Vec<char> = v[1..].chars().collect();
        for (k, c) in letters.iter().enumerate() {
            match c {
                'x' => mode = 'x',
                'c' => mode = 'c',
                'r' | 'u' => mode = 'r',
                't' => mode = 't',
                'P' => absolute = true,
                'f' | 'C' | 'I' | 'F' | 'T' | 'X' | 'b' | 'H' | 'L' | 'V' | 'N' | 'g' | 'K' => {
                    let attached: String = letters[k + 1..].iter().collect();
                    let value_word = if attached.is_empty() {
                        i += 1;
                        args.get(i)
                    } else {
                        None
                    };
                    let value = if attached.is_empty() {
                        value_word.map(|w| w.value.clone())
                    } else {
                        Some(attached)
                    };
                    match c {
                        'f' => archive = value_word.or(Some(w)),
                        'C' => dir = value_word.or(Some(w)),
                        'I' => {
                            if let Some(cmd) = value {
                                f.code(name, "-I", "runs a compression program");
                                f.shell(format!("{name} -I"), &cmd, false);
                            }
                        }
                        'F' => f.code(name, "-F", "runs a script at the end of each volume"),
                        'T' | 'X' => {
                            if let Some(p) = value {
                                f.read_path(&p, false);
                            }
                        }
                        _ => {}
                    }
                    break;
                }
                _ => {}
            }
        }
        i += 1;
    }
    let archive_path = archive.map(|w| (w.value.trim_start_matches("-f").to_string(), w.dynamic));
    match mode {
        'x' => {
            if let Some((p, d)) = &archive_path {
                f.read_path(p, *d);
            }
            if absolute {
                f.write_path("/", true);
                f.code(name, "-P", "extracts members to absolute paths anywhere");
            } else {
                let target = dir
                    .map(|d| d.value.trim_start_matches("-C").to_string())
                    .unwrap_or_else(|| ".".into());
                f.write_path(&target, true);
            }
        }
        'c' | 'r' => {
            if let Some((p, d)) = &archive_path {
                f.write_path(p, *d);
            }
            for o in operands {
                f.read(o);
            }
        }
        _ => {
            if let Some((p, d)) = &archive_path {
                f.read_path(p, *d);
            }
        }
    }
}

/// `patch` without a file operand writes the files its patch names: read off
/// a patch given as text here (every `-pN` strip of each `---`/`+++` name, so
/// a `.git/hooks/…` inside is seen whatever `-p` says), else known only at
/// run time.
pub(super) fn patch(spec: &ProgramSpec, args: &[Word], stdin: &str, f: &mut Findings) {
    let s = split(spec, args);
    if !s.operands.is_empty()
        || s.options
            .iter()
            .any(|(o, _, _)| o == "-o" || o == "--output")
    {
        return;
    }
    let dir = s
        .options
        .iter()
        .find(|(o, _, _)| o == "-d" || o == "--directory")
        .and_then(|(_, _, v)| v.clone());
    let from_file = s
        .options
        .iter()
        .any(|(o, _, _)| o == "-i" || o == "--input");
    let names: Vec<&str> = if from_file {
        Vec::new()
    } else {
        stdin
            .lines()
            .filter_map(|l| l.strip_prefix("+++ ").or_else(|| l.strip_prefix("--- ")))
            .map(|n| n.split('\t').next().unwrap_or(n).trim())
            .filter(|n| !n.is_empty() && *n != "/dev/null")
            .collect()
    };
    if names.is_empty() {
        f.effects.push(Effect::Write {
            path: dir.unwrap_or_else(|| ".".into()),
            dynamic: true,
        });
        return;
    }
    let base = dir.map(|d| format!("{d}/")).unwrap_or_default();
    for name in names {
        let parts: Vec<&str> = name.split('/').collect();
        for strip in 0..parts.len() {
            let rest = parts[strip..].join("/");
            if !rest.is_empty() {
                f.write_path(&format!("{base}{rest}"), false);
            }
        }
    }
}

/// `7z`, `cpio` and `ar`: extracting writes the paths the archive names
/// (cpio even absolute ones), known only at run time; creating reads the files
/// named (cpio reads their names from standard input) and writes the archive.
pub(super) fn archiver(name: &str, args: &[Word], f: &mut Findings) {
    let extracted = |f: &mut Findings, dir: Option<String>| {
        f.effects.push(Effect::Write {
            path: dir.unwrap_or_else(|| ".".into()),
            dynamic: true,
        })
    };
    match name {
        "cpio" => {
            let has = |short: char, long: &str| {
                args.iter().any(|w| {
                    let v = w.value.as_str();
                    v == long
                        || (v.starts_with('-') && !v.starts_with("--") && v[1..].contains(short))
                })
            };
            let dir = args
                .iter()
                .position(|w| w.value == "-D" || w.value == "--directory")
                .and_then(|i| args.get(i + 1))
                .map(|w| w.value.clone());
            if has('i', "--extract") {
                extracted(f, dir);
            } else if has('o', "--create") || has('p', "--pass-through") {
                f.effects.push(Effect::Read {
                    path: ".".into(),
                    dynamic: true,
                });
                if has('p', "--pass-through") {
                    extracted(f, args.last().map(|w| w.value.clone()));
                }
            }
        }
        _ => {
            // 7z COMMAND [switches] ARCHIVE [FILES]; ar KEYLETTERS ARCHIVE [FILES].
            let mut words = args.iter().filter(|w| !w.value.starts_with('-'));
            let command = words
                .next()
                .map(|w| w.value.trim_start_matches('-').to_string());
            let archive = words.next();
            let files: Vec<&Word> = words.collect();
            let command = command.unwrap_or_default();
            let op = if name == "ar" {
                command.chars().find(|c| "dmpqrstx".contains(*c))
            } else {
                command.chars().next()
            };
            let out_dir = args
                .iter()
                .find_map(|w| w.value.strip_prefix("-o").filter(|d| !d.is_empty()))
                .map(str::to_string);
            match op {
                Some('x' | 'e') => {
                    if let Some(a) = archive {
                        f.read(a);
                    }
                    extracted(f, out_dir);
                }
                Some('a' | 'u' | 'd' | 'r' | 'q' | 'm' | 's') => {
                    if let Some(a) = archive {
                        f.write(a);
                    }
                    files.iter().for_each(|w| f.read(w));
                }
                Some(_) => {
                    if let Some(a) = archive {
                        f.read(a);
                    }
                }
                None => {}
            }
        }
    }
}

/// `unzip` writes the files its archive names (unless it only lists, tests or
/// prints them): known only at run time.
pub(super) fn unzip(args: &[Word], f: &mut Findings) {
    let only_reads = args.iter().any(|w| {
        let v = w.value.as_str();
        v.starts_with('-')
            && !v.starts_with("--")
            && v[1..].contains(['l', 't', 'v', 'p', 'Z', 'z'])
    });
    if only_reads {
        return;
    }
    let dir = args
        .iter()
        .position(|w| w.value == "-d")
        .and_then(|i| args.get(i + 1))
        .map(|w| w.value.clone());
    f.effects.push(Effect::Write {
        path: dir.unwrap_or_else(|| ".".into()),
        dynamic: true,
    });
}

pub(super) fn zip(spec: &ProgramSpec, args: &[Word], f: &mut Findings) {
    let s = split(spec, args);
    // `-TT cmd` is parsed as bundled -T -T by the splitter; look for it directly.
    for w in args.windows(2) {
        if w[0].value == "-TT" || w[0].value == "--unzip-command" {
            f.code("zip", "-TT", "runs a command to test the archive");
            f.shell("zip -TT", &w[1].value, w[1].dynamic);
        }
    }
    if let Some(v) = args
        .iter()
        .find_map(|w| w.value.strip_prefix("--unzip-command="))
    {
        f.shell("zip --unzip-command", v, false);
    }
    let mut ops = s.operands.iter();
    if let Some(archive) = ops.next() {
        f.write(archive);
    }
    for o in ops {
        f.read(o);
    }
}

pub(super) fn dd(args: &[Word], f: &mut Findings) {
    for w in args {
        if let Some(p) = w.value.strip_prefix("if=") {
            f.read_path(p, w.dynamic);
        } else if let Some(p) = w.value.strip_prefix("of=") {
            f.write_path(p, w.dynamic);
        }
    }
}

// ----- network tools -----------------------------------------------------------------

fn host_of(url: &str) -> Option<String> {
    let rest = url.split_once("://").map(|(_, r)| r).unwrap_or(url);
    let host = rest.split(['/', '?', '#']).next()?;
    let host = host.rsplit('@').next()?;
    let host = host.split(':').next()?;
    (!host.is_empty()).then(|| host.to_string())
}

pub(super) fn curl(args: &[Word], f: &mut Findings) {
    const VALUED: &[&str] = &[
        "-o",
        "--output",
        "-d",
        "--data",
        "--data-binary",
        "--data-raw",
        "--data-ascii",
        "--data-urlencode",
        "-F",
        "--form",
        "-H",
        "--header",
        "-X",
        "--request",
        "-u",
        "--user",
        "-T",
        "--upload-file",
        "-K",
        "--config",
        "-A",
        "--user-agent",
        "-e",
        "--referer",
        "-b",
        "--cookie",
        "-c",
        "--cookie-jar",
        "-D",
        "--dump-header",
        "-x",
        "--proxy",
        "-m",
        "--max-time",
        "--connect-timeout",
        "--retry",
        "-w",
        "--write-out",
        "-E",
        "--cert",
        "--key",
        "--cacert",
        "--output-dir",
        "--trace",
        "--trace-ascii",
        "--libcurl",
        "-r",
        "--range",
        "-y",
        "-Y",
        "-z",
        "--resolve",
        "--url",
        "-Q",
        "--quote",
        "--stderr",
        "--json",
        "-C",
        "--continue-at",
        "--limit-rate",
        "--interface",
        "--dns-servers",
        "--netrc-file",
    ];
    let mut i = 0;
    let mut urls = Vec::new();
    while i < args.len() {
        let w = &args[i];
        let v = w.value.as_str();
        if w.dynamic && !v.starts_with('-') {
            urls.push(w);
            i += 1;
            continue;
        }
        let (opt, inline) = if v.starts_with("--") {
            match v.split_once('=') {
                Some((o, val)) => (o.to_string(), Some(val.to_string())),
                None => (v.to_string(), None),
            }
        } else if v.starts_with('-') && v.len() > 2 && VALUED.contains(&&v[..2]) {
            (v[..2].to_string(), Some(v[2..].to_string()))
        } else {
            (v.to_string(), None)
        };
        if !opt.starts_with('-') || opt == "-" {
            urls.push(w);
            i += 1;
            continue;
        }
        let (value, dynamic) = if VALUED.contains(&opt.as_str()) {
            match inline {
                Some(val) => (Some(val), w.dynamic),
                None => {
                    i += 1;
                    (
                        args.get(i).map(|n| n.value.clone()),
                        args.get(i).is_some_and(|n| n.dynamic),
                    )
                }
            }
        } else {
            (None, false)
        };
        if let Some(val) = value {
            match opt.as_str() {
                "-o" | "--output" | "-c" | "--cookie-jar" | "-D" | "--dump-header" | "--trace"
                | "--trace-ascii" | "--libcurl" | "--stderr" | "--output-dir"
                    if val != "-" && val != "/dev/null" =>
                {
                    f.write_path(&val, dynamic);
                }
                "-T" | "--upload-file" | "-E" | "--cert" | "--key" | "--cacert"
                | "--netrc-file" => f.read_path(&val, dynamic),
                "-K" | "--config" => {
                    f.read_path(&val, dynamic);
                    f.code(
                        "curl",
                        "--config",
                        "reads options (output files, uploads) from a file",
                    );
                }
                "-d" | "--data" | "--data-binary" | "--data-ascii" | "--data-urlencode"
                | "--json" => {
                    let file = val
                        .strip_prefix('@')
                        .or_else(|| val.split_once("=@").map(|(_, p)| p));
                    if let Some(p) = file.filter(|p| *p != "-") {
                        f.read_path(p, dynamic);
                    }
                }
                "-F" | "--form" => {
                    if let Some((_, v)) = val.split_once('=')
                        && let Some(p) = v.strip_prefix('@').or_else(|| v.strip_prefix('<'))
                    {
                        f.read_path(p.split(';').next().unwrap_or(p), dynamic);
                    }
                }
                "-b" | "--cookie" if !val.contains('=') => f.read_path(&val, dynamic),
                "--url" => {
                    let word = Word {
                        value: val,
                        dynamic,
                        nested: Vec::new(),
                    };
                    curl_url(&word, f);
                }
                _ => {}
            }
        } else if opt == "-O"
            || opt == "--remote-name"
            || opt == "--remote-name-all"
            || (opt.starts_with('-') && !opt.starts_with("--") && opt.contains('O'))
        {
            f.write_path(".", true);
        }
        i += 1;
    }
    for u in urls {
        curl_url(u, f);
    }
}

fn curl_url(u: &Word, f: &mut Findings) {
    if let Some(path) = u.value.strip_prefix("file://") {
        f.read_path(path, u.dynamic);
    } else if u.dynamic {
        f.network("curl", None);
    } else {
        f.network("curl", host_of(&u.value));
    }
}

pub(super) fn wget(args: &[Word], f: &mut Findings) {
    let mut saved = false;
    let mut i = 0;
    while i < args.len() {
        let w = &args[i];
        let v = w.value.as_str();
        let next = args.get(i + 1);
        let (opt, val): (&str, Option<(String, bool)>) =
            if let Some((o, val)) = v.split_once('=').filter(|_| v.starts_with("--")) {
                (o, Some((val.to_string(), w.dynamic)))
            } else if matches!(
                v,
                "-O" | "-o"
                    | "-a"
                    | "-P"
                    | "-i"
                    | "-e"
                    | "--output-document"
                    | "--output-file"
                    | "--append-output"
                    | "--directory-prefix"
                    | "--input-file"
                    | "--execute"
                    | "--post-file"
                    | "--body-file"
                    | "--load-cookies"
                    | "--save-cookies"
                    | "--config"
            ) {
                i += 1;
                (v, next.map(|n| (n.value.clone(), n.dynamic)))
            } else if v.len() > 2 && matches!(&v[..2], "-O" | "-o" | "-P" | "-e") {
                (&v[..2], Some((v[2..].to_string(), w.dynamic)))
            } else {
                (v, None)
            };
        match (opt, val) {
            ("-O" | "--output-document" | "-P" | "--directory-prefix", Some((p, d))) => {
                saved = true;
                if p != "-" {
                    f.write_path(&p, d);
                }
            }
            (
                "-o" | "--output-file" | "-a" | "--append-output" | "--save-cookies",
                Some((p, d)),
            ) => f.write_path(&p, d),
            (
                "-i" | "--input-file" | "--post-file" | "--body-file" | "--load-cookies",
                Some((p, d)),
            ) => f.read_path(&p, d),
            ("-e" | "--execute" | "--config", Some((cmd, _))) => {
                f.code("wget", opt, format!("runs wgetrc command(s) {cmd}"));
            }
            (o, None) if !o.starts_with('-') => {
                f.network("wget", if w.dynamic { None } else { host_of(o) });
            }
            _ => {}
        }
        i += 1;
    }
    if !saved {
        f.write_path(".", true);
    }
}

/// ssh options whose value is local shell text.
const SSH_SHELL_OPTIONS: &[&str] = &["proxycommand", "localcommand", "knownhostscommand", "match"];

fn ssh_option(kv: &str, dynamic: bool, program: &str, f: &mut Findings) {
    let (key, value) = match kv.split_once('=') {
        Some((k, v)) => (k.trim(), v.trim()),
        None => match kv.split_once(char::is_whitespace) {
            Some((k, v)) => (k.trim(), v.trim()),
            None => (kv, ""),
        },
    };
    let lower = key.to_ascii_lowercase();
    if SSH_SHELL_OPTIONS.contains(&lower.as_str()) {
        f.code(program, format!("-o {key}"), "runs a local command");
        if lower == "match" {
            f.opaque(
                OpaqueReason::DynamicCode,
                format!("{program} -o Match {value}"),
            );
        } else if value != "none" {
            f.shell(format!("{program} -o {key}"), value, dynamic);
        }
    } else if matches!(
        lower.as_str(),
        "permitlocalcommand"
            | "sshcommand"
            | "include"
            | "pkcs11provider"
            | "securitykeyprovider"
            | "identityagent"
            | "controlpath"
    ) {
        f.code(program, format!("-o {key}"), "loads code or configuration");
    }
}

pub(super) fn ssh(args: &[Word], f: &mut Findings) {
    let mut i = 0;
    while i < args.len() {
        let v = args[i].value.as_str();
        if v == "-o" {
            if let Some(n) = args.get(i + 1) {
                ssh_option(&n.value, n.dynamic, "ssh", f);
            }
            i += 2;
            continue;
        }
        if let Some(kv) = v.strip_prefix("-o") {
            ssh_option(kv, args[i].dynamic, "ssh", f);
        } else if v == "-F" {
            if let Some(n) = args.get(i + 1) {
                f.read(n);
                f.code(
                    "ssh",
                    "-F",
                    "reads a configuration file, which can name commands",
                );
            }
            i += 1;
        } else if v.starts_with('-') && v.len() > 1 {
            // Valued short options consume the next word.
            let last = v.chars().last().unwrap_or(' ');
            if v.len() == 2 && "BbcDEeFIiJLlmOoPpQRSWw".contains(last) {
                i += 1;
            }
        } else {
            f.network("ssh", Some(v.rsplit('@').next().unwrap_or(v).to_string()));
            break;
        }
        i += 1;
    }
}

pub(super) fn scp(name: &str, args: &[Word], f: &mut Findings) {
    let mut operands = Vec::new();
    let mut i = 0;
    while i < args.len() {
        let w = &args[i];
        let v = w.value.as_str();
        if w.dynamic || !v.starts_with('-') {
            operands.push(w);
        } else if v == "-S" {
            if let Some(n) = args.get(i + 1) {
                f.code(name, "-S", format!("runs {} instead of ssh", n.value));
                f.shell(format!("{name} -S"), &n.value, n.dynamic);
            }
            i += 1;
        } else if v == "-o" {
            if let Some(n) = args.get(i + 1) {
                ssh_option(&n.value, n.dynamic, name, f);
            }
            i += 1;
        } else if let Some(kv) = v.strip_prefix("-o") {
            ssh_option(kv, w.dynamic, name, f);
        } else if v == "-F"
            || v == "-i"
            || v == "-P"
            || v == "-c"
            || v == "-l"
            || v == "-J"
            || v == "-D"
            || v == "-X"
        {
            i += 1;
        }
        i += 1;
    }
    remote_copy(name, &operands, f);
}

/// `src… dest` where `host:path` operands are remote.
fn remote_copy(name: &str, operands: &[&Word], f: &mut Findings) {
    let is_remote = |w: &Word| {
        let v = &w.value;
        v.contains(':')
            && !v.starts_with('/')
            && !v.starts_with('.')
            && v.split(':').next().is_some_and(|h| !h.contains('/'))
    };
    if let Some((dest, sources)) = operands.split_last() {
        for s in sources {
            if is_remote(s) {
                f.network(
                    name,
                    s.value
                        .split(':')
                        .next()
                        .map(|h| h.rsplit('@').next().unwrap_or(h).to_string()),
                );
            } else {
                f.read(s);
            }
        }
        if is_remote(dest) {
            f.network(
                name,
                dest.value
                    .split(':')
                    .next()
                    .map(|h| h.rsplit('@').next().unwrap_or(h).to_string()),
            );
        } else {
            f.write(dest);
        }
    }
}

pub(super) fn rsync(args: &[Word], f: &mut Findings) {
    let mut operands = Vec::new();
    let mut delete = false;
    let mut i = 0;
    while i < args.len() {
        let w = &args[i];
        let v = w.value.as_str();
        if w.dynamic || !v.starts_with('-') {
            operands.push(w);
        } else if v == "-e" || v == "--rsh" {
            if let Some(n) = args.get(i + 1) {
                f.code("rsync", "-e", "runs a remote shell program");
                f.shell("rsync -e", &n.value, n.dynamic);
            }
            i += 1;
        } else if let Some(cmd) = v.strip_prefix("--rsh=").or_else(|| {
            v.strip_prefix("-e")
                .filter(|s| !s.is_empty() && !v.starts_with("--"))
        }) {
            f.code("rsync", "-e", "runs a remote shell program");
            f.shell("rsync -e", cmd, w.dynamic);
        } else if v.starts_with("--delete") || v == "--remove-source-files" {
            delete = true;
        } else if matches!(
            v,
            "--exclude"
                | "--include"
                | "--filter"
                | "-f"
                | "--rsync-path"
                | "--port"
                | "--bwlimit"
                | "--chmod"
                | "--chown"
                | "--log-file"
                | "--password-file"
                | "--files-from"
                | "--exclude-from"
                | "--include-from"
                | "--backup-dir"
                | "--suffix"
                | "--partial-dir"
                | "--temp-dir"
                | "-T"
                | "--timeout"
                | "--compare-dest"
                | "--link-dest"
                | "--copy-dest"
        ) {
            i += 1;
        }
        i += 1;
    }
    remote_copy("rsync", &operands, f);
    if delete && let Some(dest) = operands.last() {
        f.delete(dest);
    }
}

pub(super) fn netcat(name: &str, args: &[Word], f: &mut Findings) {
    for (i, w) in args.iter().enumerate() {
        if matches!(
            w.value.as_str(),
            "-e" | "-c" | "--exec" | "--sh-exec" | "--lua-exec"
        ) {
            f.code(
                name,
                w.value.clone(),
                "runs a program connected to the socket",
            );
            if let Some(n) = args.get(i + 1) {
                f.shell(format!("{name} {}", w.value), &n.value, n.dynamic);
            }
        }
    }
}

pub(super) fn socat(args: &[Word], f: &mut Findings) {
    for w in args {
        let upper = w.value.to_ascii_uppercase();
        for prefix in ["EXEC:", "SYSTEM:"] {
            if let Some(pos) = upper.find(prefix) {
                let cmd = &w.value[pos + prefix.len()..];
                let cmd = cmd.split(',').next().unwrap_or(cmd);
                f.code(
                    "socat",
                    prefix.trim_end_matches(':'),
                    "runs a program connected to the stream",
                );
                f.shell(format!("socat {prefix}"), cmd, w.dynamic);
            }
        }
    }
}

// ----- interactive tools that can run commands ------------------------------------------

pub(super) fn ed(name: &str, spec: &ProgramSpec, args: &[Word], stdin: &str, f: &mut Findings) {
    generic(name, spec, args, f);
    if stdin.is_empty() {
        f.opaque(
            OpaqueReason::InterpretedCode,
            format!(
                "{name} reads editing commands (which can run `!cmd`) from input not known here"
            ),
        );
        return;
    }
    for line in stdin.lines() {
        let l = line.trim_start();
        let cmd = l.strip_prefix('!').or_else(|| {
            l.split_once(" !")
                .map(|(_, c)| c)
                .filter(|_| l.starts_with('w') || l.starts_with('r') || l.starts_with('e'))
        });
        if let Some(c) = cmd {
            f.shell(format!("{name} !"), c, false);
        }
    }
}

pub(super) fn gdb(name: &str, args: &[Word], f: &mut Findings) {
    for (i, w) in args.iter().enumerate() {
        let v = w.value.as_str();
        if matches!(
            v,
            "-ex"
                | "--ex"
                | "-eval-command"
                | "--eval-command"
                | "-iex"
                | "-x"
                | "--command"
                | "-ix"
                | "-batch-silent"
                | "-p"
                | "--pid"
        ) || v.starts_with("--eval-command=")
        {
            if let Some(n) = args.get(i + 1) {
                let c = n.value.trim_start();
                if let Some(shell) = c.strip_prefix('!').or_else(|| c.strip_prefix("shell ")) {
                    f.shell(format!("{name} {v}"), shell, n.dynamic);
                }
            }
            if v != "-batch-silent" {
                f.opaque(
                    OpaqueReason::InterpretedCode,
                    format!("{name} {v} runs debugger commands"),
                );
            }
        }
    }
    if let Some(program) = args.iter().find(|w| !w.value.starts_with('-')) {
        f.code(
            name,
            program.value.clone(),
            "runs the program under the debugger",
        );
    }
}

fn sql_commands(name: &str, text: &str, f: &mut Findings) {
    for line in text.split(['\n', ';']) {
        let l = line.trim();
        for prefix in [".shell ", ".system ", "\\! ", "\\!", "system "] {
            if let Some(cmd) = l.strip_prefix(prefix) {
                f.shell(format!("{name} {}", prefix.trim()), cmd, false);
                break;
            }
        }
        for prefix in [".output ", ".once ", "\\o ", "\\out "] {
            if let Some(file) = l.strip_prefix(prefix) {
                let file = file.trim();
                if let Some(cmd) = file.strip_prefix('|') {
                    f.shell(format!("{name} {}", prefix.trim()), cmd, false);
                } else if !file.starts_with('-') {
                    f.write_path(file, false);
                }
            }
        }
        let upper = l.to_ascii_uppercase();
        if l.starts_with(".load") || upper.contains("LOAD_EXTENSION") {
            f.code(name, ".load", "loads a native extension");
        }
        if upper.contains(" PROGRAM ") || upper.starts_with("\\COPY") && upper.contains("PROGRAM") {
            f.opaque(
                OpaqueReason::InterpretedCode,
                format!("{name} runs a program through COPY … PROGRAM: {l}"),
            );
        }
        if l.starts_with("\\i ")
            || l.starts_with(".read ")
            || l.starts_with("\\ir ")
            || l.starts_with("source ")
        {
            f.opaque(
                OpaqueReason::InterpretedCode,
                format!("{name} runs commands from a file: {l}"),
            );
        }
    }
}

pub(super) fn sqlite(name: &str, args: &[Word], stdin: &str, f: &mut Findings) {
    let mut operands = Vec::new();
    let mut i = 0;
    while i < args.len() {
        let w = &args[i];
        if w.value == "-cmd" || w.value == "--cmd" {
            if let Some(n) = args.get(i + 1) {
                if n.dynamic {
                    f.opaque(
                        OpaqueReason::InterpretedCode,
                        format!("{name} -cmd known only at run time"),
                    );
                }
                sql_commands(name, &n.value, f);
            }
            i += 2;
            continue;
        }
        if w.value == "-init" {
            if let Some(n) = args.get(i + 1) {
                f.read(n);
                f.opaque(
                    OpaqueReason::InterpretedCode,
                    format!("{name} -init runs commands from {}", n.value),
                );
            }
            i += 2;
            continue;
        }
        if !w.value.starts_with('-') || w.dynamic {
            operands.push(w);
        }
        i += 1;
    }
    if let Some(db) = operands.first() {
        f.read(db);
        f.write(db);
    }
    for sql in operands.iter().skip(1) {
        if sql.dynamic {
            f.opaque(
                OpaqueReason::InterpretedCode,
                format!("{name} SQL known only at run time: {}", sql.value),
            );
        } else {
            sql_commands(name, &sql.value, f);
        }
    }
    if operands.len() < 2 {
        sql_commands(name, stdin, f);
    }
}

pub(super) fn sql_client(name: &str, args: &[Word], stdin: &str, f: &mut Findings) {
    let mut given = false;
    for (i, w) in args.iter().enumerate() {
        let v = w.value.as_str();
        let value = if matches!(v, "-c" | "--command" | "-e" | "--execute" | "--eval") {
            args.get(i + 1)
        } else {
            None
        };
        if let Some(n) = value {
            given = true;
            if n.dynamic {
                f.opaque(
                    OpaqueReason::InterpretedCode,
                    format!("{name} commands known only at run time"),
                );
            } else {
                sql_commands(name, &n.value, f);
            }
        }
        if matches!(v, "-f" | "--file")
            && let Some(n) = args.get(i + 1)
        {
            f.read(n);
            f.opaque(
                OpaqueReason::InterpretedCode,
                format!("{name} runs commands from {}", n.value),
            );
        }
    }
    if !given {
        sql_commands(name, stdin, f);
    }
}

pub(super) fn editor(name: &str, args: &[Word], f: &mut Findings) {
    const VALUED: &[&str] = &[
        "-c", "--cmd", "-S", "-s", "-u", "--eval", "-l", "--load", "--script", "-x", "-i", "-T",
        "-w", "-W", "-r",
    ];
    const RUNS_COMMANDS: &[&str] = &[
        "-c", "--cmd", "-S", "-s", "-u", "--eval", "-l", "--load", "--script", "-x",
    ];
    let mut operands = Vec::new();
    let mut i = 0;
    while i < args.len() {
        let w = &args[i];
        let v = w.value.as_str();
        let valued = VALUED.contains(&v);
        let detail = if let Some(cmd) = v.strip_prefix('+') {
            Some(cmd)
        } else if RUNS_COMMANDS.contains(&v) {
            Some(args.get(i + 1).map(|n| n.value.as_str()).unwrap_or(""))
        } else if matches!(v, "-batch" | "--batch" | "-es" | "-Es" | "-e") {
            Some("")
        } else {
            None
        };
        if let Some(detail) = detail {
            if let Some(shell) = detail.trim_start_matches(':').strip_prefix('!') {
                f.shell(format!("{name} {v}"), shell, false);
            }
            f.opaque(
                OpaqueReason::InterpretedCode,
                format!("{name} {v} runs editor commands {detail}"),
            );
        } else if !v.starts_with('-') || w.dynamic {
            operands.push(w);
        }
        i += if valued { 2 } else { 1 };
    }
    for o in operands {
        f.write(o);
    }
}

pub(super) fn man(args: &[Word], f: &mut Findings) {
    for (i, w) in args.iter().enumerate() {
        let v = w.value.as_str();
        if matches!(v, "-P" | "--pager" | "-H" | "--html" | "-p")
            || v.starts_with("--pager=")
            || v.starts_with("--html=")
        {
            let cmd = v
                .split_once('=')
                .map(|(_, c)| c.to_string())
                .or_else(|| args.get(i + 1).map(|n| n.value.clone()));
            if let Some(c) = cmd {
                f.code("man", v, "runs a pager or browser command");
                f.shell(format!("man {v}"), &c, false);
            }
        }
    }
}

/// The first argument that is not an option (`npm run …` → `run`).
fn subcommand(args: &[Word]) -> &str {
    args.iter()
        .find(|w| !w.value.starts_with('-'))
        .map(|w| w.value.as_str())
        .unwrap_or("")
}

/// The value of an option at `args[i]` given as `-o VALUE`, `-oVALUE`,
/// `--long VALUE` or `--long=VALUE`.
fn option_value(args: &[Word], i: usize, short: &str, long: &str) -> Option<String> {
    let v = args[i].value.as_str();
    if v == short || v == long {
        return args.get(i + 1).map(|n| n.value.clone());
    }
    v.strip_prefix(&format!("{long}="))
        .or_else(|| v.strip_prefix(short).filter(|_| !v.starts_with("--")))
        .filter(|s| !s.is_empty())
        .map(str::to_string)
}

// ----- interpreters, builds, package managers, containers -------------------------------------

/// Per interpreter: short options whose value is inline code, and short options
/// whose value names a module to load and run.
fn interpreter_letters(name: &str) -> (&'static str, &'static str) {
    match name {
        "python" | "python2" | "python3" | "pypy" | "pypy3" => ("c", "m"),
        "node" | "nodejs" | "bun" | "ts-node" | "tsx" => ("ep", "r"),
        "deno" => ("", ""),
        "perl" => ("eE", "mM"),
        "ruby" | "irb" => ("e", "r"),
        "php" => ("rBRFE", ""),
        "lua" | "luajit" => ("e", "l"),
        "Rscript" | "osascript" | "julia" | "elixir" => ("e", ""),
        "erl" => ("", ""),
        _ => ("ce", ""),
    }
}

/// Long options that carry inline code, or load code.
const LONG_CODE: &[&str] = &["--eval", "--print", "--exec", "--command", "--expr"];
const LONG_MODULE: &[&str] = &[
    "--require",
    "--import",
    "--loader",
    "--experimental-loader",
    "--module",
];

pub(super) fn interpreter(name: &str, args: &[Word], stdin: &str, f: &mut Findings) {
    if matches!(name, "pwsh" | "powershell") {
        // PowerShell options are case-insensitive and abbreviable (`-c`, `-Command`,
        // `-EncodedCommand`, `-File`): anything given runs PowerShell code.
        f.opaque(
            OpaqueReason::InterpretedCode,
            format!("{name} {}", join(args)),
        );
        return;
    }
    let (code_letters, module_letters) = interpreter_letters(name);
    let mut i = 0;
    while i < args.len() {
        let w = &args[i];
        let v = w.value.as_str();
        if w.dynamic {
            f.opaque(
                OpaqueReason::InterpretedCode,
                format!("{name} argument known only at run time: {v}"),
            );
            return;
        }
        if v == "-" {
            let from = if stdin.is_empty() {
                "standard input"
            } else {
                "a heredoc"
            };
            f.opaque(
                OpaqueReason::InterpretedCode,
                format!("{name} runs code from {from}"),
            );
            return;
        }
        if !v.starts_with('-') {
            if name == "deno" && matches!(v, "eval" | "repl") {
                f.opaque(OpaqueReason::InterpretedCode, format!("{name} {v}"));
                return;
            }
            if name == "deno" && matches!(v, "run" | "test" | "task" | "bench" | "serve") {
                i += 1;
                continue;
            }
            // The script; the rest are its arguments.
            f.read(w);
            f.code(name, v, "runs a script whose code is not analysed here");
            f.opaque(OpaqueReason::CodeFromFile, format!("{name} {v}"));
            return;
        }
        let next = args.get(i + 1).map(|n| n.value.clone()).unwrap_or_default();
        if let Some(long) = v.strip_prefix("--") {
            let opt = format!("--{}", long.split('=').next().unwrap_or(long));
            let value = long
                .split_once('=')
                .map(|(_, x)| x.to_string())
                .unwrap_or_else(|| next.clone());
            if LONG_CODE.contains(&opt.as_str()) {
                f.opaque(
                    OpaqueReason::InterpretedCode,
                    format!("{name} {opt} {value}"),
                );
                return;
            }
            if LONG_MODULE.contains(&opt.as_str()) {
                f.code(name, opt, format!("loads and runs the module {value}"));
            }
            i += 1;
            continue;
        }
        for (k, c) in v[1..].char_indices() {
            let attached = &v[1 + k + c.len_utf8()..];
            let value = if attached.is_empty() {
                next.clone()
            } else {
                attached.to_string()
            };
            if code_letters.contains(c) {
                f.opaque(
                    OpaqueReason::InterpretedCode,
                    format!("{name} -{c} {value}"),
                );
                return;
            }
            if module_letters.contains(c) {
                // `python -m pytest`: the source names the module, so a rule
                // or a project task can name it (`Bash(python3 -m pytest *)`).
                let source = if name.starts_with("py")
                    && c == 'm'
                    && !value.is_empty()
                    && !value.contains([' ', '$', '`'])
                {
                    format!("-m {value}")
                } else {
                    format!("-{c}")
                };
                f.code(name, source, format!("loads and runs the module {value}"));
                if name.starts_with("py") && c == 'm' {
                    // `python -m module args`: the module is the program.
                    return;
                }
                if attached.is_empty() {
                    i += 1;
                }
                break;
            }
        }
        i += 1;
    }
    if name == "deno" {
        return;
    }
    let from = if stdin.is_empty() {
        "standard input"
    } else {
        "a heredoc"
    };
    f.opaque(
        OpaqueReason::InterpretedCode,
        format!("{name} runs code from {from}"),
    );
}

pub(super) fn make(name: &str, args: &[Word], f: &mut Findings) {
    f.code(name, "", "runs build recipes defined by the project");
    for (i, w) in args.iter().enumerate() {
        let v = w.value.as_str();
        if v == "--eval" || v.starts_with("--eval=") || v == "-E" {
            f.opaque(
                OpaqueReason::InterpretedCode,
                format!(
                    "{name} --eval {}",
                    args.get(i + 1).map(|n| n.value.as_str()).unwrap_or("")
                ),
            );
        }
        if (v == "-f" || v == "--file" || v == "--makefile")
            && let Some(n) = args.get(i + 1)
        {
            f.read(n);
        }
        if let Some((var, val)) = v.split_once('=')
            && matches!(var, "SHELL" | "MAKESHELL" | ".SHELLFLAGS" | "CC" | "CXX")
        {
            f.code(
                name,
                var,
                format!("sets {var}={val}, a program recipes run"),
            );
        }
    }
}

/// GitHub's CLI: everything goes to the network (the rule for `gh` covers
/// that); printing the stored token reads the credentials file.
pub(super) fn gh(args: &[Word], f: &mut Findings) {
    let words: Vec<&str> = args.iter().map(|w| w.value.as_str()).collect();
    let shows_token = match words.as_slice() {
        ["auth", "token", ..] => true,
        ["auth", "status", rest @ ..] => rest.iter().any(|w| matches!(*w, "-t" | "--show-token")),
        _ => false,
    };
    if shows_token {
        f.read_path("~/.config/gh/hosts.yml", false);
    }
}

pub(super) fn package_scripts(name: &str, args: &[Word], f: &mut Findings) {
    let sub = subcommand(args);
    // Another project's manifest (and so its build scripts and tasks).
    for (i, _) in args.iter().enumerate() {
        let dir = match name {
            "cargo" => option_value(args, i, "--manifest-path", "--manifest-path"),
            "npm" | "pnpm" => option_value(args, i, "--prefix", "--prefix")
                .or_else(|| option_value(args, i, "-C", "--dir")),
            "yarn" => option_value(args, i, "--cwd", "--cwd"),
            "pip" | "pip3" => option_value(args, i, "-r", "--requirement"),
            _ => None,
        };
        if let Some(path) = dir {
            f.read_path(
                &path,
                args[i].dynamic || args.get(i + 1).is_some_and(|w| w.dynamic),
            );
        }
    }
    // `npm config set …` changes the user's `.npmrc`, which names programs
    // (`script-shell`) every later `npm run` uses.
    if matches!(name, "npm" | "pnpm")
        && (matches!(sub, "set" | "delete")
            || (sub == "config"
                && args
                    .iter()
                    .any(|w| matches!(w.value.as_str(), "set" | "delete" | "edit" | "fix" | "rm"))))
    {
        let project = args
            .iter()
            .any(|w| w.value == "--location=project" || w.value == "--location project");
        f.write_path(if project { ".npmrc" } else { "~/.npmrc" }, false);
    }
    let runs = match name {
        "npx" | "pnpx" | "uvx" | "pipx" => true,
        "npm" | "pnpm" | "yarn" => !matches!(
            sub,
            "ls" | "list"
                | "view"
                | "info"
                | "outdated"
                | "search"
                | "help"
                | "config"
                | "whoami"
                | "-v"
                | "--version"
                | "root"
                | "bin"
                | "prefix"
                | "why"
                | "audit"
                | "doctor"
        ),
        "pip" | "pip3" => matches!(sub, "install" | "download" | "wheel"),
        "cargo" => !matches!(
            sub,
            "metadata"
                | "tree"
                | "search"
                | "version"
                | "help"
                | "--version"
                | "-V"
                | "locate-project"
                | "pkgid"
                | "fmt"
                | "--list"
                | "info"
                | ""
        ),
        "go" => matches!(
            sub,
            "run" | "test" | "build" | "generate" | "install" | "get" | "vet" | "tool"
        ),
        _ => true,
    };
    if runs {
        f.code(
            name,
            sub,
            "runs code defined by the project or its dependencies",
        );
    }
    let fetches = matches!(name, "npx" | "pnpx" | "uvx" | "pipx")
        || matches!(
            sub,
            "install"
                | "i"
                | "add"
                | "ci"
                | "update"
                | "upgrade"
                | "get"
                | "fetch"
                | "download"
                | "publish"
                | "exec"
                | "dlx"
        );
    if fetches {
        f.network(name, None);
    }
    // Installing from a URL, a VCS or a local path, or from another index,
    // runs code nobody has vetted: the source must be named literally.
    if matches!(sub, "install" | "i" | "add" | "download" | "wheel") {
        for w in args.iter().skip_while(|w| w.value != sub).skip(1) {
            let v = w.value.as_str();
            let from_elsewhere = v.contains("://")
                || v.starts_with("git+")
                || v.starts_with("git@")
                || v.starts_with("github:")
                || v.starts_with("file:")
                || v.starts_with('/')
                || v.starts_with("./")
                || v.starts_with("../")
                || v.ends_with(".tgz")
                || v.ends_with(".whl")
                || v.ends_with(".tar.gz");
            let other_index = matches!(
                v,
                "-i" | "--index-url" | "--extra-index-url" | "--registry" | "-e" | "--editable"
            ) || v.starts_with("--index-url=")
                || v.starts_with("--extra-index-url=")
                || v.starts_with("--registry=");
            if w.dynamic || from_elsewhere || other_index {
                f.code(
                    name,
                    v,
                    "installs code from a URL, a path or another package index",
                );
            }
        }
    }
    for (i, w) in args.iter().enumerate() {
        let v = w.value.as_str();
        if matches!(v, "-c" | "--call")
            && matches!(name, "npm" | "pnpm" | "yarn")
            && let Some(n) = args.get(i + 1)
        {
            f.shell(format!("{name} {v}"), &n.value, n.dynamic);
        }
        if v == "--script-shell" || v.starts_with("--script-shell=") {
            let shell = v
                .split_once('=')
                .map(|(_, s)| s.to_string())
                .or_else(|| args.get(i + 1).map(|n| n.value.clone()));
            f.code(
                name,
                "--script-shell",
                format!("runs scripts with {}", shell.unwrap_or_default()),
            );
        }
        if v == "--config" && name == "cargo" {
            f.code(
                name,
                "--config",
                "sets configuration, which can name programs cargo runs",
            );
        }
        if v == "-exec"
            || v == "-toolexec"
            || v.starts_with("-toolexec=")
            || v.starts_with("-exec=")
        {
            f.code(name, v, "runs a program around the build or test binaries");
        }
    }
}

pub(super) fn container(name: &str, args: &[Word], f: &mut Findings) {
    let sub = subcommand(args);
    if matches!(
        sub,
        "run"
            | "exec"
            | "build"
            | "compose"
            | "create"
            | "start"
            | "apply"
            | "debug"
            | "cp"
            | "attach"
    ) {
        f.code(name, sub, "runs code in a container or cluster");
    }
    for (i, w) in args.iter().enumerate() {
        let v = w.value.as_str();
        let mount = option_value(args, i, "-v", "--volume")
            .or_else(|| option_value(args, i, "--mount", "--mount"));
        if let Some(m) = mount {
            let src = m
                .split(',')
                .find_map(|p| p.strip_prefix("source=").or_else(|| p.strip_prefix("src=")))
                .unwrap_or_else(|| m.split(':').next().unwrap_or(""));
            if src.starts_with('/') || src.starts_with('.') || src.starts_with('~') {
                f.write_path(src, false);
            }
        }
        if v == "--privileged"
            || v.starts_with("--pid=host")
            || v.starts_with("--net=host")
            || v.starts_with("--network=host")
        {
            f.code(name, v, "gives the container access to the host");
        }
    }
}

pub(super) fn apt(name: &str, args: &[Word], f: &mut Findings) {
    let sub = subcommand(args);
    if !matches!(
        sub,
        "list"
            | "search"
            | "show"
            | "info"
            | "policy"
            | "depends"
            | "rdepends"
            | ""
            | "-l"
            | "--list"
    ) {
        f.code(
            name,
            sub,
            "installs or changes system packages, which run their scripts",
        );
        f.network(name, None);
    }
    for (i, w) in args.iter().enumerate() {
        let kv = option_value(args, i, "-o", "--option");
        if let Some(kv) = kv {
            f.code(
                name,
                format!("-o {kv}"),
                "sets configuration, which can name commands to run",
            );
            let (key, value) = kv.split_once('=').unwrap_or((&kv, ""));
            let lower = key.to_ascii_lowercase();
            if lower.contains("invoke")
                || lower.contains("pkgs")
                || lower.contains("::pre")
                || lower.contains("::post")
            {
                f.shell(format!("{name} -o {key}"), value, w.dynamic);
            }
        }
    }
}
