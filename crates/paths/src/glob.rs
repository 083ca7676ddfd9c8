//! Expanding an unquoted glob the way bash does, so the policy can judge the
//! files it would name. Directory reads only; bounded.

/// Most matches before giving up (the caller then treats the glob as unknown).
const MAX_MATCHES: usize = 1000;

/// The paths `pattern` matches below `cwd`, or `None` when it cannot tell.
/// `*` and `?` within a component; no `**`, no brackets (the caller only
/// passes plain globs). Hidden entries match only a component starting with `.`.
pub(crate) fn expand(pattern: &str, cwd: &str) -> Option<Vec<String>> {
    let absolute = pattern.starts_with('/');
    let components: Vec<&str> = pattern.split('/').filter(|c| !c.is_empty()).collect();
    let mut found: Vec<String> = vec![if absolute {
        "/".to_string()
    } else {
        String::new()
    }];
    for (k, comp) in components.iter().enumerate() {
        let last = k + 1 == components.len();
        let mut next = Vec::new();
        for prefix in &found {
            let join = |name: &str| match prefix.as_str() {
                "" => name.to_string(),
                "/" => format!("/{name}"),
                p => format!("{p}/{name}"),
            };
            if !comp.contains(['*', '?']) {
                next.push(join(comp));
                continue;
            }
            let dir = match prefix.as_str() {
                "" => cwd.to_string(),
                p if p.starts_with('/') => p.to_string(),
                p => format!("{cwd}/{p}"),
            };
            let entries = match std::fs::read_dir(&dir) {
                Ok(e) => e,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                Err(_) => return None,
            };
            for entry in entries {
                let name = entry.ok()?.file_name().into_string().ok()?;
                if name.starts_with('.') && !comp.starts_with('.') {
                    continue;
                }
                if portcullis_policy::rules::glob_component(comp, &name) {
                    next.push(join(&name));
                    if next.len() > MAX_MATCHES {
                        return None;
                    }
                }
            }
        }
        // Only existing paths survive a wildcard component; literal ones are
        // checked at the end.
        found = next;
        if !last && found.is_empty() {
            return Some(Vec::new());
        }
    }
    let mut existing: Vec<String> = found
        .into_iter()
        .filter(|p| {
            let full = if p.starts_with('/') {
                p.clone()
            } else {
                format!("{cwd}/{p}")
            };
            std::fs::symlink_metadata(full).is_ok()
        })
        .collect();
    existing.sort();
    Some(existing)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expands_like_bash() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        std::fs::create_dir(d.join("src")).unwrap();
        for f in ["src/a.rs", "src/b.rs", "src/c.txt", "src/.hidden.rs"] {
            std::fs::write(d.join(f), "").unwrap();
        }
        let cwd = d.to_str().unwrap();
        assert_eq!(expand("src/*.rs", cwd).unwrap(), ["src/a.rs", "src/b.rs"]);
        assert_eq!(expand("src/.*.rs", cwd).unwrap(), ["src/.hidden.rs"]);
        assert_eq!(expand("*/?.txt", cwd).unwrap(), ["src/c.txt"]);
        assert!(expand("nope/*.rs", cwd).unwrap().is_empty());
        let abs = format!("{cwd}/src/*.txt");
        assert_eq!(expand(&abs, "/").unwrap(), [format!("{cwd}/src/c.txt")]);
    }
}
