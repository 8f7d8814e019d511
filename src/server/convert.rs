//! The CRD conversion endpoint, `POST /convert`: the API server sends a `ConversionReview` when a
//! client reads or writes Cluster, ClusterClass, ClusterResourceSet(Binding) or ExtensionConfig
//! in a version other than the stored one. The decision is `api::convert::review`; this bounds
//! what a request may cost exactly as an admission review (body limit, in-flight place, deadline,
//! off the async workers) and reads the contract versions of referenced kinds from the source.

use axum::extract::Request;
use axum::http::header;
use axum::response::{IntoResponse, Response};

use super::handlers::accept;
use super::AppState;
use crate::api::convert::review::{failure, review_bytes};
use crate::metrics::Rejection;

/// The path the CRDs' `spec.conversion.webhook.clientConfig.service.path` names.
pub const PATH: &str = crate::api::crd::CONVERSION_PATH;

/// Answers one ConversionReview: 413 for a body over the limit, 429 when no in-flight place
/// frees up in time, otherwise 200 with the review (a failed conversion is a `Failure` result in
/// it, as the API server expects).
pub async fn convert(state: AppState, request: Request) -> Response {
    let limits = state.limits;
    let (body, place) = match accept(&state, request, limits.conversion_queue_wait).await {
        Ok(accepted) => accepted,
        Err(refused) => return refused,
    };
    let source = state.source.clone();
    let evaluating = state.metrics.evaluating();
    let evaluation = tokio::task::spawn_blocking(move || {
        let _place = (place, evaluating);
        // The source answers the contract versions of referenced kinds from its CRDs.
        review_bytes(&body, source.as_ref())
    });
    let answer = match tokio::time::timeout(limits.deadline, evaluation).await {
        Ok(Ok(answer)) => answer,
        Ok(Err(_panicked)) => {
            state.metrics.reject(Rejection::Panicked);
            tracing::error!("the conversion panicked on this request; answered as a failure");
            failure(
                "",
                "the conversion failed on this request (an internal error); please report it".into(),
            )
        }
        Err(_late) => {
            state.metrics.reject(Rejection::DeadlineExceeded);
            tracing::error!(
                deadline_ms = limits.deadline.as_millis() as u64,
                "conversion deadline exceeded"
            );
            failure(
                "",
                format!(
                    "the webhook could not convert these objects within {}s",
                    limits.deadline.as_secs_f32()
                ),
            )
        }
    };
    tracing::info!(
        uid = answer.uid,
        status = if answer.failure.is_some() {
            "Failure"
        } else {
            "Success"
        },
        "conversion review"
    );
    ([(header::CONTENT_TYPE, "application/json")], answer.bytes).into_response()
}
