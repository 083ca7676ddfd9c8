//! Databases: dropping databases and users, SQL that drops, truncates, or
//! deletes or updates without `WHERE` (through `psql -c`, `mysql -e`,
//! `sqlite3 DB "…"` and the other SQL shells), `redis-cli FLUSHALL`, MongoDB
//! shell code that drops or deletes, and the frameworks' reset tasks
//! (`rails db:drop`, `manage.py flush`, `artisan migrate:fresh`, `prisma migrate reset`).
//! SQL read from stdin or a file (`psql -f x.sql`) is not seen here.

use super::Opt::Flag;
use super::Test;
use super::{PROGRAM, Pack, Program, RULE, Rule, hz};

const CODE: &str = "destructive-sql";
const RESET: &str = "database-reset";

pub const PACK: Pack = Pack {
    name: "databases",
    programs: &[
        Program {
            names: &["dropdb", "dropuser", "pg_dropcluster", "dropdb.exe"],
            rules: &[Rule {
                hit: hz(RESET, "drops a PostgreSQL database, role or cluster"),
                ..RULE
            }],
            ..PROGRAM
        },
        Program {
            names: &[
                "psql",
                "mysql",
                "mariadb",
                "sqlite3",
                "sqlite",
                "duckdb",
                "clickhouse-client",
                "clickhouse",
                "cqlsh",
                "sqlcmd",
                "usql",
                "pgcli",
                "mycli",
                "litecli",
                "cockroach",
                "snowsql",
                "bq",
                "trino",
                "presto",
                "spanner-cli",
                "mongo-sql",
            ],
            rules: &[Rule {
                test: Test::Sql,
                hit: hz(
                    CODE,
                    "SQL that drops or truncates data, or deletes or updates every row",
                ),
                ..RULE
            }],
            ..PROGRAM
        },
        Program {
            names: &["mysqladmin", "mariadb-admin"],
            rules: &[Rule {
                sub: &["drop"],
                anywhere: true,
                hit: hz(RESET, "`mysqladmin drop` drops a database"),
                ..RULE
            }],
            ..PROGRAM
        },
        Program {
            names: &["redis-cli", "valkey-cli", "keydb-cli"],
            valued: &[
                "-h", "-p", "-n", "-a", "-u", "--user", "--pass", "-s", "--sni", "--cacert",
            ],
            rules: &[Rule {
                sub: &["flushall|flushdb|shutdown"],
                anywhere: true,
                hit: hz(RESET, "`FLUSHALL`/`FLUSHDB` deletes every key"),
                ..RULE
            }],
            ..PROGRAM
        },
        Program {
            names: &["mongo", "mongosh"],
            rules: &[Rule {
                test: Test::Mongo,
                hit: hz(
                    CODE,
                    "MongoDB code that drops a database or collection or deletes documents",
                ),
                ..RULE
            }],
            ..PROGRAM
        },
        Program {
            names: &["etcdctl"],
            rules: &[Rule {
                sub: &["del"],
                all: &[&[Flag("--prefix"), Flag("--from-key")]],
                hit: hz(RESET, "`etcdctl del --prefix` deletes a key range"),
                ..RULE
            }],
            ..PROGRAM
        },
        Program {
            names: &["influx"],
            rules: &[Rule {
                sub: &["delete"],
                anywhere: true,
                hit: hz(RESET, "`influx … delete` deletes buckets or data"),
                ..RULE
            }],
            ..PROGRAM
        },
        Program {
            names: &["rails", "rake"],
            rules: &[Rule {
                sub: &[
                    "db:drop*|db:reset|db:schema:load|db:purge*|db:truncate_all|db:setup|db:migrate:reset",
                ],
                hit: hz(RESET, "a Rails task that drops or reloads the database"),
                ..RULE
            }],
            ..PROGRAM
        },
        Program {
            names: &["manage.py", "django-admin"],
            rules: &[Rule {
                sub: &["flush|reset_db|sqlflush"],
                hit: hz(RESET, "`manage.py flush` deletes every row"),
                ..RULE
            }],
            ..PROGRAM
        },
        Program {
            names: &["python", "python3"],
            rules: &[Rule {
                sub: &["*manage.py", "flush|reset_db"],
                hit: hz(RESET, "`manage.py flush` deletes every row"),
                ..RULE
            }],
            ..PROGRAM
        },
        Program {
            names: &["php"],
            rules: &[Rule {
                sub: &[
                    "artisan",
                    "migrate:fresh|migrate:reset|migrate:refresh|db:wipe",
                ],
                hit: hz(RESET, "an Artisan task that drops every table"),
                ..RULE
            }],
            ..PROGRAM
        },
        Program {
            names: &["prisma"],
            rules: &[
                Rule {
                    sub: &["migrate", "reset"],
                    hit: hz(RESET, "`prisma migrate reset` drops the database"),
                    ..RULE
                },
                Rule {
                    sub: &["db", "push"],
                    all: &[&[Flag("--force-reset"), Flag("--accept-data-loss")]],
                    hit: hz(RESET, "`prisma db push --force-reset` drops the data"),
                    ..RULE
                },
            ],
            ..PROGRAM
        },
        Program {
            names: &["sequelize", "sequelize-cli"],
            rules: &[Rule {
                sub: &["db:drop|db:migrate:undo:all|db:seed:undo:all"],
                hit: hz(
                    RESET,
                    "a Sequelize task that drops the database or undoes every migration",
                ),
                ..RULE
            }],
            ..PROGRAM
        },
        Program {
            names: &["knex"],
            rules: &[Rule {
                sub: &["migrate:rollback"],
                all: &[&[Flag("--all")]],
                hit: hz(
                    RESET,
                    "`knex migrate:rollback --all` undoes every migration",
                ),
                ..RULE
            }],
            ..PROGRAM
        },
    ],
};

#[cfg(test)]
mod tests {
    use super::super::testing::check;

    #[test]
    fn hazard_pack_databases() {
        check(
            "databases",
            &[
                "dropdb app",
                "dropdb -h localhost -U postgres app_prod",
                "dropuser alice",
                "psql -c 'drop table users'",
                "psql -c 'TRUNCATE orders'",
                "psql -c 'DELETE FROM users'",
                "psql --command='DROP TABLE t'",
                "psql -c 'UPDATE users SET password = NULL'",
                "psql -c 'ALTER TABLE users DROP COLUMN email'",
                "mysql -u root -p -e 'DROP TABLE users'",
                "mysql --execute='DROP SCHEMA app'",
                "mariadb -e 'DROP DATABASE test'",
                "mysqladmin -f drop app",
                "sqlite3 app.db 'DELETE FROM users'",
                "sqlite3 app.db 'DROP TABLE users'",
                "duckdb data.db 'DROP TABLE t'",
                "clickhouse-client --query 'DROP TABLE events'",
                "cqlsh -e 'DROP KEYSPACE app'",
                "redis-cli FLUSHALL",
                "redis-cli -n 2 flushdb",
                "redis-cli -h cache.internal FLUSHALL ASYNC",
                "redis-cli --pass secret FLUSHALL",
                "mongosh --eval 'db.dropDatabase()'",
                "mongosh app --eval 'db.users.drop()'",
                "mongosh --eval 'db.users.deleteMany({})'",
                "etcdctl del --prefix ''",
                "rails db:drop",
                "bin/rails db:reset",
                "rake db:drop",
                "python manage.py flush --noinput",
                "php artisan migrate:fresh",
                "npx prisma migrate reset --force",
                "prisma db push --force-reset",
                "npx sequelize-cli db:drop",
                "knex migrate:rollback --all",
                "psql.exe -c 'DROP DATABASE app'",
                "redis-cli.exe FLUSHALL",
            ],
            &[
                "psql -l",
                "psql -c 'SELECT 1'",
                "psql -d app -c '\\dt'",
                "psql -c 'DELETE FROM sessions WHERE expires_at < now()'",
                "psql -c \"UPDATE users SET name = 'x' WHERE id = 1\"",
                "psql -c 'SELECT dropped_at FROM events'",
                "psql -c 'SELECT * FROM drops'",
                "psql -c 'CREATE TABLE t (id int)'",
                "mysql -e 'SHOW DATABASES'",
                "mysqladmin status",
                "sqlite3 app.db '.tables'",
                "sqlite3 app.db 'SELECT count(*) FROM users'",
                "redis-cli PING",
                "redis-cli GET session:1",
                "redis-cli INFO keyspace",
                "mongosh --eval 'db.stats()'",
                "mongosh app --eval 'db.users.find().limit(5)'",
                "etcdctl get --prefix /app",
                "rails db:migrate",
                "rake db:migrate",
                "python manage.py migrate",
                "php artisan migrate",
                "npx prisma generate",
                "knex migrate:latest",
                "dropdb --help",
                "createdb test",
            ],
        );
    }
}
