//! The `/convert` endpoint: bytes in, `api::convert::review`, bytes out, within the bounds an
//! admission review has (body size, a place among the in-flight reviews, the deadline). The
//! referenced CRDs' contract versions come from the server's object source.

use axum::extract::Request;
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::Value;

use super::AppState;
use crate::api::convert::review::review_bytes;
use crate::store::SourceContractVersions;

/// The path the CRDs' conversion webhooks call.
pub const CONVERT_PATH: &str = "/convert";

/// Answers one ConversionReview: 413 over the body limit, 429 with no place in time, otherwise
/// 200 with the review (a conversion failure is a `Failure` result in it).
pub async fn convert(state: AppState, request: Request) -> Response {
    let limits = state.limits;
    let declared = request
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok()?.parse::<usize>().ok());
    if declared.is_some_and(|length| length > limits.max_body_bytes) {
        return too_large(&state);
    }
    let place = tokio::time::timeout(limits.queue_wait, state.in_flight.clone().acquire_owned()).await;
    let Ok(Ok(place)) = place else {
        return (
            StatusCode::TOO_MANY_REQUESTS,
            [(header::RETRY_AFTER, "1")],
            "too many reviews in flight\n",
        )
            .into_response();
    };
    let Ok(body) = axum::body::to_bytes(request.into_body(), limits.max_body_bytes).await else {
        return too_large(&state);
    };
    let source = state.source.clone();
    let conversion = tokio::task::spawn_blocking(move || {
        let _place = place;
        review_bytes(&body, &SourceContractVersions(source.as_ref()))
    });
    let review: Value = match tokio::time::timeout(limits.deadline, conversion).await {
        Ok(Ok(review)) => review,
        Ok(Err(_panicked)) => {
            tracing::error!("the conversion panicked on this request");
            return StatusCode::INTERNAL_SERVER_ERROR.into_response();
        }
        Err(_late) => {
            tracing::error!(
                deadline_ms = limits.deadline.as_millis() as u64,
                "conversion deadline exceeded"
            );
            return StatusCode::SERVICE_UNAVAILABLE.into_response();
        }
    };
    let response = &review["response"];
    tracing::info!(
        uid = response["uid"].as_str().unwrap_or(""),
        result = response["result"]["status"].as_str().unwrap_or(""),
        message = response["result"]["message"].as_str(),
        objects = response["convertedObjects"].as_array().map_or(0, Vec::len),
        "conversion review"
    );
    ([(header::CONTENT_TYPE, "application/json")], review.to_string()).into_response()
}

fn too_large(state: &AppState) -> Response {
    (
        StatusCode::PAYLOAD_TOO_LARGE,
        format!("request body over {} bytes\n", state.limits.max_body_bytes),
    )
        .into_response()
}
