//! What the audit log may say about a command: its text with secret-looking
//! values masked. The log must never hold a token or a password an agent put
//! on a command line; it should still let a person see what ran.
//!
//! Masked: the value of an assignment or an option whose name is
//! secret-shaped (`GITHUB_TOKEN=…`, `--password=…`, `--token …`), the
//! credentials of a URL (`https://user:pass@host`), an `Authorization:`
//! header's value, and words shaped like well-known tokens (`ghp_…`,
//! `sk-…`, `AKIA…`, `xoxb-…`, `glpat-…`) or like long random keys.

/// The mask written in place of a secret.
pub const MASK: &str = "***";

/// Option names whose value is a secret (`--token VALUE`, `--token=VALUE`).
const SECRET_OPTIONS: &[&str] = &[
    "--password",
    "--passwd",
    "--pass",
    "--token",
    "--api-key",
    "--apikey",
    "--secret",
    "--client-secret",
    "--access-token",
    "--auth-token",
    "--private-key",
];

/// Prefixes of well-known token formats.
const TOKEN_PREFIXES: &[&str] = &[
    "ghp_",
    "gho_",
    "ghu_",
    "ghs_",
    "ghr_",
    "github_pat_",
    "sk-",
    "sk_live_",
    "rk_live_",
    "xoxb-",
    "xoxp-",
    "xoxa-",
    "xoxs-",
    "glpat-",
    "AKIA",
    "ASIA",
    "AIza",
    "npm_",
    "hf_",
];

/// `text` with secret-looking values masked. `secret_name` says whether a
/// variable name is secret-shaped (the policy's `secret_env` shapes).
pub fn command(text: &str, secret_name: &dyn Fn(&str) -> bool) -> String {
    let mut out = String::with_capacity(text.len());
    let mut mask_next = 0usize;
    for piece in split_keeping_spaces(text) {
        if piece.chars().all(char::is_whitespace) {
            out.push_str(piece);
            continue;
        }
        if mask_next > 0 {
            out.push_str(MASK);
            mask_next -= 1;
            continue;
        }
        let (masked, next) = word(piece, secret_name);
        out.push_str(&masked);
        mask_next = next;
    }
    out
}

/// Splits into words and the runs of whitespace between them.
fn split_keeping_spaces(text: &str) -> Vec<&str> {
    let mut pieces = Vec::new();
    let mut start = 0;
    let mut in_space = None;
    for (i, c) in text.char_indices() {
        let space = c.is_whitespace();
        match in_space {
            Some(was) if was != space => {
                pieces.push(&text[start..i]);
                start = i;
            }
            _ => {}
        }
        in_space = Some(space);
    }
    if start < text.len() {
        pieces.push(&text[start..]);
    }
    pieces
}

/// One word masked, and how many of the words after it are secrets (an
/// option's value; an `Authorization:` header's scheme and credentials).
fn word(w: &str, secret_name: &dyn Fn(&str) -> bool) -> (String, usize) {
    let bare = w.trim_matches(|c| c == '"' || c == '\'');
    // An option that takes the secret as its next word, or after `=`.
    if let Some((name, _)) = bare.split_once('=') {
        if SECRET_OPTIONS.contains(&name) {
            return (format!("{name}={MASK}"), 0);
        }
        // NAME=value (an assignment, `env NAME=value`, `-e NAME=value`).
        if is_variable_name(name)
            && (secret_name(name) || looks_like_token(&bare[name.len() + 1..]))
        {
            return (format!("{name}={MASK}"), 0);
        }
    }
    if SECRET_OPTIONS.contains(&bare) {
        return (w.to_string(), 1);
    }
    // `Authorization: Bearer …` in a header argument: the scheme and the
    // credentials after it.
    let lower = bare.to_ascii_lowercase();
    if let Some(at) = lower.find("authorization:") {
        let end = at + "authorization:".len();
        if end == bare.len() {
            return (w.to_string(), 2);
        }
        return (format!("{} {MASK}", &bare[..end]), 1);
    }
    // URL credentials.
    if let Some(scheme_end) = bare.find("://") {
        let rest = &bare[scheme_end + 3..];
        let host_end = rest.find('/').unwrap_or(rest.len());
        if let Some(at) = rest[..host_end].rfind('@') {
            let userinfo = &rest[..at];
            let user = userinfo.split(':').next().unwrap_or("");
            let masked = if userinfo.contains(':') {
                format!("{user}:{MASK}")
            } else {
                MASK.to_string()
            };
            return (
                format!("{}{masked}{}", &bare[..scheme_end + 3], &rest[at..]),
                0,
            );
        }
    }
    if looks_like_token(bare) {
        return (MASK.to_string(), 0);
    }
    (w.to_string(), 0)
}

fn is_variable_name(name: &str) -> bool {
    !name.is_empty()
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !name.starts_with(|c: char| c.is_ascii_digit())
}

/// A well-known token format, or a long run of letters and digits mixed
/// (32 or more: a key, not a word or a path).
fn looks_like_token(w: &str) -> bool {
    if TOKEN_PREFIXES
        .iter()
        .any(|p| w.starts_with(p) && w.len() >= p.len() + 12)
    {
        return true;
    }
    w.len() >= 32
        && w.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '/' | '=' | '_' | '-'))
        && w.chars().any(|c| c.is_ascii_digit())
        && w.chars().any(|c| c.is_ascii_alphabetic())
        && !w.contains('/')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn secret(name: &str) -> bool {
        name.ends_with("_TOKEN") || name.ends_with("_KEY") || name.contains("PASSWORD")
    }

    #[test]
    fn secrets_are_masked_and_the_rest_kept() {
        let cases = [
            ("git status", "git status"),
            (
                "GITHUB_TOKEN=abc123 gh pr list",
                "GITHUB_TOKEN=*** gh pr list",
            ),
            (
                "env AWS_SECRET_KEY=x aws s3 ls",
                "env AWS_SECRET_KEY=*** aws s3 ls",
            ),
            (
                "mysql --password=hunter2 -u me",
                "mysql --password=*** -u me",
            ),
            ("vault login --token s.abcdef", "vault login --token ***"),
            (
                "curl -H 'Authorization: Bearer abc' https://x.example",
                "curl -H 'Authorization: *** *** https://x.example",
            ),
            (
                "git clone https://me:pw@example.com/r.git",
                "git clone https://me:***@example.com/r.git",
            ),
            ("echo ghp_0123456789abcdefghijklmnop", "echo ***"),
            ("export OPENAI=sk-proj0123456789abcdef", "export OPENAI=***"),
            ("echo sk-proj0123456789abcdef", "echo ***"),
            ("cat src/main.rs README.md", "cat src/main.rs README.md"),
            ("  spaced   out  ", "  spaced   out  "),
        ];
        for (input, want) in cases {
            assert_eq!(command(input, &secret), want, "{input}");
        }
    }

    #[test]
    fn a_long_random_word_is_a_key_but_a_path_or_sentence_is_not() {
        assert!(looks_like_token("a1b2c3d4e5f6a7b8c9d0e1f2a3b4c5d6e7f8"));
        assert!(!looks_like_token("src/some/long/path/to/a/file/name.rs"));
        assert!(!looks_like_token("short1"));
        assert!(!looks_like_token("abcdefghijklmnopqrstuvwxyzabcdefgh"));
    }
}
