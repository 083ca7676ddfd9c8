//! How a hook process answers, whichever front runs it (`portcullis hook`,
//! `portcullis-hook`): its time budget, the shape of a refusal for a payload
//! that failed, and writing the answer once (the guard may be writing its own).

use std::io::Write;
use std::process::ExitCode;
use std::time::Duration;

use portcullis_adapters::{Agent, Reply};

use crate::guard;

/// The hook's time budget: its agent's (`Agent::hook_budget`), or shorter
/// with `PORTCULLIS_HOOK_BUDGET_MS` (never longer: a budget past the agent's
/// own timeout would let the agent give up first and run the call).
pub fn budget(agent: Agent) -> Duration {
    let own = agent.hook_budget();
    std::env::var("PORTCULLIS_HOOK_BUDGET_MS")
        .ok()
        .and_then(|v| v.trim().parse::<u64>().ok())
        .map_or(own, |ms| own.min(Duration::from_millis(ms)))
}

/// The event name, for replying in the right shape even to a payload that failed.
pub fn event_of(input: &[u8]) -> &'static str {
    // Only the one field: the rest of the payload is skipped, not built.
    #[derive(serde::Deserialize)]
    struct Event<'a> {
        #[serde(borrow)]
        hook_event_name: Option<std::borrow::Cow<'a, str>>,
    }
    let event = serde_json::from_slice::<Event>(input)
        .ok()
        .and_then(|e| e.hook_event_name);
    match event.as_deref() {
        Some("PermissionRequest") => "PermissionRequest",
        Some("beforeReadFile") => "beforeReadFile",
        _ => "",
    }
}

/// Writes the answer and returns its exit status; if the guard already
/// fired, waits for it to end the process.
pub fn emit(r: &Reply) -> ExitCode {
    if !guard::claim_answer() {
        // The watchdog is writing the refusal and ends the process.
        loop {
            std::thread::sleep(Duration::from_secs(1));
        }
    }
    let code = u8::try_from(r.exit).unwrap_or(2);
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(r.stdout.as_bytes());
    if !r.stdout.is_empty() {
        let _ = out.write_all(b"\n");
    }
    let _ = out.flush();
    if !r.stderr.is_empty() {
        let _ = std::io::stderr().write_all(r.stderr.as_bytes());
    }
    guard::answered(code);
    ExitCode::from(code)
}
