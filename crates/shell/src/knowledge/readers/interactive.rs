//! Interactive tools that can run commands: ed, gdb, database shells, editors, man.

use super::*;

pub(in crate::knowledge) fn ed(
    name: &str,
    spec: &ProgramSpec,
    args: &[Word],
    stdin: &str,
    f: &mut Findings,
) {
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

pub(in crate::knowledge) fn gdb(name: &str, args: &[Word], f: &mut Findings) {
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

pub(super) fn sql_commands(name: &str, text: &str, f: &mut Findings) {
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

pub(in crate::knowledge) fn sqlite(name: &str, args: &[Word], stdin: &str, f: &mut Findings) {
    let mut operands = Vec::new();
    let mut i = 0;
    while let Some(w) = args.get(i) {
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

pub(in crate::knowledge) fn sql_client(name: &str, args: &[Word], stdin: &str, f: &mut Findings) {
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

pub(in crate::knowledge) fn editor(name: &str, args: &[Word], f: &mut Findings) {
    const VALUED: &[&str] = &[
        "-c", "--cmd", "-S", "-s", "-u", "--eval", "-l", "--load", "--script", "-x", "-i", "-T",
        "-w", "-W", "-r",
    ];
    const RUNS_COMMANDS: &[&str] = &[
        "-c", "--cmd", "-S", "-s", "-u", "--eval", "-l", "--load", "--script", "-x",
    ];
    let mut operands = Vec::new();
    let mut i = 0;
    while let Some(w) = args.get(i) {
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

pub(in crate::knowledge) fn man(args: &[Word], f: &mut Findings) {
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
pub(super) fn subcommand(args: &[Word]) -> &str {
    args.iter()
        .find(|w| !w.value.starts_with('-'))
        .map(|w| w.value.as_str())
        .unwrap_or("")
}

/// The value of an option at `args[i]` given as `-o VALUE`, `-oVALUE`,
/// `--long VALUE` or `--long=VALUE`.
pub(super) fn option_value(args: &[Word], i: usize, short: &str, long: &str) -> Option<String> {
    let v = args.get(i)?.value.as_str();
    if v == short || v == long {
        return args.get(i + 1).map(|n| n.value.clone());
    }
    v.strip_prefix(&format!("{long}="))
        .or_else(|| v.strip_prefix(short).filter(|_| !v.starts_with("--")))
        .filter(|s| !s.is_empty())
        .map(str::to_string)
}
