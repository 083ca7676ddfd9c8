//! The 2026-07-28 ask (SEP-2322, multi round-trip requests): a modern client
//! that declares elicitation gets an `InputRequiredResult` — the bridge's
//! approval form and a sealed `requestState` — instead of a refusal, and
//! retries the same call with the person's answer and the state.
//!
//! The state is attacker-controlled on its way back, so it is sealed
//! (HMAC-SHA256, rmcp's `RequestStateCodec`, a key drawn per bridge process
//! and never sent) and bound to what it approves: the tool, a hash of the
//! arguments and the session the call was judged in, for ten minutes. Each
//! request is redeemed once. A state that does not open — forged, tampered,
//! expired, another call's, another session's, already used — approves
//! nothing: the call is judged as if it came without one.

use std::collections::HashSet;
use std::sync::Mutex;
use std::time::Duration;

use rmcp::model::{InputRequiredResult, RequestStateCodec, SealOptions};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// How long a person has to answer the form the client shows.
pub(crate) const STATE_TTL: Duration = Duration::from_secs(600);

/// The key of the bridge's one input request (and of its answer).
pub(crate) const APPROVAL: &str = "portcullis-approval";

/// What a sealed state carries: the permission request it approves.
#[derive(Serialize, Deserialize)]
struct Sealed {
    request: i64,
}

/// Seals and opens this bridge's states; remembers the requests redeemed.
pub(crate) struct States {
    codec: RequestStateCodec,
    redeemed: Mutex<HashSet<i64>>,
}

impl States {
    /// A codec with a fresh random key, or `None` when no randomness can be
    /// had (the client then gets the refusal, as an older one does).
    pub(crate) fn new() -> Option<States> {
        use std::io::Read;
        let mut key = [0u8; 32];
        std::fs::File::open("/dev/urandom")
            .and_then(|mut f| f.read_exact(&mut key))
            .ok()?;
        let codec = RequestStateCodec::try_new(key.to_vec()).ok()?;
        Some(States {
            codec,
            redeemed: Mutex::new(HashSet::new()),
        })
    }

    /// The input-required answer asking a person, through the client, to
    /// allow `request` once: the form and the sealed state bound to `bound`.
    pub(crate) fn ask(
        &self,
        request: i64,
        message: String,
        bound: &str,
    ) -> Option<InputRequiredResult> {
        let sealed = self
            .codec
            .seal_json_with(
                &Sealed { request },
                &SealOptions::new()
                    .associated_data(bound.as_bytes())
                    .ttl(STATE_TTL),
            )
            .ok()?;
        serde_json::from_value(json!({
            "resultType": "input_required",
            "inputRequests": {APPROVAL: {
                "method": "elicitation/create",
                "params": {
                    "mode": "form",
                    "message": message,
                    "requestedSchema": {
                        "type": "object",
                        "properties": {"allow": {"type": "boolean", "title": "Allow this call once", "default": false}},
                        "required": ["allow"]
                    }
                }
            }},
            "requestState": sealed,
            "_meta": {"portcullis": {"decision": "ask", "request": request}},
        }))
        .ok()
    }

    /// The request a retry's `state` approves, when it opens for `bound`, the
    /// person accepted in `responses`, and it was not redeemed before (it is
    /// now).
    pub(crate) fn approved(
        &self,
        state: &str,
        responses: Option<&std::collections::BTreeMap<String, Value>>,
        bound: &str,
    ) -> Option<i64> {
        let opened: Sealed = self.codec.open_json_with(state, bound.as_bytes()).ok()?;
        let answer = responses?.get(APPROVAL)?;
        let accepted = answer.get("action").and_then(Value::as_str) == Some("accept")
            && answer
                .get("content")
                .and_then(|c| c.get("allow"))
                .and_then(Value::as_bool)
                == Some(true);
        if !accepted {
            return None;
        }
        let mut redeemed = self.redeemed.lock().unwrap_or_else(|p| p.into_inner());
        redeemed.insert(opened.request).then_some(opened.request)
    }
}

/// What a state is bound to: the call (tool, arguments) and its session.
pub(crate) fn binding(full: &str, args_hash: &str, session: Option<&str>) -> String {
    format!("{full}\n{args_hash}\n{}", session.unwrap_or(""))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn accept(allow: bool) -> std::collections::BTreeMap<String, Value> {
        [(
            APPROVAL.to_string(),
            json!({"action": "accept", "content": {"allow": allow}}),
        )]
        .into()
    }

    #[test]
    fn a_state_approves_its_own_call_once_and_nothing_else() {
        let states = States::new().unwrap();
        let bound = binding("mcp__fs__read", "h1", Some("s1"));
        let asked = states.ask(7, "allow?".into(), &bound).unwrap();
        let state = asked.request_state.clone().unwrap();
        // Another call, another session, a declined form: nothing.
        for other in [
            binding("mcp__fs__write", "h1", Some("s1")),
            binding("mcp__fs__read", "h2", Some("s1")),
            binding("mcp__fs__read", "h1", Some("s2")),
            binding("mcp__fs__read", "h1", None),
        ] {
            assert_eq!(states.approved(&state, Some(&accept(true)), &other), None);
        }
        assert_eq!(states.approved(&state, Some(&accept(false)), &bound), None);
        assert_eq!(states.approved(&state, None, &bound), None);
        // Tampered: one character changed.
        let mut tampered = state.clone().into_bytes();
        if let Some(b) = tampered.get_mut(10) {
            *b = if *b == b'A' { b'B' } else { b'A' };
        }
        let tampered = String::from_utf8(tampered).unwrap();
        assert_eq!(
            states.approved(&tampered, Some(&accept(true)), &bound),
            None
        );
        // Another bridge's key: nothing.
        let other_bridge = States::new().unwrap();
        assert_eq!(
            other_bridge.approved(&state, Some(&accept(true)), &bound),
            None
        );
        // The call itself: once.
        assert_eq!(
            states.approved(&state, Some(&accept(true)), &bound),
            Some(7)
        );
        assert_eq!(states.approved(&state, Some(&accept(true)), &bound), None);
    }
}
