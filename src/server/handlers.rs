//! The admission endpoint: bytes in, `admission::review`, bytes out. It decides nothing; it
//! measures, logs one span per review, and maps the answer to HTTP.

use std::borrow::Cow;

use axum::body::Bytes;
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use kube::core::admission::AdmissionReview;
use kube::core::DynamicObject;
use serde::Deserialize;
use tracing::field::Empty;

use super::AppState;
use crate::admission::{self, Webhook};
use crate::metrics::Verdict;

/// The code `admission::review` answers a request it cannot read with.
const BAD_REQUEST: u16 = 400;

/// The request fields logged on the span; everything else is skipped unparsed.
#[derive(Debug, Default, Deserialize)]
struct Head<'a> {
    #[serde(borrow, default)]
    request: Option<HeadRequest<'a>>,
}

#[derive(Debug, Default, Deserialize)]
struct HeadRequest<'a> {
    #[serde(borrow, default)]
    namespace: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    name: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    operation: Option<Cow<'a, str>>,
}

/// Answers one AdmissionReview posted to `webhook`'s path. Always 200 with a review: the API
/// server reads refusals and bad requests from the review, not from the HTTP status.
pub async fn admit(state: AppState, webhook: Webhook, body: Bytes) -> Response {
    let span = tracing::info_span!(
        "admission_review",
        webhook = webhook.path(),
        kind = webhook.kind.name(),
        uid = Empty,
        namespace = Empty,
        name = Empty,
        operation = Empty,
        verdict = Empty,
        code = Empty,
        patched = Empty,
        latency_us = Empty,
    );
    let _entered = span.enter();
    let mut measurer = state.metrics.measure_review(webhook);
    let head: Head = serde_json::from_slice(&body).unwrap_or_default();
    if let Some(request) = &head.request {
        span.record("namespace", request.namespace.as_deref());
        span.record("name", request.name.as_deref());
        span.record("operation", request.operation.as_deref());
    }

    let review = admission::review(webhook.path(), &body, state.source.as_ref());

    let verdict = verdict(&review);
    if let Some(response) = &review.response {
        span.record("uid", response.uid.as_str());
        span.record("code", response.result.code);
        span.record("patched", response.patch.is_some());
    }
    span.record("verdict", verdict.as_str());
    let latency = measurer.finish(verdict);
    span.record(
        "latency_us",
        u64::try_from(latency.as_micros()).unwrap_or(u64::MAX),
    );
    match admission::encode_review(&review) {
        Ok(bytes) => ([(header::CONTENT_TYPE, "application/json")], bytes).into_response(),
        Err(err) => {
            tracing::error!(error = %err, "cannot encode the AdmissionReview");
            StatusCode::INTERNAL_SERVER_ERROR.into_response()
        }
    }
}

fn verdict(review: &AdmissionReview<DynamicObject>) -> Verdict {
    match &review.response {
        Some(response) if response.allowed => Verdict::Allowed,
        Some(response) if response.result.code != BAD_REQUEST => Verdict::Denied,
        _ => Verdict::Error,
    }
}
