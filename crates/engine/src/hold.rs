//! "Wait for a person": a front door keeps an agent's call waiting while a
//! person resolves its permission request (`on_ask = "hold"`). The deadline
//! is stored with the request (the UI counts down to it); the front door only
//! sleeps between looks — [`Engine::wait_for_person`] does the whole loop for
//! a synchronous caller, [`Engine::hold`] and [`Engine::hold_status`] are its
//! steps for an asynchronous one.

use std::time::{Duration, Instant};

use portcullis_policy::PathFacts;
use portcullis_store::RequestStatus;

use crate::{Engine, EngineError};

/// How often a held call looks at its request.
pub const HOLD_POLL: Duration = Duration::from_millis(200);

/// A call being held for a person.
#[derive(Clone, Copy, Debug)]
pub struct Hold {
    pub request: i64,
    started: Instant,
    timeout: Duration,
}

impl Hold {
    /// Whether the hold's time is up.
    pub fn expired(&self) -> bool {
        self.started.elapsed() >= self.timeout
    }
}

/// Where a held request stands (`approved`, `refused`, `timed_out` … in
/// JSON: a team server's answer to its device's hold).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum HoldStatus {
    /// Still pending, and time is left.
    Waiting,
    /// A person approved: judge the call again (the approval made a grant).
    Approved,
    /// A person refused (or the request ended otherwise): the refusal stands.
    Refused,
    /// Nobody answered in time: the refusal stands, the request stays pending.
    TimedOut,
}

impl<F: PathFacts> Engine<F> {
    /// Starts holding `request` for up to `timeout`, storing the deadline.
    pub fn hold(&self, request: i64, now: i64, timeout: Duration) -> Result<Hold, EngineError> {
        let store = self.stored("holding a request")?;
        // `None`: resolved meanwhile, which the first look reads.
        store.hold_request(request, now + timeout.as_secs() as i64)?;
        Ok(Hold {
            request,
            started: Instant::now(),
            timeout,
        })
    }

    /// One look at a held request.
    pub fn hold_status(&self, hold: &Hold) -> Result<HoldStatus, EngineError> {
        let store = self.stored("reading a request")?;
        Ok(match store.request(hold.request)?.map(|r| r.status) {
            Some(RequestStatus::Approved) => HoldStatus::Approved,
            Some(RequestStatus::Pending) | None if hold.expired() => HoldStatus::TimedOut,
            Some(RequestStatus::Pending) | None => HoldStatus::Waiting,
            Some(_) => HoldStatus::Refused,
        })
    }

    /// Holds `request` until a person resolves it or `timeout` passes,
    /// sleeping [`HOLD_POLL`] between looks (for a synchronous front door:
    /// the hook). Never [`HoldStatus::Waiting`].
    pub fn wait_for_person(
        &self,
        request: i64,
        now: i64,
        timeout: Duration,
    ) -> Result<HoldStatus, EngineError> {
        let hold = self.hold(request, now, timeout)?;
        poll_until_resolved(|| self.hold_status(&hold))
    }
}

/// Looks with `look` every [`HOLD_POLL`] until the hold is no longer
/// waiting (a synchronous caller whose looks go elsewhere — the daemon's
/// decision thread — polls the same way). Never [`HoldStatus::Waiting`].
pub fn poll_until_resolved<E>(
    mut look: impl FnMut() -> Result<HoldStatus, E>,
) -> Result<HoldStatus, E> {
    loop {
        match look()? {
            HoldStatus::Waiting => std::thread::sleep(HOLD_POLL),
            done => return Ok(done),
        }
    }
}
