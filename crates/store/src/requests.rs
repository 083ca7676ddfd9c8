//! Permission requests: raised on eligible denials, collapsed while pending,
//! resolved by a person into a grant (or none).

use rusqlite::params;
use rusqlite::types::{FromSql, FromSqlError, FromSqlResult, ToSql, ToSqlOutput, ValueRef};

use crate::db::Row;

use crate::types::{
    Denial, GrantScope, NewGrant, NewRequest, Op, Request, RequestStatus, Resolution,
};
use crate::{Result, Store, StoreError};

/// How long a `once` grant made by resolving a request waits for the retry
/// it was made for (10 minutes), unless the request says otherwise
/// ([`NewRequest::once_ttl_secs`]).
pub const ONCE_GRANT_TTL_SECS: i64 = 600;

/// A pending request nothing asked for again in this long (and no call is
/// held for) is closed as stale: the agent has given up on it (1 hour).
pub const REQUEST_IDLE_SECS: i64 = 3600;

/// A request whose session has ended (`?1`: now).
macro_rules! ended {
    () => {
        "session IN (SELECT id FROM sessions WHERE expires_at IS NOT NULL AND expires_at <= ?1)"
    };
}
const ENDED: &str = ended!();

/// A pending request nobody can use any more (`?1`: now, `?2`: idle seconds):
/// its session ended, or nothing asked again and no call is held for it.
const STALE: &str = concat!(
    "status = 'pending' AND (",
    ended!(),
    " OR (last_seen <= CAST(?1 AS BIGINT) - CAST(?2 AS BIGINT) AND (held_until IS NULL OR held_until <= ?1)))"
);

const REQUEST_COLS: &str = "id, session, tool, op, target, reason, eligible, policy_scope, \
                            suggested, count, created_at, last_seen, status, resolved_by, \
                            resolved_at, grant_id, held_until, deny_message, deny_until, \
                            deny_standing, once_ttl_secs, device, delivered_at";

/// `Vec<Resolution>` as a JSON array of words.
struct Suggested(Vec<Resolution>);

impl ToSql for Suggested {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        let words = serde_json::to_string(&self.0)
            .map_err(|e| rusqlite::Error::ToSqlConversionFailure(Box::new(e)))?;
        Ok(ToSqlOutput::from(words))
    }
}

impl FromSql for Suggested {
    fn column_result(value: ValueRef<'_>) -> FromSqlResult<Self> {
        serde_json::from_str(value.as_str()?)
            .map(Suggested)
            .map_err(|e| FromSqlError::Other(Box::new(e)))
    }
}

fn request_from_row(r: &Row) -> rusqlite::Result<Request> {
    Ok(Request {
        id: r.get(0)?,
        session: r.get(1)?,
        tool: r.get(2)?,
        op: r.get(3)?,
        target: r.get(4)?,
        reason: r.get(5)?,
        eligible: r.get(6)?,
        policy_scope: r.get(7)?,
        suggested: r.get::<Suggested>(8)?.0,
        count: r.get(9)?,
        created_at: r.get(10)?,
        last_seen: r.get(11)?,
        status: r.get(12)?,
        resolved_by: r.get(13)?,
        resolved_at: r.get(14)?,
        grant: r.get(15)?,
        held_until: r.get(16)?,
        deny_message: r.get(17)?,
        deny_until: r.get(18)?,
        deny_standing: r.get(19)?,
        once_ttl_secs: r.get(20)?,
        device: r.get(21)?,
        delivered_at: r.get(22)?,
    })
}

impl Store {
    /// Raise a permission request at `now`, or — when an identical one
    /// (same session, tool, operation and target) is pending — count it
    /// again: `count + 1`, `last_seen = now`, same id, so a retry loop makes
    /// one request. The pending request takes the latest `reason`,
    /// `eligible`, `policy_scope` and `suggested` (the policy's current view).
    ///
    /// Errors: [`StoreError::UnknownSession`]; [`StoreError::DeviceGrantNotReadOnly`]
    /// when a device resolution is suggested for anything but a read;
    /// [`StoreError::InvalidRequest`] for an empty tool or a relative path.
    pub fn raise_request(&self, r: &NewRequest, now: i64) -> Result<Request> {
        if r.op != Op::Read && r.suggested.contains(&Resolution::Device) {
            return Err(StoreError::DeviceGrantNotReadOnly { op: r.op });
        }
        // A shared store holds no device grants (see `add_grant_at`): it
        // does not offer one — but for an enrolled device's request, whose
        // device-wide approval is delivered to that device and kept there.
        let mut r = std::borrow::Cow::Borrowed(r);
        if self.dialect() == crate::Dialect::Postgres
            && r.device.is_none()
            && r.suggested.contains(&Resolution::Device)
        {
            r.to_mut().suggested.retain(|s| *s != Resolution::Device);
        }
        let r = r.as_ref();
        if r.tool.trim().is_empty() {
            return Err(StoreError::InvalidRequest {
                why: "the tool name is empty".into(),
            });
        }
        r.target
            .check()
            .map_err(|why| StoreError::InvalidRequest { why })?;
        let tx = self.immediate("lock the database to raise a permission request")?;
        if self.load_session(&r.session)?.is_none() {
            return Err(StoreError::UnknownSession {
                id: r.session.clone(),
            });
        }
        let sql = format!(
            "INSERT INTO requests (session, tool, op, target, reason, eligible, policy_scope,
                                   suggested, count, created_at, last_seen, status, once_ttl_secs,
                                   device)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, 1, ?9, ?9, 'pending', ?10, ?11)
             ON CONFLICT (session, tool, op, target) WHERE status = 'pending'
             DO UPDATE SET count = requests.count + 1,
                           last_seen = CASE WHEN requests.last_seen > excluded.last_seen
                                            THEN requests.last_seen ELSE excluded.last_seen END,
                           reason = excluded.reason,
                           eligible = excluded.eligible,
                           policy_scope = excluded.policy_scope,
                           suggested = excluded.suggested,
                           once_ttl_secs = excluded.once_ttl_secs
             RETURNING {REQUEST_COLS}"
        );
        let request = self.returned(
            "raise a permission request",
            &sql,
            params![
                r.session,
                r.tool,
                r.op,
                r.target,
                r.reason,
                r.eligible,
                r.policy_scope,
                Suggested(r.suggested.clone()),
                now,
                r.once_ttl_secs,
                r.device
            ],
            request_from_row,
        )?;
        tx.commit()
            .map_err(self.sql("commit a permission request"))?;
        Ok(request)
    }

    /// Records that a front door keeps the agent's call for pending request
    /// `id` waiting until `until` (unix seconds): the stored deadline becomes
    /// the later of the two. Returns the stored deadline, or `None` when the
    /// request is no longer pending (nothing to wait for).
    ///
    /// Errors: [`StoreError::UnknownRequest`].
    pub fn hold_request(&self, id: i64, until: i64) -> Result<Option<i64>> {
        let tx = self.immediate("lock the database to hold a permission request")?;
        let stored = self.row(
            "hold a permission request",
            "UPDATE requests SET held_until = CASE WHEN held_until > ?2 THEN held_until ELSE ?2 END
             WHERE id = ?1 AND status = 'pending' RETURNING held_until",
            params![id, until],
            |r| r.get(0),
        )?;
        if stored.is_none() && self.load_request(id)?.is_none() {
            return Err(StoreError::UnknownRequest { id });
        }
        tx.commit()
            .map_err(self.sql("commit a permission request's hold"))?;
        Ok(stored)
    }

    /// The request with this id.
    pub fn request(&self, id: i64) -> Result<Option<Request>> {
        self.load_request(id)
    }

    /// Closes the pending requests nobody can use any more, at `now`: their
    /// session has ended (expired; a revoked one's are closed when it is
    /// revoked), or nothing asked for them again for `idle_secs` while no
    /// call was held for them — the agent has given up. They become
    /// `denied`, `resolved_by` saying why. Returns how many were closed.
    pub fn expire_stale_requests(&self, now: i64, idle_secs: i64) -> Result<usize> {
        // Read first: the daemon sweeps every few seconds, and most sweeps
        // find nothing — they take no write lock.
        let stale: bool = self.value(
            "look for stale requests",
            &format!("SELECT EXISTS (SELECT 1 FROM requests WHERE {STALE})"),
            params![now, idle_secs],
        )?;
        if !stale {
            return Ok(0);
        }
        let tx = self.immediate("lock the database to close stale requests")?;
        let closed = self.exec(
            "close stale requests",
            &format!(
                "UPDATE requests SET status = 'denied', resolved_at = ?1,
                         resolved_by = CASE WHEN {ENDED}
                             THEN 'expired: the session ended'
                             ELSE 'expired: not asked again for ' || (?2 / 60) || ' minutes' END
                     WHERE {STALE}"
            ),
            params![now, idle_secs],
        )?;
        tx.commit()
            .map_err(self.sql("commit closing stale requests"))?;
        Ok(closed)
    }

    /// Every request (or only the pending ones), newest first.
    pub fn requests(&self, pending_only: bool) -> Result<Vec<Request>> {
        let sql = format!(
            "SELECT {REQUEST_COLS} FROM requests WHERE (?1 = 0 OR status = 'pending') ORDER BY id DESC"
        );
        self.rows(
            "list permission requests",
            &sql,
            params![pending_only],
            request_from_row,
        )
    }

    /// Requests with an id above `id`, oldest first (what is new since a
    /// watcher last looked, whatever their status now).
    pub fn requests_after(&self, id: i64) -> Result<Vec<Request>> {
        let sql = format!("SELECT {REQUEST_COLS} FROM requests WHERE id > ?1 ORDER BY id");
        self.rows(
            "list permission requests",
            &sql,
            params![id],
            request_from_row,
        )
    }

    /// Resolve a pending request at `now`: `Once`, `Session` and `Device`
    /// make the grant (same operation and target; `Device` only for a read,
    /// and without a session), `Deny` makes none. Returns the request as
    /// resolved and its grant. All or nothing, in one transaction.
    ///
    /// Errors: [`StoreError::UnknownRequest`]; [`StoreError::NotPending`] when
    /// already resolved; [`StoreError::DeviceGrantNotReadOnly`];
    /// [`StoreError::NotEligible`] when approving a request the policy marked
    /// not eligible (it can only be denied); [`StoreError::InactiveSession`]
    /// when approving once/session for a session that has ended;
    /// [`StoreError::InvalidRequest`] for an empty approver.
    pub fn resolve_request(
        &self,
        id: i64,
        how: Resolution,
        approver: &str,
        now: i64,
    ) -> Result<(Request, Option<crate::Grant>)> {
        self.resolve_request_with(id, how, None, approver, now)
    }

    /// [`Store::resolve_request`], and for a [`Resolution::Deny`] a denial
    /// that stands for the same call's next attempts in the session
    /// ([`Store::standing_denial`]). A denial with an approval is refused.
    pub fn resolve_request_with(
        &self,
        id: i64,
        how: Resolution,
        denial: Option<&Denial>,
        approver: &str,
        now: i64,
    ) -> Result<(Request, Option<crate::Grant>)> {
        self.resolve_request_as(id, how, denial, None, approver, now)
    }

    /// [`Store::resolve_request_with`], the grant made for `rule` (an
    /// operation and a target the engine checked covers the request's call)
    /// instead of the call itself.
    pub fn resolve_request_as(
        &self,
        id: i64,
        how: Resolution,
        denial: Option<&Denial>,
        rule: Option<(Op, crate::GrantTarget)>,
        approver: &str,
        now: i64,
    ) -> Result<(Request, Option<crate::Grant>)> {
        if denial.is_some() && how != Resolution::Deny {
            return Err(StoreError::InvalidRequest {
                why: "a message for the agent goes with a denial only".into(),
            });
        }
        if denial.is_some_and(|d| d.message.trim().is_empty()) {
            return Err(StoreError::InvalidRequest {
                why: "the message for the agent is empty".into(),
            });
        }
        if approver.trim().is_empty() {
            return Err(StoreError::InvalidRequest {
                why: "the approver is empty".into(),
            });
        }
        let tx = self.immediate("lock the database to resolve a permission request")?;
        let request = self
            .load_request(id)?
            .ok_or(StoreError::UnknownRequest { id })?;
        if request.status != RequestStatus::Pending {
            return Err(StoreError::NotPending {
                id,
                status: request.status,
            });
        }
        // `delivered`: approved for an enrolled device, no grant made here.
        let (grant, delivered) = match how.grant_scope() {
            None => (None, false),
            Some(scope) => {
                let (op, target) = match &rule {
                    Some((op, target)) => {
                        target
                            .check()
                            .map_err(|why| StoreError::InvalidRequest { why })?;
                        (*op, target.clone())
                    }
                    None => (request.op, request.target.clone()),
                };
                if scope == GrantScope::Device && op != Op::Read {
                    return Err(StoreError::DeviceGrantNotReadOnly { op });
                }
                // What was not offered is not granted (a secret's read is
                // never made device-wide, whichever front door asks).
                if !request.suggested.contains(&how) {
                    return Err(StoreError::InvalidRequest {
                        why: format!(
                            "request #{id} does not offer `{}` (it offers {})",
                            how.as_str(),
                            request
                                .suggested
                                .iter()
                                .map(|r| r.as_str())
                                .collect::<Vec<_>>()
                                .join(", ")
                        ),
                    });
                }
                if !request.eligible {
                    return Err(StoreError::NotEligible {
                        id,
                        reason: request.reason,
                    });
                }
                // An enrolled device's device-wide approval: no grant here;
                // the device takes it into its own store (`deliveries`).
                if scope == GrantScope::Device && request.device.is_some() {
                    if rule.is_some() {
                        return Err(StoreError::InvalidRequest {
                            why: format!(
                                "request #{id} came from an enrolled device: approve its call \
                                 device-wide, or a rule for the session"
                            ),
                        });
                    }
                    (None, true)
                } else {
                    let new = NewGrant {
                        session: (scope != GrantScope::Device).then(|| request.session.clone()),
                        scope,
                        op,
                        target,
                        // An approval left unused does not wait for a retry forever.
                        expires_at: (scope == GrantScope::Once).then(|| {
                            now.saturating_add(request.once_ttl_secs.unwrap_or(ONCE_GRANT_TTL_SECS))
                        }),
                        approver: approver.to_owned(),
                        request: Some(id),
                    };
                    (Some(self.insert_grant(&new, now)?), false)
                }
            }
        };
        let status = if grant.is_some() || delivered {
            RequestStatus::Approved
        } else {
            RequestStatus::Denied
        };
        self.exec(
            "resolve a permission request",
            "UPDATE requests SET status = ?2, resolved_by = ?3, resolved_at = ?4, grant_id = ?5,
                                 deny_message = ?6, deny_until = ?7, deny_standing = ?8
             WHERE id = ?1 AND status = 'pending'",
            params![
                id,
                status,
                approver,
                now,
                grant.as_ref().map(|g| g.id),
                denial.map(|d| d.message.as_str()),
                denial.and_then(|d| d.until),
                denial.is_some(),
            ],
        )?;
        let request = self
            .load_request(id)?
            .ok_or(StoreError::UnknownRequest { id })?;
        tx.commit()
            .map_err(self.sql("commit a permission request resolution"))?;
        Ok((request, grant))
    }

    /// The denials standing at `now` for `tool` in these sessions (a call's
    /// own and its ancestors'), newest first: the engine matches each one's
    /// target against the call.
    pub fn standing_denials(
        &self,
        sessions: &[&str],
        tool: &str,
        now: i64,
    ) -> Result<Vec<Request>> {
        let mut out = Vec::new();
        let sql = format!(
            "SELECT {REQUEST_COLS} FROM requests
             WHERE session = ?1 AND tool = ?2 AND deny_standing = 1
               AND (deny_until IS NULL OR deny_until > ?3)
             ORDER BY id DESC"
        );
        for session in sessions {
            out.extend(self.rows(
                "list standing denials",
                &sql,
                params![session, tool, now],
                request_from_row,
            )?);
        }
        Ok(out)
    }

    /// The device-wide approvals of `device`'s requests that it has not yet
    /// confirmed it holds: approved for the device, no grant made here.
    pub fn deliveries(&self, device: &str) -> Result<Vec<Request>> {
        let sql = format!(
            "SELECT {REQUEST_COLS} FROM requests
             WHERE device = ?1 AND status = 'approved' AND grant_id IS NULL
                   AND delivered_at IS NULL
             ORDER BY id"
        );
        self.rows(
            "read a device's approvals",
            &sql,
            params![device],
            request_from_row,
        )
    }

    /// `device` holds the approvals of requests `ids` in its own store: they
    /// are no longer delivered (ids of other devices' requests change nothing).
    pub fn mark_delivered(&self, device: &str, ids: &[i64], now: i64) -> Result<()> {
        if ids.is_empty() {
            return Ok(());
        }
        let tx = self.immediate("lock the database to record a delivery")?;
        for id in ids {
            self.exec(
                "record a delivery",
                "UPDATE requests SET delivered_at = ?3
                 WHERE id = ?1 AND device = ?2 AND status = 'approved' AND grant_id IS NULL
                       AND delivered_at IS NULL",
                params![id, device, now],
            )?;
        }
        tx.commit().map_err(self.sql("commit a delivery"))?;
        Ok(())
    }

    fn load_request(&self, id: i64) -> Result<Option<Request>> {
        let sql = format!("SELECT {REQUEST_COLS} FROM requests WHERE id = ?1");
        self.row(
            "read a permission request",
            &sql,
            params![id],
            request_from_row,
        )
    }
}
