//! The webhook router: one POST route per [`Webhook`], under a request timeout past the
//! evaluation deadline (a safety net: the handler answers at its deadline).

use std::time::Duration;

use axum::extract::{Request, State};
use axum::http::StatusCode;
use axum::routing::post;
use axum::Router;
use tower_http::timeout::TimeoutLayer;

use super::{handlers, AppState};
use crate::admission::Webhook;

/// How long past the evaluation deadline a request may take before it is answered 408.
const TIMEOUT_MARGIN: Duration = Duration::from_secs(1);

/// The admission routes over `state`: `POST` on each webhook path, and `POST /convert`.
pub fn router(state: AppState) -> Router {
    let timeout = state.limits.deadline + TIMEOUT_MARGIN;
    let mut router = Router::new();
    for webhook in Webhook::ALL {
        router = router.route(
            webhook.path(),
            post(move |State(state): State<AppState>, request: Request| {
                handlers::admit(state, webhook, request)
            }),
        );
    }
    router = router.route(
        super::CONVERT_PATH,
        post(|State(state): State<AppState>, request: Request| super::conversion::convert(state, request)),
    );
    router
        .layer(TimeoutLayer::with_status_code(
            StatusCode::REQUEST_TIMEOUT,
            timeout,
        ))
        .with_state(state)
}
