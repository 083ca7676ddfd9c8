//! Devices: the machines a person enrolled with a team server. Each holds a
//! credential (a random token, stored here only as its BLAKE3 hash) that is
//! good for asking decisions only: the server never lets it resolve, grant
//! or list. A revoked device's credential stops working at once.

use rusqlite::params;
use serde::Serialize;

use crate::db::Row;
use crate::{Result, Store, StoreError};

/// The prefix of every device credential (so a leaked one is recognisable).
pub const DEVICE_TOKEN_PREFIX: &str = "pcd_";

/// The longest device name accepted, in bytes.
pub const MAX_DEVICE_NAME: usize = 64;

const DEVICE_COLS: &str = "name, enrolled_by, created_at, revoked_at";

/// An enrolled machine (never its credential).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Device {
    /// Its name (`alice-laptop`, `ci-runner-3`).
    pub name: String,
    /// Who enrolled it.
    pub enrolled_by: String,
    pub created_at: i64,
    /// When it was revoked; its credential no longer works.
    pub revoked_at: Option<i64>,
}

fn device_from_row(r: &Row) -> rusqlite::Result<Device> {
    Ok(Device {
        name: r.get(0)?,
        enrolled_by: r.get(1)?,
        created_at: r.get(2)?,
        revoked_at: r.get(3)?,
    })
}

/// Letters, digits, `.`, `_` and `-`, 1 to [`MAX_DEVICE_NAME`] bytes.
fn check_name(name: &str) -> std::result::Result<(), String> {
    if name.is_empty() || name.len() > MAX_DEVICE_NAME {
        return Err(format!("a device name is 1 to {MAX_DEVICE_NAME} bytes"));
    }
    if !name
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
    {
        return Err("a device name is letters, digits, `.`, `_` and `-`".into());
    }
    Ok(())
}

impl Store {
    /// Enrols a device under `name` for `by` (the person): the device and
    /// its credential, shown once. A name is never reused, even revoked.
    pub fn enroll_device(&self, name: &str, by: &str, now: i64) -> Result<(Device, String)> {
        check_name(name).map_err(|why| StoreError::InvalidDevice {
            name: name.into(),
            why,
        })?;
        if by.trim().is_empty() {
            return Err(StoreError::InvalidDevice {
                name: name.into(),
                why: "nobody enrolled it".into(),
            });
        }
        let mut bytes = [0u8; 32];
        getrandom::fill(&mut bytes).map_err(|e| StoreError::Random { why: e.to_string() })?;
        let token: String = std::iter::once(DEVICE_TOKEN_PREFIX.to_owned())
            .chain(bytes.iter().map(|b| format!("{b:02x}")))
            .collect();
        let tx = self.immediate("lock the database to enrol a device")?;
        if self.device(name)?.is_some() {
            return Err(StoreError::InvalidDevice {
                name: name.into(),
                why: "a device of that name is (or was) enrolled: choose another name".into(),
            });
        }
        let device = self.returned(
            "enrol a device",
            &format!(
                "INSERT INTO devices (name, token_hash, enrolled_by, created_at)
                 VALUES (?1, ?2, ?3, ?4) RETURNING {DEVICE_COLS}"
            ),
            params![name, crate::token_hash(&token), by, now],
            device_from_row,
        )?;
        tx.commit().map_err(self.sql("commit a device enrolment"))?;
        Ok((device, token))
    }

    /// The active device whose credential `token` is, if any.
    pub fn device_for_token(&self, token: &str) -> Result<Option<Device>> {
        if !token.starts_with(DEVICE_TOKEN_PREFIX) {
            return Ok(None);
        }
        self.row(
            "read a device",
            &format!(
                "SELECT {DEVICE_COLS} FROM devices WHERE token_hash = ?1 AND revoked_at IS NULL"
            ),
            params![crate::token_hash(token)],
            device_from_row,
        )
    }

    /// The device named `name`, revoked or not.
    pub fn device(&self, name: &str) -> Result<Option<Device>> {
        self.row(
            "read a device",
            &format!("SELECT {DEVICE_COLS} FROM devices WHERE name = ?1"),
            params![name],
            device_from_row,
        )
    }

    /// Every device, in enrolment order.
    pub fn devices(&self) -> Result<Vec<Device>> {
        self.rows(
            "list devices",
            &format!("SELECT {DEVICE_COLS} FROM devices ORDER BY created_at, name"),
            &[],
            device_from_row,
        )
    }

    /// Revokes a device's credential; `false` when there was no active one.
    pub fn revoke_device(&self, name: &str, now: i64) -> Result<bool> {
        let changed = self.exec(
            "revoke a device",
            "UPDATE devices SET revoked_at = ?2 WHERE name = ?1 AND revoked_at IS NULL",
            params![name, now],
        )?;
        Ok(changed == 1)
    }
}
