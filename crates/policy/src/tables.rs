//! The policy's knowledge, as data: agent tool tables, read-only programs,
//! project task runners; the built-in hazard rules are in [`crate::hazards`].

/// What one of an agent's tools does, and which input fields matter.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ToolKind {
    /// Runs the shell command in `command`.
    Shell {
        command: &'static str,
        /// The field naming the directory the command starts in, if the tool has one.
        dir: Option<&'static str>,
    },
    /// Reads the file in `path`.
    Read { path: &'static str },
    /// Writes or edits the file in `path`.
    Write { path: &'static str },
    /// Searches below `path` (the call's directory when absent).
    Search { path: &'static str },
    /// Fetches the URL in `url`.
    Fetch { url: &'static str },
    /// Searches the web.
    WebSearch,
    /// Applies a patch (Codex's `apply_patch`): the files it names are written.
    Patch { field: &'static str },
    /// Touches nothing outside the agent (todo lists, sub-agent bookkeeping).
    Harmless,
}

/// An agent's tools, by name. No tool name is known anywhere else.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ToolTable {
    pub agent: &'static str,
    pub tools: &'static [(&'static str, ToolKind)],
}

impl ToolTable {
    pub fn kind(&self, name: &str) -> Option<ToolKind> {
        self.tools.iter().find(|(n, _)| *n == name).map(|(_, k)| *k)
    }
}

/// Claude Code's tools (agent-hooks.md §1).
pub fn claude_code_table() -> ToolTable {
    ToolTable {
        agent: "claude-code",
        tools: &[
            (
                "Bash",
                ToolKind::Shell {
                    command: "command",
                    dir: None,
                },
            ),
            ("Read", ToolKind::Read { path: "file_path" }),
            (
                "NotebookRead",
                ToolKind::Read {
                    path: "notebook_path",
                },
            ),
            ("Write", ToolKind::Write { path: "file_path" }),
            ("Edit", ToolKind::Write { path: "file_path" }),
            ("MultiEdit", ToolKind::Write { path: "file_path" }),
            (
                "NotebookEdit",
                ToolKind::Write {
                    path: "notebook_path",
                },
            ),
            ("Glob", ToolKind::Search { path: "path" }),
            ("Grep", ToolKind::Search { path: "path" }),
            ("LS", ToolKind::Search { path: "path" }),
            ("WebFetch", ToolKind::Fetch { url: "url" }),
            ("WebSearch", ToolKind::WebSearch),
            ("TodoWrite", ToolKind::Harmless),
            ("Task", ToolKind::Harmless),
            ("Agent", ToolKind::Harmless),
            ("ExitPlanMode", ToolKind::Harmless),
            ("BashOutput", ToolKind::Harmless),
            ("KillShell", ToolKind::Harmless),
        ],
    }
}

/// Codex CLI's tools (agent-hooks.md §6): `Bash` for every shell-like tool,
/// `apply_patch` for edits; MCP tools arrive under their own names.
pub fn codex_table() -> ToolTable {
    ToolTable {
        agent: "codex",
        tools: &[
            (
                "Bash",
                ToolKind::Shell {
                    command: "command",
                    dir: None,
                },
            ),
            ("apply_patch", ToolKind::Patch { field: "command" }),
        ],
    }
}

/// Gemini CLI's tools (agent-hooks.md §5.3).
pub fn gemini_table() -> ToolTable {
    ToolTable {
        agent: "gemini",
        tools: &[
            (
                "run_shell_command",
                ToolKind::Shell {
                    command: "command",
                    dir: Some("dir_path"),
                },
            ),
            ("read_file", ToolKind::Read { path: "file_path" }),
            ("write_file", ToolKind::Write { path: "file_path" }),
            ("replace", ToolKind::Write { path: "file_path" }),
            ("glob", ToolKind::Search { path: "dir_path" }),
            ("grep_search", ToolKind::Search { path: "dir_path" }),
            ("search_file_content", ToolKind::Search { path: "dir_path" }),
            // Reads what `include` names, below the call's directory.
            ("read_many_files", ToolKind::Search { path: "dir_path" }),
            ("list_directory", ToolKind::Search { path: "dir_path" }),
            ("google_web_search", ToolKind::WebSearch),
            // `web_fetch{prompt}`: the URLs are in the prompt text.
            ("web_fetch", ToolKind::Fetch { url: "prompt" }),
            ("write_todos", ToolKind::Harmless),
            ("ask_user", ToolKind::Harmless),
            ("enter_plan_mode", ToolKind::Harmless),
            ("exit_plan_mode", ToolKind::Harmless),
        ],
    }
}

/// Cursor's gated events, named as tools by the adapter (agent-hooks.md §4).
pub fn cursor_table() -> ToolTable {
    ToolTable {
        agent: "cursor",
        tools: &[
            (
                "Shell",
                ToolKind::Shell {
                    command: "command",
                    dir: None,
                },
            ),
            ("ReadFile", ToolKind::Read { path: "file_path" }),
            ("Write", ToolKind::Write { path: "file_path" }),
            ("Edit", ToolKind::Write { path: "file_path" }),
        ],
    }
}

/// pi's built-in tools (agent-hooks.md §7); paths may be relative.
pub fn pi_table() -> ToolTable {
    ToolTable {
        agent: "pi",
        tools: &[
            (
                "bash",
                ToolKind::Shell {
                    command: "command",
                    dir: None,
                },
            ),
            ("read", ToolKind::Read { path: "path" }),
            ("write", ToolKind::Write { path: "path" }),
            ("edit", ToolKind::Write { path: "path" }),
            ("grep", ToolKind::Search { path: "path" }),
            ("find", ToolKind::Search { path: "path" }),
            ("ls", ToolKind::Search { path: "path" }),
        ],
    }
}

/// The tool table of the agent named `agent` (`claude-code`, `codex`,
/// `cursor`, `gemini`, `pi`: a table's own [`ToolTable::agent`], as a
/// stored request names it).
pub fn by_agent(agent: &str) -> Option<ToolTable> {
    [
        claude_code_table(),
        codex_table(),
        gemini_table(),
        cursor_table(),
        pi_table(),
    ]
    .into_iter()
    .find(|t| t.agent == agent)
}

/// The portable rule name for a kind of tool (`Bash(…)` rules apply to every
/// shell tool, `Read(…)` to every reading tool …).
pub fn rule_name(kind: ToolKind) -> &'static str {
    match kind {
        ToolKind::Shell { .. } => "Bash",
        ToolKind::Read { .. } | ToolKind::Search { .. } => "Read",
        ToolKind::Write { .. } | ToolKind::Patch { .. } => "Edit",
        ToolKind::Fetch { .. } => "WebFetch",
        ToolKind::WebSearch => "WebSearch",
        ToolKind::Harmless => "",
    }
}

/// Input fields of zero-trust tools that are analysed as shell commands.
pub const SHELL_FIELDS: &[&str] = &["command", "cmd", "script", "shell", "code", "sql"];

/// The programs of [`READ_ONLY_PROGRAMS`] that only run another command
/// (shells are `portcullis_shell::knowledge::is_shell`): what they run is
/// judged as commands of its own.
pub const TRANSPARENT_RUNNERS: &[&str] = &[
    "eval", "source", ".", "builtin", "exec", "trap", "timeout", "nice", "nohup", "stdbuf", "time",
    "env", "xargs",
];

/// Programs with no side effects beyond those the analysis reports as effects
/// (reads, writes, nested commands): allowed without a rule, their effects
/// judged one by one. Shells and transparent wrappers are here too: what they
/// run is a command of its own.
pub const READ_ONLY_PROGRAMS: &[&str] = &[
    "cat",
    "tac",
    "head",
    "tail",
    "less",
    "more",
    "wc",
    "grep",
    "egrep",
    "fgrep",
    "zgrep",
    "rg",
    "ag",
    "ack",
    "ls",
    "dir",
    "tree",
    "stat",
    "file",
    "du",
    "df",
    "diff",
    "cmp",
    "comm",
    "sdiff",
    "sort",
    "uniq",
    "cut",
    "tr",
    "nl",
    "od",
    "hexdump",
    "xxd",
    "strings",
    "md5sum",
    "sha1sum",
    "sha256sum",
    "sha512sum",
    "b2sum",
    "cksum",
    "base64",
    "base32",
    "basename",
    "dirname",
    "realpath",
    "readlink",
    "pwd",
    "cd",
    "pushd",
    "popd",
    "echo",
    "printf",
    "true",
    "false",
    "test",
    "[",
    "which",
    "type",
    "command",
    "uname",
    "hostname",
    "date",
    "cal",
    "seq",
    "sleep",
    "printenv",
    "jq",
    "yq",
    "column",
    "fold",
    "fmt",
    "expand",
    "unexpand",
    "rev",
    "paste",
    "join",
    "look",
    "zcat",
    "find",
    "ps",
    "pgrep",
    "free",
    "uptime",
    "nproc",
    "groups",
    "tty",
    "locale",
    "getconf",
    "arch",
    "sed",
    "awk",
    "gawk",
    "mawk",
    "nawk",
    ":",
    "set",
    "shopt",
    "export",
    "local",
    "declare",
    "typeset",
    "readonly",
    "unset",
    "read",
    "wait",
    "exit",
    "return",
    "shift",
    "break",
    "continue",
    "let",
    "mapfile",
    "readarray",
    "hash",
    "alias",
    "getopts",
    "times",
    "trap",
    "eval",
    "source",
    ".",
    "builtin",
    "timeout",
    "nice",
    "nohup",
    "stdbuf",
    "time",
    "env",
    "xargs",
    "exec",
    "sh",
    "bash",
    "dash",
    "zsh",
    "ksh",
    "tee",
    "mkdir",
    "touch",
    "cp",
    "mv",
    "ln",
    "rm",
    "rmdir",
    "sha224sum",
    "sha384sum",
    "split",
    "csplit",
    // Plain text utilities: no files, no programs, only their output.
    "numfmt",
    "factor",
    "expr",
    "yes",
];

/// Programs for which a file name that reads as an option (`-n`) can do no
/// harm: an unquoted leading glob (`cat *`) is fine for them.
pub const GLOB_SAFE_PROGRAMS: &[&str] = &[
    "cat",
    "ls",
    "wc",
    "head",
    "tail",
    "stat",
    "file",
    "du",
    "md5sum",
    "sha1sum",
    "sha256sum",
    "sha512sum",
    "echo",
    "printf",
    "grep",
    "egrep",
    "fgrep",
    "nl",
    "od",
    "cksum",
    "b2sum",
    "basename",
    "dirname",
    "realpath",
    "diff",
    "cmp",
    "less",
    "more",
    "tree",
];

/// The files a build tool or task runner loads from its directory and runs
/// as code, by program (lookup key). A call that writes one of them and runs
/// that program runs code it just wrote: never "the project's own task".
/// `*` globs within the file name; a name with `/` matches the path's end.
#[rustfmt::skip]
pub const BUILD_FILES: &[(&[&str], &[&str])] = &[
    (&["make", "gmake"], &["Makefile", "makefile", "GNUmakefile", "*.mk"]),
    (&["npm", "npx", "yarn", "pnpm", "bun", "node"], &["package.json", ".npmrc", ".yarnrc", ".yarnrc.yml", ".pnpmfile.cjs", "bunfig.toml"]),
    (&["cargo"], &["Cargo.toml", "build.rs", ".cargo/config.toml", ".cargo/config", "rust-toolchain", "rust-toolchain.toml"]),
    (&["python", "python3", "pytest", "tox", "pip", "pip3", "uv", "poetry", "nox"], &["conftest.py", "pytest.ini", "setup.py", "setup.cfg", "pyproject.toml", "tox.ini", "noxfile.py", "sitecustomize.py", "usercustomize.py"]),
    (&["go"], &["go.mod", "go.work"]),
    (&["mvn"], &["pom.xml", "maven.config", "jvm.config"]),
    (&["gradle", "gradlew"], &["build.gradle", "build.gradle.kts", "settings.gradle", "settings.gradle.kts", "gradlew", "gradle.properties"]),
    (&["rake", "bundle", "ruby"], &["Rakefile", "Gemfile"]),
    (&["composer"], &["composer.json"]),
    (&["just"], &["justfile", "Justfile", ".justfile"]),
    (&["task"], &["Taskfile.yml", "Taskfile.yaml"]),
    (&["cmake"], &["CMakeLists.txt", "*.cmake"]),
    (&["ninja"], &["build.ninja"]),
    (&["deno"], &["deno.json", "deno.jsonc"]),
    (&["mix"], &["mix.exs"]),
    (&["sbt"], &["build.sbt"]),
    (&["swift"], &["Package.swift"]),
    (&["zig"], &["build.zig"]),
    (&["direnv"], &[".envrc"]),
    (&["pre-commit"], &[".pre-commit-config.yaml"]),
    (&["docker", "docker-compose", "podman"], &["Dockerfile", "Containerfile", "docker-compose.yml", "docker-compose.yaml", "compose.yml", "compose.yaml"]),
    (&["terraform", "tofu"], &["*.tf"]),
    // A bare repository's files: the next `git` there loads its configuration.
    (&["git"], &["HEAD", "packed-refs"]),
];

/// `git` subcommands that only read.
pub const READ_ONLY_GIT: &[&str] = &[
    "status",
    "diff",
    "log",
    "show",
    "rev-parse",
    "rev-list",
    "ls-files",
    "ls-tree",
    "cat-file",
    "blame",
    "grep",
    "describe",
    "shortlog",
    "show-ref",
    "merge-base",
    "name-rev",
    "whatchanged",
    "count-objects",
    "version",
    "help",
    "for-each-ref",
    "reflog",
    "check-ignore",
    "var",
    "diff-tree",
    "diff-files",
    "diff-index",
    "annotate",
    "cherry",
    "range-diff",
];

/// Programs (and subcommands, `*` for all) whose code effects are the
/// project's own tasks: an allow rule for the command covers them. Anything
/// else that runs code (`npx pkg`, `pip install`, `git -c core.pager=…`) is
/// covered only by a rule that names the code-running word literally.
/// Network clients that take the port as an argument of its own (`nc host
/// PORT`): naming the approval server's port to them reaches it.
pub const PORT_ARGUMENT_CLIENTS: &[&str] = &["nc", "ncat", "netcat", "telnet", "openssl"];

/// The `portcullis` subcommands an agent may run: they judge or analyse and
/// change nothing a person decides. Every other one (`requests`, `grants`,
/// `sessions`, `serve`, `install` …) reaches portcullis' own state.
pub const PORTCULLIS_AGENT_SUBCOMMANDS: &[&str] = &[
    "analyze",
    "check",
    "explain",
    "help",
    "--help",
    "-h",
    "--version",
    "-V",
];

/// Test and lint runners run as modules of the project's python (`python3 -m pytest`).
const PYTHON_TASKS: &[&str] = &[
    "-m pytest",
    "-m unittest",
    "-m mypy",
    "-m ruff",
    "-m black",
    "-m flake8",
    "-m pylint",
    "-m tox",
    "-m nox",
];

/// The project's own tasks, by program and subcommand (or code source): they run
/// code the project defines, which approve-for-me allows and a rule for the
/// program covers.
pub const PROJECT_TASKS: &[(&str, &[&str])] = &[
    ("make", &["*"]),
    ("gmake", &["*"]),
    ("ninja", &["*"]),
    ("just", &["*"]),
    (
        "cargo",
        &[
            "build", "b", "test", "t", "check", "c", "clippy", "run", "r", "bench", "doc", "fmt",
            "nextest", "tree", "metadata",
        ],
    ),
    ("npm", &["test", "t", "run", "run-script", "start", "build"]),
    ("pnpm", &["test", "run", "start", "build", "lint"]),
    ("yarn", &["test", "run", "start", "build", "lint"]),
    ("go", &["test", "build", "run", "vet"]),
    ("pytest", &["*"]),
    // The test and lint runners, run as modules of the project's python.
    ("python", PYTHON_TASKS),
    ("python3", PYTHON_TASKS),
    ("tox", &["*"]),
    ("tsc", &["*"]),
    ("eslint", &["*"]),
    ("prettier", &["*"]),
    ("jest", &["*"]),
    ("vitest", &["*"]),
    ("mvn", &["*"]),
    ("gradle", &["*"]),
    ("dotnet", &["build", "test", "run"]),
    ("gcc", &["*"]),
    ("cc", &["*"]),
    ("clang", &["*"]),
    ("rustc", &["*"]),
];

/// The built-in hazard rules live in [`crate::hazards`], one pack a file.
pub use crate::hazards::{HazardHit, hazard};
