//! One judge for an MCP call that goes through the portcullis MCP bridge.
//!
//! An agent whose MCP server runs behind `portcullis mcp-bridge` sends each
//! call of that server through its hook first, then through the bridge. Two
//! judges would ask twice, spend a `once` grant twice, and judge the call
//! differently (the hook sees no tool definition, so it reads path arguments
//! as writes; the bridge reads its pinned `readOnlyHint`). So the hook leaves
//! such a call to the bridge — unless the configuration denies it outright,
//! which no grant could lift — and records whose call it is: the bridge
//! judges it in the agent's session, found through that link.

use portcullis_policy::{Decision, PathFacts, Policy, Reason, ReasonCode, ToolCall, Verdict};
use portcullis_store::{AuditEvent, AuditKind, AuditVerdict, CallLink, LinkedSession, ProcessId};

use crate::{CallContext, Engine, EngineError, Outcome, SessionStatus, resolve_session};

/// A call the hook found going to a bridge of its own agent.
#[derive(Clone, Debug)]
pub struct HandOff {
    /// The agent's process (the bridge's parent).
    pub agent: ProcessId,
    /// The bridge's server name (`--name`).
    pub bridge: String,
    /// The call's name as the bridge will judge it: `mcp__{bridge}__{tool}`.
    pub tool: String,
    /// The agent's own id of the call, which it sends the server too.
    pub call_id: Option<String>,
}

/// What the MCP bridge knows of the agent behind it, to find a call's
/// session ([`crate::CallContext::agent_link`]).
#[derive(Clone, Debug, Default)]
pub struct AgentLink {
    /// The agent's process (the bridge's nearest non-shell ancestor).
    pub agent: Option<ProcessId>,
    /// The agent's own id of this call (Claude Code's
    /// `_meta.claudecode/toolUseId`).
    pub call_id: Option<String>,
    /// The session the agent names for this call (Codex's `_meta.threadId`)
    /// or put in the bridge's environment when it started it (Claude Code's
    /// `CLAUDE_CODE_SESSION_ID`): used when no hook linked the call.
    pub env_session: Option<String>,
}

/// The hash both the hook and the bridge take of a call's arguments: of
/// their canonical JSON (keys sorted at every level; serde_json keeps the
/// order keys came in), so key order and spacing do not matter.
pub fn args_hash(input: &serde_json::Value) -> String {
    blake3::hash(crate::pins::canonical(input).as_bytes())
        .to_hex()
        .to_string()
}

impl<F: PathFacts> Engine<F> {
    /// Leaves `call` to the bridge `to` names (entering `sessions` first):
    /// records the link and audits the hand-off, and answers an allow that
    /// says who judges. `None` when the configuration denies the call
    /// outright (a deny rule, a protected path): the hook refuses it itself.
    #[allow(clippy::too_many_arguments)]
    pub fn leave_to_bridge(
        &self,
        sessions: &[portcullis_store::NewSession],
        policy: &Policy,
        facts: &dyn PathFacts,
        call: &ToolCall,
        ctx: &CallContext,
        to: &HandOff,
        now: i64,
    ) -> Result<Option<Outcome>, EngineError> {
        let pure = self.policy_decision(policy, facts, call, ctx);
        let refused_for_good = pure.decision == Verdict::Deny
            && !pure
                .reasons
                .iter()
                .any(|r| r.verdict != Verdict::Allow && r.code.approvable_in_call(r.verdict));
        if refused_for_good {
            return Ok(None);
        }
        for s in sessions {
            self.enter_session(s)?;
        }
        let session = resolve_session(&ctx.sources)?;
        let store = self.stored("leaving a call to the MCP bridge")?;
        if let Some(session) = &session {
            store.add_call_link(
                &CallLink {
                    agent: to.agent,
                    tool: to.tool.clone(),
                    args_hash: args_hash(&call.input),
                    call_id: to.call_id.clone(),
                    session: session.clone(),
                },
                now,
            )?;
        }
        let reason = Reason {
            code: ReasonCode::LeftToBridge,
            message: format!(
                "left to the portcullis MCP bridge `{}` this agent runs, which judges the call as `{}`",
                to.bridge, to.tool
            ),
            rule: None,
            effect: None,
            verdict: Verdict::Allow,
        };
        let event = AuditEvent {
            kind: AuditKind::Decision,
            session: session.clone(),
            tool: Some(call.tool.name.clone()),
            verdict: Some(AuditVerdict::Allow),
            detail: serde_json::json!({
                "origin": call.tool.origin.as_str(),
                "reasons": [ReasonCode::LeftToBridge.as_str()],
                "left_to": format!("mcp-bridge:{}", to.bridge),
                "linked": session.is_some(),
            }),
        };
        let audit = store.append_audit(&event, now)?;
        Ok(Some(Outcome {
            decision: Decision {
                decision: Verdict::Allow,
                reasons: vec![reason.clone()],
                effects: pure.effects,
                judgements: vec![reason],
                confine: None,
            },
            session,
            session_status: SessionStatus::None,
            grants_used: Vec::new(),
            request: None,
            audit_id: Some(audit.id),
            deliveries: Vec::new(),
        }))
    }

    /// The session the agent's hook linked to this MCP call (used up).
    pub fn linked_session(
        &self,
        agent: ProcessId,
        tool: &str,
        input: &serde_json::Value,
        call_id: Option<&str>,
        now: i64,
    ) -> Result<LinkedSession, EngineError> {
        let store = self.stored("finding the session of an MCP call")?;
        Ok(store.take_call_link(agent, tool, &args_hash(input), call_id, now)?)
    }

    /// The agent's session for a bridge's call: the one its hook linked to
    /// this very call, else the agent's environment. Calls alike from
    /// several sessions are a conflict, never a pick.
    pub(crate) fn agent_session(
        &self,
        call: &ToolCall,
        link: &AgentLink,
        now: i64,
    ) -> Result<Option<String>, EngineError> {
        let Some(agent) = link.agent else {
            return Ok(link.env_session.clone());
        };
        match self.linked_session(
            agent,
            &call.tool.name,
            &call.input,
            link.call_id.as_deref(),
            now,
        )? {
            LinkedSession::One(session) => Ok(Some(session)),
            LinkedSession::None => Ok(link.env_session.clone()),
            LinkedSession::Several(sessions) => Err(EngineError::SessionConflict {
                sources: sessions.into_iter().map(|s| ("agent-link", s)).collect(),
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_arguments_hash_ignores_key_order_and_nothing_else() {
        let v = |t: &str| -> serde_json::Value { serde_json::from_str(t).unwrap() };
        let a = v(r#"{"path":"/a","opts":{"x":1,"y":2}}"#);
        let b = v(r#"{"opts":{"y":2,"x":1},"path":"/a"}"#);
        let c = v(r#"{"path":"/b","opts":{"x":1,"y":2}}"#);
        assert_eq!(args_hash(&a), args_hash(&b));
        assert_ne!(args_hash(&a), args_hash(&c));
    }
}
