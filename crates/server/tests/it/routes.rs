//! Admin routes are safe by construction: every route of the one table
//! (`portcullis_server::routes::table`) is probed without credentials. Only
//! the public ones named here may answer; every other route — whatever it
//! lists or changes — must refuse with 401 before its handler runs.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

use std::sync::Arc;

use axum::body::Body;
use axum::http::{Method, Request, StatusCode, header};
use portcullis_paths::Environment;
use portcullis_policy::Policy;
use portcullis_server::Options;
use portcullis_server::routes::{Access, table};
use tower::ServiceExt;

const HOST: &str = "127.0.0.1:7878";

/// The only routes anyone may use: decisions, health, metrics, the login
/// link, static assets. A new public route must be added here on purpose.
const PUBLIC: &[&str] = &[
    "POST /v1/decide",
    "POST /s/{session}/v1/decide",
    "ANY /s/{session}/mcp/{name}",
    "ANY /s/{session}/mcp/{name}/{*rest}",
    "GET /healthz",
    "GET /metrics",
    "GET /login",
    "GET /assets/style.css",
    "GET /assets/app.js",
];

/// A concrete path for a route pattern.
fn concrete(path: &str) -> String {
    path.replace("{session}", "s1")
        .replace("{name}", "srv")
        .replace("{*rest}", "x")
        .replace("{id}", "1")
}

#[tokio::test]
async fn every_route_but_the_public_ones_refuses_a_caller_without_credentials() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    let env = Environment {
        home: home.display().to_string(),
        config_dir: home.join(".config/portcullis").display().to_string(),
        data_dir: dir.path().join("data").display().to_string(),
    };
    let (state, _) = portcullis_server::state(Options {
        addr: HOST.parse().unwrap(),
        data_dir: dir.path().join("data"),
        store: portcullis_store::Location::Dir(dir.path().join("data")),
        policy: Box::new(Policy::default()),
        env,
        mcp: Default::default(),
        limits: Default::default(),
        tls: None,
    })
    .unwrap();
    let routes: Vec<_> = table().into_iter().map(|(r, _)| r).collect();
    let public: Vec<String> = routes
        .iter()
        .filter(|r| r.access == Access::Public)
        .map(|r| format!("{} {}", r.method, r.path))
        .collect();
    assert_eq!(
        public, PUBLIC,
        "the public routes changed: only decisions, health, metrics, login and assets may be public"
    );
    let mut probed = 0;
    for route in routes.iter().filter(|r| r.access != Access::Public) {
        let methods: Vec<Method> = match route.method {
            "ANY" => vec![Method::GET, Method::POST, Method::DELETE],
            m => vec![m.parse().unwrap()],
        };
        for method in methods {
            let uri = concrete(route.path);
            let mut req = Request::builder()
                .method(method.clone())
                .uri(&uri)
                .header(header::HOST, HOST);
            let body = if method == Method::GET || method == Method::DELETE {
                Body::empty()
            } else if route.path.starts_with("/ui/") {
                req = req.header(header::CONTENT_TYPE, "application/x-www-form-urlencoded");
                Body::from("csrf=x&scope=once&server=a&tool=b&hash=c&decision=approve")
            } else {
                req = req.header(header::CONTENT_TYPE, "application/json");
                Body::from(
                    r#"{"id":"child","parent":"s1","scope":"once","server":"a","tool":"b","hash":"c","approve":true}"#,
                )
            };
            let res = portcullis_server::router(Arc::clone(&state))
                .oneshot(req.body(body).unwrap())
                .await
                .unwrap();
            assert_eq!(
                res.status(),
                StatusCode::UNAUTHORIZED,
                "{method} {uri} ({:?}) answered a caller without credentials",
                route.access
            );
            probed += 1;
        }
    }
    assert!(probed >= 19, "only {probed} routes probed");
}
