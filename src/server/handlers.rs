//! The admission endpoint: bytes in, `admission::review`, bytes out. It decides nothing; it
//! bounds what a request may cost (a place among the in-flight reviews, the body size, the
//! evaluation's deadline, on the blocking pool so the async workers and the probes never wait
//! on it), measures, logs one span per review, and maps the answer to HTTP.

use std::borrow::Cow;
use std::time::{Duration, Instant};

use axum::body::Bytes;
use axum::extract::Request;
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use kube::core::admission::{AdmissionResponse, AdmissionReview};
use kube::core::response::Status;
use kube::core::DynamicObject;
use serde::Deserialize;
use tokio::sync::OwnedSemaphorePermit;
use tracing::field::Empty;
use tracing::Instrument;

use super::{refusals, AppState};
use crate::admission::{self, Webhook};
use crate::field::truncate;
use crate::metrics::{Rejection, Verdict};

/// The code `admission::review` answers a request it cannot read with.
const BAD_REQUEST: u16 = 400;
/// The longest request field (name, namespace...) a log line repeats.
const MAX_LOGGED: usize = 253;

/// The request fields logged on the span; everything else is skipped unparsed.
#[derive(Debug, Default, Deserialize)]
struct Head<'a> {
    #[serde(borrow, default)]
    request: Option<HeadRequest<'a>>,
}

#[derive(Debug, Default, Deserialize)]
struct HeadRequest<'a> {
    #[serde(borrow, default)]
    uid: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    namespace: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    name: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    operation: Option<Cow<'a, str>>,
}

/// Answers one AdmissionReview posted to `webhook`'s path: 413 for a body over the limit, 429
/// (with `Retry-After`) when no in-flight place frees up in time, otherwise 200 with a review
/// (the API server reads refusals, bad requests, a missed deadline or a crash from the review).
pub async fn admit(state: AppState, webhook: Webhook, request: Request) -> Response {
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
    admit_in(state, webhook, request, span.clone())
        .instrument(span)
        .await
}

async fn admit_in(state: AppState, webhook: Webhook, request: Request, span: tracing::Span) -> Response {
    let started = Instant::now();
    let limits = state.limits;
    let (body, place) = match accept(&state, request, state.limits.queue_wait).await {
        Ok(accepted) => accepted,
        Err(refused) => return refused,
    };
    let mut measurer = state.metrics.measure_review(webhook.path());
    let head = record_head(&span, &body);
    let source = state.source.clone();
    let evaluating = state.metrics.evaluating();
    let evaluation = tokio::task::spawn_blocking(move || {
        let _place = (place, evaluating);
        admission::review(webhook.path(), &body, source.as_ref())
    });
    let review = match tokio::time::timeout(limits.deadline, evaluation).await {
        Ok(Ok(review)) => review,
        Ok(Err(_panicked)) => {
            state.metrics.reject(Rejection::Panicked);
            tracing::error!("the admission rules panicked on this request; answered as an internal error");
            failed(
                head.uid.clone(),
                "the webhook failed on this request (an internal error); please report it",
            )
        }
        Err(_late) => {
            state.metrics.reject(Rejection::DeadlineExceeded);
            tracing::error!(
                deadline_ms = limits.deadline.as_millis() as u64,
                "admission deadline exceeded"
            );
            let message = format!(
                "the webhook could not evaluate this request within {}s; the object is too costly to check",
                limits.deadline.as_secs_f32()
            );
            failed(head.uid.clone(), &message)
        }
    };

    let verdict = verdict(&review);
    let (uid, code, patched) = review.response.as_ref().map_or((String::new(), 0, false), |r| {
        (
            truncate(r.uid.clone(), MAX_LOGGED),
            r.result.code,
            r.patch.is_some(),
        )
    });
    span.record("uid", uid.as_str());
    span.record("code", code);
    span.record("patched", patched);
    span.record("verdict", verdict.as_str());
    measurer.finish(verdict);
    let latency_us = u64::try_from(started.elapsed().as_micros()).unwrap_or(u64::MAX);
    span.record("latency_us", latency_us);
    // One line per review with every field, in text and in JSON alike.
    tracing::info!(
        webhook = webhook.path(),
        kind = webhook.kind.name(),
        uid = uid.as_str(),
        namespace = head.namespace.as_deref(),
        name = head.name.as_deref(),
        operation = head.operation.as_deref(),
        verdict = verdict.as_str(),
        code,
        patched,
        latency_us,
        "admission review"
    );
    match admission::encode_review(&review) {
        Ok(bytes) => ([(header::CONTENT_TYPE, "application/json")], bytes).into_response(),
        Err(err) => {
            tracing::error!(error = %err, "cannot encode the AdmissionReview");
            StatusCode::INTERNAL_SERVER_ERROR.into_response()
        }
    }
}

/// What the span records of the request before it is evaluated; the uid is kept for an answer
/// the rules did not give.
#[derive(Default)]
struct HeadFields {
    uid: Option<String>,
    namespace: Option<String>,
    name: Option<String>,
    operation: Option<String>,
}

fn record_head(span: &tracing::Span, body: &Bytes) -> HeadFields {
    let head: Head = serde_json::from_slice(body).unwrap_or_default();
    let Some(request) = &head.request else {
        return HeadFields::default();
    };
    let logged = |value: &Option<Cow<'_, str>>| value.as_deref().map(|v| truncate(v.to_owned(), MAX_LOGGED));
    let fields = HeadFields {
        uid: logged(&request.uid),
        namespace: logged(&request.namespace),
        name: logged(&request.name),
        operation: logged(&request.operation),
    };
    span.record("namespace", fields.namespace.as_deref());
    span.record("name", fields.name.as_deref());
    span.record("operation", fields.operation.as_deref());
    fields
}

/// A review answering a request the rules could not answer (code 500), echoing its uid.
fn failed(uid: Option<String>, message: &str) -> AdmissionReview<DynamicObject> {
    let mut response = AdmissionResponse::invalid(message);
    response.uid = uid.unwrap_or_default();
    response.result = Status::failure(message, "InternalError").with_code(500);
    response.into_review()
}

/// Takes a request within the bounds every review endpoint has: its declared length within the
/// body limit, a place among the in-flight reviews within the queue wait, the body read within
/// the limit. The body and the place (held until the evaluation ends), or the refusal.
pub(super) async fn accept(
    state: &AppState,
    request: Request,
    queue_wait: Duration,
) -> Result<(Bytes, OwnedSemaphorePermit), Response> {
    let limits = state.limits;
    let declared = request
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok()?.parse::<usize>().ok());
    if declared.is_some_and(|length| length > limits.max_body_bytes) {
        return Err(refuse(state, Rejection::BodyTooLarge, queue_wait));
    }
    let place = tokio::time::timeout(queue_wait, state.in_flight.clone().acquire_owned()).await;
    let Ok(Ok(place)) = place else {
        return Err(refuse(state, Rejection::Overloaded, queue_wait));
    };
    let Ok(body) = axum::body::to_bytes(request.into_body(), limits.max_body_bytes).await else {
        return Err(refuse(state, Rejection::BodyTooLarge, queue_wait));
    };
    Ok((body, place))
}

/// The answer to a request refused before evaluation (a Kubernetes `Status`), counted;
/// `waited` is how long it waited for an evaluation place.
fn refuse(state: &AppState, reason: Rejection, waited: Duration) -> Response {
    state.metrics.reject(reason);
    tracing::warn!(reason = reason.as_str(), "admission request refused");
    match reason {
        Rejection::Overloaded => {
            let mut response = refusals::status(
                StatusCode::TOO_MANY_REQUESTS,
                "TooManyRequests",
                &format!(
                    "too many reviews in flight: all {} evaluation places stayed taken for {} ms; retry",
                    state.limits.max_in_flight,
                    waited.as_millis()
                ),
            );
            response
                .headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
            response
        }
        _ => refusals::status(
            StatusCode::PAYLOAD_TOO_LARGE,
            "RequestEntityTooLarge",
            &format!(
                "the request body is over the webhook's limit of {} bytes (--max-body-bytes)",
                state.limits.max_body_bytes
            ),
        ),
    }
}

fn verdict(review: &AdmissionReview<DynamicObject>) -> Verdict {
    match &review.response {
        Some(response) if response.allowed => Verdict::Allowed,
        Some(response) if response.result.code != BAD_REQUEST && response.result.code < 500 => {
            Verdict::Denied
        }
        _ => Verdict::Error,
    }
}
