//! The hook's side of the daemon socket: hands a call to `portcullis serve`
//! when it runs for the same data directory, and reads its answer.
//!
//! Any failure before the daemon accepts the call — no socket, a refused
//! connection, a daemon of another version, no acceptance within
//! [`ACCEPT_WAIT`] — is an error, and the hook judges the call itself. Once
//! accepted, the hook waits for the answer until its budget runs out (the
//! daemon may be holding the call for a person); a daemon that dies meanwhile
//! is an error too, and the hook judges with what time is left.

use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::time::{Duration, Instant};

use portcullis_adapters::{Agent, Reply};
use portcullis_paths::Environment;

use crate::config_files::Sources;
use crate::hook_judge::{
    ACCEPTED, HookRequest, HookResponse, MAX_REQUEST, PROTOCOL, Payload, SOCKET_FILE, call_cwd,
};

/// How long the daemon has to accept a call before the hook stops waiting
/// and judges it itself.
const ACCEPT_WAIT: Duration = Duration::from_secs(1);

/// The most bytes read back (an answer is a reason or two).
const MAX_ANSWER: u64 = 1024 * 1024;

/// Why no daemon answered: the hook then judges the call itself. A plain
/// message, not an `anyhow::Error`: "no daemon" is the usual case without
/// `portcullis serve`, and an `anyhow` error captures a backtrace whenever
/// `RUST_BACKTRACE` is set — in a static binary the first capture sorts
/// every unwind entry of the program, a third of the hook's time.
#[derive(Debug)]
pub struct NotForwarded(pub String);

impl std::fmt::Display for NotForwarded {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for NotForwarded {}

/// `result`, its error said as `what: error`.
fn said<T, E: std::fmt::Display>(result: Result<T, E>, what: &str) -> Result<T, NotForwarded> {
    result.map_err(|e| NotForwarded(format!("{what}: {e}")))
}

pub fn forward(
    agent: Agent,
    payload: &[u8],
    config: Option<&Path>,
    env: &Environment,
    session_env: Option<String>,
    data_dir: &Path,
    deadline: Instant,
) -> Result<Result<Reply, String>, NotForwarded> {
    let socket = data_dir.join(SOCKET_FILE);
    let mut stream = said(
        UnixStream::connect(&socket),
        &format!("connecting to {}", socket.display()),
    )?;
    // A payload that does not parse is sent all the same: the daemon's
    // refusal of it is the hook's own, word for word.
    let sources = call_cwd(agent, payload)
        .ok()
        .map(|cwd| Sources::read(config, Path::new(&cwd), env));
    let request = HookRequest {
        protocol: PROTOCOL,
        agent: agent.as_str().to_string(),
        payload: Payload::of(payload),
        sources,
        home: env.home.clone(),
        config_dir: env.config_dir.clone(),
        data_dir: env.data_dir.clone(),
        session_env,
        budget_ms: u64::try_from(
            deadline
                .saturating_duration_since(Instant::now())
                .as_millis(),
        )
        .unwrap_or(u64::MAX),
    };
    let mut line = said(serde_json::to_vec(&request), "writing the call")?;
    if line.len() > MAX_REQUEST {
        return Err(NotForwarded(
            "the call is too large to hand to the daemon".into(),
        ));
    }
    line.push(b'\n');
    said(stream.set_write_timeout(Some(ACCEPT_WAIT)), "the socket")?;
    said(stream.write_all(&line), "sending the call")?;
    said(stream.set_read_timeout(Some(ACCEPT_WAIT)), "the socket")?;
    let mut reader = BufReader::new((&stream).take(MAX_ANSWER));
    let mut accepted = String::new();
    said(
        reader.read_line(&mut accepted),
        "waiting for the daemon to accept the call",
    )?;
    if accepted.trim_end() != ACCEPTED {
        return Err(NotForwarded(format!(
            "the daemon did not take the call: {}",
            accepted.trim_end()
        )));
    }
    let left = deadline.saturating_duration_since(Instant::now());
    if left.is_zero() {
        return Err(NotForwarded("no time left".into()));
    }
    said(stream.set_read_timeout(Some(left)), "the socket")?;
    let mut answer = String::new();
    said(
        reader.read_line(&mut answer),
        "waiting for the daemon's answer",
    )?;
    let response: HookResponse =
        said(serde_json::from_str(&answer), "reading the daemon's answer")?;
    Ok(match response {
        HookResponse::Reply(reply) => Ok(reply.into()),
        HookResponse::Failed(why) => Err(why),
        HookResponse::Governed(server) => {
            return Err(NotForwarded(format!(
                "the team server {server} governs this machine: the hook asks it"
            )));
        }
    })
}
