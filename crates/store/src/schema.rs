//! The schema, as an ordered list of migrations.
//!
//! The database's `PRAGMA user_version` is the number of migrations applied.
//! [`crate::Store::open`] applies the missing ones in one `BEGIN IMMEDIATE`
//! transaction (so two processes opening a fresh store at once migrate it
//! once) and refuses a database whose version is newer than this list.
//! Migrations are append-only: never edit one that has shipped, add the next.

/// One schema step.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Migration {
    /// The `user_version` after this step: 1, 2, 3 …
    pub version: i64,
    /// What it does, for people.
    pub name: &'static str,
    /// The SQL, run as one batch (SQLite).
    pub sql: &'static str,
    /// The same step for PostgreSQL: the same tables, columns and rules in
    /// PostgreSQL's words (`BIGINT` for SQLite's `INTEGER`, identity columns
    /// for `AUTOINCREMENT`, a trigger function for a trigger).
    pub postgres: &'static str,
}

/// PostgreSQL keeps the schema version in a table of its own (SQLite's is
/// `PRAGMA user_version`); created, under the write lock, before the first
/// migration.
pub const POSTGRES_VERSION_TABLE: &str = "
CREATE TABLE IF NOT EXISTS portcullis_schema (version BIGINT NOT NULL);
INSERT INTO portcullis_schema (version)
    SELECT 0 WHERE NOT EXISTS (SELECT 1 FROM portcullis_schema);
";

/// Every migration, oldest first.
pub const MIGRATIONS: &[Migration] = &[
    Migration {
        version: 1,
        name: "sessions, principals, grants, permission requests, audit log",
        sql: r#"
-- A session and its principal: agent kind, parent, workflow. The token is
-- stored only as its BLAKE3 hash (hex); NULL when the session was registered
-- implicitly by a hook and no token was issued yet.
CREATE TABLE sessions (
    id          TEXT PRIMARY KEY NOT NULL,
    agent       TEXT,
    cwd         TEXT,
    parent      TEXT REFERENCES sessions(id),
    kind        TEXT NOT NULL
                CHECK (kind IN ('main', 'subagent', 'background', 'workflow', 'scheduled')),
    workflow    TEXT,
    token_hash  TEXT,
    created_at  INTEGER NOT NULL,
    expires_at  INTEGER,
    revoked_at  INTEGER,
    CHECK (parent IS NULL OR parent <> id),
    CHECK (kind <> 'main' OR parent IS NULL),
    CHECK (kind <> 'subagent' OR parent IS NOT NULL),
    CHECK (kind <> 'workflow' OR workflow IS NOT NULL)
) STRICT;
CREATE INDEX sessions_parent ON sessions(parent);

-- Principals are columns of `sessions`; this view names them for readers.
CREATE VIEW principals AS
    SELECT id AS session, kind, parent, workflow, agent FROM sessions;

-- Permission requests. At most one pending request per (session, tool, op,
-- target): raising an identical one bumps `count` and `last_seen`.
CREATE TABLE requests (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    session       TEXT NOT NULL REFERENCES sessions(id),
    tool          TEXT NOT NULL,
    op            TEXT NOT NULL CHECK (op IN ('read', 'write', 'delete', 'move', 'exec')),
    target        TEXT NOT NULL CHECK (json_valid(target)),
    reason        TEXT NOT NULL,
    eligible      INTEGER NOT NULL CHECK (eligible IN (0, 1)),
    policy_scope  TEXT NOT NULL,
    suggested     TEXT NOT NULL CHECK (json_valid(suggested)),
    count         INTEGER NOT NULL DEFAULT 1 CHECK (count >= 1),
    created_at    INTEGER NOT NULL,
    last_seen     INTEGER NOT NULL,
    status        TEXT NOT NULL DEFAULT 'pending'
                  CHECK (status IN ('pending', 'approved', 'denied')),
    resolved_by   TEXT,
    resolved_at   INTEGER,
    grant_id      INTEGER REFERENCES grants(id),
    CHECK ((status = 'pending') = (resolved_at IS NULL))
) STRICT;
CREATE UNIQUE INDEX requests_pending_identical
    ON requests(session, tool, op, target) WHERE status = 'pending';

-- Grants. Device grants have no session and allow reads only; only once-grants
-- are ever consumed. The CHECKs repeat the store's own rules so that no code
-- path can write a device grant for a write.
CREATE TABLE grants (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    session      TEXT REFERENCES sessions(id),
    scope        TEXT NOT NULL CHECK (scope IN ('once', 'session', 'device')),
    op           TEXT NOT NULL CHECK (op IN ('read', 'write', 'delete', 'move', 'exec')),
    target       TEXT NOT NULL CHECK (json_valid(target)),
    expires_at   INTEGER,
    approver     TEXT NOT NULL CHECK (approver <> ''),
    request_id   INTEGER REFERENCES requests(id),
    created_at   INTEGER NOT NULL,
    consumed_at  INTEGER,
    revoked_at   INTEGER,
    CHECK ((scope = 'device') = (session IS NULL)),
    CHECK (scope <> 'device' OR op = 'read'),
    CHECK (scope = 'once' OR consumed_at IS NULL)
) STRICT;
CREATE INDEX grants_session ON grants(session);
CREATE INDEX grants_scope ON grants(scope);

-- The audit log: append-only, each row chained to the previous one by
-- hash = BLAKE3(prev_hash bytes || canonical row JSON). The triggers stop
-- every UPDATE and DELETE made through SQLite (someone with the file can drop
-- them: the chain is what makes that visible).
CREATE TABLE audit (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    at         INTEGER NOT NULL,
    kind       TEXT NOT NULL,
    session    TEXT,
    tool       TEXT,
    verdict    TEXT,
    detail     TEXT NOT NULL,
    prev_hash  TEXT NOT NULL,
    hash       TEXT NOT NULL
) STRICT;
CREATE TRIGGER audit_no_update BEFORE UPDATE ON audit
    BEGIN SELECT RAISE(ABORT, 'the audit log is append-only'); END;
CREATE TRIGGER audit_no_delete BEFORE DELETE ON audit
    BEGIN SELECT RAISE(ABORT, 'the audit log is append-only'); END;
"#,
        postgres: r#"
CREATE TABLE sessions (
    seq         BIGINT GENERATED ALWAYS AS IDENTITY UNIQUE,
    id          TEXT PRIMARY KEY NOT NULL,
    agent       TEXT,
    cwd         TEXT,
    parent      TEXT REFERENCES sessions(id),
    kind        TEXT NOT NULL
                CHECK (kind IN ('main', 'subagent', 'background', 'workflow', 'scheduled')),
    workflow    TEXT,
    token_hash  TEXT,
    created_at  BIGINT NOT NULL,
    expires_at  BIGINT,
    revoked_at  BIGINT,
    CHECK (parent IS NULL OR parent <> id),
    CHECK (kind <> 'main' OR parent IS NULL),
    CHECK (kind <> 'subagent' OR parent IS NOT NULL),
    CHECK (kind <> 'workflow' OR workflow IS NOT NULL)
);
CREATE INDEX sessions_parent ON sessions(parent);

CREATE VIEW principals AS
    SELECT id AS session, kind, parent, workflow, agent FROM sessions;

CREATE TABLE requests (
    id            BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
    session       TEXT NOT NULL REFERENCES sessions(id),
    tool          TEXT NOT NULL,
    op            TEXT NOT NULL CHECK (op IN ('read', 'write', 'delete', 'move', 'exec')),
    target        TEXT NOT NULL CHECK (target::jsonb IS NOT NULL),
    reason        TEXT NOT NULL,
    eligible      BIGINT NOT NULL CHECK (eligible IN (0, 1)),
    policy_scope  TEXT NOT NULL,
    suggested     TEXT NOT NULL CHECK (suggested::jsonb IS NOT NULL),
    count         BIGINT NOT NULL DEFAULT 1 CHECK (count >= 1),
    created_at    BIGINT NOT NULL,
    last_seen     BIGINT NOT NULL,
    status        TEXT NOT NULL DEFAULT 'pending'
                  CHECK (status IN ('pending', 'approved', 'denied')),
    resolved_by   TEXT,
    resolved_at   BIGINT,
    grant_id      BIGINT,
    CHECK ((status = 'pending') = (resolved_at IS NULL))
);
CREATE UNIQUE INDEX requests_pending_identical
    ON requests(session, tool, op, target) WHERE status = 'pending';

CREATE TABLE grants (
    id           BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
    session      TEXT REFERENCES sessions(id),
    scope        TEXT NOT NULL CHECK (scope IN ('once', 'session', 'device')),
    op           TEXT NOT NULL CHECK (op IN ('read', 'write', 'delete', 'move', 'exec')),
    target       TEXT NOT NULL CHECK (target::jsonb IS NOT NULL),
    expires_at   BIGINT,
    approver     TEXT NOT NULL CHECK (approver <> ''),
    request_id   BIGINT REFERENCES requests(id),
    created_at   BIGINT NOT NULL,
    consumed_at  BIGINT,
    revoked_at   BIGINT,
    CHECK ((scope = 'device') = (session IS NULL)),
    CHECK (scope <> 'device' OR op = 'read'),
    CHECK (scope = 'once' OR consumed_at IS NULL)
);
CREATE INDEX grants_session ON grants(session);
CREATE INDEX grants_scope ON grants(scope);
ALTER TABLE requests ADD FOREIGN KEY (grant_id) REFERENCES grants(id);

-- The audit log, chained as in SQLite. `audit_head` is the chain head: the
-- largest id ever appended, kept by a trigger in the appending transaction
-- (SQLite's AUTOINCREMENT counter), so rows cut from the end show as a gap.
CREATE TABLE audit (
    id         BIGINT PRIMARY KEY,
    at         BIGINT NOT NULL,
    kind       TEXT NOT NULL,
    session    TEXT,
    tool       TEXT,
    verdict    TEXT,
    detail     TEXT NOT NULL,
    prev_hash  TEXT NOT NULL,
    hash       TEXT NOT NULL
);
CREATE TABLE audit_head (seq BIGINT NOT NULL);
INSERT INTO audit_head (seq) VALUES (0);
CREATE FUNCTION audit_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'the audit log is append-only';
END $$;
CREATE TRIGGER audit_no_update BEFORE UPDATE OR DELETE OR TRUNCATE ON audit
    FOR EACH STATEMENT EXECUTE FUNCTION audit_append_only();
CREATE FUNCTION audit_advance_head() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE audit_head SET seq = GREATEST(seq, NEW.id);
    RETURN NEW;
END $$;
CREATE TRIGGER audit_head_follows AFTER INSERT ON audit
    FOR EACH ROW EXECUTE FUNCTION audit_advance_head();

-- A counter bumped by every change, for "anything new?" (SQLite's
-- `PRAGMA data_version`).
CREATE TABLE changes (n BIGINT NOT NULL);
INSERT INTO changes (n) VALUES (0);
CREATE FUNCTION changes_bump() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE changes SET n = n + 1;
    RETURN NULL;
END $$;
CREATE TRIGGER sessions_changed AFTER INSERT OR UPDATE OR DELETE ON sessions
    FOR EACH STATEMENT EXECUTE FUNCTION changes_bump();
CREATE TRIGGER requests_changed AFTER INSERT OR UPDATE OR DELETE ON requests
    FOR EACH STATEMENT EXECUTE FUNCTION changes_bump();
CREATE TRIGGER grants_changed AFTER INSERT OR UPDATE OR DELETE ON grants
    FOR EACH STATEMENT EXECUTE FUNCTION changes_bump();
CREATE TRIGGER audit_changed AFTER INSERT ON audit
    FOR EACH STATEMENT EXECUTE FUNCTION changes_bump();
"#,
    },
    Migration {
        version: 2,
        name: "MCP tool definition pins",
        sql: r#"
-- The definitions of MCP tools a person (or trust on first use) approved,
-- by server and tool, as the BLAKE3 hash of their canonical JSON. A tool whose
-- current definition has no approved pin is withheld by the bridge; its new
-- definition waits here as `pending` until a person approves it.
CREATE TABLE tool_pins (
    server       TEXT NOT NULL,
    tool         TEXT NOT NULL,
    hash         TEXT NOT NULL,
    definition   TEXT NOT NULL,
    status       TEXT NOT NULL CHECK (status IN ('approved', 'pending', 'rejected')),
    created_at   INTEGER NOT NULL,
    decided_by   TEXT,
    decided_at   INTEGER,
    PRIMARY KEY (server, tool, hash)
) STRICT;
"#,
        postgres: r#"
CREATE TABLE tool_pins (
    server       TEXT NOT NULL,
    tool         TEXT NOT NULL,
    hash         TEXT NOT NULL,
    definition   TEXT NOT NULL,
    status       TEXT NOT NULL CHECK (status IN ('approved', 'pending', 'rejected')),
    created_at   BIGINT NOT NULL,
    decided_by   TEXT,
    decided_at   BIGINT,
    PRIMARY KEY (server, tool, hash)
);
CREATE TRIGGER tool_pins_changed AFTER INSERT OR UPDATE OR DELETE ON tool_pins
    FOR EACH STATEMENT EXECUTE FUNCTION changes_bump();
"#,
    },
    Migration {
        version: 3,
        name: "the hold deadline of a permission request",
        sql: r#"
-- Until when (unix seconds) a front door (a hook, the MCP bridge) keeps the
-- agent's call waiting for a person: the latest deadline any holder stored,
-- each computed below the agent's own timeout. The UI counts down to it;
-- NULL when nobody ever waited.
ALTER TABLE requests ADD COLUMN held_until INTEGER;
"#,
        postgres: r#"
ALTER TABLE requests ADD COLUMN held_until BIGINT;
"#,
    },
    Migration {
        version: 4,
        name: "a person's denial of a call, with a message for the agent",
        sql: r#"
-- When a person denies a request they may say why: the agent reads
-- `deny_message` as the refusal of its next attempts of the same call in the
-- same session, until `deny_until` (unix seconds; NULL: for the session's
-- life). A denial without either is a plain deny (the next attempt asks anew).
ALTER TABLE requests ADD COLUMN deny_message TEXT;
ALTER TABLE requests ADD COLUMN deny_until INTEGER;
ALTER TABLE requests ADD COLUMN deny_standing INTEGER NOT NULL DEFAULT 0
    CHECK (deny_standing IN (0, 1));
CREATE INDEX requests_denied ON requests(session, tool) WHERE deny_standing = 1;
"#,
        postgres: r#"
ALTER TABLE requests ADD COLUMN deny_message TEXT;
ALTER TABLE requests ADD COLUMN deny_until BIGINT;
ALTER TABLE requests ADD COLUMN deny_standing BIGINT NOT NULL DEFAULT 0
    CHECK (deny_standing IN (0, 1));
CREATE INDEX requests_denied ON requests(session, tool) WHERE deny_standing = 1;
"#,
    },
    Migration {
        version: 5,
        name: "links from an agent's MCP calls to its session, for the MCP bridge",
        sql: r#"
-- A hook that leaves an MCP call to the bridge the agent runs for that server
-- records whose call it is: the agent's process (pid and start time, which
-- together name one process), the tool, a hash of the arguments, and the
-- agent's own id of the call where it has one (Claude Code's tool_use_id,
-- which it also sends the server as `_meta.claudecode/toolUseId`). The bridge
-- finds its call's session here. A link is used once.
CREATE TABLE call_links (
    id           INTEGER PRIMARY KEY,
    agent_pid    INTEGER NOT NULL,
    agent_start  INTEGER NOT NULL,
    tool         TEXT NOT NULL,
    args_hash    TEXT NOT NULL,
    call_id      TEXT,
    session      TEXT NOT NULL,
    created_at   INTEGER NOT NULL,
    used_at      INTEGER
) STRICT;
CREATE INDEX call_links_process ON call_links(agent_pid, agent_start, tool, args_hash);
CREATE INDEX call_links_call_id ON call_links(call_id) WHERE call_id IS NOT NULL;
"#,
        postgres: r#"
CREATE TABLE call_links (
    id           BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
    agent_pid    BIGINT NOT NULL,
    agent_start  BIGINT NOT NULL,
    tool         TEXT NOT NULL,
    args_hash    TEXT NOT NULL,
    call_id      TEXT,
    session      TEXT NOT NULL,
    created_at   BIGINT NOT NULL,
    used_at      BIGINT
);
CREATE INDEX call_links_process ON call_links(agent_pid, agent_start, tool, args_hash);
CREATE INDEX call_links_call_id ON call_links(call_id) WHERE call_id IS NOT NULL;
"#,
    },
    Migration {
        version: 6,
        name: "how long an allow-once made from a request waits for its retry",
        sql: r#"
-- How long a `once` grant made from this request waits for its retry: the
-- configuration's `[approvals] once_ttl_secs` where the call was judged
-- (NULL: the default, 10 minutes).
ALTER TABLE requests ADD COLUMN once_ttl_secs INTEGER;
"#,
        postgres: r#"
ALTER TABLE requests ADD COLUMN once_ttl_secs BIGINT;
"#,
    },
    Migration {
        version: 7,
        name: "devices enrolled with a team server",
        sql: r#"
-- The machines a person enrolled with a team server: a credential (its
-- BLAKE3 hash) good for asking decisions only. A name is never reused.
CREATE TABLE devices (
    name         TEXT PRIMARY KEY NOT NULL,
    token_hash   TEXT NOT NULL UNIQUE,
    enrolled_by  TEXT NOT NULL CHECK (enrolled_by <> ''),
    created_at   INTEGER NOT NULL,
    revoked_at   INTEGER
) STRICT;
"#,
        postgres: r#"
CREATE TABLE devices (
    name         TEXT PRIMARY KEY NOT NULL,
    token_hash   TEXT NOT NULL UNIQUE,
    enrolled_by  TEXT NOT NULL CHECK (enrolled_by <> ''),
    created_at   BIGINT NOT NULL,
    revoked_at   BIGINT
);
"#,
    },
    Migration {
        version: 8,
        name: "changes announced to listening replicas",
        // SQLite has no listeners: its readers poll `data_version`.
        sql: "",
        postgres: r#"
-- A change to what people see (sessions, requests, grants, pins) is
-- announced on `portcullis_changes` as well as counted, so a replica's event
-- stream hears another replica's commit at once. Audit rows (one per
-- decision) are only counted: nobody's view waits on them.
CREATE FUNCTION changes_count() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE changes SET n = n + 1;
    RETURN NULL;
END $$;
DROP TRIGGER audit_changed ON audit;
CREATE TRIGGER audit_changed AFTER INSERT ON audit
    FOR EACH STATEMENT EXECUTE FUNCTION changes_count();
CREATE OR REPLACE FUNCTION changes_bump() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE changes SET n = n + 1;
    PERFORM pg_notify('portcullis_changes', '');
    RETURN NULL;
END $$;
"#,
    },
    Migration {
        version: 9,
        name: "device-wide approvals delivered to their device",
        sql: r#"
-- The enrolled device whose call raised a request (NULL: none). Approved
-- device-wide, such a request makes no grant here: the approval is
-- delivered to that device, which keeps the grant in its own store, and
-- `delivered_at` records when the device confirmed it holds it.
ALTER TABLE requests ADD COLUMN device TEXT;
ALTER TABLE requests ADD COLUMN delivered_at INTEGER;
"#,
        postgres: r#"
ALTER TABLE requests ADD COLUMN device TEXT;
ALTER TABLE requests ADD COLUMN delivered_at BIGINT;
"#,
    },
];

/// The schema version this build writes: the number of migrations.
pub fn current_version() -> i64 {
    MIGRATIONS.len() as i64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_are_consecutive_from_one() {
        for (i, m) in MIGRATIONS.iter().enumerate() {
            assert_eq!(m.version, i as i64 + 1, "migration `{}`", m.name);
        }
        assert_eq!(current_version(), MIGRATIONS.len() as i64);
    }

    #[test]
    fn every_migration_applies_in_order() {
        let conn = rusqlite::Connection::open_in_memory().unwrap();
        for m in MIGRATIONS {
            conn.execute_batch(m.sql)
                .unwrap_or_else(|e| panic!("migration {}: {e}", m.version));
        }
    }
}
