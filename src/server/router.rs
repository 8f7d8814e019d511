//! The webhook router: one POST route per [`Webhook`], with the body limit and request timeout.

use std::time::Duration;

use axum::body::Bytes;
use axum::extract::{DefaultBodyLimit, State};
use axum::http::StatusCode;
use axum::routing::post;
use axum::Router;
use tower_http::timeout::TimeoutLayer;

use super::{handlers, AppState};
use crate::admission::{Webhook, MAX_BODY_BYTES};

/// How long one request may take, body included, before it is answered 408. The API server
/// gives up after the webhook's `timeoutSeconds` (10) anyway.
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(10);

/// The admission routes over `state`: `POST` on each webhook path. Bodies are limited to
/// [`MAX_BODY_BYTES`] (an object and its old version under the API server's request cap, well
/// above axum's 2 MB default), answered 413 beyond.
pub fn router(state: AppState) -> Router {
    let mut router = Router::new();
    for webhook in Webhook::ALL {
        router = router.route(
            webhook.path(),
            post(move |State(state): State<AppState>, body: Bytes| handlers::admit(state, webhook, body)),
        );
    }
    router
        .layer(DefaultBodyLimit::max(MAX_BODY_BYTES))
        .layer(TimeoutLayer::with_status_code(
            StatusCode::REQUEST_TIMEOUT,
            REQUEST_TIMEOUT,
        ))
        .with_state(state)
}
