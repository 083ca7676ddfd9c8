//! Grants: what a person approved, applied to what the policy would ask about.

use portcullis_policy::rules::{CommandPattern, Dynamics};
use portcullis_policy::{Decision, Effect, PathFacts, Reason, ReasonCode, ToolCall, Verdict};
use portcullis_store::{
    AgentKind, Grant, GrantScope, GrantTarget, NewRequest, Op, Resolution, Store,
};

use crate::EngineError;

/// The grant that would cover one judged effect.
struct Cover {
    grant: i64,
    once: bool,
}

/// If every refused effect of the decision is covered by an active grant,
/// consumes the `once` grants used (atomically: a grant another caller just
/// used does not count) and returns the grants. `None`: not fully covered.
pub(crate) fn cover(
    d: &Decision,
    grants: &[Grant],
    call: &ToolCall,
    facts: &dyn PathFacts,
    store: &Store,
    now: i64,
) -> Result<Option<Vec<i64>>, EngineError> {
    let Some(covers) = grants_covering(d, grants, call, facts) else {
        return Ok(None);
    };
    let used = distinct_grants(&covers);
    let once: Vec<i64> = covers
        .iter()
        .filter(|c| c.once)
        .map(|c| c.grant)
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect();
    if !once.is_empty() && !store.consume_once_all(&once, now)? {
        return Ok(None);
    }
    Ok(Some(used))
}

/// The grants that would cover every refused effect, consuming nothing (a
/// dry run: the caller did not prove the session).
pub(crate) fn covered_without_consuming(
    d: &Decision,
    grants: &[Grant],
    call: &ToolCall,
    facts: &dyn PathFacts,
) -> Option<Vec<i64>> {
    grants_covering(d, grants, call, facts).map(|c| distinct_grants(&c))
}

/// Each grant once, in the order first used.
fn distinct_grants(covers: &[Cover]) -> Vec<i64> {
    let mut used: Vec<i64> = Vec::new();
    for c in covers {
        if !used.contains(&c.grant) {
            used.push(c.grant);
        }
    }
    used
}

/// Whether a judgement refuses something. Notes carry the decision's
/// verdict but refuse nothing themselves: that no person can answer
/// (`unattended`, an ask turned into a deny), that an MCP name was judged
/// as each of its readings (whose own judgements are the decision's).
fn refuses(j: &Reason) -> bool {
    j.verdict != Verdict::Allow
        && !matches!(
            j.code,
            ReasonCode::Unattended | ReasonCode::AmbiguousMcpName
        )
}

/// A grant for every refused effect of the decision, or `None`.
fn grants_covering(
    d: &Decision,
    grants: &[Grant],
    call: &ToolCall,
    facts: &dyn PathFacts,
) -> Option<Vec<Cover>> {
    let refused: Vec<_> = d.judgements.iter().filter(|j| refuses(j)).collect();
    let mut covers: Vec<Cover> = Vec::new();
    for j in refused {
        // Deny rules, protected, blocked and critical paths, read-only roots
        // and mode, opaque analysis, paths known only at run time: no grant
        // covers them (`ReasonCode::overridable`).
        if !j.code.overridable() {
            return None;
        }
        let effect = j.effect.and_then(|i| d.effects.get(i))?;
        covers.push(find_grant(effect, d, grants, call, facts)?);
    }
    // The once-grants are consumed together or not at all (a grant another
    // caller just used fails the whole cover, and spends none of the others).
    Some(covers)
}

fn op_of(effect: &Effect) -> Option<(Op, &str, bool)> {
    match effect {
        Effect::Read { path, dynamic } => Some((Op::Read, path, *dynamic)),
        Effect::Write { path, dynamic } => Some((Op::Write, path, *dynamic)),
        Effect::Delete { path, dynamic } => Some((Op::Delete, path, *dynamic)),
        Effect::Move { to, dynamic, .. } => Some((Op::Move, to, *dynamic)),
        _ => None,
    }
}

/// Prefers durable grants over `once` grants, so a once-grant is spent only
/// when nothing else covers.
fn find_grant(
    effect: &Effect,
    d: &Decision,
    grants: &[Grant],
    call: &ToolCall,
    facts: &dyn PathFacts,
) -> Option<Cover> {
    // Resolve the effect's paths once, not once per grant.
    let resolved = Resolved::of(effect, call, facts);
    let mut candidates: Vec<&Grant> = grants
        .iter()
        .filter(|g| covers(g, effect, &resolved, d, call))
        .collect();
    candidates.sort_by_key(|g| g.scope == GrantScope::Once);
    candidates.first().map(|g| Cover {
        grant: g.id,
        once: g.scope == GrantScope::Once,
    })
}

/// The paths of an effect as they resolve now.
struct Resolved {
    /// (canonical, hard-linked) of the path written or read (`to` of a move).
    target: Option<(String, bool)>,
    /// The source of a move.
    from: Option<String>,
}

impl Resolved {
    fn of(effect: &Effect, call: &ToolCall, facts: &dyn PathFacts) -> Resolved {
        let target = op_of(effect)
            .filter(|(_, _, dynamic)| !dynamic)
            .map(|(_, p, _)| {
                let f = facts.resolve(p, &call.cwd);
                (f.canonical, f.hard_linked)
            });
        let from = match effect {
            Effect::Move {
                from,
                dynamic: false,
                ..
            } => Some(facts.resolve(from, &call.cwd).canonical),
            _ => None,
        };
        Resolved { target, from }
    }
}

fn covers(g: &Grant, effect: &Effect, r: &Resolved, d: &Decision, call: &ToolCall) -> bool {
    if let Some((op, _, dynamic)) = op_of(effect) {
        if dynamic || g.op != op {
            return false;
        }
        let Some((canonical, hard_linked)) = &r.target else {
            return false;
        };
        if *hard_linked && g.op != Op::Read {
            return false; // a hard-linked file is never written through a grant
        }
        if matches!(effect, Effect::Move { .. })
            && !r.from.as_ref().is_some_and(|f| path_covered(g, f))
        {
            return false; // a move needs its source covered too
        }
        return path_covered(g, canonical);
    }
    match effect {
        Effect::Exec { command, .. } => g.op == Op::Exec && command_covered(g, command),
        // The call of a tool judged by name (an MCP tool): a grant naming this
        // very tool. What its input names is judged by its own effects.
        Effect::McpCall(_) | Effect::ToolUse { .. } => {
            g.op == Op::Exec
                && matches!(&g.target, GrantTarget::Tool { name } if *name == call.tool.name)
        }
        // Code run through an option, or network use, of a command a grant
        // names (the person saw the whole command).
        Effect::Code { program, .. }
        | Effect::Network {
            program: Some(program),
            ..
        } => {
            g.op == Op::Exec
                && d.effects.iter().any(|e| match e {
                    Effect::Exec { command, .. } => {
                        portcullis_shell::knowledge::lookup_key(&command.program)
                            == Some(program.as_str())
                            && command_covered(g, command)
                    }
                    _ => false,
                })
        }
        _ => false,
    }
}

fn command_covered(g: &Grant, command: &portcullis_shell::Command) -> bool {
    match &g.target {
        GrantTarget::Command { pattern } => {
            CommandPattern::parse(pattern).is_ok_and(|p| p.matches(command, Dynamics::Never))
        }
        GrantTarget::Path { .. } | GrantTarget::Tool { .. } => false,
    }
}

/// The path (re-resolved at this decision: a symlink swapped since the
/// approval lands elsewhere) inside the granted file or folder.
fn path_covered(g: &Grant, c: &str) -> bool {
    let GrantTarget::Path { canonical, folder } = &g.target else {
        return false;
    };
    c == canonical
        || (*folder
            && c.strip_prefix(canonical.as_str())
                .is_some_and(|rest| rest.starts_with('/') || canonical == "/"))
}

/// The request a person could approve for a refused decision: the first
/// refused effect a grant could cover, with the safest scopes first. `None`
/// when what was refused is not eligible (a deny rule, a protected path …).
pub(crate) fn request_for(
    d: &Decision,
    call: &ToolCall,
    session: &str,
    facts: &dyn PathFacts,
    store: &Store,
) -> Result<Option<NewRequest>, EngineError> {
    let refused: Vec<_> = d.judgements.iter().filter(|j| refuses(j)).collect();
    if refused.iter().any(|j| !j.code.overridable()) {
        return Ok(None);
    }
    let Some(j) = refused.first() else {
        return Ok(None);
    };
    let Some(effect) = j.effect.and_then(|i| d.effects.get(i)) else {
        return Ok(None);
    };
    let (op, target) = match (op_of(effect), effect) {
        (Some((_, _, true)), _) => return Ok(None),
        (Some((op, path, false)), _) => {
            let canonical = facts.resolve(path, &call.cwd).canonical;
            (
                op,
                GrantTarget::Path {
                    canonical,
                    folder: false,
                },
            )
        }
        (None, Effect::Exec { command, .. }) if command.argv.is_some() => (
            Op::Exec,
            GrantTarget::Command {
                pattern: portcullis_shell::join(&command.words),
            },
        ),
        (None, Effect::McpCall(_) | Effect::ToolUse { .. }) => (
            Op::Exec,
            GrantTarget::Tool {
                name: call.tool.name.clone(),
            },
        ),
        _ => return Ok(None),
    };
    // Unattended principals never get more than reads approved: a background
    // agent cannot ask for a wider scope than the person who started it —
    // nor through a child it registers (a child's eligibility is within its
    // ancestors'), so the whole chain counts.
    let kind = store.session(session)?.map(|s| s.kind);
    let unattended =
        |k: Option<AgentKind>| matches!(k, Some(AgentKind::Background | AgentKind::Scheduled));
    let chain_unattended = unattended(kind)
        || store
            .ancestors(session)?
            .iter()
            .any(|a| unattended(Some(a.kind)));
    if chain_unattended && op != Op::Read {
        return Ok(None);
    }
    let suggested = if op == Op::Read {
        vec![
            Resolution::Once,
            Resolution::Session,
            Resolution::Device,
            Resolution::Deny,
        ]
    } else {
        vec![Resolution::Once, Resolution::Session, Resolution::Deny]
    };
    Ok(Some(NewRequest {
        session: session.to_string(),
        tool: call.tool.name.clone(),
        op,
        target,
        reason: j.message.clone(),
        eligible: true,
        policy_scope: j
            .rule
            .clone()
            .unwrap_or_else(|| j.code.as_str().to_string()),
        suggested,
    }))
}
