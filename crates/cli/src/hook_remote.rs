//! The hook on a machine governed by a team server (`PORTCULLIS_SERVER`):
//! the call is judged by the server, through `portcullis-daemon
//! remote-hook` (which has the HTTPS client), never here — a server that
//! does not answer, or answers late, is the agent's refusal, naming it.

use std::io::{Read, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, anyhow, bail};
use portcullis_adapters::{Agent, Reply};

use crate::hook_judge::ReplyText;

/// The team server this machine is governed by, if any.
pub fn governing_server() -> Option<String> {
    std::env::var("PORTCULLIS_SERVER")
        .ok()
        .map(|s| s.trim().to_owned())
        .filter(|s| !s.is_empty())
}

/// Has the team server `server` judge the call.
pub fn judge(
    agent: Agent,
    input: &[u8],
    config: Option<&Path>,
    data_dir: &Path,
    server: &str,
    deadline: Instant,
) -> Result<Reply> {
    let program = std::env::current_exe()
        .context("finding portcullis-daemon")?
        .with_file_name("portcullis-daemon");
    let budget = deadline
        .saturating_duration_since(Instant::now())
        .saturating_sub(Duration::from_millis(100));
    let mut command = Command::new(&program);
    command
        .arg("remote-hook")
        .arg(agent.as_str())
        .arg("--data-dir")
        .arg(data_dir)
        .arg("--budget-ms")
        .arg(budget.as_millis().to_string());
    if let Some(c) = config {
        command.arg("--config").arg(c);
    }
    let mut child = command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .with_context(|| format!("running {} for the team server {server}", program.display()))?;
    let mut stdin = child.stdin.take().context("the remote hook's input")?;
    stdin.write_all(input).context("handing the call over")?;
    drop(stdin);
    // Read both pipes on threads, so a full pipe never stalls the child.
    let mut out = child.stdout.take().context("the remote hook's output")?;
    let mut err = child.stderr.take().context("the remote hook's errors")?;
    let reading = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = out.read_to_string(&mut text);
        text
    });
    let errors = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = err.read_to_string(&mut text);
        text
    });
    let status = loop {
        if let Some(status) = child.try_wait().context("waiting for the team server")? {
            break status;
        }
        if Instant::now() + Duration::from_millis(50) >= deadline {
            let _ = child.kill();
            let _ = child.wait();
            bail!("the team server {server} did not answer in time");
        }
        std::thread::sleep(Duration::from_millis(2));
    };
    let text = reading.join().map_err(|_| anyhow!("reading the answer"))?;
    let why = errors.join().unwrap_or_default();
    if !status.success() {
        let why = why.trim().trim_start_matches("portcullis: error: ");
        bail!("{why}");
    }
    let reply: ReplyText = serde_json::from_str(text.trim())
        .with_context(|| format!("the answer for the team server {server} is not a reply"))?;
    Ok(reply.into())
}
