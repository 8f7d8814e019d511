//! The webhook router: one POST route per [`Webhook`] and the CRD conversion route `/convert`,
//! under a request timeout past the evaluation deadline (a safety net: the handlers answer at
//! their deadline), with every refusal readable over both protocols ([`refusals`]).

use std::time::Duration;

use axum::extract::{Request, State};
use axum::http::StatusCode;
use axum::routing::post;
use axum::{middleware, Router};
use tower_http::timeout::TimeoutLayer;

use super::{convert, handlers, refusals, AppState};
use crate::admission::Webhook;

/// How long past the evaluation deadline a request may take before it is answered 408.
const TIMEOUT_MARGIN: Duration = Duration::from_secs(1);

/// The routes over `state`: `POST` on each webhook path and on `/convert`.
pub fn router(state: AppState) -> Router {
    let timeout = state.limits.deadline + TIMEOUT_MARGIN;
    let mut router = Router::new().route(
        convert::PATH,
        post(|State(state): State<AppState>, request: Request| convert::convert(state, request)),
    );
    for webhook in Webhook::ALL {
        router = router.route(
            webhook.path(),
            post(move |State(state): State<AppState>, request: Request| {
                handlers::admit(state, webhook, request)
            }),
        );
    }
    router
        .fallback(refusals::not_found)
        .method_not_allowed_fallback(refusals::method_not_allowed)
        .layer(TimeoutLayer::with_status_code(
            StatusCode::REQUEST_TIMEOUT,
            timeout,
        ))
        .layer(middleware::from_fn_with_state(
            state.clone(),
            refusals::answer_first,
        ))
        .with_state(state)
}
