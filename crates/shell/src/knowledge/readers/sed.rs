//! Sed: scripts, in-place edits, the commands that read, write or run.

use super::*;

pub(in crate::knowledge) fn sed(args: &[Word], f: &mut Findings) {
    let mut scripts: Vec<&Word> = Vec::new();
    let mut operands: Vec<&Word> = Vec::new();
    let mut in_place = false;
    let mut has_script_opt = false;
    let mut i = 0;
    let mut only_operands = false;
    while i < args.len() {
        let w = &args[i];
        let v = w.value.as_str();
        if only_operands || w.dynamic || !v.starts_with('-') || v == "-" {
            operands.push(w);
            i += 1;
            continue;
        }
        if v == "--" {
            only_operands = true;
            i += 1;
            continue;
        }
        // What the option (or the last letter of a bundle such as `-ne`) takes.
        // `-i[SUFFIX]` takes an attached suffix, so `-ie` is in-place with suffix `e`.
        let (takes_script, takes_file) = if let Some(long) = v.strip_prefix("--") {
            in_place |= long.starts_with("in-place");
            if long.starts_with("expression=") {
                has_script_opt = true;
                scripts.push(w);
            }
            (long == "expression", long == "file")
        } else if v.starts_with("-i") {
            in_place = true;
            (false, false)
        } else {
            in_place |= v.contains('i');
            (v.ends_with('e'), v.ends_with('f'))
        };
        if takes_script || takes_file {
            has_script_opt = true;
            if let Some(next) = args.get(i + 1) {
                if takes_script {
                    scripts.push(next);
                } else {
                    f.read(next);
                    f.opaque(
                        OpaqueReason::InterpretedCode,
                        format!("sed script file {} (may run commands with `e`)", next.value),
                    );
                }
            }
            i += 1;
        }
        i += 1;
    }
    if !has_script_opt && !operands.is_empty() {
        scripts.push(operands.remove(0));
    }
    for s in scripts {
        let text = s.value.strip_prefix("--expression=").unwrap_or(&s.value);
        if s.dynamic {
            f.opaque(
                OpaqueReason::InterpretedCode,
                format!("sed script known only at run time: {text}"),
            );
        } else {
            sed_script(text, f);
        }
    }
    for o in operands {
        if in_place {
            f.write(o);
        }
        f.read(o);
    }
}

/// Reads a sed script for the commands that touch files or run programs:
/// `e`, `s///e`, `w`/`W`, `s///w`, `r`/`R`.
pub(super) fn sed_script(script: &str, f: &mut Findings) {
    let chars: Vec<char> = script.chars().collect();
    let mut i = 0;
    let rest_of_line = |i: &mut usize| -> String {
        let start = *i;
        while *i < chars.len() && chars[*i] != '\n' {
            *i += 1;
        }
        chars[start..*i]
            .iter()
            .collect::<String>()
            .trim()
            .to_string()
    };
    while i < chars.len() {
        let c = chars[i];
        // Addresses.
        if c.is_ascii_digit()
            || matches!(
                c,
                '$' | ',' | '!' | '~' | '+' | ' ' | '\t' | ';' | '\n' | '{' | '}'
            )
        {
            i += 1;
            continue;
        }
        if c == '/' || c == '\\' {
            let delim = if c == '\\' {
                i += 1;
                chars.get(i).copied().unwrap_or('/')
            } else {
                '/'
            };
            i += 1;
            while i < chars.len() && chars[i] != delim {
                if chars[i] == '\\' {
                    i += 1;
                }
                i += 1;
            }
            i += 1;
            // `I` / `M` address flags.
            while i < chars.len() && matches!(chars[i], 'I' | 'M') {
                i += 1;
            }
            continue;
        }
        i += 1;
        match c {
            's' | 'y' => {
                let Some(&delim) = chars.get(i) else { break };
                i += 1;
                for _ in 0..2 {
                    while i < chars.len() && chars[i] != delim {
                        if chars[i] == '\\' {
                            i += 1;
                        }
                        i += 1;
                    }
                    i += 1;
                }
                if c == 'y' {
                    continue;
                }
                // Flags.
                while i < chars.len() && !matches!(chars[i], ';' | '\n' | '}') {
                    match chars[i] {
                        'e' => f.opaque(
                            OpaqueReason::InterpretedCode,
                            format!("sed s///e runs the pattern space as a command: {script}"),
                        ),
                        'w' => {
                            i += 1;
                            let file = rest_of_line(&mut i);
                            sed_file(&file, true, f);
                            break;
                        }
                        _ => {}
                    }
                    i += 1;
                }
            }
            'e' => {
                let cmd = rest_of_line(&mut i);
                if cmd.is_empty() {
                    f.opaque(
                        OpaqueReason::InterpretedCode,
                        format!("sed e runs the pattern space as a command: {script}"),
                    );
                } else {
                    f.shell("sed e", &cmd, false);
                }
            }
            'w' | 'W' => {
                let file = rest_of_line(&mut i);
                sed_file(&file, true, f);
            }
            'r' | 'R' => {
                let file = rest_of_line(&mut i);
                sed_file(&file, false, f);
            }
            'a' | 'i' | 'c' | ':' | 'b' | 't' | 'T' | 'q' | 'Q' | 'l' | 'L' => {
                // Text or a label runs to the end of the line (or `;` for labels).
                while i < chars.len()
                    && chars[i] != '\n'
                    && !(matches!(c, 'b' | 't' | 'T' | 'q' | 'Q' | 'l' | 'L') && chars[i] == ';')
                {
                    if chars[i] == '\\' {
                        i += 1;
                    }
                    i += 1;
                }
            }
            '=' | 'd' | 'D' | 'n' | 'N' | 'p' | 'P' | 'h' | 'H' | 'g' | 'G' | 'x' | 'z' | 'F'
            | '#' => {
                if c == '#' {
                    rest_of_line(&mut i);
                }
            }
            'v' => {
                rest_of_line(&mut i);
            }
            _ => {
                f.opaque(
                    OpaqueReason::InterpretedCode,
                    format!("sed script not understood at '{c}': {script}"),
                );
                return;
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
