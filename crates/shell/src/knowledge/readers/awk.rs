//! Awk (gawk, mawk, nawk, busybox): options read with the shared scanner,
//! and the program read with a real lexer — strings, regular-expression
//! literals (told from division by what precedes them, as awk's grammar
//! does), comments — so a `"` or a `/` inside one hides nothing. What it
//! looks for: `system()`, pipes (`print | "cmd"`, `"cmd" | getline`,
//! gawk's `|&`), redirections (`print > "file"`, `getline < "file"`),
//! `@load`/`@include` and indirect calls; implementation options that run,
//! load or write (`-f`, `-E`/`--exec`, `-i`, `-l`, `-W exec`, `--profile`…).

use super::*;
use crate::knowledge::options::{Arity, Opt, long, opt, scan_in_order, short};

const OPTIONS: &[Opt] = &[
    opt('f', "file", Arity::Required, "file"),
    opt('E', "exec", Arity::Required, "exec"),
    opt('e', "source", Arity::Required, "source"),
    opt('i', "include", Arity::Required, "include"),
    opt('l', "load", Arity::Required, "load"),
    opt('v', "assign", Arity::Required, "assign"),
    opt('F', "field-separator", Arity::Required, "fs"),
    short('W', Arity::Required, "W"),
    opt('d', "dump-variables", Arity::Optional, "dump-variables"),
    opt('o', "pretty-print", Arity::Optional, "pretty-print"),
    opt('p', "profile", Arity::Optional, "profile"),
    opt('D', "debug", Arity::Optional, "debug"),
    opt('L', "lint", Arity::Optional, "flag"),
    opt('b', "characters-as-bytes", Arity::Flag, "flag"),
    opt('c', "traditional", Arity::Flag, "flag"),
    opt('C', "copyright", Arity::Flag, "flag"),
    opt('g', "gen-pot", Arity::Flag, "flag"),
    opt('h', "help", Arity::Flag, "flag"),
    opt('M', "bignum", Arity::Flag, "flag"),
    opt('n', "non-decimal-data", Arity::Flag, "flag"),
    opt('N', "use-lc-numeric", Arity::Flag, "flag"),
    opt('O', "optimize", Arity::Flag, "flag"),
    opt('P', "posix", Arity::Flag, "flag"),
    opt('r', "re-interval", Arity::Flag, "flag"),
    opt('s', "no-optimize", Arity::Flag, "flag"),
    opt('S', "sandbox", Arity::Flag, "flag"),
    opt('t', "lint-old", Arity::Flag, "flag"),
    opt('V', "version", Arity::Flag, "flag"),
    opt('Y', "parsedebug", Arity::Flag, "flag"),
    opt('k', "csv", Arity::Flag, "flag"),
    opt('I', "trace", Arity::Flag, "flag"),
    long("usage", Arity::Flag, "flag"),
];

pub(in crate::knowledge) fn awk(name: &str, args: &[Word], f: &mut Findings) {
    let s = scan_in_order(OPTIONS, args);
    if !s.unknown.is_empty() {
        f.opaque(
            OpaqueReason::InterpretedCode,
            format!(
                "{name} options this analysis cannot read (one may load code): {}",
                s.unknown.join(" ")
            ),
        );
    }
    let mut program_given = false;
    let code_file = |f: &mut Findings, opt: &str, file: &str, dynamic: bool| {
        f.read_path(file, dynamic);
        f.code(name, opt, format!("runs or loads the awk code in {file}"));
        f.opaque(OpaqueReason::CodeFromFile, format!("{name} {opt} {file}"));
    };
    for o in &s.options {
        let value = o.value.clone().unwrap_or_default();
        match o.id {
            "file" | "exec" => {
                program_given = true;
                code_file(f, o.id, &value, o.dynamic);
            }
            "include" | "load" => code_file(f, o.id, &value, o.dynamic),
            "source" => {
                program_given = true;
                program_text(name, &value, o.dynamic, f);
            }
            "dump-variables" | "pretty-print" | "profile" => {
                let default = if o.id == "dump-variables" {
                    "awkvars.out"
                } else {
                    "awkprof.out"
                };
                let file = o.value.as_deref().unwrap_or(default);
                if file != "/dev/stdout" && file != "/dev/stderr" {
                    f.write_path(file, o.dynamic);
                }
            }
            "debug" => f.opaque(
                OpaqueReason::InterpretedCode,
                format!("{name} --debug reads debugger commands"),
            ),
            "W" => {
                // mawk's and gawk's `-W name[=value]`.
                let (w, v) = match value.split_once('=') {
                    Some((w, v)) => (w, Some(v)),
                    None => (value.as_str(), None),
                };
                let is = |full: &str| !w.is_empty() && full.starts_with(w);
                if is("exec") || is("file") {
                    program_given = true;
                    // mawk takes the file as the next word; gawk after `=`.
                    match v {
                        Some(file) => code_file(f, "-W exec", file, o.dynamic),
                        None => f.opaque(
                            OpaqueReason::CodeFromFile,
                            format!("{name} -W {value}: a program from a file"),
                        ),
                    }
                } else if is("source") {
                    program_given = true;
                    program_text(name, v.unwrap_or_default(), o.dynamic, f);
                } else if is("include") || is("load") {
                    code_file(f, "-W", v.unwrap_or_default(), o.dynamic);
                } else if is("dump-variables") || is("profile") || is("pretty-print") {
                    f.write_path(v.unwrap_or("awkprof.out"), o.dynamic);
                } else if !(is("version")
                    || is("help")
                    || is("usage")
                    || is("posix_space")
                    || is("interactive")
                    || is("sandbox")
                    || is("traditional")
                    || is("posix")
                    || is("lint")
                    || is("dump")
                    || w.starts_with("random")
                    || w.starts_with("sprintf"))
                {
                    f.opaque(
                        OpaqueReason::InterpretedCode,
                        format!("{name} -W {value}: an option this analysis does not know"),
                    );
                }
            }
            _ => {}
        }
    }
    let mut operands = s.operands.iter();
    if !program_given && let Some(p) = operands.next() {
        program_text(name, &p.value, p.dynamic, f);
    }
    for o in operands {
        // `var=value` assigns; anything else is a file read.
        let assignment = o.value.split_once('=').is_some_and(|(v, _)| {
            !v.is_empty() && v.chars().all(|c| c == '_' || c.is_ascii_alphanumeric())
        });
        if !assignment {
            f.read(o);
        }
    }
}

fn program_text(name: &str, text: &str, dynamic: bool, f: &mut Findings) {
    if dynamic {
        f.opaque(
            OpaqueReason::InterpretedCode,
            format!("{name} program known only at run time: {text}"),
        );
    } else {
        awk_program(name, text, f);
    }
}

/// One awk token.
#[derive(Clone, Debug, PartialEq)]
enum Tok {
    Str(String),
    Regex,
    Number,
    Ident(String),
    /// `@` followed by a name (`@load`, `@include`, an indirect call).
    At(String),
    Punct(&'static str),
    Newline,
}

/// Splits an awk program into tokens; `Err` when a string or a regular
/// expression never ends (awk rejects the program).
fn lex(text: &str) -> Result<Vec<Tok>, String> {
    const PUNCT: &[&str] = &[
        "|&", "||", "&&", ">>", "<=", ">=", "==", "!=", "++", "--", "+=", "-=", "*=", "/=", "%=",
        "^=", "**", "|", ">", "<", "!", "~", "(", ")", "{", "}", "[", "]", ";", ",", "+", "-", "*",
        "/", "%", "^", "?", ":", "=", "$",
    ];
    let chars: Vec<char> = text.chars().collect();
    let mut out: Vec<Tok> = Vec::new();
    let mut i = 0;
    while let Some(&c) = chars.get(i) {
        match c {
            ' ' | '\t' | '\r' => i += 1,
            '\\' if chars.get(i + 1) == Some(&'\n') => i += 2,
            '\n' => {
                out.push(Tok::Newline);
                i += 1;
            }
            '#' => {
                while chars.get(i).is_some_and(|&d| d != '\n') {
                    i += 1;
                }
            }
            '"' => {
                let mut s = String::new();
                i += 1;
                loop {
                    match chars.get(i) {
                        None | Some('\n') => return Err("a string never ends".into()),
                        Some('"') => break,
                        Some('\\') => {
                            if let Some(&n) = chars.get(i + 1) {
                                s.push(match n {
                                    'n' => '\n',
                                    't' => '\t',
                                    other => other,
                                });
                            }
                            i += 2;
                        }
                        Some(&other) => {
                            s.push(other);
                            i += 1;
                        }
                    }
                }
                i += 1;
                out.push(Tok::Str(s));
            }
            '/' if regex_may_start(out.last()) => {
                i += 1;
                let mut in_bracket = false;
                loop {
                    match chars.get(i) {
                        None | Some('\n') => {
                            return Err("a regular expression never ends".into());
                        }
                        Some('\\') => i += 2,
                        Some('[') if !in_bracket => {
                            in_bracket = true;
                            i += 1;
                            // `[]…]` and `[^]…]`: a leading `]` is literal.
                            if chars.get(i) == Some(&'^') {
                                i += 1;
                            }
                            if chars.get(i) == Some(&']') {
                                i += 1;
                            }
                        }
                        Some(']') if in_bracket => {
                            in_bracket = false;
                            i += 1;
                        }
                        Some('/') if !in_bracket => break,
                        Some(_) => i += 1,
                    }
                }
                i += 1;
                out.push(Tok::Regex);
            }
            '@' => {
                i += 1;
                let start = i;
                while chars
                    .get(i)
                    .is_some_and(|&d| d.is_ascii_alphanumeric() || d == '_')
                {
                    i += 1;
                }
                out.push(Tok::At(
                    chars.get(start..i).unwrap_or_default().iter().collect(),
                ));
            }
            c if c.is_ascii_digit()
                || (c == '.' && chars.get(i + 1).is_some_and(|d| d.is_ascii_digit())) =>
            {
                while chars
                    .get(i)
                    .is_some_and(|&d| d.is_ascii_alphanumeric() || d == '.')
                {
                    i += 1;
                }
                out.push(Tok::Number);
            }
            c if c.is_ascii_alphabetic() || c == '_' => {
                let start = i;
                while chars
                    .get(i)
                    .is_some_and(|&d| d.is_ascii_alphanumeric() || d == '_')
                {
                    i += 1;
                }
                out.push(Tok::Ident(
                    chars.get(start..i).unwrap_or_default().iter().collect(),
                ));
            }
            _ => {
                let rest: String = chars.iter().skip(i).take(2).collect();
                let Some(p) = PUNCT.iter().find(|p| rest.starts_with(**p)) else {
                    return Err(format!("unexpected `{c}`"));
                };
                i += p.chars().count();
                out.push(Tok::Punct(p));
            }
        }
    }
    Ok(out)
}

/// Whether a `/` after `prev` starts a regular expression (where an operand
/// is expected) rather than dividing (after an operand).
fn regex_may_start(prev: Option<&Tok>) -> bool {
    match prev {
        None | Some(Tok::Newline | Tok::Regex) => true,
        Some(Tok::Str(_) | Tok::Number | Tok::At(_)) => false,
        Some(Tok::Ident(id)) => matches!(
            id.as_str(),
            "print"
                | "printf"
                | "return"
                | "case"
                | "in"
                | "getline"
                | "if"
                | "while"
                | "do"
                | "else"
        ),
        Some(Tok::Punct(p)) => !matches!(*p, ")" | "]" | "$" | "++" | "--"),
    }
}

/// What an awk program does outside its input and output: commands it runs,
/// files it writes or reads, code it loads.
pub(super) fn awk_program(name: &str, text: &str, f: &mut Findings) {
    let toks = match lex(text) {
        Ok(t) => t,
        Err(why) => {
            f.opaque(
                OpaqueReason::InterpretedCode,
                format!("{name} program not understood ({why}): {text}"),
            );
            return;
        }
    };
    let opaque = |f: &mut Findings, what: &str| {
        f.opaque(
            OpaqueReason::InterpretedCode,
            format!("{name} program {what}: {text}"),
        );
    };
    // Statement state: whether the statement is a print, and the paren depth.
    let mut printing = false;
    let mut depth: i32 = 0;
    for (k, t) in toks.iter().enumerate() {
        let next = toks.get(k + 1);
        let after_next = toks.get(k + 2);
        let ends = |t: Option<&Tok>| matches!(t, None | Some(Tok::Newline | Tok::Punct(";" | "}")));
        match t {
            Tok::Newline | Tok::Punct(";" | "{" | "}") => {
                printing = false;
                depth = 0;
            }
            Tok::Punct("(") => depth += 1,
            Tok::Punct(")") => depth -= 1,
            Tok::Ident(id) if id == "print" || id == "printf" => {
                printing = true;
                depth = 0;
            }
            Tok::Ident(id) if id == "system" => match (next, after_next, toks.get(k + 3)) {
                (Some(Tok::Punct("(")), Some(Tok::Str(cmd)), Some(Tok::Punct(")"))) => {
                    f.shell(format!("{name} system()"), cmd, false);
                }
                _ => opaque(f, "runs a command built at run time with system()"),
            },
            Tok::Punct("|" | "|&") => {
                let prev = k.checked_sub(1).and_then(|p| toks.get(p));
                match (prev, next) {
                    // `"cmd" | getline`.
                    (Some(Tok::Str(cmd)), Some(Tok::Ident(g))) if g == "getline" => {
                        f.shell(format!("{name} | getline"), cmd, false);
                    }
                    // `print … | "cmd"`.
                    (_, Some(Tok::Str(cmd))) if printing && ends(after_next) => {
                        f.shell(format!("{name} print |"), cmd, false);
                    }
                    _ => opaque(f, "runs a command through a pipe"),
                }
            }
            Tok::Punct(">" | ">>") if printing && depth <= 0 => match next {
                Some(Tok::Str(file)) if ends(after_next) => match file.as_str() {
                    "/dev/stdout" | "/dev/stderr" | "-" => {}
                    _ => f.write_path(file, false),
                },
                _ => opaque(f, "writes to a file named at run time"),
            },
            Tok::Punct("<") => {
                // `getline < FILE`, `getline var < FILE`.
                let prev = k.checked_sub(1).and_then(|p| toks.get(p));
                let prev2 = k.checked_sub(2).and_then(|p| toks.get(p));
                let from_getline = matches!(prev, Some(Tok::Ident(g)) if g == "getline")
                    || matches!(prev2, Some(Tok::Ident(g)) if g == "getline");
                if from_getline {
                    match next {
                        Some(Tok::Str(file)) => {
                            if file != "-" && file != "/dev/stdin" {
                                f.read_path(file, false);
                            }
                        }
                        _ => opaque(f, "reads a file named at run time"),
                    }
                }
            }
            Tok::At(kw) if kw == "load" || kw == "include" => {
                f.code(
                    name,
                    format!("@{kw}"),
                    "loads an extension library or a source file",
                );
                f.opaque(
                    OpaqueReason::CodeFromFile,
                    format!("{name} program loads code from files: {text}"),
                );
            }
            Tok::At(kw) if kw == "namespace" => {}
            // gawk's indirect call `@fn()` can call any function, `system` included.
            Tok::At(_) => opaque(f, "calls a function named at run time"),
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(text: &str) -> Findings {
        let mut f = Findings::default();
        awk_program("awk", text, &mut f);
        f
    }

    #[test]
    fn strings_and_regexes_hide_nothing() {
        // A `"` inside a regex is not a string: system() after it is seen.
        assert!(!run(r#"/"/ { system($0) } /"/"#).opaque.is_empty());
        // Division is not a regex: the `|` after it is a pipe.
        assert!(!run(r#"{ x = a / 2; print x | $1 }"#).opaque.is_empty());
        // A `/` inside a bracket does not end the regex.
        assert!(!run(r#"/[/]/ { system($0) }"#).opaque.is_empty());
        // A `|` inside a string or a regex is not a pipe.
        let f = run(r#"/a|b/ { print "x|y" }"#);
        assert!(
            f.opaque.is_empty() && f.shell_texts.is_empty(),
            "{:?}",
            f.opaque
        );
        // A comment hides nothing that runs.
        assert!(run("# system(\"id\")\n{ print }").shell_texts.is_empty());
    }

    #[test]
    fn commands_files_and_code() {
        let f = run(r#"BEGIN { system("make test") }"#);
        assert_eq!(f.shell_texts[0].1, "make test");
        let f = run(r#"{ print $1 | "sort -u" }"#);
        assert_eq!(f.shell_texts[0].1, "sort -u");
        let f = run(r#"BEGIN { while (("ls" | getline line) > 0) n++ }"#);
        assert_eq!(f.shell_texts[0].1, "ls");
        let f = run(r#"{ print > "out.txt"; print $2 >> "log" }"#);
        assert_eq!(f.effects.len(), 2);
        let f = run(r#"{ if ($1 > 3) print }"#);
        assert!(f.effects.is_empty() && f.opaque.is_empty());
        let f = run(r#"BEGIN { getline x < "/etc/shadow" }"#);
        assert!(matches!(&f.effects[..], [Effect::Read { path, .. }] if path == "/etc/shadow"));
        for t in [
            r#"BEGIN { "date" |& getline d }"#,
            r#"{ print | cmd }"#,
            r#"{ print > $2 }"#,
            "@load \"filefuncs\"",
            r#"BEGIN { f = "system"; @f("id") }"#,
            r#"BEGIN { print "x"; print "unterminated }"#,
        ] {
            let f = run(t);
            assert!(
                !f.opaque.is_empty() || !f.shell_texts.is_empty(),
                "{t}: {:?}",
                f.effects
            );
        }
    }
}
