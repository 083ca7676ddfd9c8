//! The approval API is off limits to tool calls.
//!
//! `portcullis serve` is where a person approves requests; an agent that could
//! call it could approve itself. The server refuses callers without the UI
//! token, and — defence in depth — the policy denies any tool call that names
//! the server's port. The check is deliberately broad: a false positive costs
//! one denied call that mentions the port; a miss costs the whole model.

use serde_json::Value;

use crate::effects::Effect;
use crate::tables::{PORT_ARGUMENT_CLIENTS, PORTCULLIS_AGENT_SUBCOMMANDS};

/// Why the call reaches the approval API at `port` (or runs portcullis'
/// own state commands, which reach the same state), or `None`.
///
/// Denied: any string of the input holding `:PORT` (a URL, `socat
/// TCP:host:PORT`) or `/dev/tcp/HOST/PORT`; a client that takes the port as
/// its own argument (`nc localhost PORT`); and any mention of `PORT` as a
/// number when the call also has a network or code effect (`P=PORT; curl
/// localhost:$P`, `python -c …`).
pub fn reaches(input: &Value, effects: &[Effect], port: u16) -> Option<String> {
    let mut strings = Vec::new();
    collect_strings(input, &mut strings);
    let connects = effects
        .iter()
        .any(|e| matches!(e, Effect::Network { .. } | Effect::Code { .. }));
    for s in &strings {
        // A URL, read by the one URL reader: its port, written or the
        // scheme's default (`http://127.0.0.1/` is port 80).
        for token in s.split(|c: char| c.is_whitespace() || c == '"' || c == '\'') {
            if let Some(u) = portcullis_shell::url::parse(token)
                && u.port == Some(port)
                && u.host.as_deref().is_some_and(is_loopback)
            {
                return Some(format!(
                    "it addresses port {port}, the portcullis approval API"
                ));
            }
        }
        // Every run of digits that is the port as a client reads it: leading
        // zeros do not change a port (`:07878`, `nc host 007878`).
        for at in port_runs(s, port) {
            // `at` starts a run of ASCII digits: a char boundary.
            let before = s[..at].chars().next_back();
            if before == Some(':') || s[..at].ends_with('/') && s[..at].contains("/dev/tcp/") {
                return Some(format!(
                    "it addresses port {port}, the portcullis approval API"
                ));
            }
            if connects {
                return Some(format!(
                    "it names port {port} (the portcullis approval API) and connects to the network or runs code"
                ));
            }
        }
    }
    for e in effects {
        if let Effect::Exec { command, .. } = e
            && command.program.rsplit('/').next() == Some("portcullis")
        {
            let sub = command.words.get(1).map(String::as_str).unwrap_or("");
            if !PORTCULLIS_AGENT_SUBCOMMANDS.contains(&sub) {
                return Some(format!(
                    "`portcullis {sub}` changes or reveals portcullis' own state (grants, requests, sessions, the login token)"
                ));
            }
        }
        if let Effect::Exec { command, .. } = e
            && PORT_ARGUMENT_CLIENTS.contains(&command.program.rsplit('/').next().unwrap_or(""))
            && command.words.iter().skip(1).any(|w| {
                !w.is_empty() && w.bytes().all(|b| b.is_ascii_digit()) && port_runs(w, port) == [0]
            })
        {
            return Some(format!(
                "`{}` connects to port {port}, the portcullis approval API",
                command.program
            ));
        }
    }
    None
}

/// A host the approval server (loopback only) may be reached at, as the URL
/// reader normalises hosts: `127.0.0.0/8`, `::1`, `0.0.0.0`, `localhost`.
fn is_loopback(host: &str) -> bool {
    host == "localhost"
        || host.ends_with(".localhost")
        || host == "::1"
        || host == "0.0.0.0"
        || host == "::"
        || host.starts_with("127.")
}

/// Where runs of ASCII digits in `s` start whose value is `port` (leading
/// zeros allowed, as `strtol` and URL parsers read them).
fn port_runs(s: &str, port: u16) -> Vec<usize> {
    let b = s.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while let Some(c) = b.get(i) {
        if !c.is_ascii_digit() {
            i += 1;
            continue;
        }
        let start = i;
        while b.get(i).is_some_and(u8::is_ascii_digit) {
            i += 1;
        }
        // An ASCII run, so always a slice of `s`; were it not, it counts as
        // the port (fail closed: the call is denied).
        let is_port = s
            .get(start..i)
            .is_none_or(|run| run.trim_start_matches('0') == port.to_string());
        if is_port {
            out.push(start);
        }
    }
    out
}

fn collect_strings<'a>(v: &'a Value, out: &mut Vec<&'a str>) {
    match v {
        Value::String(s) => out.push(s),
        Value::Array(a) => a.iter().for_each(|v| collect_strings(v, out)),
        Value::Object(o) => o.values().for_each(|v| collect_strings(v, out)),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn network() -> Vec<Effect> {
        vec![Effect::Network {
            program: Some("curl".into()),
            host: None,
        }]
    }

    #[test]
    fn urls_and_dev_tcp_name_the_port() {
        for text in [
            "curl -X POST http://127.0.0.1:7878/v1/requests/1/resolve",
            "wget -qO- localhost:7878/v1/grants",
            "socat - TCP:[::1]:7878",
            "exec 3<>/dev/tcp/127.0.0.1/7878",
        ] {
            assert!(
                reaches(&json!({"command": text}), &[], 7878).is_some(),
                "{text}"
            );
        }
        assert!(reaches(&json!({"url": "http://localhost:7878/"}), &[], 7878).is_some());
        assert!(reaches(&json!({"args": {"deep": ["x", "h:7878"]}}), &[], 7878).is_some());
    }

    fn exec(words: &[&str]) -> Effect {
        let command = portcullis_shell::analyze(&words.join(" "))
            .commands
            .into_iter()
            .next()
            .expect("one command");
        Effect::Exec {
            program: command.program.clone(),
            argv: command.argv.clone(),
            via: "top".into(),
            command: Box::new(command),
        }
    }

    #[test]
    fn portcullis_state_commands_are_off_limits() {
        for words in [
            &[
                "portcullis",
                "requests",
                "resolve",
                "1",
                "--scope",
                "device",
            ][..],
            &["portcullis", "grants", "add", "--scope", "device"],
            &[
                "/usr/local/bin/portcullis",
                "serve",
                "--addr",
                "127.0.0.1:9",
            ],
            &["portcullis", "sessions", "list"],
            &["portcullis"],
        ] {
            assert!(
                reaches(&json!({}), &[exec(words)], 7878).is_some(),
                "{words:?}"
            );
        }
        for words in [
            &["portcullis", "check", "--tool", "Bash"][..],
            &["portcullis", "analyze", "ls"],
        ] {
            assert!(
                reaches(&json!({}), &[exec(words)], 7878).is_none(),
                "{words:?}"
            );
        }
    }

    #[test]
    fn a_bare_port_counts_only_with_a_connection() {
        let input = json!({"command": "P=7878; curl localhost:$P/v1/grants"});
        assert!(reaches(&input, &network(), 7878).is_some());
        assert!(reaches(&json!({"command": "echo 7878"}), &[], 7878).is_none());
    }

    /// The class "the approval port in every spelling": a client reads a
    /// port with leading zeros as the same port.
    #[test]
    fn the_approval_port_in_every_spelling() {
        for text in [
            "curl http://127.0.0.1:07878/v1/grants",
            "curl http://[::1]:007878/",
            "curl -x http://127.0.0.1:07878 http://example.com/",
            "curl --connect-to example.com:80:127.0.0.1:07878 http://example.com/",
            "http_proxy=http://localhost.:07878 wget http://example.com/",
            "git ls-remote http://user@127.0.0.1:07878/x",
            "npm --registry http://0.0.0.0:07878/ install x",
            "pip install --index-url http://2130706433:07878/simple x",
            "exec 3<>/dev/tcp/127.0.0.1/07878",
        ] {
            assert!(
                reaches(&json!({"command": text}), &network(), 7878).is_some(),
                "{text}"
            );
        }
        assert!(reaches(&json!({}), &[exec(&["nc", "127.1", "07878"])], 7878).is_some());
        // The scheme's default port, through the one URL reader.
        assert!(
            reaches(
                &json!({"command": "curl http://127.0.0.1/v1/grants"}),
                &[],
                80
            )
            .is_some()
        );
        assert!(reaches(&json!({"url": "HTTPS://[::1]/"}), &[], 443).is_some());
        assert!(reaches(&json!({"url": "http://0x7f.1/"}), &[], 80).is_some());
        assert!(reaches(&json!({"url": "https://example.com/"}), &[], 443).is_none());
        assert!(reaches(&json!({}), &[exec(&["nc", "127.1", "7879"])], 7878).is_none());
    }

    #[test]
    fn other_ports_and_longer_numbers_pass() {
        for text in [
            "curl http://localhost:3000/",
            "curl http://localhost:78780/",
            "curl http://localhost:17878/",
            "seq 178789",
        ] {
            assert!(
                reaches(&json!({"command": text}), &network(), 7878).is_none(),
                "{text}"
            );
        }
    }
}
