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

use anyhow::{Context, Result, bail};
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

pub fn forward(
    agent: Agent,
    payload: &[u8],
    config: Option<&Path>,
    env: &Environment,
    session_env: Option<String>,
    data_dir: &Path,
    deadline: Instant,
) -> Result<Result<Reply, String>> {
    let socket = data_dir.join(SOCKET_FILE);
    let mut stream = UnixStream::connect(&socket)
        .with_context(|| format!("connecting to {}", socket.display()))?;
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
    let mut line = serde_json::to_vec(&request)?;
    if line.len() > MAX_REQUEST {
        bail!("the call is too large to hand to the daemon");
    }
    line.push(b'\n');
    stream.set_write_timeout(Some(ACCEPT_WAIT))?;
    stream.write_all(&line).context("sending the call")?;
    stream.set_read_timeout(Some(ACCEPT_WAIT))?;
    let mut reader = BufReader::new((&stream).take(MAX_ANSWER));
    let mut accepted = String::new();
    reader
        .read_line(&mut accepted)
        .context("waiting for the daemon to accept the call")?;
    if accepted.trim_end() != ACCEPTED {
        bail!("the daemon did not take the call: {}", accepted.trim_end());
    }
    let left = deadline.saturating_duration_since(Instant::now());
    if left.is_zero() {
        bail!("no time left");
    }
    stream.set_read_timeout(Some(left))?;
    let mut answer = String::new();
    reader
        .read_line(&mut answer)
        .context("waiting for the daemon's answer")?;
    let response: HookResponse =
        serde_json::from_str(&answer).context("reading the daemon's answer")?;
    Ok(match response {
        HookResponse::Reply(reply) => Ok(reply.into()),
        HookResponse::Failed(why) => Err(why),
    })
}
