//! Awk: programs that run commands or write files.

use super::*;

pub(in crate::knowledge) fn awk(name: &str, args: &[Word], f: &mut Findings) {
    let mut program: Option<&Word> = None;
    let mut from_file = false;
    let mut i = 0;
    let mut operands = Vec::new();
    while i < args.len() {
        let w = &args[i];
        let v = w.value.as_str();
        if !w.dynamic
            && v.starts_with('-')
            && v.len() > 1
            && operands.is_empty()
            && program.is_none()
        {
            match v {
                "-f" | "--file" | "-E" | "--exec" | "-i" | "--include" | "-l" | "--load" => {
                    if let Some(file) = args.get(i + 1) {
                        f.read(file);
                        f.code(
                            name,
                            v,
                            format!("runs or loads the awk code in {}", file.value),
                        );
                        f.opaque(
                            OpaqueReason::InterpretedCode,
                            format!("{name} {v} {}", file.value),
                        );
                    }
                    from_file |= matches!(v, "-f" | "--file" | "-E" | "--exec");
                    i += 2;
                    continue;
                }
                "-e" | "--source" => {
                    // gawk: program text given as an option.
                    if let Some(text) = args.get(i + 1) {
                        if text.dynamic {
                            f.opaque(
                                OpaqueReason::InterpretedCode,
                                format!("{name} program known only at run time: {}", text.value),
                            );
                        } else {
                            awk_program(name, &text.value, f);
                        }
                    }
                    from_file = true;
                    i += 2;
                    continue;
                }
                "-v" | "-F" | "--assign" | "--field-separator" => {
                    i += 2;
                    continue;
                }
                "--" => {
                    i += 1;
                    continue;
                }
                _ => {
                    i += 1;
                    continue;
                }
            }
        }
        if program.is_none() && !from_file {
            program = Some(w);
        } else {
            operands.push(w);
        }
        i += 1;
    }
    if let Some(p) = program {
        if p.dynamic {
            f.opaque(
                OpaqueReason::InterpretedCode,
                format!("{name} program known only at run time: {}", p.value),
            );
        } else {
            awk_program(name, &p.value, f);
        }
    }
    for o in operands {
        if !o.value.contains('=') || o.value.starts_with('/') || o.value.starts_with('.') {
            f.read(o);
        }
    }
}

/// awk runs commands through `system()` and pipes (`print | "cmd"`,
/// `"cmd" | getline`), and writes files with `print > "file"`.
pub(super) fn awk_program(name: &str, text: &str, f: &mut Findings) {
    let stripped = strip_awk_strings(text);
    if stripped.contains("system") || stripped.contains('|') {
        f.opaque(
            OpaqueReason::InterpretedCode,
            format!("{name} program runs commands: {text}"),
        );
    }
    // gawk's `@load "ext"` loads a shared library, `@include "f.awk"` more code.
    if stripped.contains("@load") || stripped.contains("@include") {
        f.code(name, "@load", "loads an extension library or a source file");
        f.opaque(
            OpaqueReason::CodeFromFile,
            format!("{name} program loads code from files: {text}"),
        );
    }
    // `> "file"` / `>> "file"` after print/printf.
    let b = text.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'>' {
            let mut j = i + 1;
            if j < b.len() && b[j] == b'>' {
                j += 1;
            }
            while j < b.len() && b[j] == b' ' {
                j += 1;
            }
            if j < b.len() && b[j] == b'"' {
                if let Some(end) = text[j + 1..].find('"') {
                    let before = &text[..i];
                    if before.contains("print") {
                        f.write_path(&text[j + 1..j + 1 + end], false);
                    }
                }
            } else if j < b.len() && before_is_print(&text[..i]) && !b[j].is_ascii_digit() {
                f.opaque(
                    OpaqueReason::InterpretedCode,
                    format!("{name} writes to a file named at run time: {text}"),
                );
            }
            i = j;
            continue;
        }
        i += 1;
    }
    if stripped.contains("getline") && stripped.contains('<') {
        f.opaque(
            OpaqueReason::InterpretedCode,
            format!("{name} reads files named in its program: {text}"),
        );
    }
}

pub(super) fn before_is_print(before: &str) -> bool {
    let last_stmt = before.rsplit([';', '{', '\n']).next().unwrap_or(before);
    last_stmt.trim_start().starts_with("print")
}

/// The program text with string literals blanked, so `"a|b"` is not a pipe.
pub(super) fn strip_awk_strings(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut in_str = false;
    let mut escaped = false;
    for c in text.chars() {
        if in_str {
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == '"' {
                in_str = false;
                out.push('"');
            }
            continue;
        }
        if c == '"' {
            in_str = true;
        }
        out.push(c);
    }
    out
}
