//! Grants: what a person approved, applied to what the policy would ask about.

use portcullis_policy::rules::{CommandPattern, Dynamics};
use portcullis_policy::{Decision, Effect, PathFacts, ToolCall, Verdict};
use portcullis_store::{
    AgentKind, Grant, GrantScope, GrantTarget, NewRequest, Op, Resolution, Store,
};

use crate::EngineError;

/// Reasons a person may override with a grant. Everything else — deny rules,
/// protected, blocked and critical paths, read-only roots and mode, opaque
/// analysis, paths known only at run time — no grant covers.
const COVERABLE: &[&str] = &[
    "no-rule",
    "hazard",
    "glob-options",
    "rule-ask",
    "external-path",
    "secret-path",
    "workspace-edit",
    "code",
    "network",
];

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
    let refused: Vec<_> = d
        .judgements
        .iter()
        .filter(|j| j.verdict != Verdict::Allow && j.code != "unattended")
        .collect();
    let mut covers: Vec<Cover> = Vec::new();
    for j in refused {
        if !COVERABLE.contains(&j.code.as_str()) {
            return Ok(None);
        }
        let Some(effect) = j.effect.and_then(|i| d.effects.get(i)) else {
            return Ok(None);
        };
        match find_grant(effect, d, grants, call, facts) {
            Some(c) => covers.push(c),
            None => return Ok(None),
        }
    }
    // Consume each once-grant a single time, even if it covered several effects.
    let mut used: Vec<i64> = Vec::new();
    for c in &covers {
        if used.contains(&c.grant) {
            continue;
        }
        if c.once && !store.consume_once(c.grant, now)? {
            return Ok(None);
        }
        used.push(c.grant);
    }
    Ok(Some(used))
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
    let mut candidates: Vec<&Grant> = grants
        .iter()
        .filter(|g| covers(g, effect, d, call, facts))
        .collect();
    candidates.sort_by_key(|g| g.scope == GrantScope::Once);
    candidates.first().map(|g| Cover {
        grant: g.id,
        once: g.scope == GrantScope::Once,
    })
}

fn covers(
    g: &Grant,
    effect: &Effect,
    d: &Decision,
    call: &ToolCall,
    facts: &dyn PathFacts,
) -> bool {
    if let Some((op, path, dynamic)) = op_of(effect) {
        if dynamic || g.op != op {
            return false;
        }
        if matches!(effect, Effect::Move { .. }) {
            // A move needs its source covered too.
            let Effect::Move { from, .. } = effect else {
                return false;
            };
            if !path_covered(g, from, call, facts) {
                return false;
            }
        }
        return path_covered(g, path, call, facts);
    }
    match effect {
        Effect::Exec { command, .. } => g.op == Op::Exec && command_covered(g, command),
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
        GrantTarget::Path { .. } => false,
    }
}

/// The path is re-resolved now: a symlink swapped since the approval lands
/// elsewhere and is not covered. Hard-linked files are never written through a grant.
fn path_covered(g: &Grant, raw: &str, call: &ToolCall, facts: &dyn PathFacts) -> bool {
    let GrantTarget::Path { canonical, folder } = &g.target else {
        return false;
    };
    let fact = facts.resolve(raw, &call.cwd);
    if fact.hard_linked && g.op != Op::Read {
        return false;
    }
    let c = fact.canonical.as_str();
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
    let refused: Vec<_> = d
        .judgements
        .iter()
        .filter(|j| j.verdict != Verdict::Allow && j.code != "unattended")
        .collect();
    if refused
        .iter()
        .any(|j| !COVERABLE.contains(&j.code.as_str()))
    {
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
                pattern: shell_join(&command.words),
            },
        ),
        _ => return Ok(None),
    };
    // Unattended principals never get more than reads approved: a background
    // agent cannot ask for a wider scope than the person who started it.
    let kind = store.session(session)?.map(|s| s.kind);
    if matches!(kind, Some(AgentKind::Background | AgentKind::Scheduled)) && op != Op::Read {
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
        policy_scope: j.rule.clone().unwrap_or_else(|| j.code.clone()),
        suggested,
    }))
}

/// Words joined so that the command pattern parser reads them back as they were.
fn shell_join(words: &[String]) -> String {
    words
        .iter()
        .map(|w| {
            if !w.is_empty()
                && w.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_./=:@%+,".contains(c))
            {
                w.clone()
            } else {
                format!("'{}'", w.replace('\'', "'\\''"))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}
