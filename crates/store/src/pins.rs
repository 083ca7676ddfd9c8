//! MCP tool definition pins: what a person approved a tool to be.

use rusqlite::params;

use crate::db::Row;

use crate::types::{Pin, PinCheck, PinStatus};
use crate::{Result, Store, StoreError};

const PIN_COLS: &str = "server, tool, hash, definition, status, created_at, decided_by, decided_at";

fn pin_from_row(r: &Row) -> rusqlite::Result<Pin> {
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
        let known = self.pin_status(server, tool, hash)?;
        match known {
            Some(PinStatus::Approved) => return Ok(PinCheck::Approved),
            Some(PinStatus::Rejected) => return Ok(PinCheck::Rejected),
            _ => {}
        }
        let tx = self.immediate("lock the database to check a tool pin")?;
        let this = self.pin_status(server, tool, hash)?;
        let previous = self.approved_pin(server, tool)?;
        let check = match this {
            Some(PinStatus::Approved) => PinCheck::Approved,
            Some(PinStatus::Rejected) => PinCheck::Rejected,
            Some(PinStatus::Pending) => PinCheck::Withheld {
                previous: previous.map(Box::new),
                pending: Box::new(self.load_pin(server, tool, hash)?),
            },
            None => {
                let approve = previous.is_none() && trust_first_use;
                let (status, by) = if approve {
                    (PinStatus::Approved, Some("first-use"))
                } else {
                    (PinStatus::Pending, None)
                };
                self.exec(
                    "record a tool pin",
                    &format!(
                        "INSERT INTO tool_pins ({PIN_COLS}) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)"
                    ),
                    params![
                        server,
                        tool,
                        hash,
                        definition.to_string(),
                        status,
                        now,
                        by,
                        approve.then_some(now)
                    ],
                )?;
                if approve {
                    PinCheck::FirstUse
                } else {
                    PinCheck::Withheld {
                        previous: previous.map(Box::new),
                        pending: Box::new(self.load_pin(server, tool, hash)?),
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
        let changed = self.exec(
            "decide a tool pin",
            "UPDATE tool_pins SET status = ?4, decided_by = ?5, decided_at = ?6
             WHERE server = ?1 AND tool = ?2 AND hash = ?3 AND status != 'approved'",
            params![server, tool, hash, status, by, now],
        )?;
        if changed != 1 {
            return Err(StoreError::InvalidRequest {
                why: format!("no undecided definition of `{tool}` on `{server}` with hash {hash}"),
            });
        }
        let pin = self.load_pin(server, tool, hash)?;
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
        self.rows("list tool pins", &sql, params![pending_only], pin_from_row)
    }

    /// The last approved definition of a tool.
    pub fn approved_pin(&self, server: &str, tool: &str) -> Result<Option<Pin>> {
        self.row(
            "read the approved tool pin",
            &format!(
                "SELECT {PIN_COLS} FROM tool_pins WHERE server = ?1 AND tool = ?2 AND status = 'approved'
                 ORDER BY decided_at DESC, created_at DESC LIMIT 1"
            ),
            params![server, tool],
            pin_from_row,
        )
    }

    fn pin_status(&self, server: &str, tool: &str, hash: &str) -> Result<Option<PinStatus>> {
        self.row(
            "read a tool pin",
            "SELECT status FROM tool_pins WHERE server = ?1 AND tool = ?2 AND hash = ?3",
            params![server, tool, hash],
            |r| r.get(0),
        )
    }

    fn load_pin(&self, server: &str, tool: &str, hash: &str) -> Result<Pin> {
        self.returned(
            "read a tool pin",
            &format!(
                "SELECT {PIN_COLS} FROM tool_pins WHERE server = ?1 AND tool = ?2 AND hash = ?3"
            ),
            params![server, tool, hash],
            pin_from_row,
        )
    }
}
