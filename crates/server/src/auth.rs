//! Who may use the approval surface, and from where.
//!
//! The approval UI is the prize for an attacker — the agent itself included:
//! an agent that could call it could approve its own requests. Defences:
//! - the server binds loopback by default, and answers only requests whose
//!   `Host` names the bound address or `localhost` (DNS rebinding);
//! - state-changing requests with a foreign `Origin` (or a cross-site
//!   `Sec-Fetch-Site`) are refused;
//! - a login token, made at first start and kept 0600 in the data directory
//!   (which the policy never lets an agent read without a person): the URL
//!   with the token sets an HttpOnly, SameSite=Strict cookie; API clients send
//!   it as `Authorization: Bearer`;
//! - forms and browser API calls carry a CSRF token derived from it.

use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, RwLock};

use portcullis_policy::{Role, ServerUser};

use axum::http::{HeaderMap, Method, header};

use crate::error::ApiError;

/// The login token's file in the data directory.
pub const TOKEN_FILE: &str = "ui-token";
/// The UI's cookie.
pub const COOKIE: &str = "portcullis_ui";
/// How often the server reads its users and their tokens again.
pub const USERS_EVERY: std::time::Duration = std::time::Duration::from_secs(2);
/// The header browser calls carry the CSRF token in.
pub const CSRF_HEADER: &str = "x-csrf-token";

#[derive(Clone)]
pub struct Auth {
    token: String,
    cookie: String,
    csrf: String,
    /// The `[[server.users]]` who have a token (`portcullis users token`).
    users: Arc<RwLock<Vec<UserLogin>>>,
}

/// A user's login: their token's hash, and the cookie and CSRF token derived
/// from it.
#[derive(Clone, Debug)]
struct UserLogin {
    name: String,
    role: Role,
    hash: String,
    cookie: String,
    csrf: String,
}

/// Puts the logins of `configured` users with a token in `slot`.
fn install_users(
    slot: &RwLock<Vec<UserLogin>>,
    configured: &[ServerUser],
    hashes: &[(String, String)],
) {
    let users = configured
        .iter()
        .filter_map(|u| {
            let (_, hash) = hashes.iter().find(|(n, _)| *n == u.name)?;
            let derive = |context: &str| blake3::derive_key(context, hash.as_bytes());
            Some(UserLogin {
                name: u.name.clone(),
                role: u.role,
                hash: hash.clone(),
                cookie: hex(derive("portcullis 2026 user cookie")),
                csrf: hex(derive("portcullis 2026 user csrf token")),
            })
        })
        .collect();
    *slot.write().unwrap_or_else(|p| p.into_inner()) = users;
}

/// Why the token file could not be used.
#[derive(Debug, thiserror::Error)]
#[error("the UI token file {}: {why}", path.display())]
pub struct TokenError {
    pub path: PathBuf,
    pub why: String,
}

fn hex(k: [u8; 32]) -> String {
    k.iter().map(|b| format!("{b:02x}")).collect()
}

impl Auth {
    /// Reads the login token from `data_dir`, creating it (0600) on first
    /// start. Returns whether it was created.
    pub fn load_or_create(data_dir: &Path) -> Result<(Auth, bool), TokenError> {
        let path = data_dir.join(TOKEN_FILE);
        let err = |why: String| TokenError {
            path: path.clone(),
            why,
        };
        match std::fs::read_to_string(&path) {
            Ok(text) => {
                let token = text.trim();
                if token.len() < 32 || !token.bytes().all(|b| b.is_ascii_hexdigit()) {
                    return Err(err(
                        "not a token (64 hex digits): delete it to make a new one".into(),
                    ));
                }
                Ok((Auth::from_token(token), false))
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                let mut bytes = [0u8; 32];
                getrandom::fill(&mut bytes).map_err(|e| err(format!("no randomness: {e}")))?;
                let token: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
                let mut f = std::fs::OpenOptions::new()
                    .write(true)
                    .create_new(true)
                    .mode(0o600)
                    .open(&path)
                    .map_err(|e| err(e.to_string()))?;
                writeln!(f, "{token}").map_err(|e| err(e.to_string()))?;
                Ok((Auth::from_token(&token), true))
            }
            Err(e) => Err(err(e.to_string())),
        }
    }

    pub fn from_token(token: &str) -> Auth {
        let derive = |context: &str| blake3::derive_key(context, token.as_bytes());
        Auth {
            token: token.to_string(),
            cookie: hex(derive("portcullis 2026 ui cookie")),
            csrf: hex(derive("portcullis 2026 csrf token")),
            users: Arc::default(),
        }
    }

    /// The users who may log in: those of `configured` with a token hash in
    /// `hashes` (`user-tokens`), each with their role. Replaces the last set.
    pub fn set_users(&self, configured: &[ServerUser], hashes: &[(String, String)]) {
        install_users(&self.users, configured, hashes);
    }

    /// Loads the users with `load` now, and again every [`USERS_EVERY`] on
    /// a thread of its own, for as long as this `Auth` (or a clone) lives. A
    /// configuration that does not load leaves no user (fail closed).
    pub fn keep_users<F>(&self, load: F)
    where
        F: Fn() -> (Vec<ServerUser>, Vec<(String, String)>) + Send + 'static,
    {
        let (users, hashes) = load();
        install_users(&self.users, &users, &hashes);
        let weak = Arc::downgrade(&self.users);
        let _ = std::thread::Builder::new()
            .name("portcullis-users".into())
            .spawn(move || {
                loop {
                    std::thread::sleep(USERS_EVERY);
                    let Some(slot) = weak.upgrade() else { return };
                    let (users, hashes) = load();
                    install_users(&slot, &users, &hashes);
                }
            });
    }

    pub fn token(&self) -> &str {
        &self.token
    }

    pub fn csrf(&self) -> &str {
        &self.csrf
    }

    /// The `Set-Cookie` value that logs a browser in as `login`.
    pub fn login_cookie(&self, login: &Login) -> String {
        let value = match &login.user {
            None => self.cookie.clone(),
            Some(name) => self
                .users
                .read()
                .unwrap_or_else(|p| p.into_inner())
                .iter()
                .find(|u| u.name == *name)
                .map(|u| u.cookie.clone())
                .unwrap_or_default(),
        };
        format!("{COOKIE}={value}; HttpOnly; SameSite=Strict; Path=/; Max-Age=31536000")
    }

    pub fn token_matches(&self, given: &str) -> bool {
        ct_eq(given.trim().as_bytes(), self.token.as_bytes())
    }

    /// Who a login link's token (or a bearer token) belongs to, if anyone.
    pub fn login_for_token(&self, given: &str, via: Via) -> Option<Login> {
        if self.token_matches(given) {
            return Some(Login::owner(via, &self.csrf));
        }
        let hash = portcullis_store::token_hash(given);
        self.users
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .iter()
            .find(|u| ct_eq(hash.as_bytes(), u.hash.as_bytes()))
            .map(|u| Login::user(via, u))
    }

    /// How the request proves who sent it, if it does.
    pub fn caller(&self, headers: &HeaderMap) -> Option<Login> {
        if let Some(b) = bearer(headers)
            && let Some(login) = self.login_for_token(b, Via::Bearer)
        {
            return Some(login);
        }
        let cookies = headers.get_all(header::COOKIE);
        for value in cookies.iter().filter_map(|v| v.to_str().ok()) {
            for pair in value.split(';') {
                let Some((name, v)) = pair.trim().split_once('=') else {
                    continue;
                };
                if name != COOKIE {
                    continue;
                }
                if ct_eq(v.as_bytes(), self.cookie.as_bytes()) {
                    return Some(Login::owner(Via::Cookie, &self.csrf));
                }
                let users = self.users.read().unwrap_or_else(|p| p.into_inner());
                if let Some(u) = users
                    .iter()
                    .find(|u| ct_eq(v.as_bytes(), u.cookie.as_bytes()))
                {
                    return Some(Login::user(Via::Cookie, u));
                }
            }
        }
        None
    }

    /// The person, for an API call: a bearer token, or the cookie plus the
    /// CSRF header on anything that changes state — and on anything that
    /// changes state, an approver.
    pub fn admin(&self, method: &Method, headers: &HeaderMap) -> Result<Login, ApiError> {
        let login = self.caller(headers).ok_or_else(ApiError::unauthorized)?;
        if is_safe(method) {
            return Ok(login);
        }
        if login.via == Via::Cookie {
            let ok = headers
                .get(CSRF_HEADER)
                .and_then(|v| v.to_str().ok())
                .is_some_and(|v| login.csrf_matches(v));
            if !ok {
                return Err(ApiError::new(
                    axum::http::StatusCode::FORBIDDEN,
                    "csrf",
                    "missing or wrong CSRF token (header X-CSRF-Token)",
                ));
            }
        }
        login.may_change()?;
        Ok(login)
    }
}

/// How a request proved who sent it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Via {
    Bearer,
    Cookie,
}

/// Who sent a request: the owner of the UI token (`user: None`), or a
/// `[[server.users]]` user, with what they may do and their CSRF token.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Login {
    pub via: Via,
    pub user: Option<String>,
    pub role: Role,
    csrf: String,
}

impl Login {
    fn owner(via: Via, csrf: &str) -> Login {
        Login {
            via,
            user: None,
            role: Role::Approver,
            csrf: csrf.to_string(),
        }
    }

    fn user(via: Via, u: &UserLogin) -> Login {
        Login {
            via,
            user: Some(u.name.clone()),
            role: u.role,
            csrf: u.csrf.clone(),
        }
    }

    /// Who approved, as the audit log and grants record it: `api` or `ui`,
    /// with the user's name (`ui:alice`).
    pub fn approver(&self) -> String {
        let base = match self.via {
            Via::Bearer => "api",
            Via::Cookie => "ui",
        };
        match &self.user {
            Some(name) => format!("{base}:{name}"),
            None => base.to_string(),
        }
    }

    /// The CSRF token this login's forms carry.
    pub fn csrf(&self) -> &str {
        &self.csrf
    }

    pub fn csrf_matches(&self, given: &str) -> bool {
        ct_eq(given.as_bytes(), self.csrf.as_bytes())
    }

    /// Whether this login may change anything: approvers may, viewers only look.
    pub fn may_change(&self) -> Result<(), ApiError> {
        match self.role {
            Role::Approver => Ok(()),
            Role::Viewer => Err(ApiError::new(
                axum::http::StatusCode::FORBIDDEN,
                "role",
                format!(
                    "`{}` is a viewer: they may look, not approve, deny or revoke",
                    self.user.as_deref().unwrap_or("")
                ),
            )),
        }
    }
}

/// The bearer token of `Authorization`, if any.
pub fn bearer(headers: &HeaderMap) -> Option<&str> {
    let v = headers.get(header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, token) = v.split_once(' ')?;
    scheme.eq_ignore_ascii_case("bearer").then(|| token.trim())
}

pub fn is_safe(method: &Method) -> bool {
    matches!(*method, Method::GET | Method::HEAD | Method::OPTIONS)
}

/// Constant-time equality: a token compare must not leak how much matched.
fn ct_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// The `Host` values the server answers to.
#[derive(Clone, Debug)]
pub struct Hosts {
    allowed: Vec<String>,
    /// The bound address as a `Host` value.
    bound: String,
    /// `https` when serving TLS, else `http`.
    scheme: &'static str,
}

impl Hosts {
    /// The bound address plus the loopback names, at the bound port.
    pub fn for_addr(addr: std::net::SocketAddr) -> Hosts {
        let port = addr.port();
        let mut allowed = vec![
            format!("localhost:{port}"),
            format!("127.0.0.1:{port}"),
            format!("[::1]:{port}"),
        ];
        let bound = match addr {
            std::net::SocketAddr::V4(a) => format!("{}:{port}", a.ip()),
            std::net::SocketAddr::V6(a) => format!("[{}]:{port}", a.ip()),
        };
        if !allowed.contains(&bound) {
            allowed.push(bound.clone());
        }
        Hosts {
            allowed,
            bound,
            scheme: "http",
        }
    }

    /// The same, served over TLS: pages' origins and the URL are `https://`.
    pub fn with_tls(mut self, tls: bool) -> Hosts {
        self.scheme = if tls { "https" } else { "http" };
        self
    }

    /// Whether the server speaks TLS (its cookie is then `Secure`).
    pub fn is_tls(&self) -> bool {
        self.scheme == "https"
    }

    pub fn allows_host(&self, host: &str) -> bool {
        let host = host.to_ascii_lowercase();
        self.allowed.contains(&host)
    }

    /// An `Origin` header of one of our own pages.
    pub fn allows_origin(&self, origin: &str) -> bool {
        origin
            .strip_prefix(self.scheme)
            .and_then(|o| o.strip_prefix("://"))
            .is_some_and(|h| self.allows_host(h))
    }

    /// The URL people open.
    pub fn base_url(&self) -> String {
        format!("{}://{}", self.scheme, self.bound)
    }
}

/// The checks every request passes before any handler: a `Host` we answer
/// to, and for state-changing requests no foreign `Origin`.
pub fn check_request(hosts: &Hosts, method: &Method, headers: &HeaderMap) -> Result<(), ApiError> {
    use axum::http::StatusCode;
    let host = headers
        .get(header::HOST)
        .and_then(|v| v.to_str().ok())
        .ok_or_else(|| ApiError::bad_request("missing-host", "the request has no Host header"))?;
    if !hosts.allows_host(host) {
        return Err(ApiError::new(
            StatusCode::FORBIDDEN,
            "bad-host",
            format!("Host `{host}` is not this server (DNS rebinding protection)"),
        ));
    }
    if !is_safe(method) {
        if let Some(origin) = headers.get(header::ORIGIN) {
            let origin = origin.to_str().unwrap_or("");
            if !hosts.allows_origin(origin) {
                return Err(ApiError::new(
                    StatusCode::FORBIDDEN,
                    "bad-origin",
                    format!("Origin `{origin}` may not change state here"),
                ));
            }
        }
        if headers
            .get("sec-fetch-site")
            .and_then(|v| v.to_str().ok())
            .is_some_and(|s| s == "cross-site")
        {
            return Err(ApiError::new(
                StatusCode::FORBIDDEN,
                "bad-origin",
                "cross-site requests may not change state here",
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn derived_values_differ_from_the_token_and_each_other() {
        let a = Auth::from_token(&"ab".repeat(32));
        assert_ne!(a.cookie, a.token);
        assert_ne!(a.csrf, a.token);
        assert_ne!(a.csrf, a.cookie);
        assert!(a.token_matches(&"ab".repeat(32)));
        assert!(!a.token_matches(&"ab".repeat(31)));
    }

    #[test]
    fn hosts_are_the_bound_port_only() {
        let h = Hosts::for_addr("127.0.0.1:7878".parse().unwrap());
        assert!(h.allows_host("localhost:7878"));
        assert!(h.allows_host("127.0.0.1:7878"));
        assert!(!h.allows_host("localhost"));
        assert!(!h.allows_host("evil.example:7878"));
        assert!(!h.allows_host("127.0.0.1:7879"));
        assert!(h.allows_origin("http://localhost:7878"));
        assert!(!h.allows_origin("null"));
        assert!(!h.allows_origin("https://localhost:7878"));
    }
}
