//! The connection loop: hyper's HTTP/1 on tokio, with the limits that keep
//! the server answering whatever its clients do.
//!
//! - A request's head must arrive within [`Limits::header_timeout`] of the
//!   connection (or the previous response) — idle and half-open connections
//!   are closed then — and its body within [`Limits::body_timeout`] of its
//!   head.
//! - At most [`Limits::max_connections`] connections (fewer when the file
//!   descriptor limit is lower). A new connection past the cap closes the
//!   oldest connection that is between requests (idle or still sending its
//!   head); when every connection is inside a request, the new one is
//!   answered 503 and closed. So a flood of idle connections never locks out
//!   `/healthz` or a decision.
//! - At most [`Limits::max_event_streams`] `/v1/events` streams (503 past it;
//!   counted in `api.rs`).

use std::collections::BTreeMap;
use std::convert::Infallible;
use std::pin::Pin;
use std::sync::atomic::Ordering::{Relaxed, SeqCst};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::http::Request;
use http_body::{Frame, SizeHint};
use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::net::TcpListener;
use tokio::sync::{Notify, watch};
use tokio::time::Sleep;
use tower::ServiceExt;

use crate::AppState;

/// The server's limits (`portcullis serve` flags).
#[derive(Clone, Debug)]
pub struct Limits {
    /// How long a connection may take to send a request's head (and how long
    /// an idle keep-alive connection is kept).
    pub header_timeout: Duration,
    /// How long a request's body may take, from its head.
    pub body_timeout: Duration,
    /// Open connections at most.
    pub max_connections: usize,
    /// `/v1/events` streams at most.
    pub max_event_streams: usize,
    /// How often the daemon runs `PRAGMA quick_check`.
    pub quick_check_every: Duration,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            header_timeout: Duration::from_secs(10),
            body_timeout: Duration::from_secs(30),
            max_connections: 512,
            max_event_streams: 32,
            quick_check_every: crate::health::QUICK_CHECK_EVERY,
        }
    }
}

/// File descriptors kept for everything but connections (the store's
/// connections and their WAL files, the listener, the runtime, MCP children).
pub const RESERVED_FDS: usize = 64;

/// How long open connections get to finish at shutdown.
const GRACE: Duration = Duration::from_secs(5);

/// The connection cap: the configured one, lowered to fit the soft
/// `RLIMIT_NOFILE` (less [`RESERVED_FDS`]).
pub fn connection_cap(configured: usize) -> usize {
    let limit = rustix::process::getrlimit(rustix::process::Resource::Nofile);
    let room = match limit.current {
        Some(current) => usize::try_from(current)
            .unwrap_or(usize::MAX)
            .saturating_sub(RESERVED_FDS),
        None => usize::MAX,
    };
    configured.min(room).max(1)
}

/// One open connection.
struct Slot {
    /// Requests in progress (head read, response not yet fully sent).
    busy: AtomicUsize,
    /// Set once the connection was told to close.
    closing: AtomicBool,
    close: Notify,
}

/// The open connections, oldest first.
#[derive(Default)]
struct Conns {
    next: AtomicU64,
    slots: Mutex<BTreeMap<u64, Arc<Slot>>>,
    /// Connections open and not told to close.
    live: AtomicUsize,
}

impl Conns {
    fn add(&self) -> (u64, Arc<Slot>) {
        let id = self.next.fetch_add(1, Relaxed);
        let slot = Arc::new(Slot {
            busy: AtomicUsize::new(0),
            closing: AtomicBool::new(false),
            close: Notify::new(),
        });
        self.lock().insert(id, Arc::clone(&slot));
        self.live.fetch_add(1, SeqCst);
        (id, slot)
    }

    fn remove(&self, id: u64) {
        if let Some(slot) = self.lock().remove(&id)
            && !slot.closing.swap(true, SeqCst)
        {
            self.live.fetch_sub(1, SeqCst);
        }
    }

    /// Closes the oldest connection between requests; false when every
    /// connection is inside one.
    fn shed_idle(&self) -> bool {
        let slots = self.lock();
        for slot in slots.values() {
            if slot.busy.load(SeqCst) == 0 && !slot.closing.swap(true, SeqCst) {
                self.live.fetch_sub(1, SeqCst);
                slot.close.notify_one();
                return true;
            }
        }
        false
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, BTreeMap<u64, Arc<Slot>>> {
        self.slots.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// Marks its connection busy while a request is in progress.
struct Busy(Arc<Slot>);

impl Busy {
    fn new(slot: &Arc<Slot>) -> Busy {
        slot.busy.fetch_add(1, SeqCst);
        Busy(Arc::clone(slot))
    }
}

impl Drop for Busy {
    fn drop(&mut self) {
        self.0.busy.fetch_sub(1, SeqCst);
    }
}

/// The answer to a connection past the cap when none can be closed for it.
const FULL: &[u8] = b"HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\nconnection: close\r\ncontent-length: 108\r\n\r\n{\"code\":\"too-many-connections\",\"message\":\"the server is at its connection limit (treat as deny); try again\"}";

/// Serves `state`'s router on `listener` until `shutdown` completes.
pub async fn serve(
    listener: TcpListener,
    state: Arc<AppState>,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let limits = state.limits.clone();
    let cap = connection_cap(limits.max_connections);
    if cap < limits.max_connections {
        eprintln!(
            "portcullis: note: at most {cap} connections at once (the open-file limit, `ulimit -n`, leaves room for no more)"
        );
    }
    let tls = state.tls.clone().map(tokio_rustls::TlsAcceptor::from);
    let router = crate::router(state);
    let conns = Arc::new(Conns::default());
    let mut http = hyper::server::conn::http1::Builder::new();
    http.timer(TokioTimer::new())
        .header_read_timeout(limits.header_timeout)
        .keep_alive(true);
    let (stop_tx, stop_rx) = watch::channel(false);
    tokio::pin!(shutdown);
    loop {
        let stream = tokio::select! {
            () = &mut shutdown => break,
            accepted = listener.accept() => match accepted {
                Ok((stream, _peer)) => stream,
                Err(e) => {
                    // Out of file descriptors (or memory): make room by
                    // closing an idle connection, and try again shortly.
                    if matches!(e.raw_os_error(), Some(libc::EMFILE | libc::ENFILE | libc::ENOBUFS | libc::ENOMEM)) {
                        conns.shed_idle();
                        tokio::time::sleep(Duration::from_millis(5)).await;
                    }
                    continue;
                }
            },
        };
        if conns.live.load(SeqCst) >= cap && !conns.shed_idle() {
            let _ = stream.try_write(FULL);
            continue;
        }
        let _ = stream.set_nodelay(true);
        let (id, slot) = conns.add();
        let conns = Arc::clone(&conns);
        let router = router.clone();
        let http = http.clone();
        let mut stop = stop_rx.clone();
        let body_timeout = limits.body_timeout;
        let tls = tls.clone();
        let header_timeout = limits.header_timeout;
        tokio::spawn(async move {
            let in_slot = Arc::clone(&slot);
            let service = hyper::service::service_fn(move |req: Request<Incoming>| {
                let busy = Busy::new(&in_slot);
                let req = req.map(|b| Body::new(Deadline::new(b, body_timeout)));
                let router = router.clone();
                async move {
                    let res = match router.oneshot(req).await {
                        Ok(res) => res,
                        Err(never) => match never {},
                    };
                    Ok::<_, Infallible>(res.map(|b| {
                        Body::new(Tracked {
                            inner: b,
                            _busy: busy,
                        })
                    }))
                }
            });
            match tls {
                // The handshake is part of the head: it gets the same time.
                Some(acceptor) => {
                    if let Ok(Ok(stream)) =
                        tokio::time::timeout(header_timeout, acceptor.accept(stream)).await
                    {
                        drive(&http, TokioIo::new(stream), service, &slot, &mut stop).await;
                    }
                }
                None => drive(&http, TokioIo::new(stream), service, &slot, &mut stop).await,
            }
            conns.remove(id);
        });
    }
    drop(listener);
    let _ = stop_tx.send(true);
    // Let the connections finish their responses (not forever: event streams never end).
    let deadline = tokio::time::Instant::now() + GRACE;
    while !conns.lock().is_empty() && tokio::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    Ok(())
}

/// Serves one connection until it ends, is shed for a newer one, or the
/// server stops (then gracefully, for [`GRACE`] at most).
async fn drive<I, S>(
    http: &hyper::server::conn::http1::Builder,
    io: I,
    service: S,
    slot: &Slot,
    stop: &mut watch::Receiver<bool>,
) where
    I: hyper::rt::Read + hyper::rt::Write + Unpin + Send + 'static,
    S: hyper::service::HttpService<Incoming, ResBody = Body> + Send,
    S::Future: Send + 'static,
    S::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let conn = http.serve_connection(io, service);
    tokio::pin!(conn);
    tokio::select! {
        _ = conn.as_mut() => {}
        // Shed for a newer connection: dropping it closes the socket.
        () = slot.close.notified() => {}
        _ = stop.changed() => {
            conn.as_mut().graceful_shutdown();
            let _ = tokio::time::timeout(GRACE, conn).await;
        }
    }
}

/// A request body that fails once its deadline passes.
struct Deadline {
    inner: Incoming,
    at: tokio::time::Instant,
    sleep: Option<Pin<Box<Sleep>>>,
}

impl Deadline {
    fn new(inner: Incoming, within: Duration) -> Deadline {
        Deadline {
            inner,
            at: tokio::time::Instant::now() + within,
            sleep: None,
        }
    }
}

#[derive(Debug, thiserror::Error)]
#[error("the request body did not arrive in time")]
struct BodyTimeout;

impl http_body::Body for Deadline {
    type Data = Bytes;
    type Error = axum::BoxError;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        let this = &mut *self;
        match Pin::new(&mut this.inner).poll_frame(cx) {
            Poll::Ready(frame) => Poll::Ready(frame.map(|r| r.map_err(Into::into))),
            Poll::Pending => {
                let at = this.at;
                let sleep = this
                    .sleep
                    .get_or_insert_with(|| Box::pin(tokio::time::sleep_until(at)));
                match sleep.as_mut().poll(cx) {
                    Poll::Ready(()) => Poll::Ready(Some(Err(BodyTimeout.into()))),
                    Poll::Pending => Poll::Pending,
                }
            }
        }
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

/// A response body that keeps its connection marked busy until it is sent.
struct Tracked {
    inner: Body,
    _busy: Busy,
}

impl http_body::Body for Tracked {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        Pin::new(&mut self.inner).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_full_answer_has_the_right_length() {
        let text = std::str::from_utf8(FULL).unwrap();
        let (head, body) = text.split_once("\r\n\r\n").unwrap();
        assert!(head.contains(&format!("content-length: {}", body.len())));
        serde_json::from_str::<serde_json::Value>(body).unwrap();
    }

    #[test]
    fn idle_connections_are_shed_oldest_first_and_busy_ones_never() {
        let conns = Conns::default();
        let (_, a) = conns.add();
        let (_, b) = conns.add();
        let _busy = Busy::new(&a);
        assert!(conns.shed_idle());
        assert!(b.closing.load(SeqCst) && !a.closing.load(SeqCst));
        assert!(!conns.shed_idle(), "a is inside a request");
        assert_eq!(conns.live.load(SeqCst), 1);
    }

    #[test]
    fn the_cap_is_at_least_one_and_at_most_the_configured() {
        assert_eq!(connection_cap(3), 3);
        assert_eq!(connection_cap(0), 1);
    }
}
