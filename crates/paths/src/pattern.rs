//! The small pattern language of the protected and secret tables, and its
//! matcher over path components.
//!
//! A pattern is an anchor, then `/`-separated components, then optionally
//! `/**`:
//!
//! - anchors: `/` (absolute), `~/` (the user's home), `~root/` (root's home),
//!   `$config` / `$data` (portcullis' directories), `**/` (at any depth);
//! - a component is literal, or a glob with `*` (any run of characters) and
//!   `?` (one character) — never crossing a `/`;
//! - a trailing `/**` means "this and everything under it"; without it the
//!   pattern names exactly one path.

/// Where a pattern starts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Anchor {
    /// `**/…`: the components may start at any depth.
    Anywhere,
    /// `/…`
    Root,
    /// `~/…`
    Home,
    /// `~root/…`
    RootHome,
    /// `$config/…`
    ConfigDir,
    /// `$data/…`
    DataDir,
}

/// One component of a pattern.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Seg {
    Lit(&'static str),
    Glob(&'static str),
}

impl Seg {
    fn matches(self, comp: &str) -> bool {
        match self {
            Seg::Lit(l) => l == comp,
            Seg::Glob(g) => glob(g.as_bytes(), comp.as_bytes()),
        }
    }
}

/// A parsed pattern.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Parsed {
    pub anchor: Anchor,
    pub segs: Vec<Seg>,
    /// Ends in `/**`.
    pub tree: bool,
}

/// Parses a table pattern. Returns `None` for a malformed one (a `**` that is
/// not leading or trailing, an unknown anchor); the tables are checked by a
/// test, so this never happens at run time.
pub(crate) fn parse(pattern: &'static str) -> Option<Parsed> {
    let (anchor, body) = if let Some(b) = pattern.strip_prefix("**/") {
        (Anchor::Anywhere, b)
    } else if let Some(b) = pattern.strip_prefix("~root/") {
        (Anchor::RootHome, b)
    } else if let Some(b) = pattern.strip_prefix("~/") {
        (Anchor::Home, b)
    } else if let Some(b) = pattern.strip_prefix("$config/") {
        (Anchor::ConfigDir, b)
    } else if let Some(b) = pattern.strip_prefix("$data/") {
        (Anchor::DataDir, b)
    } else if let Some(b) = pattern.strip_prefix('/') {
        (Anchor::Root, b)
    } else {
        return None;
    };
    let (segs, tree) = parse_relative(body)?;
    if anchor == Anchor::Anywhere && segs.is_empty() {
        return None;
    }
    Some(Parsed { anchor, segs, tree })
}

/// Parses the part of a pattern after its anchor: components, then
/// optionally `/**` (or just `**`). Used for table exceptions too.
pub(crate) fn parse_relative(body: &'static str) -> Option<(Vec<Seg>, bool)> {
    let (body, tree) = match body.strip_suffix("/**") {
        Some(b) => (b, true),
        None if body == "**" => ("", true),
        None => (body, false),
    };
    let mut segs = Vec::new();
    for comp in body.split('/').filter(|c| !c.is_empty()) {
        if comp.contains("**") || comp == "." || comp == ".." || comp.starts_with(['~', '$']) {
            return None;
        }
        segs.push(if comp.contains(['*', '?']) {
            Seg::Glob(comp)
        } else {
            Seg::Lit(comp)
        });
    }
    Some((segs, tree))
}

/// Whether `comps` is exactly `segs` (or, with `tree`, starts with them).
pub(crate) fn matches_from(segs: &[Seg], tree: bool, comps: &[&str]) -> bool {
    if comps.len() < segs.len() || (!tree && comps.len() != segs.len()) {
        return false;
    }
    segs.iter().zip(comps).all(|(s, c)| s.matches(c))
}

/// Whether `comps` (at least one) is a proper beginning of `segs`: a
/// directory above what the pattern names (`.git` for `.git/hooks`).
pub(crate) fn begins(segs: &[Seg], comps: &[&str]) -> bool {
    !comps.is_empty()
        && comps.len() < segs.len()
        && segs.iter().zip(comps).all(|(s, c)| s.matches(c))
}

/// Shell-style wildcard match of one component: `*` any run, `?` one byte.
fn glob(pat: &[u8], text: &[u8]) -> bool {
    let (mut p, mut t) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while let Some(&tc) = text.get(t) {
        let pc = pat.get(p).copied();
        if pc.is_some_and(|c| c == b'?' || c == tc) {
            p += 1;
            t += 1;
        } else if pc == Some(b'*') {
            star = Some((p, t));
            p += 1;
        } else if let Some((sp, st)) = star {
            p = sp + 1;
            t = st + 1;
            star = Some((sp, st + 1));
        } else {
            return false;
        }
    }
    pat.iter().skip(p).all(|&b| b == b'*')
}

/// Whether the normalised absolute path `path` is `dir` or lies under it,
/// component-wise (`/proj` is not under `/pro`, nor `/proj_evil` under
/// `/proj`). Both must be normalised (no `//`, `.`, `..`, trailing slash).
pub(crate) fn is_under(path: &str, dir: &str) -> bool {
    if dir == "/" {
        return path.starts_with('/');
    }
    match path.strip_prefix(dir) {
        Some("") => true,
        Some(rest) => rest.starts_with('/'),
        None => false,
    }
}

/// The components of a normalised absolute path (`/` has none).
pub(crate) fn components(path: &str) -> Vec<&str> {
    path.split('/').filter(|c| !c.is_empty()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs() {
        assert!(glob(b"*.pem", b"server.pem"));
        assert!(glob(b"*.pem", b".pem"));
        assert!(!glob(b"*.pem", b"server.pem.bak"));
        assert!(glob(b".yarnrc*", b".yarnrc.yml"));
        assert!(glob(b".yarnrc*", b".yarnrc"));
        assert!(!glob(b".yarnrc*", b"yarnrc"));
        assert!(glob(b"lib*", b"lib64"));
        assert!(glob(b"a*b*c", b"aXXbYYc"));
        assert!(!glob(b"a*b*c", b"aXXbYY"));
        assert!(glob(b"?d", b"id"));
        assert!(!glob(b"?d", b"d"));
    }

    #[test]
    fn under_is_component_wise() {
        assert!(is_under("/proj", "/proj"));
        assert!(is_under("/proj/a", "/proj"));
        assert!(!is_under("/proj_evil", "/proj"));
        assert!(!is_under("/proj_evil/a", "/proj"));
        assert!(!is_under("/pro", "/proj"));
        assert!(is_under("/anything", "/"));
        assert!(is_under("/", "/"));
    }

    #[test]
    fn parses() {
        let p = parse("**/.git/hooks/**").unwrap();
        assert_eq!(p.anchor, Anchor::Anywhere);
        assert_eq!(p.segs, vec![Seg::Lit(".git"), Seg::Lit("hooks")]);
        assert!(p.tree);
        let p = parse("/lib*/**").unwrap();
        assert_eq!(p.anchor, Anchor::Root);
        assert_eq!(p.segs, vec![Seg::Glob("lib*")]);
        let p = parse("$config/**").unwrap();
        assert_eq!(p.anchor, Anchor::ConfigDir);
        assert!(p.segs.is_empty() && p.tree);
        assert_eq!(
            parse("~root/.bash_history").unwrap().anchor,
            Anchor::RootHome
        );
        assert_eq!(parse("relative"), None);
        assert_eq!(parse("/a/**/b"), None);
        assert_eq!(parse("**/**"), None);
    }

    #[test]
    fn matches_segments() {
        let segs = [Seg::Lit(".git"), Seg::Lit("config")];
        assert!(matches_from(&segs, false, &[".git", "config"]));
        assert!(!matches_from(&segs, false, &[".git", "config", "x"]));
        assert!(matches_from(&segs, true, &[".git", "config", "x"]));
        assert!(!matches_from(&segs, true, &[".git"]));
    }
}
