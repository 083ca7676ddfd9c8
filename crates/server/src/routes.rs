//! Every route of the server, in one table, with who may use it.
//!
//! Access is part of the route: [`router`] wraps each handler in the check
//! its [`Access`] names (a layer), so a handler cannot forget it. Only
//! decisions, health, metrics, the login link and the static assets are
//! public; `tests/it/routes.rs` probes every entry without credentials and
//! fails on any other route that answers.

use std::sync::Arc;

use axum::Router;
use axum::extract::{Request, State};
use axum::http::HeaderMap;
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{MethodRouter, any, delete, get, post};

use crate::error::ApiError;
use crate::{AppState, api, auth, mcp, ui};

/// Who may use a route.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Access {
    /// Anyone past the `Host`/`Origin` guard: a decision (a session's grants
    /// apply only with its token), health, metrics, the login link, assets.
    Public,
    /// The person: the bearer token, or the login cookie (with the CSRF
    /// header on a state change). A JSON 401 otherwise.
    Person,
    /// A page of the UI: the person; the locked page (401) otherwise.
    Page,
    /// A form of the UI: the person; its CSRF field is checked by the
    /// form's extractor (`ui::CsrfForm`).
    Form,
    /// Registering a session: the person, or a bearer token that the
    /// handler must prove is the parent session's own.
    PersonOrSessionToken,
    /// An enrolled device (`X-Portcullis-Device`), for what its own hooks
    /// need beyond a decision: a JSON 401 otherwise. Never a person's route.
    Device,
}

/// One route: its method (`ANY` for every method), path and access.
#[derive(Clone, Copy, Debug)]
pub struct Route {
    pub method: &'static str,
    pub path: &'static str,
    pub access: Access,
}

const fn r(method: &'static str, path: &'static str, access: Access) -> Route {
    Route {
        method,
        path,
        access,
    }
}

type Handler = MethodRouter<Arc<AppState>>;

/// The one list of routes.
pub fn table() -> Vec<(Route, Handler)> {
    use Access::*;
    let asset = |(body, kind): (&'static str, &'static str)| get(move || ui::asset(body, kind));
    vec![
        // Decisions: an agent's front door (the MCP bridge over HTTP too).
        (r("POST", "/v1/decide", Public), post(api::decide)),
        (
            r("POST", "/s/{session}/v1/decide", Public),
            post(api::decide_in_session),
        ),
        (r("ANY", "/s/{session}/mcp/{name}", Public), any(mcp::front)),
        (
            r("ANY", "/s/{session}/mcp/{name}/{*rest}", Public),
            any(mcp::front_rest),
        ),
        (
            r("POST", "/v1/device/requests/{id}/hold", Device),
            post(api::device_hold),
        ),
        (r("GET", "/healthz", Public), get(api::healthz)),
        (r("GET", "/metrics", Public), get(api::metrics)),
        (r("GET", "/login", Public), get(ui::login)),
        (r("GET", "/assets/style.css", Public), asset(ui::STYLE_CSS)),
        (r("GET", "/assets/app.js", Public), asset(ui::APP_JS)),
        // The JSON API: the person's.
        (
            r("POST", "/v1/sessions", PersonOrSessionToken),
            post(api::register_session),
        ),
        (r("GET", "/v1/sessions", Person), get(api::list_sessions)),
        (r("GET", "/v1/requests", Person), get(api::list_requests)),
        (
            r("POST", "/v1/requests/{id}/resolve", Person),
            post(api::resolve_request),
        ),
        (r("GET", "/v1/grants", Person), get(api::list_grants)),
        (
            r("DELETE", "/v1/grants/{id}", Person),
            delete(api::revoke_grant),
        ),
        (r("GET", "/v1/devices", Person), get(api::list_devices)),
        (r("POST", "/v1/devices", Person), post(api::enroll_device)),
        (
            r("DELETE", "/v1/devices/{name}", Person),
            delete(api::revoke_device),
        ),
        (r("GET", "/v1/pins", Person), get(api::list_pins)),
        (
            r("POST", "/v1/pins/resolve", Person),
            post(api::resolve_pin),
        ),
        (r("GET", "/v1/audit", Person), get(api::audit)),
        (r("GET", "/v1/audit/verify", Person), get(api::audit_verify)),
        (r("GET", "/v1/events", Person), get(api::events)),
        // The approval UI.
        (r("GET", "/", Page), get(ui::requests_page)),
        (r("GET", "/grants", Page), get(ui::grants_page)),
        (r("GET", "/audit", Page), get(ui::audit_page)),
        (r("GET", "/audit/export", Page), get(ui::audit_export)),
        (r("GET", "/sessions", Page), get(ui::sessions_page)),
        (
            r("GET", "/fragments/requests", Person),
            get(ui::requests_fragment),
        ),
        (
            r("POST", "/ui/requests/{id}/resolve", Form),
            post(ui::resolve_form),
        ),
        (
            r("POST", "/ui/grants/{id}/revoke", Form),
            post(ui::revoke_form),
        ),
        (r("POST", "/ui/pins/resolve", Form), post(ui::pin_form)),
    ]
}

/// The routes of [`table`], each behind the check of its access.
pub fn router(state: &Arc<AppState>) -> Router<Arc<AppState>> {
    let mut router = Router::new();
    for (route, handler) in table() {
        let st = Arc::clone(state);
        let handler = match route.access {
            Access::Public => handler,
            Access::Person => handler.route_layer(middleware::from_fn_with_state(st, person)),
            Access::Page => handler.route_layer(middleware::from_fn_with_state(st, page)),
            Access::Form => handler.route_layer(middleware::from_fn_with_state(st, form)),
            Access::PersonOrSessionToken => {
                handler.route_layer(middleware::from_fn_with_state(st, person_or_token))
            }
            Access::Device => handler.route_layer(middleware::from_fn_with_state(st, device)),
        };
        router = router.route(route.path, handler);
    }
    router
}

/// The person, for the API: the login (bearer, or cookie with the CSRF
/// header on a state change) goes into the request for the handler.
async fn person(State(state): State<Arc<AppState>>, mut req: Request, next: Next) -> Response {
    match state.auth.admin(req.method(), req.headers()) {
        Ok(login) => {
            req.extensions_mut().insert(login);
            next.run(req).await
        }
        Err(e) => e.into_response(),
    }
}

/// An enrolled device: its name for the handler; a JSON 401 otherwise.
async fn device(State(state): State<Arc<AppState>>, mut req: Request, next: Next) -> Response {
    match api::device_of(&state, req.headers()).await {
        Ok(Some(name)) => {
            req.extensions_mut().insert(api::DeviceName(name));
            next.run(req).await
        }
        Ok(None) => ApiError::unauthorized().into_response(),
        Err(e) => e.into_response(),
    }
}

/// The person, for a page: the locked page otherwise.
async fn page(State(state): State<Arc<AppState>>, mut req: Request, next: Next) -> Response {
    match state.auth.caller(req.headers()) {
        Some(login) => {
            req.extensions_mut().insert(login);
            next.run(req).await
        }
        None => ui::locked(&state, "This browser is not logged in."),
    }
}

/// The person, for a form post (the CSRF field is the form extractor's).
async fn form(State(state): State<Arc<AppState>>, mut req: Request, next: Next) -> Response {
    match state.auth.caller(req.headers()) {
        Some(login) => {
            req.extensions_mut().insert(login);
            next.run(req).await
        }
        None => ApiError::unauthorized().into_response(),
    }
}

/// The person, or some bearer token for the handler to prove.
async fn person_or_token(
    State(state): State<Arc<AppState>>,
    mut req: Request,
    next: Next,
) -> Response {
    match state.auth.admin(req.method(), req.headers()) {
        Ok(login) => {
            req.extensions_mut().insert(login);
            next.run(req).await
        }
        Err(_) if has_bearer(req.headers()) => next.run(req).await,
        Err(e) => e.into_response(),
    }
}

fn has_bearer(headers: &HeaderMap) -> bool {
    auth::bearer(headers).is_some_and(|b| !b.is_empty())
}
