//! Conformance with peers' published test cases (`tests/data/conformance/`).
//!
//! Each peer decided something about a piece of shell text: Step-Code that it is
//! dangerous or unresolved, Codex that it parses into these argument vectors,
//! Gemini CLI that its command roots are these. Whatever the verdict, the peer
//! *found commands*; the requirement here is that portcullis finds every one of
//! them too (or marks the part opaque), and never promotes data to code.
//!
//! One `#[test]` per file. Every row is classified: checked (by category) or
//! skipped (by a named reason). A failing row does not stop the run: failures are
//! collected and listed at the end with the line, the text, what was expected and
//! what portcullis reported. Cases where portcullis deliberately disagrees with
//! a peer are in [`DELIBERATE_DIFFERENCES`], and each is checked to still behave
//! as the table says, so the table cannot rot.
//!
//! Run with `--nocapture` to see the counts per category.

// Test code: a failed unwrap, index or panic is a failed test.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

use crate::common;

use std::collections::{BTreeMap, BTreeSet};

use portcullis_shell::{Analysis, Command, OpaqueReason, analyze, basename};
use serde_json::Value;

/// Rows per file, as the conformance README states: a truncated file must not pass.
const SEED_ROWS: usize = 303;
const CODEX_ROWS: usize = 450;
const HOOK_ROWS: usize = 166;

// ---------------------------------------------------------------------------
// Deliberate differences
// ---------------------------------------------------------------------------

/// Cases where portcullis deliberately disagrees with the peer, keyed by the
/// row's `command`. The behaviour each reason states is checked by
/// [`difference_holds`]; an entry no row uses, or without a check, fails.
const DELIBERATE_DIFFERENCES: &[(&str, &str)] = &[
    (
        "$\\\n'r\\x6d' -rf ./build",
        "seed (unresolved): bash removes `\\<newline>` before it reads `$'…'`, so the command word is \
         `$'r\\x6d'`, which is `rm`. portcullis decodes it and reports `rm -rf ./build` with a static \
         argv; the peer could not resolve it and asked.",
    ),
    (
        "args=($'\\'' # )\nbar); rm -rf ./build",
        "seed (unresolved): inside a compound array assignment `#` starts a comment, so the array \
         closes on the next line and `rm -rf ./build` runs. portcullis parses it as bash does and \
         reports `rm -rf ./build`; the peer gave up on the array re-parse.",
    ),
    (
        "declare -n reference=target 2>/dev/null || :",
        "seed (unresolved): a nameref with a static target runs nothing. portcullis reports `declare` \
         and `:` with static argv and nothing opaque; a later `$reference` would be a dynamic word, \
         reported where it occurs.",
    ),
    (
        "cmd=rm; $cmd -rf /tmp/example",
        "codex (not_dangerous, its documented limitation: variables are not resolved): portcullis \
         reports the command name as opaque (dynamic-command-name), so a policy asks instead of \
         calling it harmless.",
    ),
    (
        "if then rm -rf /tmp/example",
        "codex (not_dangerous: an unparsable script is not analysed): the text is not valid bash; \
         portcullis reports a parse-error opaque part, so a policy asks.",
    ),
    (
        "cat <<$'E\\x4fF'\nhello\nEOF\nrm -rf ./build",
        "seed (unresolved): bash reads the heredoc tag `$'E\\x4fF'` as the quoted word `EOF`, so the \
         heredoc ends at the `EOF` line and `rm -rf ./build` runs after `cat`. portcullis rewrites \
         the tag to `'EOF'` before parsing (brush-parser rejects `$'…'` tags) and reports both \
         commands, complete; the peer could not resolve the tag and asked.",
    ),
    (
        "declare 'args[$(rm -rf ./build >/dev/null)0]=value'",
        "seed (unresolved): the subscript of an array element assignment is arithmetic, and bash \
         runs its command substitution. portcullis analyses the subscript and reports `rm -rf \
         ./build` (via `$()`); the peer could not see into the declaration and asked.",
    ),
    (
        "zsh -c ls -l",
        "gemini (stripShellWrapper -> \"ls -l\"): zsh runs only the script `ls`; `-l` becomes `$0`. \
         portcullis reports `ls` with argv [\"ls\"], not `ls -l`.",
    ),
];

/// Checks that a case of [`DELIBERATE_DIFFERENCES`] still behaves as its reason says.
fn difference_holds(command: &str, a: &Analysis) -> Result<(), String> {
    match command {
        "cat <<$'E\\x4fF'\nhello\nEOF\nrm -rf ./build" => all_of(&[
            require_argv(a, &["cat"]),
            require_argv(a, &["rm", "-rf", "./build"]),
            require_complete(a),
        ]),
        "declare 'args[$(rm -rf ./build >/dev/null)0]=value'" => {
            require_argv(a, &["rm", "-rf", "./build"])
        }
        "$\\\n'r\\x6d' -rf ./build" => all_of(&[
            require_argv(a, &["rm", "-rf", "./build"]),
            require_complete(a),
        ]),
        "args=($'\\'' # )\nbar); rm -rf ./build" => all_of(&[
            require_argv(a, &["rm", "-rf", "./build"]),
            require_complete(a),
        ]),
        "declare -n reference=target 2>/dev/null || :" => all_of(&[
            require_programs_exactly(a, &["declare", ":"]),
            require_argv(a, &["declare", "-n", "reference=target"]),
            require_complete(a),
        ]),
        "cmd=rm; $cmd -rf /tmp/example" => {
            require_opaque_reason(a, OpaqueReason::DynamicCommandName)
        }
        "if then rm -rf /tmp/example" => require_opaque_reason(a, OpaqueReason::ParseError),
        "zsh -c ls -l" => all_of(&[
            require_argv(a, &["zsh", "-c", "ls", "-l"]),
            require_argv(a, &["ls"]),
            require_programs_exactly(a, &["zsh", "ls"]),
        ]),
        _ => Err("no behaviour check is written for this DELIBERATE_DIFFERENCES entry".into()),
    }
}

fn difference_for(command: &str) -> Option<&'static str> {
    DELIBERATE_DIFFERENCES
        .iter()
        .find(|(c, _)| *c == command)
        .map(|(_, r)| *r)
}

// ---------------------------------------------------------------------------
// Expectations written per row
// ---------------------------------------------------------------------------

/// Marks an expected command whose argv is `None` (a dynamic argument): `&["printf", DYN]`.
const DYN: &str = "<dynamic>";
/// Marks an expected command whose argv is not checked: `&["echo", ANY]`.
const ANY: &str = "<any>";
/// Programs a row may report without listing them (test syntax is not data promotion).
const TOLERATED: &[&str] = &["[["];

/// What portcullis must report for a row whose peer verdict is "harmless":
/// exactly these commands (each spec is an argv, or `[program, DYN|ANY]`),
/// no other program, and — when `complete` — nothing opaque.
struct Expect {
    command: &'static str,
    find: &'static [&'static [&'static str]],
    complete: bool,
}

const fn exp(command: &'static str, find: &'static [&'static [&'static str]]) -> Expect {
    Expect {
        command,
        find,
        complete: true,
    }
}

/// Like [`exp`], but an opaque part is acceptable (arithmetic, array re-parse).
const fn exp_maybe_opaque(
    command: &'static str,
    find: &'static [&'static [&'static str]],
) -> Expect {
    Expect {
        command,
        find,
        complete: false,
    }
}

/// seed_cases.jsonl: `not-dangerous`, `ordinary` and `platform-dependent` rows, and
/// the shell commands of the folder-guard pre-check. Linux semantics: program names
/// are case-sensitive, `.exe` is not stripped, `EnV`/`BaSh` are not `env`/`bash`.
const SEED_EXPECT: &[Expect] = &[
    // not-dangerous: incomplete flags, data-only positions.
    exp("rm -r ./build", &[&["rm", "-r", "./build"]]),
    exp("rm -f ./file", &[&["rm", "-f", "./file"]]),
    exp(
        "rm --recursive ./build",
        &[&["rm", "--recursive", "./build"]],
    ),
    exp("rm -rF ./build", &[&["rm", "-rF", "./build"]]),
    exp("rm -- -rf", &[&["rm", "--", "-rf"]]),
    exp("rm -r -- -f", &[&["rm", "-r", "--", "-f"]]),
    exp("echo rm -rf ./build", &[&["echo", "rm", "-rf", "./build"]]),
    exp(
        "printf '%s' 'rm -rf ./build'",
        &[&["printf", "%s", "rm -rf ./build"]],
    ),
    exp(
        "grep 'rm -rf' script.sh",
        &[&["grep", "rm -rf", "script.sh"]],
    ),
    exp("echo ok # cleanup; rm -rf ./build", &[&["echo", "ok"]]),
    exp("echo ok # $(rm -rf ./build)", &[&["echo", "ok"]]),
    exp(
        "printf '%s' '$(rm -rf ./build)'",
        &[&["printf", "%s", "$(rm -rf ./build)"]],
    ),
    exp(
        "printf '%s' '`rm -rf ./build`'",
        &[&["printf", "%s", "`rm -rf ./build`"]],
    ),
    exp(
        "sh -c '' 'rm -rf ./build'",
        &[&["sh", "-c", "", "rm -rf ./build"]],
    ),
    exp(
        "command -v rm -rf ./build",
        &[&["command", "-v", "rm", "-rf", "./build"]],
    ),
    exp(
        "command -V rm -rf ./build",
        &[&["command", "-V", "rm", "-rf", "./build"]],
    ),
    exp(
        "sudo -un root rm -rf ./build",
        &[
            &["sudo", "-un", "root", "rm", "-rf", "./build"],
            &["root", "rm", "-rf", "./build"],
        ],
    ),
    exp(
        "'2'>/tmp/output rm -rf ./build",
        &[&["2", "rm", "-rf", "./build"]],
    ),
    exp(
        "'{fd}'>/tmp/output rm -rf ./build",
        &[&["{fd}", "rm", "-rf", "./build"]],
    ),
    exp("cat <<'EOF'\nrm -rf ./build\nEOF", &[&["cat"]]),
    exp("cat <<'EOF'\n$(rm -rf ./build)\nEOF", &[&["cat"]]),
    exp("cat <<EOF\nrm -rf ./build\nEOF", &[&["cat"]]),
    exp("cat <<-EOF\n\trm -rf ./build\n\tEOF", &[&["cat"]]),
    exp(
        "cat <<'FIRST' <<'SECOND'\nrm -rf ./first\nFIRST\nrm -rf ./second\nSECOND",
        &[&["cat"]],
    ),
    exp(
        "sh -c 'printf %s' label 'rm -rf ./build'",
        &[
            &["sh", "-c", "printf %s", "label", "rm -rf ./build"],
            &["printf", "%s"],
        ],
    ),
    exp(
        "qemu-system-x86_64 -no-reboot -no-shutdown",
        &[&["qemu-system-x86_64", "-no-reboot", "-no-shutdown"]],
    ),
    // ordinary: wrapper operands and command data are not promoted to code.
    exp(
        "timeout 5 echo rm -rf ./build",
        &[
            &["timeout", "5", "echo", "rm", "-rf", "./build"],
            &["echo", "rm", "-rf", "./build"],
        ],
    ),
    exp(
        "timeout 5 -- rm -rf ./build",
        &[
            &["timeout", "5", "--", "rm", "-rf", "./build"],
            &["--", "rm", "-rf", "./build"],
        ],
    ),
    exp(
        "timeout -- 5 -- reboot",
        &[&["timeout", "--", "5", "--", "reboot"], &["--", "reboot"]],
    ),
    exp(
        "timeout 5 bash -c 'printf %s' label 'rm -rf ./build'",
        &[
            &[
                "timeout",
                "5",
                "bash",
                "-c",
                "printf %s",
                "label",
                "rm -rf ./build",
            ],
            &["bash", "-c", "printf %s", "label", "rm -rf ./build"],
            &["printf", "%s"],
        ],
    ),
    exp(
        "nice -n 5 echo reboot",
        &[&["nice", "-n", "5", "echo", "reboot"], &["echo", "reboot"]],
    ),
    exp(
        "nice --adjustment=5 rm -rF ./build",
        &[
            &["nice", "--adjustment=5", "rm", "-rF", "./build"],
            &["rm", "-rF", "./build"],
        ],
    ),
    exp(
        "setsid -w printf '%s' 'rm -rf ./build'",
        &[
            &["setsid", "-w", "printf", "%s", "rm -rf ./build"],
            &["printf", "%s", "rm -rf ./build"],
        ],
    ),
    exp(
        "stdbuf -oL echo reboot",
        &[&["stdbuf", "-oL", "echo", "reboot"], &["echo", "reboot"]],
    ),
    exp(
        "stdbuf --output='rm -rf ./build' printf safe",
        &[
            &["stdbuf", "--output=rm -rf ./build", "printf", "safe"],
            &["printf", "safe"],
        ],
    ),
    // ordinary: verified by real bash runs that rm/reboot never ran.
    exp(
        "[ -n safe ]; printf '%s\\n' safe",
        &[&["[", "-n", "safe", "]"], &["printf", "%s\\n", "safe"]],
    ),
    exp(
        "if [ -n safe ]; then printf '%s\\n' safe; fi",
        &[&["[", "-n", "safe", "]"], &["printf", "%s\\n", "safe"]],
    ),
    exp("./safe[", &[&["./safe["]]),
    exp("'r[m]'", &[&["r[m]"]]),
    exp(
        "BAR='rm -rf ./build'; export FOO=\"$BAR\"; printf '%s\\n' \"$FOO\"",
        &[&["export", DYN], &["printf", DYN]],
    ),
    exp_maybe_opaque("printf \"%s\\n\" \"$((rm -rf))\"", &[&["printf", DYN]]),
    exp("[[ x == x && reboot == reboot ]]", &[]),
    exp("case x in\nreboot) :;;\nx) :;;\nesac", &[&[":"]]),
    exp("for word in rm -rf ./build; do :; done", &[&[":"]]),
    exp("cat <<< \"rm -rf ./build\"", &[&["cat"]]),
    exp(
        "printf '%s\\n' 'a[$(rm -rf ./build)0]'",
        &[&["printf", "%s\\n", "a[$(rm -rf ./build)0]"]],
    ),
    exp(
        "printf '%s\\n' value | xargs echo",
        &[
            &["printf", "%s\\n", "value"],
            &["xargs", "echo"],
            &["echo", ANY],
        ],
    ),
    exp("\"if\" rm -rf ./build", &[&["if", "rm", "-rf", "./build"]]),
    exp(
        "\"FOO=x\" rm -rf ./build",
        &[&["FOO=x", "rm", "-rf", "./build"]],
    ),
    exp(
        "eval -- -- 'rm -rf ./build' 2>/dev/null || :",
        &[
            &["eval", "--", "--", "rm -rf ./build"],
            &["--", "rm", "-rf", "./build"],
            &[":"],
        ],
    ),
    exp(
        "bash safe-script -c 'rm -rf ./build'",
        &[&["bash", "safe-script", "-c", "rm -rf ./build"]],
    ),
    exp(
        "bash -- -c 'rm -rf ./build'",
        &[&["bash", "--", "-c", "rm -rf ./build"]],
    ),
    exp(
        "bash -c -- '' 'rm -rf ./build'",
        &[&["bash", "-c", "--", "", "rm -rf ./build"]],
    ),
    exp(
        "bash -ec -- 'printf %s safe' label 'rm -rf ./build'",
        &[
            &[
                "bash",
                "-ec",
                "--",
                "printf %s safe",
                "label",
                "rm -rf ./build",
            ],
            &["printf", "%s", "safe"],
        ],
    ),
    exp(
        "printf '%s\\n' '`echo ok # ignored`; rm -rf ./build'",
        &[&["printf", "%s\\n", "`echo ok # ignored`; rm -rf ./build"]],
    ),
    exp(
        "args=(rm -rf ./build); printf '%s\\n' \"${args[@]}\"",
        &[&["printf", DYN]],
    ),
    exp_maybe_opaque(
        "declare -a FOO='(rm -rf ./build)'; printf '%s\\n' \"${FOO[@]}\"",
        &[&["declare", "-a", "FOO=(rm -rf ./build)"], &["printf", DYN]],
    ),
    exp("cat <<$'EOF'\n$(rm -rf ./build)\nEOF", &[&["cat"]]),
    // ordinary: argument case and data-only positions preserved.
    exp("RM -rF ./build", &[&["RM", "-rF", "./build"]]),
    exp("RM -- -rf", &[&["RM", "--", "-rf"]]),
    exp("SYSTEMCTL REBOOT", &[&["SYSTEMCTL", "REBOOT"]]),
    exp(
        "ENV BASH -c 'printf %s' label 'RM -rf ./build'",
        &[&["ENV", "BASH", "-c", "printf %s", "label", "RM -rf ./build"]],
    ),
    // platform-dependent: dangerous on case-insensitive or Windows hosts; on Linux
    // the program is exactly the word written, and an unknown program's arguments are data.
    exp("RM -rf /", &[&["RM", "-rf", "/"]]),
    exp("ReBoOt", &[&["ReBoOt"]]),
    exp(
        "/opt/tools/rM -r -f ./build",
        &[&["/opt/tools/rM", "-r", "-f", "./build"]],
    ),
    exp(
        "EnV MODE=test rm -rf ./build",
        &[&["EnV", "MODE=test", "rm", "-rf", "./build"]],
    ),
    exp("NoHuP reboot", &[&["NoHuP", "reboot"]]),
    exp(
        "BaSh -c 'rm -rf ./build'",
        &[&["BaSh", "-c", "rm -rf ./build"]],
    ),
    exp(
        "ENV BASH -c 'RM -rf ./build'",
        &[&["ENV", "BASH", "-c", "RM -rf ./build"]],
    ),
    exp(
        "FIND . -exec rM -rf '{}' +",
        &[&["FIND", ".", "-exec", "rM", "-rf", "{}", "+"]],
    ),
    exp(
        "CAT <<'EOF' | BASH\nRM -rf ./build\nEOF",
        &[&["CAT"], &["BASH"]],
    ),
    exp("rm.exe -rf ./build", &[&["rm.exe", "-rf", "./build"]]),
    exp(
        "'C:\\Tools\\RM.EXE' -rf ./build",
        &[&["C:\\Tools\\RM.EXE", "-rf", "./build"]],
    ),
    exp(
        "ENV.ExE BASH.ExE -c 'RM.ExE -rf ./build'",
        &[&["ENV.ExE", "BASH.ExE", "-c", "RM.ExE -rf ./build"]],
    ),
    // The folder guard's pre-check of shell commands (absolute host paths).
    exp(
        "cat '/Users/mipl/.ssh/id_rsa'",
        &[&["cat", "/Users/mipl/.ssh/id_rsa"]],
    ),
    exp(
        "cp '/Users/mipl/Downloads/statement.pdf' Workflow/testing/runs/iteration-0/test-group/execution/Downloads/statement.pdf",
        &[&[
            "cp",
            "/Users/mipl/Downloads/statement.pdf",
            "Workflow/testing/runs/iteration-0/test-group/execution/Downloads/statement.pdf",
        ]],
    ),
    exp(
        "cat '/Users/mipl/ai-work/coding-agent-loop/workspace-docs/Workflow/testing/workflow.json'",
        &[&[
            "cat",
            "/Users/mipl/ai-work/coding-agent-loop/workspace-docs/Workflow/testing/workflow.json",
        ]],
    ),
];

/// codex_cases.jsonl, `shell-command/src/bash.rs` rows that are not `accepted`, and
/// `not_dangerous` rows: the programs the script runs (a multiset), not counting a
/// `bash -lc`/`zsh -lc` the row's argv wraps it in. Empty: not valid bash, a
/// parse-error opaque part is required.
const CODEX_PROGRAMS: &[(&str, &[&str])] = &[
    // bash.rs: rejected (codex only accepts word-only scripts).
    ("echo \"hi ${USER}\"", &["echo"]),
    ("echo \"$HOME\"", &["echo"]),
    ("(ls)", &["ls"]),
    ("ls || (pwd && echo hi)", &["ls", "pwd", "echo"]),
    ("ls > out.txt", &["ls"]),
    ("echo hi & echo bye", &["echo", "echo"]),
    ("echo $(pwd)", &["echo", "pwd"]),
    ("echo `pwd`", &["echo", "pwd"]),
    ("echo $HOME", &["echo"]),
    ("echo \"hi $USER\"", &["echo"]),
    ("FOO=bar ls", &["ls"]),
    ("ls &&", &[]),
    ("&& ls", &[]),
    ("ls ;; pwd", &[]),
    ("ls | | wc", &[]),
    ("rg -g\"$VAR\" pattern", &["rg"]),
    ("rg -g\"${VAR}\" pattern", &["rg"]),
    ("rg -g\"$(pwd)\" pattern", &["rg", "pwd"]),
    ("rg -g\"$(echo '*.py')\" pattern", &["rg", "echo"]),
    // bash.rs: single-command prefix (heredoc fallback) and its None cases.
    ("python3 <<'PY'\nprint('hello')\nPY", &["python3"]),
    ("python3 << PY\nprint('hello')\nPY", &["python3"]),
    (
        "python3 <<'PY' > /tmp/out.txt\nprint('hello')\nPY",
        &["python3"],
    ),
    (
        "python3 <<'PY'\nprint('hello')\nPY\necho done",
        &["python3", "echo"],
    ),
    ("echo hello > /tmp/out.txt", &["echo"]),
    (
        "echo hello > /tmp/out.txt && cat /tmp/out.txt",
        &["echo", "cat"],
    ),
    ("python3 <<< \"$(rm -rf /)\"", &["python3", "rm"]),
    ("echo $((1<<2))", &["echo"]),
    ("python3 $((1<<2)) <<'PY'\nprint('hello')\nPY", &["python3"]),
    ("PATH=/tmp/evil:$PATH cat <<'EOF'\nhello\nEOF", &["cat"]),
    // is_dangerous_command.rs: not_dangerous.
    ("rm -r /tmp/example", &["rm"]),
    ("rm -- -f", &["rm"]),
    ("echo 'rm -rf /tmp/example'", &["echo"]),
    ("git status", &["git"]),
    ("git checkout reset", &["git"]),
    ("git push origin main", &["git"]),
];

/// hook_cases.jsonl, Gemini CLI policy rows (`shell-safety*.test.ts`,
/// `shell-substitution.test.ts`): every command the policy engine checked (a
/// multiset). Empty: bash rejects the text, an opaque part is required.
const GEMINI_POLICY_PROGRAMS: &[(&str, &[&str])] = &[
    ("git log", &["git"]),
    ("git log --oneline", &["git"]),
    ("git logout", &["git"]),
    ("git log && rm -rf /", &["git", "rm"]),
    ("git log; rm -rf /", &["git", "rm"]),
    ("git log || rm -rf /", &["git", "rm"]),
    ("git log &&& rm -rf /", &[]),
    ("echo $(rm -rf /)", &["echo", "rm"]),
    ("echo $(git log)", &["echo", "git"]),
    ("echo `rm -rf /`", &["echo", "rm"]),
    ("diff <(git log) <(rm -rf /)", &["diff", "git", "rm"]),
    ("tee >(rm -rf /)", &["tee", "rm"]),
    ("git log | rm -rf /", &["git", "rm"]),
    ("git log --format=$(rm -rf /)", &["git", "rm"]),
    (
        "git log && echo $(git log | rm -rf /)",
        &["git", "echo", "git", "rm"],
    ),
    ("git log && echo $(git log)", &["git", "echo", "git"]),
    ("git log > /tmp/test", &["git"]),
    ("git log @(Get-Process)", &["git"]),
    ("git commit -m \"msg\" && git push", &["git", "git"]),
    ("git status && unknown_command", &["git", "unknown_command"]),
    ("echo hi && ls", &["echo", "ls"]),
    ("false || ls", &["false", "ls"]),
    ("echo hi; ls", &["echo", "ls"]),
    ("echo hi | grep \"hi\"", &["echo", "grep"]),
    ("echo hi & ls", &["echo", "ls"]),
    ("echo $(cat $(ls))", &["echo", "cat", "ls"]),
    ("echo hi > /tmp/test", &["echo"]),
    ("echo $(dangerous_cmd)", &["echo", "dangerous_cmd"]),
    ("echo `dangerous_cmd`", &["echo", "dangerous_cmd"]),
    ("(dangerous_cmd)", &["dangerous_cmd"]),
    ("echo $(ls $(deep_danger))", &["echo", "ls", "deep_danger"]),
];

fn lookup<'t, T>(table: &'t [(&str, T)], command: &str) -> Option<&'t T> {
    table.iter().find(|(c, _)| *c == command).map(|(_, t)| t)
}

// ---------------------------------------------------------------------------
// The per-file tests
// ---------------------------------------------------------------------------

#[test]
fn seed_cases() {
    let rows = load("seed_cases.jsonl", SEED_ROWS);
    let mut t = Tally::new("seed_cases.jsonl");
    for (line, v) in &rows {
        let command = field(v, "command");
        let expected = field(v, "expected");
        let note = field(v, "note");
        let source = field(v, "source");
        if command.starts_with("[tool") {
            t.skip("tool-call decision rows `[tool] …` (engine layer, not shell text)");
            continue;
        }
        if command.starts_with("read ") || command.starts_with("write ") {
            t.skip("folder-guard path decisions `read …`/`write …` (paths layer, not shell text)");
            continue;
        }
        if [
            "allowed-tools",
            "(allowed-tools",
            "active skill",
            "tool call '",
        ]
        .iter()
        .any(|p| command.starts_with(p))
        {
            t.skip("Agent Skills allowed-tools rows (policy layer, not shell text)");
            continue;
        }
        match expected {
            "dangerous" => {
                let hazard = seed_hazard(note, command);
                t.case(
                    "dangerous: hazardous program found with its flags",
                    *line,
                    command,
                    command,
                    |a| hazard_check(a, &hazard),
                );
            }
            "unresolved" => {
                t.case(
                    "unresolved: not silently complete",
                    *line,
                    command,
                    command,
                    not_silently_complete,
                );
            }
            "not-dangerous" | "ordinary" | "platform-dependent" => {
                let category = match expected {
                    "platform-dependent" => {
                        "platform-dependent: program exactly as written (Linux)"
                    }
                    _ => "not-dangerous/ordinary: exact commands, no data promoted to code",
                };
                t.case(category, *line, command, command, |a| {
                    expect_check(a, SEED_EXPECT, command)
                });
            }
            _ if source.contains("execute_shell_command") => {
                t.case(
                    "folder-guard pre-check: command and absolute paths found",
                    *line,
                    command,
                    command,
                    |a| {
                        expect_check(a, SEED_EXPECT, command)?;
                        absolute_paths_in_effects(a, command)
                    },
                );
            }
            _ => t.unclassified(*line, command, expected),
        }
    }
    t.finish();
}

#[test]
fn codex_cases() {
    let rows = load("codex_cases.jsonl", CODEX_ROWS);
    let mut t = Tally::new("codex_cases.jsonl");
    for (line, v) in &rows {
        let command = field(v, "command");
        let expected = field(v, "expected");
        let source = field(v, "source");
        let argv: Option<Vec<String>> = v
            .get("argv")
            .map(|a| serde_json::from_value(a.clone()).expect("argv is an array of strings"));
        let text = argv
            .as_deref()
            .map(portcullis_shell::join)
            .unwrap_or_else(|| command.to_string());
        let shell_wrapped = argv.as_deref().is_some_and(|a| {
            a.len() == 3 && ["bash", "zsh", "sh"].contains(&basename(&a[0])) && a[1] == "-lc"
        });
        let outer: Vec<String> = if shell_wrapped {
            argv.clone().unwrap()
        } else {
            Vec::new()
        };

        if source.contains("shell-command/src/bash.rs") {
            if let Some(list) = expected.strip_prefix("accepted: ") {
                let vectors: Vec<Vec<String>> =
                    serde_json::from_str(list).expect("accepted: a JSON list of argv vectors");
                t.case(
                    "bash.rs accepted: exactly these argv vectors, fully resolved",
                    *line,
                    command,
                    &text,
                    |a| {
                        let mut checks: Vec<Result<(), String>> =
                            vectors.iter().map(|v| require_argv(a, &strs(v))).collect();
                        checks.push(require_complete(a));
                        checks.push(if a.commands.iter().all(|c| c.argv.is_some()) {
                            Ok(())
                        } else {
                            Err("a command has a dynamic argv".into())
                        });
                        all_of(&checks).map(|()| Pass::Found)
                    },
                );
            } else if let Some(prefix) = expected.strip_prefix("prefix: ") {
                let prefix: Vec<String> =
                    serde_json::from_str(prefix).expect("prefix: a JSON list");
                t.case(
                    "bash.rs prefix: the single command found",
                    *line,
                    command,
                    &text,
                    |a| {
                        let found = a.commands.iter().any(|c| c.words.starts_with(&prefix));
                        if !found {
                            return Err(format!("no command whose words start with {prefix:?}"));
                        }
                        programs_check(a, command, &outer)
                    },
                );
            } else {
                t.case(
                    "bash.rs rejected/None: every command found, or opaque",
                    *line,
                    command,
                    &text,
                    |a| programs_check(a, command, &outer),
                );
            }
        } else if source.contains("is_dangerous_command.rs") {
            let not_dangerous =
                expected.starts_with("not_dangerous") && !expected.contains("ForcedRm");
            if not_dangerous {
                t.case(
                    "is_dangerous not_dangerous: exact commands, no promotion",
                    *line,
                    command,
                    &text,
                    |a| {
                        if let Some(argv) = &argv {
                            require_argv(a, &strs(argv))?;
                        }
                        let programs = lookup(CODEX_PROGRAMS, command)
                            .ok_or_else(|| "no CODEX_PROGRAMS entry for this row".to_string())?;
                        let mut all: Vec<&str> =
                            outer.first().map(|s| s.as_str()).into_iter().collect();
                        all.extend(programs.iter());
                        require_programs_exactly(a, &all)?;
                        require_complete(a).map(|()| Pass::Found)
                    },
                );
            } else {
                let hazard = codex_hazard(command);
                t.case(
                    "is_dangerous dangerous: program found with its flags",
                    *line,
                    command,
                    &text,
                    |a| {
                        if let Some(argv) = &argv {
                            require_argv(a, &strs(argv))?;
                        }
                        hazard_check(a, &hazard)
                    },
                );
            }
        } else if source.contains("command_safety/windows_") {
            let argv = argv.clone().expect("windows rows carry argv");
            t.case(
                "windows-only: outer argv found (PowerShell/cmd text is not bash, not analysed)",
                *line,
                command,
                &text,
                |a| require_argv(a, &strs(&argv)).map(|()| Pass::Found),
            );
        } else if command.starts_with("prefix_rule suggestion") {
            t.skip("execpolicy prefix_rule suggestions (an argv prefix, not a command)");
        } else if command == "(policy load)" {
            t.skip("execpolicy rules-file parse errors (no command)");
        } else if let Some(argv) = &argv {
            t.case(
                "policy-layer rows (safe list, execpolicy, read-only): peer argv found, verdict not compared",
                *line,
                command,
                &text,
                |a| require_argv(a, &strs(argv)).map(|()| Pass::Found),
            );
        } else {
            t.skip("approvals matrix: sandbox/approval outcomes without argv (engine layer)");
        }
    }
    t.finish();
}

#[test]
fn hook_cases() {
    let rows = load("hook_cases.jsonl", HOOK_ROWS);
    let mut t = Tally::new("hook_cases.jsonl");
    for (line, v) in &rows {
        let command = field(v, "command");
        let expected = field(v, "expected");
        let source = field(v, "source");
        if source.contains("utils/shell-utils.test.ts") {
            if let Some(rest) = expected.strip_prefix("roots=") {
                let end = rest.find(']').expect("roots=[…]") + 1;
                let roots: Vec<String> = serde_json::from_str(&rest[..end]).expect("roots JSON");
                let peer_error = rest[end..].to_lowercase().contains("error");
                t.case(
                    "shell-utils roots: every root found",
                    *line,
                    command,
                    command,
                    |a| {
                        if peer_error {
                            // The peer refused (`${x@P}` can run code): portcullis must not be silently complete.
                            return not_silently_complete(a);
                        }
                        if roots.is_empty() {
                            return if a.commands.is_empty() && a.opaque.is_empty() {
                                Ok(Pass::Found)
                            } else {
                                Err("expected no command and nothing opaque".into())
                            };
                        }
                        require_programs(a, &strs(&roots))
                            .map(|()| Pass::Found)
                            .or_else(|e| via_opaque(a, e))
                    },
                );
            } else if let Some(flag) = expected.strip_prefix("hasRedirection=") {
                let want = flag == "true";
                t.case("shell-utils hasRedirection", *line, command, command, |a| {
                    let has = a.commands.iter().any(|c| !c.redirects.is_empty());
                    if has == want {
                        Ok(Pass::Found)
                    } else {
                        Err(format!("expected redirects present = {want}"))
                    }
                });
            } else if expected.starts_with("split") {
                let parts: Vec<String> = match expected.strip_prefix("split=") {
                    Some(list) => serde_json::from_str(list).expect("split JSON"),
                    None => expected
                        .strip_prefix("split contains ")
                        .and_then(|s| s.split(';').next())
                        .expect("split contains … ;")
                        .split(" and ")
                        .map(json_string)
                        .collect(),
                };
                t.case(
                    "shell-utils split: each part's command found",
                    *line,
                    command,
                    command,
                    |a| {
                        all_of(
                            &parts
                                .iter()
                                .map(|p| require_same_command(a, p))
                                .collect::<Vec<_>>(),
                        )
                        .map(|()| Pass::Found)
                    },
                );
            } else if let Some(inner) = expected.strip_prefix("stripShellWrapper -> ") {
                let inner: String = json_string(inner);
                let first = command.split_whitespace().next().unwrap_or("");
                if ["cmd.exe", "powershell.exe", "pwsh"].contains(&first) {
                    t.skip("Windows shell wrappers (cmd.exe /c, PowerShell -Command): not bash");
                    continue;
                }
                t.case(
                    "shell-utils stripShellWrapper: the inner command found",
                    *line,
                    command,
                    command,
                    |a| require_same_command(a, &inner).map(|()| Pass::Found),
                );
            } else if let Some(detail) = expected.strip_prefix("detail name ") {
                let name = json_string(detail);
                let op = name
                    .strip_prefix("redirection (")
                    .and_then(|s| s.strip_suffix(')'))
                    .expect("redirection (op)")
                    .to_string();
                t.case(
                    "shell-utils redirection detail: the operator found",
                    *line,
                    command,
                    command,
                    |a| {
                        if a.commands
                            .iter()
                            .any(|c| c.redirects.iter().any(|r| r.op == op))
                        {
                            Ok(Pass::Found)
                        } else {
                            Err(format!("no redirect with op {op:?}"))
                        }
                    },
                );
            } else {
                t.unclassified(*line, command, expected);
            }
        } else if source.starts_with("gemini-cli packages/core/src/policy/") {
            t.case(
                "gemini policy rows: every command the policy checked found",
                *line,
                command,
                command,
                |a| {
                    let programs = lookup(GEMINI_POLICY_PROGRAMS, command).ok_or_else(|| {
                        "no GEMINI_POLICY_PROGRAMS entry for this row".to_string()
                    })?;
                    if programs.is_empty() {
                        return if a.opaque.is_empty() {
                            Err("bash rejects this text: expected an opaque part".into())
                        } else {
                            Ok(Pass::Found)
                        };
                    }
                    require_programs(a, programs)
                        .map(|()| Pass::Found)
                        .or_else(|e| via_opaque(a, e))
                },
            );
        } else {
            t.skip("rule matching, hooks `if`, modes and docs examples (Claude Code, Codex rules): policy layer");
        }
    }
    t.finish();
}

/// Every entry of [`DELIBERATE_DIFFERENCES`] is a row of some file, listed once.
#[test]
fn deliberate_differences_are_rows() {
    let mut commands = BTreeSet::new();
    for file in ["seed_cases.jsonl", "codex_cases.jsonl", "hook_cases.jsonl"] {
        for (_, v) in common::read_jsonl_numbered(&common::conformance_dir().join(file)) {
            commands.insert(field(&v, "command").to_string());
        }
    }
    let mut seen = BTreeSet::new();
    let mut problems = Vec::new();
    for (command, reason) in DELIBERATE_DIFFERENCES {
        if !seen.insert(*command) {
            problems.push(format!("listed twice: {command:?}"));
        }
        if !commands.contains(*command) {
            problems.push(format!("no conformance row has this command: {command:?}"));
        }
        if reason.trim().is_empty() {
            problems.push(format!("no reason given: {command:?}"));
        }
    }
    assert!(
        problems.is_empty(),
        "DELIBERATE_DIFFERENCES:\n{}",
        problems.join("\n")
    );
}

// ---------------------------------------------------------------------------
// Hazards (dangerous rows)
// ---------------------------------------------------------------------------

/// What makes a dangerous row dangerous, as the peer's rule names it.
#[derive(Debug)]
enum Hazard {
    /// `rm` with a recursive and a force option (before `--`).
    RmRecursiveForce,
    /// `rm` with a force option (Codex's ForcedRm).
    RmForce,
    /// `mkfs`, `mkfs.ext4` …
    Mkfs,
    /// `dd … of=…`.
    CopyDevice,
    /// `git` with exactly these arguments after the program.
    Git(Vec<String>),
    /// `reboot`, `shutdown`, `halt`, `poweroff`.
    Lifecycle,
}

impl Hazard {
    fn program(&self, c: &Command) -> bool {
        let b = c.basename();
        match self {
            Hazard::RmRecursiveForce | Hazard::RmForce => b == "rm",
            Hazard::Mkfs => b.starts_with("mkfs"),
            Hazard::CopyDevice => b == "dd",
            Hazard::Git(_) => b == "git",
            Hazard::Lifecycle => ["reboot", "shutdown", "halt", "poweroff"].contains(&b),
        }
    }

    fn args(&self, args: &[&str]) -> bool {
        match self {
            Hazard::RmRecursiveForce => rm_flags(args) == (true, true),
            Hazard::RmForce => rm_flags(args).1,
            Hazard::Mkfs | Hazard::Lifecycle => true,
            Hazard::CopyDevice => args.iter().any(|a| a.starts_with("of=")),
            Hazard::Git(tokens) => args == strs(tokens).as_slice(),
        }
    }
}

/// `(recursive, force)` among `rm`'s options (GNU order: options anywhere before `--`).
fn rm_flags(args: &[&str]) -> (bool, bool) {
    let (mut r, mut f) = (false, false);
    for a in args {
        match *a {
            "--" => break,
            "--recursive" => r = true,
            "--force" => f = true,
            s if s.starts_with('-') && !s.starts_with("--") && s.len() > 1 => {
                r |= s.contains('r') || s.contains('R');
                f |= s.contains('f');
            }
            _ => {}
        }
    }
    (r, f)
}

fn seed_hazard(note: &str, command: &str) -> Hazard {
    if note.contains("rule recursive-force-remove") {
        Hazard::RmRecursiveForce
    } else if note.contains("rule format-filesystem") {
        Hazard::Mkfs
    } else if note.contains("rule copy-device") {
        Hazard::CopyDevice
    } else if note.contains("rule destructive-git") {
        Hazard::Git(
            command
                .split_whitespace()
                .skip(1)
                .map(String::from)
                .collect(),
        )
    } else if note.contains("rule system-lifecycle") || command.contains("reboot") {
        Hazard::Lifecycle
    } else {
        Hazard::RmRecursiveForce
    }
}

fn codex_hazard(command: &str) -> Hazard {
    let tokens: Vec<&str> = command.split_whitespace().collect();
    let is_rm = tokens
        .iter()
        .any(|t| basename(t.trim_start_matches(|c| "\"$(`".contains(c))) == "rm");
    if is_rm {
        return Hazard::RmForce;
    }
    let git = tokens
        .iter()
        .position(|t| basename(t) == "git")
        .expect("a git command");
    Hazard::Git(tokens[git + 1..].iter().map(|s| s.to_string()).collect())
}

/// The hazardous program is found with its hazardous arguments visible; or found
/// with a dynamic argv (any dynamic word could be the flag); or the part is opaque.
fn hazard_check(a: &Analysis, h: &Hazard) -> Check {
    let mut dynamic = false;
    for c in &a.commands {
        if h.program(c) {
            if h.args(&static_args(c)) {
                return Ok(Pass::Found);
            }
            dynamic |= c.argv.is_none();
        }
    }
    if dynamic {
        return Ok(Pass::Dynamic);
    }
    via_opaque(a, format!("expected {h:?} to be found"))
}

// ---------------------------------------------------------------------------
// Checks
// ---------------------------------------------------------------------------

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Pass {
    /// Found as the peer did (or as the expectation says).
    Found,
    /// Found, with a dynamic argv.
    Dynamic,
    /// Not found, but the analysis has an opaque part (accepted; listed).
    Opaque,
}

type Check = Result<Pass, String>;

/// Accepts a missing command when the analysis reports an opaque part.
fn via_opaque(a: &Analysis, error: String) -> Check {
    if a.opaque.is_empty() {
        Err(error)
    } else {
        Ok(Pass::Opaque)
    }
}

/// Unresolved rows: an opaque part, or a command with a dynamic argv.
fn not_silently_complete(a: &Analysis) -> Check {
    if !a.opaque.is_empty() || a.commands.iter().any(|c| c.argv.is_none()) {
        Ok(Pass::Found)
    } else {
        Err("the peer could not resolve this, but portcullis reports it complete (nothing opaque, every \
             argv static): a missed dynamic part, or a case for DELIBERATE_DIFFERENCES"
            .into())
    }
}

fn all_of(checks: &[Result<(), String>]) -> Result<(), String> {
    let errors: Vec<&str> = checks
        .iter()
        .filter_map(|c| c.as_ref().err())
        .map(|s| s.as_str())
        .collect();
    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors.join("; "))
    }
}

fn strs(v: &[String]) -> Vec<&str> {
    v.iter().map(|s| s.as_str()).collect()
}

/// The static arguments after the program: the argv, or the static words when dynamic.
fn static_args(c: &Command) -> Vec<&str> {
    match &c.argv {
        Some(argv) => argv.iter().skip(1).map(|s| s.as_str()).collect(),
        None => c
            .words
            .iter()
            .enumerate()
            .skip(1)
            .filter(|(i, _)| !c.dynamic_words.contains(i))
            .map(|(_, w)| w.as_str())
            .collect(),
    }
}

fn argv_is(c: &Command, expected: &[&str]) -> bool {
    c.argv
        .as_ref()
        .is_some_and(|argv| argv.iter().map(|s| s.as_str()).eq(expected.iter().copied()))
}

fn require_argv(a: &Analysis, expected: &[&str]) -> Result<(), String> {
    if a.commands.iter().any(|c| argv_is(c, expected)) {
        Ok(())
    } else {
        Err(format!("no command with argv {expected:?}"))
    }
}

fn require_complete(a: &Analysis) -> Result<(), String> {
    if a.is_complete() {
        Ok(())
    } else {
        Err("expected nothing opaque".into())
    }
}

fn require_opaque_reason(a: &Analysis, reason: OpaqueReason) -> Result<(), String> {
    if a.opaque.iter().any(|o| o.reason == reason) {
        Ok(())
    } else {
        Err(format!(
            "expected an opaque part with reason {}",
            reason.as_str()
        ))
    }
}

/// Every program of `expected` is found, as often as it is listed.
fn require_programs(a: &Analysis, expected: &[&str]) -> Result<(), String> {
    let mut found: BTreeMap<&str, usize> = BTreeMap::new();
    for p in a.programs() {
        *found.entry(p).or_default() += 1;
    }
    let mut missing = Vec::new();
    for p in expected {
        match found.get_mut(p) {
            Some(n) if *n > 0 => *n -= 1,
            _ => missing.push(*p),
        }
    }
    if missing.is_empty() {
        Ok(())
    } else {
        Err(format!("programs not found: {missing:?}"))
    }
}

/// The programs found are exactly `expected`, as a multiset.
fn require_programs_exactly(a: &Analysis, expected: &[&str]) -> Result<(), String> {
    let mut found: Vec<&str> = a.programs().collect();
    let mut want: Vec<&str> = expected.to_vec();
    found.sort_unstable();
    want.sort_unstable();
    if found == want {
        Ok(())
    } else {
        Err(format!("expected exactly the programs {want:?}"))
    }
}

/// The first command of `part` analysed alone is found, same program and argv, in `a`.
fn require_same_command(a: &Analysis, part: &str) -> Result<(), String> {
    let alone = analyze(part);
    let Some(first) = alone.commands.first() else {
        return Err(format!("the part {part:?} alone yields no command"));
    };
    if a.commands
        .iter()
        .any(|c| c.program == first.program && c.argv == first.argv)
    {
        Ok(())
    } else {
        Err(format!(
            "the command of {part:?} ({} {:?}) is not found",
            first.program, first.argv
        ))
    }
}

/// The programs a codex row runs ([`CODEX_PROGRAMS`]), plus the outer shell of a wrapped row.
fn programs_check(a: &Analysis, command: &str, outer: &[String]) -> Check {
    let programs = lookup(CODEX_PROGRAMS, command)
        .ok_or_else(|| "no CODEX_PROGRAMS entry for this row".to_string())?;
    if !outer.is_empty() {
        require_argv(a, &strs(outer))?;
    }
    if programs.is_empty() {
        return require_opaque_reason(a, OpaqueReason::ParseError).map(|()| Pass::Found);
    }
    require_programs(a, programs)
        .map(|()| Pass::Found)
        .or_else(|e| via_opaque(a, e))
}

fn spec_matches(c: &Command, spec: &[&str]) -> bool {
    match spec {
        [program, m] if *m == DYN => c.program == *program && c.argv.is_none(),
        [program, m] if *m == ANY => c.program == *program,
        _ => argv_is(c, spec),
    }
}

/// A row of [`SEED_EXPECT`]: each listed command found, nothing else, complete when required.
fn expect_check(a: &Analysis, table: &[Expect], command: &str) -> Check {
    let e = table
        .iter()
        .find(|e| e.command == command)
        .ok_or_else(|| "no SEED_EXPECT entry for this row".to_string())?;
    let mut errors = Vec::new();
    for spec in e.find {
        if !a.commands.iter().any(|c| spec_matches(c, spec)) {
            errors.push(format!("missing command {spec:?}"));
        }
    }
    let allowed: BTreeSet<&str> = e
        .find
        .iter()
        .map(|s| s[0])
        .chain(TOLERATED.iter().copied())
        .collect();
    for c in &a.commands {
        if !allowed.contains(c.program.as_str()) {
            errors.push(format!(
                "data promoted to code: `{}` reported as a command",
                c.program
            ));
        }
    }
    // Running a file (`./safe[`, `bash script`, `/opt/tools/rM`) is reported as
    // `code-from-file` by design: its contents are not visible. That is not data
    // promoted to code, so it does not count against `complete` here.
    let opaque_beyond_files = a
        .opaque
        .iter()
        .any(|o| o.reason != OpaqueReason::CodeFromFile);
    if e.complete && opaque_beyond_files {
        errors.push("expected nothing opaque".into());
    }
    if errors.is_empty() {
        Ok(Pass::Found)
    } else {
        Err(errors.join("; "))
    }
}

/// Every absolute path argument of the (single-quoted) command appears in an effect.
fn absolute_paths_in_effects(a: &Analysis, command: &str) -> Check {
    let effects = serde_json::to_string(&a.effects).expect("effects serialise");
    let missing: Vec<&str> = command
        .split_whitespace()
        .map(|w| w.trim_matches('\''))
        .filter(|w| w.starts_with('/'))
        .filter(|p| !effects.contains(&format!("\"{p}\"")))
        .collect();
    if missing.is_empty() {
        Ok(Pass::Found)
    } else {
        Err(format!("absolute paths not in any effect: {missing:?}"))
    }
}

// ---------------------------------------------------------------------------
// Loading, tallying, reporting
// ---------------------------------------------------------------------------

fn load(file: &str, rows: usize) -> Vec<(usize, Value)> {
    let all = common::read_jsonl_numbered(&common::conformance_dir().join(file));
    assert_eq!(
        all.len(),
        rows,
        "{file}: the README says {rows} rows; a truncated or grown file must not pass silently"
    );
    all
}

fn field<'v>(v: &'v Value, key: &str) -> &'v str {
    v.get(key).and_then(Value::as_str).unwrap_or("")
}

struct Tally {
    file: &'static str,
    counts: BTreeMap<String, usize>,
    failures: Vec<String>,
    via_opaque: Vec<String>,
    differences: usize,
}

impl Tally {
    fn new(file: &'static str) -> Tally {
        Tally {
            file,
            counts: BTreeMap::new(),
            failures: Vec::new(),
            via_opaque: Vec::new(),
            differences: 0,
        }
    }

    fn skip(&mut self, reason: &str) {
        *self.counts.entry(format!("skipped: {reason}")).or_default() += 1;
    }

    fn unclassified(&mut self, line: usize, command: &str, expected: &str) {
        self.failures.push(format!(
            "line {line}: {command:?}\n    expected: a known row shape\n    got: unclassified row (expected {expected:?}); classify it in this test"
        ));
    }

    /// Analyses `text` and runs `check`, unless `key` is a deliberate difference,
    /// in which case the table's behaviour is checked instead.
    fn case(
        &mut self,
        category: &str,
        line: usize,
        key: &str,
        text: &str,
        check: impl FnOnce(&Analysis) -> Check,
    ) {
        let a = analyze(text);
        let shown = if key == text {
            format!("{text:?}")
        } else {
            format!("{key:?} (analysed as {text:?})")
        };
        if let Some(reason) = difference_for(key) {
            self.differences += 1;
            *self
                .counts
                .entry(format!("checked: deliberate difference (was: {category})"))
                .or_default() += 1;
            if let Err(e) = difference_holds(key, &a) {
                self.failures.push(format!(
                    "line {line}: {shown}\n    expected (DELIBERATE_DIFFERENCES): {reason}\n    mismatch: {e}\n    got: {}",
                    describe(&a)
                ));
            }
            return;
        }
        *self
            .counts
            .entry(format!("checked: {category}"))
            .or_default() += 1;
        let result = check(&a).and_then(|pass| {
            if a.commands.is_empty() && a.opaque.is_empty() && has_code(text) && !runs_nothing(text)
            {
                Err("nothing reported (no command, nothing opaque) for a non-empty text".into())
            } else {
                Ok(pass)
            }
        });
        match result {
            Ok(Pass::Found) => {}
            Ok(Pass::Dynamic) => {
                *self
                    .counts
                    .entry("  of which: found with a dynamic argv".into())
                    .or_default() += 1
            }
            Ok(Pass::Opaque) => self
                .via_opaque
                .push(format!("line {line}: {shown} -> {}", describe_opaque(&a))),
            Err(e) => self.failures.push(format!(
                "line {line}: {shown}\n    category: {category}\n    expected: {e}\n    got: {}",
                describe(&a)
            )),
        }
    }

    fn finish(self) {
        println!("== {}: {} failure(s)", self.file, self.failures.len());
        for (k, n) in &self.counts {
            println!("  {n:4}  {k}");
        }
        println!("  {:4}  deliberate differences applied", self.differences);
        if !self.via_opaque.is_empty() {
            println!(
                "  satisfied only through an opaque part ({}):",
                self.via_opaque.len()
            );
            for v in &self.via_opaque {
                println!("    {v}");
            }
        }
        assert!(
            self.failures.is_empty(),
            "{}: {} conformance failure(s):\n\n{}\n",
            self.file,
            self.failures.len(),
            self.failures.join("\n\n")
        );
    }
}

/// A JSON string literal as the files write it: some hold raw newlines, which
/// strict JSON rejects.
fn json_string(s: &str) -> String {
    let escaped = s.replace('\n', "\\n").replace('\t', "\\t");
    serde_json::from_str(&escaped).unwrap_or_else(|e| panic!("not a JSON string: {s:?}: {e}"))
}

/// Rows whose expectation is that nothing runs (`[[ … ]]` alone).
fn runs_nothing(text: &str) -> bool {
    SEED_EXPECT
        .iter()
        .any(|e| e.command == text && e.find.is_empty())
}

/// Whether the text holds anything but blanks and comments.
fn has_code(text: &str) -> bool {
    text.lines().any(|l| {
        let t = l.trim();
        !t.is_empty() && !t.starts_with('#')
    })
}

fn describe(a: &Analysis) -> String {
    let mut out = String::new();
    if a.commands.is_empty() {
        out.push_str("no commands");
    }
    for (i, c) in a.commands.iter().enumerate() {
        if i > 0 {
            out.push_str(" | ");
        }
        let argv = match &c.argv {
            Some(argv) => format!("{argv:?}"),
            None => format!("argv=None words={:?}", c.words),
        };
        out.push_str(&format!(
            "{} {argv} (via {}, depth {})",
            c.program,
            c.via.as_string(),
            c.depth
        ));
    }
    if !a.opaque.is_empty() {
        out.push_str("; opaque: ");
        out.push_str(&describe_opaque(a));
    }
    out
}

fn describe_opaque(a: &Analysis) -> String {
    a.opaque
        .iter()
        .map(|o| format!("{} {:?}", o.reason.as_str(), o.text))
        .collect::<Vec<_>>()
        .join(", ")
}
