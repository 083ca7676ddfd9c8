//! The one error type of the HTTP surface: every failure is JSON with a stable
//! `code`, a message a person can act on, and the right status.

use axum::Json;
use axum::extract::rejection::{JsonRejection, PathRejection, QueryRejection};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use portcullis_store::StoreError;
use serde_json::{Value, json};

#[derive(Debug)]
pub struct ApiError {
    pub status: StatusCode,
    /// Stable, kebab-case: clients branch on it.
    pub code: &'static str,
    pub message: String,
    /// More fields for the body (e.g. the conflicting session sources).
    pub extra: Option<Value>,
}

impl ApiError {
    pub fn new(status: StatusCode, code: &'static str, message: impl Into<String>) -> Self {
        ApiError {
            status,
            code,
            message: message.into(),
            extra: None,
        }
    }

    pub fn bad_request(code: &'static str, message: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, code, message)
    }

    pub fn unauthorized() -> Self {
        Self::new(
            StatusCode::UNAUTHORIZED,
            "unauthorized",
            "this needs the UI login (open the URL `portcullis serve` printed) or `Authorization: Bearer <token>` with the token in the data directory's `ui-token` file",
        )
    }

    /// 409 `session-conflict`: the call's session sources disagree; the body
    /// lists each source and the session it named.
    pub fn session_conflict(sources: &[(&str, String)], message: impl Into<String>) -> Self {
        let list: Vec<Value> = sources
            .iter()
            .map(|(s, v)| json!({"source": s, "session": v}))
            .collect();
        let mut e = Self::new(StatusCode::CONFLICT, "session-conflict", message);
        e.extra = Some(json!({"sources": list}));
        e
    }

    /// 500 `internal`: a bug (a task that panicked).
    pub fn internal(message: impl Into<String>) -> Self {
        Self::new(StatusCode::INTERNAL_SERVER_ERROR, "internal", message)
    }

    pub fn not_found(what: impl Into<String>) -> Self {
        Self::new(StatusCode::NOT_FOUND, "not-found", what)
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let mut body = json!({"code": self.code, "message": self.message});
        if let (Some(Value::Object(extra)), Value::Object(b)) = (self.extra, &mut body) {
            b.extend(extra);
        }
        (self.status, Json(body)).into_response()
    }
}

impl From<JsonRejection> for ApiError {
    fn from(r: JsonRejection) -> Self {
        let status = r.status();
        let code = match status {
            StatusCode::PAYLOAD_TOO_LARGE => "body-too-large",
            StatusCode::UNSUPPORTED_MEDIA_TYPE => "not-json",
            _ => "bad-json",
        };
        ApiError::new(status, code, r.body_text())
    }
}

impl From<QueryRejection> for ApiError {
    fn from(r: QueryRejection) -> Self {
        ApiError::bad_request("bad-query", r.body_text())
    }
}

impl From<PathRejection> for ApiError {
    fn from(r: PathRejection) -> Self {
        ApiError::bad_request("bad-path", r.body_text())
    }
}

impl From<StoreError> for ApiError {
    fn from(e: StoreError) -> Self {
        use StoreError as E;
        let (status, code) = match &e {
            E::UnknownRequest { .. } => (StatusCode::NOT_FOUND, "unknown-request"),
            E::NotPending { .. } => (StatusCode::CONFLICT, "not-pending"),
            E::DeviceGrantNotReadOnly { .. } => (
                StatusCode::UNPROCESSABLE_ENTITY,
                "device-grant-not-read-only",
            ),
            E::NotEligible { .. } => (StatusCode::UNPROCESSABLE_ENTITY, "not-eligible"),
            E::InactiveSession { .. } => (StatusCode::CONFLICT, "inactive-session"),
            E::InvalidRequest { .. }
            | E::InvalidSession { .. }
            | E::InvalidGrant { .. }
            | E::InvalidDevice { .. } => (StatusCode::UNPROCESSABLE_ENTITY, "invalid"),
            E::AlreadyExists { .. } => (StatusCode::CONFLICT, "already-exists"),
            E::UnknownSession { .. } => (StatusCode::NOT_FOUND, "unknown-session"),
            _ => (StatusCode::SERVICE_UNAVAILABLE, "store-error"),
        };
        ApiError::new(status, code, e.to_string())
    }
}
