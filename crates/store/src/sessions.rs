//! Sessions and their principals; per-session tokens.

use std::collections::HashSet;

use rusqlite::params;

use crate::db::{Dialect, Row};

use crate::types::{AgentKind, NewSession, Registered, Session};
use crate::{Result, Store, StoreError, unix_now};

const SESSION_COLS: &str =
    "id, agent, cwd, parent, kind, workflow, created_at, expires_at, revoked_at";

/// The longest session id accepted, in bytes.
pub const MAX_SESSION_ID: usize = 200;

/// [`SESSION_COLS`] of the `s` in [`Store::lineage`]'s join.
const LINEAGE_COLS: &str =
    "s.id, s.agent, s.cwd, s.parent, s.kind, s.workflow, s.created_at, s.expires_at, s.revoked_at";

/// How many generations [`Store::lineage`] follows at most.
const MAX_LINEAGE: usize = 64;

fn session_from_row(r: &Row) -> rusqlite::Result<Session> {
    Ok(Session {
        id: r.get(0)?,
        agent: r.get(1)?,
        cwd: r.get(2)?,
        parent: r.get(3)?,
        kind: r.get(4)?,
        workflow: r.get(5)?,
        created_at: r.get(6)?,
        expires_at: r.get(7)?,
        revoked_at: r.get(8)?,
    })
}

/// 32 random bytes, hex.
fn new_token() -> Result<String> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).map_err(|e| StoreError::Random { why: e.to_string() })?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

fn token_hash(token: &str) -> String {
    blake3::hash(token.as_bytes()).to_hex().to_string()
}

fn check_id(id: &str) -> std::result::Result<(), String> {
    if id.is_empty() {
        return Err("the id is empty".into());
    }
    if id.len() > MAX_SESSION_ID {
        return Err(format!(
            "the id is {} bytes long (at most {MAX_SESSION_ID})",
            id.len()
        ));
    }
    if id
        .chars()
        .any(|c| c.is_whitespace() || c.is_control() || c == '/')
    {
        return Err("the id contains whitespace, a control character or `/`".into());
    }
    Ok(())
}

impl Store {
    /// Register a new session and issue its token (the only time the token is
    /// visible). Reads the clock for `created_at`; see [`Store::register_session_at`].
    ///
    /// Errors: [`StoreError::AlreadyExists`] for a known id;
    /// [`StoreError::UnknownSession`] / [`StoreError::InactiveSession`] for a
    /// missing or ended parent; [`StoreError::InvalidSession`] when the
    /// principal rules are broken (a `main` session has no parent, a
    /// `subagent` has one, a `workflow` session names its workflow, a child
    /// stays in its parent's workflow; ids are 1–200 bytes without whitespace,
    /// control characters or `/`; a ttl is positive).
    pub fn register_session(&self, s: &NewSession) -> Result<Registered> {
        self.register_session_at(s, unix_now())
    }

    /// [`Store::register_session`] at a given time.
    pub fn register_session_at(&self, s: &NewSession, now: i64) -> Result<Registered> {
        let token = new_token()?;
        let tx = self.immediate("lock the database to register a session")?;
        if self.load_session(&s.id)?.is_some() {
            return Err(StoreError::AlreadyExists { id: s.id.clone() });
        }
        let session = self.insert_session(s, Some(&token_hash(&token)), now)?;
        tx.commit()
            .map_err(self.sql("commit a session registration"))?;
        Ok(Registered { session, token })
    }

    /// The session `s.id`: registered now (without a token: see
    /// [`Store::issue_token`]) when absent, else returned as it is — an
    /// existing session's parent, kind or anything else is never changed.
    /// Reads the clock; see [`Store::ensure_session_at`].
    pub fn ensure_session(&self, s: &NewSession) -> Result<Session> {
        self.ensure_session_at(s, unix_now())
    }

    /// [`Store::ensure_session`] at a given time.
    pub fn ensure_session_at(&self, s: &NewSession, now: i64) -> Result<Session> {
        if let Some(existing) = self.load_session(&s.id)? {
            return Ok(existing);
        }
        let tx = self.immediate("lock the database to register a session")?;
        if let Some(existing) = self.load_session(&s.id)? {
            return Ok(existing);
        }
        let session = self.insert_session(s, None, now)?;
        tx.commit()
            .map_err(self.sql("commit a session registration"))?;
        Ok(session)
    }

    /// The session with this id.
    pub fn session(&self, id: &str) -> Result<Option<Session>> {
        self.load_session(id)
    }

    /// Every session, in registration order.
    pub fn sessions(&self) -> Result<Vec<Session>> {
        // In the order they were registered.
        let order = match self.dialect() {
            Dialect::Sqlite => "rowid",
            Dialect::Postgres => "seq",
        };
        let sql = format!("SELECT {SESSION_COLS} FROM sessions ORDER BY {order}");
        self.rows("list sessions", &sql, &[], session_from_row)
    }

    /// Whether `token` is the token issued to session `id`: BLAKE3 of the
    /// token compared in constant time with the stored hash. `false` for an
    /// unknown session or one without a token. It says nothing about whether
    /// the session is active: check [`Session::is_active`] too.
    pub fn verify_token(&self, id: &str, token: &str) -> Result<bool> {
        let stored: Option<Option<String>> = self.row(
            "read a session token",
            "SELECT token_hash FROM sessions WHERE id = ?1",
            params![id],
            |r| r.get(0),
        )?;
        let Some(Some(stored)) = stored else {
            return Ok(false);
        };
        let stored = blake3::Hash::from_hex(&stored)
            .map_err(|e| self.corrupt(format!("token hash of session `{id}`"), e.to_string()))?;
        // `blake3::Hash`'s `==` is constant-time.
        Ok(stored == blake3::hash(token.as_bytes()))
    }

    /// Issue a new token for an active session, replacing any previous one
    /// (which stops verifying). For sessions registered by
    /// [`Store::ensure_session`], which have none.
    pub fn issue_token(&self, id: &str) -> Result<String> {
        let token = new_token()?;
        let tx = self.immediate("lock the database to issue a session token")?;
        let session = self
            .load_session(id)?
            .ok_or_else(|| StoreError::UnknownSession { id: id.into() })?;
        if !session.is_active(unix_now()) {
            return Err(StoreError::InactiveSession { id: id.into() });
        }
        self.exec(
            "store a session token",
            "UPDATE sessions SET token_hash = ?2 WHERE id = ?1",
            params![id, token_hash(&token)],
        )?;
        tx.commit().map_err(self.sql("commit a session token"))?;
        Ok(token)
    }

    /// Revoke a session and every session below it (children,
    /// grandchildren …), reading the clock; see [`Store::revoke_session_at`].
    pub fn revoke_session(&self, id: &str) -> Result<bool> {
        self.revoke_session_at(id, unix_now())
    }

    /// Revoke session `id` and its descendants at `now`. `true` iff `id`
    /// itself was registered and not yet revoked. Its session and once
    /// grants stop being active at once.
    pub fn revoke_session_at(&self, id: &str, now: i64) -> Result<bool> {
        let tx = self.immediate("lock the database to revoke a session")?;
        let Some(session) = self.load_session(id)? else {
            return Ok(false);
        };
        if session.revoked_at.is_some() {
            return Ok(false);
        }
        self.exec(
            "revoke a session",
            "WITH RECURSIVE tree(id) AS (
                 SELECT CAST(?1 AS TEXT)
                 UNION
                 SELECT s.id FROM sessions s JOIN tree t ON s.parent = t.id
             )
             UPDATE sessions SET revoked_at = ?2
             WHERE id IN (SELECT id FROM tree) AND revoked_at IS NULL",
            params![id, now],
        )?;
        // Their pending requests go with them: nobody is left to retry the
        // call, and an approval would grant a revoked session nothing.
        self.exec(
            "close a revoked session's requests",
            "WITH RECURSIVE tree(id) AS (
                 SELECT CAST(?1 AS TEXT)
                 UNION
                 SELECT s.id FROM sessions s JOIN tree t ON s.parent = t.id
             )
             UPDATE requests SET status = 'denied', resolved_by = 'session revoked',
                                 resolved_at = ?2
             WHERE session IN (SELECT id FROM tree) AND status = 'pending'",
            params![id, now],
        )?;
        tx.commit()
            .map_err(self.sql("commit a session revocation"))?;
        Ok(true)
    }

    /// The session's parent, grandparent … up to the root, nearest first.
    /// Empty for an unknown or root session. Stops at a cycle (which only a
    /// hand-edited database can hold).
    pub fn ancestors(&self, id: &str) -> Result<Vec<Session>> {
        let mut lineage = self.lineage(id)?;
        if !lineage.is_empty() {
            lineage.remove(0);
        }
        Ok(lineage)
    }

    /// The session followed by its parent, grandparent … up to the root,
    /// in one query; empty for an unknown session. Stops at a cycle (which
    /// only a hand-edited database can hold).
    pub fn lineage(&self, id: &str) -> Result<Vec<Session>> {
        // Most sessions have no parent: then one lookup (the statement that
        // entering the session prepared) instead of a recursive query with
        // its temporary tables — a hook opens the store for every call.
        match self.load_session(id)? {
            None => return Ok(Vec::new()),
            Some(session) if session.parent.is_none() => return Ok(vec![session]),
            Some(_) => {}
        }
        // The depth bound ends a cycle's recursion; `seen` drops its repeats.
        let sql = format!(
            "WITH RECURSIVE chain(id, parent, depth) AS (
                 SELECT id, parent, 0 FROM sessions WHERE id = ?1
                 UNION ALL
                 SELECT s.id, s.parent, c.depth + 1 FROM sessions s JOIN chain c ON s.id = c.parent
                 WHERE c.depth < {MAX_LINEAGE}
             )
             SELECT {LINEAGE_COLS} FROM sessions s JOIN chain c ON s.id = c.id ORDER BY c.depth"
        );
        let rows = self.rows(
            "read a session and its ancestors",
            &sql,
            params![id],
            session_from_row,
        )?;
        let mut seen = HashSet::new();
        Ok(rows
            .into_iter()
            .take_while(|s| seen.insert(s.id.clone()))
            .collect())
    }

    pub(crate) fn load_session(&self, id: &str) -> Result<Option<Session>> {
        let sql = format!("SELECT {SESSION_COLS} FROM sessions WHERE id = ?1");
        self.row("read a session", &sql, params![id], session_from_row)
    }

    /// Checks the principal rules and inserts; the caller holds the write lock.
    fn insert_session(
        &self,
        s: &NewSession,
        token_hash: Option<&str>,
        now: i64,
    ) -> Result<Session> {
        let invalid = |why: String| StoreError::InvalidSession {
            id: s.id.clone(),
            why,
        };
        check_id(&s.id).map_err(invalid)?;
        if s.ttl_secs.is_some_and(|t| t <= 0) {
            return Err(invalid(
                "the ttl must be a positive number of seconds".into(),
            ));
        }
        match (s.kind, &s.parent) {
            (AgentKind::Main, Some(_)) => {
                return Err(invalid("a main session has no parent".into()));
            }
            (AgentKind::Subagent, None) => {
                return Err(invalid("a subagent session needs a parent session".into()));
            }
            _ => {}
        }
        let mut workflow = s.workflow.clone();
        let mut expires_at = s.ttl_secs.map(|t| now.saturating_add(t));
        if let Some(parent_id) = &s.parent {
            if *parent_id == s.id {
                return Err(invalid("a session cannot be its own parent".into()));
            }
            let parent =
                self.load_session(parent_id)?
                    .ok_or_else(|| StoreError::UnknownSession {
                        id: parent_id.clone(),
                    })?;
            if !parent.is_active(now) {
                return Err(StoreError::InactiveSession {
                    id: parent_id.clone(),
                });
            }
            match (&workflow, &parent.workflow) {
                (Some(own), Some(theirs)) if own != theirs => {
                    return Err(invalid(format!(
                        "its parent `{parent_id}` belongs to workflow `{theirs}`, so it cannot join workflow `{own}`"
                    )));
                }
                (None, Some(theirs)) => workflow = Some(theirs.clone()),
                _ => {}
            }
            // A child never outlives its parent.
            if let Some(parent_end) = parent.expires_at {
                expires_at = Some(expires_at.map_or(parent_end, |own| own.min(parent_end)));
            }
        }
        if s.kind == AgentKind::Workflow && workflow.is_none() {
            return Err(invalid("a workflow session needs a workflow id".into()));
        }
        let sql = format!(
            "INSERT INTO sessions (id, agent, cwd, parent, kind, workflow, token_hash, created_at, expires_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)
             RETURNING {SESSION_COLS}"
        );
        self.returned(
            "insert a session",
            &sql,
            params![
                s.id, s.agent, s.cwd, s.parent, s.kind, workflow, token_hash, now, expires_at
            ],
            session_from_row,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_64_hex_digits_and_differ() {
        let a = new_token().unwrap();
        let b = new_token().unwrap();
        assert_eq!(a.len(), 64);
        assert!(a.bytes().all(|c| c.is_ascii_hexdigit()));
        assert_ne!(a, b);
    }

    #[test]
    fn ids() {
        assert!(check_id("0f1c-uuid_like:1.2").is_ok());
        assert!(check_id("").is_err());
        assert!(check_id("a b").is_err());
        assert!(check_id("a/b").is_err());
        assert!(check_id("a\nb").is_err());
        assert!(check_id(&"x".repeat(201)).is_err());
    }
}
