//! MCP tool definition pins: what a person approved a tool to be.

use rusqlite::{OptionalExtension, Row, params};

use crate::types::{Pin, PinCheck, PinStatus};
use crate::{Result, Store, StoreError};

const PIN_COLS: &str = "server, tool, hash, definition, status, created_at, decided_by, decided_at";

fn pin_from_row(r: &Row<'_>) -> rusqlite::Result<Pin> {
    let definition: String = r.get(3)?;
    Ok(Pin {
        server: r.get(0)?,
        tool: r.get(1)?,
        hash: r.get(2)?,
        definition: serde_json::from_str(&definition).unwrap_or(serde_json::Value::Null),
        status: r.get(4)?,
        created_at: r.get(5)?,
        decided_by: r.get(6)?,
        decided_at: r.get(7)?,
    })
}

impl Store {
    /// Checks a tool's current definition (`hash` of `definition`) against
    /// its pins, recording what it saw: on first sight the definition is
    /// approved when `trust_first_use`, else it waits as `pending`; a
    /// definition that differs from the approved one waits as `pending`.
    pub fn check_pin(
        &self,
        server: &str,
        tool: &str,
        hash: &str,
        definition: &serde_json::Value,
        trust_first_use: bool,
        now: i64,
    ) -> Result<PinCheck> {
        // Read first: a definition already approved or rejected — every
        // `tools/list` after the first — needs no write lock.
        let known: Option<PinStatus> = self
            .conn
            .prepare_cached(
                "SELECT status FROM tool_pins WHERE server = ?1 AND tool = ?2 AND hash = ?3",
            )
            .and_then(|mut s| {
                s.query_row(params![server, tool, hash], |r| r.get(0))
                    .optional()
            })
            .map_err(self.sql("read a tool pin"))?;
        match known {
            Some(PinStatus::Approved) => return Ok(PinCheck::Approved),
            Some(PinStatus::Rejected) => return Ok(PinCheck::Rejected),
            _ => {}
        }
        let tx = self.immediate("lock the database to check a tool pin")?;
        let this: Option<PinStatus> = tx
            .prepare_cached(
                "SELECT status FROM tool_pins WHERE server = ?1 AND tool = ?2 AND hash = ?3",
            )
            .and_then(|mut s| {
                s.query_row(params![server, tool, hash], |r| r.get(0))
                    .optional()
            })
            .map_err(self.sql("read a tool pin"))?;
        let previous = self.latest_approved(&tx, server, tool)?;
        let check = match this {
            Some(PinStatus::Approved) => PinCheck::Approved,
            Some(PinStatus::Rejected) => PinCheck::Rejected,
            Some(PinStatus::Pending) => PinCheck::Withheld {
                previous: previous.map(Box::new),
                pending: Box::new(self.load_pin(&tx, server, tool, hash)?),
            },
            None => {
                let approve = previous.is_none() && trust_first_use;
                let (status, by) = if approve {
                    (PinStatus::Approved, Some("first-use"))
                } else {
                    (PinStatus::Pending, None)
                };
                tx.prepare_cached(&format!(
                    "INSERT INTO tool_pins ({PIN_COLS}) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)"
                ))
                .and_then(|mut s| {
                    s.execute(params![
                        server,
                        tool,
                        hash,
                        definition.to_string(),
                        status,
                        now,
                        by,
                        approve.then_some(now)
                    ])
                })
                .map_err(self.sql("record a tool pin"))?;
                if approve {
                    PinCheck::FirstUse
                } else {
                    PinCheck::Withheld {
                        previous: previous.map(Box::new),
                        pending: Box::new(self.load_pin(&tx, server, tool, hash)?),
                    }
                }
            }
        };
        tx.commit().map_err(self.sql("commit a tool pin"))?;
        Ok(check)
    }

    /// Approves or rejects a pending (or rejected) definition.
    pub fn decide_pin(
        &self,
        server: &str,
        tool: &str,
        hash: &str,
        approve: bool,
        by: &str,
        now: i64,
    ) -> Result<Pin> {
        let tx = self.immediate("lock the database to decide a tool pin")?;
        let status = if approve {
            PinStatus::Approved
        } else {
            PinStatus::Rejected
        };
        let changed = tx
            .prepare_cached(
                "UPDATE tool_pins SET status = ?4, decided_by = ?5, decided_at = ?6
                 WHERE server = ?1 AND tool = ?2 AND hash = ?3 AND status != 'approved'",
            )
            .and_then(|mut s| s.execute(params![server, tool, hash, status, by, now]))
            .map_err(self.sql("decide a tool pin"))?;
        if changed != 1 {
            return Err(StoreError::InvalidRequest {
                why: format!("no undecided definition of `{tool}` on `{server}` with hash {hash}"),
            });
        }
        let pin = self.load_pin(&tx, server, tool, hash)?;
        tx.commit()
            .map_err(self.sql("commit a tool pin decision"))?;
        Ok(pin)
    }

    /// Every pin (or only the pending ones), newest first.
    pub fn pins(&self, pending_only: bool) -> Result<Vec<Pin>> {
        let sql = format!(
            "SELECT {PIN_COLS} FROM tool_pins WHERE (?1 = 0 OR status = 'pending')
             ORDER BY created_at DESC, server, tool"
        );
        let mut stmt = self
            .conn
            .prepare_cached(&sql)
            .map_err(self.sql("list tool pins"))?;
        let rows = stmt
            .query_map([pending_only], pin_from_row)
            .map_err(self.sql("list tool pins"))?;
        rows.collect::<rusqlite::Result<_>>()
            .map_err(self.sql("read tool pins"))
    }

    /// The last approved definition of a tool.
    pub fn approved_pin(&self, server: &str, tool: &str) -> Result<Option<Pin>> {
        self.latest_approved(&self.conn, server, tool)
    }

    fn latest_approved(
        &self,
        conn: &rusqlite::Connection,
        server: &str,
        tool: &str,
    ) -> Result<Option<Pin>> {
        conn.prepare_cached(&format!(
            "SELECT {PIN_COLS} FROM tool_pins WHERE server = ?1 AND tool = ?2 AND status = 'approved'
             ORDER BY decided_at DESC, created_at DESC LIMIT 1"
        ))
        .and_then(|mut s| s.query_row(params![server, tool], pin_from_row).optional())
        .map_err(self.sql("read the approved tool pin"))
    }

    fn load_pin(
        &self,
        conn: &rusqlite::Connection,
        server: &str,
        tool: &str,
        hash: &str,
    ) -> Result<Pin> {
        conn.prepare_cached(&format!(
            "SELECT {PIN_COLS} FROM tool_pins WHERE server = ?1 AND tool = ?2 AND hash = ?3"
        ))
        .and_then(|mut s| s.query_row(params![server, tool, hash], pin_from_row))
        .map_err(self.sql("read a tool pin"))
    }
}
