//! The approval UI: server-rendered pages, a little plain JavaScript for live
//! updates, assets embedded in the binary. No build step.
//!
//! Every page needs the login cookie (set by `/login?token=…`); every form
//! carries the CSRF token; pages forbid framing and inline script (CSP).

use std::collections::HashMap;
use std::fmt::Write;
use std::sync::Arc;

use axum::Extension;
use axum::extract::{Form, Query, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{Html, IntoResponse, Redirect, Response};
use portcullis_policy::{McpToolName, Risk};
use portcullis_store::{
    AuditCheck, AuditFilter, Grant, GrantScope, GrantTarget, Pin, Request, Resolution, Session,
    Store, unix_now,
};
use serde::Deserialize;

use crate::AppState;
use crate::api::{P, parse_resolution};
use crate::auth::Login;
use crate::error::ApiError;

const STYLE: &str = include_str!("../assets/style.css");
const SCRIPT: &str = include_str!("../assets/app.js");

const CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

type Shared = State<Arc<AppState>>;

pub(crate) const STYLE_CSS: (&str, &str) = (STYLE, "text/css; charset=utf-8");
pub(crate) const APP_JS: (&str, &str) = (SCRIPT, "text/javascript; charset=utf-8");

pub(crate) async fn asset(body: &'static str, kind: &'static str) -> Response {
    ([(header::CONTENT_TYPE, kind)], body).into_response()
}

// ----- login ----------------------------------------------------------------

#[derive(Deserialize)]
pub(crate) struct LoginQuery {
    token: Option<String>,
}

pub(crate) async fn login(state: Shared, Query(q): Query<LoginQuery>) -> Response {
    match q
        .token
        .and_then(|t| state.auth.login_for_token(&t, crate::auth::Via::Cookie))
    {
        Some(login) => {
            let mut res = Redirect::to("/").into_response();
            // Over HTTPS the cookie never travels in the clear.
            let cookie = if state.hosts.is_tls() {
                format!("{}; Secure", state.auth.login_cookie(&login))
            } else {
                state.auth.login_cookie(&login)
            };
            if let Ok(v) = HeaderValue::from_str(&cookie) {
                res.headers_mut().insert(header::SET_COOKIE, v);
            }
            res
        }
        _ => locked(&state, "That login link is not valid."),
    }
}

/// The page a browser without the login cookie sees.
pub(crate) fn locked(state: &AppState, why: &str) -> Response {
    let body = format!(
        "<section class=\"locked\"><h1>portcullis</h1><p>{}</p><p>Open the login URL that <code>portcullis serve</code> printed when it started. The token is also in <code>{}</code>.</p></section>",
        esc(why),
        esc(&state
            .data_dir
            .join(crate::auth::TOKEN_FILE)
            .display()
            .to_string())
    );
    let mut res = page_response(&bare_page("Locked — portcullis", &body));
    *res.status_mut() = StatusCode::UNAUTHORIZED;
    res
}

// ----- pages ----------------------------------------------------------------

#[derive(Deserialize, Default)]
pub(crate) struct Notice {
    notice: Option<String>,
    error: Option<String>,
}

pub(crate) async fn requests_page(
    state: Shared,
    Extension(login): Extension<Login>,
    Query(n): Query<Notice>,
) -> Response {
    let live = match state.with_store(live_state).await {
        Ok(Ok(l)) => l,
        Ok(Err(e)) => return store_error(e),
        Err(e) => return e.into_response(),
    };
    let waiting = live.waiting();
    let html = live.html(login.csrf());
    let mut body = notices(&n);
    let _ = write!(
        body,
        "<div class=\"bar\"><h1>Requests <span class=\"count\" id=\"pending-count\">{}</span></h1>\
         <button type=\"button\" id=\"notify\" class=\"ghost\" hidden>Enable desktop notifications</button></div>\
         <p class=\"hint\">Agents' refused tool calls wait here for you. Nothing is replayed: after you allow, the agent may retry (a held hook simply continues).</p>\
         <div class=\"toolbar\" id=\"request-tools\">\
           <input type=\"search\" id=\"request-search\" placeholder=\"Filter: command, path, session, agent\" aria-label=\"Filter requests\">\
           <label><input type=\"checkbox\" id=\"request-compact\"> Compact</label>\
           <label>Order <select id=\"request-group\"><option value=\"\">newest first</option>\
             <option value=\"session\">by session</option><option value=\"cwd\">by directory</option></select></label>\
           <button type=\"button\" id=\"deny-shown\" class=\"deny\">Deny all shown</button></div>\
         <div id=\"requests\" aria-live=\"polite\" data-version=\"{}\">{}</div>",
        waiting,
        version(&html),
        html
    );
    page(
        login.csrf(),
        "requests",
        &title_with_count("Requests", waiting),
        &body,
    )
}

pub(crate) async fn requests_fragment(
    state: Shared,
    Extension(login): Extension<Login>,
) -> Response {
    let live = match state.with_store(live_state).await {
        Ok(live) => live,
        Err(e) => return e.into_response(),
    };
    match live {
        Ok(live) => {
            let html = live.html(login.csrf());
            let tag = version(&html);
            let mut res = Html(html).into_response();
            if let Ok(v) = HeaderValue::from_str(&live.waiting().to_string()) {
                res.headers_mut().insert("x-pending-count", v);
            }
            if let Ok(v) = HeaderValue::from_str(&tag) {
                res.headers_mut().insert("x-fragment-version", v);
            }
            res
        }
        Err(e) => ApiError::from(e).into_response(),
    }
}

/// A short fingerprint of a fragment: the page skips a refresh that would
/// change nothing (and keeps its focus and its elements).
fn version(html: &str) -> String {
    blake3::hash(html.as_bytes()).to_hex()[..16].to_string()
}

/// What waits for a person: changed MCP tool definitions and permission requests.
struct Live {
    requests: Vec<Request>,
    sessions: Vec<Session>,
    /// Pending definitions with the last approved one of the same tool.
    changes: Vec<(Pin, Option<Pin>)>,
}

impl Live {
    fn waiting(&self) -> usize {
        self.requests.len() + self.changes.len()
    }

    fn html(&self, csrf: &str) -> String {
        if self.waiting() == 0 {
            return "<p class=\"empty\">No pending requests. New ones appear here as agents are refused.</p>".into();
        }
        let mut out = tool_changes_html(&self.changes, csrf);
        if !self.requests.is_empty() {
            out.push_str(&requests_html(&self.requests, &self.sessions, csrf));
        }
        out
    }
}

fn live_state(store: &Store) -> Result<Live, portcullis_store::StoreError> {
    let requests = store.requests(true)?;
    let sessions = store.sessions()?;
    let mut changes = Vec::new();
    for pin in store.pins(true)? {
        let previous = store.approved_pin(&pin.server, &pin.tool)?;
        changes.push((pin, previous));
    }
    Ok(Live {
        requests,
        sessions,
        changes,
    })
}

/// Changed MCP tool definitions: the diff against the approved one, and the choice.
fn tool_changes_html(changes: &[(Pin, Option<Pin>)], csrf: &str) -> String {
    if changes.is_empty() {
        return String::new();
    }
    let mut out = String::from(
        "<section id=\"tool-changes\"><h2>Tool changes</h2><p class=\"hint\">These MCP tools changed their definition since you approved them (or were never approved). They are withheld from the agent until you decide. Read the new text for instructions aimed at the model.</p>",
    );
    for (pin, previous) in changes {
        let new_text = pretty(&pin.definition);
        let old_text = previous
            .as_ref()
            .map(|p| pretty(&p.definition))
            .unwrap_or_default();
        let _ = write!(
            out,
            "<article class=\"request change\" id=\"change-{server}-{tool}\">\
               <header><span class=\"op op-exec\">changed</span> <code class=\"target\">{name}</code></header>\
               <p class=\"reason\">{what}</p>\
               <pre class=\"diff\">{diff}</pre>\
               <form method=\"post\" action=\"/ui/pins/resolve\" class=\"actions\">\
                 <input type=\"hidden\" name=\"csrf\" value=\"{csrf}\">\
                 <input type=\"hidden\" name=\"server\" value=\"{server}\">\
                 <input type=\"hidden\" name=\"tool\" value=\"{tool}\">\
                 <input type=\"hidden\" name=\"hash\" value=\"{hash}\">\
                 <button name=\"decision\" value=\"reject\" class=\"deny\">Keep withheld</button>\
                 <button name=\"decision\" value=\"approve\" class=\"allow\">Approve the new definition</button>\
               </form></article>",
            name = esc(&McpToolName::new(pin.server.as_str(), pin.tool.as_str()).to_string()),
            server = esc(&pin.server),
            tool = esc(&pin.tool),
            what = if previous.is_some() {
                "The definition differs from the approved one:"
            } else {
                "First seen; this server's tools need approval before use:"
            },
            diff = line_diff(&old_text, &new_text),
            csrf = csrf,
            hash = esc(&pin.hash),
        );
    }
    out.push_str("</section>");
    out
}

fn pretty(v: &serde_json::Value) -> String {
    serde_json::to_string_pretty(v).unwrap_or_default()
}

/// A line diff (longest common subsequence), as escaped HTML: `-` removed,
/// `+` added, unchanged lines indented.
// PANIC SAFETY: `i < a.len()`, `j < b.len()` in the loops, and the table has
// `a.len() + 1` rows of `b.len() + 1`: every index below is in bounds.
#[allow(clippy::indexing_slicing)]
fn line_diff(old: &str, new: &str) -> String {
    let a: Vec<&str> = old.lines().collect();
    let b: Vec<&str> = new.lines().collect();
    let mut lcs = vec![vec![0u32; b.len() + 1]; a.len() + 1];
    for i in (0..a.len()).rev() {
        for j in (0..b.len()).rev() {
            lcs[i][j] = if a[i] == b[j] {
                lcs[i + 1][j + 1] + 1
            } else {
                lcs[i + 1][j].max(lcs[i][j + 1])
            };
        }
    }
    let (mut i, mut j) = (0, 0);
    let mut out = String::new();
    while i < a.len() || j < b.len() {
        if i < a.len() && j < b.len() && a[i] == b[j] {
            let _ = writeln!(out, "  {}", esc(a[i]));
            i += 1;
            j += 1;
        } else if j < b.len() && (i == a.len() || lcs[i][j + 1] >= lcs[i + 1][j]) {
            let _ = writeln!(out, "<ins>+ {}</ins>", esc(b[j]));
            j += 1;
        } else {
            let _ = writeln!(out, "<del>- {}</del>", esc(a[i]));
            i += 1;
        }
    }
    out
}

/// Whether an agent's call waits for this answer, and until when (the
/// deadline its hook or the bridge stored; `app.js` counts down to it).
fn held_html(held_until: Option<i64>, now: i64) -> String {
    match held_until {
        Some(until) if until > now => format!(
            "<p class=\"held waiting\" data-until=\"{until}\">An agent is waiting for this \
             answer until {} UTC<span class=\"countdown\"></span>.</p>",
            time_text(until)
        ),
        Some(until) => format!(
            "<p class=\"held gone\">The agent stopped waiting at {} UTC: an approval applies \
             when it retries the call.</p>",
            time_text(until)
        ),
        None => String::new(),
    }
}

/// What a request holds that a person must confirm before allowing it (a
/// secret read, a hazard), in words; `None` when nothing does.
fn needs_confirmation(r: &Request) -> Option<&'static str> {
    let GrantTarget::Call { effects, .. } = &r.target else {
        return None;
    };
    let risks: Vec<Risk> = effects
        .iter()
        .filter_map(|e| Risk::ALL.iter().find(|k| k.as_str() == e.risk).copied())
        .filter(|k| k.needs_confirmation())
        .collect();
    match (
        risks.contains(&Risk::SecretRead),
        risks.contains(&Risk::Hazard),
    ) {
        (true, true) => Some("reads a secret and runs a hazardous command"),
        (true, false) => Some("reads a secret"),
        (false, true) => Some("runs a hazardous command"),
        (false, false) => None,
    }
}

/// The rules a person may allow instead of the call itself (each checked to
/// cover it), as a choice; nothing when there are none.
fn rules_html(r: &Request) -> String {
    let GrantTarget::Call { rules, .. } = &r.target else {
        return String::new();
    };
    if rules.is_empty() {
        return String::new();
    }
    let mut out = String::from(
        "<div class=\"row\"><label class=\"rule\">Allow <select name=\"rule\"><option value=\"\">this call only</option>",
    );
    for rule in rules {
        let _ = write!(out, "<option value=\"{r}\">{r}</option>", r = esc(rule));
    }
    out.push_str(
        "</select></label> <label class=\"rule\"><select name=\"save\">\
         <option value=\"\">not saved</option>\
         <option value=\"user\">always: save the rule to my configuration</option>\
         <option value=\"project\">always, for everyone: the project's .portcullis.toml \
         (committed, shared)</option></select></label></div>",
    );
    out
}

/// What approving the request allows: every effect of the call the policy
/// refused, each with its verdict and reason (the whole call is the unit).
fn effects_html(r: &Request) -> String {
    let GrantTarget::Call { effects, .. } = &r.target else {
        return format!("<p class=\"reason\">{}</p>", esc(&r.reason));
    };
    let mut out = String::from(
        "<p class=\"muted\">Approving allows this call, and only it, everything below:</p><ul class=\"effects\">",
    );
    for e in effects {
        let _ = write!(
            out,
            "<li><span class=\"verdict v-{v}\">{v}</span> <span class=\"risk risk-{risk}\">{risk}</span> <code>{what}</code> <span class=\"reason\">{reason}</span></li>",
            v = esc(&e.verdict),
            risk = esc(&e.risk),
            what = esc(&e.what),
            reason = esc(&e.reason),
        );
    }
    out.push_str("</ul>");
    out
}

fn requests_html(list: &[Request], sessions: &[Session], csrf: &str) -> String {
    let now = unix_now();
    if list.is_empty() {
        return "<p class=\"empty\">No pending requests. New ones appear here as agents are refused.</p>".into();
    }
    let by_id: HashMap<&str, &Session> = sessions.iter().map(|s| (s.id.as_str(), s)).collect();
    let mut out = String::new();
    for (i, r) in list.iter().enumerate() {
        let s = by_id.get(r.session.as_str());
        let agent = s.and_then(|s| s.agent.as_deref()).unwrap_or("agent");
        let kind = s.map(|s| s.kind.as_str()).unwrap_or("main");
        let workflow = s.and_then(|s| s.workflow.as_deref());
        let count = if r.count > 1 {
            format!(
                "<span class=\"repeat\" title=\"asked {} times\">×{}</span>",
                r.count, r.count
            )
        } else {
            String::new()
        };
        let _ = write!(
            out,
            "<article class=\"request\" id=\"request-{id}\" data-id=\"{id}\" data-session=\"{session}\" data-cwd=\"{cwd_attr}\">\
               <header><span class=\"op op-{op}\">{op}</span> <code class=\"target\">{target}</code> {count}</header>\
               {effects}\
               <dl><dt>Tool</dt><dd><code>{tool}</code></dd>{cwd}\
                   <dt>Agent</dt><dd>{agent} <span class=\"muted\">({kind})</span></dd>\
                   <dt>Session</dt><dd><code>{session}</code></dd>{workflow}\
                   <dt>Policy scope</dt><dd>{scope}</dd>\
                   <dt>Last asked</dt><dd>{when}</dd></dl>{held}",
            id = r.id,
            op = r.op.as_str(),
            target = esc(&r.target.to_string()),
            effects = effects_html(r),
            cwd_attr = match &r.target {
                GrantTarget::Call { cwd, .. } => esc(cwd),
                _ => String::new(),
            },
            tool = esc(&r.tool),
            cwd = match &r.target {
                GrantTarget::Call { cwd, .. } => {
                    format!("<dt>Directory</dt><dd><code>{}</code></dd>", esc(cwd))
                }
                _ => String::new(),
            },
            agent = esc(agent),
            kind = esc(kind),
            session = esc(&r.session),
            workflow = workflow
                .map(|w| format!("<dt>Workflow</dt><dd>{}</dd>", esc(w)))
                .unwrap_or_default(),
            scope = esc(&r.policy_scope),
            when = time_text(r.last_seen),
            held = held_html(r.held_until, now),
        );
        if r.eligible {
            let _ = write!(
                out,
                "<form method=\"post\" action=\"/ui/requests/{id}/resolve\" class=\"actions\">\
                   <input type=\"hidden\" name=\"csrf\" value=\"{csrf}\">\
                   <div class=\"row deny-row\">\
                   <button name=\"scope\" value=\"deny\" class=\"deny\" formnovalidate{focus}>Deny</button>\
                   <button name=\"scope\" value=\"deny-session\" class=\"deny\" formnovalidate>Deny for this session</button>\
                   <input type=\"text\" name=\"message\" maxlength=\"500\" class=\"message\" \
                          placeholder=\"Why, for the agent (with a deny)\" aria-label=\"Why, for the agent (with a deny)\"></div>\
                   {confirm}{rules}\
                   <div class=\"row allow-row\">\
                   <button name=\"scope\" value=\"once\" class=\"allow\">Allow once</button>\
                   <button name=\"scope\" value=\"session\" class=\"allow\">Allow for this session</button>{device}</div>\
                 </form>",
                id = r.id,
                rules = rules_html(r),
                confirm = match needs_confirmation(r) {
                    Some(what) => format!(
                        "<label class=\"confirm\"><input type=\"checkbox\" name=\"confirm\" value=\"yes\" required> \
                         I have read it: this call {}</label>",
                        esc(what)
                    ),
                    None => String::new(),
                },
                csrf = csrf,
                // The safest choice is the focused default: Enter denies.
                focus = if i == 0 { " autofocus" } else { "" },
                device = if r.suggested.contains(&Resolution::Device) {
                    "<button name=\"scope\" value=\"device\" class=\"allow\">Always allow read-only on this device</button>"
                } else {
                    ""
                },
            );
        } else {
            let _ = write!(
                out,
                "<form method=\"post\" action=\"/ui/requests/{id}/resolve\" class=\"actions\">\
                   <input type=\"hidden\" name=\"csrf\" value=\"{csrf}\">\
                   <button name=\"scope\" value=\"deny\" class=\"deny\"{focus}>Dismiss (deny)</button>\
                   <span class=\"muted\">The policy does not let this be approved from here.</span></form>",
                id = r.id,
                csrf = csrf,
                focus = if i == 0 { " autofocus" } else { "" },
            );
        }
        out.push_str("</article>");
    }
    out
}

#[derive(Deserialize)]
pub(crate) struct GrantsQuery {
    #[serde(default)]
    all: bool,
    notice: Option<String>,
    error: Option<String>,
}

pub(crate) async fn grants_page(
    state: Shared,
    Extension(login): Extension<Login>,
    Query(q): Query<GrantsQuery>,
) -> Response {
    let grants = match state.with_store(|s| s.grants()).await {
        Ok(Ok(g)) => g,
        Ok(Err(e)) => return store_error(e),
        Err(e) => return e.into_response(),
    };
    let now = unix_now();
    let shown: Vec<&Grant> = grants
        .iter()
        .filter(|g| q.all || g.is_active(now))
        .collect();
    let mut body = notices(&Notice {
        notice: q.notice.clone(),
        error: q.error.clone(),
    });
    let _ = write!(
        body,
        "<div class=\"bar\"><h1>Grants</h1><a href=\"{}\">{}</a></div>\
         <p id=\"live-status\" class=\"ok\" role=\"status\" hidden>Grants changed since this page loaded. <a href=\"\">Reload</a></p>",
        if q.all { "/grants" } else { "/grants?all=true" },
        if q.all {
            "Active only"
        } else {
            "Show ended grants too"
        }
    );
    if shown.is_empty() {
        body.push_str("<p class=\"empty\">No active grants.</p>");
    } else {
        body.push_str("<table><thead><tr><th>#</th><th>Scope</th><th>Operation</th><th>Call, path or pattern</th><th>Reach</th><th>Expires</th><th>Uses</th><th>Approved</th><th></th></tr></thead><tbody>");
        for g in shown {
            let uses = match (g.scope, g.consumed_at) {
                (GrantScope::Once, Some(at)) => format!("used {}", time_text(at)),
                (GrantScope::Once, None) => "one use left".into(),
                _ => "unlimited".into(),
            };
            let state_cell = if g.is_active(now) {
                format!(
                    "<form method=\"post\" action=\"/ui/grants/{}/revoke\"><input type=\"hidden\" name=\"csrf\" value=\"{}\"><button class=\"deny small\">Revoke</button></form>",
                    g.id,
                    login.csrf()
                )
            } else if g.revoked_at.is_some() {
                "<span class=\"muted\">revoked</span>".into()
            } else {
                "<span class=\"muted\">ended</span>".into()
            };
            let _ = write!(
                body,
                "<tr id=\"grant-{id}\"><td>{id}</td><td><span class=\"scope\">{scope}</span></td><td><span class=\"op op-{op}\">{op}</span></td><td><code>{target}</code></td><td>{principal}</td><td>{expires}</td><td>{uses}</td><td>{by}<br><span class=\"muted\">{when}</span></td><td>{state_cell}</td></tr>",
                id = g.id,
                scope = g.scope.as_str(),
                op = g.op.as_str(),
                target = esc(&g.target.to_string()),
                // The grant's reach, in words: who may use it.
                principal = match (&g.session, g.scope) {
                    (None, _) => "every session on this device".to_string(),
                    (Some(s), GrantScope::Once) => {
                        format!("one call of session <code>{}</code>", esc(s))
                    }
                    (Some(s), _) => format!("session <code>{}</code> and its sub-agents", esc(s)),
                },
                expires = g
                    .expires_at
                    .map(time_text)
                    .unwrap_or_else(|| match g.scope {
                        GrantScope::Session => "with the session".into(),
                        _ => "never".into(),
                    }),
                by = esc(&g.approver),
                when = time_text(g.created_at),
            );
        }
        body.push_str("</tbody></table>");
    }
    page(login.csrf(), "grants", "Grants — portcullis", &body)
}

#[derive(Deserialize, Default)]
pub(crate) struct AuditQuery {
    session: Option<String>,
    verdict: Option<String>,
    tool: Option<String>,
    kind: Option<String>,
    /// `YYYY-MM-DD` (UTC), inclusive.
    from: Option<String>,
    /// `YYYY-MM-DD` (UTC), inclusive.
    to: Option<String>,
    before: Option<i64>,
    /// For an export: `jsonl` (the default) or `csv`.
    format: Option<String>,
}

/// The most rows one export holds.
const MAX_EXPORT_ROWS: usize = 100_000;

/// `/audit/export?format=jsonl|csv&…` — the rows the page's filters match,
/// every page of them (up to [`MAX_EXPORT_ROWS`]), as a download.
pub(crate) async fn audit_export(state: Shared, Query(q): Query<AuditQuery>) -> Response {
    let mut filter = audit_filter(&q);
    let csv = q.format.as_deref() == Some("csv");
    let rows = state
        .with_store(move |store| {
            let mut all = Vec::new();
            loop {
                filter.limit = portcullis_store::MAX_AUDIT_PAGE;
                let page = store.audit_query(&filter)?;
                let done = page.len() < portcullis_store::MAX_AUDIT_PAGE;
                filter.before = page.last().map(|r| r.id);
                all.extend(page);
                if done || all.len() >= MAX_EXPORT_ROWS {
                    return Ok::<_, portcullis_store::StoreError>(all);
                }
            }
        })
        .await;
    let rows = match rows {
        Ok(Ok(r)) => r,
        Ok(Err(e)) => return store_error(e),
        Err(e) => return e.into_response(),
    };
    let (body, kind, name) = if csv {
        let field = |s: &str| format!("\"{}\"", s.replace('"', "\"\""));
        let mut out = String::from("id,at,event,session,tool,verdict,detail,hash\n");
        for r in &rows {
            let _ = writeln!(
                out,
                "{},{},{},{},{},{},{},{}",
                r.id,
                r.at,
                field(r.event.kind.as_str()),
                field(r.event.session.as_deref().unwrap_or("")),
                field(r.event.tool.as_deref().unwrap_or("")),
                field(r.event.verdict.map_or("", |v| v.as_str())),
                field(&r.event.detail.to_string()),
                field(&r.hash),
            );
        }
        (out, "text/csv; charset=utf-8", "portcullis-audit.csv")
    } else {
        let mut out = String::new();
        for r in &rows {
            if let Ok(line) = serde_json::to_string(r) {
                out.push_str(&line);
                out.push('\n');
            }
        }
        (out, "application/x-ndjson", "portcullis-audit.jsonl")
    };
    let mut res = body.into_response();
    if let Ok(v) = HeaderValue::from_str(kind) {
        res.headers_mut().insert(header::CONTENT_TYPE, v);
    }
    if let Ok(v) = HeaderValue::from_str(&format!("attachment; filename=\"{name}\"")) {
        res.headers_mut().insert(header::CONTENT_DISPOSITION, v);
    }
    res
}

fn audit_filter(q: &AuditQuery) -> AuditFilter {
    let nonempty = |v: &Option<String>| v.clone().filter(|s| !s.trim().is_empty());
    AuditFilter {
        session: nonempty(&q.session),
        verdict: nonempty(&q.verdict),
        tool: nonempty(&q.tool),
        kind: nonempty(&q.kind),
        since: nonempty(&q.from).and_then(|d| day_start(&d)),
        until: nonempty(&q.to)
            .and_then(|d| day_start(&d))
            .map(|t| t + 86_399),
        before: q.before,
        limit: 100,
    }
}

pub(crate) async fn audit_page(
    state: Shared,
    Extension(login): Extension<Login>,
    Query(q): Query<AuditQuery>,
) -> Response {
    let filter = audit_filter(&q);
    let query = filter.clone();
    let (rows, check, sessions) = match state
        .with_store(move |store| {
            (
                store.audit_query(&query),
                store.verify_audit(),
                store.sessions().unwrap_or_default(),
            )
        })
        .await
    {
        Ok(all) => all,
        Err(e) => return e.into_response(),
    };
    let rows = match rows {
        Ok(r) => r,
        Err(e) => return store_error(e),
    };
    let verify = match check {
        Ok(AuditCheck::Intact { rows }) => format!(
            "<p class=\"ok\" id=\"verify\">Audit chain intact: {rows} rows, each hashed over the one before.</p>"
        ),
        Ok(AuditCheck::Broken { row, why }) => format!(
            "<p class=\"error\" id=\"verify\">Audit chain broken at row {row}: {}</p>",
            esc(&why)
        ),
        Err(e) => format!(
            "<p class=\"error\" id=\"verify\">Could not verify: {}</p>",
            esc(&e.to_string())
        ),
    };
    let field = |name: &str, label: &str, v: &Option<String>, kind: &str| {
        format!(
            "<label>{label}<input type=\"{kind}\" name=\"{name}\" value=\"{}\"></label>",
            esc(v.as_deref().unwrap_or(""))
        )
    };
    let verdicts = ["", "allow", "ask", "deny"]
        .iter()
        .map(|v| {
            format!(
                "<option value=\"{v}\"{}>{}</option>",
                if q.verdict.as_deref().unwrap_or("") == *v {
                    " selected"
                } else {
                    ""
                },
                if v.is_empty() { "any" } else { v }
            )
        })
        .collect::<String>();
    // Choices, not free text: the sessions and tools known, the events there are.
    let chosen = |v: &Option<String>, option: &str| {
        if v.as_deref().unwrap_or("").eq_ignore_ascii_case(option) {
            " selected"
        } else {
            ""
        }
    };
    let mut kinds = format!("<option value=\"\"{}>any</option>", chosen(&q.kind, ""));
    for k in portcullis_store::AuditKind::ALL {
        let _ = write!(
            kinds,
            "<option value=\"{k}\"{}>{k}</option>",
            chosen(&q.kind, k.as_str()),
            k = k.as_str()
        );
    }
    let mut session_list = String::from("<datalist id=\"audit-sessions\">");
    for s in &sessions {
        let _ = write!(session_list, "<option value=\"{}\">", esc(&s.id));
    }
    session_list.push_str("</datalist>");
    let mut tools: Vec<&str> = rows
        .iter()
        .filter_map(|r| r.event.tool.as_deref())
        .collect();
    tools.sort_unstable();
    tools.dedup();
    let mut tool_list = String::from("<datalist id=\"audit-tools\">");
    for t in tools {
        let _ = write!(tool_list, "<option value=\"{}\">", esc(t));
    }
    tool_list.push_str("</datalist>");
    let listed = |name: &str, label: &str, v: &Option<String>, list: &str| {
        format!(
            "<label>{label}<input type=\"text\" name=\"{name}\" list=\"{list}\" value=\"{}\"></label>",
            esc(v.as_deref().unwrap_or(""))
        )
    };
    let mut export = String::new();
    for (k, v) in [
        ("session", &q.session),
        ("verdict", &q.verdict),
        ("tool", &q.tool),
        ("kind", &q.kind),
        ("from", &q.from),
        ("to", &q.to),
    ] {
        if let Some(v) = v.as_deref().filter(|v| !v.is_empty()) {
            let _ = write!(export, "&{k}={}", url_encode(v));
        }
    }
    let mut body = format!(
        "<div class=\"bar\"><h1>Audit</h1><span><a href=\"/audit/export?format=jsonl{export}\" download>Export JSONL</a> · \
         <a href=\"/audit/export?format=csv{export}\" download>Export CSV</a></span></div>{verify}\
         <form class=\"filters\" method=\"get\" action=\"/audit\">{}{}<label>Verdict<select name=\"verdict\">{verdicts}</select></label>\
         <label>Event<select name=\"kind\">{kinds}</select></label>{}{}<button>Filter</button> <a href=\"/audit\">Clear</a>{session_list}{tool_list}</form>",
        listed("session", "Session", &q.session, "audit-sessions"),
        listed("tool", "Tool", &q.tool, "audit-tools"),
        field("from", "From", &q.from, "date"),
        field("to", "To", &q.to, "date"),
    );
    if rows.is_empty() {
        body.push_str("<p class=\"empty\">No audit rows match.</p>");
    } else {
        body.push_str("<table class=\"audit\"><thead><tr><th>#</th><th>Time (UTC)</th><th>Event</th><th>Session</th><th>Tool</th><th>Verdict</th><th>Detail</th></tr></thead><tbody>");
        for r in &rows {
            let verdict = r.event.verdict.map_or("", |v| v.as_str());
            let _ = write!(
                body,
                "<tr><td>{}</td><td>{}</td><td>{}</td><td><code>{}</code></td><td><code>{}</code></td><td><span class=\"verdict v-{v}\">{v}</span></td><td class=\"detail\">{}</td></tr>",
                r.id,
                time_text(r.at),
                esc(r.event.kind.as_str()),
                esc(r.event.session.as_deref().unwrap_or("")),
                esc(r.event.tool.as_deref().unwrap_or("")),
                esc(&detail_text(&r.event.detail)),
                v = esc(verdict),
            );
        }
        body.push_str("</tbody></table>");
        if rows.len() == 100
            && let Some(last) = rows.last()
        {
            let mut next = String::from("/audit?");
            for (k, v) in [
                ("session", &filter.session),
                ("verdict", &filter.verdict),
                ("tool", &filter.tool),
                ("kind", &filter.kind),
                ("from", &q.from),
                ("to", &q.to),
            ] {
                if let Some(v) = v {
                    let _ = write!(next, "{k}={}&", url_encode(v));
                }
            }
            let _ = write!(next, "before={}", last.id);
            let _ = write!(body, "<p><a href=\"{}\">Older rows →</a></p>", esc(&next));
        }
    }
    page(login.csrf(), "audit", "Audit — portcullis", &body)
}

pub(crate) async fn sessions_page(state: Shared, Extension(login): Extension<Login>) -> Response {
    let sessions = match state.with_store(|s| s.sessions()).await {
        Ok(Ok(s)) => s,
        Ok(Err(e)) => return store_error(e),
        Err(e) => return e.into_response(),
    };
    let now = unix_now();
    let mut body = String::from("<div class=\"bar\"><h1>Sessions</h1></div>");
    if sessions.is_empty() {
        body.push_str("<p class=\"empty\">No sessions yet. An agent's first hook call registers its session.</p>");
    } else {
        body.push_str("<table><thead><tr><th>Session</th><th>Agent</th><th>Principal</th><th>Parent</th><th>Workflow</th><th>Workspace</th><th>Started</th><th>State</th></tr></thead><tbody>");
        for s in &sessions {
            let _ = write!(
                body,
                "<tr><td><code>{}</code></td><td>{}</td><td>{}</td><td><code>{}</code></td><td>{}</td><td><code>{}</code></td><td>{}</td><td>{}</td></tr>",
                esc(&s.id),
                esc(s.agent.as_deref().unwrap_or("—")),
                s.kind.as_str(),
                esc(s.parent.as_deref().unwrap_or("—")),
                esc(s.workflow.as_deref().unwrap_or("—")),
                esc(s.cwd.as_deref().unwrap_or("—")),
                time_text(s.created_at),
                if s.is_active(now) {
                    "<span class=\"ok-badge\">active</span>"
                } else if s.revoked_at.is_some() {
                    "<span class=\"muted\">revoked</span>"
                } else {
                    "<span class=\"muted\">expired</span>"
                },
            );
        }
        body.push_str("</tbody></table>");
    }
    page(login.csrf(), "sessions", "Sessions — portcullis", &body)
}

// ----- forms ----------------------------------------------------------------

#[derive(Deserialize)]
pub(crate) struct ResolveForm {
    /// once, session, device, deny, or `deny-session` (a denial that stands
    /// for the session's life).
    scope: String,
    /// With a deny: what the agent reads.
    message: Option<String>,
    /// With an approval: a rule to grant instead of the call (empty: the call).
    rule: Option<String>,
    /// With a rule: `user` or `project` to save it ("always"); empty: not saved.
    save: Option<String>,
    /// `yes` when the person ticked the confirmation a secret or a hazard needs.
    confirm: Option<String>,
}

pub(crate) async fn resolve_form(
    state: Shared,
    Extension(login): Extension<Login>,
    P(id): P<i64>,
    CsrfForm(f): CsrfForm<ResolveForm>,
) -> Response {
    let by = login.approver();
    let (scope, lasting) = match f.scope.as_str() {
        "deny-session" => ("deny", Some("session")),
        other => (other, None),
    };
    let how = match parse_resolution(scope) {
        Ok(h) => h,
        Err(e) => return back("/", Err(e.message)),
    };
    let now = unix_now();
    if let Some(rule) = f.rule.clone().filter(|r| !r.trim().is_empty())
        && how != Resolution::Deny
    {
        let save = f.save.clone().filter(|p| !p.is_empty());
        return resolve_form_with_rule(&state, id, how, rule, save, by, now).await;
    }
    // The message box is on every card: it counts with a deny only.
    let message = f.message.as_deref().filter(|_| how == Resolution::Deny);
    let denial = match portcullis_engine::actions::denial(how, message, lasting, now) {
        Ok(d) => d,
        Err(why) => return back("/", Err(why)),
    };
    let confirmed = f.confirm.as_deref() == Some("yes");
    let result = match state
        .with_store(move |s| {
            // A secret's read or a hazard is allowed only with the person's
            // explicit confirmation (the card's checkbox), whatever the form
            // that was posted.
            if how != Resolution::Deny
                && !confirmed
                && let Ok(Some(r)) = s.request(id)
                && let Some(what) = needs_confirmation(&r)
            {
                return Err(portcullis_store::StoreError::InvalidRequest {
                    why: format!(
                        "request #{id} {what}: tick the confirmation on its card to allow it"
                    ),
                });
            }
            portcullis_engine::actions::resolve_request_with(s, id, how, denial.as_ref(), &by, now)
        })
        .await
    {
        Ok(r) => r,
        Err(e) => return e.into_response(),
    };
    match result {
        Ok((_, Some(g))) => back(
            "/",
            Ok(format!(
                "Request #{id} allowed ({}): grant #{}. The agent may retry.",
                g.scope.as_str(),
                g.id
            )),
        ),
        Ok((r, None)) if r.deny_standing => back(
            "/",
            Ok(format!(
                "Request #{id} denied: the agent reads your message when it tries the same call again{}.",
                if r.deny_until.is_none() {
                    " in this session"
                } else {
                    " within ten minutes"
                }
            )),
        ),
        Ok((_, None)) => back("/", Ok(format!("Request #{id} denied."))),
        Err(e) => back("/", Err(e.to_string())),
    }
}

/// A card allowed with one of its rules ([`AppState::resolve_with_rule`]).
async fn resolve_form_with_rule(
    state: &AppState,
    id: i64,
    how: Resolution,
    rule: String,
    save: Option<String>,
    by: String,
    now: i64,
) -> Response {
    use crate::RuleError;
    match state.resolve_with_rule(id, how, rule, save, by, now).await {
        Ok((_, Some(g), saved_to)) => back(
            "/",
            Ok(format!(
                "Request #{id} allowed ({}) with the rule {}: grant #{}{}. The agent may retry.",
                g.scope.as_str(),
                g.target,
                g.id,
                saved_to
                    .map(|p| format!("; the rule is saved in {p}"))
                    .unwrap_or_default()
            )),
        ),
        Ok((_, None, _)) => back("/", Ok(format!("Request #{id} denied."))),
        Err(
            RuleError::NotFound(why)
            | RuleError::Refused(why)
            | RuleError::BadSave(why)
            | RuleError::Internal(why),
        ) => back("/", Err(why)),
    }
}

#[derive(Deserialize)]
pub(crate) struct Nothing {}

pub(crate) async fn revoke_form(
    state: Shared,
    Extension(login): Extension<Login>,
    P(id): P<i64>,
    CsrfForm(_): CsrfForm<Nothing>,
) -> Response {
    let by = login.approver();
    let revoked = state
        .with_store(move |s| portcullis_engine::actions::revoke_grant(s, id, &by, unix_now()))
        .await;
    let revoked = match revoked {
        Ok(r) => r,
        Err(e) => return e.into_response(),
    };
    match revoked {
        Ok(true) => back(
            "/grants",
            Ok(format!(
                "Grant #{id} revoked: it no longer applies from the next call."
            )),
        ),
        Ok(false) => back("/grants", Err(format!("Grant #{id} is not active."))),
        Err(e) => back("/grants", Err(e.to_string())),
    }
}

#[derive(Deserialize)]
pub(crate) struct PinForm {
    server: String,
    tool: String,
    hash: String,
    decision: String,
}

pub(crate) async fn pin_form(
    state: Shared,
    Extension(login): Extension<Login>,
    CsrfForm(f): CsrfForm<PinForm>,
) -> Response {
    let by = login.approver();
    let approve = match f.decision.as_str() {
        "approve" => true,
        "reject" => false,
        other => return back("/", Err(format!("unknown decision `{other}`"))),
    };
    let (server, tool, hash) = (f.server.clone(), f.tool.clone(), f.hash.clone());
    let result = state
        .with_store(move |s| {
            portcullis_engine::actions::decide_pin(
                s,
                &server,
                &tool,
                &hash,
                approve,
                &by,
                unix_now(),
            )
        })
        .await;
    let result = match result {
        Ok(r) => r,
        Err(e) => return e.into_response(),
    };
    match result {
        Ok(_) if approve => back(
            "/",
            Ok(format!(
                "{} approved: the agent sees it at its next tool listing.",
                McpToolName::new(f.server.as_str(), f.tool.as_str())
            )),
        ),
        Ok(_) => back(
            "/",
            Ok(format!(
                "{} stays withheld.",
                McpToolName::new(f.server.as_str(), f.tool.as_str())
            )),
        ),
        Err(e) => back("/", Err(e.to_string())),
    }
}

/// A form of the UI: the CSRF field must match, or the handler never sees
/// the form. (Who may post at all is the route's [`crate::routes::Access`].)
pub(crate) struct CsrfForm<T>(pub T);

#[derive(Deserialize)]
struct WithCsrf<T> {
    csrf: String,
    #[serde(flatten)]
    form: T,
}

impl<T: serde::de::DeserializeOwned + Send> axum::extract::FromRequest<Arc<AppState>>
    for CsrfForm<T>
{
    type Rejection = Response;
    async fn from_request(
        req: axum::extract::Request,
        state: &Arc<AppState>,
    ) -> Result<Self, Response> {
        // The route's layer put who is posting in the request.
        let login = req
            .extensions()
            .get::<crate::auth::Login>()
            .cloned()
            .ok_or_else(|| ApiError::unauthorized().into_response())?;
        login.may_change().map_err(IntoResponse::into_response)?;
        let Form(f) = Form::<WithCsrf<T>>::from_request(req, state)
            .await
            .map_err(IntoResponse::into_response)?;
        if !login.csrf_matches(&f.csrf) {
            let e = ApiError::new(StatusCode::FORBIDDEN, "csrf", "missing or wrong CSRF token");
            return Err(e.into_response());
        }
        Ok(CsrfForm(f.form))
    }
}

/// Back to a page with a notice (post/redirect/get).
fn back(to: &str, message: Result<String, String>) -> Response {
    let (k, v) = match message {
        Ok(m) => ("notice", m),
        Err(m) => ("error", m),
    };
    Redirect::to(&format!("{to}?{k}={}", url_encode(&v))).into_response()
}

// ----- layout ---------------------------------------------------------------

fn page(csrf: &str, active: &str, title: &str, body: &str) -> Response {
    let nav = [
        ("requests", "/", "Requests"),
        ("grants", "/grants", "Grants"),
        ("audit", "/audit", "Audit"),
        ("sessions", "/sessions", "Sessions"),
    ]
    .iter()
    .map(|(key, href, label)| {
        format!(
            "<a href=\"{href}\"{}>{label}</a>",
            if *key == active {
                " aria-current=\"page\""
            } else {
                ""
            }
        )
    })
    .collect::<String>();
    let html = format!(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <meta name=\"csrf\" content=\"{csrf}\"><title>{title}</title>\
         <link rel=\"stylesheet\" href=\"/assets/style.css\"><script src=\"/assets/app.js\" defer></script></head>\
         <body data-page=\"{active}\"><nav class=\"top\"><span class=\"brand\">portcullis</span>{nav}</nav>\
         <main>{body}</main></body></html>",
        csrf = csrf,
        title = esc(title),
    );
    page_response(&html)
}

fn bare_page(title: &str, body: &str) -> String {
    format!(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"><title>{}</title>\
         <link rel=\"stylesheet\" href=\"/assets/style.css\"></head><body><main>{body}</main></body></html>",
        esc(title)
    )
}

fn page_response(html: &str) -> Response {
    let mut res = Html(html.to_string()).into_response();
    res.headers_mut().insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(CSP),
    );
    res
}

fn store_error(e: portcullis_store::StoreError) -> Response {
    // An error page carries no form: no CSRF token.
    let mut res = page(
        "",
        "",
        "Error — portcullis",
        &format!(
            "<p class=\"error\">The store could not be read: {}</p>",
            esc(&e.to_string())
        ),
    );
    *res.status_mut() = StatusCode::SERVICE_UNAVAILABLE;
    res
}

fn notices(n: &Notice) -> String {
    let mut s = String::new();
    if let Some(m) = &n.notice {
        let _ = write!(s, "<p class=\"ok\" role=\"status\">{}</p>", esc(m));
    }
    if let Some(m) = &n.error {
        let _ = write!(s, "<p class=\"error\" role=\"alert\">{}</p>", esc(m));
    }
    s
}

fn title_with_count(title: &str, n: usize) -> String {
    if n == 0 {
        format!("{title} — portcullis")
    } else {
        format!("({n}) {title} — portcullis")
    }
}

// ----- text -----------------------------------------------------------------

/// The interesting parts of an audit row's detail, short.
fn detail_text(d: &serde_json::Value) -> String {
    let mut parts = Vec::new();
    if let Some(r) = d.get("reasons").and_then(|v| v.as_array()) {
        let codes: Vec<&str> = r.iter().filter_map(|v| v.as_str()).collect();
        if !codes.is_empty() {
            parts.push(codes.join(", "));
        }
    }
    for key in ["request", "grant", "scope", "by", "session"] {
        if let Some(v) = d.get(key).filter(|v| !v.is_null()) {
            let v = v
                .as_str()
                .map(str::to_string)
                .unwrap_or_else(|| v.to_string());
            if v != "[]" {
                parts.push(format!("{key} {v}"));
            }
        }
    }
    if let Some(g) = d
        .get("grants")
        .and_then(|v| v.as_array())
        .filter(|g| !g.is_empty())
    {
        parts.push(format!(
            "grants {}",
            g.iter()
                .map(|v| v.to_string())
                .collect::<Vec<_>>()
                .join(",")
        ));
    }
    parts.join(" · ")
}

/// HTML escaping for text and attribute values.
pub fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

fn url_encode(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// Unix seconds as `YYYY-MM-DD HH:MM:SS` (UTC).
pub fn time_text(t: i64) -> String {
    let days = t.div_euclid(86_400);
    let secs = t.rem_euclid(86_400);
    let (y, m, d) = civil_from_days(days);
    format!(
        "{y:04}-{m:02}-{d:02} {:02}:{:02}:{:02}",
        secs / 3600,
        secs / 60 % 60,
        secs % 60
    )
}

/// `YYYY-MM-DD` → unix seconds at 00:00 UTC.
fn day_start(s: &str) -> Option<i64> {
    let mut it = s.trim().splitn(3, '-');
    let y: i64 = it.next()?.parse().ok()?;
    let m: i64 = it.next()?.parse().ok()?;
    let d: i64 = it.next()?.parse().ok()?;
    if !(1..=12).contains(&m) || !(1..=31).contains(&d) {
        return None;
    }
    Some(days_from_civil(y, m, d) * 86_400)
}

// Howard Hinnant's civil calendar algorithms (proleptic Gregorian).
fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let mp = if m > 2 { m - 3 } else { m + 9 };
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_round_trip_through_the_calendar() {
        assert_eq!(time_text(0), "1970-01-01 00:00:00");
        assert_eq!(time_text(1_796_054_286), "2026-11-30 15:58:06");
        assert_eq!(time_text(951_782_400), "2000-02-29 00:00:00");
        assert_eq!(day_start("2026-11-30"), Some(1_795_996_800));
        assert_eq!(day_start("2026-13-01"), None);
        for t in [0, 86_399, 951_782_400, 1_796_054_286, 4_102_444_800] {
            let day = time_text(t)[..10].to_string();
            assert_eq!(day_start(&day), Some(t - t.rem_euclid(86_400)), "{day}");
        }
    }

    #[test]
    fn escaping_covers_markup_and_attributes() {
        assert_eq!(
            esc("<a href=\"x\">'&'</a>"),
            "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;"
        );
    }
}
