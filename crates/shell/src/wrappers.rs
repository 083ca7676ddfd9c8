//! Wrapper programs: programs whose job is to run another command (`sudo`,
//! `timeout`, `env`, `xargs` …). Each has an option table; an option the table
//! does not know makes the call opaque, because it might change which word is
//! the command.
//!
//! Parsing follows GNU `getopt` with a leading `+` (what these tools use):
//! options stop at the first operand or at `--`.

use crate::model::OpaqueReason;
use crate::word::Word;

/// What a wrapper does with the words after its options.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Runs {
    /// Executes the rest as a command (`timeout 5 CMD ARGS`).
    Command,
    /// Joins the rest with spaces and runs it as shell text (`watch`, `ssh host CMD`).
    JoinedShellText,
    /// Executes the rest as a command with more arguments read from stdin (`xargs`).
    CommandWithInputArgs,
}

/// The option table of one wrapper.
pub(crate) struct WrapperSpec {
    pub names: &'static [&'static str],
    /// The subcommand that makes the program a wrapper (`portcullis run`):
    /// its first word must be exactly this; it counts as the first operand.
    pub subcommand: Option<&'static str>,
    /// Short options without a value, as letters.
    pub short_flags: &'static str,
    /// Short options that take a value, as letters.
    pub short_valued: &'static str,
    /// Short options whose value is optional and only given attached (`xargs -i{}`).
    pub short_optional: &'static str,
    /// Long options without a value (no leading `--`).
    pub long_flags: &'static [&'static str],
    /// Long options that take a value.
    pub long_valued: &'static [&'static str],
    /// Long options whose value is optional and only given with `=`.
    pub long_optional: &'static [&'static str],
    /// Operands before the command (`timeout DURATION`, `flock FILE`, `chroot NEWROOT`).
    pub operands: usize,
    /// `NAME=VALUE` words before the command set its environment.
    pub assignments: bool,
    pub runs: Runs,
    /// Whether a command must follow (else the call is opaque).
    pub command_required: bool,
    /// Options after which nothing is executed (`command -v`, `taskset -p`).
    pub no_command: &'static [&'static str],
    /// Options whose value is shell text the wrapper runs (`su -c`, `flock -c`).
    pub shell_text: &'static [&'static str],
    /// Options whose value is a file the wrapper writes (`time -o`, `strace -o`).
    pub writes: &'static [&'static str],
    /// Options that turn the rest into joined shell text (`sudo -s`, `sudo -i`).
    pub shell_join: &'static [&'static str],
    /// Options that make the rest a command run directly (`watch -x`).
    pub direct_exec: &'static [&'static str],
    /// Options whose value is the replace string for input arguments (`xargs -I`).
    pub replace: &'static [&'static str],
    /// Options whose value is the directory the command runs in (`env -C`, `sudo -D`).
    pub chdir: &'static [&'static str],
    /// Operands after shell text are files the wrapper writes (`script -c CMD FILE`).
    pub operand_writes: bool,
    /// Options may also follow the operands (`flock FILE -c CMD`, `su USER -c CMD`).
    pub permute: bool,
    /// The operands may be missing (`su` alone means root).
    pub operands_optional: bool,
    /// Without a command it starts an interactive shell (`su USER`, `chroot DIR`).
    pub shell_without_command: bool,
    /// Words after the operands are arguments for a shell, not a command (`su USER ARGS`).
    pub args_to_shell: bool,
    /// A lone `-` is an option (`su - USER` means `su -l USER`).
    pub lone_dash_flag: bool,
}

const BASE: WrapperSpec = WrapperSpec {
    names: &[],
    subcommand: None,
    short_flags: "",
    short_valued: "",
    short_optional: "",
    long_flags: &["help", "version"],
    long_valued: &[],
    long_optional: &[],
    operands: 0,
    assignments: false,
    runs: Runs::Command,
    command_required: true,
    no_command: &[],
    shell_text: &[],
    writes: &[],
    shell_join: &[],
    direct_exec: &[],
    replace: &[],
    chdir: &[],
    operand_writes: false,
    permute: false,
    operands_optional: false,
    shell_without_command: false,
    args_to_shell: false,
    lone_dash_flag: false,
};

/// The wrapper table. Sources: the programs' manuals (coreutils, util-linux,
/// sudo, findutils, procps, openssh); options not listed here make a call opaque.
pub(crate) static WRAPPERS: &[WrapperSpec] = &[
    WrapperSpec {
        names: &["timeout"],
        short_flags: "vpf",
        short_valued: "sk",
        long_flags: &[
            "help",
            "version",
            "verbose",
            "foreground",
            "preserve-status",
        ],
        long_valued: &["signal", "kill-after"],
        operands: 1,
        ..BASE
    },
    // portcullis' own confinement: it only narrows what the command may do,
    // so the command is judged as if it ran alone.
    WrapperSpec {
        names: &["portcullis"],
        subcommand: Some("run"),
        long_valued: &[
            "config", "cwd", "network", "reveal", "write", "session", "token",
        ],
        long_flags: &[
            "help",
            "version",
            "print-profile",
            "read-only",
            "git-writes",
        ],
        // The file `--write` names is made writable, and created if missing.
        writes: &["write"],
        no_command: &["print-profile"],
        chdir: &["cwd"],
        operands: 1,
        permute: true,
        ..BASE
    },
    WrapperSpec {
        names: &["nice"],
        short_valued: "n",
        long_valued: &["adjustment"],
        command_required: false,
        ..BASE
    },
    WrapperSpec {
        names: &["nohup"],
        ..BASE
    },
    WrapperSpec {
        names: &["setsid"],
        short_flags: "cfw",
        long_flags: &["help", "version", "ctty", "fork", "wait"],
        ..BASE
    },
    WrapperSpec {
        names: &["stdbuf"],
        short_valued: "ioe",
        long_valued: &["input", "output", "error"],
        ..BASE
    },
    WrapperSpec {
        names: &["env"],
        short_flags: "i0v",
        short_valued: "uCS",
        long_flags: &[
            "help",
            "version",
            "ignore-environment",
            "null",
            "debug",
            "list-signal-handling",
        ],
        long_valued: &["unset", "chdir", "split-string"],
        long_optional: &["default-signal", "ignore-signal", "block-signal"],
        assignments: true,
        command_required: false,
        shell_join: &["S", "split-string"],
        chdir: &["C", "chdir"],
        ..BASE
    },
    WrapperSpec {
        names: &["sudo"],
        short_flags: "AbEeHiKklnPSsVv",
        short_valued: "CDghpRrTtUu",
        long_flags: &[
            "help",
            "version",
            "askpass",
            "background",
            "edit",
            "set-home",
            "login",
            "remove-timestamp",
            "reset-timestamp",
            "list",
            "non-interactive",
            "preserve-groups",
            "stdin",
            "shell",
            "validate",
        ],
        long_valued: &[
            "close-from",
            "chdir",
            "group",
            "host",
            "prompt",
            "chroot",
            "role",
            "type",
            "command-timeout",
            "other-user",
            "user",
        ],
        long_optional: &["preserve-env"],
        assignments: true,
        command_required: false,
        shell_join: &["s", "i", "shell", "login"],
        chdir: &["D", "chdir"],
        ..BASE
    },
    WrapperSpec {
        names: &["doas"],
        short_flags: "nsL",
        short_valued: "uC",
        command_required: false,
        shell_join: &["s"],
        ..BASE
    },
    WrapperSpec {
        names: &["xargs"],
        short_flags: "0rtpxo",
        short_valued: "adEILnPs",
        short_optional: "eil",
        long_flags: &[
            "help",
            "version",
            "null",
            "no-run-if-empty",
            "verbose",
            "interactive",
            "exit",
            "open-tty",
            "show-limits",
        ],
        long_valued: &[
            "arg-file",
            "delimiter",
            "max-lines",
            "max-args",
            "max-procs",
            "max-chars",
            "process-slot-var",
            "eof",
        ],
        long_optional: &["replace"],
        runs: Runs::CommandWithInputArgs,
        command_required: false,
        replace: &["I", "i", "replace"],
        ..BASE
    },
    WrapperSpec {
        names: &["command"],
        short_flags: "pvV",
        long_flags: &[],
        command_required: false,
        no_command: &["v", "V"],
        ..BASE
    },
    // `jobs -x CMD ARGS` runs CMD with jobspecs replaced (bash's builtin; `-x`
    // may come with other letters: `jobs -xl CMD` runs too). Without `-x` the
    // operands are jobspecs, taken as a command anyway: the rare `jobs %1`
    // asks rather than a `jobs -x` slipping through.
    WrapperSpec {
        names: &["jobs"],
        short_flags: "lnprsx",
        long_flags: &[],
        command_required: false,
        ..BASE
    },
    WrapperSpec {
        names: &["builtin"],
        long_flags: &[],
        command_required: false,
        ..BASE
    },
    WrapperSpec {
        names: &["exec"],
        short_flags: "cl",
        short_valued: "a",
        long_flags: &[],
        command_required: false,
        ..BASE
    },
    WrapperSpec {
        names: &["time"],
        short_flags: "pvqa",
        short_valued: "fo",
        long_flags: &[
            "help",
            "version",
            "portability",
            "verbose",
            "quiet",
            "append",
        ],
        long_valued: &["format", "output"],
        command_required: false,
        writes: &["o", "output"],
        ..BASE
    },
    WrapperSpec {
        names: &["flock"],
        short_flags: "senuoFv",
        short_valued: "wEc",
        long_flags: &[
            "help",
            "version",
            "shared",
            "exclusive",
            "nonblock",
            "nb",
            "unlock",
            "close",
            "no-fork",
            "verbose",
        ],
        long_valued: &["timeout", "wait", "conflict-exit-code", "command"],
        operands: 1,
        command_required: false,
        shell_text: &["c", "command"],
        permute: true,
        ..BASE
    },
    WrapperSpec {
        names: &["ionice"],
        short_flags: "t",
        short_valued: "cnpPu",
        long_flags: &["help", "version", "ignore"],
        long_valued: &["class", "classdata", "pid", "pgid", "uid"],
        command_required: false,
        no_command: &["p", "P", "u", "pid", "pgid", "uid"],
        ..BASE
    },
    WrapperSpec {
        names: &["taskset"],
        short_flags: "acp",
        long_flags: &["help", "version", "all-tasks", "cpu-list", "pid"],
        operands: 1,
        no_command: &["p", "pid"],
        ..BASE
    },
    WrapperSpec {
        names: &["chroot"],
        long_flags: &["help", "version", "skip-chdir"],
        long_valued: &["userspec", "groups"],
        operands: 1,
        command_required: false,
        shell_without_command: true,
        ..BASE
    },
    WrapperSpec {
        names: &["strace"],
        short_flags: "fFcCdDhikqrtTvVwxyYZnz",
        short_valued: "abeIoOpPsSuEXU",
        long_flags: &[
            "help",
            "version",
            "follow-forks",
            "summary-only",
            "summary",
            "no-abbrev",
            "quiet",
            "verbose",
        ],
        long_valued: &[
            "output",
            "trace",
            "signal",
            "status",
            "attach",
            "env",
            "user",
            "string-limit",
        ],
        command_required: false,
        no_command: &["p", "attach"],
        writes: &["o", "output"],
        ..BASE
    },
    WrapperSpec {
        names: &["watch"],
        short_flags: "bcdegtxprw",
        short_valued: "nq",
        long_flags: &[
            "help", "version", "beep", "color", "no-color", "exec", "errexit", "chgexit",
            "no-title", "precise", "no-wrap", "no-rerun",
        ],
        long_valued: &["interval", "equexit"],
        long_optional: &["differences"],
        runs: Runs::JoinedShellText,
        direct_exec: &["x", "exec"],
        ..BASE
    },
    WrapperSpec {
        names: &["unbuffer"],
        short_flags: "p",
        long_flags: &[],
        ..BASE
    },
    WrapperSpec {
        names: &["script"],
        short_flags: "aefqEhV",
        short_valued: "cOBIltTm",
        long_flags: &[
            "help", "version", "append", "return", "flush", "force", "quiet",
        ],
        long_valued: &[
            "command",
            "log-out",
            "log-io",
            "log-in",
            "log-timing",
            "logging-format",
            "echo",
        ],
        long_optional: &["timing"],
        command_required: false,
        shell_text: &["c", "command"],
        writes: &[
            "O",
            "B",
            "I",
            "T",
            "log-out",
            "log-io",
            "log-in",
            "log-timing",
        ],
        operand_writes: true,
        ..BASE
    },
    WrapperSpec {
        names: &["su", "runuser"],
        short_flags: "lmpPf",
        short_valued: "csgGwu",
        long_flags: &[
            "help",
            "version",
            "login",
            "preserve-environment",
            "pty",
            "fast",
        ],
        long_valued: &[
            "command",
            "session-command",
            "shell",
            "group",
            "supp-group",
            "whitelist-environment",
            "user",
        ],
        command_required: false,
        shell_text: &["c", "command", "session-command"],
        operands: 1,
        permute: true,
        operands_optional: true,
        shell_without_command: true,
        args_to_shell: true,
        lone_dash_flag: true,
        ..BASE
    },
    WrapperSpec {
        names: &["ssh"],
        short_flags: "46AaCfGgKkMNnqsTtVvXxYy",
        short_valued: "BbcDEeFIiJLlmOoPpQRSWw",
        // ssh has no long options: `--help` and `--version` end in a usage
        // message and run nothing (taken as flags, they stay harmless).
        long_flags: &["help", "version"],
        operands: 1,
        runs: Runs::JoinedShellText,
        command_required: false,
        // `ssh` without a destination runs nothing; a program that appends the
        // destination itself (`rsync -e 'ssh -p 2'`) names ssh that way.
        operands_optional: true,
        ..BASE
    },
    WrapperSpec {
        names: &["busybox"],
        long_flags: &[],
        command_required: false,
        ..BASE
    },
    WrapperSpec {
        names: &["pkexec"],
        long_flags: &["help", "version", "disable-internal-agent", "keep-cwd"],
        long_valued: &["user"],
        command_required: false,
        ..BASE
    },
];

/// Looks a program name up in the wrapper table.
/// The wrapper spec of a call to `name` whose words (the program's first)
/// are `words`.
pub(crate) fn lookup(name: &str, words: &[Word]) -> Option<&'static WrapperSpec> {
    WRAPPERS.iter().find(|w| {
        w.names.contains(&name)
            && w.subcommand.is_none_or(|sub| {
                words
                    .get(1)
                    .is_some_and(|first| !first.dynamic && first.value == sub)
            })
    })
}

/// The outcome of reading a wrapper's arguments.
#[derive(Debug, Default)]
pub(crate) struct WrapperCall {
    /// Index (into the words) of the command the wrapper runs.
    pub command_start: Option<usize>,
    /// `NAME=VALUE` the wrapper sets.
    pub env: Vec<(String, String)>,
    /// Shell text the wrapper runs, from options (`su -c TEXT`), as (value,
    /// dynamic, run through `sh -c`). `env -S` splits its text itself (no shell).
    pub shell_texts: Vec<(String, bool, bool)>,
    /// The command words must be joined and run as shell text.
    pub join_as_shell: bool,
    /// The command gets more arguments at run time (`xargs`).
    pub input_args: bool,
    /// Arguments containing this string are replaced at run time (`xargs -I {}`).
    pub replace: Option<String>,
    /// Files the wrapper itself writes.
    pub writes: Vec<String>,
    /// The directory the command runs in, when the wrapper changes it.
    pub chdir: Option<String>,
    /// The reason the call cannot be read, if any.
    pub opaque: Option<(OpaqueReason, String)>,
}

/// Reads the options, operands and assignments of a wrapper call.
pub(crate) fn parse(spec: &WrapperSpec, words: &[Word]) -> WrapperCall {
    let mut call = WrapperCall {
        join_as_shell: spec.runs == Runs::JoinedShellText,
        input_args: spec.runs == Runs::CommandWithInputArgs,
        ..Default::default()
    };
    let Some(name) = words.first().map(|w| w.value.as_str()) else {
        // The walker always passes the program word (fail closed if not).
        call.opaque = Some((OpaqueReason::ParseError, "a wrapper without words".into()));
        return call;
    };
    let mut no_command = false;
    let mut i = 1;
    let opt_fail = |call: &mut WrapperCall, msg: String| {
        call.opaque = Some((OpaqueReason::UnknownWrapperOption, format!("{name}: {msg}")));
    };
    if !read_options(spec, words, &mut i, &mut call, &mut no_command) {
        return call;
    }
    // `flock FD` (a number) locks a descriptor and runs nothing.
    // Operands.
    for n in 0..spec.operands {
        match words.get(i) {
            Some(w) if w.dynamic => {
                opt_fail(
                    &mut call,
                    format!("operand known only at run time: {}", w.value),
                );
                return call;
            }
            Some(w) => {
                if spec.names.contains(&"flock")
                    && n == 0
                    && w.value.bytes().all(|b| b.is_ascii_digit())
                {
                    no_command = true;
                }
                i += 1;
            }
            None if no_command || spec.operands_optional || !call.shell_texts.is_empty() => break,
            None => {
                opt_fail(&mut call, "missing operand".to_string());
                return call;
            }
        }
    }
    if spec.permute && !read_options(spec, words, &mut i, &mut call, &mut no_command) {
        return call;
    }
    // Assignments.
    if spec.assignments {
        while let Some(w) = words.get(i) {
            // env and sudo take any `NAME=VALUE` (even names the shell rejects).
            let assignment = w.value.split_once('=').filter(|(n, _)| !n.is_empty());
            match assignment {
                Some((n, val)) if !w.dynamic => {
                    call.env.push((n.to_string(), val.to_string()));
                    i += 1;
                }
                Some(_) => {
                    opt_fail(
                        &mut call,
                        format!("assignment known only at run time: {}", w.value),
                    );
                    return call;
                }
                None => break,
            }
        }
    }
    if no_command {
        return call;
    }
    if !call.shell_texts.is_empty() {
        // `su -c TEXT user`, `script -c TEXT file`: what follows is not a command.
        if spec.operand_writes {
            call.writes
                .extend(words.iter().skip(i).map(|w| w.value.clone()));
        }
        return call;
    }
    if spec.args_to_shell
        && let Some(w) = words.get(i)
    {
        opt_fail(&mut call, format!("arguments for the shell: {}", w.value));
    } else if i < words.len() {
        call.command_start = Some(i);
    } else if spec.shell_without_command {
        call.opaque = Some((
            OpaqueReason::CodeFromStdin,
            format!("{name} starts an interactive shell"),
        ));
    } else if spec.command_required {
        opt_fail(&mut call, "no command to run".to_string());
    } else if spec.runs == Runs::CommandWithInputArgs {
        // `xargs` alone runs `echo`.
        call.command_start = None;
    }
    call
}

fn apply_option(
    spec: &WrapperSpec,
    opt: &str,
    value: Option<String>,
    call: &mut WrapperCall,
    no_command: &mut bool,
) {
    if spec.no_command.contains(&opt) {
        *no_command = true;
    }
    if spec.shell_join.contains(&opt) {
        call.join_as_shell = true;
    }
    if spec.direct_exec.contains(&opt) {
        call.join_as_shell = false;
    }
    if let Some(val) = value {
        if spec.shell_text.contains(&opt) {
            call.shell_texts.push((val.clone(), false, true));
        }
        if spec.writes.contains(&opt) {
            call.writes.push(val.clone());
        }
        if spec.replace.contains(&opt) {
            call.replace = Some(val.clone());
        }
        if spec.chdir.contains(&opt) {
            call.chdir = Some(val.clone());
        }
        // `env -S 'cmd args'` splits its value into the command line.
        if spec.shell_join.contains(&opt) {
            call.shell_texts.push((val, false, false));
        }
    } else if spec.replace.contains(&opt) {
        // `xargs -i` / `--replace` without a value use `{}`.
        call.replace = Some("{}".to_string());
    }
}

/// Reads options from `words[*i]` on, stopping at the first operand or after
/// `--`. False (with `call.opaque` set) when an option cannot be read.
fn read_options(
    spec: &WrapperSpec,
    words: &[Word],
    i: &mut usize,
    call: &mut WrapperCall,
    no_command: &mut bool,
) -> bool {
    let name = words.first().map_or("", |w| w.value.as_str());
    let opt_fail = |call: &mut WrapperCall, msg: String| {
        call.opaque = Some((OpaqueReason::UnknownWrapperOption, format!("{name}: {msg}")));
    };
    while let Some(w) = words.get(*i) {
        if w.dynamic {
            opt_fail(
                call,
                format!("argument known only at run time: {}", w.value),
            );
            return false;
        }
        let v = w.value.as_str();
        if v == "--" {
            *i += 1;
            break;
        }
        if v == "-" && spec.lone_dash_flag {
            *i += 1;
            continue;
        }
        if let Some(long) = v.strip_prefix("--") {
            let (opt, inline) = match long.split_once('=') {
                Some((o, val)) => (o, Some(val.to_string())),
                None => (long, None),
            };
            let value = if spec.long_valued.contains(&opt) {
                match inline {
                    Some(val) => Some(val),
                    None => match words.get(*i + 1) {
                        Some(next) if !next.dynamic => {
                            *i += 1;
                            Some(next.value.clone())
                        }
                        Some(next) => {
                            opt_fail(
                                call,
                                format!("--{opt} value known only at run time: {}", next.value),
                            );
                            return false;
                        }
                        None => {
                            opt_fail(call, format!("--{opt} lacks its value"));
                            return false;
                        }
                    },
                }
            } else if spec.long_flags.contains(&opt) && inline.is_none() {
                None
            } else if spec.long_optional.contains(&opt) {
                inline
            } else {
                opt_fail(call, format!("unknown option --{long}"));
                return false;
            };
            apply_option(spec, opt, value, call, no_command);
            *i += 1;
            continue;
        }
        if v.len() > 1 && v.starts_with('-') {
            // `v` starts with `-` (one byte): the letters are the chars after it.
            let letters: Vec<char> = v.chars().skip(1).collect();
            let mut k = 0;
            while let Some(&c) = letters.get(k) {
                let key = c.to_string();
                if spec.short_flags.contains(c) {
                    apply_option(spec, &key, None, call, no_command);
                    k += 1;
                } else if spec.short_optional.contains(c) {
                    let rest: String = letters.iter().skip(k + 1).collect();
                    apply_option(
                        spec,
                        &key,
                        (!rest.is_empty()).then_some(rest),
                        call,
                        no_command,
                    );
                    break;
                } else if spec.short_valued.contains(c) {
                    let rest: String = letters.iter().skip(k + 1).collect();
                    let value = if !rest.is_empty() {
                        rest
                    } else {
                        match words.get(*i + 1) {
                            Some(next) if !next.dynamic => {
                                *i += 1;
                                next.value.clone()
                            }
                            Some(next) => {
                                opt_fail(
                                    call,
                                    format!("-{c} value known only at run time: {}", next.value),
                                );
                                return false;
                            }
                            None => {
                                opt_fail(call, format!("-{c} lacks its value"));
                                return false;
                            }
                        }
                    };
                    apply_option(spec, &key, Some(value), call, no_command);
                    break;
                } else {
                    opt_fail(call, format!("unknown option -{c} in {v}"));
                    return false;
                }
            }
            *i += 1;
            continue;
        }
        break;
    }
    true
}
