//! The built-in hazard packs, as data: commands that destroy work, data or
//! machines, which ask even under a broad allow rule (`Bash(*)`). Only an
//! allow rule naming the hazardous words literally (`Bash(git reset --hard *)`),
//! or full-access mode, lets them run.
//!
//! A pack is a list of [`Program`]s; a program lists its [`Rule`]s, and one
//! function, [`hazard`], evaluates them all. A rule matches a command when:
//!
//! - the program's name (the basename; for a Windows program, lower-cased
//!   and without its suffix: `Git.exe` is `git`) is one of the program's `names`;
//! - its subcommand words (`sub`) are the first positional words (after the
//!   program's global options, skipping the values of those in `valued`; for
//!   git, after git's own global options), or any run of positional words
//!   when `anywhere` is set. Each word is a list of alternatives (`rm|remove`)
//!   compared without case, where `*` ends or starts a glob (`delete-*`);
//! - every group of `all` has one option present ([`Opt`]: a flag, also inside
//!   a cluster of short flags `-rf`; an exact word; a prefix; an option with
//!   one of given values, in every spelling: `-X DELETE`, `-XDELETE`,
//!   `--request=DELETE`, `-sX DELETE`);
//! - no option of `none` is present (`--dry-run`, `-n` …);
//! - its argument [`Test`] holds (SQL that drops, `of=/dev/sdX` …).
//!
//! The first rule that matches decides: [`Hit::Hazard`] asks, [`Hit::Safe`]
//! ends the search without a hazard (`git restore --staged`, `fdisk -l`).
//! A command asking for help or a version (`--help`, `-help`, `/?`,
//! `--version`) is never a hazard.

mod cloud;
mod containers;
mod core;
mod databases;
mod disk;
mod git;
mod http;
mod iac;
mod kubernetes;
mod services;
mod windows;

use portcullis_shell::Command;

/// A built-in hazard found in a command.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HazardHit {
    pub code: &'static str,
    pub message: String,
    /// The words that made it hazardous: only an allow rule naming every one of
    /// them literally (`Bash(git reset --hard *)`) covers the command.
    pub triggers: Vec<String>,
    /// The pack the rule belongs to (`git`, `containers` …).
    pub pack: &'static str,
}

/// A named list of programs and their rules.
#[derive(Debug)]
pub struct Pack {
    pub name: &'static str,
    pub programs: &'static [Program],
}

/// One program (or a family sharing a command language: `docker`, `podman`, `nerdctl`).
#[derive(Debug)]
pub struct Program {
    /// Names as looked up (see the module documentation); `mkfs.*` is a prefix.
    pub names: &'static [&'static str],
    /// Options that take the next word as their value, wherever they appear.
    pub valued: &'static [&'static str],
    /// How the subcommand is found.
    pub finder: Finder,
    /// The program re-reads its arguments as one command line (`cmd.exe /c
    /// "rd /s /q x"`, `powershell -Command "…"`): words are split at blanks.
    pub split: bool,
    pub rules: &'static [Rule],
}

/// How a program's subcommand words are found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Finder {
    /// The positional words, skipping the values of `valued` options. When an
    /// option the table does not know comes right before the first positional
    /// word, that word may be its value: the rule is tried from the next one too.
    Positional,
    /// git's own global-option splitter (`-C DIR`, `-c k=v`, `--git-dir=…`).
    Git,
}

/// The defaults of a [`Program`] (for `..PROGRAM`).
pub const PROGRAM: Program = Program {
    names: &[],
    valued: &[],
    finder: Finder::Positional,
    split: false,
    rules: &[],
};

/// One rule of a program.
#[derive(Debug)]
pub struct Rule {
    pub sub: &'static [&'static str],
    pub anywhere: bool,
    /// Groups of options: each group needs one present.
    pub all: &'static [&'static [Opt]],
    /// Options that, present, stop this rule (`--dry-run`).
    pub none: &'static [Opt],
    pub test: Test,
    pub hit: Hit,
}

/// The defaults of a [`Rule`] (for `..RULE`): no words, no options, safe.
pub const RULE: Rule = Rule {
    sub: &[],
    anywhere: false,
    all: &[],
    none: &[],
    test: Test::None,
    hit: Hit::Safe,
};

/// An option or word a rule looks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Opt {
    /// `-f` (alone or in a cluster `-rf`) or `--force` (alone or `--force=…`);
    /// a name longer than two characters never matches inside a cluster.
    Flag(&'static str),
    /// An option starting with this text (`--delete` covers `--delete-after`).
    Prefix(&'static str),
    /// Any word equal to this, without case; `*` globs as in `sub`.
    Word(&'static str),
    /// An option with one of these values (without case, `*` globs).
    Val(&'static str, &'static [&'static str]),
}

/// A test of the arguments beyond words and options.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Test {
    None,
    /// An argument holds SQL that drops, truncates, or deletes or updates
    /// without `WHERE`.
    Sql,
    /// An argument holds MongoDB shell code that drops or deletes.
    Mongo,
    /// `of=` names a device other than the harmless ones (`/dev/null` …).
    DdDevice,
}

/// What a matching rule decides.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Hit {
    Hazard {
        code: &'static str,
        message: &'static str,
    },
    /// Not a hazard: stop looking.
    Safe,
}

/// A hazard with its code and message.
pub const fn hz(code: &'static str, message: &'static str) -> Hit {
    Hit::Hazard { code, message }
}

/// Every pack, in the order they are searched.
pub const PACKS: &[Pack] = &[
    core::PACK,
    git::PACK,
    disk::PACK,
    containers::PACK,
    kubernetes::PACK,
    iac::PACK,
    cloud::PACK,
    databases::PACK,
    http::PACK,
    services::PACK,
    windows::PACK,
];

/// Words that make any command print help or its version and exit.
const HELP: &[&str] = &["--help", "-help", "/?", "--version"];

/// Suffixes of Windows programs called from WSL (`git.exe` is `git`).
const WINDOWS_SUFFIXES: &[&str] = &[".exe", ".cmd", ".bat", ".com"];

/// Programs that run the command that follows their own options (`npx cdk
/// destroy`): the hazard is judged on that command. `(program, subcommand
/// or "", options taking a value)`.
const RUNNERS: &[(&str, &str, &[&str])] = &[
    ("npx", "", &["-p", "--package", "-c", "--call"]),
    ("pnpx", "", &["-p", "--package"]),
    ("bunx", "", &["-p", "--package"]),
    ("uvx", "", &["--from", "--with", "-p", "--python"]),
    ("pnpm", "exec", &[]),
    ("pnpm", "dlx", &[]),
    ("yarn", "dlx", &[]),
    ("yarn", "exec", &[]),
    ("bundle", "exec", &[]),
    ("poetry", "run", &[]),
    ("uv", "run", &["--with", "-p", "--python", "--from"]),
    ("pipenv", "run", &[]),
];

/// The name hazards know a program by: its basename (wherever it lives: a
/// copy of `rm` elsewhere still deletes), and for a Windows program (`.exe`,
/// `.cmd` …, found without regard to case) the lower-case name without the
/// suffix. Linux names keep their case: `RM` is not `rm`.
pub fn program_name(program: &str) -> String {
    let base = program.rsplit(['/', '\\']).next().unwrap_or(program);
    let lower = base.to_ascii_lowercase();
    WINDOWS_SUFFIXES
        .iter()
        .find_map(|s| lower.strip_suffix(s).filter(|n| !n.is_empty()))
        .map_or_else(|| base.to_string(), str::to_string)
}

/// The hazard of one analysed command, if any.
pub fn hazard(cmd: &Command) -> Option<HazardHit> {
    let words: Vec<Option<&str>> = cmd
        .words
        .iter()
        .enumerate()
        // `/?` (a Windows program's help) is a glob to bash, but one that
        // names nothing on a standard root: read it as written.
        .map(|(i, w)| (!cmd.dynamic_words.contains(&i) || w == "/?").then_some(w.as_str()))
        .collect();
    hazard_in(&cmd.program, &words)
}

/// The hazard of a command given as words (`None` for a word only known at run
/// time); `words[0]` is the program as written.
pub fn hazard_in(program: &str, words: &[Option<&str>]) -> Option<HazardHit> {
    let mut program = program.to_string();
    let mut words: Vec<Option<String>> = words.iter().map(|w| w.map(str::to_string)).collect();
    // Look through runners (`npx cdk destroy`), a few levels at most.
    for _ in 0..3 {
        let Some(inner) = runner_inner(&program_name(&program), &words) else {
            break;
        };
        words = words.split_off(inner);
        match words.first() {
            Some(Some(p)) => program = p.clone(),
            _ => return None,
        }
    }
    let name = program_name(&program);
    for pack in PACKS {
        for prog in pack.programs.iter().filter(|p| names_match(p.names, &name)) {
            let scan = Scan::new(prog, &words);
            if scan.help() {
                return None;
            }
            for rule in prog.rules {
                if let Some(mut triggers) = scan.matches(rule) {
                    let Hit::Hazard { code, message } = rule.hit else {
                        return None;
                    };
                    if triggers.is_empty() {
                        // Only a rule naming the program itself allows it.
                        triggers.push(program.clone());
                    }
                    triggers.dedup();
                    return Some(HazardHit {
                        code,
                        message: message.to_string(),
                        triggers,
                        pack: pack.name,
                    });
                }
            }
        }
    }
    None
}

/// The index of the command a runner runs, if `name` is one.
fn runner_inner(name: &str, words: &[Option<String>]) -> Option<usize> {
    let (_, sub, valued) = RUNNERS.iter().find(|(n, sub, _)| {
        *n == name && (sub.is_empty() || words.get(1).and_then(|w| w.as_deref()) == Some(*sub))
    })?;
    let mut i = if sub.is_empty() { 1 } else { 2 };
    while let Some(Some(w)) = words.get(i) {
        if w == "--" {
            return Some(i + 1).filter(|j| *j < words.len());
        }
        if !w.starts_with('-') {
            return Some(i);
        }
        i += if valued.contains(&w.as_str()) { 2 } else { 1 };
    }
    None
}

/// Program names keep their case (`RM` is not `rm` on Linux).
fn names_match(names: &[&str], name: &str) -> bool {
    names.iter().any(|n| match n.strip_suffix('*') {
        Some(prefix) => name.starts_with(prefix),
        None => *n == name,
    })
}

/// `pattern` against `word`, without case: `*` alone is any word, a trailing
/// `*` a prefix, a leading `*` a suffix.
fn glob_eq(pattern: &str, word: &str) -> bool {
    let word = word.to_ascii_lowercase();
    let pattern = pattern.to_ascii_lowercase();
    if pattern == "*" {
        return true;
    }
    if let Some(prefix) = pattern.strip_suffix('*') {
        return word.starts_with(prefix);
    }
    if let Some(suffix) = pattern.strip_prefix('*') {
        return word.ends_with(suffix);
    }
    word == pattern
}

/// `a|b|c` against a word.
fn alternatives(pattern: &str, word: &str) -> bool {
    pattern.split('|').any(|p| glob_eq(p, word))
}

/// A command's words sorted into options and positional words.
struct Scan {
    /// The words after the program (`None`: dynamic).
    words: Vec<Option<String>>,
    /// Indexes of option words before `--`.
    opts: Vec<usize>,
    /// Indexes of positional words before `--` (values of valued options excluded).
    pos: Vec<usize>,
    /// Positions in `pos` where the subcommand may start.
    starts: Vec<usize>,
    /// Index of the first `--`.
    dashdash: Option<usize>,
}

impl Scan {
    fn new(prog: &Program, all: &[Option<String>]) -> Scan {
        let mut words: Vec<Option<String>> = Vec::new();
        for w in all.iter().skip(1) {
            match w {
                Some(w) if prog.split => words.extend(
                    w.split_whitespace()
                        .map(|p| Some(p.trim_matches(['"', '\'']).to_string())),
                ),
                w => words.push(w.clone()),
            }
        }
        let mut scan = Scan {
            words,
            opts: Vec::new(),
            pos: Vec::new(),
            starts: vec![0],
            dashdash: None,
        };
        let first = match prog.finder {
            Finder::Positional => 0,
            Finder::Git => {
                let text: Vec<&str> = scan
                    .words
                    .iter()
                    .map(|w| w.as_deref().unwrap_or("\0"))
                    .collect();
                match portcullis_shell::knowledge::git_split(&text).subcommand {
                    Some(i) => i,
                    None => {
                        // git refuses to run past an option it does not know.
                        scan.starts.clear();
                        scan.words.len()
                    }
                }
            }
        };
        let mut i = first;
        let mut value_next = false;
        while let Some(w) = scan.words.get(i) {
            let w = w.as_deref();
            if value_next {
                value_next = false;
            } else if w == Some("--") {
                scan.dashdash = Some(i);
                break;
            } else if let Some(w) = w.filter(|w| w.starts_with('-') && w.len() > 1) {
                scan.opts.push(i);
                value_next = prog.valued.contains(&w);
            } else {
                if scan.pos.is_empty()
                    && prog.finder == Finder::Positional
                    && i.checked_sub(1)
                        .and_then(|before| scan.words.get(before))
                        .and_then(Option::as_deref)
                        .is_some_and(|p| {
                            p.starts_with('-') && !p.contains('=') && !prog.valued.contains(&p)
                        })
                {
                    scan.starts.push(1);
                }
                scan.pos.push(i);
            }
            i += 1;
        }
        scan
    }

    fn word(&self, i: usize) -> Option<&str> {
        self.words.get(i).and_then(|w| w.as_deref())
    }

    /// The words before `--`.
    fn before(&self) -> usize {
        self.dashdash.unwrap_or(self.words.len())
    }

    fn help(&self) -> bool {
        (0..self.before()).any(|i| self.word(i).is_some_and(|w| HELP.contains(&w)))
    }

    /// The triggers when `rule` matches.
    fn matches(&self, rule: &Rule) -> Option<Vec<String>> {
        let mut triggers = self.sub(rule)?;
        for group in rule.all {
            let found = group.iter().find_map(|o| self.opt(*o))?;
            triggers.extend(found);
        }
        if rule.none.iter().any(|o| self.opt(*o).is_some()) {
            return None;
        }
        if let Some(t) = self.test(rule.test)? {
            triggers.push(t);
        }
        Some(triggers)
    }

    /// The subcommand words, when they are there.
    fn sub(&self, rule: &Rule) -> Option<Vec<String>> {
        if rule.sub.is_empty() {
            return Some(Vec::new());
        }
        let n = rule.sub.len();
        let starts: Vec<usize> = if rule.anywhere {
            (0..self.pos.len()).collect()
        } else {
            self.starts.clone()
        };
        starts.into_iter().find_map(|s| {
            let idx = self.pos.get(s..s + n)?;
            let words: Option<Vec<&str>> = idx.iter().map(|i| self.word(*i)).collect();
            let words = words?;
            rule.sub
                .iter()
                .zip(&words)
                .all(|(p, w)| alternatives(p, w))
                .then(|| words.iter().map(|w| w.to_string()).collect())
        })
    }

    /// The words that show `o` is present.
    fn opt(&self, o: Opt) -> Option<Vec<String>> {
        let opts = || self.opts.iter().filter_map(|i| self.word(*i));
        match o {
            Opt::Flag(name) => {
                let short = name.len() == 2 && !name.starts_with("--");
                let letter = name.chars().nth(1).unwrap_or('-');
                opts()
                    .find(|w| {
                        *w == name
                            || (!short && w.strip_prefix(name).is_some_and(|r| r.starts_with('=')))
                            || (short && is_cluster(w) && w[1..].contains(letter))
                    })
                    .map(|w| vec![w.to_string()])
            }
            Opt::Prefix(p) => opts()
                .find(|w| w.starts_with(p))
                .map(|w| vec![w.to_string()]),
            Opt::Word(p) => self
                .words
                .iter()
                .flatten()
                .find(|w| glob_eq(p, w))
                .map(|w| vec![w.to_string()]),
            Opt::Val(name, values) => self.val(name, values),
        }
    }

    /// An option with one of `values`, in any spelling.
    fn val(&self, name: &str, values: &[&str]) -> Option<Vec<String>> {
        let ok = |v: &str| values.iter().any(|p| glob_eq(p, v));
        let short = name.len() == 2 && !name.starts_with("--");
        let letter = name.chars().nth(1).unwrap_or('-');
        for i in 0..self.before() {
            let Some(w) = self.word(i) else { continue };
            let next = self.word(i + 1).filter(|n| ok(n));
            if w == name {
                if let Some(n) = next {
                    return Some(vec![w.to_string(), n.to_string()]);
                }
                continue;
            }
            if !short {
                if w.strip_prefix(name)
                    .and_then(|r| r.strip_prefix('='))
                    .is_some_and(ok)
                {
                    return Some(vec![w.to_string()]);
                }
                continue;
            }
            // `-XDELETE`, `-sXDELETE`, `-sX DELETE`.
            let split = w
                .strip_prefix('-')
                .filter(|r| !r.starts_with('-'))
                .and_then(|r| r.split_once(letter));
            let Some((before, rest)) = split else {
                continue;
            };
            if !before.chars().all(|c| c.is_ascii_alphabetic()) {
                continue;
            }
            if rest.is_empty() {
                if let Some(n) = next {
                    return Some(vec![w.to_string(), n.to_string()]);
                }
            } else if ok(rest) {
                return Some(vec![w.to_string()]);
            }
        }
        None
    }

    /// `Some(trigger)` when the test holds (`Some(None)` for no test), `None` when it fails.
    fn test(&self, test: Test) -> Option<Option<String>> {
        let mut words = self.words.iter().flatten();
        let hit = match test {
            Test::None => return Some(None),
            Test::Sql => words.find(|w| destructive_sql(w)),
            Test::Mongo => words.find(|w| destructive_mongo(w)),
            Test::DdDevice => words.find(|w| {
                w.strip_prefix("of=")
                    .is_some_and(|dev| dev.starts_with("/dev/") && !harmless_device(dev))
            }),
        };
        hit.map(|w| Some(w.clone()))
    }
}

/// `-rf`, `-fdx`: short flags written together.
fn is_cluster(w: &str) -> bool {
    w.len() > 2
        && w.starts_with('-')
        && !w.starts_with("--")
        && w[1..].chars().all(|c| c.is_ascii_alphabetic())
}

/// Devices that hold no data: writing them destroys nothing.
fn harmless_device(dev: &str) -> bool {
    matches!(
        dev,
        "/dev/null" | "/dev/zero" | "/dev/full" | "/dev/stdout" | "/dev/stderr" | "/dev/tty"
    ) || dev.starts_with("/dev/fd/")
}

/// SQL that drops or truncates, or deletes or updates every row (no `WHERE`).
fn destructive_sql(text: &str) -> bool {
    let upper = text.to_ascii_uppercase();
    upper.split(';').any(|statement| {
        let tokens: Vec<&str> = statement
            .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .filter(|t| !t.is_empty())
            .collect();
        let has = |t: &str| tokens.contains(&t);
        let position = |t: &str| tokens.iter().position(|x| *x == t);
        has("DROP")
            || has("TRUNCATE")
            || (position("DELETE").is_some_and(|d| tokens.get(d + 1) == Some(&"FROM"))
                && !has("WHERE"))
            || (position("UPDATE")
                .zip(position("SET"))
                .is_some_and(|(u, s)| u < s)
                && !has("WHERE"))
    })
}

/// MongoDB shell code that drops a database or collection or deletes documents.
fn destructive_mongo(text: &str) -> bool {
    const CALLS: &[&str] = &[
        "dropDatabase(",
        ".drop(",
        "dropCollection(",
        "deleteMany(",
        ".remove(",
        "dropAllUsers(",
        "dropUser(",
        "dropIndexes(",
    ];
    CALLS.iter().any(|c| text.contains(c))
}

#[cfg(test)]
pub(crate) mod testing {
    use super::*;

    /// The hazard of the first hazardous command of `text`.
    pub fn hit(text: &str) -> Option<HazardHit> {
        portcullis_shell::analyze(text)
            .commands
            .iter()
            .find_map(hazard)
    }

    /// Every command of `must_ask` is a hazard of `pack`; none of `must_not` is.
    pub fn check(pack: &str, must_ask: &[&str], must_not: &[&str]) {
        let mut wrong = Vec::new();
        for t in must_ask {
            match hit(t) {
                Some(h) if h.pack == pack => {}
                other => wrong.push(format!("should ask ({pack}): {t:?} got {other:?}")),
            }
        }
        for t in must_not {
            if let Some(h) = hit(t) {
                wrong.push(format!("should not ask: {t:?} got {h:?}"));
            }
        }
        assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    }
}

#[cfg(test)]
mod tests {
    use super::testing::hit;
    use super::*;

    #[test]
    fn program_names_drop_directories_case_and_windows_suffixes() {
        assert_eq!(program_name("/usr/bin/rm"), "rm");
        assert_eq!(program_name("git.exe"), "git");
        assert_eq!(program_name("/mnt/c/Program Files/Git/bin/Git.EXE"), "git");
        assert_eq!(program_name("az.cmd"), "az");
        assert_eq!(program_name(".exe"), ".exe");
        assert_eq!(program_name("RM"), "RM");
        assert_eq!(program_name("/opt/tools/rm"), "rm");
        assert_eq!(program_name("C:\\Tools\\RM.EXE"), "rm");
    }

    #[test]
    fn options_in_every_spelling() {
        for t in [
            "curl -X DELETE https://x",
            "curl -XDELETE https://x",
            "curl --request DELETE https://x",
            "curl --request=DELETE https://x",
            "curl -sX DELETE https://x",
            "curl -sXDELETE https://x",
            "curl -x delete -X 'DELETE' https://x",
        ] {
            assert_eq!(hit(t).map(|h| h.code), Some("http-delete"), "{t}");
        }
        for t in [
            "curl -X GET https://x",
            "curl -d DELETE https://x",
            "curl -H DELETE https://x",
        ] {
            assert_eq!(hit(t), None, "{t}");
        }
    }

    #[test]
    fn help_and_version_are_never_hazards() {
        for t in [
            "rm -rf x --help",
            "git push --force --help",
            "terraform destroy -help",
            "cmd.exe /c rd /?",
            "shutdown.exe /?",
            "mkfs --version",
        ] {
            assert_eq!(hit(t), None, "{t}");
        }
    }

    #[test]
    fn triggers_name_the_words_or_else_the_program() {
        let h = hit("git push origin main --force").expect("hazard");
        assert_eq!(h.triggers, ["push", "--force"]);
        let h = hit("reboot").expect("hazard");
        assert_eq!(h.triggers, ["reboot"]);
        let h = hit("/sbin/shutdown -h now").expect("hazard");
        assert_eq!(h.triggers, ["/sbin/shutdown"]);
    }

    #[test]
    fn runners_are_looked_through() {
        assert_eq!(hit("npx cdk destroy").map(|h| h.pack), Some("iac"));
        assert_eq!(hit("npx -y cdk destroy --all").map(|h| h.pack), Some("iac"));
        assert_eq!(
            hit("npx prisma migrate reset --force").map(|h| h.pack),
            Some("databases")
        );
        assert_eq!(hit("npx cdk synth"), None);
    }

    #[test]
    fn sql_tests() {
        for s in [
            "DROP TABLE x",
            "truncate t",
            "delete from users",
            "SELECT 1; DELETE FROM t",
            "update t set a = 1",
            "ALTER TABLE t DROP COLUMN c",
        ] {
            assert!(destructive_sql(s), "{s}");
        }
        for s in [
            "SELECT dropped_at FROM t",
            "SELECT * FROM drops",
            "DELETE FROM t WHERE id = 1",
            "UPDATE t SET a = 1 WHERE id = 2",
            "\\dt",
            "INSERT INTO deletes VALUES (1)",
        ] {
            assert!(!destructive_sql(s), "{s}");
        }
    }

    #[test]
    fn an_unknown_option_before_the_subcommand_may_hold_its_value() {
        assert!(hit("terraform -chdir infra destroy").is_some());
        assert!(hit("kubectl --some-flag value delete pod x").is_some());
        assert!(hit("git --attr-source HEAD push --force").is_some());
    }
}
