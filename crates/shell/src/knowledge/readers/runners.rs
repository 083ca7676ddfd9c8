//! Interpreters, builds, package managers, containers.

use super::*;

/// Per interpreter: short options whose value is inline code, and short options
/// whose value names a module to load and run.
pub(super) fn interpreter_letters(name: &str) -> (&'static str, &'static str) {
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
pub(super) const LONG_CODE: &[&str] = &["--eval", "--print", "--exec", "--command", "--expr"];
pub(super) const LONG_MODULE: &[&str] = &[
    "--require",
    "--import",
    "--loader",
    "--experimental-loader",
    "--module",
];

pub(in crate::knowledge) fn interpreter(name: &str, args: &[Word], stdin: &str, f: &mut Findings) {
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
    while let Some(w) = args.get(i) {
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

pub(in crate::knowledge) fn make(name: &str, args: &[Word], f: &mut Findings) {
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
pub(in crate::knowledge) fn gh(args: &[Word], f: &mut Findings) {
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

pub(in crate::knowledge) fn package_scripts(name: &str, args: &[Word], f: &mut Findings) {
    let sub = subcommand(args);
    // Another project's manifest (and so its build scripts and tasks).
    for (i, w) in args.iter().enumerate() {
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
                w.dynamic || args.get(i + 1).is_some_and(|n| n.dynamic),
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

pub(in crate::knowledge) fn container(name: &str, args: &[Word], f: &mut Findings) {
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

pub(in crate::knowledge) fn apt(name: &str, args: &[Word], f: &mut Findings) {
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
