//! The plain-HTTP side port: `/metrics` (Prometheus text format), `/healthz` (the process
//! answers) and `/readyz` (the caches have synced and shutdown has not begun).

use std::sync::Arc;

use axum::extract::State;
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use prometheus_client::registry::Registry;

use super::Readiness;
use crate::metrics;

/// The content type of the Prometheus text exposition format.
const PROMETHEUS_TEXT: &str = "text/plain; version=0.0.4; charset=utf-8";

#[derive(Clone)]
struct ProbeState {
    registry: Arc<Registry>,
    ready: Readiness,
}

/// The probe and metrics routes.
pub fn router(registry: Arc<Registry>, ready: Readiness) -> Router {
    Router::new()
        .route("/metrics", get(metrics_text))
        .route("/healthz", get(|| async { "ok" }))
        .route("/readyz", get(readyz))
        .with_state(ProbeState { registry, ready })
}

async fn metrics_text(State(state): State<ProbeState>) -> Response {
    match metrics::encode(&state.registry) {
        Ok(text) => ([(header::CONTENT_TYPE, PROMETHEUS_TEXT)], text).into_response(),
        Err(_) => StatusCode::INTERNAL_SERVER_ERROR.into_response(),
    }
}

async fn readyz(State(state): State<ProbeState>) -> Response {
    if (state.ready)() {
        "ok".into_response()
    } else {
        (
            StatusCode::SERVICE_UNAVAILABLE,
            "not ready: caches syncing or shutting down",
        )
            .into_response()
    }
}
