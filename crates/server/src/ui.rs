pub fn routes() -> axum::Router<std::sync::Arc<crate::AppState>> { axum::Router::new() }
