//! The audit log: append-only rows chained with BLAKE3.
//!
//! Row `n` stores `prev_hash` = the hash of row `n − 1` (64 zeros for row 1)
//! and `hash = BLAKE3(prev_hash as 32 bytes ‖ canonical JSON)`, where the
//! canonical JSON is, in this order and compact,
//! `{"id":…,"at":…,"kind":…,"session":…,"tool":…,"verdict":…,"detail":…,"prev_hash":…}`
//! with `detail` the stored detail JSON *as a string* (the exact text in the
//! database, so verification never depends on how a JSON value re-serializes).
//! Ids are 1, 2, 3 … without gaps (`AUTOINCREMENT`, written under the write
//! lock).
//!
//! What the chain shows: editing any field of a row (its hash included)
//! breaks that row; deleting rows in the middle or at the start breaks the
//! first row after the gap. Deleting rows *at the end* leaves a shorter chain
//! that still holds; the store catches that through SQLite's
//! `sqlite_sequence` counter (the next id it would hand out), which someone
//! who edits the file can also reset — a chain without an external anchor
//! cannot prove its own length. Rewriting the whole chain from a point on is
//! likewise invisible to a check that only has the database: the chain makes
//! tampering evident, it does not make it impossible.

use rusqlite::params;

use crate::db::{Dialect, Row};
use serde::Serialize;

use crate::types::{AuditCheck, AuditEvent, AuditKind, AuditRow, AuditVerdict};
use crate::{Result, Store, StoreError};

/// The `prev_hash` of the first row.
pub const GENESIS_HASH: &str = "0000000000000000000000000000000000000000000000000000000000000000";

/// The largest `detail` accepted, in bytes of JSON: the log holds reason
/// codes, paths and rule ids, never file contents.
pub const MAX_DETAIL_BYTES: usize = 64 * 1024;

const AUDIT_COLS: &str = "id, at, kind, session, tool, verdict, detail, prev_hash, hash";

/// The fields a row's hash covers, in hashing order.
#[derive(Serialize)]
struct Canonical<'a> {
    id: i64,
    at: i64,
    kind: &'a str,
    session: Option<&'a str>,
    tool: Option<&'a str>,
    verdict: Option<&'a str>,
    detail: &'a str,
    prev_hash: &'a str,
}

impl Canonical<'_> {
    /// `None` when `prev_hash` is not 64 hex digits (or, which cannot happen,
    /// the row does not serialize: the row then fails to verify).
    fn hash(&self) -> Option<String> {
        let prev = blake3::Hash::from_hex(self.prev_hash).ok()?;
        let json = serde_json::to_vec(self).ok()?;
        let mut hasher = blake3::Hasher::new();
        hasher.update(prev.as_bytes());
        hasher.update(&json);
        Some(hasher.finalize().to_hex().to_string())
    }
}

/// A row as stored, detail still text.
struct RawRow {
    id: i64,
    at: i64,
    kind: String,
    session: Option<String>,
    tool: Option<String>,
    verdict: Option<String>,
    detail: String,
    prev_hash: String,
    hash: String,
}

impl RawRow {
    fn from_row(r: &Row) -> rusqlite::Result<RawRow> {
        Ok(RawRow {
            id: r.get(0)?,
            at: r.get(1)?,
            kind: r.get(2)?,
            session: r.get(3)?,
            tool: r.get(4)?,
            verdict: r.get(5)?,
            detail: r.get(6)?,
            prev_hash: r.get(7)?,
            hash: r.get(8)?,
        })
    }

    fn canonical(&self) -> Canonical<'_> {
        Canonical {
            id: self.id,
            at: self.at,
            kind: &self.kind,
            session: self.session.as_deref(),
            tool: self.tool.as_deref(),
            verdict: self.verdict.as_deref(),
            detail: &self.detail,
            prev_hash: &self.prev_hash,
        }
    }
}

/// The largest page [`Store::audit_query`] returns.
pub const MAX_AUDIT_PAGE: usize = 500;

/// Which audit rows to read: every field that is set must match.
#[derive(Clone, Debug, Default, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AuditFilter {
    pub session: Option<String>,
    pub verdict: Option<String>,
    pub tool: Option<String>,
    pub kind: Option<String>,
    /// Unix seconds, inclusive.
    pub since: Option<i64>,
    /// Unix seconds, inclusive.
    pub until: Option<i64>,
    /// Only rows with a smaller id (the cursor of the next page).
    pub before: Option<i64>,
    #[serde(default = "default_page")]
    pub limit: usize,
}

fn default_page() -> usize {
    100
}

impl Store {
    /// Append an event at `now`. Under the write lock (`BEGIN IMMEDIATE`):
    /// read the last row's hash and the next id, hash, insert — so appends
    /// from several processes form one chain.
    ///
    /// The row stores (and hashes) the kind's and verdict's words
    /// ([`AuditKind::as_str`], [`AuditVerdict::as_str`]).
    ///
    /// Errors: [`StoreError::InvalidAudit`] for a detail over 64 KiB.
    pub fn append_audit(&self, e: &AuditEvent, now: i64) -> Result<AuditRow> {
        let detail = serde_json::to_string(&e.detail).map_err(|e| StoreError::InvalidAudit {
            why: format!("the detail does not serialize: {e}"),
        })?;
        if detail.len() > MAX_DETAIL_BYTES {
            return Err(StoreError::InvalidAudit {
                why: format!(
                    "the detail is {} bytes of JSON (at most {MAX_DETAIL_BYTES}): the audit log holds reason codes and paths, never contents",
                    detail.len()
                ),
            });
        }
        let tx = self.immediate("lock the database to append to the audit log")?;
        // The last row and the largest id ever used, in one read.
        let (last, sequence): (Option<(i64, String)>, Option<i64>) = self.returned(
            "read the last audit row",
            &format!(
                "SELECT (SELECT id FROM audit ORDER BY id DESC LIMIT 1),
                        (SELECT hash FROM audit ORDER BY id DESC LIMIT 1),
                        ({})",
                self.audit_sequence_sql()
            ),
            &[],
            |r| {
                let last = match (r.get::<Option<i64>>(0)?, r.get::<Option<String>>(1)?) {
                    (Some(id), Some(hash)) => Some((id, hash)),
                    _ => None,
                };
                Ok((last, r.get(2)?))
            },
        )?;
        let (last_id, prev_hash) = last.unwrap_or((0, GENESIS_HASH.to_owned()));
        // The next id AUTOINCREMENT would give: never reuses the id of a row
        // deleted from the end, so such a deletion shows as a gap.
        let id = sequence.unwrap_or(0).max(last_id) + 1;
        let mut row = RawRow {
            id,
            at: now,
            kind: e.kind.as_str().to_owned(),
            session: e.session.clone(),
            tool: e.tool.clone(),
            verdict: e.verdict.map(|v| v.as_str().to_owned()),
            detail,
            prev_hash,
            hash: String::new(),
        };
        row.hash = row.canonical().hash().ok_or_else(|| {
            self.corrupt(format!("hash of audit row {last_id}"), "not 64 hex digits")
        })?;
        self.exec(
            "append to the audit log",
            "INSERT INTO audit (id, at, kind, session, tool, verdict, detail, prev_hash, hash)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
            params![
                row.id,
                row.at,
                row.kind,
                row.session,
                row.tool,
                row.verdict,
                row.detail,
                row.prev_hash,
                row.hash
            ],
        )?;
        tx.commit().map_err(self.sql("commit an audit row"))?;
        Ok(AuditRow {
            id: row.id,
            at: row.at,
            event: e.clone(),
            prev_hash: row.prev_hash,
            hash: row.hash,
        })
    }

    /// The last `n` rows, oldest first.
    pub fn audit_tail(&self, n: usize) -> Result<Vec<AuditRow>> {
        let sql = format!("SELECT {AUDIT_COLS} FROM audit ORDER BY id DESC LIMIT ?1");
        let limit = i64::try_from(n).unwrap_or(i64::MAX);
        let mut rows = self.audit_rows(&sql, params![limit])?;
        rows.reverse();
        Ok(rows)
    }

    /// Rows matching `f` (session, verdict, tool and event compared without
    /// regard to case), newest first, at most `f.limit` (capped at
    /// [`MAX_AUDIT_PAGE`]). Page on with `before = ` the last id returned.
    pub fn audit_query(&self, f: &AuditFilter) -> Result<Vec<AuditRow>> {
        let sql = format!(
            "SELECT {AUDIT_COLS} FROM audit
             WHERE (CAST(?1 AS TEXT) IS NULL OR lower(session) = lower(CAST(?1 AS TEXT)))
               AND (CAST(?2 AS TEXT) IS NULL OR lower(verdict) = lower(CAST(?2 AS TEXT)))
               AND (CAST(?3 AS TEXT) IS NULL OR lower(tool) = lower(CAST(?3 AS TEXT)))
               AND (CAST(?4 AS TEXT) IS NULL OR lower(kind) = lower(CAST(?4 AS TEXT)))
               AND (CAST(?5 AS BIGINT) IS NULL OR at >= ?5)
               AND (CAST(?6 AS BIGINT) IS NULL OR at <= ?6)
               AND (CAST(?7 AS BIGINT) IS NULL OR id < ?7)
             ORDER BY id DESC LIMIT ?8"
        );
        let limit = f.limit.clamp(1, MAX_AUDIT_PAGE) as i64;
        self.audit_rows(
            &sql,
            params![
                f.session, f.verdict, f.tool, f.kind, f.since, f.until, f.before, limit
            ],
        )
    }

    /// Every row, oldest first.
    pub fn audit_all(&self) -> Result<Vec<AuditRow>> {
        let sql = format!("SELECT {AUDIT_COLS} FROM audit ORDER BY id");
        self.audit_rows(&sql, &[])
    }

    /// Recompute the chain from the first row: each row's id follows the
    /// previous one, its `prev_hash` is the previous row's hash, and its hash
    /// is the hash of its content. Reports the first row that fails; rows cut
    /// from the end show as a gap against SQLite's sequence counter. (See the
    /// module documentation for what a chain cannot show.) Reads one snapshot.
    pub fn verify_audit(&self) -> Result<AuditCheck> {
        let tx = self.snapshot("start reading the audit log")?;
        let sequence = self.audit_sequence()?;
        // A page at a time, by id: the log can be larger than memory.
        let sql = format!("SELECT {AUDIT_COLS} FROM audit WHERE id > ?1 ORDER BY id LIMIT 1000");
        let mut expected_id = 1;
        let mut expected_prev = GENESIS_HASH.to_owned();
        let mut count = 0u64;
        let mut after = i64::MIN;
        loop {
            let page = self.rows("read the audit log", &sql, params![after], RawRow::from_row)?;
            let Some(last) = page.last() else { break };
            after = last.id;
            for row in page {
                let broken = |why: String| Ok(AuditCheck::Broken { row: row.id, why });
                if row.id != expected_id {
                    return broken(if row.id > expected_id {
                        format!("rows {expected_id} to {} are missing (deleted)", row.id - 1)
                    } else {
                        format!("row id {} out of order (expected {expected_id})", row.id)
                    });
                }
                if row.prev_hash != expected_prev {
                    let what = if row.id == 1 {
                        "the first row's prev_hash is not the genesis hash".to_owned()
                    } else {
                        format!("prev_hash does not match the hash of row {}", row.id - 1)
                    };
                    return broken(what);
                }
                if row.canonical().hash().as_deref() != Some(row.hash.as_str()) {
                    return broken("the row's content does not match its hash (edited)".into());
                }
                expected_prev = row.hash;
                expected_id += 1;
                count += 1;
            }
        }
        tx.commit()
            .map_err(self.sql("finish reading the audit log"))?;
        if let Some(last) = sequence.filter(|&s| s >= expected_id) {
            return Ok(AuditCheck::Broken {
                row: expected_id,
                why: format!(
                    "rows {expected_id} to {last} are missing (cut from the end of the log)"
                ),
            });
        }
        Ok(AuditCheck::Intact { rows: count })
    }

    /// The largest audit id ever used: SQLite's AUTOINCREMENT counter, or
    /// PostgreSQL's chain head (kept by a trigger in the appending transaction).
    fn audit_sequence(&self) -> Result<Option<i64>> {
        self.row(
            "read the audit sequence",
            self.audit_sequence_sql(),
            &[],
            |r| r.get(0),
        )
    }

    fn audit_sequence_sql(&self) -> &'static str {
        match self.dialect() {
            Dialect::Sqlite => "SELECT seq FROM sqlite_sequence WHERE name = 'audit'",
            Dialect::Postgres => "SELECT seq FROM audit_head",
        }
    }

    /// Rows read back: the stored text parsed. A kind, verdict or detail that
    /// does not parse (a row edited by hand, or written by a newer version)
    /// fails the read with [`StoreError::Corrupt`] naming the row; the chain
    /// itself is verified over the stored text ([`Store::verify_audit`]), so
    /// such a row still shows there as edited.
    fn audit_rows(&self, sql: &str, params: crate::db::Params<'_>) -> Result<Vec<AuditRow>> {
        let raw = self.rows("read the audit log", sql, params, RawRow::from_row)?;
        raw.into_iter()
            .map(|row| {
                let detail = serde_json::from_str(&row.detail).map_err(|e| {
                    self.corrupt(format!("detail of audit row {}", row.id), e.to_string())
                })?;
                let kind = row.kind.parse::<AuditKind>().map_err(|e| {
                    self.corrupt(format!("kind of audit row {}", row.id), e.to_string())
                })?;
                let verdict = row
                    .verdict
                    .as_deref()
                    .map(str::parse::<AuditVerdict>)
                    .transpose()
                    .map_err(|e| {
                        self.corrupt(format!("verdict of audit row {}", row.id), e.to_string())
                    })?;
                Ok(AuditRow {
                    id: row.id,
                    at: row.at,
                    event: AuditEvent {
                        kind,
                        session: row.session,
                        tool: row.tool,
                        verdict,
                        detail,
                    },
                    prev_hash: row.prev_hash,
                    hash: row.hash,
                })
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn canonical_json_has_a_fixed_field_order() {
        let c = Canonical {
            id: 1,
            at: 2,
            kind: "decision",
            session: Some("s"),
            tool: None,
            verdict: Some("allow"),
            detail: r#"{"a":1}"#,
            prev_hash: GENESIS_HASH,
        };
        assert_eq!(
            serde_json::to_string(&c).unwrap(),
            format!(
                r#"{{"id":1,"at":2,"kind":"decision","session":"s","tool":null,"verdict":"allow","detail":"{{\"a\":1}}","prev_hash":"{GENESIS_HASH}"}}"#
            )
        );
        let h = c.hash().unwrap();
        assert_eq!(h.len(), 64);
        assert_eq!(c.hash().unwrap(), h, "deterministic");
        let bad = Canonical {
            prev_hash: "xyz",
            ..c
        };
        assert!(bad.hash().is_none());
    }
}
