//! The program knowledge base: what common programs do with their arguments.
//!
//! One table ([`PROGRAMS`]) says, per program, which options take values, what
//! its operands are (paths read, written, deleted, moved), which options execute
//! or load code, and whether it uses the network. Programs whose argument
//! language is richer than options and operands (`git`, `find`, `sed`, `awk`,
//! `tar`, `curl` …) name a [`Special`] reader; those readers live below the
//! table and are the only program-specific code in the crate. Environment
//! variables that load or run code are in [`ENV_VARS`].
//!
//! When a reader cannot follow an argument it reports an opaque part: a program
//! that can run code it was given must never look harmless by accident.

use std::ops::Range;

use crate::model::{Effect, OpaqueReason};
use crate::word::Word;

mod git_options;
mod options;
mod readers;
mod table;

pub use git_options::{GIT_GLOBAL_OPTIONS, GitGlobal, GitSplit, GitValue, git_split};

pub use table::{
    BUILTINS_THAT_RUN_NOTHING, ENV_VARS, LOADS_FROM_CWD, PROGRAMS, UNMODELLED_RUNNERS,
};

/// What a program's operands (non-option arguments) are.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Operands {
    /// Not paths (`echo`, `kill`, `sleep`).
    None,
    /// Paths read (`cat`, `grep` after its pattern).
    Read,
    /// Paths read, the working directory when none is given (`ls`, `du`, `tree`).
    ReadOrCwd,
    /// Paths written or created (`touch`, `mkdir`, `tee`).
    Write,
    /// Paths removed (`rm`, `rmdir`).
    Delete,
    /// Sources read, the last operand written (`cp`, `install`).
    CopyToLast,
    /// Sources moved to the last operand (`mv`).
    MoveToLast,
    /// The first operand is not a path (a pattern, a mode, an owner), the rest are read.
    SkipFirstRead,
    /// The first operand is not a path, the rest are written (`chmod MODE FILE…`).
    SkipFirstWrite,
    /// The first operand is read, an optional second is written (`uniq IN OUT`).
    ReadThenWrite,
}

/// What an option means.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// Its value is a path read.
    ReadsValue,
    /// Its value is a path written.
    WritesValue,
    /// Its value is shell text that will run.
    ShellValue,
    /// Its value names a program or code that will run (not shell text).
    ExecValue,
    /// The option makes the program run or load code not visible here.
    Code,
    /// The operands are edited in place (`sed -i`).
    InPlace,
    /// The first operand is not a pattern after all (`grep -e PAT`, `awk -f FILE`).
    NoPatternOperand,
    /// Its value is a host (`host:port`) the program connects to (`openssl -connect`).
    ConnectsTo,
}

/// Program-specific readers for richer argument languages.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Special {
    None,
    Git,
    Find,
    Sed,
    Awk,
    Tar,
    Curl,
    Wget,
    Dd,
    Ssh,
    Scp,
    Rsync,
    Ln,
    Ed,
    Gdb,
    Sqlite,
    Sql,
    Interpreter,
    Make,
    PackageScripts,
    Container,
    Apt,
    Zip,
    Netcat,
    Socat,
    Editor,
    Pager,
    Man,
    Gh,
    Patch,
    Unzip,
    Archiver,
}

/// Knowledge about one program.
pub struct ProgramSpec {
    pub names: &'static [&'static str],
    /// Options that take a value (`-n`, `--lines`); `--opt=value` is understood too.
    pub valued: &'static [&'static str],
    pub operands: Operands,
    /// Options with a meaning beyond taking a value.
    pub options: &'static [(&'static str, Role)],
    /// Whether running the program uses the network.
    pub network: bool,
    pub special: Special,
}

const P: ProgramSpec = ProgramSpec {
    names: &[],
    valued: &[],
    operands: Operands::None,
    options: &[],
    network: false,
    special: Special::None,
};

use Operands as O;
use Role as R;

/// Looks a program up by the name used for knowledge: the name itself when it
/// has no slash, or its basename when it lives in a standard system directory.
/// A program elsewhere (`./cat`, `/tmp/rm`) is unknown: its name says nothing
/// about what it does.
pub fn lookup_key(program: &str) -> Option<&str> {
    const SYSTEM_DIRS: &[&str] = &[
        "/bin/",
        "/usr/bin/",
        "/usr/local/bin/",
        "/sbin/",
        "/usr/sbin/",
        "/usr/local/sbin/",
    ];
    if !program.contains('/') {
        return Some(program);
    }
    let dir_end = program.rfind('/').map(|i| i + 1).unwrap_or(0);
    let (dir, base) = program.split_at(dir_end);
    SYSTEM_DIRS.contains(&dir).then_some(base)
}

/// The spec for a program name, if the table has one.
pub fn spec(name: &str) -> Option<&'static ProgramSpec> {
    PROGRAMS.iter().find(|p| p.names.contains(&name))
}

/// Shells: their `-c` text, script operand or stdin is code.
pub fn is_shell(name: &str) -> bool {
    matches!(
        name,
        "sh" | "bash"
            | "dash"
            | "zsh"
            | "ksh"
            | "mksh"
            | "ash"
            | "yash"
            | "posh"
            | "fish"
            | "rbash"
            | "tcsh"
            | "csh"
    )
}

/// An environment variable that loads or runs code.
pub struct EnvVarRisk {
    pub reason: &'static str,
    /// The value is shell text (`PAGER`, `GIT_SSH_COMMAND`).
    pub shell_text: bool,
    /// Set when the assignment makes the analysis incomplete, with the reason:
    /// code from a file it cannot see (`BASH_ENV`, `LD_PRELOAD`, `GIT_DIR`) or
    /// configuration that can name programs (`GIT_CONFIG_*`).
    pub opaque: Option<OpaqueReason>,
}

impl EnvVarRisk {
    /// The shell text inside a value (`LESSOPEN='|cmd %s'` → `cmd %s`).
    pub fn text_of<'a>(&self, value: &'a str) -> &'a str {
        value.trim_start_matches('|').trim_start_matches('|')
    }
}

/// The risk of an environment assignment, if any.
pub fn env_var(name: &str) -> Option<&'static EnvVarRisk> {
    ENV_VARS.iter().find_map(|(pattern, risk)| {
        let hit = match pattern.strip_suffix('*') {
            Some(prefix) => name.starts_with(prefix),
            None => name == *pattern,
        };
        hit.then_some(risk)
    })
}

/// What the knowledge base found in one call.
#[derive(Debug, Default)]
pub(crate) struct Findings {
    pub effects: Vec<Effect>,
    pub opaque: Vec<(OpaqueReason, String)>,
    /// Shell text to analyse: (label for `via`, text, dynamic).
    /// The last flag is true when the program runs the text through `sh -c`
    /// (false for a program path run directly, like `rg --pre`).
    pub shell_texts: Vec<(String, String, bool, bool)>,
    /// Commands the program runs, as word ranges: (label, range, replaced string).
    pub commands: Vec<(String, Range<usize>, Option<String>)>,
}

impl Findings {
    pub(super) fn read(&mut self, w: &Word) {
        self.effects.push(Effect::Read {
            path: w.value.clone(),
            dynamic: w.dynamic,
        });
    }
    pub(super) fn write(&mut self, w: &Word) {
        self.effects.push(Effect::Write {
            path: w.value.clone(),
            dynamic: w.dynamic,
        });
    }
    pub(super) fn write_path(&mut self, path: &str, dynamic: bool) {
        self.effects.push(Effect::Write {
            path: path.to_string(),
            dynamic,
        });
    }
    pub(super) fn read_path(&mut self, path: &str, dynamic: bool) {
        self.effects.push(Effect::Read {
            path: path.to_string(),
            dynamic,
        });
    }
    pub(super) fn delete(&mut self, w: &Word) {
        self.effects.push(Effect::Delete {
            path: w.value.clone(),
            dynamic: w.dynamic,
        });
    }
    pub(super) fn code(
        &mut self,
        program: &str,
        source: impl Into<String>,
        reason: impl Into<String>,
    ) {
        self.effects.push(Effect::Code {
            program: program.to_string(),
            source: source.into(),
            reason: reason.into(),
        });
    }
    pub(super) fn network(&mut self, program: &str, host: Option<String>) {
        self.effects.push(Effect::Network {
            program: program.to_string(),
            host,
        });
    }
    pub(super) fn shell(&mut self, label: impl Into<String>, text: &str, dynamic: bool) {
        self.shell_texts
            .push((label.into(), text.to_string(), dynamic, true));
    }
    /// A program (path and arguments) the program runs directly, not through a shell.
    pub(super) fn exec_text(&mut self, label: impl Into<String>, text: &str, dynamic: bool) {
        self.shell_texts
            .push((label.into(), text.to_string(), dynamic, false));
    }
    pub(super) fn opaque(&mut self, reason: OpaqueReason, text: impl Into<String>) {
        self.opaque.push((reason, text.into()));
    }
}

/// An argument list split into options (with values) and operands.
pub(super) struct Split<'w> {
    /// (option name as written, e.g. `-o` or `--output`, value if any, index of the option word)
    options: Vec<(String, Option<&'w Word>, Option<String>)>,
    operands: Vec<&'w Word>,
}

/// Splits arguments with a program's table. Unknown options are taken as flags.
pub(super) fn split<'w>(spec: &ProgramSpec, args: &'w [Word]) -> Split<'w> {
    let takes_value = |o: &str| {
        spec.valued.contains(&o)
            || spec.options.iter().any(|(name, role)| {
                *name == o
                    && matches!(
                        role,
                        R::ReadsValue
                            | R::WritesValue
                            | R::ShellValue
                            | R::ExecValue
                            | R::NoPatternOperand
                            | R::ConnectsTo
                    )
                    && !matches!(o, "--files" | "--type-list")
            })
    };
    let mut out = Split {
        options: Vec::new(),
        operands: Vec::new(),
    };
    let mut i = 0;
    let mut only_operands = false;
    while let Some(w) = args.get(i) {
        let v = w.value.as_str();
        if only_operands || w.dynamic || !v.starts_with('-') || v == "-" {
            out.operands.push(w);
            i += 1;
            continue;
        }
        if v == "--" {
            only_operands = true;
            i += 1;
            continue;
        }
        if v.starts_with("--")
            && let Some((name, value)) = v.split_once('=')
        {
            out.options
                .push((name.to_string(), None, Some(value.to_string())));
            i += 1;
            continue;
        }
        // A long option, or a multi-letter one with a single dash that the
        // table lists (`zip -TT CMD`, `openssl -engine E`).
        if v.starts_with("--")
            || spec.valued.contains(&v)
            || (v.len() > 2 && spec.options.iter().any(|(name, _)| *name == v))
        {
            if takes_value(v) {
                out.options.push((
                    v.to_string(),
                    args.get(i + 1),
                    args.get(i + 1).map(|n| n.value.clone()),
                ));
                i += 1;
            } else {
                out.options.push((v.to_string(), None, None));
            }
            i += 1;
            continue;
        }
        // Short options, possibly bundled (`-rf`) or with an attached value (`-n5`).
        // `v` starts with `-` (one byte): the letters are the chars after it.
        let letters: Vec<char> = v.chars().skip(1).collect();
        let mut k = 0;
        while let Some(&letter) = letters.get(k) {
            let opt = format!("-{letter}");
            if takes_value(&opt) {
                let rest: String = letters.iter().skip(k + 1).collect();
                if rest.is_empty() {
                    out.options.push((
                        opt,
                        args.get(i + 1),
                        args.get(i + 1).map(|n| n.value.clone()),
                    ));
                    i += 1;
                } else {
                    out.options.push((opt, None, Some(rest)));
                }
                break;
            }
            out.options.push((opt, None, None));
            k += 1;
        }
        i += 1;
    }
    out
}

/// Analyses one call of a known program. `words[0]` is the program; `stdin`
/// is the known text on its standard input (empty when not known).
pub(crate) fn analyze_program(name: &str, words: &[Word], stdin: &str) -> Findings {
    let mut f = Findings::default();
    if UNMODELLED_RUNNERS.contains(&name) {
        f.opaque(
            OpaqueReason::UnknownWrapperOption,
            format!(
                "{name} runs a command its options do not show here: {}",
                join(words)
            ),
        );
        return f;
    }
    if let Some(runner) = SUBCOMMAND_RUNNERS.iter().find(|(p, _, _)| *p == name) {
        run_subcommand(runner, words, &mut f);
    }
    let Some(spec) = spec(name) else {
        return f;
    };
    let Some(args) = words.get(1..) else {
        // No program word: nothing to read the call by (fail closed).
        f.opaque(
            OpaqueReason::ParseError,
            format!("{name} without its words"),
        );
        return f;
    };
    if is_version_query(args) {
        // `cargo --version`, `node -v`: prints and exits.
        return f;
    }
    let table_network = spec.network.then(|| {
        f.network(name, None);
        f.effects.len() - 1
    });
    match spec.special {
        Special::None | Special::Ln | Special::Pager => generic(name, spec, args, &mut f),
        Special::Git => readers::git(args, &mut f),
        Special::Find => readers::find(args, &mut f),
        Special::Sed => readers::sed(args, &mut f),
        Special::Awk => readers::awk(name, args, &mut f),
        Special::Tar => readers::tar(name, args, &mut f),
        Special::Curl => readers::curl(args, &mut f),
        Special::Wget => readers::wget(args, &mut f),
        Special::Dd => readers::dd(args, &mut f),
        Special::Ssh => readers::ssh(args, &mut f),
        Special::Scp => readers::scp(name, args, &mut f),
        Special::Rsync => readers::rsync(args, &mut f),
        Special::Ed => readers::ed(name, spec, args, stdin, &mut f),
        Special::Gdb => readers::gdb(name, args, &mut f),
        Special::Sqlite => readers::sqlite(name, args, stdin, &mut f),
        Special::Sql => readers::sql_client(name, args, stdin, &mut f),
        Special::Interpreter => readers::interpreter(name, args, stdin, &mut f),
        Special::Make => readers::make(name, args, &mut f),
        Special::PackageScripts => readers::package_scripts(name, args, &mut f),
        Special::Container => readers::container(name, args, &mut f),
        Special::Apt => readers::apt(name, args, &mut f),
        Special::Zip => readers::zip(spec, args, &mut f),
        Special::Netcat => readers::netcat(name, args, &mut f),
        Special::Socat => readers::socat(args, &mut f),
        Special::Editor => readers::editor(name, args, &mut f),
        Special::Man => readers::man(args, &mut f),
        Special::Gh => readers::gh(args, &mut f),
        Special::Patch => {
            generic(name, spec, args, &mut f);
            readers::patch(spec, args, stdin, &mut f);
        }
        Special::Archiver => readers::archiver(name, args, &mut f),
        Special::Unzip => {
            generic(name, spec, args, &mut f);
            readers::unzip(args, &mut f);
        }
    }
    // The table says the program uses the network; a reader that named the
    // host said it better: the table's own host-less effect goes (a reader's
    // host-less one, for a URL known only at run time, stays).
    if let Some(at) = table_network {
        let hosted = f
            .effects
            .iter()
            .any(|e| matches!(e, Effect::Network { program, host: Some(_) } if program == name));
        if hosted && matches!(f.effects.get(at), Some(Effect::Network { host: None, .. })) {
            f.effects.remove(at);
        }
    }
    if spec.special == Special::Ln {
        // Writing through a new link writes its target: treat the target as written too.
        let s = split(spec, args);
        if let Some((_, targets)) = s.operands.split_last() {
            targets.iter().for_each(|t| f.write(t));
        }
    }
    if spec.special == Special::Pager {
        for w in args {
            if w.value.starts_with('+') {
                f.opaque(
                    OpaqueReason::InterpretedCode,
                    format!("{name} runs start-up commands {}", w.value),
                );
            }
        }
    }
    f
}

/// Programs that run a command given after a subcommand: (program,
/// subcommand, operands before the command). Options between the subcommand and
/// the command make the call opaque (they are not modelled).
const SUBCOMMAND_RUNNERS: &[(&str, &str, usize)] = &[
    ("devbox", "run", 0),
    ("direnv", "exec", 1),
    ("mise", "exec", 0),
    ("rtx", "exec", 0),
    ("asdf", "exec", 0),
    ("uv", "run", 0),
    ("poetry", "run", 0),
    ("pipenv", "run", 0),
    ("pdm", "run", 0),
    ("hatch", "run", 0),
    ("bundle", "exec", 0),
    ("pnpm", "exec", 0),
    ("yarn", "exec", 0),
    ("npm", "exec", 0),
    ("conda", "run", 0),
    ("mamba", "run", 0),
    ("pixi", "run", 0),
    ("cargo", "run", usize::MAX),
    ("nix", "develop", usize::MAX),
    ("flatpak", "run", usize::MAX),
];

fn run_subcommand(runner: &(&str, &str, usize), words: &[Word], f: &mut Findings) {
    let (program, sub, skip) = *runner;
    let Some(pos) = words.iter().position(|w| w.value == sub) else {
        return;
    };
    let Some(before) = words.get(1..pos) else {
        // The subcommand is the program word itself: not a shape this reads.
        f.opaque(
            OpaqueReason::UnknownWrapperOption,
            format!("{program} {sub} not understood: {}", join(words)),
        );
        return;
    };
    if before
        .iter()
        .any(|w| !w.value.starts_with('-') || w.dynamic)
    {
        return; // the subcommand word is an argument of something else
    }
    if skip == usize::MAX {
        return; // runs the project's own program: a code effect elsewhere
    }
    let mut i = pos + 1 + skip;
    if words.get(i).is_some_and(|w| w.value == "--") {
        i += 1;
    } else if words
        .get(i)
        .is_some_and(|w| w.value.starts_with('-') || w.dynamic)
    {
        f.opaque(
            OpaqueReason::UnknownWrapperOption,
            format!(
                "{program} {sub} with options not modelled here: {}",
                join(words)
            ),
        );
        return;
    }
    if i < words.len() {
        f.commands
            .push((format!("{program} {sub}"), i..words.len(), None));
    }
}

/// `--version`, `-V`, `--help` alone: the program prints and exits.
fn is_version_query(args: &[Word]) -> bool {
    matches!(args, [w] if !w.dynamic && matches!(w.value.as_str(), "--version" | "-V" | "-v" | "version" | "--help" | "-h" | "help"))
}

pub(super) fn join(words: &[Word]) -> String {
    words
        .iter()
        .map(|w| w.value.as_str())
        .collect::<Vec<_>>()
        .join(" ")
}

/// Options and operands by the table alone.
pub(super) fn generic(name: &str, spec: &ProgramSpec, args: &[Word], f: &mut Findings) {
    let s = split(spec, args);
    let mut pattern_given = false;
    let mut in_place = false;
    for (opt, word, value) in &s.options {
        let role = spec.options.iter().find(|(o, _)| o == opt).map(|(_, r)| *r);
        let dynamic = word.is_some_and(|w| w.dynamic);
        match (role, value) {
            (Some(R::ReadsValue), Some(v)) => f.read_path(v, dynamic),
            (Some(R::WritesValue), Some(v)) => f.write_path(v, dynamic),
            (Some(R::ShellValue), Some(v)) => f.shell(format!("{name} {opt}"), v, dynamic),
            (Some(R::ExecValue), Some(v)) => {
                f.code(name, opt.clone(), format!("runs the program {v}"));
                f.exec_text(format!("{name} {opt}"), v, dynamic);
            }
            (Some(R::Code), _) => {
                f.code(name, opt.clone(), "runs or loads code through this option")
            }
            (Some(R::InPlace), _) => in_place = true,
            (Some(R::NoPatternOperand), Some(v)) => {
                pattern_given = true;
                if matches!(opt.as_str(), "-f" | "--file" | "--from-file") {
                    f.read_path(v, dynamic);
                }
            }
            (Some(R::NoPatternOperand), None) => pattern_given = true,
            (Some(R::ConnectsTo), Some(v)) => {
                let host = v
                    .rsplit_once(':')
                    .map_or(v.as_str(), |(h, _)| h)
                    .trim_start_matches('[')
                    .trim_end_matches(']');
                let host = (!dynamic && !host.is_empty()).then(|| host.to_string());
                f.network(name, host);
            }
            _ => {}
        }
    }
    let ops = &s.operands;
    match spec.operands {
        O::None => {}
        O::Read => ops.iter().for_each(|w| f.read(w)),
        O::ReadOrCwd if ops.is_empty() => f.read_path(".", false),
        O::ReadOrCwd => ops.iter().for_each(|w| f.read(w)),
        O::Write => ops.iter().for_each(|w| f.write(w)),
        O::Delete => ops.iter().for_each(|w| f.delete(w)),
        O::SkipFirstRead => ops
            .iter()
            .skip(usize::from(!pattern_given))
            .for_each(|w| f.read(w)),
        O::SkipFirstWrite => {
            let reference = s.options.iter().any(|(o, _, _)| o == "--reference");
            ops.iter()
                .skip(usize::from(!reference))
                .for_each(|w| f.write(w));
        }
        O::ReadThenWrite => {
            if let Some(first) = ops.first() {
                f.read(first);
            }
            if let Some(second) = ops.get(1) {
                f.write(second);
            }
        }
        O::CopyToLast | O::MoveToLast => {
            let target = s
                .options
                .iter()
                .find(|(o, _, _)| o == "-t" || o == "--target-directory");
            let (sources, dest): (&[&Word], Option<String>) = match target {
                Some((_, _, Some(dir))) => (&ops[..], Some(dir.clone())),
                _ => match ops.split_last() {
                    Some((last, rest)) => (rest, Some(last.value.clone())),
                    None => (&[], None),
                },
            };
            let dest_dynamic = match target {
                Some((_, w, _)) => w.is_some_and(|w| w.dynamic),
                None => ops.last().is_some_and(|w| w.dynamic),
            };
            // A backup of what is overwritten: DEST + SUFFIX (`-b -S SUFFIX`).
            let suffix = s
                .options
                .iter()
                .rev()
                .find(|(o, _, _)| o == "-S" || o == "--suffix")
                .and_then(|(_, _, v)| v.clone());
            for src in sources {
                if spec.operands == O::MoveToLast {
                    f.effects.push(Effect::Move {
                        from: src.value.clone(),
                        to: dest.clone().unwrap_or_default(),
                        dynamic: src.dynamic || dest_dynamic,
                    });
                } else {
                    f.read(src);
                }
                // Into a directory, the file written is DEST/basename(SRC):
                // `cp -r x/.git .` writes `./.git`.
                if let Some(d) = &dest {
                    let inside = join_path(d, basename(&src.value));
                    f.write_path(&inside, dest_dynamic || src.dynamic);
                    if let Some(sfx) = &suffix {
                        f.write_path(&format!("{inside}{sfx}"), dest_dynamic || src.dynamic);
                    }
                }
            }
            if let Some(d) = dest {
                f.write_path(&d, dest_dynamic);
                if let Some(sfx) = &suffix {
                    f.write_path(&format!("{d}{sfx}"), dest_dynamic);
                }
            }
        }
    }
    if in_place {
        ops.iter().for_each(|w| f.write(w));
    }
}

/// The last component of a path as `cp` and `mv` name their copy (`x/` → `x`).
pub(super) fn basename(path: &str) -> &str {
    let trimmed = path.trim_end_matches('/');
    if trimmed.is_empty() {
        return path;
    }
    trimmed.rsplit('/').next().unwrap_or(trimmed)
}

/// `dir/name`, without doubling a `/`.
pub(super) fn join_path(dir: &str, name: &str) -> String {
    if dir.ends_with('/') {
        format!("{dir}{name}")
    } else {
        format!("{dir}/{name}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_network_effect_per_host_and_none_lost_for_a_run_time_url() {
        let net = |text: &str| -> Vec<Option<String>> {
            crate::analyze(text)
                .effects
                .into_iter()
                .filter_map(|e| match e {
                    Effect::Network { host, .. } => Some(host),
                    _ => None,
                })
                .collect()
        };
        assert_eq!(
            net("curl -s https://a.example/x"),
            [Some("a.example".to_string())]
        );
        assert_eq!(
            net("curl https://a.example \"$URL\""),
            [Some("a.example".to_string()), None]
        );
        assert_eq!(net("nc host.example 80"), [None]);
    }

    #[test]
    fn the_table_has_at_least_80_programs_and_no_duplicates() {
        let mut names: Vec<&str> = PROGRAMS
            .iter()
            .flat_map(|p| p.names.iter().copied())
            .collect();
        assert!(names.len() >= 80, "only {} programs", names.len());
        let before = names.len();
        names.sort();
        names.dedup();
        assert_eq!(before, names.len(), "a program is listed twice");
    }

    #[test]
    fn lookup_key_only_trusts_system_dirs() {
        assert_eq!(lookup_key("rm"), Some("rm"));
        assert_eq!(lookup_key("/bin/rm"), Some("rm"));
        assert_eq!(lookup_key("/usr/local/bin/git"), Some("git"));
        assert_eq!(lookup_key("./cat"), None);
        assert_eq!(lookup_key("/tmp/rm"), None);
    }

    #[test]
    fn env_patterns() {
        assert!(env_var("LD_PRELOAD").is_some());
        assert!(env_var("GIT_DIR").is_some());
        assert!(env_var("CARGO_TARGET_DIR").is_some());
        assert!(env_var("MODE").is_none());
        assert!(env_var("PAGER").is_some_and(|r| r.shell_text));
    }
}
