//! Tar, zip, unzip, patch, archivers and dd.

use super::*;

pub(in crate::knowledge) fn tar(name: &str, args: &[Word], f: &mut Findings) {
    let mut mode = ' ';
    let mut archive: Option<&Word> = None;
    // `-C DIR` applies to the operands after it, in order (GNU tar).
    let mut dir: Option<(String, bool)> = None;
    let mut dirs: Vec<(String, bool)> = Vec::new();
    let mut absolute = false;
    let mut operands: Vec<(&Word, Option<(String, bool)>)> = Vec::new();
    let mut i = 0;
    let mut first = true;
    while let Some(w) = args.get(i) {
        let mut v = w.value.clone();
        // Old-style bundled first argument: `tar xzf file`.
        if first && !v.starts_with('-') && !w.dynamic {
            v = format!("-{v}");
        }
        first = false;
        if w.dynamic || !v.starts_with('-') {
            operands.push((w, dir.clone()));
            i += 1;
            continue;
        }
        if let Some(long) = v.strip_prefix("--") {
            let (opt, val) = match long.split_once('=') {
                Some((o, val)) => (o.to_string(), Some(val.to_string())),
                None => (long.to_string(), None),
            };
            let needs = matches!(
                opt.as_str(),
                "file"
                    | "directory"
                    | "to-command"
                    | "use-compress-program"
                    | "info-script"
                    | "new-volume-script"
                    | "checkpoint-action"
                    | "rsh-command"
                    | "exclude"
                    | "transform"
                    | "xform"
                    | "owner"
                    | "group"
                    | "mode"
                    | "mtime"
                    | "files-from"
                    | "exclude-from"
                    | "index-file"
                    | "format"
                    | "blocking-factor"
            );
            let value = match val {
                Some(v) => Some(v),
                None if needs && opt != "checkpoint-action" => {
                    i += 1;
                    args.get(i).map(|n| n.value.clone())
                }
                None => None,
            };
            match opt.as_str() {
                "extract" | "get" => mode = 'x',
                "create" => mode = 'c',
                "append" | "update" => mode = 'r',
                "list" => mode = 't',
                "file" => archive = args.get(i).filter(|_| value.is_some()),
                "directory" => {
                    if let Some(d) = value {
                        let dynamic = args.get(i).is_some_and(|w| w.dynamic);
                        dir = Some((d.clone(), dynamic));
                        dirs.push((d, dynamic));
                    }
                }
                "absolute-names" => absolute = true,
                "to-command" | "use-compress-program" | "rsh-command" => {
                    if let Some(cmd) = value {
                        f.code(name, format!("--{opt}"), "runs a command for the archive");
                        f.shell(format!("{name} --{opt}"), &cmd, false);
                    }
                }
                "checkpoint-action" => {
                    if let Some(action) = value {
                        if let Some(cmd) = action.strip_prefix("exec=") {
                            f.shell(format!("{name} --checkpoint-action"), cmd, false);
                        }
                        f.code(name, "--checkpoint-action", "runs an action at checkpoints");
                    }
                }
                "info-script" | "new-volume-script" => f.code(
                    name,
                    format!("--{opt}"),
                    "runs a script at the end of each volume",
                ),
                "files-from" | "exclude-from" => {
                    if let Some(p) = value {
                        f.read_path(&p, false);
                    }
                }
                _ => {}
            }
            i += 1;
            continue;
        }
        // `v` starts with `-` (one byte): the letters are the chars after it.
        let letters: Vec<char> = v.chars().skip(1).collect();
        for (k, c) in letters.iter().enumerate() {
            match c {
                'x' => mode = 'x',
                'c' => mode = 'c',
                'r' | 'u' => mode = 'r',
                't' => mode = 't',
                'P' => absolute = true,
                'f' | 'C' | 'I' | 'F' | 'T' | 'X' | 'b' | 'H' | 'L' | 'V' | 'N' | 'g' | 'K' => {
                    let attached: String = letters.iter().skip(k + 1).collect();
                    let value_word = if attached.is_empty() {
                        i += 1;
                        args.get(i)
                    } else {
                        None
                    };
                    let value = if attached.is_empty() {
                        value_word.map(|w| w.value.clone())
                    } else {
                        Some(attached)
                    };
                    match c {
                        'f' => archive = value_word.or(Some(w)),
                        'C' => {
                            if let Some(d) = value {
                                let dynamic = value_word.is_some_and(|w| w.dynamic);
                                dir = Some((d.clone(), dynamic));
                                dirs.push((d, dynamic));
                            }
                        }
                        'I' => {
                            if let Some(cmd) = value {
                                f.code(name, "-I", "runs a compression program");
                                f.shell(format!("{name} -I"), &cmd, false);
                            }
                        }
                        'F' => f.code(name, "-F", "runs a script at the end of each volume"),
                        'T' | 'X' => {
                            if let Some(p) = value {
                                f.read_path(&p, false);
                            }
                        }
                        _ => {}
                    }
                    break;
                }
                _ => {}
            }
        }
        i += 1;
    }
    let archive_path = archive.map(|w| (w.value.trim_start_matches("-f").to_string(), w.dynamic));
    match mode {
        'x' => {
            if let Some((p, d)) = &archive_path {
                f.read_path(p, *d);
            }
            if absolute {
                f.write_path("/", true);
                f.code(name, "-P", "extracts members to absolute paths anywhere");
            } else if dirs.is_empty() {
                f.write_path(".", true);
            } else {
                for (d, _) in &dirs {
                    f.write_path(d, true);
                }
            }
        }
        'c' | 'r' => {
            if let Some((p, d)) = &archive_path {
                f.write_path(p, *d);
            }
            for (o, d) in operands {
                match d {
                    Some((d, dynamic)) if !o.value.starts_with('/') => {
                        f.read_path(&super::super::join_path(&d, &o.value), dynamic || o.dynamic)
                    }
                    _ => f.read(o),
                }
            }
        }
        _ => {
            if let Some((p, d)) = &archive_path {
                f.read_path(p, *d);
            }
        }
    }
}

/// `patch` without a file operand writes the files its patch names: read off
/// a patch given as text here (every `-pN` strip of each `---`/`+++` name, so
/// a `.git/hooks/…` inside is seen whatever `-p` says), else known only at
/// run time.
pub(in crate::knowledge) fn patch(
    spec: &ProgramSpec,
    args: &[Word],
    stdin: &str,
    f: &mut Findings,
) {
    let s = split(spec, args);
    if !s.operands.is_empty()
        || s.options
            .iter()
            .any(|(o, _, _)| o == "-o" || o == "--output")
    {
        return;
    }
    let dir = s
        .options
        .iter()
        .find(|(o, _, _)| o == "-d" || o == "--directory")
        .and_then(|(_, _, v)| v.clone());
    let from_file = s
        .options
        .iter()
        .any(|(o, _, _)| o == "-i" || o == "--input");
    let names: Vec<&str> = if from_file {
        Vec::new()
    } else {
        stdin
            .lines()
            .filter_map(|l| l.strip_prefix("+++ ").or_else(|| l.strip_prefix("--- ")))
            .map(|n| n.split('\t').next().unwrap_or(n).trim())
            .filter(|n| !n.is_empty() && *n != "/dev/null")
            .collect()
    };
    if names.is_empty() {
        f.effects.push(Effect::Write {
            path: dir.unwrap_or_else(|| ".".into()),
            dynamic: true,
        });
        return;
    }
    let base = dir.map(|d| format!("{d}/")).unwrap_or_default();
    for name in names {
        let parts: Vec<&str> = name.split('/').collect();
        for strip in 0..parts.len() {
            let rest = parts.get(strip..).unwrap_or_default().join("/");
            if !rest.is_empty() {
                f.write_path(&format!("{base}{rest}"), false);
            }
        }
    }
}

/// `7z`, `cpio` and `ar`: extracting writes the paths the archive names
/// (cpio even absolute ones), known only at run time; creating reads the files
/// named (cpio reads their names from standard input) and writes the archive.
pub(in crate::knowledge) fn archiver(name: &str, args: &[Word], f: &mut Findings) {
    let extracted = |f: &mut Findings, dir: Option<String>| {
        f.effects.push(Effect::Write {
            path: dir.unwrap_or_else(|| ".".into()),
            dynamic: true,
        })
    };
    match name {
        "cpio" => {
            let has = |short: char, long: &str| {
                args.iter().any(|w| {
                    let v = w.value.as_str();
                    v == long
                        || (v.starts_with('-') && !v.starts_with("--") && v[1..].contains(short))
                })
            };
            let dir = args
                .iter()
                .position(|w| w.value == "-D" || w.value == "--directory")
                .and_then(|i| args.get(i + 1))
                .map(|w| w.value.clone());
            if has('i', "--extract") {
                extracted(f, dir);
            } else if has('o', "--create") || has('p', "--pass-through") {
                f.effects.push(Effect::Read {
                    path: ".".into(),
                    dynamic: true,
                });
                if has('p', "--pass-through") {
                    extracted(f, args.last().map(|w| w.value.clone()));
                }
            }
        }
        _ => {
            // 7z COMMAND [switches] ARCHIVE [FILES]; ar KEYLETTERS ARCHIVE [FILES].
            let mut words = args.iter().filter(|w| !w.value.starts_with('-'));
            let command = words
                .next()
                .map(|w| w.value.trim_start_matches('-').to_string());
            let archive = words.next();
            let files: Vec<&Word> = words.collect();
            let command = command.unwrap_or_default();
            let op = if name == "ar" {
                command.chars().find(|c| "dmpqrstx".contains(*c))
            } else {
                command.chars().next()
            };
            let out_dir = args
                .iter()
                .find_map(|w| w.value.strip_prefix("-o").filter(|d| !d.is_empty()))
                .map(str::to_string);
            match op {
                Some('x' | 'e') => {
                    if let Some(a) = archive {
                        f.read(a);
                    }
                    extracted(f, out_dir);
                }
                Some('a' | 'u' | 'd' | 'r' | 'q' | 'm' | 's') => {
                    if let Some(a) = archive {
                        f.write(a);
                    }
                    files.iter().for_each(|w| f.read(w));
                }
                Some(_) => {
                    if let Some(a) = archive {
                        f.read(a);
                    }
                }
                None => {}
            }
        }
    }
}

/// `unzip` writes the files its archive names (unless it only lists, tests or
/// prints them): known only at run time.
pub(in crate::knowledge) fn unzip(args: &[Word], f: &mut Findings) {
    let only_reads = args.iter().any(|w| {
        let v = w.value.as_str();
        v.starts_with('-')
            && !v.starts_with("--")
            && v[1..].contains(['l', 't', 'v', 'p', 'Z', 'z'])
    });
    if only_reads {
        return;
    }
    let dir = args
        .iter()
        .position(|w| w.value == "-d")
        .and_then(|i| args.get(i + 1))
        .map(|w| w.value.clone());
    f.effects.push(Effect::Write {
        path: dir.unwrap_or_else(|| ".".into()),
        dynamic: true,
    });
}

pub(in crate::knowledge) fn zip(spec: &ProgramSpec, args: &[Word], f: &mut Findings) {
    let s = split(spec, args);
    // `-TT cmd` is parsed as bundled -T -T by the splitter; look for it directly.
    for pair in args.windows(2) {
        let [w, value] = pair else { continue };
        if w.value == "-TT" || w.value == "--unzip-command" {
            f.code("zip", "-TT", "runs a command to test the archive");
            f.shell("zip -TT", &value.value, value.dynamic);
        }
    }
    if let Some(v) = args
        .iter()
        .find_map(|w| w.value.strip_prefix("--unzip-command="))
    {
        f.shell("zip --unzip-command", v, false);
    }
    let mut ops = s.operands.iter();
    if let Some(archive) = ops.next() {
        f.write(archive);
    }
    for o in ops {
        f.read(o);
    }
}

pub(in crate::knowledge) fn dd(args: &[Word], f: &mut Findings) {
    for w in args {
        if let Some(p) = w.value.strip_prefix("if=") {
            f.read_path(p, w.dynamic);
        } else if let Some(p) = w.value.strip_prefix("of=") {
            f.write_path(p, w.dynamic);
        }
    }
}
