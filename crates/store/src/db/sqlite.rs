//! The SQLite side of the query layer: one `rusqlite` connection, statements
//! cached by text.

use rusqlite::Connection;
use rusqlite::types::Value;

use super::{Conn, DbError, Dialect, Params, Row};

/// One SQLite connection.
pub(crate) struct Sqlite {
    pub(crate) conn: Connection,
}

impl Conn for Sqlite {
    fn query(&self, sql: &str, params: Params<'_>) -> Result<Vec<Row>, DbError> {
        let mut stmt = self.conn.prepare_cached(sql)?;
        let columns = stmt.column_count();
        let mut rows = stmt.query(params)?;
        let mut out = Vec::new();
        while let Some(row) = rows.next()? {
            let mut values = Vec::with_capacity(columns);
            for i in 0..columns {
                values.push(row.get::<_, Value>(i)?);
            }
            out.push(Row(values));
        }
        Ok(out)
    }

    fn execute(&self, sql: &str, params: Params<'_>) -> Result<usize, DbError> {
        Ok(self.conn.prepare_cached(sql)?.execute(params)?)
    }

    fn execute_batch(&self, sql: &str) -> Result<(), DbError> {
        Ok(self.conn.execute_batch(sql)?)
    }

    // Transaction control comes from the statement cache: the daemon begins
    // and commits every batch, and parsing these statements anew each time
    // was ≈ 7 % of the instructions of a hook call it judged.
    fn begin_write(&self) -> Result<(), DbError> {
        self.control("BEGIN IMMEDIATE")
    }

    fn begin_read(&self) -> Result<(), DbError> {
        // A deferred transaction takes its snapshot at its first read and
        // keeps it: later commits by others are not seen until it ends.
        self.control("BEGIN DEFERRED")
    }

    fn commit(&self) -> Result<(), DbError> {
        self.control("COMMIT")
    }

    fn rollback(&self) -> Result<(), DbError> {
        self.control("ROLLBACK")
    }

    fn control(&self, sql: &'static str) -> Result<(), DbError> {
        self.conn.prepare_cached(sql)?.execute([])?;
        Ok(())
    }

    fn in_transaction(&self) -> bool {
        !self.conn.is_autocommit()
    }

    fn dialect(&self) -> Dialect {
        Dialect::Sqlite
    }

    fn sqlite(&self) -> Option<&Connection> {
        Some(&self.conn)
    }

    fn wait_for_change(&self, timeout: std::time::Duration) -> Result<(), DbError> {
        std::thread::sleep(timeout);
        Ok(())
    }
}
