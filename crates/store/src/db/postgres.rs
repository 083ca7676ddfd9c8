//! The PostgreSQL side of the query layer: one connection of the synchronous
//! `postgres` client, statements prepared once per text, SQLite's `?N`
//! parameters read as `$N`.
//!
//! A lost connection (the server restarted, a network cut) fails the
//! operation that met it — the engine refuses the call — and the next
//! operation outside a transaction connects again.

use std::cell::{Cell, RefCell, RefMut};
use std::collections::HashMap;
use std::error::Error;

use postgres::fallible_iterator::FallibleIterator;
use postgres::types::{IsNull, ToSql, Type, to_sql_checked};
use postgres::{Client, NoTls, Statement};
use rusqlite::types::Value;

use super::{Conn, DbError, Dialect, Params, Row, value_of};

/// The advisory lock every portcullis write transaction takes first, so that
/// writers on one database (any number of replicas) are serialised as
/// SQLite's single write lock serialises them. ("portcull" in ASCII.)
pub(crate) const WRITE_LOCK: i64 = 0x706f_7274_6375_6c6c;

/// The channel a change is announced on (by the `changes_bump` trigger).
pub(crate) const CHANGES_CHANNEL: &str = "portcullis_changes";

/// One PostgreSQL connection.
pub(crate) struct Postgres {
    url: String,
    /// Always `Some` but while dropping (see `Drop`).
    client: RefCell<Option<Client>>,
    statements: RefCell<HashMap<String, Statement>>,
    in_tx: Cell<bool>,
    /// Whether this connection has said `LISTEN` (a new connection has not).
    listening: Cell<bool>,
}

impl Postgres {
    /// Connects to `url` (`postgres://USER@HOST[:PORT]/DB`, or any
    /// connection string the `postgres` client reads).
    pub(crate) fn connect(url: &str) -> Result<Postgres, DbError> {
        let client = Client::connect(url, NoTls)?;
        Ok(Postgres {
            url: url.to_owned(),
            client: RefCell::new(Some(client)),
            statements: RefCell::new(HashMap::new()),
            in_tx: Cell::new(false),
            listening: Cell::new(false),
        })
    }

    /// A fresh connection when the last one was lost, outside a transaction
    /// only (a transaction's work died with its connection).
    fn reconnect_if_lost(&self) -> Result<(), DbError> {
        if self.in_tx.get() || !self.client()?.is_closed() {
            return Ok(());
        }
        let client = Client::connect(&self.url, NoTls)?;
        if let Some(lost) = self.client.borrow_mut().replace(client) {
            close_aside(lost);
        }
        self.listening.set(false);
        self.statements.borrow_mut().clear();
        Ok(())
    }

    fn client(&self) -> Result<RefMut<'_, Client>, DbError> {
        RefMut::filter_map(self.client.borrow_mut(), Option::as_mut).map_err(|_| DbError::Closed)
    }

    /// Runs `f`; when it failed because the connection was lost (the
    /// server restarted since the last use) and `may_repeat`, runs it once
    /// more on a new connection. Writes outside a transaction never repeat:
    /// the first may have committed before its answer was lost.
    fn again_if_lost<T>(
        &self,
        may_repeat: bool,
        f: impl Fn() -> Result<T, DbError>,
    ) -> Result<T, DbError> {
        let first = f();
        let Err(e) = first else { return first };
        let lost = self.client.borrow().as_ref().is_none_or(Client::is_closed);
        if !(may_repeat && lost) {
            return Err(e);
        }
        self.reconnect_if_lost().map_err(|_| e)?;
        f()
    }

    fn statement(&self, sql: &str) -> Result<Statement, DbError> {
        self.reconnect_if_lost()?;
        if let Some(s) = self.statements.borrow().get(sql) {
            return Ok(s.clone());
        }
        let prepared = self.client()?.prepare(&numbered(sql))?;
        self.statements
            .borrow_mut()
            .insert(sql.to_owned(), prepared.clone());
        Ok(prepared)
    }

    fn values(params: Params<'_>) -> Result<Vec<PgValue>, DbError> {
        params
            .iter()
            .map(|p| value_of(*p).map(PgValue).map_err(DbError::from))
            .collect()
    }
}

impl Drop for Postgres {
    /// The synchronous client closes its connection by running its own
    /// async runtime, which panics on a thread that drives another (a
    /// server's store dropped at shutdown): it is closed on a thread of its own.
    fn drop(&mut self) {
        if let Some(client) = self.client.get_mut().take() {
            close_aside(client);
        }
    }
}

/// Drops a client on a thread of its own (see `Drop for Postgres`).
fn close_aside(client: Client) {
    let _ = std::thread::spawn(move || drop(client)).join();
}

/// SQLite's `?N` parameters as PostgreSQL's `$N` (outside quoted text).
fn numbered(sql: &str) -> String {
    let mut out = String::with_capacity(sql.len());
    let mut quoted = false;
    let mut chars = sql.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\'' {
            quoted = !quoted;
        }
        if c == '?' && !quoted && chars.peek().is_some_and(char::is_ascii_digit) {
            out.push('$');
        } else {
            out.push(c);
        }
    }
    out
}

/// A SQLite value bound as a PostgreSQL parameter of the type the server
/// inferred for it.
#[derive(Debug)]
struct PgValue(Value);

impl ToSql for PgValue {
    fn to_sql(
        &self,
        ty: &Type,
        out: &mut bytes::BytesMut,
    ) -> Result<IsNull, Box<dyn Error + Sync + Send>> {
        match &self.0 {
            Value::Null => Ok(IsNull::Yes),
            Value::Integer(i) => match *ty {
                Type::INT8 => i.to_sql(ty, out),
                Type::INT4 => i32::try_from(*i)?.to_sql(ty, out),
                Type::INT2 => i16::try_from(*i)?.to_sql(ty, out),
                Type::BOOL => (*i != 0).to_sql(ty, out),
                Type::FLOAT8 => (*i as f64).to_sql(ty, out),
                Type::TEXT | Type::VARCHAR => i.to_string().to_sql(ty, out),
                _ => Err(format!("an integer cannot be bound as `{ty}`").into()),
            },
            Value::Real(f) => match *ty {
                Type::FLOAT8 => f.to_sql(ty, out),
                _ => Err(format!("a real number cannot be bound as `{ty}`").into()),
            },
            Value::Text(s) => s.to_sql(ty, out),
            Value::Blob(b) => b.to_sql(ty, out),
        }
    }

    fn accepts(_: &Type) -> bool {
        true
    }

    to_sql_checked!();
}

fn row_of(row: &postgres::Row) -> Result<Row, DbError> {
    let mut values = Vec::with_capacity(row.len());
    for (i, column) in row.columns().iter().enumerate() {
        let ty = column.type_();
        let value = match *ty {
            Type::INT8 => row.try_get::<_, Option<i64>>(i)?.map(Value::Integer),
            Type::INT4 => row
                .try_get::<_, Option<i32>>(i)?
                .map(|v| Value::Integer(v.into())),
            Type::INT2 => row
                .try_get::<_, Option<i16>>(i)?
                .map(|v| Value::Integer(v.into())),
            Type::BOOL => row
                .try_get::<_, Option<bool>>(i)?
                .map(|v| Value::Integer(v.into())),
            Type::FLOAT8 => row.try_get::<_, Option<f64>>(i)?.map(Value::Real),
            Type::TEXT | Type::VARCHAR | Type::NAME | Type::BPCHAR => {
                row.try_get::<_, Option<String>>(i)?.map(Value::Text)
            }
            Type::BYTEA => row.try_get::<_, Option<Vec<u8>>>(i)?.map(Value::Blob),
            _ => {
                return Err(DbError::UnexpectedType {
                    column: i,
                    ty: ty.name().to_owned(),
                });
            }
        };
        values.push(value.unwrap_or(Value::Null));
    }
    Ok(Row(values))
}

impl Conn for Postgres {
    fn query(&self, sql: &str, params: Params<'_>) -> Result<Vec<Row>, DbError> {
        let values = Self::values(params)?;
        let refs: Vec<&(dyn ToSql + Sync)> =
            values.iter().map(|v| v as &(dyn ToSql + Sync)).collect();
        // A read outside a transaction may go again on a new connection.
        let rows = self.again_if_lost(!self.in_tx.get(), || {
            let stmt = self.statement(sql)?;
            Ok(self.client()?.query(&stmt, &refs)?)
        })?;
        rows.iter().map(row_of).collect()
    }

    fn execute(&self, sql: &str, params: Params<'_>) -> Result<usize, DbError> {
        let stmt = self.statement(sql)?;
        let values = Self::values(params)?;
        let refs: Vec<&(dyn ToSql + Sync)> =
            values.iter().map(|v| v as &(dyn ToSql + Sync)).collect();
        let n = self.client()?.execute(&stmt, &refs)?;
        Ok(usize::try_from(n).unwrap_or(usize::MAX))
    }

    fn execute_batch(&self, sql: &str) -> Result<(), DbError> {
        // Outside a transaction these only begin one, or change the schema in
        // a transaction of their own: safe to send again on a new connection.
        self.again_if_lost(!self.in_tx.get(), || {
            self.reconnect_if_lost()?;
            Ok(self.client()?.batch_execute(sql)?)
        })
    }

    fn begin_write(&self) -> Result<(), DbError> {
        self.execute_batch(&format!(
            "BEGIN; SELECT pg_advisory_xact_lock({WRITE_LOCK})"
        ))?;
        self.in_tx.set(true);
        Ok(())
    }

    fn begin_read(&self) -> Result<(), DbError> {
        self.execute_batch("BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY")?;
        self.in_tx.set(true);
        Ok(())
    }

    fn commit(&self) -> Result<(), DbError> {
        self.in_tx.set(false);
        // Never on a new connection: there `COMMIT` only warns that no
        // transaction is open, and the lost transaction's work would pass
        // for committed.
        Ok(self.client()?.batch_execute("COMMIT")?)
    }

    fn rollback(&self) -> Result<(), DbError> {
        self.in_tx.set(false);
        let mut client = self.client()?;
        if client.is_closed() {
            return Ok(());
        }
        Ok(client.batch_execute("ROLLBACK")?)
    }

    fn in_transaction(&self) -> bool {
        self.in_tx.get()
    }

    fn dialect(&self) -> Dialect {
        Dialect::Postgres
    }

    fn sqlite(&self) -> Option<&rusqlite::Connection> {
        None
    }

    fn wait_for_change(&self, timeout: std::time::Duration) -> Result<(), DbError> {
        if !self.listening.get() {
            self.execute_batch(&format!("LISTEN {CHANGES_CHANNEL}"))?;
            self.listening.set(true);
        }
        let mut client = self.client()?;
        let mut notifications = client.notifications();
        // Everything already told, then the first new word or the timeout.
        let mut told = false;
        {
            let mut pending = notifications.iter();
            while pending.next()?.is_some() {
                told = true;
            }
        }
        if !told {
            notifications.timeout_iter(timeout).next()?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::numbered;

    #[test]
    fn numbered_parameters_become_dollars_outside_quotes() {
        assert_eq!(
            numbered("SELECT ?1, '?2', ?10 WHERE x = ?2"),
            "SELECT $1, '?2', $10 WHERE x = $2"
        );
        assert_eq!(numbered("a ? b"), "a ? b");
    }
}
