//! Which agent process a hook or an MCP bridge belongs to, and which
//! portcullis MCP bridges that agent runs — read from `/proc`, which the
//! kernel writes, never from anything a caller says about itself.
//!
//! The agent runs its hook through a shell (`sh -c 'portcullis hook …'`) and
//! its stdio MCP servers directly: the nearest ancestor that is not a shell
//! is the agent. A process is named by its pid and its start time together,
//! so a pid reused after the agent exits names nobody.

use std::path::{Path, PathBuf};

use portcullis_store::ProcessId;

/// Shells an agent may run a hook through: skipped on the way up.
const SHELLS: &[&str] = &[
    "sh", "bash", "dash", "zsh", "ksh", "mksh", "fish", "busybox",
];

/// How far up a hook looks for its agent.
const MAX_DEPTH: usize = 8;

/// What `/proc/PID/stat` says of a process.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Stat {
    pub comm: String,
    pub ppid: i64,
    pub start: i64,
}

/// Parses `/proc/PID/stat`: `pid (comm) state ppid … starttime(22nd) …`.
/// The name may hold spaces and parentheses: it ends at the last `)`.
pub fn parse_stat(text: &str) -> Option<Stat> {
    let open = text.find('(')?;
    let close = text.rfind(')')?;
    let comm = text.get(open + 1..close)?.to_string();
    let rest: Vec<&str> = text.get(close + 1..)?.split_whitespace().collect();
    // rest[0] is field 3 (state): field N is rest[N - 3].
    let ppid = rest.get(1)?.parse().ok()?;
    let start = rest.get(19)?.parse().ok()?;
    Some(Stat { comm, ppid, start })
}

fn stat(pid: i64) -> Option<Stat> {
    parse_stat(&std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?)
}

/// The agent process `pid` (a hook's process) runs under: its nearest
/// ancestor that is not a shell.
pub fn agent_of(pid: i64) -> Option<ProcessId> {
    let mut at = stat(pid)?.ppid;
    for _ in 0..MAX_DEPTH {
        if at <= 1 {
            return None;
        }
        let s = stat(at)?;
        if !SHELLS.contains(&s.comm.as_str()) {
            return Some(ProcessId {
                pid: at,
                start: s.start,
            });
        }
        at = s.ppid;
    }
    None
}

/// The bridge's own agent: the nearest ancestor of this process that is not
/// a shell.
pub fn own_agent() -> Option<ProcessId> {
    agent_of(i64::from(std::process::id()))
}

/// The server name (`--name`) of a `portcullis mcp-bridge` command line, or
/// `None` when it is not one.
pub fn bridge_name(argv: &[String]) -> Option<String> {
    if argv.get(1).map(String::as_str) != Some("mcp-bridge") {
        return None;
    }
    let mut words = argv.iter().skip(2);
    while let Some(w) = words.next() {
        if w == "--" {
            break;
        }
        if w == "--name" {
            return words.next().cloned();
        }
        if let Some(name) = w.strip_prefix("--name=") {
            return Some(name.to_string());
        }
    }
    None
}

/// The names of the portcullis MCP bridges `agent` runs as its own children,
/// each a running `portcullis-daemon mcp-bridge` (or `portcullis
/// mcp-bridge` about to become one) from `install_dir`.
pub fn bridges_of(agent: ProcessId, install_dir: &Path) -> Vec<String> {
    // The agent is still the process the caller saw.
    if stat(agent.pid).map(|s| s.start) != Some(agent.start) {
        return Vec::new();
    }
    let ours: Vec<PathBuf> = ["portcullis-daemon", "portcullis"]
        .iter()
        .map(|n| install_dir.join(n))
        .filter_map(|p| std::fs::canonicalize(p).ok())
        .collect();
    let mut names = Vec::new();
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{}/task", agent.pid)) else {
        return names;
    };
    for task in tasks.flatten() {
        let Ok(children) = std::fs::read_to_string(task.path().join("children")) else {
            continue;
        };
        for child in children
            .split_whitespace()
            .filter_map(|c| c.parse::<i64>().ok())
        {
            if stat(child).map(|s| s.ppid) != Some(agent.pid) {
                continue;
            }
            let exe = std::fs::read_link(format!("/proc/{child}/exe")).ok();
            if !exe.is_some_and(|e| ours.contains(&e)) {
                continue;
            }
            let Ok(cmdline) = std::fs::read(format!("/proc/{child}/cmdline")) else {
                continue;
            };
            let argv: Vec<String> = cmdline
                .split(|b| *b == 0)
                .filter(|a| !a.is_empty())
                .map(|a| String::from_utf8_lossy(a).into_owned())
                .collect();
            if let Some(name) = bridge_name(&argv)
                && !names.contains(&name)
            {
                names.push(name);
            }
        }
    }
    names
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_lines_are_read_past_odd_names() {
        let line =
            "4242 (node (x) y) S 4000 4242 4000 0 -1 4194560 1 0 0 0 3 1 0 0 20 0 11 0 987654 1 2";
        assert_eq!(
            parse_stat(line),
            Some(Stat {
                comm: "node (x) y".into(),
                ppid: 4000,
                start: 987654
            })
        );
        assert_eq!(parse_stat("garbage"), None);
        assert_eq!(parse_stat("1 (a) S 0"), None);
    }

    #[test]
    fn this_process_has_a_start_time_and_a_parent() {
        let own = stat(i64::from(std::process::id())).unwrap();
        assert!(own.start > 0 && own.ppid > 0, "{own:?}");
    }

    #[test]
    fn bridge_names_come_from_before_the_server_command() {
        let argv = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(
            bridge_name(&argv(&[
                "/x/portcullis-daemon",
                "mcp-bridge",
                "--name",
                "fs",
                "--",
                "npx"
            ])),
            Some("fs".into())
        );
        assert_eq!(
            bridge_name(&argv(&[
                "portcullis",
                "mcp-bridge",
                "--refuse-unpinned",
                "--name=fs"
            ])),
            Some("fs".into())
        );
        // A `--name` of the server's own command is not the bridge's.
        assert_eq!(
            bridge_name(&argv(&[
                "portcullis",
                "mcp-bridge",
                "--",
                "srv",
                "--name",
                "x"
            ])),
            None
        );
        assert_eq!(
            bridge_name(&argv(&["portcullis", "serve", "--name", "fs"])),
            None
        );
    }
}
