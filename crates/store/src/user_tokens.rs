//! The approval server's user logins (`[[server.users]]`): one token per
//! user, kept as a hash in `user-tokens` (0600) in the data directory —
//! `NAME HASH` a line, the hash blake3 of the token. The token itself is
//! shown once, when it is made. Not in the database: the server's login
//! check reads this small file, never the store.

use std::fs;
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

/// The file's name in the data directory.
pub const USER_TOKENS_FILE: &str = "user-tokens";

/// The hash a token is kept as (lowercase hex).
pub fn token_hash(token: &str) -> String {
    blake3::hash(token.trim().as_bytes()).to_hex().to_string()
}

/// The users who have a token, and the token's hash, as the file holds them
/// (none when there is no file).
pub fn user_token_hashes(data_dir: &Path) -> std::io::Result<Vec<(String, String)>> {
    let text = match fs::read_to_string(data_dir.join(USER_TOKENS_FILE)) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(e),
    };
    Ok(text
        .lines()
        .filter_map(|l| l.split_once(' '))
        .filter(|(_, h)| h.len() == 64 && h.bytes().all(|b| b.is_ascii_hexdigit()))
        .map(|(n, h)| (n.to_string(), h.to_string()))
        .collect())
}

/// A new token for `name`, replacing any it had: returns the token, which
/// is nowhere else.
pub fn issue_user_token(data_dir: &Path, name: &str) -> std::io::Result<String> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes)
        .map_err(|e| std::io::Error::other(format!("no randomness: {e}")))?;
    let token: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    let mut rest: Vec<(String, String)> = user_token_hashes(data_dir)?
        .into_iter()
        .filter(|(n, _)| n != name)
        .collect();
    rest.push((name.to_string(), token_hash(&token)));
    write(data_dir, &rest)?;
    Ok(token)
}

/// Removes `name`'s token; `false` when it had none.
pub fn revoke_user_token(data_dir: &Path, name: &str) -> std::io::Result<bool> {
    let all = user_token_hashes(data_dir)?;
    let rest: Vec<(String, String)> = all.iter().filter(|(n, _)| n != name).cloned().collect();
    if rest.len() == all.len() {
        return Ok(false);
    }
    write(data_dir, &rest)?;
    Ok(true)
}

fn write(data_dir: &Path, entries: &[(String, String)]) -> std::io::Result<()> {
    fs::create_dir_all(data_dir)?;
    let text: String = entries.iter().map(|(n, h)| format!("{n} {h}\n")).collect();
    replace_private(data_dir, USER_TOKENS_FILE, text.as_bytes())
}

/// Replaces `name` in `data_dir` with `bytes`, mode 0600, in one rename: a
/// reader sees the old file or the new one, never a part.
pub(crate) fn replace_private(data_dir: &Path, name: &str, bytes: &[u8]) -> std::io::Result<()> {
    let tmp = data_dir.join(format!(".{name}.{}", std::process::id()));
    let _ = fs::remove_file(&tmp);
    {
        let mut f = fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
    }
    fs::rename(&tmp, data_dir.join(name))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_is_kept_as_its_hash_and_replaced_or_revoked() {
        let dir = tempfile::tempdir().unwrap();
        assert!(user_token_hashes(dir.path()).unwrap().is_empty());
        let a = issue_user_token(dir.path(), "alice").unwrap();
        let b = issue_user_token(dir.path(), "bob").unwrap();
        let text = fs::read_to_string(dir.path().join(USER_TOKENS_FILE)).unwrap();
        assert!(
            !text.contains(&a) && !text.contains(&b),
            "tokens are not kept"
        );
        let a2 = issue_user_token(dir.path(), "alice").unwrap();
        assert_ne!(a, a2);
        let hashes = user_token_hashes(dir.path()).unwrap();
        assert_eq!(hashes.len(), 2);
        assert!(hashes.contains(&("alice".into(), token_hash(&a2))));
        assert!(!hashes.iter().any(|(_, h)| *h == token_hash(&a)));
        assert!(revoke_user_token(dir.path(), "bob").unwrap());
        assert!(!revoke_user_token(dir.path(), "bob").unwrap());
        assert_eq!(user_token_hashes(dir.path()).unwrap().len(), 1);
        use std::os::unix::fs::PermissionsExt;
        let mode = fs::metadata(dir.path().join(USER_TOKENS_FILE))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
    }
}
