//! The one query layer the store is written against, and the two databases
//! behind it: SQLite (a file in the data directory, the default) and
//! PostgreSQL (a team server's shared store, behind the `postgres` feature).
//!
//! Every store operation is written once, as SQL both databases accept, with
//! SQLite's numbered parameters (`?1`, `?2` …; PostgreSQL's connection reads
//! them as `$1`, `$2` …). Where the two dialects cannot share a statement the
//! operation picks one per [`Dialect`]. Values cross the layer as SQLite's
//! own [`Value`]s, so the store's types convert once (their `ToSql` and
//! `FromSql`) whichever database holds them.
//!
//! Writers are serialised the same way on both: a write transaction is
//! SQLite's `BEGIN IMMEDIATE` (the database's one write lock) or, on
//! PostgreSQL, a transaction that first takes one advisory lock shared by
//! every portcullis process on that database. A read-then-write therefore
//! cannot be overtaken on either, which is what makes a once-grant consumed
//! exactly once, identical requests collapse, and the audit log one chain.

#[cfg(feature = "postgres")]
pub(crate) mod postgres;
pub(crate) mod sqlite;

use rusqlite::ToSql;
use rusqlite::types::{FromSql, Value, ValueRef};

/// Which SQL a statement is written in, where the two differ.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dialect {
    /// SQLite (the default store: `portcullis.db` in the data directory).
    Sqlite,
    /// PostgreSQL (a team server's shared store).
    Postgres,
}

/// An error from either database.
#[derive(Debug, thiserror::Error)]
pub enum DbError {
    /// SQLite's error, or a value that does not convert.
    #[error(transparent)]
    Sqlite(#[from] rusqlite::Error),
    /// PostgreSQL's error (connection lost, serialisation, constraint …),
    /// with the server's own message where it sent one.
    #[cfg(feature = "postgres")]
    #[error("{}", postgres_message(.0))]
    Postgres(#[from] ::postgres::Error),
    /// The connection was already closed (the store is being dropped).
    #[error("the connection is closed")]
    Closed,
    /// A column PostgreSQL returned in a type the store never writes.
    #[error("column {column} has type `{ty}`, which portcullis does not store")]
    UnexpectedType {
        /// The column's index.
        column: usize,
        /// The type's name.
        ty: String,
    },
}

/// The server's message (`column "x" does not exist`) where there is one;
/// the client's own words ("db error", "connection closed") hide it.
#[cfg(feature = "postgres")]
fn postgres_message(e: &::postgres::Error) -> String {
    match e.as_db_error() {
        Some(db) => format!("{}: {}", db.severity(), db.message()),
        None => match std::error::Error::source(e) {
            Some(cause) => format!("{e}: {cause}"),
            None => e.to_string(),
        },
    }
}

/// One result row: its values in column order.
pub(crate) struct Row(pub(crate) Vec<Value>);

impl Row {
    /// Column `i` as `T`, converted by `T`'s own `FromSql`.
    pub(crate) fn get<T: FromSql>(&self, i: usize) -> rusqlite::Result<T> {
        let value = self
            .0
            .get(i)
            .ok_or(rusqlite::Error::InvalidColumnIndex(i))?;
        let value_ref = ValueRef::from(value);
        T::column_result(value_ref).map_err(|e| match e {
            rusqlite::types::FromSqlError::InvalidType => {
                rusqlite::Error::InvalidColumnType(i, format!("column {i}"), value_ref.data_type())
            }
            other => {
                rusqlite::Error::FromSqlConversionFailure(i, value_ref.data_type(), Box::new(other))
            }
        })
    }
}

/// Parameters, as `rusqlite::params!` writes them.
pub(crate) type Params<'a> = &'a [&'a dyn ToSql];

/// A connection to one of the two databases. Statements are cached by text.
pub(crate) trait Conn: Send {
    /// The statement's rows.
    fn query(&self, sql: &str, params: Params<'_>) -> Result<Vec<Row>, DbError>;
    /// Runs a statement; the number of rows it changed.
    fn execute(&self, sql: &str, params: Params<'_>) -> Result<usize, DbError>;
    /// Runs statements without parameters (schema, savepoints).
    fn execute_batch(&self, sql: &str) -> Result<(), DbError>;
    /// Starts a write transaction holding the store's one write lock.
    fn begin_write(&self) -> Result<(), DbError>;
    /// Starts a read-only transaction: one consistent snapshot.
    fn begin_read(&self) -> Result<(), DbError>;
    /// Commits the open transaction.
    fn commit(&self) -> Result<(), DbError>;
    /// Rolls the open transaction back.
    fn rollback(&self) -> Result<(), DbError>;
    /// Runs one transaction-control statement (`SAVEPOINT`, `RELEASE`),
    /// cached where the connection can.
    fn control(&self, sql: &'static str) -> Result<(), DbError> {
        self.execute_batch(sql)
    }
    /// Whether a transaction is open.
    fn in_transaction(&self) -> bool;
    /// Which SQL this connection speaks.
    fn dialect(&self) -> Dialect;
    /// The SQLite connection, for what only SQLite has (integrity checks,
    /// `data_version`); `None` on PostgreSQL.
    fn sqlite(&self) -> Option<&rusqlite::Connection>;
    /// Waits up to `timeout` for another connection to commit a change:
    /// PostgreSQL is told (`LISTEN`/`NOTIFY`), so it returns at once; SQLite
    /// has no such signal, so it waits the whole time (callers poll).
    fn wait_for_change(&self, timeout: std::time::Duration) -> Result<(), DbError>;
}

/// A parameter's value, as SQLite would bind it.
#[cfg_attr(not(feature = "postgres"), allow(dead_code))]
pub(crate) fn value_of(param: &dyn ToSql) -> rusqlite::Result<Value> {
    use rusqlite::types::ToSqlOutput;
    Ok(match param.to_sql()? {
        ToSqlOutput::Borrowed(v) => match v {
            ValueRef::Null => Value::Null,
            ValueRef::Integer(i) => Value::Integer(i),
            ValueRef::Real(f) => Value::Real(f),
            ValueRef::Text(t) => Value::Text(String::from_utf8_lossy(t).into_owned()),
            ValueRef::Blob(b) => Value::Blob(b.to_vec()),
        },
        ToSqlOutput::Owned(v) => v,
        other => {
            return Err(rusqlite::Error::ToSqlConversionFailure(
                format!("unsupported parameter {other:?}").into(),
            ));
        }
    })
}
