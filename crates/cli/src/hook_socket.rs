//! `portcullis serve`'s side of the hook socket: `hook.sock` in the data
//! directory it serves, where `portcullis hook` hands over its calls so that
//! no hook process opens the store (the hook's largest cost after its own
//! start).
//!
//! The socket is the hook's, and takes decisions only: a request is one
//! [`HookRequest`], judged by [`hook_judge::judge`] — the code the hook runs
//! in-process — on the daemon's decision thread, so the answer is the one the
//! hook would have given. Nothing here changes state on a person's behalf.
//! The socket file is `0600` in the data directory, and a peer of another
//! user is refused (`SO_PEERCRED`) whatever the file's mode.

use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::net::{UnixListener, UnixStream};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, anyhow, bail};
use portcullis_engine::{CallContext, HandOff, HoldStatus, Outcome, poll_until_resolved};
use portcullis_paths::FsPaths;
use portcullis_policy::ToolCall;
use portcullis_server::Judge;
use portcullis_server::decider::Decider;
use portcullis_store::NewSession;

use crate::hook_judge::{
    self, ACCEPTED, Authority, HookRequest, HookResponse, MAX_REQUEST, PROTOCOL, SOCKET_FILE,
};

/// Hook calls judged at once; past it a call waits in the socket's backlog,
/// and its hook judges it itself if no thread accepts it in time.
const MAX_CONNECTIONS: usize = 64;

/// How long a hook may take to send its call.
const READ_TIMEOUT: Duration = Duration::from_secs(5);

/// Kept of the hook's budget for the answer's way back.
const TRANSPORT_MARGIN: Duration = Duration::from_millis(200);

/// A connection's thread stack: building a policy parses TOML and JSON.
const STACK_SIZE: usize = 8 * 1024 * 1024;

/// The socket, removed when dropped (the server stops).
pub struct HookSocket {
    path: PathBuf,
}

impl Drop for HookSocket {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

/// Listens on the data directory's hook socket, deciding on `decider`.
pub fn listen(
    data_dir: &Path,
    decider: Arc<Decider>,
    runtime: tokio::runtime::Handle,
) -> Result<HookSocket> {
    let path = data_dir.join(SOCKET_FILE);
    if UnixStream::connect(&path).is_ok() {
        bail!(
            "another portcullis serve answers hooks on {}",
            path.display()
        );
    }
    // A socket left by a server that did not stop cleanly.
    match std::fs::remove_file(&path) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(e).with_context(|| format!("removing {}", path.display())),
    }
    let listener =
        UnixListener::bind(&path).with_context(|| format!("listening on {}", path.display()))?;
    let socket = HookSocket { path: path.clone() };
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600))
        .with_context(|| format!("making {} private", path.display()))?;
    let workers = Arc::new(Workers {
        listener,
        idle: AtomicUsize::new(0),
        running: AtomicUsize::new(0),
        decider,
        runtime,
    });
    for _ in 0..RESIDENT_WORKERS {
        Workers::start(&workers, true).context("starting the hook socket's threads")?;
    }
    Ok(socket)
}

/// Threads that never end, each waiting in `accept` on the socket: a call
/// costs no thread start (a stack mapped, a signal stack set, the
/// allocator's pages given back at its end) and no hand-over from an
/// accepting thread to a serving one (a wake-up is tens of microseconds on a
/// virtual machine).
const RESIDENT_WORKERS: usize = 4;

/// The threads that take hook calls: [`RESIDENT_WORKERS`] resident ones, and
/// when the last idle one takes a call (another may be held for a person for
/// a minute), one more that serves one call and ends, up to
/// [`MAX_CONNECTIONS`] in all. Past that, calls wait in the socket's backlog;
/// a hook whose call is not accepted within its wait judges it itself.
struct Workers {
    listener: UnixListener,
    /// Threads waiting in `accept`.
    idle: AtomicUsize,
    /// Threads started and not ended.
    running: AtomicUsize,
    decider: Arc<Decider>,
    runtime: tokio::runtime::Handle,
}

impl Workers {
    fn start(workers: &Arc<Workers>, resident: bool) -> std::io::Result<()> {
        workers.running.fetch_add(1, Ordering::SeqCst);
        workers.idle.fetch_add(1, Ordering::SeqCst);
        let this = Arc::clone(workers);
        let started = std::thread::Builder::new()
            .name("portcullis-hook".into())
            .stack_size(STACK_SIZE)
            .spawn(move || this.work(resident));
        if started.is_err() {
            workers.running.fetch_sub(1, Ordering::SeqCst);
            workers.idle.fetch_sub(1, Ordering::SeqCst);
        }
        started.map(drop)
    }

    fn work(self: Arc<Self>, resident: bool) {
        // Counted out however the thread ends (a panic included).
        let _running = Counted(&self.running);
        loop {
            let accepted = self.listener.accept();
            let Ok((stream, _)) = accepted else {
                // Out of descriptors, or an aborted connection: try again
                // shortly rather than spin.
                std::thread::sleep(Duration::from_millis(10));
                continue;
            };
            if self.idle.fetch_sub(1, Ordering::SeqCst) == 1
                && self.running.load(Ordering::SeqCst) < MAX_CONNECTIONS
            {
                // The last idle thread took this call: keep one accepting.
                let _ = Workers::start(&self, false);
            }
            serve_one(stream, &self.decider, &self.runtime);
            if !resident {
                return;
            }
            self.idle.fetch_add(1, Ordering::SeqCst);
        }
    }
}

/// A count taken for as long as this lives (a panic included).
struct Counted<'a>(&'a AtomicUsize);

impl Drop for Counted<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Whether the peer runs as this process' user.
fn same_user(stream: &UnixStream) -> bool {
    rustix::net::sockopt::socket_peercred(stream)
        .is_ok_and(|cred| cred.uid == rustix::process::geteuid())
}

/// One hook call: read, accept, judge, answer. Every failure before the
/// acceptance closes the connection (the hook then judges the call itself).
fn serve_one(stream: UnixStream, decider: &Arc<Decider>, runtime: &tokio::runtime::Handle) {
    if !same_user(&stream) || stream.set_read_timeout(Some(READ_TIMEOUT)).is_err() {
        return;
    }
    let limit = u64::try_from(MAX_REQUEST).unwrap_or(u64::MAX) + 1;
    let mut reader = BufReader::new((&stream).take(limit));
    let mut line = String::new();
    if reader.read_line(&mut line).is_err() || !line.ends_with('\n') {
        return;
    }
    let Ok(request) = serde_json::from_str::<HookRequest>(&line) else {
        return;
    };
    let mut writer = &stream;
    if request.protocol != PROTOCOL {
        let _ = writeln!(writer, "protocol {} is not {PROTOCOL}", request.protocol);
        return;
    }
    let Ok(agent) = hook_judge::agent_of(&request.agent) else {
        let _ = writeln!(writer, "unknown agent");
        return;
    };
    // One write: `writeln!` on a socket sends the line and its newline apart,
    // waking the hook twice.
    if writer
        .write_all(format!("{ACCEPTED}\n").as_bytes())
        .is_err()
    {
        return;
    }
    // The hook's budget is at most its agent's timeout; a larger number
    // (from anything else on the socket) is cut to an hour, never overflows.
    let budget = Duration::from_millis(request.budget_ms.min(3_600_000));
    let deadline = Instant::now() + budget.saturating_sub(TRANSPORT_MARGIN);
    let env = request.environment();
    // The hook's process, as the kernel knows it: its agent is found from it.
    let caller = rustix::net::sockopt::socket_peercred(&stream)
        .ok()
        .map(|cred| i64::from(cred.pid.as_raw_nonzero().get()));
    let judged = catch_unwind(AssertUnwindSafe(|| {
        hook_judge::judge(
            agent,
            request.payload.bytes(),
            |_| {
                request
                    .sources
                    .clone()
                    .ok_or_else(|| anyhow!("the hook sent no configuration for this call"))
            },
            &env,
            request.session_env.clone(),
            caller,
            deadline,
            |policy, facts| {
                if let Some(server) = &policy.team_server {
                    return Err(anyhow::Error::new(hook_judge::Governed(server.clone())));
                }
                Ok(DecisionThread {
                    decider,
                    runtime,
                    judge: Arc::new(Judge {
                        policy,
                        facts: portcullis_server::JudgeFacts::Local(facts),
                    }),
                })
            },
        )
    }));
    let response = match judged {
        Ok(Ok(reply)) => HookResponse::Reply(reply.into()),
        Ok(Err(e)) => match e.downcast_ref::<hook_judge::Governed>() {
            Some(hook_judge::Governed(server)) => HookResponse::Governed(server.clone()),
            None => HookResponse::Failed(format!("{e:#}")),
        },
        Err(_) => HookResponse::Failed("judging this call failed (a bug in portcullis)".into()),
    };
    if let Ok(mut text) = serde_json::to_vec(&response) {
        text.push(b'\n');
        let _ = writer.write_all(&text);
    }
}

/// The daemon's decision thread as the authority of a hook call.
struct DecisionThread<'a> {
    decider: &'a Arc<Decider>,
    runtime: &'a tokio::runtime::Handle,
    judge: Arc<Judge>,
}

impl DecisionThread<'_> {
    fn on_engine<R: Send + 'static>(
        &self,
        f: impl FnOnce(&portcullis_engine::Engine<FsPaths>) -> Result<R, portcullis_engine::EngineError>
        + Send
        + 'static,
    ) -> Result<R> {
        self.runtime
            .block_on(self.decider.with_engine(f))
            .map_err(|e| anyhow!("{e}"))
    }
}

impl Authority for DecisionThread<'_> {
    fn decide(
        &self,
        sessions: &[NewSession],
        call: &ToolCall,
        ctx: &CallContext,
        now: i64,
    ) -> Result<Outcome> {
        let (sessions, call, ctx) = (sessions.to_vec(), call.clone(), ctx.clone());
        let judge = Arc::clone(&self.judge);
        self.on_engine(move |e| {
            e.enter_and_decide_under(&sessions, &judge.policy, &judge.facts, &call, &ctx, now)
        })
    }

    fn wait_for_person(&self, request: i64, now: i64, timeout: Duration) -> Result<HoldStatus> {
        let hold = self.on_engine(move |e| e.hold(request, now, timeout))?;
        poll_until_resolved(|| self.on_engine(move |e| e.hold_status(&hold)))
    }

    fn leave_to_bridge(
        &self,
        sessions: &[NewSession],
        call: &ToolCall,
        ctx: &CallContext,
        to: &HandOff,
        now: i64,
    ) -> Result<Option<Outcome>> {
        let (sessions, call, ctx, to) = (sessions.to_vec(), call.clone(), ctx.clone(), to.clone());
        let judge = Arc::clone(&self.judge);
        self.on_engine(move |e| {
            e.leave_to_bridge(
                &sessions,
                &judge.policy,
                &judge.facts,
                &call,
                &ctx,
                &to,
                now,
            )
        })
    }
}
