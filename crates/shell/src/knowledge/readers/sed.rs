//! GNU sed: its options, read with the shared scanner, and its script
//! language, read command by command as sed reads it — addresses, `{…}`
//! blocks, labels, text arguments, `s///` and `y///`, and the commands that
//! reach outside the stream: `e` and `s///e` run commands, `w`/`W` and
//! `s///w` write files, `r`/`R` read them. `-i` edits its operands in place,
//! and an attached backup SUFFIX names one more file written (`*` standing
//! for the file's name, a `/` placing it elsewhere).

use super::*;
use crate::knowledge::options::{Arity, Opt, long, opt, scan, short};

const OPTIONS: &[Opt] = &[
    opt('e', "expression", Arity::Required, "expression"),
    opt('f', "file", Arity::Required, "file"),
    opt('i', "in-place", Arity::Optional, "in-place"),
    opt('l', "line-length", Arity::Required, "line-length"),
    opt('n', "quiet", Arity::Flag, "quiet"),
    long("silent", Arity::Flag, "quiet"),
    opt('E', "regexp-extended", Arity::Flag, "extended"),
    short('r', Arity::Flag, "extended"),
    opt('s', "separate", Arity::Flag, "separate"),
    opt('z', "null-data", Arity::Flag, "null-data"),
    opt('u', "unbuffered", Arity::Flag, "unbuffered"),
    opt('b', "binary", Arity::Flag, "binary"),
    long("follow-symlinks", Arity::Flag, "follow-symlinks"),
    long("posix", Arity::Flag, "posix"),
    long("debug", Arity::Flag, "debug"),
    long("sandbox", Arity::Flag, "sandbox"),
    long("help", Arity::Flag, "help"),
    long("version", Arity::Flag, "version"),
];

pub(in crate::knowledge) fn sed(args: &[Word], f: &mut Findings) {
    let s = scan(OPTIONS, args);
    if s.has("help") || s.has("version") {
        return;
    }
    if !s.unknown.is_empty() {
        f.opaque(
            OpaqueReason::InterpretedCode,
            format!(
                "sed options this analysis cannot read (one may be -i, -e or -f): {}",
                s.unknown.join(" ")
            ),
        );
    }
    let mut operands = s.operands.clone();
    // The script: every -e and -f in order, joined by newlines; else the first operand.
    let mut script = String::new();
    let mut dynamic_script = None;
    let has_script_option = s.has("expression") || s.has("file");
    for o in &s.options {
        match o.id {
            "expression" => {
                let text = o.value.clone().unwrap_or_default();
                if o.dynamic {
                    dynamic_script = Some(text.clone());
                }
                script.push_str(&text);
                script.push('\n');
            }
            "file" => {
                let file = o.value.clone().unwrap_or_default();
                if file != "-" {
                    f.read_path(&file, o.dynamic);
                }
                f.opaque(
                    OpaqueReason::CodeFromFile,
                    format!("sed script from a file: {file} (it may run commands with `e`)"),
                );
            }
            _ => {}
        }
    }
    if !has_script_option {
        if operands.is_empty() {
            return;
        }
        let first = operands.remove(0);
        if first.dynamic {
            dynamic_script = Some(first.value.clone());
        }
        script = first.value.clone();
    }
    if let Some(text) = dynamic_script {
        f.opaque(
            OpaqueReason::InterpretedCode,
            format!("sed script known only at run time: {text}"),
        );
    } else {
        sed_script(&script, f);
    }
    let in_place = s.values("in-place").last();
    for o in &operands {
        if let Some(inplace) = in_place {
            f.write(o);
            if let Some(suffix) = inplace.value.as_deref().filter(|s| !s.is_empty()) {
                for backup in backup_names(&o.value, suffix) {
                    f.write_path(&backup, o.dynamic || inplace.dynamic);
                }
            }
        }
        f.read(o);
    }
}

/// The backups GNU sed writes for `file` under `-iSUFFIX`. A suffix without
/// `*` is appended to the name as given. With `*`, sed 4.9 puts the name as
/// given in place of each `*`; older releases (4.2 and others still shipped)
/// put the base name there and, when the result has no `/`, place it in the
/// file's directory. Both are written, so both are reported.
fn backup_names(file: &str, suffix: &str) -> Vec<String> {
    if !suffix.contains('*') {
        return vec![format!("{file}{suffix}")];
    }
    let (dir, base) = match file.rfind('/') {
        Some(i) => (&file[..=i], &file[i + 1..]),
        None => ("", file),
    };
    let modern = suffix.replace('*', file);
    let older = suffix.replace('*', base);
    let older = if older.contains('/') {
        older
    } else {
        format!("{dir}{older}")
    };
    let mut names = vec![modern];
    if !names.contains(&older) {
        names.push(older);
    }
    names
}

/// A sed script, read as GNU sed reads it, for what it does outside the
/// stream. Anything it cannot read is opaque: sed would reject the script
/// (and run nothing), or this reader is missing a form.
pub(super) fn sed_script(script: &str, f: &mut Findings) {
    let mut r = Reader {
        chars: script.chars().collect(),
        i: 0,
        depth: 0,
    };
    if let Err(why) = r.commands(f) {
        f.opaque(
            OpaqueReason::InterpretedCode,
            format!("sed script not understood ({why}): {script}"),
        );
    }
}

struct Reader {
    chars: Vec<char>,
    i: usize,
    depth: usize,
}

impl Reader {
    fn peek(&self) -> Option<char> {
        self.chars.get(self.i).copied()
    }

    fn skip_blanks(&mut self) {
        while matches!(self.peek(), Some(' ' | '\t')) {
            self.i += 1;
        }
    }

    /// The rest of the line (a file name, a command, a label).
    /// Fails (the script is reported opaque) when the reader is already past
    /// the end, which a well-formed caller never asks.
    fn rest_of_line(&mut self) -> Result<String, String> {
        let start = self.i;
        while self.peek().is_some_and(|c| c != '\n') {
            self.i += 1;
        }
        self.span(start)
    }

    /// The characters from `start` to the reader's position.
    fn span(&self, start: usize) -> Result<String, String> {
        let chars = self.chars.get(start..self.i).ok_or("read past the end")?;
        Ok(chars.iter().collect())
    }

    /// Up to `;`, a newline (and `}` for labels in a block): GNU labels.
    fn label(&mut self) -> Result<String, String> {
        let start = self.i;
        while self.peek().is_some_and(|c| !matches!(c, '\n' | ';')) {
            self.i += 1;
        }
        self.span(start)
    }

    /// A delimited part of `s`, `y` or an address: up to an unescaped `delim`.
    fn delimited(&mut self, delim: char) -> Result<(), String> {
        while let Some(c) = self.peek() {
            self.i += 1;
            if c == '\\' {
                self.i += 1;
            } else if c == delim {
                return Ok(());
            } else if c == '\n' && delim != '\n' {
                // GNU allows a newline only escaped.
                return Err("unterminated `s`, `y` or address".into());
            }
        }
        Err("unterminated `s`, `y` or address".into())
    }

    fn address(&mut self) -> Result<bool, String> {
        match self.peek() {
            Some(c) if c.is_ascii_digit() => {
                while self.peek().is_some_and(|c| c.is_ascii_digit() || c == '~') {
                    self.i += 1;
                }
                Ok(true)
            }
            Some('$') => {
                self.i += 1;
                Ok(true)
            }
            Some('/') => {
                self.i += 1;
                self.delimited('/')?;
                self.address_flags();
                Ok(true)
            }
            Some('\\') => {
                self.i += 1;
                let delim = self.peek().ok_or("unterminated address")?;
                self.i += 1;
                self.delimited(delim)?;
                self.address_flags();
                Ok(true)
            }
            _ => Ok(false),
        }
    }

    fn address_flags(&mut self) {
        while matches!(self.peek(), Some('I' | 'M')) {
            self.i += 1;
        }
    }

    /// After a command: blanks, then `;`, a newline, `}`, `#` or the end.
    fn end_of_command(&mut self) -> Result<(), String> {
        self.skip_blanks();
        match self.peek() {
            None | Some(';' | '\n') => {
                self.i += usize::from(self.peek().is_some());
                Ok(())
            }
            Some('}' | '#') => Ok(()),
            Some(c) => Err(format!("extra characters after a command: `{c}`")),
        }
    }

    fn commands(&mut self, f: &mut Findings) -> Result<(), String> {
        loop {
            while matches!(self.peek(), Some(' ' | '\t' | '\n' | ';')) {
                self.i += 1;
            }
            let Some(_) = self.peek() else {
                return if self.depth == 0 {
                    Ok(())
                } else {
                    Err("unmatched `{`".into())
                };
            };
            // Addresses: ADDR[,ADDR2] then `!`.
            if self.address()? {
                self.skip_blanks();
                if self.peek() == Some(',') {
                    self.i += 1;
                    self.skip_blanks();
                    if matches!(self.peek(), Some('+' | '~')) {
                        self.i += 1;
                        while self.peek().is_some_and(|c| c.is_ascii_digit()) {
                            self.i += 1;
                        }
                    } else if !self.address()? {
                        return Err("expected an address after `,`".into());
                    }
                }
            }
            self.skip_blanks();
            while self.peek() == Some('!') {
                self.i += 1;
                self.skip_blanks();
            }
            let Some(c) = self.peek() else {
                return Err("missing command".into());
            };
            self.i += 1;
            match c {
                '{' => {
                    self.depth += 1;
                    continue;
                }
                '}' => {
                    if self.depth == 0 {
                        return Err("unexpected `}`".into());
                    }
                    self.depth -= 1;
                    self.end_of_command()?;
                }
                '#' => {
                    self.rest_of_line()?;
                }
                ':' => {
                    self.skip_blanks();
                    if self.label()?.trim().is_empty() {
                        return Err("`:` lacks a label".into());
                    }
                }
                'b' | 't' | 'T' => {
                    self.skip_blanks();
                    self.label()?;
                }
                'a' | 'i' | 'c' => self.text()?,
                '=' | 'd' | 'D' | 'F' | 'g' | 'G' | 'h' | 'H' | 'n' | 'N' | 'p' | 'P' | 'x'
                | 'z' => self.end_of_command()?,
                'l' | 'L' | 'q' | 'Q' => {
                    self.skip_blanks();
                    while self.peek().is_some_and(|c| c.is_ascii_digit()) {
                        self.i += 1;
                    }
                    self.end_of_command()?;
                }
                'v' => {
                    self.skip_blanks();
                    self.label()?;
                }
                'e' => {
                    self.skip_blanks();
                    let cmd = self.rest_of_line()?;
                    if cmd.trim().is_empty() {
                        f.opaque(
                            OpaqueReason::InterpretedCode,
                            "sed `e` runs the pattern space as a command",
                        );
                    } else {
                        f.shell("sed e", &cmd, false);
                    }
                }
                'r' | 'R' | 'w' | 'W' => {
                    self.skip_blanks();
                    let file = self.rest_of_line()?;
                    if file.is_empty() {
                        return Err(format!("`{c}` lacks a file name"));
                    }
                    sed_file(&file, matches!(c, 'w' | 'W'), f);
                }
                's' => self.substitute(f)?,
                'y' => {
                    let delim = self.peek().ok_or("unterminated `y`")?;
                    if matches!(delim, '\n' | '\\') {
                        return Err("bad `y` delimiter".into());
                    }
                    self.i += 1;
                    self.delimited(delim)?;
                    self.delimited(delim)?;
                    self.end_of_command()?;
                }
                other => return Err(format!("unknown command `{other}`")),
            }
        }
    }

    /// `a`, `i`, `c`: GNU's one-line form (`a text`) or the classic `a\`
    /// followed by lines, each ending in `\` continuing the text.
    fn text(&mut self) -> Result<(), String> {
        self.skip_blanks();
        if self.peek() == Some('\\') {
            self.i += 1;
            self.skip_blanks();
            if self.peek() == Some('\n') {
                self.i += 1;
            }
        }
        while let Some(c) = self.peek() {
            self.i += 1;
            if c == '\\' {
                self.i += 1;
            } else if c == '\n' {
                break;
            }
        }
        Ok(())
    }

    fn substitute(&mut self, f: &mut Findings) -> Result<(), String> {
        let delim = self.peek().ok_or("unterminated `s`")?;
        if matches!(delim, '\n' | '\\') {
            return Err("bad `s` delimiter".into());
        }
        self.i += 1;
        self.delimited(delim)?;
        self.delimited(delim)?;
        loop {
            let Some(c) = self.peek() else { return Ok(()) };
            match c {
                'g' | 'p' | 'i' | 'I' | 'm' | 'M' | '0'..='9' => self.i += 1,
                'e' => {
                    self.i += 1;
                    f.opaque(
                        OpaqueReason::InterpretedCode,
                        "sed `s///e` runs the pattern space as a command",
                    );
                }
                'w' => {
                    self.i += 1;
                    self.skip_blanks();
                    let file = self.rest_of_line()?;
                    if file.is_empty() {
                        return Err("`s///w` lacks a file name".into());
                    }
                    sed_file(&file, true, f);
                    return Ok(());
                }
                _ => return self.end_of_command(),
            }
        }
    }
}

pub(super) fn sed_file(file: &str, write: bool, f: &mut Findings) {
    match (file, write) {
        ("/dev/stdout" | "/dev/stderr", _) | ("/dev/stdin", false) => {}
        (_, true) => f.write_path(file, false),
        (_, false) => f.read_path(file, false),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn script(text: &str) -> Findings {
        let mut f = Findings::default();
        sed_script(text, &mut f);
        f
    }

    #[test]
    fn commands_that_reach_outside_the_stream() {
        let f = script(":a;N;$!ba;s/\\n/ /g;e touch x");
        assert!(f.opaque.is_empty(), "{:?}", f.opaque);
        assert_eq!(f.shell_texts[0].1, "touch x");
        let f = script("1{/x/{s/a/b/w out.txt\n}}");
        assert!(
            matches!(&f.effects[..], [Effect::Write { path, .. }] if path == "out.txt"),
            "{:?}",
            f.effects
        );
        let f = script("$!{N};s/x/y/gpe");
        assert!(!f.opaque.is_empty());
        let f = script("0,/re/I!r /etc/passwd");
        assert!(matches!(&f.effects[..], [Effect::Read { path, .. }] if path == "/etc/passwd"));
        // A label may not hide a command after `;`.
        let f = script("bend;e id\n:end");
        assert_eq!(f.shell_texts[0].1, "id");
        // `a` text is text, even when it looks like a command.
        let f = script("a e rm -rf /");
        assert!(f.shell_texts.is_empty() && f.opaque.is_empty());
    }

    #[test]
    fn scripts_sed_would_reject_are_opaque() {
        for s in ["s/a/b", "p x", "{p", "}", "k", "y/ab/c"] {
            assert!(!script(s).opaque.is_empty(), "{s}");
        }
    }

    #[test]
    fn backup_suffixes_name_a_written_file() {
        assert_eq!(backup_names("src/a.c", ".bak"), ["src/a.c.bak"]);
        assert_eq!(
            backup_names("src/a.c", "old_*"),
            ["old_src/a.c", "src/old_a.c"]
        );
        assert_eq!(backup_names("a", ".git/config*"), [".git/configa"]);
        assert_eq!(backup_names("a", "../.git/*"), ["../.git/a"]);
        assert_eq!(backup_names("x", "/../.git/config"), ["x/../.git/config"]);
    }
}
