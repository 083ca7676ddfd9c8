//! Grants: what a person approved, applied to what the policy would ask about.

use portcullis_policy::rules::{CommandPattern, Dynamics};
use portcullis_policy::tables::{ToolKind, ToolTable};
use portcullis_policy::{Decision, Effect, PathFacts, Reason, ReasonCode, Risk, ToolCall, Verdict};
use portcullis_store::{
    AgentKind, CallEffect, Grant, GrantScope, GrantTarget, NewRequest, Op, Resolution, Store,
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
    table: &ToolTable,
    facts: &dyn PathFacts,
    store: &Store,
    now: i64,
) -> Result<Option<Vec<i64>>, EngineError> {
    let Some(covers) = grants_covering(d, grants, call, table, facts) else {
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
    table: &ToolTable,
    facts: &dyn PathFacts,
) -> Option<Vec<i64>> {
    grants_covering(d, grants, call, table, facts).map(|c| distinct_grants(&c))
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

/// A grant for every refused effect of the decision, or `None`: a grant of
/// this very call whose refused effects are still the ones approved, else a
/// standing grant (a path, a command pattern, a tool) for each of them.
fn grants_covering(
    d: &Decision,
    grants: &[Grant],
    call: &ToolCall,
    table: &ToolTable,
    facts: &dyn PathFacts,
) -> Option<Vec<Cover>> {
    if let Some(refused) = refused_in_call(d, call, facts) {
        let text = call_text(call, table);
        let mut calls: Vec<&Grant> = grants
            .iter()
            .filter(|g| covers_call(g, call, &text, &refused))
            .collect();
        calls.sort_by_key(|g| g.scope == GrantScope::Once);
        if let Some(g) = calls.first() {
            return Some(vec![Cover {
                grant: g.id,
                once: g.scope == GrantScope::Once,
            }]);
        }
    }
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

/// Whether `g` is a grant of this call (same tool, text and directory) that
/// approved every effect refused now.
fn covers_call(g: &Grant, call: &ToolCall, text: &str, refused: &[CallEffect]) -> bool {
    let GrantTarget::Call {
        tool,
        call: granted,
        cwd,
        effects,
        ..
    } = &g.target
    else {
        return false;
    };
    *tool == call.tool.name
        && granted == text
        && *cwd == call.cwd
        && refused
            .iter()
            .all(|r| effects.iter().any(|e| e.key == r.key))
}

/// Fields of a tool's input that change nothing it does (Claude Code's
/// `description` of a Bash call, its `timeout`): a retry may word them anew.
const COSMETIC_FIELDS: &[&str] = &["description", "timeout"];

/// The call as a call grant names it: a shell tool's command text (with the
/// directory it starts in, where the tool has one), a read's path, a fetch's
/// URL, else the tool's input as canonical JSON without its cosmetic fields.
pub(crate) fn call_text(call: &ToolCall, table: &ToolTable) -> String {
    let field = |name: &str| call.input.get(name).and_then(|v| v.as_str());
    match table.kind(&call.tool.name) {
        Some(ToolKind::Shell { command, dir }) => {
            if let Some(text) = field(command) {
                return match dir.and_then(field) {
                    Some(dir) => format!("{text}\n# in {dir}"),
                    None => text.to_string(),
                };
            }
        }
        // What a read or a fetch does is its path or URL (a fetch's prompt
        // is the question asked about the page, a read's range a window).
        Some(ToolKind::Read { path }) => {
            if let Some(path) = field(path) {
                return path.to_string();
            }
        }
        Some(ToolKind::Fetch { url }) => {
            if let Some(url) = field(url) {
                return url.to_string();
            }
        }
        _ => {}
    }
    let mut input = call.input.clone();
    if let Some(fields) = input.as_object_mut() {
        for f in COSMETIC_FIELDS {
            fields.remove(*f);
        }
    }
    crate::pins::canonical(&input)
}

/// Every effect the decision refuses, as a request shows it and a call grant
/// records it; `None` when one of them is not a person's to approve (a deny
/// rule, a protected path …) or nothing is refused.
fn refused_in_call(
    d: &Decision,
    call: &ToolCall,
    facts: &dyn PathFacts,
) -> Option<Vec<CallEffect>> {
    let mut out: Vec<CallEffect> = Vec::new();
    for j in d.judgements.iter().filter(|j| refuses(j)) {
        if !j.code.approvable_in_call(j.verdict) {
            return None;
        }
        let effect = j.effect.and_then(|i| d.effects.get(i));
        let (key, what) = match effect {
            Some(e) => effect_key(e, call, facts),
            None => (format!("note {}", j.message), j.message.clone()),
        };
        let key = format!("{} {key}", j.code.as_str());
        if out.iter().any(|e| e.key == key) {
            continue;
        }
        out.push(CallEffect {
            key,
            what,
            risk: Risk::of(j.code, effect).as_str().to_string(),
            code: j.code.as_str().to_string(),
            verdict: j.verdict.as_str().to_string(),
            reason: j.message.clone(),
        });
    }
    (!out.is_empty()).then_some(out)
}

/// What identifies an effect when the call is judged again, and how people
/// read it. A path is identified as it resolves now (a symlink swapped since
/// the approval makes it another effect).
fn effect_key(e: &Effect, call: &ToolCall, facts: &dyn PathFacts) -> (String, String) {
    let resolve = |p: &str| {
        let f = facts.resolve(p, &call.cwd);
        if f.hard_linked {
            format!("{} (hard-linked)", f.canonical)
        } else {
            f.canonical
        }
    };
    match e {
        Effect::Read {
            path,
            dynamic: false,
        } => {
            let c = resolve(path);
            (format!("read {c}"), format!("read {c}"))
        }
        Effect::Write {
            path,
            dynamic: false,
        } => {
            let c = resolve(path);
            (format!("write {c}"), format!("write {c}"))
        }
        Effect::Delete {
            path,
            dynamic: false,
        } => {
            let c = resolve(path);
            (format!("delete {c}"), format!("delete {c}"))
        }
        Effect::Move {
            from,
            to,
            dynamic: false,
        } => {
            let (f, t) = (resolve(from), resolve(to));
            (format!("move {f} -> {t}"), format!("move {f} to {t}"))
        }
        other => {
            let json = serde_json::to_string(other).unwrap_or_default();
            (format!("effect {json}"), describe(other))
        }
    }
}

/// An effect as a card shows it.
fn describe(e: &Effect) -> String {
    match e {
        Effect::Exec { command, .. } => {
            format!("run `{}`", portcullis_shell::join(&command.words))
        }
        Effect::Read { path, .. } => format!("read {path} (known only when it runs)"),
        Effect::Write { path, .. } => format!("write {path} (known only when it runs)"),
        Effect::Delete { path, .. } => format!("delete {path} (known only when it runs)"),
        Effect::Move { from, to, .. } => {
            format!("move {from} to {to} (known only when it runs)")
        }
        Effect::Network { program, host } => match (program, host) {
            (_, Some(host)) => format!("network: {host}"),
            (Some(program), None) => format!("network through {program}"),
            (None, None) => "network".to_string(),
        },
        Effect::Code {
            program, reason, ..
        } => format!("code run by {program}: {reason}"),
        Effect::McpCall(name) => format!("call {name}"),
        Effect::ToolUse { tool } => format!("use {tool}"),
        Effect::Opaque { reason, text } => format!("cannot be seen through: {reason} (`{text}`)"),
    }
}

fn command_covered(g: &Grant, command: &portcullis_shell::Command) -> bool {
    match &g.target {
        GrantTarget::Command { pattern } => {
            CommandPattern::parse(pattern).is_ok_and(|p| p.matches(command, Dynamics::Never))
        }
        GrantTarget::Path { .. } | GrantTarget::Tool { .. } | GrantTarget::Call { .. } => false,
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

/// The request a person could approve for a refused decision: the whole
/// call, with every effect the policy refused. Approving it grants that call
/// those effects ([`GrantTarget::Call`]), nothing less and nothing more.
/// `None` when something refused is not a person's to approve (a deny rule,
/// a protected path …).
pub(crate) fn request_for(
    d: &Decision,
    call: &ToolCall,
    table: &ToolTable,
    session: &str,
    facts: &dyn PathFacts,
    store: &Store,
) -> Result<Option<NewRequest>, EngineError> {
    let Some(effects) = refused_in_call(d, call, facts) else {
        return Ok(None);
    };
    let reads_only = effects.iter().all(|e| {
        e.key
            .split_once(' ')
            .is_some_and(|(_, effect)| effect.starts_with("read /"))
    });
    // Unattended principals never get more than reads approved: a background
    // agent cannot ask for a wider scope than the person who started it —
    // nor through a child it registers (a child's eligibility is within its
    // ancestors'), so the whole chain counts.
    let chain_unattended = store
        .lineage(session)?
        .iter()
        .any(|s| matches!(s.kind, AgentKind::Background | AgentKind::Scheduled));
    if chain_unattended && !reads_only {
        return Ok(None);
    }
    // Device-wide only for reads, and never for a secret (or a hazard): it is
    // approved for a call or a session, each time someone looks.
    let confirmed = effects.iter().any(|e| {
        Risk::ALL
            .iter()
            .any(|r| r.as_str() == e.risk && r.needs_confirmation())
    });
    let suggested = if reads_only && !confirmed {
        vec![
            Resolution::Once,
            Resolution::Session,
            Resolution::Device,
            Resolution::Deny,
        ]
    } else {
        vec![Resolution::Once, Resolution::Session, Resolution::Deny]
    };
    let first = d.judgements.iter().find(|j| refuses(j));
    let mut reasons: Vec<&str> = effects.iter().map(|e| e.reason.as_str()).collect();
    reasons.dedup();
    let reason = reasons.join("; ");
    Ok(Some(NewRequest {
        session: session.to_string(),
        tool: call.tool.name.clone(),
        op: if reads_only { Op::Read } else { Op::Exec },
        target: GrantTarget::Call {
            tool: call.tool.name.clone(),
            call: call_text(call, table),
            cwd: call.cwd.clone(),
            effects,
            input: call.input.clone(),
            origin: call.tool.origin.as_str().to_string(),
            server: call.tool.server.clone(),
            table: table.agent.to_string(),
            rules: if confirmed {
                Vec::new()
            } else {
                suggested_rules(d, call, table, facts)
            },
            manifest: call
                .tool
                .manifest
                .as_ref()
                .and_then(|m| serde_json::to_value(m).ok()),
        },
        reason,
        eligible: true,
        policy_scope: first
            .and_then(|j| j.rule.clone().or_else(|| Some(j.code.as_str().to_string())))
            .unwrap_or_default(),
        suggested,
        // Set by the caller, which has the policy.
        once_ttl_secs: None,
        device: None,
    }))
}

/// The words of a person's denial standing for this very call in these
/// sessions (the same tool, text and directory), if any.
pub(crate) fn standing_denial(
    store: &Store,
    sessions: &[&str],
    call: &ToolCall,
    table: &ToolTable,
    now: i64,
) -> Result<Option<String>, EngineError> {
    let denials = store.standing_denials(sessions, &call.tool.name, now)?;
    if denials.is_empty() {
        return Ok(None);
    }
    let text = call_text(call, table);
    Ok(denials.into_iter().find_map(|r| match &r.target {
        GrantTarget::Call {
            call: denied, cwd, ..
        } if *denied == text && *cwd == call.cwd => Some(format!(
            "a person denied this call (request #{}): {}",
            r.id,
            r.deny_message.as_deref().unwrap_or("no reason given")
        )),
        _ => None,
    }))
}

/// Why a person's rule cannot stand for a request (a 422 at the HTTP door).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct RuleRefused(pub String);

/// The grant a person's rule makes (`Bash(npm install *)`, `Read(~/Downloads/**)`,
/// `Edit(./src/**)`, an MCP tool's name), checked to cover every effect the
/// call `d` judged refuses: the operation and target, or why not.
pub(crate) fn rule_grant(
    rule: &str,
    d: &Decision,
    call: &ToolCall,
    table: &ToolTable,
    facts: &dyn PathFacts,
) -> Result<(Op, GrantTarget), RuleRefused> {
    let rule = rule.trim();
    let path_target = |p: &str| {
        // `//abs` is an absolute path in rule syntax (as in Claude Code's).
        let p = if p.starts_with("//") {
            p.get(1..).unwrap_or(p)
        } else {
            p
        };
        let (p, folder) = match p.strip_suffix("/**") {
            Some(dir) => (dir, true),
            None => (p, false),
        };
        GrantTarget::Path {
            canonical: facts.resolve(p, &call.cwd).canonical,
            folder,
        }
    };
    let (op, target) = match rule.split_once('(') {
        Some((tool, rest)) => {
            let Some(inner) = rest.strip_suffix(')') else {
                return Err(RuleRefused(format!(
                    "`{rule}` is not a rule: no closing parenthesis"
                )));
            };
            match tool {
                "Bash" => {
                    CommandPattern::parse(inner)
                        .map_err(|why| RuleRefused(format!("`{rule}`: {why}")))?;
                    (
                        Op::Exec,
                        GrantTarget::Command {
                            pattern: inner.to_string(),
                        },
                    )
                }
                "Read" => (Op::Read, path_target(inner)),
                "Edit" | "Write" => (Op::Write, path_target(inner)),
                other => {
                    return Err(RuleRefused(format!(
                        "`{other}(…)` rules are not offered as grants: use Bash(…), Read(…), Edit(…) or a tool's name"
                    )));
                }
            }
        }
        None if portcullis_policy::check_tool_name(rule).is_ok() => (
            Op::Exec,
            GrantTarget::Tool {
                name: rule.to_string(),
            },
        ),
        None => return Err(RuleRefused(format!("`{rule}` is not a rule"))),
    };
    let candidate = Grant {
        id: 0,
        session: None,
        scope: GrantScope::Session,
        op,
        target: target.clone(),
        expires_at: None,
        approver: "rule check".into(),
        request: None,
        created_at: 0,
        consumed_at: None,
        revoked_at: None,
    };
    if grants_covering(d, std::slice::from_ref(&candidate), call, table, facts).is_none() {
        let missed: Vec<String> = d
            .judgements
            .iter()
            .filter(|j| refuses(j))
            .filter(|j| {
                let one = Decision {
                    judgements: vec![(*j).clone()],
                    ..d.clone()
                };
                grants_covering(&one, std::slice::from_ref(&candidate), call, table, facts)
                    .is_none()
            })
            .map(|j| j.message.clone())
            .collect();
        return Err(RuleRefused(format!(
            "`{rule}` does not cover the call: {}",
            if missed.is_empty() {
                "it refuses nothing a grant can lift".to_string()
            } else {
                missed.join("; ")
            }
        )));
    }
    Ok((op, target))
}

/// Rules a person may grant instead of the call, each covering all of it:
/// the command's first words with `*` (`Bash(npm install *)`), the folder of
/// a file read or written outside the workspace (`Read(/dir/**)`,
/// `Edit(/dir/**)`), an MCP tool by name. A candidate that misses any
/// refused effect of the call is not offered.
fn suggested_rules(
    d: &Decision,
    call: &ToolCall,
    table: &ToolTable,
    facts: &dyn PathFacts,
) -> Vec<String> {
    let mut candidates: Vec<String> = Vec::new();
    let folder = |path: &str| {
        let c = facts.resolve(path, &call.cwd).canonical;
        std::path::Path::new(&c)
            .parent()
            .map(|p| p.to_string_lossy().into_owned())
            .filter(|p| p != "/")
    };
    for j in d.judgements.iter().filter(|j| refuses(j)) {
        let Some(effect) = j.effect.and_then(|i| d.effects.get(i)) else {
            continue;
        };
        let candidate = match effect {
            Effect::Exec {
                argv: Some(argv), ..
            } => {
                let words: Vec<&str> = argv.iter().take(2).map(String::as_str).collect();
                match words.as_slice() {
                    [program] => Some(format!("Bash({program} *)")),
                    [program, first] if !first.starts_with('-') => {
                        Some(format!("Bash({program} {first} *)"))
                    }
                    [program, _] => Some(format!("Bash({program} *)")),
                    _ => None,
                }
            }
            Effect::Read {
                path,
                dynamic: false,
            } => folder(path).map(|f| format!("Read(/{f}/**)")),
            Effect::Write {
                path,
                dynamic: false,
            } => folder(path).map(|f| format!("Edit(/{f}/**)")),
            Effect::McpCall(name) => Some(name.to_string()),
            _ => None,
        };
        if let Some(c) = candidate
            && !candidates.contains(&c)
        {
            candidates.push(c);
        }
    }
    candidates
        .into_iter()
        .filter(|rule| rule_grant(rule, d, call, table, facts).is_ok())
        .collect()
}
