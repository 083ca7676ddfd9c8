//! The one decision function: every effect of a call must be authorized;
//! deny beats ask beats allow.

use serde::Serialize;

use crate::config::{Mode, Policy};
use crate::effects::{self, Effect};
use crate::facts::{PathFacts, Zone};
use crate::mcp_name::McpToolName;
use crate::reason::ReasonCode;
use crate::rules::{Dynamics, Rule, RuleList, Target};
use crate::tables::{self, PROJECT_TASKS, READ_ONLY_GIT, READ_ONLY_PROGRAMS};
use crate::tool::ToolCall;

/// The answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    Allow,
    Ask,
    Deny,
}

impl Verdict {
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Allow => "allow",
            Verdict::Ask => "ask",
            Verdict::Deny => "deny",
        }
    }
}

/// Why an effect got its verdict.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Reason {
    /// A stable code (`rule-allow`, `hazard`, `protected-path`, `opaque` …).
    pub code: ReasonCode,
    pub message: String,
    /// The rule that decided, as written, with where it was written.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rule: Option<String>,
    /// Index into the decision's effects.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub effect: Option<usize>,
    pub verdict: Verdict,
}

/// The decision for one call.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Decision {
    pub decision: Verdict,
    /// The reasons that produced the decision (for `allow`, why each effect was allowed).
    pub reasons: Vec<Reason>,
    pub effects: Vec<Effect>,
    /// Every effect's judgement, the deciding ones included (for `explain`).
    #[serde(skip)]
    pub judgements: Vec<Reason>,
    /// The call is allowed to run confined by the kernel (`portcullis run`),
    /// where the front door can rewrite it so.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub confine: Option<Confine>,
}

/// How an allowed shell call runs confined (`[confine] mode`). Read back by
/// a team server's device (its hook rewrites the call it was answered).
#[derive(Clone, Debug, PartialEq, Serialize, serde::Deserialize)]
pub struct Confine {
    /// The confined program may use the network: the decision allowed a
    /// network effect.
    pub network: bool,
    /// The confined program may write in the workspace: the policy allows
    /// workspace edits (the mode or an `Edit` rule). Without it the workspace
    /// is read-only too, so a write the analysis could not see (a word known
    /// only at run time that turns out to be `-i`) fails.
    pub write: bool,
    /// Secret paths the call was allowed to read (by a rule, a grant or a
    /// person): the confinement leaves exactly these readable.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub reveal: Vec<String>,
    /// Paths outside the workspace the call was allowed to write (by a rule,
    /// a grant or a person): the confinement makes exactly these writable.
    /// Never a protected path.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub write_also: Vec<String>,
    /// Git's own data in a repository is writable inside (`[confine]
    /// git_writes`): an allowed `git commit` works confined.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub git_writes: bool,
    /// The decision where the call cannot be confined: its verdict and reasons.
    /// Not sent: read back, it is a refusal (a call that cannot run as it was
    /// answered does not run).
    #[serde(skip, default = "refused_unconfined")]
    pub unconfined: Box<(Verdict, Vec<Reason>)>,
}

fn refused_unconfined() -> Box<(Verdict, Vec<Reason>)> {
    Box::new((Verdict::Deny, Vec::new()))
}

impl Decision {
    /// A deny for one reason, with no effect judged: the call was not
    /// analysed (a front door's or the engine's refusal).
    pub fn refused(code: ReasonCode, message: String) -> Decision {
        Decision {
            decision: Verdict::Deny,
            reasons: vec![Reason {
                code,
                message,
                rule: None,
                effect: None,
                verdict: Verdict::Deny,
            }],
            effects: Vec::new(),
            judgements: Vec::new(),
            confine: None,
        }
    }

    /// After a person's grant turned this decision into an allow: under
    /// `[confine] mode = "always"` a shell call still runs confined.
    pub fn confine_granted(&mut self, call: &ToolCall, policy: &Policy) {
        if self.decision == Verdict::Allow && self.confine.is_none() {
            self.confine = confinement(call, policy, &self.effects, &self.reasons, Verdict::Allow)
                .map(|c| Confine {
                    // A person approved the call as a whole, its writes in
                    // the workspace included.
                    write: true,
                    unconfined: Box::new((Verdict::Allow, self.reasons.clone())),
                    ..c
                });
        }
    }

    /// After the decision, grants included: what the call was allowed to
    /// touch beyond the confinement's defaults becomes part of its profile,
    /// exactly that and no more. Secret or external files it may read are
    /// revealed (a read of `~/.aws/credentials` does not reveal
    /// `~/.aws/config`); files outside the workspace it may write (not
    /// protected ones) are made writable. Deletes and moves outside the
    /// workspace are not: they fail inside, closed.
    pub fn reveal_allowed_paths(&mut self, cwd: &str, facts: &dyn PathFacts) {
        if self.decision != Verdict::Allow {
            return;
        }
        let Some(c) = &mut self.confine else {
            return;
        };
        for e in &self.effects {
            match e {
                Effect::Read {
                    path,
                    dynamic: false,
                } => {
                    let fact = facts.resolve(path, cwd);
                    let hidden = fact.secret.is_some() || fact.zone == crate::Zone::External;
                    if hidden
                        && fact.canonical.starts_with('/')
                        && !c.reveal.contains(&fact.canonical)
                    {
                        c.reveal.push(fact.canonical);
                    }
                }
                Effect::Write {
                    path,
                    dynamic: false,
                } => {
                    let fact = facts.resolve(path, cwd);
                    if fact.zone != crate::Zone::Workspace
                        && fact.protected.is_none()
                        && fact.canonical.starts_with('/')
                        && !c.write_also.contains(&fact.canonical)
                    {
                        c.write_also.push(fact.canonical);
                    }
                }
                _ => {}
            }
        }
    }

    /// The decision for a front door that cannot confine the call: a call
    /// allowed only because it would run confined is asked about again.
    pub fn without_confinement(mut self) -> Decision {
        if let Some(c) = self.confine.take() {
            let (verdict, reasons) = *c.unconfined;
            self.decision = verdict;
            self.reasons = reasons;
        }
        self
    }
}

struct Ctx<'a> {
    policy: &'a Policy,
    facts: &'a dyn PathFacts,
    cwd: &'a str,
    mode: Mode,
    tool_name: &'a str,
    /// The name as the agent sent it, when the call is one reading of it
    /// (Gemini's `mcp_my_fs_write` judged as `mcp__my_fs__write`): an allow
    /// rule spelt so allows that call, each reading of it.
    as_sent: Option<&'a str>,
    /// The tool declared itself destructive: wildcard allow rules do not cover it.
    destructive: bool,
    /// Rules that allowed an Exec, by the program's knowledge name.
    allowed_by_rule: Vec<(String, &'a Rule)>,
}

/// Judges a call.
pub fn decide(call: &ToolCall, policy: &Policy, facts: &dyn PathFacts) -> Decision {
    if let Some(splits) = ambiguous_mcp_splits(call) {
        let names: Vec<&str> = splits.iter().map(|c| c.tool.name.as_str()).collect();
        let why = format!(
            "`{}` names no server: judged as each of {} and the strictest answer kept",
            call.tool.name,
            names.join(", ")
        );
        return strictest(call, &splits, Some(&call.tool.name), why, policy, facts);
    }
    if let Some(readings) = ambiguous_mcp_server(call) {
        let each: Vec<String> = readings
            .iter()
            .filter_map(|c| c.tool.server.as_deref())
            .map(|server| format!("a tool of server `{server}`"))
            .collect();
        let why = format!(
            "`{}` may name {}: judged as each and the strictest answer kept",
            call.tool.name,
            each.join(" or ")
        );
        return strictest(call, &readings, None, why, policy, facts);
    }
    decide_one(call, None, policy, facts)
}

/// `mcp__a___t` with no server given: tool `_t` of server `a` or tool `t`
/// of server `a_` ([`McpToolName::readings`]). A rule about either server
/// judges it, and a rule for every tool of `a` never covers `a_`'s.
fn ambiguous_mcp_server(call: &ToolCall) -> Option<Vec<ToolCall>> {
    if call.tool.origin == crate::Origin::Core || call.tool.server.is_some() {
        return None;
    }
    let readings = McpToolName::readings(&call.tool.name);
    (readings.len() > 1).then(|| {
        readings
            .into_iter()
            .map(|name| {
                let mut c = call.clone();
                c.tool.server = Some(name.server().to_string());
                c
            })
            .collect()
    })
}

/// An MCP tool named `mcp_<server>_<tool>` with no server given (Gemini CLI
/// without `mcp_context`): `mcp_my_fs_write_file` is server `my` or `my_fs`
/// or `my_fs_write`. Every split, as its own call.
fn ambiguous_mcp_splits(call: &ToolCall) -> Option<Vec<ToolCall>> {
    if call.tool.origin != crate::Origin::Mcp || call.tool.server.is_some() {
        return None;
    }
    let rest = call.tool.name.strip_prefix("mcp_")?;
    if rest.starts_with('_') {
        return None;
    }
    let splits: Vec<ToolCall> = rest
        .match_indices('_')
        .map(|(i, _)| (&rest[..i], &rest[i + 1..]))
        .filter(|(server, tool)| !server.is_empty() && !tool.is_empty())
        .map(|(server, tool)| {
            let name = McpToolName::new(server, tool);
            let mut c = call.clone();
            c.tool.name = name.to_string();
            c.tool.server = Some(name.server().to_string());
            c
        })
        .collect();
    (!splits.is_empty()).then_some(splits)
}

/// The strictest decision over every reading of an ambiguous call (deny
/// beats ask beats allow): a rule about one reading is never dodged by
/// another. `as_sent`: the name the readings were split from, when they
/// were renamed ([`Ctx::as_sent`]).
fn strictest(
    original: &ToolCall,
    calls: &[ToolCall],
    as_sent: Option<&str>,
    why: String,
    policy: &Policy,
    facts: &dyn PathFacts,
) -> Decision {
    let decisions: Vec<Decision> = calls
        .iter()
        .map(|c| decide_one(c, as_sent, policy, facts))
        .collect();
    let Some(mut worst) = decisions.iter().max_by_key(|d| d.decision).cloned() else {
        return decide_one(original, None, policy, facts);
    };
    // Every reading's judgements, not the strictest one's alone: a grant
    // covers the call only when it covers what each reading refused. The
    // readings' effects differ only in the MCP tool's server, so an index
    // names the same effect in each (any other is kept with no effect: a
    // refusal no grant covers).
    let same = |a: Option<&Effect>, b: Option<&Effect>| match (a, b) {
        (Some(Effect::McpCall(_)), Some(Effect::McpCall(_))) => true,
        (Some(a), Some(b)) => a == b,
        _ => false,
    };
    for d in &decisions {
        for j in &d.judgements {
            let mut j = j.clone();
            j.effect = j
                .effect
                .filter(|&i| same(d.effects.get(i), worst.effects.get(i)));
            if !worst.judgements.contains(&j) {
                worst.judgements.push(j);
            }
        }
    }
    let note = Reason {
        code: ReasonCode::AmbiguousMcpName,
        message: why,
        rule: None,
        effect: None,
        verdict: worst.decision,
    };
    worst.judgements.push(note.clone());
    worst.reasons.push(note);
    worst
}

fn decide_one(
    call: &ToolCall,
    as_sent: Option<&str>,
    policy: &Policy,
    facts: &dyn PathFacts,
) -> Decision {
    let mut derived = effects::derive(call, policy);
    // Bare names in an untrusted tool's arguments are paths when the file
    // system says so: an existing file here, or a secret's or protected
    // path's shape (`.env`, `id_rsa`).
    for candidate in std::mem::take(&mut derived.candidates) {
        let (Effect::Write { path, .. } | Effect::Read { path, .. }) = &candidate else {
            continue;
        };
        let fact = facts.resolve(path, &call.cwd);
        if fact.secret.is_some() || fact.protected.is_some() || facts.exists(path, &call.cwd) {
            derived.items.push(candidate);
        }
    }
    let mut ctx = Ctx {
        policy,
        facts,
        cwd: &call.cwd,
        mode: policy.mode,
        tool_name: &call.tool.name,
        as_sent,
        destructive: call.tool.manifest.as_ref().is_some_and(|m| m.destructive)
            || policy
                .manifest_for(&call.tool.name, call.tool.origin)
                .is_some_and(|m| m.destructive),
        allowed_by_rule: Vec::new(),
    };
    let mut judgements: Vec<Reason> = Vec::new();
    // Every relative path is placed against the working directory: one that
    // is not absolute places nothing (agents always send an absolute one).
    if !call.cwd.starts_with('/') {
        judgements.push(Reason {
            code: ReasonCode::BadCwd,
            message: format!(
                "the working directory `{}` is not an absolute path, so no path can be placed",
                call.cwd
            ),
            rule: None,
            effect: None,
            verdict: Verdict::Deny,
        });
    }
    // Tool-level deny/ask rules (`Read`, `WebFetch`, `*`) first.
    let mcp = derived.items.iter().find_map(|e| match e {
        Effect::McpCall(name) => Some(name),
        _ => None,
    });
    for rule in policy.rules.iter().filter(|r| r.list != RuleList::Allow) {
        if tool_rule_matches(rule, &call.tool.name, &derived.tool_rule_name, mcp)
            || gemini_rule_names(rule, mcp)
        {
            judgements.push(rule_reason(rule, None, "the tool itself"));
        }
    }
    // The approval server is off limits, whatever the rules say.
    if let Some(port) = policy.server_port()
        && let Some(why) = crate::approval_api::reaches(&call.input, &derived.items, port)
    {
        judgements.push(Reason {
            code: ReasonCode::ApprovalApi,
            message: format!("the agent may not call the approval server: {why}"),
            rule: None,
            effect: None,
            verdict: Verdict::Deny,
        });
    }
    // Commands first: code and network effects depend on how they were allowed.
    let is_exec = |e: &&Effect| matches!(e, Effect::Exec { .. });
    let order: Vec<(usize, &Effect)> = (derived.items.iter().enumerate())
        .filter(|(_, e)| is_exec(e))
        .chain(
            derived
                .items
                .iter()
                .enumerate()
                .filter(|(_, e)| !is_exec(e)),
        )
        .collect();
    for (i, effect) in order {
        let mut r = judge(effect, &derived.tool_rule_name, &mut ctx, &derived.items);
        r.effect = Some(i);
        judgements.push(r);
    }
    judgements.extend(secret_mentions(&derived.items, &ctx));
    judgements.extend(secret_env_reads(&derived, &ctx));
    judgements.extend(build_files_written_then_run(&derived.items, &ctx));
    judgements.extend(foreign_git_repositories(&derived.items, &ctx));
    if judgements.is_empty() {
        judgements.push(Reason {
            code: ReasonCode::NoEffect,
            message: "the call has no effect to judge".into(),
            rule: None,
            effect: None,
            verdict: Verdict::Allow,
        });
    }
    let verdict = judgements
        .iter()
        .map(|r| r.verdict)
        .max()
        .unwrap_or(Verdict::Allow);
    let reasons: Vec<Reason> = judgements
        .iter()
        .filter(|r| r.verdict == verdict)
        .cloned()
        .collect();
    // The decision where the call is not confined.
    let unconfined = unattended(verdict, reasons, policy.unattended);
    let mut confine =
        confinement(call, policy, &derived.items, &judgements, verdict).map(|c| Confine {
            write: workspace_writes_allowed(&mut ctx, &derived.tool_rule_name),
            unconfined: Box::new(unconfined.clone()),
            ..c
        });
    let (verdict, reasons) = match &mut confine {
        Some(c) if verdict == Verdict::Ask => {
            let why = format!(
                "allowed because it runs confined by the kernel (reads but secrets and other projects, {}{})",
                if c.write {
                    "writes only in the workspace"
                } else {
                    "no writes but its temporary directory"
                },
                if c.network { "" } else { ", no network" }
            );
            let reasons = judgements
                .iter()
                .filter(|r| r.verdict == Verdict::Ask)
                .map(|r| Reason {
                    code: ReasonCode::Confined,
                    message: format!("{}; {why}", r.message),
                    verdict: Verdict::Allow,
                    ..r.clone()
                })
                .collect();
            (Verdict::Allow, reasons)
        }
        _ => unconfined,
    };
    Decision {
        decision: verdict,
        reasons,
        effects: derived.items,
        judgements,
        confine,
    }
}

/// Unattended (no person can answer): an ask is a deny.
fn unattended(
    verdict: Verdict,
    mut reasons: Vec<Reason>,
    unattended: bool,
) -> (Verdict, Vec<Reason>) {
    if verdict != Verdict::Ask || !unattended {
        return (verdict, reasons);
    }
    reasons.push(Reason {
        code: ReasonCode::Unattended,
        message: "no person can answer a question here, so what would be asked is denied".into(),
        rule: None,
        effect: None,
        verdict: Verdict::Deny,
    });
    (Verdict::Deny, reasons)
}

/// Whether and how the call runs confined (`[confine] mode`): only a core
/// shell call; `always`: whenever the policy allows it; `dynamic`: when it
/// would ask only because some of its *reads* are known only at run time —
/// no run-time write or delete, no hazard, no opaque part, nothing else asked.
fn confinement(
    call: &ToolCall,
    policy: &Policy,
    effects: &[Effect],
    judgements: &[Reason],
    verdict: Verdict,
) -> Option<Confine> {
    use crate::config::ConfineMode;
    let shell = call.tool.origin == crate::Origin::Core
        && matches!(
            policy.table.kind(&call.tool.name),
            Some(crate::tables::ToolKind::Shell { .. })
        );
    if !shell || policy.confine == ConfineMode::Off {
        return None;
    }
    let reads_only = || {
        judgements
            .iter()
            .filter(|r| r.verdict != Verdict::Allow)
            .all(|r| {
                r.code == ReasonCode::DynamicPath
                    && matches!(
                        r.effect.and_then(|i| effects.get(i)),
                        Some(Effect::Read { dynamic: true, .. })
                    )
            })
    };
    let applies = match (verdict, policy.confine) {
        (Verdict::Allow, ConfineMode::Always) => true,
        (Verdict::Ask, ConfineMode::Dynamic | ConfineMode::Always) => reads_only(),
        _ => false,
    };
    if !applies {
        return None;
    }
    Some(Confine {
        network: effects.iter().any(|e| matches!(e, Effect::Network { .. })),
        write: false,
        reveal: Vec::new(),
        write_also: Vec::new(),
        git_writes: policy.confine_git_writes,
        // The caller says what the call is unconfined.
        unconfined: Box::new((verdict, Vec::new())),
    })
}

/// Whether the policy allows an edit of an ordinary new file in the call's
/// working directory (the mode, or an `Edit` rule): what a confined call may
/// write in the workspace.
fn workspace_writes_allowed(ctx: &mut Ctx<'_>, tool_rule_name: &str) -> bool {
    if !ctx.cwd.starts_with('/') {
        return false;
    }
    let probe = Effect::Write {
        path: format!(
            "{}/portcullis-confinement-probe",
            ctx.cwd.trim_end_matches('/')
        ),
        dynamic: false,
    };
    judge(&probe, tool_rule_name, ctx, std::slice::from_ref(&probe)).verdict == Verdict::Allow
}

/// `mcp` is the MCP tool the call is, its server known or read from its
/// name; without it, `rule_name` is split as an MCP name.
fn tool_rule_matches(rule: &Rule, tool: &str, rule_name: &str, mcp: Option<&McpToolName>) -> bool {
    match &rule.target {
        Target::Tool(n) => n == "*" || n == tool || n == rule_name,
        Target::Unevaluated { tool: t, .. } => t == tool,
        Target::Mcp { server, tool: None } if server == "*" => {
            mcp.is_some() || rule_name.starts_with(McpToolName::PREFIX)
        }
        // Every tool of one server: that server's, compared whole — never
        // the tools of `a_` or `ab` for a rule about `a`, whose names start
        // with the same text.
        Target::Mcp { server, tool: None } => match mcp {
            Some(name) => name.server() == server,
            None => McpToolName::parse(rule_name).is_some_and(|n| n.server() == server),
        },
        // One tool: the name as spelt, the rule's text (`mcp__a___t`) being
        // what the agent calls the tool.
        Target::Mcp {
            server,
            tool: Some(t),
        } => rule_name == McpToolName::new(server.as_str(), t.as_str()).to_string(),
        _ => false,
    }
}

/// A deny or ask rule in Gemini CLI's spelling (`mcp_my_fs_write`, the
/// name the agent sends) is about every MCP tool Gemini spells so — `my`'s
/// `fs_write` and `my_fs`'s `write` — whichever agent calls it and however
/// its server is known: a rule never says less than it means. An allow rule
/// so spelt allows only the call sent by that name ([`Ctx::as_sent`]), never
/// another agent's call of a tool it might mean.
fn gemini_rule_names(rule: &Rule, mcp: Option<&McpToolName>) -> bool {
    rule.list != RuleList::Allow
        && matches!(&rule.target, Target::Tool(n)
            if McpToolName::is_gemini_spelling(n)
                && mcp.is_some_and(|m| m.gemini_spelling() == *n))
}

fn rule_reason(rule: &Rule, effect: Option<usize>, what: &str) -> Reason {
    let (code, verdict) = match rule.list {
        RuleList::Deny => (ReasonCode::RuleDeny, Verdict::Deny),
        RuleList::Ask => (ReasonCode::RuleAsk, Verdict::Ask),
        RuleList::Allow => (ReasonCode::RuleAllow, Verdict::Allow),
    };
    Reason {
        code,
        message: format!("{what}: {} rule `{}`", rule.list_name(), rule.text),
        rule: Some(format!("{} ({})", rule.text, rule.source)),
        effect,
        verdict,
    }
}

fn reason(verdict: Verdict, code: ReasonCode, message: impl Into<String>) -> Reason {
    Reason {
        code,
        message: message.into(),
        rule: None,
        effect: None,
        verdict,
    }
}

impl Rule {
    fn list_name(&self) -> &'static str {
        match self.list {
            RuleList::Deny => "deny",
            RuleList::Ask => "ask",
            RuleList::Allow => "allow",
        }
    }
}

/// By mode, when no rule decided: what happens to something not provably harmless.
fn by_mode(mode: Mode, code: ReasonCode, message: String) -> Reason {
    match mode {
        Mode::FullAccess => reason(
            Verdict::Allow,
            ReasonCode::ModeFullAccess,
            format!("{message}; allowed in full-access mode"),
        ),
        Mode::ReadOnly => reason(
            Verdict::Deny,
            code,
            format!("{message}; denied in read-only mode"),
        ),
        Mode::Ask | Mode::ApproveForMe => reason(Verdict::Ask, code, message),
    }
}

fn judge(e: &Effect, tool_rule_name: &str, ctx: &mut Ctx<'_>, all: &[Effect]) -> Reason {
    match e {
        Effect::Exec { command, .. } => judge_exec(command, ctx),
        Effect::Read { path, dynamic } => judge_path(PathOp::Read, path, *dynamic, ctx),
        Effect::Write { path, dynamic } => judge_path(PathOp::Write, path, *dynamic, ctx),
        Effect::Delete { path, dynamic } => judge_path(PathOp::Delete, path, *dynamic, ctx),
        Effect::Move { from, to, dynamic } => {
            let a = judge_path(PathOp::Delete, from, *dynamic, ctx);
            let b = judge_path(PathOp::Write, to, *dynamic, ctx);
            if b.verdict > a.verdict { b } else { a }
        }
        Effect::Network { program, host } => {
            judge_network(program.as_deref(), host.as_deref(), ctx)
        }
        Effect::Code {
            program,
            source,
            reason: why,
        } => judge_code(program, source, why, ctx),
        Effect::McpCall(name) => {
            let full = name.to_string();
            let r = judge_tool(&full, tool_rule_name, Some(name), ctx, "MCP tool");
            if ctx.destructive && r.verdict == Verdict::Allow && ctx.mode != Mode::FullAccess {
                let literal = ctx.policy.rules.iter().any(|rule| {
                    rule.list == RuleList::Allow
                        && (rule.text == full
                            || matches!(&rule.target, Target::Tool(n)
                                if Some(n.as_str()) == ctx.as_sent))
                });
                if !literal {
                    return reason(
                        Verdict::Ask,
                        ReasonCode::DestructiveTool,
                        format!(
                            "MCP tool `{full}` declares itself destructive: {} does not cover it, only a rule naming it (`{full}`)",
                            r.rule
                                .as_deref()
                                .map(|x| format!("the rule {x}"))
                                .unwrap_or_else(|| "the mode".into())
                        ),
                    );
                }
            }
            r
        }
        Effect::ToolUse { tool } => judge_tool(tool, tool_rule_name, None, ctx, "tool"),
        Effect::Opaque { reason: why, text } => judge_opaque(why, text, ctx, all),
    }
}

// ----- secret environment variables ---------------------------------------------

/// Variables whose values the shell text reads (`echo $GITHUB_TOKEN`,
/// `printenv OPENAI_API_KEY`) or that it prints all at once (`env`,
/// `printenv`, `set`, `declare -p`): a secret-shaped name (`[secrets] env`)
/// is judged like a secret file — a person must approve, except in
/// full-access mode. Each judgement points at the command that reads it.
/// A call that writes a file a program loads as code (`tables::BUILD_FILES`)
/// and runs that program: it runs code it just wrote (`> Makefile && make`),
/// which no rule for the program covers. Asks (full-access allows).
fn build_files_written_then_run(items: &[Effect], ctx: &Ctx<'_>) -> Vec<Reason> {
    let ran: Vec<&str> = items
        .iter()
        .filter_map(|e| match e {
            Effect::Exec { program, .. } => portcullis_shell::knowledge::lookup_key(program),
            _ => None,
        })
        .collect();
    let mut out = Vec::new();
    for (i, e) in items.iter().enumerate() {
        let Effect::Write { path, .. } = e else {
            continue;
        };
        let name = path
            .trim_end_matches('/')
            .rsplit('/')
            .next()
            .unwrap_or(path);
        let Some((programs, _)) = tables::BUILD_FILES.iter().find(|(programs, files)| {
            programs.iter().any(|p| ran.contains(p))
                && files.iter().any(|f| {
                    if f.contains('/') {
                        path.trim_end_matches('/').ends_with(f)
                    } else {
                        glob_name(f, name)
                    }
                })
        }) else {
            continue;
        };
        let program = programs
            .iter()
            .find(|p| ran.contains(p))
            .copied()
            .unwrap_or_default();
        let what = format!("`{program}` runs `{path}`, which this same call writes");
        let mut r = if ctx.mode == Mode::FullAccess {
            reason(
                Verdict::Allow,
                ReasonCode::ModeFullAccess,
                format!("{what}; allowed in full-access mode"),
            )
        } else {
            reason(
                Verdict::Ask,
                ReasonCode::Code,
                format!("{what}: code written and run in one call needs a person"),
            )
        };
        r.effect = Some(i);
        out.push(r);
    }
    out
}

/// A `git` run in a directory that git would take for a repository of its
/// own — a bare repository's `HEAD`, `config` and `objects` lying in the
/// directory itself or one above it, below the workspace — loads that
/// repository's configuration, which can name programs (`core.fsmonitor`,
/// `core.pager`): code from that directory. Asks (full-access allows).
fn foreign_git_repositories(items: &[Effect], ctx: &Ctx<'_>) -> Vec<Reason> {
    let mut out = Vec::new();
    for (i, e) in items.iter().enumerate() {
        let Effect::Exec {
            program, command, ..
        } = e
        else {
            continue;
        };
        if portcullis_shell::knowledge::lookup_key(program) != Some("git") {
            continue;
        }
        let start = match &command.runs_in {
            portcullis_shell::RunsIn::Caller => ".".to_string(),
            portcullis_shell::RunsIn::Dir(d) => d.clone(),
            // Judged as a path known only at run time elsewhere.
            portcullis_shell::RunsIn::Unknown => continue,
        };
        // `git -C DIR` starts there (each `-C` relative to the one before).
        let args = command.words.get(1..).unwrap_or_default();
        let start = portcullis_shell::knowledge::git_split(args)
            .globals
            .iter()
            .filter(|g| g.name == "-C")
            .filter_map(|g| g.value.as_deref())
            .fold(start, |dir, c| {
                if c.starts_with('/') || c.starts_with('~') {
                    c.to_string()
                } else {
                    format!("{dir}/{c}")
                }
            });
        // From the directory up, as git's discovery walks, while the
        // directory is still below the call's working directory.
        let mut dir = start;
        for _ in 0..16 {
            // The usual case first, one look: the project's own `.git`.
            if ctx.facts.exists(&format!("{dir}/.git"), ctx.cwd) {
                break;
            }
            let is_repo = ["HEAD", "config", "objects"]
                .iter()
                .all(|f| ctx.facts.exists(&format!("{dir}/{f}"), ctx.cwd));
            if is_repo {
                let what = format!(
                    "`git` runs where `{dir}` looks like a repository of its own (HEAD, config, \
                     objects): its configuration can name programs git runs"
                );
                let mut r = if ctx.mode == Mode::FullAccess {
                    reason(
                        Verdict::Allow,
                        ReasonCode::ModeFullAccess,
                        format!("{what}; allowed in full-access mode"),
                    )
                } else {
                    reason(Verdict::Ask, ReasonCode::Code, what)
                };
                r.effect = Some(i);
                out.push(r);
                break;
            }
            let canonical = ctx.facts.resolve(&dir, ctx.cwd).canonical;
            if canonical == ctx.cwd.trim_end_matches('/') || !canonical.starts_with(ctx.cwd) {
                break;
            }
            dir = format!("{dir}/..");
        }
    }
    out
}

/// `*` within one file name.
fn glob_name(pattern: &str, name: &str) -> bool {
    match pattern.split_once('*') {
        Some((pre, post)) => {
            name.len() >= pre.len() + post.len() && name.starts_with(pre) && name.ends_with(post)
        }
        None => pattern == name,
    }
}

fn secret_env_reads(derived: &effects::Effects, ctx: &Ctx<'_>) -> Vec<Reason> {
    let mut out = Vec::new();
    for r in &derived.env_reads {
        let Some(shape) = ctx.policy.secret_env_shape(&r.name) else {
            continue;
        };
        let what = if r.is_all() {
            format!(
                "`{}` prints every environment variable, secrets among them (`{shape}`)",
                r.by
            )
        } else if r.name.ends_with('*') {
            format!(
                "the environment variables named {} may be secrets (`{shape}`)",
                r.name
            )
        } else if r.by == "expansion" {
            format!(
                "`${}` expands a secret environment variable (`{shape}`)",
                r.name
            )
        } else {
            format!(
                "`{}` reads the secret environment variable {} (`{shape}`)",
                r.by, r.name
            )
        };
        let mut reason = if ctx.mode == Mode::FullAccess {
            reason(
                Verdict::Allow,
                ReasonCode::ModeFullAccess,
                format!("{what}; allowed in full-access mode"),
            )
        } else {
            reason(
                Verdict::Ask,
                ReasonCode::SecretPath,
                format!("{what}; not read without a person"),
            )
        };
        reason.effect = env_read_command(&derived.items, r);
        out.push(reason);
    }
    out
}

/// The command an environment read belongs to: the program that prints it,
/// or the first command whose words show the expansion, or the first command.
fn env_read_command(items: &[Effect], r: &portcullis_shell::EnvRead) -> Option<usize> {
    let commands = || {
        items.iter().enumerate().filter_map(|(i, e)| match e {
            Effect::Exec { command, .. } => Some((i, command)),
            _ => None,
        })
    };
    let by_program = commands().find(|(_, c)| c.basename() == r.by);
    let by_word = || {
        let name = r.name.trim_end_matches('*');
        commands().find(|(_, c)| c.words.iter().any(|w| w.contains(name)))
    };
    by_program
        .or_else(by_word)
        .or_else(|| commands().next())
        .map(|(i, _)| i)
}

// ----- secrets named in arguments ------------------------------------------------

/// Secrets a command is given where the knowledge base does not say what the
/// program does with them (`date -f ~/.ssh/id_rsa` prints the key in its error
/// messages; an unknown option of a known program may read a file). Every
/// static argument and `--opt=VALUE` value that is not already a path effect
/// is resolved; one that lands on a secret is judged as a read of it. Only
/// secrets: other paths named this way cost no prompt.
fn secret_mentions(items: &[Effect], ctx: &Ctx<'_>) -> Vec<Reason> {
    let known: Vec<&str> = items
        .iter()
        .flat_map(|e| match e {
            Effect::Read { path, .. }
            | Effect::Write { path, .. }
            | Effect::Delete { path, .. } => {
                vec![path.as_str()]
            }
            Effect::Move { from, to, .. } => vec![from.as_str(), to.as_str()],
            _ => vec![],
        })
        .collect();
    let home = ctx.facts.home();
    let mut seen: Vec<String> = Vec::new();
    let mut out = Vec::new();
    for (i, e) in items.iter().enumerate() {
        let Effect::Exec { command, .. } = e else {
            continue;
        };
        for (w, word) in command.words.iter().enumerate().skip(1) {
            let dynamic = command.dynamic_words.contains(&w);
            for candidate in mentioned_paths(word) {
                // A dynamic word is known only when it starts with `$HOME`.
                let candidate = if dynamic {
                    match expand_home(candidate, home) {
                        Some(p) => p,
                        None => continue,
                    }
                } else {
                    candidate.to_string()
                };
                // Relative to the directory an earlier `cd` moved to.
                let Some(candidate) = command.runs_in.place(&candidate) else {
                    continue;
                };
                let candidate = candidate.as_str();
                if candidate.is_empty()
                    || candidate.len() > 4096
                    || candidate.contains(['\n', '\0'])
                    || known.contains(&candidate)
                    || seen.iter().any(|s| s == candidate)
                {
                    continue;
                }
                seen.push(candidate.to_string());
                // Something that does not exist leaks nothing (and a link to a
                // secret made earlier in the text names the secret itself).
                if !ctx.facts.exists(candidate, ctx.cwd)
                    || ctx.facts.resolve(candidate, ctx.cwd).secret.is_none()
                {
                    continue;
                }
                let mut r = judge_path(PathOp::Read, candidate, false, ctx);
                if r.verdict == Verdict::Allow {
                    continue;
                }
                let judged = r.message.strip_prefix("read ").unwrap_or(&r.message);
                r.message = format!("command `{}` names {judged}", command.program);
                r.effect = Some(i);
                out.push(r);
            }
        }
    }
    out
}

/// The paths an argument word may name: the word itself, or for an option
/// the value after `=` (`--file=F`) or a path glued to a short option (`-f/F`).
fn mentioned_paths(word: &str) -> Vec<&str> {
    if !word.starts_with('-') {
        return vec![word];
    }
    let mut out = Vec::new();
    if let Some((_, value)) = word.split_once('=') {
        out.push(value);
    }
    if !word.starts_with("--")
        && let Some(at) = word.find(['/', '~', '$'])
    {
        out.push(&word[at..]);
    }
    out
}

// ----- commands -----------------------------------------------------------------

/// A command's judgement. An ask rule never loosens: where the rest of the
/// policy (the mode, a hazard, a protected path) would deny, the deny stands.
fn judge_exec(cmd: &portcullis_shell::Command, ctx: &mut Ctx<'_>) -> Reason {
    let r = judge_exec_with(cmd, ctx, true);
    if r.code != ReasonCode::RuleAsk {
        return r;
    }
    let rest = judge_exec_with(cmd, ctx, false);
    if rest.verdict == Verdict::Deny {
        rest
    } else {
        r
    }
}

fn judge_exec_with(cmd: &portcullis_shell::Command, ctx: &mut Ctx<'_>, ask_rules: bool) -> Reason {
    let what = format!("command `{}`", cmd.words.join(" "));
    let lists: &[RuleList] = if ask_rules {
        &[RuleList::Deny, RuleList::Ask]
    } else {
        &[RuleList::Deny]
    };
    for &list in lists {
        for rule in ctx.policy.rules.iter().filter(|r| r.list == list) {
            let hit = match &rule.target {
                Target::AnyCommand => true,
                Target::Command(p) => p.matches(cmd, Dynamics::Possibly),
                _ => false,
            };
            if hit {
                return rule_reason(rule, None, &what);
            }
        }
    }
    let name = portcullis_shell::knowledge::lookup_key(&cmd.program)
        .unwrap_or("")
        .to_string();
    let allow_rules: Vec<&Rule> = ctx
        .policy
        .rules
        .iter()
        .filter(|r| r.list == RuleList::Allow)
        .filter(|r| match &r.target {
            Target::AnyCommand => true,
            Target::Command(p) => p.matches(cmd, Dynamics::Never),
            _ => false,
        })
        .collect();
    // `rm *` with a file named `-rf`: a glob at the start of a word can expand
    // to option names. Only programs whose options cannot hurt take that.
    let leading_glob = cmd
        .dynamic_words
        .iter()
        .filter(|i| **i > 0)
        .filter_map(|i| cmd.words.get(*i))
        .find(|w| w.starts_with(['*', '?', '[']));
    if let Some(word) = leading_glob
        && !tables::GLOB_SAFE_PROGRAMS.contains(&name.as_str())
        && ctx.mode != Mode::FullAccess
    {
        let verdict = if ctx.mode == Mode::ReadOnly {
            Verdict::Deny
        } else {
            Verdict::Ask
        };
        return reason(
            verdict,
            ReasonCode::GlobOptions,
            format!("{what}: `{word}` can expand to file names that read as options"),
        );
    }
    if let Some(h) = tables::hazard(cmd) {
        // Any matching allow rule that names every hazardous word literally.
        let literal = allow_rules.iter().find(|r| match &r.target {
            Target::Command(p) => {
                let words: Vec<&str> = p.literal_words().collect();
                h.triggers.iter().all(|t| words.contains(&t.as_str()))
            }
            _ => false,
        });
        if let Some(rule) = literal {
            ctx.allowed_by_rule.push((name, rule));
            return rule_reason(
                rule,
                None,
                &format!("{what} (hazard `{}` named literally)", h.code),
            );
        }
        if ctx.mode == Mode::FullAccess {
            return reason(
                Verdict::Allow,
                ReasonCode::ModeFullAccess,
                format!(
                    "{what}: {} (hazard `{}`), allowed in full-access mode",
                    h.message, h.code
                ),
            );
        }
        let verdict = if ctx.mode == Mode::ReadOnly {
            Verdict::Deny
        } else {
            Verdict::Ask
        };
        return reason(
            verdict,
            ReasonCode::Hazard,
            format!(
                "{what}: {} (hazard `{}`); only a rule naming {} literally allows it",
                h.message,
                h.code,
                if h.triggers.is_empty() {
                    "the command".to_string()
                } else {
                    format!("`{}`", h.triggers.join(" "))
                }
            ),
        );
    }
    // Read-only mode cannot be relaxed by allow rules: only read-only programs run.
    if let Some(rule) = allow_rules.first().filter(|_| ctx.mode != Mode::ReadOnly) {
        ctx.allowed_by_rule.push((name, rule));
        return rule_reason(rule, None, &what);
    }
    if is_read_only(cmd) {
        // Shells and transparent wrappers run what follows: that is judged as
        // commands of its own (and a script they read is opaque).
        let runs_others = portcullis_shell::knowledge::is_shell(&name)
            || tables::TRANSPARENT_RUNNERS.contains(&name.as_str());
        let (code, why) = if runs_others {
            (
                ReasonCode::CommandRunner,
                "runs what it is given, which is judged as commands of its own",
            )
        } else {
            (
                ReasonCode::ReadOnlyProgram,
                "a read-only program; its effects are judged one by one",
            )
        };
        return reason(Verdict::Allow, code, format!("{what}: {why}"));
    }
    let known = !name.is_empty() && is_known_program(&name);
    if ctx.mode == Mode::ApproveForMe
        && known
        && !matches!(name.as_str(), "sudo" | "doas" | "su" | "runuser" | "pkexec")
    {
        return reason(
            Verdict::Allow,
            ReasonCode::ModeApproveForMe,
            format!("{what}: a known program; its effects are judged one by one"),
        );
    }
    by_mode(
        ctx.mode,
        ReasonCode::NoRule,
        format!("{what}: no rule allows it"),
    )
}

fn is_read_only(cmd: &portcullis_shell::Command) -> bool {
    let Some(name) = portcullis_shell::knowledge::lookup_key(&cmd.program) else {
        return false;
    };
    let static_args = cmd.dynamic_words.is_empty();
    // `cargo --version`, `node -v`: a known program asked for its version or help.
    if static_args
        && is_known_program(name)
        && matches!(cmd.words.as_slice(), [_, a] if matches!(a.as_str(), "--version" | "-V" | "-v" | "version" | "--help" | "-h" | "help"))
    {
        return true;
    }
    if name == "git" {
        return git_read_only(cmd);
    }
    READ_ONLY_PROGRAMS.contains(&name)
}

/// A read-only git subcommand, after global options (`git -C dir log`),
/// split as git splits them (`portcullis_shell::knowledge::git_split`).
fn git_read_only(cmd: &portcullis_shell::Command) -> bool {
    if !cmd.dynamic_words.is_empty() {
        return false;
    }
    let args = cmd.words.get(1..).unwrap_or_default();
    let split = portcullis_shell::knowledge::git_split(args);
    // `-c`/`--config-env` carry code effects, judged separately: not plain.
    if split
        .globals
        .iter()
        .any(|g| matches!(g.name.as_str(), "-c" | "--config-env" | "--exec-path"))
    {
        return false;
    }
    let Some(i) = split.subcommand.map(|s| s + 1) else {
        return false;
    };
    let Some((sub, rest)) = cmd.words.get(i..).and_then(<[String]>::split_first) else {
        return false;
    };
    match sub.as_str() {
        "remote" => {
            rest.iter()
                .all(|a| matches!(a.as_str(), "-v" | "--verbose" | "get-url"))
                || rest.first().is_some_and(|a| a == "get-url")
        }
        "branch" | "tag" => rest.iter().all(|a| {
            matches!(
                a.as_str(),
                "-a" | "-r"
                    | "-v"
                    | "-vv"
                    | "--list"
                    | "-l"
                    | "--show-current"
                    | "--all"
                    | "--merged"
                    | "--no-merged"
                    | "--contains"
            )
        }),
        "stash" => rest.first().is_some_and(|a| a == "list" || a == "show"),
        "config" => rest.iter().any(|a| {
            matches!(
                a.as_str(),
                "--get" | "--get-all" | "--list" | "-l" | "--get-regexp" | "get" | "list"
            )
        }),
        s => READ_ONLY_GIT.contains(&s),
    }
}

fn is_known_program(name: &str) -> bool {
    portcullis_shell::knowledge::spec(name).is_some() || portcullis_shell::knowledge::is_shell(name)
}

// ----- paths ---------------------------------------------------------------------

#[derive(Clone, Copy, PartialEq, Eq)]
enum PathOp {
    Read,
    Write,
    Delete,
}

impl PathOp {
    fn verb(self) -> &'static str {
        match self {
            PathOp::Read => "read",
            PathOp::Write => "write",
            PathOp::Delete => "delete",
        }
    }
}

/// Device files that are always harmless to use.
fn harmless_device(path: &str, op: PathOp) -> bool {
    match op {
        PathOp::Read => matches!(
            path,
            "/dev/null" | "/dev/zero" | "/dev/urandom" | "/dev/random" | "/dev/stdin"
        ),
        PathOp::Write => matches!(
            path,
            "/dev/null" | "/dev/stdout" | "/dev/stderr" | "/dev/tty"
        ),
        PathOp::Delete => false,
    }
}

/// A path's judgement. An ask rule never loosens: where the rest of the
/// policy would deny (read-only mode, a protected path), the deny stands.
fn judge_path(op: PathOp, path: &str, dynamic: bool, ctx: &Ctx<'_>) -> Reason {
    let r = judge_path_with(op, path, dynamic, ctx, true);
    if r.code != ReasonCode::RuleAsk {
        return r;
    }
    let rest = judge_path_with(op, path, dynamic, ctx, false);
    if rest.verdict == Verdict::Deny {
        rest
    } else {
        r
    }
}

fn judge_path_with(
    op: PathOp,
    path: &str,
    dynamic: bool,
    ctx: &Ctx<'_>,
    ask_rules: bool,
) -> Reason {
    let what = format!("{} `{path}`", op.verb());
    // `$HOME/x` is known: the policy knows the home directory.
    let expanded = if dynamic {
        expand_home(path, ctx.facts.home())
    } else {
        None
    };
    let (path, dynamic) = match &expanded {
        Some(p) => (p.as_str(), false),
        None => (path, dynamic),
    };
    if !dynamic && harmless_device(path, op) {
        return reason(
            Verdict::Allow,
            ReasonCode::HarmlessDevice,
            format!("{what}: a harmless device"),
        );
    }
    // An unquoted glob is judged by the files it matches.
    if dynamic
        && is_plain_glob(path)
        && let Some(matches) = ctx.facts.expand_glob(path, ctx.cwd)
    {
        // The worst of the matches; no match: bash passes the pattern itself.
        let worst = matches
            .iter()
            .map(|m| judge_path(op, m, false, ctx))
            .max_by_key(|r| r.verdict)
            .unwrap_or_else(|| judge_path(op, path, false, ctx));
        return Reason {
            message: format!("{what} (a glob): {}", worst.message),
            ..worst
        };
    }
    if dynamic {
        if ctx.mode == Mode::FullAccess {
            return reason(
                Verdict::Allow,
                ReasonCode::ModeFullAccess,
                format!("{what}: path known only at run time; allowed in full-access mode"),
            );
        }
        let verdict = if ctx.mode == Mode::ReadOnly && op != PathOp::Read {
            Verdict::Deny
        } else {
            Verdict::Ask
        };
        return reason(
            verdict,
            ReasonCode::DynamicPath,
            format!("{what}: the path is only known at run time"),
        );
    }
    let fact = ctx.facts.resolve(path, ctx.cwd);
    let home = ctx.facts.home();
    let canonical = fact.canonical.as_str();
    let shown = if canonical == path {
        what.clone()
    } else {
        format!("{what} (→ {canonical})")
    };
    // Rules: deny, then ask. A Read deny also blocks writes.
    let lists: &[RuleList] = if ask_rules {
        &[RuleList::Deny, RuleList::Ask]
    } else {
        &[RuleList::Deny]
    };
    for &list in lists {
        for rule in ctx.policy.rules.iter().filter(|r| r.list == list) {
            let hit = match &rule.target {
                Target::Read(p) => p.matches(canonical, ctx.cwd, home),
                Target::Write(p) => op != PathOp::Read && p.matches(canonical, ctx.cwd, home),
                _ => false,
            };
            if hit {
                return rule_reason(rule, None, &shown);
            }
        }
    }
    if fact.blocked {
        return reason(
            Verdict::Deny,
            ReasonCode::BlockedPath,
            format!("{shown}: a blocked path"),
        );
    }
    if op == PathOp::Delete
        && (canonical == "/" || contains(canonical, home) || contains(canonical, ctx.cwd))
    {
        return reason(
            Verdict::Deny,
            ReasonCode::CriticalPath,
            format!(
                "{shown}: deletes the root, the home directory, or the working directory and what holds it"
            ),
        );
    }
    if op != PathOp::Read {
        if fact.blocked_write {
            return reason(
                Verdict::Deny,
                ReasonCode::BlockedWritePath,
                format!("{shown}: blocked for writes"),
            );
        }
        if let Some(why) = &fact.protected {
            return reason(
                Verdict::Deny,
                ReasonCode::ProtectedPath,
                format!("{shown}: protected ({why}); never written by an agent"),
            );
        }
        if let Some(why) = &fact.contains_protected {
            return reason(
                Verdict::Deny,
                ReasonCode::ProtectedPath,
                format!(
                    "{shown}: holds a protected path ({why}); never replaced, moved or removed \
                     by an agent"
                ),
            );
        }
        if fact.hard_linked {
            let v = if ctx.mode == Mode::FullAccess {
                Verdict::Allow
            } else {
                Verdict::Ask
            };
            return reason(
                v,
                ReasonCode::HardLink,
                format!("{shown}: a file with several hard links may be written elsewhere too"),
            );
        }
    }
    // A secret is a secret whatever the operation: a zero-trust tool's path
    // argument is judged as a write, and the tool may well read it.
    if let Some(why) = &fact.secret {
        if ctx.mode == Mode::FullAccess {
            return reason(
                Verdict::Allow,
                ReasonCode::ModeFullAccess,
                format!("{shown}: a secret ({why}); allowed in full-access mode"),
            );
        }
        let verb = if op == PathOp::Read {
            "read"
        } else {
            "read or written"
        };
        return reason(
            Verdict::Ask,
            ReasonCode::SecretPath,
            format!("{shown}: a secret ({why}); not {verb} without a person"),
        );
    }
    if ctx.mode == Mode::ReadOnly && op != PathOp::Read {
        return reason(
            Verdict::Deny,
            ReasonCode::ReadOnlyMode,
            format!("{shown}: no writes in read-only mode"),
        );
    }
    let allow = ctx
        .policy
        .rules
        .iter()
        .filter(|r| r.list == RuleList::Allow)
        .find(|r| match &r.target {
            Target::Read(p) => op == PathOp::Read && p.matches(canonical, ctx.cwd, home),
            Target::Write(p) => p.matches(canonical, ctx.cwd, home),
            Target::Tool(n) => tool_allows_path(n, ctx, op),
            _ => false,
        });
    match (fact.zone, op, allow) {
        (Zone::Workspace | Zone::ReadRoot, PathOp::Read, _) => reason(
            Verdict::Allow,
            ReasonCode::WorkspaceRead,
            format!("{shown}: inside the workspace"),
        ),
        (zone, _, Some(rule)) if zone != Zone::ReadRoot => rule_reason(rule, None, &shown),
        (Zone::ReadRoot, _, _) => reason(
            Verdict::Deny,
            ReasonCode::ReadOnlyRoot,
            format!("{shown}: inside a read-only root"),
        ),
        (Zone::Workspace, _, _) => match ctx.mode {
            Mode::ApproveForMe | Mode::FullAccess => reason(
                Verdict::Allow,
                ReasonCode::WorkspaceEdit,
                format!(
                    "{shown}: a workspace edit, allowed in {} mode",
                    ctx.mode.as_str()
                ),
            ),
            Mode::ReadOnly => reason(
                Verdict::Deny,
                ReasonCode::ReadOnlyMode,
                format!("{shown}: no writes in read-only mode"),
            ),
            Mode::Ask => reason(
                Verdict::Ask,
                ReasonCode::WorkspaceEdit,
                format!("{shown}: no Edit rule allows this write"),
            ),
        },
        (Zone::External, _, _) => match ctx.mode {
            Mode::FullAccess => reason(
                Verdict::Allow,
                ReasonCode::ModeFullAccess,
                format!("{shown}: outside the workspace; allowed in full-access mode"),
            ),
            Mode::ReadOnly if op != PathOp::Read => reason(
                Verdict::Deny,
                ReasonCode::ReadOnlyMode,
                format!("{shown}: no writes in read-only mode"),
            ),
            _ => reason(
                Verdict::Ask,
                ReasonCode::ExternalPath,
                format!("{shown}: outside the workspace (eligible for approval)"),
            ),
        },
    }
}

/// A path whose only run-time part is glob characters (`src/*.rs`, `a?.txt`).
fn is_plain_glob(path: &str) -> bool {
    path.contains(['*', '?'])
        && !path.contains("**")
        && path
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-+@%,:*?~".contains(c))
        && !path.starts_with('~')
}

/// Whether `dir` is `path` or one of its ancestors, by components.
fn contains(dir: &str, path: &str) -> bool {
    let dir = dir.trim_end_matches('/');
    path == dir
        || dir.is_empty()
        || path
            .strip_prefix(dir)
            .is_some_and(|rest| rest.starts_with('/'))
}

/// `$HOME/x`, `${HOME}/x`, `"$HOME"/x`, `"$HOME/x"` with nothing else dynamic.
fn expand_home(raw: &str, home: &str) -> Option<String> {
    let inner = raw
        .strip_prefix('"')
        .and_then(|r| r.strip_suffix('"'))
        .filter(|r| !r.contains('"'));
    let unquoted = inner.unwrap_or(raw);
    let rest = ["\"$HOME\"", "\"${HOME}\"", "${HOME}", "$HOME"]
        .iter()
        .find_map(|p| unquoted.strip_prefix(p))?;
    if !(rest.is_empty() || rest.starts_with('/'))
        || rest.contains(['$', '`', '*', '?', '[', '{', '"', '\'', '\\'])
    {
        return None;
    }
    Some(format!("{home}{rest}"))
}

/// A bare tool rule (`Edit`, `Read`, or the kind's portable name) allows that
/// tool's own path effects; which tools write comes from the tool table.
fn tool_allows_path(rule_tool: &str, ctx: &Ctx<'_>, op: PathOp) -> bool {
    let kind = ctx.policy.table.kind(ctx.tool_name);
    let named =
        rule_tool == ctx.tool_name || kind.is_some_and(|k| tables::rule_name(k) == rule_tool);
    let writes = matches!(kind, Some(tables::ToolKind::Write { .. }));
    named && (op == PathOp::Read || writes)
}

// ----- network, code, tools, opaque ----------------------------------------------------

fn judge_network(program: Option<&str>, host: Option<&str>, ctx: &Ctx<'_>) -> Reason {
    let what = match (program, host) {
        (Some(p), Some(h)) => format!("network access by `{p}` to {h}"),
        (Some(p), None) => format!("network access by `{p}`"),
        (None, Some(h)) => format!("fetch from {h}"),
        (None, None) => "network access".to_string(),
    };
    for list in [RuleList::Deny, RuleList::Ask, RuleList::Allow] {
        for rule in ctx.policy.rules.iter().filter(|r| r.list == list) {
            let hit = match (&rule.target, host) {
                (Target::Domain(d), Some(h)) => d.matches(h),
                (Target::Tool(n), _) => {
                    program.is_none()
                        && (n == ctx.tool_name
                            || ctx
                                .policy
                                .table
                                .kind(ctx.tool_name)
                                .is_some_and(|k| tables::rule_name(k) == n))
                }
                _ => false,
            };
            if hit {
                return rule_reason(rule, None, &what);
            }
        }
    }
    if let Some(p) = program {
        // A command's network use goes with the rule that allowed the command.
        if let Some((_, rule)) = ctx.allowed_by_rule.iter().find(|(n, _)| n == p) {
            return rule_reason(rule, None, &what);
        }
    }
    by_mode(
        ctx.mode,
        ReasonCode::Network,
        format!("{what}: no rule allows it"),
    )
}

fn judge_code(program: &str, source: &str, why: &str, ctx: &Ctx<'_>) -> Reason {
    let what = if source.is_empty() {
        format!("`{program}` runs code ({why})")
    } else {
        format!("`{program}` runs code through `{source}` ({why})")
    };
    if ctx.mode == Mode::FullAccess {
        return reason(
            Verdict::Allow,
            ReasonCode::ModeFullAccess,
            format!("{what}; allowed in full-access mode"),
        );
    }
    let project_task = PROJECT_TASKS
        .iter()
        .any(|(p, subs)| *p == program && (subs.contains(&"*") || subs.contains(&source)));
    for (name, rule) in &ctx.allowed_by_rule {
        if name != program {
            continue;
        }
        // A source of several words (`-m pytest`) is named when each is.
        let literal = match &rule.target {
            Target::Command(p) => source.split(' ').all(|part| {
                p.literal_words()
                    .any(|w| w == part || (!part.is_empty() && w.starts_with(part)))
            }),
            _ => false,
        };
        if source.is_empty() || literal || project_task {
            return rule_reason(rule, None, &what);
        }
    }
    if ctx.mode == Mode::ApproveForMe && project_task {
        return reason(
            Verdict::Allow,
            ReasonCode::ModeApproveForMe,
            format!("{what}: the project's own task"),
        );
    }
    let v = if ctx.mode == Mode::ReadOnly {
        Verdict::Deny
    } else {
        Verdict::Ask
    };
    let needs = if source.is_empty() {
        format!("only a rule for `{program}` allows it")
    } else {
        format!("only a rule naming `{source}` literally allows it")
    };
    reason(v, ReasonCode::Code, format!("{what}: {needs}"))
}

fn judge_tool(
    tool: &str,
    rule_name: &str,
    mcp: Option<&McpToolName>,
    ctx: &Ctx<'_>,
    kind: &str,
) -> Reason {
    let what = format!("{kind} `{tool}`");
    if let Some(rule) = ctx
        .policy
        .rules
        .iter()
        .filter(|r| r.list == RuleList::Allow)
        .find(|r| match &r.target {
            Target::Tool(n) => n == tool || n == rule_name || Some(n.as_str()) == ctx.as_sent,
            Target::Mcp { .. } => tool_rule_matches(r, tool, rule_name, mcp),
            _ => false,
        })
    {
        return rule_reason(rule, None, &what);
    }
    by_mode(
        ctx.mode,
        ReasonCode::NoRule,
        format!("{what}: no rule allows it"),
    )
}

fn judge_opaque(why: &str, text: &str, ctx: &Ctx<'_>, _all: &[Effect]) -> Reason {
    let what = format!("the analysis cannot see through this ({why}: {text})");
    if effects::is_code_from_file(why) {
        // `./build.sh` or `bash scripts/test.sh` allowed by a rule naming the file.
        let file = text.split_whitespace().last().unwrap_or("");
        for (_, rule) in &ctx.allowed_by_rule {
            if let Target::Command(p) = &rule.target
                && p.literal_words().any(|w| w == file)
            {
                return rule_reason(rule, None, &what);
            }
        }
    }
    by_mode(ctx.mode, ReasonCode::Opaque, what)
}

/// Judges a call while an Agent Skill's `allowed-tools` is active.
///
/// Grant (Claude Code): the listed tools and command patterns are allowed in
/// addition to the policy's rules (never the bare shell for `Bash(git add *)`).
/// Restrict (DeerFlow): a tool the skill does not list is unavailable (deny);
/// a shell listed only with patterns runs only commands matching one of them.
/// Deny rules, hazards, protected paths and opaque parts apply either way.
pub fn decide_with_skill(
    call: &ToolCall,
    policy: &Policy,
    facts: &dyn PathFacts,
    skill: &crate::skills::SkillTools,
) -> Decision {
    use crate::skills::{SkillMode, ToolAccess};
    let access = skill.tool_access(&call.tool.name);
    let deny = |mut d: Decision, message: String| {
        let r = Reason {
            code: ReasonCode::SkillRestricted,
            message,
            rule: None,
            effect: None,
            verdict: Verdict::Deny,
        };
        d.judgements.push(r.clone());
        d.reasons = vec![r];
        d.decision = Verdict::Deny;
        d.confine = None;
        d
    };
    match (skill.mode(), access) {
        (SkillMode::Restrict, ToolAccess::Unavailable) => {
            let d = decide(call, policy, facts);
            deny(d, skill.unavailable_reason(&call.tool.name))
        }
        (SkillMode::Restrict, ToolAccess::AvailableIfMatching) => {
            let patterns: Vec<crate::rules::CommandPattern> = skill
                .command_patterns()
                .filter(|(t, _)| *t == call.tool.name)
                .filter_map(|(_, p)| crate::rules::CommandPattern::parse(p).ok())
                .collect();
            let d = decide(call, policy, facts);
            let outside = d.effects.iter().find_map(|e| match e {
                Effect::Exec { command, .. }
                    if !patterns.iter().any(|p| p.matches(command, Dynamics::Never)) =>
                {
                    Some(format!(
                        "`{}` matches none of the active skill's command patterns",
                        command.words.join(" ")
                    ))
                }
                Effect::Exec { .. } => None,
                // Only commands can be matched against the skill's patterns.
                Effect::Opaque { text, .. } => Some(format!(
                    "the active skill allows only listed commands; this cannot be analysed: {text}"
                )),
                _ => None,
            });
            match outside {
                Some(message) => deny(d, message),
                None => d,
            }
        }
        (SkillMode::Grant, ToolAccess::Granted | ToolAccess::GrantedIfMatching) => {
            let mut p = policy.clone();
            let source = "active skill allowed-tools";
            let mut add = |text: String| {
                if let Ok(rule) = Rule::parse(&text, RuleList::Allow, source) {
                    p.rules.push(rule);
                }
            };
            if access == ToolAccess::Granted {
                add(call.tool.name.clone());
                if matches!(
                    p.table.kind(&call.tool.name),
                    Some(crate::tables::ToolKind::Shell { .. })
                ) {
                    add("Bash".into());
                }
            }
            for (tool, pattern) in skill
                .command_patterns()
                .filter(|(t, _)| *t == call.tool.name)
            {
                let _ = tool;
                add(format!("Bash({pattern})"));
            }
            for (tool, spec) in skill.scoped().filter(|(t, _)| *t == call.tool.name) {
                add(format!("{tool}({spec})"));
            }
            decide(call, &p, facts)
        }
        _ => decide(call, policy, facts),
    }
}
