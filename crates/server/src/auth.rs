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

use axum::http::{HeaderMap, Method, header};

use crate::error::ApiError;

/// The login token's file in the data directory.
pub const TOKEN_FILE: &str = "ui-token";
/// The UI's cookie.
pub const COOKIE: &str = "portcullis_ui";
/// The header browser calls carry the CSRF token in.
pub const CSRF_HEADER: &str = "x-csrf-token";

#[derive(Clone)]
pub struct Auth {
    token: String,
    cookie: String,
    csrf: String,
}

/// Why the token file could not be used.
#[derive(Debug, thiserror::Error)]
#[error("the UI token file {}: {why}", path.display())]
pub struct TokenError {
    pub path: PathBuf,
    pub why: String,
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
        let hex = |k: [u8; 32]| k.iter().map(|b| format!("{b:02x}")).collect::<String>();
        Auth {
            token: token.to_string(),
            cookie: hex(derive("portcullis 2026 ui cookie")),
            csrf: hex(derive("portcullis 2026 csrf token")),
        }
    }

    pub fn token(&self) -> &str {
        &self.token
    }

    pub fn csrf(&self) -> &str {
        &self.csrf
    }

    /// The `Set-Cookie` value that logs a browser in.
    pub fn login_cookie(&self) -> String {
        format!(
            "{COOKIE}={}; HttpOnly; SameSite=Strict; Path=/; Max-Age=31536000",
            self.cookie
        )
    }

    pub fn token_matches(&self, given: &str) -> bool {
        ct_eq(given.trim().as_bytes(), self.token.as_bytes())
    }

    pub fn csrf_matches(&self, given: &str) -> bool {
        ct_eq(given.as_bytes(), self.csrf.as_bytes())
    }

    /// How the request proves it comes from the person, if it does.
    pub fn caller(&self, headers: &HeaderMap) -> Option<Login> {
        if let Some(b) = bearer(headers)
            && self.token_matches(b)
        {
            return Some(Login::Bearer);
        }
        let cookies = headers.get_all(header::COOKIE);
        for value in cookies.iter().filter_map(|v| v.to_str().ok()) {
            for pair in value.split(';') {
                if let Some((name, v)) = pair.trim().split_once('=')
                    && name == COOKIE
                    && ct_eq(v.as_bytes(), self.cookie.as_bytes())
                {
                    return Some(Login::Cookie);
                }
            }
        }
        None
    }

    /// The person, for an API call: a bearer token, or the cookie plus the
    /// CSRF header on anything that changes state.
    pub fn admin(&self, method: &Method, headers: &HeaderMap) -> Result<Login, ApiError> {
        match self.caller(headers) {
            Some(Login::Bearer) => Ok(Login::Bearer),
            Some(Login::Cookie) if is_safe(method) => Ok(Login::Cookie),
            Some(Login::Cookie) => {
                let ok = headers
                    .get(CSRF_HEADER)
                    .and_then(|v| v.to_str().ok())
                    .is_some_and(|v| self.csrf_matches(v));
                if ok {
                    Ok(Login::Cookie)
                } else {
                    Err(ApiError::new(
                        axum::http::StatusCode::FORBIDDEN,
                        "csrf",
                        "missing or wrong CSRF token (header X-CSRF-Token)",
                    ))
                }
            }
            None => Err(ApiError::unauthorized()),
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Login {
    Bearer,
    Cookie,
}

impl Login {
    /// Who approved, as the audit log and grants record it.
    pub fn approver(self) -> &'static str {
        match self {
            Login::Bearer => "api",
            Login::Cookie => "ui",
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
