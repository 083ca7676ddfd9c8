//! Find: its expression language (actions that run, write or delete).

use super::*;

/// `find` tests and actions that take one argument.
pub(super) const FIND_ONE_ARG: &[&str] = &[
    "-name",
    "-iname",
    "-path",
    "-ipath",
    "-wholename",
    "-iwholename",
    "-regex",
    "-iregex",
    "-lname",
    "-ilname",
    "-type",
    "-xtype",
    "-maxdepth",
    "-mindepth",
    "-newer",
    "-anewer",
    "-cnewer",
    "-perm",
    "-user",
    "-group",
    "-uid",
    "-gid",
    "-size",
    "-mtime",
    "-atime",
    "-ctime",
    "-mmin",
    "-amin",
    "-cmin",
    "-used",
    "-links",
    "-inum",
    "-samefile",
    "-fstype",
    "-printf",
    "-regextype",
    "-context",
    "-files0-from",
    "-D",
    "-O",
];

pub(in crate::knowledge) fn find(args: &[Word], f: &mut Findings) {
    // Leading paths (and -H/-L/-P) come before the expression.
    let mut i = 0;
    let mut roots = Vec::new();
    while let Some(w) = args.get(i) {
        let v = w.value.as_str();
        if matches!(v, "-H" | "-L" | "-P") {
            i += 1;
            continue;
        }
        if v.starts_with('-') || v == "(" || v == "!" || v == "," {
            break;
        }
        roots.push(w);
        i += 1;
    }
    if roots.is_empty() {
        f.read_path(".", false);
    }
    for r in &roots {
        f.read(r);
    }
    while let Some(w) = args.get(i) {
        let v = w.value.as_str();
        if w.dynamic && v.starts_with('-') {
            f.opaque(
                OpaqueReason::DynamicCode,
                format!("find expression known only at run time: {v}"),
            );
        }
        match v {
            "-exec" | "-execdir" | "-ok" | "-okdir" => {
                let start = i + 1;
                let mut end = start;
                while args
                    .get(end)
                    .is_some_and(|w| w.value != ";" && w.value != "+")
                {
                    end += 1;
                }
                if end == args.len() {
                    f.opaque(
                        OpaqueReason::ParseError,
                        format!("find {v} without ';' or '+'"),
                    );
                }
                // Ranges index `words`, where args start at 1.
                f.commands
                    .push((format!("find {v}"), start + 1..end + 1, Some("{}".into())));
                i = end + 1;
                continue;
            }
            "-delete" => {
                if roots.is_empty() {
                    f.effects.push(Effect::Delete {
                        path: ".".into(),
                        dynamic: true,
                    });
                }
                for r in &roots {
                    f.effects.push(Effect::Delete {
                        path: r.value.clone(),
                        dynamic: true,
                    });
                }
            }
            "-fprint" | "-fprint0" | "-fls" => {
                if let Some(file) = args.get(i + 1) {
                    f.write(file);
                }
                i += 1;
            }
            "-fprintf" => {
                if let Some(file) = args.get(i + 1) {
                    f.write(file);
                }
                i += 2;
            }
            _ if FIND_ONE_ARG.contains(&v) || v.starts_with("-newer") => i += 1,
            _ => {}
        }
        i += 1;
    }
}
