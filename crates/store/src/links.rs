//! Links from an agent's MCP calls to its session: written by the hook that
//! leaves a call to the MCP bridge, read (once) by that bridge.

use rusqlite::params;

use crate::{Result, Store};

/// One process: its pid and its start time (clock ticks since boot, field 22
/// of `/proc/PID/stat`); together they never name two processes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ProcessId {
    pub pid: i64,
    pub start: i64,
}

/// What a hook saw of an MCP call it left to the bridge.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CallLink {
    /// The agent's process: the bridge's parent.
    pub agent: ProcessId,
    /// `mcp__server__tool`.
    pub tool: String,
    /// A hash of the call's arguments (see `args_hash` in the engine).
    pub args_hash: String,
    /// The agent's own id of the call, where it sends one to the server too.
    pub call_id: Option<String>,
    pub session: String,
}

/// The session(s) the links of one call name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LinkedSession {
    /// No hook left this call to a bridge.
    None,
    One(String),
    /// Calls alike from several sessions of one agent process are waiting:
    /// which one this is cannot be told, and is never guessed.
    Several(Vec<String>),
}

/// Links older than this are gone: a call reaches its bridge within seconds
/// of its hook (a person answering the agent's own prompt in between).
pub const CALL_LINK_TTL_SECS: i64 = 3600;

impl Store {
    /// Records a hook's link (and forgets links past their time).
    pub fn add_call_link(&self, link: &CallLink, now: i64) -> Result<()> {
        let tx = self.immediate("lock the database to link a call")?;
        self.exec(
            "forget old call links",
            "DELETE FROM call_links WHERE created_at < ?1",
            params![now - CALL_LINK_TTL_SECS],
        )?;
        self.exec(
            "link a call to its session",
            "INSERT INTO call_links (agent_pid, agent_start, tool, args_hash, call_id, session, created_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
            params![
                link.agent.pid,
                link.agent.start,
                link.tool,
                link.args_hash,
                link.call_id,
                link.session,
                now
            ],
        )?;
        tx.commit().map_err(self.sql("commit a call link"))
    }

    /// The session of a call the bridge under `agent` received: by the
    /// agent's own call id when it sent one, else by tool and arguments.
    /// The link found is used up; several sessions are never a pick.
    pub fn take_call_link(
        &self,
        agent: ProcessId,
        tool: &str,
        args_hash: &str,
        call_id: Option<&str>,
        now: i64,
    ) -> Result<LinkedSession> {
        let key = LinkKey {
            agent,
            tool,
            by: call_id.unwrap_or(args_hash),
            by_call_id: call_id.is_some(),
            since: now - CALL_LINK_TTL_SECS,
        };
        // Read first: a bridge whose agent runs no hook (or a call no hook
        // left to it) takes no write lock.
        if self.links(&key)?.is_empty() {
            return Ok(LinkedSession::None);
        }
        let tx = self.immediate("lock the database to use a call's link")?;
        let rows = self.links(&key)?;
        let mut sessions: Vec<String> = rows.iter().map(|(_, s)| s.clone()).collect();
        sessions.sort();
        sessions.dedup();
        let found = match (rows.first(), sessions.len()) {
            (None, _) => LinkedSession::None,
            (Some((id, session)), 1) => {
                self.exec(
                    "use a call link",
                    "UPDATE call_links SET used_at = ?2 WHERE id = ?1",
                    params![id, now],
                )?;
                LinkedSession::One(session.clone())
            }
            (Some(_), _) => LinkedSession::Several(sessions),
        };
        tx.commit().map_err(self.sql("commit a call link's use"))?;
        Ok(found)
    }

    /// The unused links of one call, oldest first: `(id, session)`.
    fn links(&self, key: &LinkKey<'_>) -> Result<Vec<(i64, String)>> {
        let column = if key.by_call_id {
            "call_id"
        } else {
            "args_hash"
        };
        let sql = format!(
            "SELECT id, session FROM call_links
             WHERE agent_pid = ?1 AND agent_start = ?2 AND tool = ?3 AND {column} = ?4
               AND used_at IS NULL AND created_at >= ?5 ORDER BY id"
        );
        self.rows(
            "read a call's links",
            &sql,
            params![key.agent.pid, key.agent.start, key.tool, key.by, key.since],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
    }
}

/// Which links belong to one call.
struct LinkKey<'a> {
    agent: ProcessId,
    tool: &'a str,
    /// The agent's call id, or the arguments' hash.
    by: &'a str,
    by_call_id: bool,
    since: i64,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn link(session: &str, call_id: Option<&str>) -> CallLink {
        CallLink {
            agent: ProcessId { pid: 10, start: 99 },
            tool: "mcp__fs__read_text_file".into(),
            args_hash: "h1".into(),
            call_id: call_id.map(Into::into),
            session: session.into(),
        }
    }

    #[test]
    fn a_link_is_found_once_by_process_tool_and_arguments() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        let agent = ProcessId { pid: 10, start: 99 };
        store.add_call_link(&link("s1", None), 100).unwrap();
        let tool = "mcp__fs__read_text_file";
        // Another process (a reused pid), tool or arguments: not this call.
        let other = ProcessId { pid: 10, start: 98 };
        assert_eq!(
            store.take_call_link(other, tool, "h1", None, 101).unwrap(),
            LinkedSession::None
        );
        assert_eq!(
            store
                .take_call_link(agent, "mcp__fs__write_file", "h1", None, 101)
                .unwrap(),
            LinkedSession::None
        );
        assert_eq!(
            store.take_call_link(agent, tool, "h2", None, 101).unwrap(),
            LinkedSession::None
        );
        assert_eq!(
            store.take_call_link(agent, tool, "h1", None, 101).unwrap(),
            LinkedSession::One("s1".into())
        );
        // Used up.
        assert_eq!(
            store.take_call_link(agent, tool, "h1", None, 102).unwrap(),
            LinkedSession::None
        );
        // Too old.
        store.add_call_link(&link("s1", None), 100).unwrap();
        assert_eq!(
            store
                .take_call_link(agent, tool, "h1", None, 101 + CALL_LINK_TTL_SECS)
                .unwrap(),
            LinkedSession::None
        );
    }

    #[test]
    fn two_sessions_making_the_same_call_are_never_a_pick() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        let agent = ProcessId { pid: 10, start: 99 };
        let tool = "mcp__fs__read_text_file";
        store.add_call_link(&link("s1", None), 100).unwrap();
        store.add_call_link(&link("s2", None), 100).unwrap();
        assert_eq!(
            store.take_call_link(agent, tool, "h1", None, 101).unwrap(),
            LinkedSession::Several(vec!["s1".into(), "s2".into()])
        );
        // The agent's own call id tells them apart.
        store
            .add_call_link(&link("s1", Some("toolu_1")), 100)
            .unwrap();
        store
            .add_call_link(&link("s2", Some("toolu_2")), 100)
            .unwrap();
        assert_eq!(
            store
                .take_call_link(agent, tool, "h1", Some("toolu_2"), 101)
                .unwrap(),
            LinkedSession::One("s2".into())
        );
    }
}
