//! The JSON API under `/v1`. Handlers translate HTTP to engine and store
//! calls and back; none of them decides anything.

use std::convert::Infallible;
use std::sync::Arc;
use std::sync::atomic::Ordering::SeqCst;
use std::time::{Duration, Instant};

use axum::Extension;
use axum::Json;
use axum::extract::{FromRequest, Path, Query, Request, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use futures_util::Stream;
use portcullis_engine::{CallContext, EngineError, HOLD_POLL, HoldStatus, SessionSources};
use portcullis_policy::{Origin, ReasonCode, ToolCall, ToolRef, Verdict};
use portcullis_store::{AgentKind, AuditFilter, NewSession, Resolution, unix_now};
use serde::Deserialize;
use serde_json::{Value, json};

use crate::AppState;
use crate::auth::Login;
use crate::decider::DecideError;
use crate::error::ApiError;

type AppResult<T> = Result<T, ApiError>;
type Shared = State<Arc<AppState>>;

/// A JSON body whose rejections are [`ApiError`]s (a clear 4xx with a code).
pub struct Body<T>(pub T);

impl<S: Send + Sync, T: serde::de::DeserializeOwned> FromRequest<S> for Body<T> {
    type Rejection = ApiError;
    async fn from_request(req: Request, state: &S) -> Result<Self, ApiError> {
        let Json(v) = Json::<T>::from_request(req, state).await?;
        Ok(Body(v))
    }
}

/// A query string whose rejections are [`ApiError`]s.
pub struct Q<T>(pub T);

impl<S: Send + Sync, T: serde::de::DeserializeOwned> axum::extract::FromRequestParts<S> for Q<T> {
    type Rejection = ApiError;
    async fn from_request_parts(
        parts: &mut axum::http::request::Parts,
        state: &S,
    ) -> Result<Self, ApiError> {
        let Query(v) = Query::<T>::from_request_parts(parts, state).await?;
        Ok(Q(v))
    }
}

/// A path parameter whose rejections are [`ApiError`]s.
pub struct P<T>(pub T);

impl<S: Send + Sync, T: serde::de::DeserializeOwned + Send> axum::extract::FromRequestParts<S>
    for P<T>
{
    type Rejection = ApiError;
    async fn from_request_parts(
        parts: &mut axum::http::request::Parts,
        state: &S,
    ) -> Result<Self, ApiError> {
        let Path(v) = Path::<T>::from_request_parts(parts, state).await?;
        Ok(P(v))
    }
}

// ----- decide ---------------------------------------------------------------

/// A tool call, as `portcullis check --batch` reads it.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DecideBody {
    tool: String,
    #[serde(default)]
    input: Value,
    #[serde(default)]
    origin: Origin,
    #[serde(default)]
    server: Option<String>,
    /// The call's working directory: absolute.
    cwd: String,
    #[serde(default)]
    session: Option<String>,
    /// The file-system facts of the device that made the call (an enrolled
    /// device only): the call is judged with them, not with this machine's.
    #[serde(default)]
    facts: Option<portcullis_policy::reported::FactsReport>,
    /// The device-wide approvals the device keeps in its own store (an
    /// enrolled device only): each the request it answers and its target.
    #[serde(default)]
    device_grants: Vec<portcullis_engine::HeldApproval>,
    /// The enrolled device's hook can run the call confined (`portcullis
    /// run`): the answer may allow it so (`confine`).
    #[serde(default)]
    can_confine: bool,
    /// What an MCP tool's definition, pinned on the device, says of it
    /// (`readOnlyHint`, `destructiveHint`): an enrolled device only, whose
    /// pins they are.
    #[serde(default)]
    manifest: Option<portcullis_policy::Manifest>,
}

/// The most device-wide approvals a call may report.
const MAX_HELD_GRANTS: usize = 1024;

/// The header that carries a device's credential (`portcullis device enroll`).
pub const DEVICE_HEADER: &str = "x-portcullis-device";

/// The enrolled device a call's credential (`X-Portcullis-Device`) names:
/// `None` without one; an unknown or revoked credential is a 401.
pub(crate) async fn device_of(state: &AppState, headers: &HeaderMap) -> AppResult<Option<String>> {
    let Some(device) = headers.get(DEVICE_HEADER) else {
        return Ok(None);
    };
    let token = device.to_str().unwrap_or_default().to_owned();
    let known = state
        .with_store(move |s| s.device_for_token(&token))
        .await??;
    match known {
        Some(d) => Ok(Some(d.name)),
        None => Err(ApiError::new(
            StatusCode::UNAUTHORIZED,
            "unknown-device",
            "this device's credential is unknown or revoked: a person enrols it again \
             (`portcullis device enroll`)",
        )),
    }
}

/// The device a [`crate::routes::Access::Device`] route was called by.
#[derive(Clone, Debug)]
pub(crate) struct DeviceName(pub String);

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct HoldBody {
    timeout_ms: u64,
}

/// The longest a device's hold waits (a hook's own timeout bounds it
/// sooner: Claude Code's is 60 s).
const MAX_DEVICE_HOLD: Duration = Duration::from_secs(600);

/// `POST /v1/device/requests/{id}/hold`: a governed hook waits for a person
/// to resolve a request its own device raised (`on_ask = "hold"`). The
/// answer says only how it ended — `approved` (decide the call again: the
/// approval made a grant), `refused` or `timed_out` — never the request.
/// Another device's request, or one raised by no device, is not found.
pub(crate) async fn device_hold(
    state: Shared,
    Extension(DeviceName(name)): Extension<DeviceName>,
    P(id): P<i64>,
    Body(b): Body<HoldBody>,
) -> AppResult<Response> {
    let request = state.with_store(move |s| s.request(id)).await??;
    let own = request.is_some_and(|r| {
        r.session
            .strip_prefix(name.as_str())
            .is_some_and(|rest| rest.starts_with(':'))
    });
    if !own {
        return Err(ApiError::new(
            StatusCode::NOT_FOUND,
            "no-such-request",
            format!("this device raised no request #{id}"),
        ));
    }
    let timeout = Duration::from_millis(b.timeout_ms).min(MAX_DEVICE_HOLD);
    let now = unix_now();
    let unavailable = |e: DecideError| {
        ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "engine-error",
            format!("the request could not be held: {e}"),
        )
    };
    let hold = state
        .decider
        .with_engine(move |e| e.hold(id, now, timeout))
        .await
        .map_err(unavailable)?;
    let status = loop {
        match state
            .decider
            .with_engine(move |e| e.hold_status(&hold))
            .await
            .map_err(unavailable)?
        {
            HoldStatus::Waiting => tokio::time::sleep(HOLD_POLL).await,
            done => break done,
        }
    };
    Ok(Json(json!({ "status": status })).into_response())
}

pub(crate) async fn decide(
    state: Shared,
    headers: HeaderMap,
    body: Body<DecideBody>,
) -> AppResult<Response> {
    run_decide(&state, None, &headers, body.0).await
}

pub(crate) async fn decide_in_session(
    state: Shared,
    P(session): P<String>,
    headers: HeaderMap,
    body: Body<DecideBody>,
) -> AppResult<Response> {
    run_decide(&state, Some(session), &headers, body.0).await
}

async fn run_decide(
    state: &AppState,
    url_session: Option<String>,
    headers: &HeaderMap,
    body: DecideBody,
) -> AppResult<Response> {
    let started = Instant::now();
    portcullis_policy::check_tool_name(&body.tool)
        .map_err(|why| ApiError::bad_request("bad-tool-name", why))?;
    if !body.cwd.starts_with('/') {
        return Err(ApiError::bad_request(
            "bad-cwd",
            format!("`cwd` must be an absolute path, not `{}`", body.cwd),
        ));
    }
    let header_session = headers
        .get("x-session-id")
        .map(|v| {
            v.to_str().map(str::to_string).map_err(|_| {
                ApiError::bad_request("bad-header", "X-Session-ID is not visible ASCII")
            })
        })
        .transpose()?;
    // A machine enrolled with a team server names itself by its credential:
    // one that is unknown or revoked is refused outright.
    let device_name = device_of(state, headers).await?;
    let from_device = device_name.is_some();
    if !from_device && body.manifest.is_some() {
        return Err(ApiError::bad_request(
            "manifest-without-device",
            "a tool's pinned manifest is taken from an enrolled device only (X-Portcullis-Device)",
        ));
    }
    if !from_device && !body.device_grants.is_empty() {
        return Err(ApiError::bad_request(
            "grants-without-device",
            "device-wide approvals are taken from an enrolled device only (X-Portcullis-Device)",
        ));
    }
    if body.device_grants.len() > MAX_HELD_GRANTS {
        return Err(ApiError::bad_request(
            "bad-device-grants",
            format!("more than {MAX_HELD_GRANTS} device-wide approvals"),
        ));
    }
    for held in &body.device_grants {
        held.check()
            .map_err(|why| ApiError::bad_request("bad-device-grants", why))?;
    }
    // The engine applies the device's own device-wide approvals (and
    // delivers those made for it since).
    let device_call = device_name
        .as_ref()
        .map(|name| portcullis_engine::DeviceCall {
            name: name.clone(),
            held: body.device_grants,
        });
    // A device speaks for the sessions of its own agents, as a hook speaks
    // for its machine's: their ids are the device's own (`NAME:ID`), so one
    // device can never name, or use the grants of, another's session; and
    // a new one is registered by its first call.
    let mut body_session = body.session;
    let (mut url_session, mut header_session) = (url_session, header_session);
    let mut entered = Vec::new();
    if let Some(name) = &device_name {
        for id in [&mut url_session, &mut header_session, &mut body_session]
            .into_iter()
            .flatten()
        {
            *id = format!("{name}:{id}");
        }
        if let Some(id) = body_session
            .as_ref()
            .or(header_session.as_ref())
            .or(url_session.as_ref())
        {
            entered.push(portcullis_store::NewSession {
                id: id.clone(),
                agent: Some(format!("device {name}")),
                cwd: Some(body.cwd.clone()),
                ..portcullis_store::NewSession::default()
            });
        }
    }
    let bearer = crate::auth::bearer(headers);
    // The person's token stands for every session; else the bearer must be
    // the session's own token for its grants to apply (an enrolled device's
    // credential stands for its own sessions).
    let admin = bearer.is_some_and(|b| state.auth.token_matches(b));
    let ctx = CallContext {
        sources: SessionSources {
            url_path: url_session,
            header: header_session,
            body: body_session,
            env: None,
            agent: None,
        },
        token: bearer.map(str::to_string),
        require_token: !admin && !from_device,
        dry_run: false,
        // An HTTP caller runs the call itself: nothing confines it — but
        // an enrolled device's hook, which rewrites the call it is answered.
        can_confine: from_device && body.can_confine,
        asked_in_agent: false,
        agent_link: None,
        remote_device: device_call,
    };
    // Facts about a file system other than this machine's: only from an
    // enrolled device, and only as large as a call needs.
    let reported = match body.facts {
        None => None,
        Some(_) if !from_device => {
            return Err(ApiError::bad_request(
                "facts-without-device",
                "file-system facts are taken from an enrolled device only (X-Portcullis-Device)",
            ));
        }
        Some(report) => {
            report
                .check()
                .map_err(|why| ApiError::bad_request("bad-facts", why))?;
            Some(portcullis_policy::reported::Reported::new(report))
        }
    };
    let call = ToolCall {
        tool: ToolRef {
            name: body.tool,
            origin: body.origin,
            server: body.server,
            manifest: body.manifest,
        },
        input: body.input,
        cwd: body.cwd,
    };
    let judge = match state.judge(&call.cwd).await {
        Ok(j) => j,
        Err(why) => {
            // Configuration that cannot be used: deny, and say why.
            state.metrics.record(Some(Verdict::Deny), started.elapsed());
            return Ok(Json(json!({
                "decision": "deny",
                "reasons": [{"code": ReasonCode::ConfigError, "message": format!("configuration error: {why}"), "verdict": "deny"}],
                "effects": [],
            }))
            .into_response());
        }
    };
    let judge = match reported {
        None => judge,
        Some(facts) => Arc::new(crate::Judge {
            policy: judge.policy.clone(),
            facts: crate::JudgeFacts::Reported(facts),
        }),
    };
    match state
        .decider
        .enter_and_decide(judge, entered, call, ctx)
        .await
    {
        Ok(o) => {
            state
                .metrics
                .record(Some(o.decision.decision), started.elapsed());
            Ok(Json(o).into_response())
        }
        Err(DecideError::Conflict(sources)) => {
            state.metrics.record(None, started.elapsed());
            let message = EngineError::SessionConflict {
                sources: sources.clone(),
            }
            .to_string();
            Err(ApiError::session_conflict(&sources, message))
        }
        Err(DecideError::Engine(why)) => {
            state.metrics.record(None, started.elapsed());
            let mut e = ApiError::new(
                StatusCode::SERVICE_UNAVAILABLE,
                "engine-error",
                format!("no decision could be made (treat as deny): {why}"),
            );
            e.extra = Some(json!({"decision": "deny"}));
            Err(e)
        }
    }
}

// ----- sessions -------------------------------------------------------------

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct SessionBody {
    id: String,
    #[serde(default)]
    agent: Option<String>,
    #[serde(default)]
    cwd: Option<String>,
    #[serde(default)]
    parent: Option<String>,
    #[serde(default)]
    kind: Option<String>,
    #[serde(default)]
    workflow: Option<String>,
    #[serde(default)]
    ttl_secs: Option<i64>,
}

/// Registers a session and answers its token (shown once). The person may
/// register any session; a session may register its own children, proving
/// itself with its token.
pub(crate) async fn register_session(
    state: Shared,
    person: Option<Extension<Login>>,
    headers: HeaderMap,
    Body(b): Body<SessionBody>,
) -> AppResult<Response> {
    let kind = match &b.kind {
        None => AgentKind::Main,
        Some(k) => k.parse().map_err(|e: portcullis_store::ParseError| {
            ApiError::bad_request("bad-kind", e.to_string())
        })?,
    };
    // Not the person: the bearer must be the parent session's own token.
    let parent_token = match person {
        Some(_) => None,
        None => match (&b.parent, crate::auth::bearer(&headers)) {
            (Some(p), Some(t)) => Some((p.clone(), t.to_string())),
            _ => return Err(ApiError::unauthorized()),
        },
    };
    let new = NewSession {
        id: b.id,
        agent: b.agent,
        cwd: b.cwd,
        parent: b.parent,
        kind,
        workflow: b.workflow,
        ttl_secs: b.ttl_secs,
    };
    let registered = state
        .with_store(move |store| {
            if let Some((parent, token)) = parent_token
                && !store.verify_token(&parent, &token)?
            {
                return Err(ApiError::unauthorized());
            }
            Ok(portcullis_engine::actions::register_session(
                store,
                &new,
                unix_now(),
            )?)
        })
        .await??;
    Ok((StatusCode::CREATED, Json(registered)).into_response())
}

pub(crate) async fn list_sessions(state: Shared) -> AppResult<Response> {
    let list = state.with_store(|s| s.sessions()).await??;
    Ok(Json(list).into_response())
}

// ----- requests and grants --------------------------------------------------

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ListQuery {
    #[serde(default)]
    all: bool,
}

pub(crate) async fn list_requests(state: Shared, Q(q): Q<ListQuery>) -> AppResult<Response> {
    let list = state.with_store(move |s| s.requests(!q.all)).await??;
    Ok(Json(list).into_response())
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ResolveBody {
    /// once, session, device or deny.
    pub scope: String,
    /// With `deny`: what the agent reads as the refusal of its next attempts
    /// of the same call in the session (for ten minutes, or the session's
    /// life with `"for": "session"`).
    #[serde(default)]
    pub message: Option<String>,
    /// With `deny`: `call` (the default: the denial stands for ten minutes)
    /// or `session` (as long as the session lives).
    #[serde(default, rename = "for")]
    pub lasting: Option<String>,
    /// With an approval: a pattern grant instead of the call itself
    /// (`Bash(npm install *)`, `Read(~/Downloads/**)`, `Edit(./src/**)`, an
    /// MCP tool's name); it must cover the call (`422` naming what it misses).
    #[serde(default)]
    pub rule: Option<String>,
    /// With `rule`: "always" — also save it to the `user`'s or the `project`'s
    /// portcullis configuration (a project's file is committed and shared;
    /// refused when the project is not trusted, so the file would not load).
    #[serde(default)]
    pub save: Option<String>,
}

/// The standing denial a resolution asks for (the engine's rules), or a 400
/// naming what is wrong.
pub fn denial_of(
    how: Resolution,
    message: Option<&str>,
    lasting: Option<&str>,
    now: i64,
) -> AppResult<Option<portcullis_store::Denial>> {
    portcullis_engine::actions::denial(how, message, lasting, now)
        .map_err(|why| ApiError::bad_request("bad-denial", why))
}

pub fn parse_resolution(scope: &str) -> AppResult<Resolution> {
    match scope {
        "once" => Ok(Resolution::Once),
        "session" => Ok(Resolution::Session),
        "device" => Ok(Resolution::Device),
        "deny" => Ok(Resolution::Deny),
        other => Err(ApiError::bad_request(
            "bad-scope",
            format!("scope `{other}`: expected once, session, device or deny"),
        )),
    }
}

pub(crate) async fn resolve_request(
    state: Shared,
    Extension(person): Extension<Login>,
    P(id): P<i64>,
    Body(b): Body<ResolveBody>,
) -> AppResult<Response> {
    let approver = person.approver();
    let how = parse_resolution(&b.scope)?;
    let now = unix_now();
    if let Some(rule) = b.rule {
        if b.message.is_some() || b.lasting.is_some() {
            return Err(ApiError::bad_request(
                "bad-denial",
                "`message` and `for` go with a deny, `rule` with an approval",
            ));
        }
        return resolve_with_rule(&state, id, how, rule, b.save, approver, now).await;
    }
    if b.save.is_some() {
        return Err(ApiError::bad_request(
            "save-needs-rule",
            "`save` saves a `rule`: name the rule to save",
        ));
    }
    let denial = denial_of(how, b.message.as_deref(), b.lasting.as_deref(), now)?;
    let (request, grant) = state
        .with_store(move |s| {
            portcullis_engine::actions::resolve_request_with(
                s,
                id,
                how,
                denial.as_ref(),
                &approver,
                now,
            )
        })
        .await??;
    Ok(Json(json!({"request": request, "grant": grant})).into_response())
}

/// Resolves request `id` with a person's rule ([`AppState::resolve_with_rule`]).
pub(crate) async fn resolve_with_rule(
    state: &AppState,
    id: i64,
    how: Resolution,
    rule: String,
    save: Option<String>,
    approver: String,
    now: i64,
) -> AppResult<Response> {
    use crate::RuleError;
    match state
        .resolve_with_rule(id, how, rule, save, approver, now)
        .await
    {
        Ok((request, grant, _)) => {
            Ok(Json(json!({"request": request, "grant": grant})).into_response())
        }
        Err(RuleError::NotFound(why)) => Err(ApiError::not_found(why)),
        Err(RuleError::Refused(why)) => Err(ApiError::new(
            StatusCode::UNPROCESSABLE_ENTITY,
            "rule-not-covering",
            why,
        )),
        Err(RuleError::BadSave(why)) => Err(ApiError::bad_request("bad-save", why)),
        Err(RuleError::Internal(why)) => Err(ApiError::internal(why)),
    }
}

pub(crate) async fn list_grants(state: Shared, Q(q): Q<ListQuery>) -> AppResult<Response> {
    let now = unix_now();
    let list: Vec<_> = state
        .with_store(|s| s.grants())
        .await??
        .into_iter()
        .filter(|g| q.all || g.is_active(now))
        .collect();
    Ok(Json(list).into_response())
}

pub(crate) async fn revoke_grant(
    state: Shared,
    Extension(person): Extension<Login>,
    P(id): P<i64>,
) -> AppResult<Response> {
    let by = person.approver();
    let revoked = state
        .with_store(move |s| portcullis_engine::actions::revoke_grant(s, id, &by, unix_now()))
        .await??;
    if !revoked {
        return Err(ApiError::not_found(format!("no active grant #{id}")));
    }
    Ok(Json(json!({"revoked": id})).into_response())
}

// ----- Devices (a team server's machines) -----------------------------------

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct DeviceBody {
    name: String,
}

/// A person enrols a machine: its credential, shown once, is good for
/// asking decisions only.
pub(crate) async fn enroll_device(
    state: Shared,
    Extension(person): Extension<Login>,
    Body(b): Body<DeviceBody>,
) -> AppResult<Response> {
    let by = person.approver();
    let (device, token) = state
        .with_store(move |s| portcullis_engine::actions::enroll_device(s, &b.name, &by, unix_now()))
        .await??;
    Ok((
        StatusCode::CREATED,
        Json(json!({"device": device, "token": token})),
    )
        .into_response())
}

pub(crate) async fn list_devices(state: Shared) -> AppResult<Response> {
    let devices = state.with_store(|s| s.devices()).await??;
    Ok(Json(devices).into_response())
}

pub(crate) async fn revoke_device(
    state: Shared,
    Extension(person): Extension<Login>,
    P(name): P<String>,
) -> AppResult<Response> {
    let by = person.approver();
    let gone = name.clone();
    let revoked = state
        .with_store(move |s| portcullis_engine::actions::revoke_device(s, &gone, &by, unix_now()))
        .await??;
    if !revoked {
        return Err(ApiError::not_found(format!("no active device `{name}`")));
    }
    Ok(Json(json!({"revoked": name})).into_response())
}

// ----- MCP tool definition pins ---------------------------------------------

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct PinsQuery {
    #[serde(default)]
    pending: bool,
}

pub(crate) async fn list_pins(state: Shared, Q(q): Q<PinsQuery>) -> AppResult<Response> {
    let pins = state.with_store(move |s| s.pins(q.pending)).await??;
    Ok(Json(pins).into_response())
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct PinDecision {
    server: String,
    tool: String,
    hash: String,
    approve: bool,
}

pub(crate) async fn resolve_pin(
    state: Shared,
    Extension(person): Extension<Login>,
    Body(b): Body<PinDecision>,
) -> AppResult<Response> {
    let by = person.approver();
    let pin = state
        .with_store(move |s| {
            portcullis_engine::actions::decide_pin(
                s,
                &b.server,
                &b.tool,
                &b.hash,
                b.approve,
                &by,
                unix_now(),
            )
        })
        .await??;
    Ok(Json(pin).into_response())
}

// ----- audit ----------------------------------------------------------------

pub(crate) async fn audit(state: Shared, Q(filter): Q<AuditFilter>) -> AppResult<Response> {
    let query = filter.clone();
    let rows = state.with_store(move |s| s.audit_query(&query)).await??;
    let page = filter.limit.clamp(1, portcullis_store::MAX_AUDIT_PAGE);
    let next = (rows.len() == page)
        .then(|| rows.last().map(|r| r.id))
        .flatten();
    Ok(Json(json!({"rows": rows, "next_before": next})).into_response())
}

pub(crate) async fn audit_verify(state: Shared) -> AppResult<Response> {
    let check = state.with_store(|s| s.verify_audit()).await??;
    Ok(Json(check).into_response())
}

// ----- live events, health, metrics -------------------------------------------

pub(crate) async fn events(
    state: Shared,
) -> AppResult<Sse<impl Stream<Item = Result<Event, Infallible>>>> {
    let slot = EventSlot::take(&state).ok_or_else(|| {
        ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "too-many-event-streams",
            format!(
                "{} event streams are open already (the limit): close a tab of the approval UI",
                state.limits.max_event_streams
            ),
        )
    })?;
    let rx = state.events.subscribe();
    let stream = futures_util::stream::unfold((rx, slot), |(mut rx, slot)| async move {
        let event = match rx.recv().await {
            Ok(ev) => Event::default()
                .event(ev.kind)
                .json_data(&ev.data)
                .unwrap_or_else(|_| Event::default().event(ev.kind)),
            // A slow client missed events: tell it to reload everything.
            Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => {
                Event::default().event("resync").data("{}")
            }
            Err(tokio::sync::broadcast::error::RecvError::Closed) => return None,
        };
        Some((Ok(event), (rx, slot)))
    });
    Ok(Sse::new(stream).keep_alive(KeepAlive::default()))
}

/// One of the [`crate::conn::Limits::max_event_streams`] event streams,
/// given back when the stream ends.
struct EventSlot(Arc<AppState>);

impl EventSlot {
    fn take(state: &Arc<AppState>) -> Option<EventSlot> {
        let max = state.limits.max_event_streams;
        state
            .event_streams
            .fetch_update(SeqCst, SeqCst, |n| (n < max).then_some(n + 1))
            .ok()
            .map(|_| EventSlot(Arc::clone(state)))
    }
}

impl Drop for EventSlot {
    fn drop(&mut self) {
        self.0.event_streams.fetch_sub(1, SeqCst);
    }
}

/// 200 when decisions can be made; 503 naming why not (the database file
/// deleted or replaced, a failed `quick_check`).
pub(crate) async fn healthz(state: Shared) -> Response {
    let version = env!("CARGO_PKG_VERSION");
    // One `stat` of the database file: file work, off the async runtime.
    let health = Arc::clone(&state.health);
    let why = tokio::task::spawn_blocking(move || health.why_not_ready())
        .await
        .unwrap_or_else(|e| Some(format!("the health check failed: {e}")));
    match why {
        None => Json(json!({"status": "ok", "version": version})).into_response(),
        Some(why) => (
            StatusCode::SERVICE_UNAVAILABLE,
            Json(json!({"status": "not-ready", "why": why, "version": version})),
        )
            .into_response(),
    }
}

pub(crate) async fn metrics(state: Shared) -> Response {
    (
        [(header::CONTENT_TYPE, "text/plain; version=0.0.4")],
        state.metrics.render(),
    )
        .into_response()
}
