//! Live events: what changed in the store, for the UI's Server-Sent Events.
//!
//! Hooks are separate processes that write to the store directly, so the
//! server cannot learn of new requests by being told: a watcher thread with
//! its own connection polls SQLite's `data_version` (a counter bumped by
//! every other connection's commit — one cheap PRAGMA) and, when it moved,
//! diffs pending requests and active grants against what it saw last.
//!
//! The same thread keeps [`Health`] current: `PRAGMA quick_check` every
//! `check_every` (60 s by default), and a note on stderr the first time the
//! database file is found deleted or replaced.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::sync::atomic::Ordering::Relaxed;
use std::time::{Duration, Instant};

use portcullis_store::{Request, Store};
use serde::Serialize;
use serde_json::{Value, json};
use tokio::sync::broadcast;

use crate::health::Health;
use crate::metrics::Metrics;

/// How often the watcher looks at the store.
pub const POLL: Duration = Duration::from_millis(150);

/// The shortest time between two looks at the store, when changes are
/// announced faster than that.
const MIN_LOOK: Duration = Duration::from_millis(20);

/// How often the watcher closes stale requests (an ended session's, or
/// those nothing asked for again in [`portcullis_store::REQUEST_IDLE_SECS`]).
pub const EXPIRE_EVERY: Duration = Duration::from_secs(5);

/// One event of `GET /v1/events`.
#[derive(Clone, Debug, Serialize)]
pub struct ServerEvent {
    /// `request-new`, `request-updated`, `request-resolved`, `grant-added`, `grant-ended` (revoked, used up or expired), `pin-pending`, `pin-decided` (MCP tool definitions).
    pub kind: &'static str,
    pub data: Value,
}

#[derive(Default)]
struct Seen {
    /// Pending request id → how many times it was raised.
    pending: BTreeMap<i64, i64>,
    /// The highest request id seen.
    last_request: i64,
    /// Pending tool definitions: (server, tool, hash).
    pins: BTreeSet<(String, String, String)>,
    grants: BTreeSet<i64>,
}

/// Stops the watcher thread when dropped.
pub struct Watcher {
    stop: Arc<AtomicBool>,
}

impl Drop for Watcher {
    fn drop(&mut self) {
        self.stop.store(true, Relaxed);
    }
}

/// Starts the watcher thread.
pub fn watch(
    location: portcullis_store::Location,
    events: broadcast::Sender<ServerEvent>,
    metrics: Arc<Metrics>,
    health: Arc<Health>,
    check_every: Duration,
    desktop: Option<crate::desktop::Desktop>,
) -> std::io::Result<Watcher> {
    let stop = Arc::new(AtomicBool::new(false));
    let stopped = Arc::clone(&stop);
    let store = location.open().map_err(std::io::Error::other)?;
    let mut seen = Seen::default();
    // The first look fills `seen` without announcing what was already there.
    look(&store, &mut seen, None, &metrics, None);
    std::thread::Builder::new()
        .name("portcullis-watch".into())
        .spawn(move || {
            let mut version = store.data_version().ok();
            let mut checked = Instant::now();
            let mut expired = Instant::now();
            let mut said_not_ready = false;
            while !stopped.load(Relaxed) {
                // Woken at once by a change on PostgreSQL; SQLite only polls.
                // At most one look per MIN_LOOK, however busy the store.
                let started = Instant::now();
                if store.wait_for_change(POLL).is_err() {
                    std::thread::sleep(POLL);
                }
                if let Some(rest) = MIN_LOOK.checked_sub(started.elapsed()) {
                    std::thread::sleep(rest);
                }
                if checked.elapsed() >= check_every {
                    checked = Instant::now();
                    // A fresh connection: it reads the file, not pages this
                    // one cached, and its open checks the files' owners and
                    // modes again. Not once the file is gone (the open would
                    // make a new one; health says why already).
                    if store.check_file().is_ok() {
                        let check = location.open().and_then(|fresh| fresh.quick_check());
                        health.record_check(check.map_err(|e| e.to_string()));
                    }
                }
                match health.why_not_ready() {
                    Some(why) if !said_not_ready => {
                        said_not_ready = true;
                        eprintln!("portcullis: error: not ready, every decision is refused: {why}");
                    }
                    None if said_not_ready => {
                        said_not_ready = false;
                        eprintln!("portcullis: ready again");
                    }
                    _ => {}
                }
                // Closing stale requests is this connection's own commit,
                // which `data_version` does not count: look after it.
                let mut closed = false;
                if expired.elapsed() >= EXPIRE_EVERY {
                    expired = Instant::now();
                    closed = store
                        .expire_stale_requests(
                            portcullis_store::unix_now(),
                            portcullis_store::REQUEST_IDLE_SECS,
                        )
                        .is_ok_and(|n| n > 0);
                }
                let now = store.data_version().ok();
                if !closed && now.is_some() && now == version {
                    continue;
                }
                version = now;
                look(&store, &mut seen, Some(&events), &metrics, desktop.as_ref());
            }
        })?;
    Ok(Watcher { stop })
}

fn look(
    store: &Store,
    seen: &mut Seen,
    events: Option<&broadcast::Sender<ServerEvent>>,
    metrics: &Metrics,
    desktop: Option<&crate::desktop::Desktop>,
) {
    let send = |kind, data| {
        if let Some(tx) = events {
            // No subscriber is fine: nobody has the UI open.
            let _ = tx.send(ServerEvent { kind, data });
        }
    };
    // New requests first, whatever their status: one raised and resolved
    // between two looks is still announced, then resolved.
    let Ok(fresh) = store.requests_after(seen.last_request) else {
        return;
    };
    for r in &fresh {
        seen.last_request = seen.last_request.max(r.id);
        send("request-new", request_json(r));
        if r.status == portcullis_store::RequestStatus::Pending {
            seen.pending.insert(r.id, r.count);
            if let Some(desktop) = desktop {
                let agent = store
                    .session(&r.session)
                    .ok()
                    .flatten()
                    .and_then(|s| s.agent);
                desktop.announce(r, agent.as_deref());
            }
        } else {
            send("request-resolved", request_json(r));
        }
    }
    let Ok(pending) = store.requests(true) else {
        return;
    };
    metrics.pending.store(pending.len() as u64, Relaxed);
    let mut now_pending = BTreeMap::new();
    for r in &pending {
        if let Some(count) = seen.pending.get(&r.id)
            && *count != r.count
        {
            send("request-updated", request_json(r));
        }
        now_pending.insert(r.id, r.count);
    }
    for id in seen
        .pending
        .keys()
        .filter(|id| !now_pending.contains_key(id))
    {
        if let Ok(Some(r)) = store.request(*id) {
            send("request-resolved", request_json(&r));
        }
    }
    seen.pending = now_pending;
    if let Ok(pins) = store.pins(true) {
        let now_pending: BTreeSet<(String, String, String)> = pins
            .iter()
            .map(|p| (p.server.clone(), p.tool.clone(), p.hash.clone()))
            .collect();
        for p in pins.iter().filter(|p| {
            !seen
                .pins
                .contains(&(p.server.clone(), p.tool.clone(), p.hash.clone()))
        }) {
            send(
                "pin-pending",
                json!({"server": p.server, "tool": p.tool, "hash": p.hash}),
            );
        }
        for (server, tool, hash) in seen.pins.difference(&now_pending) {
            send(
                "pin-decided",
                json!({"server": server, "tool": tool, "hash": hash}),
            );
        }
        seen.pins = now_pending;
    }
    let now = portcullis_store::unix_now();
    if let Ok(grants) = store.grants() {
        let active: BTreeSet<i64> = grants
            .iter()
            .filter(|g| g.is_active(now))
            .map(|g| g.id)
            .collect();
        for g in grants
            .iter()
            .filter(|g| active.contains(&g.id) && !seen.grants.contains(&g.id))
        {
            send(
                "grant-added",
                serde_json::to_value(g).unwrap_or(Value::Null),
            );
        }
        for id in seen.grants.difference(&active) {
            send("grant-ended", json!({"id": id}));
        }
        seen.grants = active;
    }
}

fn request_json(r: &Request) -> Value {
    serde_json::to_value(r).unwrap_or(Value::Null)
}
