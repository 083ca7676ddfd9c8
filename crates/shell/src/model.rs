//! The analysis result: commands, effects and opaque parts.
//!
//! These types are a contract: `portcullis analyze --json` prints them as they
//! serialise here, and the policy crate reads them. Change field names only on
//! purpose.

use serde::Serialize;

/// Everything the analyser found in one piece of shell text.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Analysis {
    /// Every simple command bash could execute, wrappers included, roughly in the
    /// order bash starts them: a substitution before the command it feeds, a
    /// wrapped or nested script after the command that runs it.
    pub commands: Vec<Command>,
    /// What the commands would do beyond running: paths read, written, deleted or
    /// moved, network access, code loaded or executed through options.
    pub effects: Vec<Effect>,
    /// Parts the analyser could not see through. Any entry here means the command
    /// list may be incomplete: a caller must not allow on the strength of it.
    pub opaque: Vec<Opaque>,
    /// Shell and environment variables whose values the text reads: expanded
    /// (`$NAME`, `"${NAME:-x}"`), printed by name (`printenv NAME`, `declare -p
    /// NAME`), or all at once (`env`, `printenv`, `set`, `export -p`). Which
    /// names are secrets is the policy's business. Absent from JSON when empty.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub env_reads: Vec<EnvRead>,
}

/// A read of variables' values.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct EnvRead {
    /// The variable's name, or a pattern for several: `AWS*` for every name
    /// with that prefix (`${!AWS*}`), `*` for all of them. Names never hold `*`.
    pub name: String,
    /// How: `expansion`, or the program that prints it (`printenv`, `env`,
    /// `set`, `declare` …).
    pub by: String,
}

impl EnvRead {
    /// Reads every variable at once.
    pub fn is_all(&self) -> bool {
        self.name == "*"
    }
}

impl Analysis {
    /// True when nothing was left opaque.
    pub fn is_complete(&self) -> bool {
        self.opaque.is_empty()
    }

    /// The program names found, in order (duplicates kept).
    pub fn programs(&self) -> impl Iterator<Item = &str> {
        self.commands.iter().map(|c| c.program.as_str())
    }
}

/// One simple command.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Command {
    /// The command word as bash sees it after quote removal (`rm` for `r""m`).
    /// A path stays a path (`/bin/rm`); see [`Command::basename`].
    pub program: String,
    /// The full argument vector, `argv[0]` included, when every word is static;
    /// `None` when any argument is only known at run time.
    pub argv: Option<Vec<String>>,
    /// The words as written: static words normalised, dynamic words as source text.
    /// Always present, so a caller can still see the shape when `argv` is `None`.
    pub words: Vec<String>,
    /// Indexes into `words` of the words that are dynamic.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub dynamic_words: Vec<usize>,
    /// How the command was reached.
    pub via: Via,
    /// Nesting depth: 0 for a command at the top of the text, +1 for each
    /// enclosing construct (substitution, wrapper, `sh -c`, compound command …).
    pub depth: u32,
    /// Assignments that prefix the command (`FOO=1 cmd`) or that a wrapper sets (`env FOO=1 cmd`).
    pub env: Vec<EnvAssignment>,
    /// Redirections attached to this command.
    pub redirects: Vec<Redirect>,
    /// Where it runs, when an earlier `cd` in the text moved away from the
    /// caller's directory (absent when it did not).
    #[serde(skip_serializing_if = "RunsIn::is_caller")]
    pub runs_in: RunsIn,
}

/// The directory a command runs in, as far as the text tells.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case", tag = "kind", content = "dir")]
pub enum RunsIn {
    /// The caller's working directory.
    #[default]
    Caller,
    /// A directory named by a `cd`: absolute, `~/…`, or relative to the caller's.
    Dir(String),
    /// A directory only known at run time (`cd "$x"`, `cd -`, `popd`).
    Unknown,
}

impl RunsIn {
    pub fn is_caller(&self) -> bool {
        *self == RunsIn::Caller
    }

    /// `path` as seen from the caller's directory: joined onto the directory
    /// a `cd` named; `None` when that directory is only known at run time.
    pub fn place(&self, path: &str) -> Option<String> {
        if path.starts_with('/') || path.starts_with('~') {
            return Some(path.to_string());
        }
        match self {
            RunsIn::Caller => Some(path.to_string()),
            RunsIn::Dir(dir) => Some(join_path(dir, path)),
            RunsIn::Unknown => None,
        }
    }
}

impl Command {
    /// The last path component of the program (`rm` for `/bin/rm`).
    pub fn basename(&self) -> &str {
        basename(&self.program)
    }
}

/// The last `/`-separated component of a program word.
pub fn basename(program: &str) -> &str {
    program.rsplit('/').next().unwrap_or(program)
}

/// How a command was reached. Serialised as a short string (`"top"`, `"$()"`, `"timeout"` …).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Via {
    /// A command of the text itself, first in its list.
    Top,
    /// A later stage of a pipeline.
    Pipeline,
    /// After `&&`.
    And,
    /// After `||`.
    Or,
    /// After `;` or a newline.
    Sequence,
    /// After `&` (the previous command runs in the background).
    Background,
    /// Inside `( … )`.
    Subshell,
    /// Inside `{ …; }`.
    Group,
    /// Inside a function body.
    Function,
    /// Inside `if`, `while`, `until`, `for`, `case`, `select` or `coproc`.
    Compound,
    /// Inside `$( … )`.
    CommandSubstitution,
    /// Inside `` ` … ` ``.
    Backticks,
    /// Inside `<( … )`.
    ProcessSubstitutionIn,
    /// Inside `>( … )`.
    ProcessSubstitutionOut,
    /// A heredoc or here-string fed to a shell.
    Heredoc,
    /// The script of `bash -c`, `sh -c` … (the shell's name is kept).
    ShellScript(String),
    /// A literal `eval` argument.
    Eval,
    /// Run by a wrapper program (`timeout`, `sudo`, `env`, `xargs`, `find -exec` …).
    Wrapper(String),
    /// Shell text carried in a program's option (`git -c core.pager=…`, `ssh -o ProxyCommand=…`).
    Option(String),
}

impl Via {
    /// The short string form used in JSON and in the readable tree.
    pub fn as_string(&self) -> String {
        match self {
            Via::Top => "top".into(),
            Via::Pipeline => "pipeline".into(),
            Via::And => "&&".into(),
            Via::Or => "||".into(),
            Via::Sequence => ";".into(),
            Via::Background => "&".into(),
            Via::Subshell => "( )".into(),
            Via::Group => "{ }".into(),
            Via::Function => "function".into(),
            Via::Compound => "compound".into(),
            Via::CommandSubstitution => "$()".into(),
            Via::Backticks => "``".into(),
            Via::ProcessSubstitutionIn => "<()".into(),
            Via::ProcessSubstitutionOut => ">()".into(),
            Via::Heredoc => "heredoc".into(),
            Via::ShellScript(shell) => format!("{shell} -c"),
            Via::Eval => "eval".into(),
            Via::Wrapper(name) => name.clone(),
            Via::Option(name) => name.clone(),
        }
    }
}

impl Serialize for Via {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.as_string())
    }
}

/// `NAME=value` before a command or given to `env`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct EnvAssignment {
    pub name: String,
    /// The value after quote removal, or its source text when dynamic.
    pub value: String,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub dynamic: bool,
}

/// A redirection (`>`, `>>`, `<`, `2>&1`, `<<<` …).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Redirect {
    /// The operator as written in bash (`>`, `>>`, `<`, `<>`, `>|`, `>&`, `<&`, `&>`, `&>>`, `<<`, `<<-`, `<<<`).
    pub op: String,
    /// The file descriptor redirected (`1` for `>`, `0` for `<`), or `null` for `&>`.
    pub fd: Option<i32>,
    /// The target: a file name (normalised when static), a descriptor number for
    /// `>&2`, or the source text of a dynamic target. Heredocs give their body.
    pub target: String,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub dynamic: bool,
}

/// What a command would do, beyond being run.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Effect {
    /// A path is read.
    Read {
        path: String,
        #[serde(skip_serializing_if = "std::ops::Not::not")]
        dynamic: bool,
    },
    /// A path is created, written or appended to (its metadata changed counts too).
    Write {
        path: String,
        #[serde(skip_serializing_if = "std::ops::Not::not")]
        dynamic: bool,
    },
    /// A path is removed.
    Delete {
        path: String,
        #[serde(skip_serializing_if = "std::ops::Not::not")]
        dynamic: bool,
    },
    /// A path is moved or renamed.
    Move {
        from: String,
        to: String,
        #[serde(skip_serializing_if = "std::ops::Not::not")]
        dynamic: bool,
    },
    /// The network is used; `host` when it can be read off the command.
    Network {
        program: String,
        #[serde(skip_serializing_if = "Option::is_none")]
        host: Option<String>,
    },
    /// Code runs or is loaded that is not itself a command in this analysis: a
    /// code-executing option (`git -c core.pager=…`, `rg --pre`), an environment
    /// variable that loads code (`LD_PRELOAD`), a script file (`bash x.sh`,
    /// `source x`), or project-defined code (`make`, `npm run`).
    Code {
        program: String,
        /// The option, variable or argument responsible (`-c core.pager`, `LD_PRELOAD`, `--pre`).
        source: String,
        /// Why this runs code, in words.
        reason: String,
    },
}

impl Effect {
    pub fn kind(&self) -> &'static str {
        match self {
            Effect::Read { .. } => "read",
            Effect::Write { .. } => "write",
            Effect::Delete { .. } => "delete",
            Effect::Move { .. } => "move",
            Effect::Network { .. } => "network",
            Effect::Code { .. } => "code",
        }
    }
}

/// A part of the text the analyser cannot see through.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Opaque {
    pub reason: OpaqueReason,
    /// The source text concerned (shortened when long).
    pub text: String,
}

/// Why a part is opaque. Serialised in kebab-case (`dynamic-command-name`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum OpaqueReason {
    /// The text is not valid bash, or the parser gave up.
    ParseError,
    /// The command name is only known at run time (`$cmd`, `$(…) args`, a glob).
    DynamicCommandName,
    /// Code that is only known at run time reaches a shell (`eval "$x"`, `sh -c "$x"`, `xargs sh -c`).
    DynamicCode,
    /// A wrapper got an option its table does not know, or lacks its command.
    UnknownWrapperOption,
    /// A syntax form the analyser does not model (bash 5.3 `${ cmd; }`, `coproc` names …).
    UnsupportedSyntax,
    /// A shell reads its script from a pipe or a file descriptor the analyser cannot see.
    CodeFromStdin,
    /// Code runs from a file whose contents the analyser cannot see: a script given
    /// to a shell or `source`, a program run by path (`./build.sh`), hooks.
    CodeFromFile,
    /// Code in another language given inline (`python -c`, `node -e`, `perl -e`, `awk` programs with `system`).
    InterpretedCode,
    /// Arithmetic evaluation of values that may hold command substitutions (`$((x))`, `a[$i]`).
    ArithmeticEvaluation,
    /// The text is larger than the size limit.
    SizeLimit,
    /// Nesting (substitutions, `sh -c`, wrappers) goes deeper than the depth limit.
    DepthLimit,
    /// The syntax tree has more nodes than the node limit.
    NodeLimit,
    /// More commands than the command limit.
    CommandLimit,
    /// The analysis ran past its work budget (text re-read through nested
    /// scripts, words, operators) or its stack budget: it stopped there.
    WorkLimit,
}

impl OpaqueReason {
    pub fn as_str(self) -> &'static str {
        match self {
            OpaqueReason::ParseError => "parse-error",
            OpaqueReason::DynamicCommandName => "dynamic-command-name",
            OpaqueReason::DynamicCode => "dynamic-code",
            OpaqueReason::UnknownWrapperOption => "unknown-wrapper-option",
            OpaqueReason::UnsupportedSyntax => "unsupported-syntax",
            OpaqueReason::CodeFromStdin => "code-from-stdin",
            OpaqueReason::CodeFromFile => "code-from-file",
            OpaqueReason::InterpretedCode => "interpreted-code",
            OpaqueReason::ArithmeticEvaluation => "arithmetic-evaluation",
            OpaqueReason::SizeLimit => "size-limit",
            OpaqueReason::DepthLimit => "depth-limit",
            OpaqueReason::NodeLimit => "node-limit",
            OpaqueReason::WorkLimit => "work-limit",
            OpaqueReason::CommandLimit => "command-limit",
        }
    }
}

/// `word` as one bash word: unchanged when it needs no quoting, else single-quoted
/// (bash and the rule pattern parser both read it back as it was).
pub fn quote(word: &str) -> String {
    let plain = !word.is_empty()
        && word
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"@%+=:,./_-".contains(&b));
    if plain {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

/// The bash text that runs exactly this argument vector.
pub fn join<S: AsRef<str>>(words: &[S]) -> String {
    words
        .iter()
        .map(|w| quote(w.as_ref()))
        .collect::<Vec<_>>()
        .join(" ")
}

/// `path` (relative) joined onto `dir` the way `cd dir` then `path` would reach it.
pub(crate) fn join_path(dir: &str, path: &str) -> String {
    let dir = dir.trim_end_matches('/');
    let path = path.strip_prefix("./").unwrap_or(path);
    match path {
        "" | "." => dir.to_string(),
        _ if dir.is_empty() => format!("/{path}"),
        _ => format!("{dir}/{path}"),
    }
}
