//! Grants: once, session and device (read-only) permissions.

use rusqlite::params;

use crate::db::{Dialect, Row};

use crate::types::{Grant, GrantScope, NewGrant, Op};
use crate::{Result, Store, StoreError, unix_now};

const GRANT_COLS: &str = "id, session, scope, op, target, expires_at, approver, request_id, \
                          created_at, consumed_at, revoked_at";

fn grant_from_row(r: &Row) -> rusqlite::Result<Grant> {
    Ok(Grant {
        id: r.get(0)?,
        session: r.get(1)?,
        scope: r.get(2)?,
        op: r.get(3)?,
        target: r.get(4)?,
        expires_at: r.get(5)?,
        approver: r.get(6)?,
        request: r.get(7)?,
        created_at: r.get(8)?,
        consumed_at: r.get(9)?,
        revoked_at: r.get(10)?,
    })
}

/// The rules a grant must meet before the database is touched.
fn check_new_grant(g: &NewGrant) -> Result<()> {
    let invalid = |why: String| StoreError::InvalidGrant { why };
    if g.scope == GrantScope::Device {
        if g.op != Op::Read {
            return Err(StoreError::DeviceGrantNotReadOnly { op: g.op });
        }
        if let Some(s) = &g.session {
            return Err(invalid(format!(
                "a device grant belongs to every session, so it cannot name session `{s}`"
            )));
        }
    } else if g.session.is_none() {
        return Err(invalid(format!("a {} grant needs a session", g.scope)));
    }
    if g.approver.trim().is_empty() {
        return Err(invalid("the approver is empty".into()));
    }
    g.target.check().map_err(invalid)
}

impl Store {
    /// Add a grant, reading the clock for `created_at`; see [`Store::add_grant_at`].
    pub fn add_grant(&self, g: &NewGrant) -> Result<Grant> {
        self.add_grant_at(g, unix_now())
    }

    /// Add a grant made at `now`.
    ///
    /// Errors: [`StoreError::DeviceGrantNotReadOnly`] for a device grant of
    /// anything but [`Op::Read`]; [`StoreError::InvalidGrant`] when a device
    /// grant names a session or a once/session grant does not, the approver
    /// is empty, or the path is not absolute; [`StoreError::UnknownSession`] /
    /// [`StoreError::InactiveSession`] when the session is missing or ended at
    /// `now`; [`StoreError::UnknownRequest`] for a missing request.
    pub fn add_grant_at(&self, g: &NewGrant, now: i64) -> Result<Grant> {
        check_new_grant(g)?;
        let tx = self.immediate("lock the database to add a grant")?;
        let grant = self.insert_grant(g, now)?;
        tx.commit().map_err(self.sql("commit a grant"))?;
        Ok(grant)
    }

    /// The grant with this id.
    pub fn grant(&self, id: i64) -> Result<Option<Grant>> {
        let sql = format!("SELECT {GRANT_COLS} FROM grants WHERE id = ?1");
        self.row("read a grant", &sql, params![id], grant_from_row)
    }

    /// The grants usable at `now` by a caller acting as any of `session_ids`
    /// (the session and whichever ancestors the engine lets it inherit from):
    /// not revoked, not expired, once-grants not consumed, and — for once and
    /// session grants — their session still active at `now`; plus every live
    /// device grant. Oldest first.
    pub fn active_grants(&self, session_ids: &[&str], now: i64) -> Result<Vec<Grant>> {
        let ids = serde_json::to_string(session_ids)
            .map_err(|e| rusqlite::Error::ToSqlConversionFailure(Box::new(e)))
            .map_err(|e| self.sql("encode the session ids")(e.into()))?;
        // The session ids travel as one JSON array.
        let sessions = match self.dialect() {
            Dialect::Sqlite => "SELECT value FROM json_each(?1)",
            Dialect::Postgres => "SELECT json_array_elements_text(CAST(?1 AS json))",
        };
        let sql = format!(
            "SELECT g.id, g.session, g.scope, g.op, g.target, g.expires_at, g.approver,
                        g.request_id, g.created_at, g.consumed_at, g.revoked_at
                 FROM grants g LEFT JOIN sessions s ON s.id = g.session
                 WHERE g.revoked_at IS NULL
                   AND (g.expires_at IS NULL OR g.expires_at > ?2)
                   AND (g.scope <> 'once' OR g.consumed_at IS NULL)
                   AND (g.scope = 'device'
                        OR (g.session IN ({sessions})
                            AND s.revoked_at IS NULL
                            AND (s.expires_at IS NULL OR s.expires_at > ?2)))
                 ORDER BY g.id"
        );
        self.rows(
            "look up active grants",
            &sql,
            params![ids, now],
            grant_from_row,
        )
    }

    /// Use a once-grant. One atomic `UPDATE`: `true` for exactly one caller
    /// however many threads and processes race, and only while the grant is
    /// unconsumed, unrevoked, unexpired and its session active at `now`.
    /// `false` for anything else (including session and device grants, which
    /// are never consumed).
    pub fn consume_once(&self, id: i64, now: i64) -> Result<bool> {
        self.consume_in(id, now)
    }

    /// Use several once-grants together, all or none: in one transaction,
    /// each is consumed as by [`Store::consume_once`]; if any cannot be (used
    /// by someone else, revoked, expired), none is, and the answer is `false`.
    /// For a call that needs more than one once-grant: consuming them one by
    /// one would burn the first when the second is gone. Duplicate ids count
    /// once; an empty list is `true`.
    pub fn consume_once_all(&self, ids: &[i64], now: i64) -> Result<bool> {
        let mut ids = ids.to_vec();
        ids.sort_unstable();
        ids.dedup();
        let tx = self.immediate("lock the database to consume once-grants")?;
        for id in ids {
            if !self.consume_in(id, now)? {
                return Ok(false); // dropping `tx` rolls back the ones already consumed
            }
        }
        tx.commit()
            .map_err(self.sql("commit once-grant consumption"))?;
        Ok(true)
    }

    fn consume_in(&self, id: i64, now: i64) -> Result<bool> {
        let changed = self.exec(
            "consume a once-grant",
            "UPDATE grants SET consumed_at = ?2
                 WHERE id = ?1 AND scope = 'once' AND consumed_at IS NULL AND revoked_at IS NULL
                   AND (expires_at IS NULL OR expires_at > ?2)
                   AND session IN (SELECT id FROM sessions
                                   WHERE revoked_at IS NULL
                                     AND (expires_at IS NULL OR expires_at > ?2))",
            params![id, now],
        )?;
        Ok(changed == 1)
    }

    /// Revoke a grant at `now`. `true` iff it existed and was not yet revoked.
    pub fn revoke_grant(&self, id: i64, now: i64) -> Result<bool> {
        let changed = self.exec(
            "revoke a grant",
            "UPDATE grants SET revoked_at = ?2 WHERE id = ?1 AND revoked_at IS NULL",
            params![id, now],
        )?;
        Ok(changed == 1)
    }

    /// Every grant, newest first.
    pub fn grants(&self) -> Result<Vec<Grant>> {
        let sql = format!("SELECT {GRANT_COLS} FROM grants ORDER BY id DESC");
        self.rows("list grants", &sql, &[], grant_from_row)
    }

    /// Checks and inserts a grant; the caller holds the write lock.
    pub(crate) fn insert_grant(&self, g: &NewGrant, now: i64) -> Result<Grant> {
        check_new_grant(g)?;
        // Device grants stay on their device (DESIGN: never exported or
        // synced): a team's shared store would apply one to every machine.
        if g.scope == GrantScope::Device && self.dialect() == crate::Dialect::Postgres {
            return Err(StoreError::InvalidGrant {
                why: "a device grant stays on its device: a team server's shared store keeps                       none (approve once or for the session)"
                    .into(),
            });
        }
        if let Some(id) = &g.session {
            let session = self
                .load_session(id)?
                .ok_or_else(|| StoreError::UnknownSession { id: id.clone() })?;
            if !session.is_active(now) {
                return Err(StoreError::InactiveSession { id: id.clone() });
            }
        }
        if let Some(request) = g.request {
            let exists = self.row(
                "read a permission request",
                "SELECT 1 FROM requests WHERE id = ?1",
                params![request],
                |_| Ok(()),
            )?;
            if exists.is_none() {
                return Err(StoreError::UnknownRequest { id: request });
            }
        }
        let sql = format!(
            "INSERT INTO grants (session, scope, op, target, expires_at, approver, request_id, created_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)
             RETURNING {GRANT_COLS}"
        );
        self.returned(
            "insert a grant",
            &sql,
            params![
                g.session,
                g.scope,
                g.op,
                g.target,
                g.expires_at,
                g.approver,
                g.request,
                now
            ],
            grant_from_row,
        )
    }
}
