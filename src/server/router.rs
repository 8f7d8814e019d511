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

/// How long past its deadline (and, for a conversion, its queue wait) a request may take
/// before it is answered 408.
const TIMEOUT_MARGIN: Duration = Duration::from_secs(1);

/// The routes over `state`: `POST` on each webhook path and on `/convert`, each under its
/// request timeout (a conversion may also wait its longer queue wait).
pub fn router(state: AppState) -> Router {
    let limits = state.limits;
    let timeout =
        |after: Duration| TimeoutLayer::with_status_code(StatusCode::REQUEST_TIMEOUT, after + TIMEOUT_MARGIN);
    let mut router = Router::new().route(
        convert::PATH,
        post(|State(state): State<AppState>, request: Request| convert::convert(state, request))
            .layer(timeout(limits.conversion_queue_wait + limits.deadline)),
    );
    for webhook in Webhook::ALL {
        router = router.route(
            webhook.path(),
            post(move |State(state): State<AppState>, request: Request| {
                handlers::admit(state, webhook, request)
            })
            .layer(timeout(limits.deadline)),
        );
    }
    router
        .fallback(refusals::not_found)
        .method_not_allowed_fallback(refusals::method_not_allowed)
        .layer(middleware::from_fn_with_state(
            state.clone(),
            refusals::answer_first,
        ))
        .with_state(state)
}
