//! The one authority: every front door (hook, MCP bridge, HTTP, CLI, library)
//! calls [`Engine::decide`], and nothing else decides.
//!
//! A decision is: resolve who is asking ([`resolve_session`], the only session
//! resolver), judge the call with the policy, let the session's grants cover
//! what the policy would ask about, record an audit row, and raise a permission
//! request a person can approve. What it is not: a front door (it speaks no
//! agent's wire format) or a policy (the rules live in `portcullis-policy`).

pub mod actions;
mod bridge_link;
mod grants;
mod hold;
pub mod pins;
pub mod redact;
mod session;

use portcullis_policy::{
    Decision, PathFacts, Policy, Reason, ToolCall, Verdict, decide, decide_with_skill,
};
use portcullis_store::{
    AuditEvent, AuditKind, AuditVerdict, NewSession, PinCheck, Request, Session, Store, StoreError,
};
use serde::Serialize;

pub use bridge_link::{AgentLink, HandOff, args_hash};
pub use grants::RuleRefused;
pub use hold::{HOLD_POLL, Hold, HoldStatus, poll_until_resolved};
pub use session::{SessionSources, resolve_session};

/// What can stop a decision from being made at all.
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    /// Two sources name different sessions: never a silent pick.
    #[error("session conflict: {}", describe_sources(.sources))]
    SessionConflict {
        sources: Vec<(&'static str, String)>,
    },
    #[error(transparent)]
    Store(#[from] StoreError),
    /// A store-less engine ([`Engine::pure`]) was asked for something only a
    /// store can answer: a call in a session, a pin, a hold.
    #[error("{0}: this engine keeps no state (no store was opened)")]
    NoStore(&'static str),
}

fn describe_sources(sources: &[(&'static str, String)]) -> String {
    sources
        .iter()
        .map(|(s, v)| format!("{s}={v}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Who is asking, as the front door saw it.
#[derive(Clone, Debug, Default)]
pub struct CallContext {
    pub sources: SessionSources,
    /// The session token the caller presented (HTTP callers must).
    pub token: Option<String>,
    /// Whether the caller must prove the session with its token (HTTP).
    pub require_token: bool,
    /// Judge with the session's grants but spend none of them: no `once`
    /// grant is consumed (a front door whose caller did not prove the
    /// session, like `check --session` without `--token`). The audit row
    /// says so.
    pub dry_run: bool,
    /// The front door can run the call confined (`portcullis run`) when the
    /// decision says so; without it, a call allowed only because it would run
    /// confined is decided as if confinement did not exist.
    pub can_confine: bool,
    /// The agent puts an ask to its person in its own prompt (Claude Code's
    /// permission dialog): one owner per ask, so no request is raised for the
    /// approval UI as well. The audit row says where it was asked.
    pub asked_in_agent: bool,
    /// The MCP bridge on stdio: the agent's own session is found, in the
    /// same trip as the decision, through the link its hook recorded for
    /// this very call.
    pub agent_link: Option<AgentLink>,
    /// The call is judged for an enrolled device (a team server's
    /// `/v1/decide` with its credential). Device grants stay on their device
    /// (DESIGN: never exported or synced): none in this store applies to the
    /// call — one would reach every other machine the server judges for —
    /// only the device's own ([`DeviceCall::grants`]).
    pub remote_device: Option<DeviceCall>,
}

/// A call judged for an enrolled device.
#[derive(Clone, Debug, Default)]
pub struct DeviceCall {
    /// The device's name.
    pub name: String,
    /// The device-wide approvals it keeps in its own store, as it reported
    /// them with the call.
    pub held: Vec<HeldApproval>,
}

/// A device-wide approval a device keeps (`device_grants` in its call), or
/// one delivered to it (`deliveries` in the answer, with its approver).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HeldApproval {
    /// The request on the team server it answers.
    pub request: i64,
    /// What it allows reading.
    pub target: portcullis_store::GrantTarget,
    /// Who approved it (in a delivery).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approver: Option<String>,
}

impl HeldApproval {
    /// Why a reported approval cannot be one.
    pub fn check(&self) -> Result<(), String> {
        if self.request <= 0 {
            return Err(format!(
                "request #{} is not a request's number",
                self.request
            ));
        }
        self.target.check()
    }

    /// As the engine applies it to the device's call: a device grant whose
    /// id is the request's, negated (no grant row exists here).
    fn grant(&self, device: &str) -> portcullis_store::Grant {
        portcullis_store::Grant {
            id: -self.request,
            session: None,
            scope: portcullis_store::GrantScope::Device,
            op: portcullis_store::Op::Read,
            target: self.target.clone(),
            expires_at: None,
            approver: format!("device {device}"),
            request: Some(self.request),
            created_at: 0,
            consumed_at: None,
            revoked_at: None,
        }
    }
}

/// Where a person saves a rule ("always"): a portcullis configuration file,
/// and whether portcullis loads it for the call's directory (a project's file
/// only when the project is trusted).
#[derive(Clone, Debug)]
pub struct SaveTo {
    pub path: std::path::PathBuf,
    pub loaded: bool,
}

impl SaveTo {
    /// Where "always" saves a rule for a call made in `cwd`: `user` (this
    /// user's configuration) or `project` (the project's `.portcullis.toml`,
    /// loaded only when `policy` trusts the project).
    pub fn for_call(
        place: &str,
        cwd: &str,
        policy: &Policy,
        facts: &portcullis_paths::FsPaths,
        env: &portcullis_paths::Environment,
    ) -> Result<SaveTo, String> {
        match place {
            "user" => Ok(SaveTo {
                path: std::path::Path::new(&env.config_dir).join("config.toml"),
                loaded: true,
            }),
            "project" => {
                let root = facts
                    .project_root(cwd)
                    .ok_or_else(|| format!("{cwd} is in no project (no repository above it)"))?;
                let root = std::path::Path::new(&root);
                Ok(SaveTo {
                    path: root.join(".portcullis.toml"),
                    loaded: portcullis_policy::trusts_project(
                        &policy.trusted_projects,
                        &env.home,
                        root,
                    ),
                })
            }
            other => Err(format!("save `{other}`: expected user or project")),
        }
    }
}

/// A person's rule for a request: the rule, where to save it ("always"),
/// who chose it and when.
#[derive(Clone, Copy, Debug)]
pub struct RuleChoice<'a> {
    pub rule: &'a str,
    pub save: Option<&'a SaveTo>,
    pub approver: &'a str,
    pub now: i64,
}

/// A request resolved with a rule: the request and its grant, or why the
/// rule cannot stand.
pub type Resolved =
    Result<(portcullis_store::Request, Option<portcullis_store::Grant>), RuleRefused>;

/// The state of the session a call resolved to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum SessionStatus {
    /// No session named: the policy alone decides.
    None,
    /// A registered, active session: its grants apply.
    Active,
    /// Named but not registered: no grants.
    Unknown,
    /// Expired or revoked: no grants.
    Inactive,
    /// The caller had to prove the session and did not: no grants.
    Unauthenticated,
}

/// The engine's answer.
#[derive(Clone, Debug, Serialize)]
pub struct Outcome {
    #[serde(flatten)]
    pub decision: Decision,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session: Option<String>,
    pub session_status: SessionStatus,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub grants_used: Vec<i64>,
    /// The permission request raised for a person, when the refusal is eligible.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub request: Option<Request>,
    /// The audit row of the decision; `None` only from a store-less engine
    /// (a pure query: nothing was recorded).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub audit_id: Option<i64>,
    /// An enrolled device's new device-wide approvals, for it to keep.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub deliveries: Vec<HeldApproval>,
}

/// The one authority. Its fields are private: a front door asks it, it
/// never reaches past it into the policy or the store.
pub struct Engine<F: PathFacts> {
    /// `None`: a store-less engine for pure queries ([`Engine::pure`]).
    store: Option<Store>,
    policy: Policy,
    facts: F,
    skill: Option<portcullis_policy::skills::SkillTools>,
}

impl<F: PathFacts> Engine<F> {
    /// The engine for decisions made for an agent: judged with the session's
    /// grants, audited, and refusals raise requests.
    pub fn new(store: Store, policy: Policy, facts: F) -> Self {
        Engine {
            store: Some(store),
            policy,
            facts,
            skill: None,
        }
    }

    /// A store-less engine for pure queries (`portcullis check`/`explain`
    /// without a session): the policy's answer, nothing recorded. A call
    /// that names a session is an error ([`EngineError::NoStore`]), never a
    /// silent decision without that session's state.
    pub fn pure(policy: Policy, facts: F) -> Self {
        Engine {
            store: None,
            policy,
            facts,
            skill: None,
        }
    }

    /// With an Agent Skill's `allowed-tools` active.
    pub fn with_skill(mut self, skill: Option<portcullis_policy::skills::SkillTools>) -> Self {
        self.skill = skill;
        self
    }

    /// The policy calls are judged under (read only).
    pub fn policy(&self) -> &Policy {
        &self.policy
    }

    /// The engine's own view of the file system.
    pub fn facts(&self) -> &F {
        &self.facts
    }

    /// The store, to read. Writes go through the engine's own methods and
    /// [`actions`]; `crates/engine/tests/it/architecture.rs` refuses any other
    /// crate's source that writes it.
    pub fn store(&self) -> Option<&Store> {
        self.store.as_ref()
    }

    fn stored(&self, what: &'static str) -> Result<&Store, EngineError> {
        self.store.as_ref().ok_or(EngineError::NoStore(what))
    }

    /// Runs `f` under one write transaction (group commit: a server's batch
    /// of decisions). Without a store, `f` simply runs.
    pub fn batch<R>(&self, f: impl FnOnce(&Self) -> R) -> Result<R, EngineError> {
        match &self.store {
            Some(store) => Ok(store.batch(|_| f(self))?),
            None => Ok(f(self)),
        }
    }

    /// Registers a session on its first call (an agent's hook, a bridge's
    /// `--session`); an existing session is left as it is.
    pub fn enter_session(&self, s: &NewSession) -> Result<Session, EngineError> {
        Ok(self.stored("registering a session")?.ensure_session(s)?)
    }

    /// Checks an MCP tool's definition (with the server's instructions)
    /// against its pins and audits what was seen: first use, or withheld.
    /// An error is never an approval: the tool is not offered.
    #[allow(clippy::too_many_arguments)]
    pub fn check_tool_definition(
        &self,
        server: &str,
        tool: &str,
        definition: &serde_json::Value,
        instructions: Option<&str>,
        trust_first_use: bool,
        session: Option<&str>,
        now: i64,
    ) -> Result<PinCheck, EngineError> {
        let store = self.stored("checking a tool definition")?;
        let (pinned, hash) = pins::pin_of(definition, instructions);
        let check = store.check_pin(server, tool, &hash, &pinned, trust_first_use, now)?;
        let seen = match &check {
            PinCheck::FirstUse => Some((
                AuditKind::ToolPinned,
                serde_json::json!({"hash": hash, "by": "first-use"}),
            )),
            PinCheck::Withheld { previous, .. } => Some((
                AuditKind::ToolWithheld,
                serde_json::json!({"hash": hash, "approved": previous.as_ref().map(|p| &p.hash)}),
            )),
            PinCheck::Approved | PinCheck::Rejected => None,
        };
        if let Some((kind, detail)) = seen {
            store.append_audit(
                &AuditEvent {
                    kind,
                    session: session.map(str::to_string),
                    tool: Some(portcullis_policy::McpToolName::new(server, tool).to_string()),
                    verdict: None,
                    detail,
                },
                now,
            )?;
        }
        Ok(check)
    }

    /// Whether a definition of `server`'s `tool` waits for a person.
    pub fn tool_withheld(&self, server: &str, tool: &str) -> Result<bool, EngineError> {
        let store = self.stored("reading tool definitions")?;
        Ok(store
            .pins(true)?
            .iter()
            .any(|p| p.server == server && p.tool == tool))
    }

    /// The agent's own prompt accepted a pending request: approve it once,
    /// as `by`. A request resolved meanwhile (in the UI) is fine: the caller
    /// judges again either way.
    pub fn approve_once(&self, request: i64, by: &str, now: i64) -> Result<(), EngineError> {
        let store = self.stored("approving a request")?;
        match actions::resolve_request(store, request, portcullis_store::Resolution::Once, by, now)
        {
            Ok(_) | Err(StoreError::NotPending { .. }) => Ok(()),
            Err(e) => Err(e.into()),
        }
    }

    /// The standing path grants of the session `ctx` names — session- and
    /// device-scoped grants on paths, of it and its ancestors — for a confined
    /// run's profile (`portcullis run --session`): what the session may read
    /// or write beyond the confinement's defaults. A `once` grant is for one
    /// call and never part of a profile. A session that is not active, or
    /// not proven when `ctx` requires its token, has none.
    pub fn standing_path_grants(
        &self,
        ctx: &CallContext,
        now: i64,
    ) -> Result<(SessionStatus, Vec<portcullis_store::Grant>), EngineError> {
        let session_id = resolve_session(&ctx.sources)?;
        let (status, chain) = self.session_chain(session_id.as_deref(), ctx, now)?;
        if status != SessionStatus::Active {
            return Ok((status, Vec::new()));
        }
        let store = self.stored("listing a session's grants")?;
        let grants = store
            .active_grants(&chain.iter().map(String::as_str).collect::<Vec<_>>(), now)?
            .into_iter()
            .filter(|g| {
                g.scope != portcullis_store::GrantScope::Once
                    && !(ctx.remote_device.is_some()
                        && g.scope == portcullis_store::GrantScope::Device)
                    && matches!(g.target, portcullis_store::GrantTarget::Path { .. })
            })
            .collect();
        Ok((status, grants))
    }

    /// A person resolves a pending request with a rule instead of the call
    /// itself (`Bash(npm install *)`, `Read(~/Downloads/**)`): the call is
    /// judged again under `policy` and `facts` (the configuration of its
    /// directory), the rule must cover every effect refused
    /// ([`RuleRefused`] names what it misses), and the grant made is the
    /// rule's, in `how`'s scope. A secret's read or a hazard is never
    /// granted by a pattern: approve the call itself. With `choice.save`
    /// ("always") the rule is first appended to that configuration file (an
    /// `[[approved]]` table, the rest of the file untouched); a project's file
    /// that would not be loaded (the project is not in `trusted_projects`) is
    /// refused, never written to no effect.
    pub fn resolve_with_rule(
        &self,
        id: i64,
        how: portcullis_store::Resolution,
        choice: &RuleChoice<'_>,
        policy: &Policy,
        facts: &dyn PathFacts,
    ) -> Result<Resolved, EngineError> {
        let RuleChoice {
            rule,
            save,
            approver,
            now,
        } = *choice;
        let store = self.stored("resolving a request with a rule")?;
        let Some(request) = store.request(id)? else {
            return Err(StoreError::UnknownRequest { id }.into());
        };
        if request.status != portcullis_store::RequestStatus::Pending {
            return Err(StoreError::NotPending {
                id,
                status: request.status,
            }
            .into());
        }
        if how == portcullis_store::Resolution::Deny {
            return Ok(Err(RuleRefused(
                "a rule goes with an approval, not a deny".into(),
            )));
        }
        let portcullis_store::GrantTarget::Call {
            input,
            origin,
            server,
            table,
            cwd,
            effects,
            manifest,
            ..
        } = &request.target
        else {
            return Ok(Err(RuleRefused(format!(
                "request #{id} does not name a whole call: approve it as it is"
            ))));
        };
        if effects.iter().any(|e| {
            portcullis_policy::Risk::ALL
                .iter()
                .any(|r| r.as_str() == e.risk && r.needs_confirmation())
        }) {
            return Ok(Err(RuleRefused(format!(
                "request #{id} reads a secret or runs a hazard: approve the call itself, not a pattern"
            ))));
        }
        let call = ToolCall {
            tool: portcullis_policy::ToolRef {
                name: request.tool.clone(),
                origin: origin.parse().unwrap_or_default(),
                server: server.clone(),
                // Judged again as the front door judged it (a manifest that
                // no longer reads is dropped: the call is then judged with
                // zero trust, which only tightens).
                manifest: manifest
                    .clone()
                    .and_then(|m| serde_json::from_value(m).ok()),
            },
            input: input.clone(),
            cwd: cwd.clone(),
        };
        let mut policy = policy.clone();
        if let Some(t) = portcullis_policy::tables::by_agent(table) {
            policy.table = t;
        }
        let decision = self.policy_decision(&policy, facts, &call, &CallContext::default());
        let (op, target) = match grants::rule_grant(rule, &decision, &call, &policy.table, facts) {
            Ok(g) => g,
            Err(refused) => return Ok(Err(refused)),
        };
        if let Some(save) = save {
            if !save.loaded {
                return Ok(Err(RuleRefused(format!(
                    "{} is not loaded (the project is not in `trusted_projects` of your \
                     configuration): saving the rule there would change nothing",
                    save.path.display()
                ))));
            }
            if let Err(e) = actions::append_approved(&save.path, rule.trim(), approver, id) {
                return Ok(Err(RuleRefused(format!(
                    "saving the rule to {}: {e}",
                    save.path.display()
                ))));
            }
            actions::record_saved_rule(store, &request, rule.trim(), &save.path, approver, now)?;
        }
        let resolved =
            store.resolve_request_as(id, how, None, Some((op, target)), approver, now)?;
        actions::record_resolution(
            store,
            &resolved.0,
            resolved.1.as_ref(),
            how,
            None,
            approver,
            now,
        )?;
        Ok(Ok(resolved))
    }

    /// Decides a call. `now` is unix seconds (the caller's clock, so tests control time).
    pub fn decide(
        &self,
        call: &ToolCall,
        ctx: &CallContext,
        now: i64,
    ) -> Result<Outcome, EngineError> {
        self.decide_under(&self.policy, &self.facts, call, ctx, now)
    }

    /// Enters `sessions` (registering those that are new, parents first),
    /// then decides the call under `policy` and `facts`: what a hook call
    /// does, in one trip to whoever holds the engine.
    pub fn enter_and_decide_under(
        &self,
        sessions: &[portcullis_store::NewSession],
        policy: &Policy,
        facts: &dyn PathFacts,
        call: &ToolCall,
        ctx: &CallContext,
        now: i64,
    ) -> Result<Outcome, EngineError> {
        for s in sessions {
            self.enter_session(s)?;
        }
        self.decide_under(policy, facts, call, ctx, now)
    }

    /// Decides a call under `policy` and `facts` instead of the engine's own:
    /// a server serves calls from many projects, each with its own
    /// configuration and workspace.
    pub fn decide_under(
        &self,
        policy: &Policy,
        facts: &dyn PathFacts,
        call: &ToolCall,
        ctx: &CallContext,
        now: i64,
    ) -> Result<Outcome, EngineError> {
        let session_id = match &ctx.agent_link {
            Some(link) => {
                let mut sources = ctx.sources.clone();
                sources.agent = self.agent_session(call, link, now)?;
                resolve_session(&sources)?
            }
            None => resolve_session(&ctx.sources)?,
        };
        let Some(store) = &self.store else {
            if session_id.is_some() {
                return Err(EngineError::NoStore("deciding a call in a session"));
            }
            let mut decision = self.policy_decision(policy, facts, call, ctx);
            decision.reveal_allowed_paths(&call.cwd, facts);
            return Ok(Outcome {
                decision,
                session: None,
                session_status: SessionStatus::None,
                grants_used: Vec::new(),
                request: None,
                audit_id: None,
                deliveries: Vec::new(),
            });
        };
        // An enrolled device's device-wide approvals: those it keeps, and
        // those made for it since, delivered with this answer until it keeps
        // them (those it now reports keeping are recorded delivered).
        let (device_grants, deliveries) = match &ctx.remote_device {
            None => (Vec::new(), Vec::new()),
            Some(device) => {
                let held: Vec<i64> = device.held.iter().map(|h| h.request).collect();
                let deliveries: Vec<HeldApproval> =
                    actions::deliveries_for(store, &device.name, &held, now)?
                        .into_iter()
                        .map(|r| HeldApproval {
                            request: r.id,
                            target: r.target,
                            approver: r.resolved_by,
                        })
                        .collect();
                let grants = device
                    .held
                    .iter()
                    .chain(&deliveries)
                    .map(|h| h.grant(&device.name))
                    .collect();
                (grants, deliveries)
            }
        };
        let (status, chain) = self.session_chain(session_id.as_deref(), ctx, now)?;
        let mut decision = self.policy_decision(policy, facts, call, ctx);
        let mut grants_used = Vec::new();
        if decision.decision != Verdict::Allow && status == SessionStatus::Active {
            let mut active =
                store.active_grants(&chain.iter().map(String::as_str).collect::<Vec<_>>(), now)?;
            if ctx.remote_device.is_some() {
                active.retain(|g| g.scope != portcullis_store::GrantScope::Device);
                active.extend(device_grants);
            }
            let covered = if ctx.dry_run {
                grants::covered_without_consuming(&decision, &active, call, &policy.table, facts)
            } else {
                grants::cover(&decision, &active, call, &policy.table, facts, store, now)?
            };
            if let Some(used) = covered {
                grants_used = used;
                let reasons: Vec<Reason> = grants_used
                    .iter()
                    .map(|id| Reason {
                        code: portcullis_policy::ReasonCode::Grant,
                        // A device's own approval has no grant row here.
                        message: if *id < 0 {
                            format!(
                                "allowed by this device's device-wide approval of request #{}",
                                id.unsigned_abs()
                            )
                        } else {
                            format!("allowed by grant #{id}")
                        },
                        rule: None,
                        effect: None,
                        verdict: Verdict::Allow,
                    })
                    .collect();
                decision.decision = Verdict::Allow;
                decision.reasons = reasons;
                if ctx.can_confine {
                    decision.confine_granted(call, policy);
                }
            }
        }
        // A person who denied this very call, and let the denial stand, is
        // not asked again: the agent reads their words.
        let mut denied_by_person = false;
        if decision.decision != Verdict::Allow && status == SessionStatus::Active {
            let chain: Vec<&str> = chain.iter().map(String::as_str).collect();
            if let Some(denial) = grants::standing_denial(store, &chain, call, &policy.table, now)?
            {
                denied_by_person = true;
                decision.decision = Verdict::Deny;
                decision.reasons = vec![Reason {
                    code: portcullis_policy::ReasonCode::PersonDenied,
                    message: denial,
                    rule: None,
                    effect: None,
                    verdict: Verdict::Deny,
                }];
            }
        }
        decision.reveal_allowed_paths(&call.cwd, facts);
        // An ask the agent puts to its person itself is theirs alone (a deny
        // still raises a request: the agent's prompt cannot lift it).
        let agent_owns_it = ctx.asked_in_agent && decision.decision == Verdict::Ask;
        let request = if decision.decision != Verdict::Allow
            && status == SessionStatus::Active
            && !denied_by_person
            && !agent_owns_it
        {
            match session_id.as_deref() {
                Some(own) => {
                    match grants::request_for(&decision, call, &policy.table, own, facts, store)? {
                        Some(mut r) => {
                            r.device = ctx.remote_device.as_ref().map(|d| d.name.clone());
                            // An "allow once" waits as long as the
                            // configuration where the call was judged says.
                            r.once_ttl_secs = i64::try_from(policy.once_ttl_secs).ok();
                            Some(store.raise_request(&r, now)?)
                        }
                        None => None,
                    }
                }
                None => None,
            }
        } else {
            None
        };
        let mut event = audit_event(
            &decision,
            call,
            session_id.as_deref(),
            &grants_used,
            request.as_ref(),
        );
        if let Some(detail) = event.detail.as_object_mut() {
            // What ran, as a person can read it: a shell command's text with
            // secret-looking values masked, and the paths as they resolved.
            if let Some(command) = shell_command(call, &policy.table) {
                let secret = |name: &str| policy.secret_env_shape(name).is_some();
                detail.insert(
                    "command".into(),
                    serde_json::Value::String(redact::command(command, &secret)),
                );
            }
            let canonical = canonical_paths(&decision, call, facts);
            if !canonical.is_empty() {
                detail.insert("canonical_paths".into(), serde_json::json!(canonical));
            }
            // Whether the caller proved the session (its token), and whether
            // the decision changed nothing.
            if session_id.is_some() {
                detail.insert(
                    "proven".into(),
                    serde_json::Value::Bool(ctx.require_token && status == SessionStatus::Active),
                );
            }
            if ctx.dry_run {
                detail.insert("dry_run".into(), serde_json::Value::Bool(true));
            }
            if agent_owns_it {
                detail.insert("asked_in".into(), serde_json::Value::String("agent".into()));
            }
        }
        let audit = store.append_audit(&event, now)?;
        Ok(Outcome {
            decision,
            session: session_id,
            session_status: status,
            grants_used,
            request,
            audit_id: Some(audit.id),
            deliveries,
        })
    }

    /// The policy's decision alone (the skill's tools included), as the
    /// front door can carry it out: one that cannot confine gets the
    /// decision as if confinement did not exist.
    fn policy_decision(
        &self,
        policy: &Policy,
        facts: &dyn PathFacts,
        call: &ToolCall,
        ctx: &CallContext,
    ) -> Decision {
        // A machine governed by a team server (`[server] url`) has that
        // server decide its calls, whichever front door they reach here by
        // (the daemon's HTTP API, MCP over HTTP, `check`): none is allowed
        // here. A device's call on the team server itself is that server's.
        if let Some(server) = &policy.team_server
            && ctx.remote_device.is_none()
        {
            return Decision::refused(
                portcullis_policy::ReasonCode::GovernedElsewhere,
                format!(
                    "this machine is governed by the team server {server}: it decides this call, \
                     not this portcullis"
                ),
            );
        }
        let decision = match &self.skill {
            Some(skill) => decide_with_skill(call, policy, facts, skill),
            None => decide(call, policy, facts),
        };
        if ctx.can_confine {
            decision
        } else {
            decision.without_confinement()
        }
    }

    /// The session's status and the sessions whose grants it may use: itself
    /// and its ancestors (a child never sees a sibling's grants).
    fn session_chain(
        &self,
        id: Option<&str>,
        ctx: &CallContext,
        now: i64,
    ) -> Result<(SessionStatus, Vec<String>), EngineError> {
        let Some(id) = id else {
            return Ok((SessionStatus::None, Vec::new()));
        };
        let store = self.stored("resolving a session")?;
        // The session and its ancestors in one read.
        let mut lineage = store.lineage(id)?.into_iter();
        let Some(session) = lineage.next() else {
            return Ok((SessionStatus::Unknown, Vec::new()));
        };
        if !session.is_active(now) {
            return Ok((SessionStatus::Inactive, Vec::new()));
        }
        if ctx.require_token {
            let ok = match &ctx.token {
                Some(t) => store.verify_token(id, t)?,
                None => false,
            };
            if !ok {
                return Ok((SessionStatus::Unauthenticated, Vec::new()));
            }
        }
        let mut chain = vec![session.id.clone()];
        for a in lineage {
            if !a.is_active(now) {
                break;
            }
            chain.push(a.id);
        }
        Ok((SessionStatus::Active, chain))
    }
}

/// The audit row of a decision: reason codes, effect kinds and canonical
/// paths, program names. Never file contents, command arguments or tokens.
/// A shell tool's command text, if the call is one.
fn shell_command<'c>(
    call: &'c ToolCall,
    table: &portcullis_policy::tables::ToolTable,
) -> Option<&'c str> {
    match table.kind(&call.tool.name)? {
        portcullis_policy::tables::ToolKind::Shell { command, .. } => {
            call.input.get(command)?.as_str()
        }
        _ => None,
    }
}

/// The paths a decision's effects name, as they resolve (symlinks followed),
/// each once: what the audit row says was touched. Paths known only at run
/// time are left out (they are in `effects` as written).
fn canonical_paths(d: &Decision, call: &ToolCall, facts: &dyn PathFacts) -> Vec<String> {
    use portcullis_policy::Effect;
    let mut out: Vec<String> = Vec::new();
    for e in &d.effects {
        let paths: Vec<&str> = match e {
            Effect::Read {
                path,
                dynamic: false,
            }
            | Effect::Write {
                path,
                dynamic: false,
            }
            | Effect::Delete {
                path,
                dynamic: false,
            } => vec![path.as_str()],
            Effect::Move {
                from,
                to,
                dynamic: false,
            } => vec![from.as_str(), to.as_str()],
            _ => Vec::new(),
        };
        for p in paths {
            let c = facts.resolve(p, &call.cwd).canonical;
            if !out.contains(&c) {
                out.push(c);
            }
        }
    }
    out
}

fn audit_event(
    d: &Decision,
    call: &ToolCall,
    session: Option<&str>,
    grants: &[i64],
    request: Option<&Request>,
) -> AuditEvent {
    use portcullis_policy::Effect;
    let effects: Vec<serde_json::Value> = d
        .effects
        .iter()
        .map(|e| match e {
            Effect::Exec { program, .. } => serde_json::json!({"kind": "exec", "program": program}),
            Effect::Read { path, .. } => serde_json::json!({"kind": "read", "path": path}),
            Effect::Write { path, .. } => serde_json::json!({"kind": "write", "path": path}),
            Effect::Delete { path, .. } => serde_json::json!({"kind": "delete", "path": path}),
            Effect::Move { from, to, .. } => {
                serde_json::json!({"kind": "move", "from": from, "to": to})
            }
            Effect::Network { host, .. } => serde_json::json!({"kind": "network", "host": host}),
            Effect::Code { program, .. } => serde_json::json!({"kind": "code", "program": program}),
            Effect::McpCall(name) => {
                serde_json::json!({"kind": "mcp", "server": name.server(), "tool": name.tool()})
            }
            Effect::ToolUse { tool } => serde_json::json!({"kind": "tool", "tool": tool}),
            Effect::Opaque { reason, .. } => {
                serde_json::json!({"kind": "opaque", "reason": reason})
            }
        })
        .collect();
    let reasons: Vec<&str> = d.reasons.iter().map(|r| r.code.as_str()).collect();
    let rules: Vec<&str> = d.reasons.iter().filter_map(|r| r.rule.as_deref()).collect();
    AuditEvent {
        // One row per decision; the grants it used are named in it.
        kind: if grants.is_empty() {
            AuditKind::Decision
        } else {
            AuditKind::GrantUsed
        },
        session: session.map(str::to_string),
        tool: Some(call.tool.name.clone()),
        verdict: Some(audit_verdict(d.decision)),
        detail: serde_json::json!({
            "origin": call.tool.origin.as_str(),
            "reasons": reasons,
            "rules": rules,
            "effects": effects,
            "grants": grants,
            "request": request.map(|r| r.id),
        }),
    }
}

/// The policy's verdict as the audit log writes it (the store does not know
/// the policy crate): an exhaustive match, so a new verdict must decide.
fn audit_verdict(v: Verdict) -> AuditVerdict {
    match v {
        Verdict::Allow => AuditVerdict::Allow,
        Verdict::Ask => AuditVerdict::Ask,
        Verdict::Deny => AuditVerdict::Deny,
    }
}

#[cfg(test)]
mod audit_verdict_tests {
    use super::*;

    #[test]
    fn verdicts_keep_their_words() {
        for v in [Verdict::Allow, Verdict::Ask, Verdict::Deny] {
            assert_eq!(audit_verdict(v).as_str(), v.as_str());
        }
    }
}
