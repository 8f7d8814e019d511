//! Refusals every client can read, over HTTP/2 as over HTTP/1.1.
//!
//! A request may be answered before its body is read: 413 (declared or found over the limit),
//! 429 (no evaluation place), 404, 405, 431. hyper's HTTP/2 server resets a stream whose request
//! body is dropped: with `CANCEL` while the answer is not sent yet (the client then sees no status
//! at all, curl a "stream error"), with `NO_ERROR` once it is (RFC 9113 §8.1: an answer before
//! the upload ended, which Go's client, the API server's, accepts; curl 7.88 still reports a
//! stream error). So every request body is lent to the routes, and what a route leaves unread
//! comes back here and rides along with the answer's body. Once the answer's last byte is sent,
//! the rest of the upload is read and discarded, up to [`DRAIN_FACTOR`] times the body limit and
//! within [`DRAIN_TIME`], so that an HTTP/2 stream ends cleanly for every client (a longer upload
//! gets RST_STREAM(NO_ERROR)), and an HTTP/1.1 answer, which says `Connection: close`, is not
//! destroyed by the reset a close on unread data sends.
//!
//! Every refusal is a Kubernetes `Status` (`kind: Status`, `apiVersion: v1`): the API server's
//! webhook client decodes it and shows its message to the user.

use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};
use std::time::Duration;

use axum::body::{Body, Bytes, HttpBody};
use axum::extract::{Request, State};
use axum::http::{header, HeaderMap, HeaderValue, Method, StatusCode, Uri, Version};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use http_body_util::BodyExt;
use hyper::body::{Frame, SizeHint};
use serde_json::json;

use super::AppState;
use crate::metrics::Rejection;

/// What HTTP/2 counts per header field beyond its name and value (RFC 9113 §6.5.2).
const FIELD_OVERHEAD: usize = 32;
/// How many times the body limit of an unread HTTP/2 upload is discarded after the answer.
const DRAIN_FACTOR: usize = 2;
/// How long an unread HTTP/2 upload is discarded after the answer (the API server's webhook
/// timeout).
const DRAIN_TIME: Duration = Duration::from_secs(10);

/// A refusal as a Kubernetes `Status` with `code`, `reason` (a `StatusReason`, or empty) and
/// `message`.
pub fn status(code: StatusCode, reason: &str, message: &str) -> Response {
    let mut status = json!({
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": message,
        "code": code.as_u16(),
    });
    if !reason.is_empty() {
        status["reason"] = json!(reason);
    }
    (
        code,
        [(header::CONTENT_TYPE, "application/json")],
        status.to_string(),
    )
        .into_response()
}

/// The middleware around every admission route: a header list over the limit is answered 431;
/// otherwise the route runs on a lent body, and whatever it left unread is held until its answer
/// has been sent (see the module comment).
pub async fn answer_first(State(state): State<AppState>, request: Request, next: Next) -> Response {
    let limit = state.limits.max_header_bytes;
    let drain = state.limits.max_body_bytes.saturating_mul(DRAIN_FACTOR);
    let version = request.version();
    let (parts, body) = request.into_parts();
    let returned = Arc::new(Mutex::new(None));
    let response = if header_bytes(&parts.headers, &parts.uri) > limit {
        state.metrics.reject(Rejection::HeadersTooLarge);
        tracing::warn!(
            reason = Rejection::HeadersTooLarge.as_str(),
            "admission request refused"
        );
        *returned.lock().unwrap_or_else(PoisonError::into_inner) = Some(body);
        status(
            StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE,
            "",
            &format!("request header fields over {limit} bytes"),
        )
    } else {
        let lent = Body::new(Lent {
            body: Some(body),
            ended: false,
            home: returned.clone(),
        });
        next.run(Request::from_parts(parts, lent)).await
    };
    let unread = returned.lock().unwrap_or_else(PoisonError::into_inner).take();
    match unread {
        Some(upload) => hold(response, upload, drain, version),
        None => response,
    }
}

/// 404 for a path no webhook is served at.
pub async fn not_found(uri: Uri) -> Response {
    status(
        StatusCode::NOT_FOUND,
        "NotFound",
        &format!("no webhook is served at {}", uri.path()),
    )
}

/// 405 for a method other than POST on a webhook path.
pub async fn method_not_allowed(method: Method, uri: Uri) -> Response {
    let mut response = status(
        StatusCode::METHOD_NOT_ALLOWED,
        "MethodNotAllowed",
        &format!("{method} is not allowed on {}: reviews are POSTed", uri.path()),
    );
    response
        .headers_mut()
        .insert(header::ALLOW, HeaderValue::from_static("POST"));
    response
}

/// The size of a request's header list as HTTP/2 counts it, its path included.
fn header_bytes(headers: &HeaderMap, uri: &Uri) -> usize {
    let fields: usize = headers
        .iter()
        .map(|(name, value)| name.as_str().len() + value.len() + FIELD_OVERHEAD)
        .sum();
    fields + uri.path_and_query().map_or(0, |p| p.as_str().len()) + FIELD_OVERHEAD
}

/// `response` carrying `upload` (the unread rest of the request body) until it is sent, then
/// discarding up to `drain` more bytes of it; over HTTP/1 it then closes the connection (the
/// discarding is its lingering close: closing on unread data would reset the connection and
/// could destroy the answer before the client reads it).
fn hold(response: Response, upload: Body, drain: usize, version: Version) -> Response {
    let (mut parts, answer) = response.into_parts();
    if version <= Version::HTTP_11 {
        parts
            .headers
            .insert(header::CONNECTION, HeaderValue::from_static("close"));
    }
    // An upload declared longer than the bound is refused as soon as the answer is sent.
    let declared = upload.size_hint().lower();
    let drain = if declared > drain as u64 { 0 } else { drain };
    Response::from_parts(
        parts,
        Body::new(Holding {
            answer,
            upload: Some(upload),
            drain,
        }),
    )
}

/// Reads and drops up to `bound` bytes of `upload` within [`DRAIN_TIME`]; dropping it then ends
/// the stream (cleanly if the upload ended).
async fn discard(mut upload: Body, bound: usize) {
    let reading = async {
        let mut read = 0;
        while read <= bound {
            match upload.frame().await {
                Some(Ok(frame)) => read += frame.data_ref().map_or(0, Bytes::len),
                Some(Err(_)) | None => return,
            }
        }
    };
    let _ = tokio::time::timeout(DRAIN_TIME, reading).await;
}

/// A request body lent to a route: dropped before its end, it goes back to `home`.
struct Lent {
    body: Option<Body>,
    ended: bool,
    home: Arc<Mutex<Option<Body>>>,
}

impl HttpBody for Lent {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        let Some(body) = self.body.as_mut() else {
            return Poll::Ready(None);
        };
        let polled = Pin::new(body).poll_frame(cx);
        if matches!(polled, Poll::Ready(None)) {
            self.ended = true;
        }
        polled
    }

    fn is_end_stream(&self) -> bool {
        self.ended || self.body.as_ref().is_none_or(Body::is_end_stream)
    }

    fn size_hint(&self) -> SizeHint {
        self.body
            .as_ref()
            .map_or_else(|| SizeHint::with_exact(0), Body::size_hint)
    }
}

impl Drop for Lent {
    fn drop(&mut self) {
        if self.ended {
            return;
        }
        if let Some(body) = self.body.take().filter(|body| !body.is_end_stream()) {
            *self.home.lock().unwrap_or_else(PoisonError::into_inner) = Some(body);
        }
    }
}

/// An answer's body holding the unread upload until the answer is sent (and this dropped),
/// then discarding up to `drain` bytes of it.
struct Holding {
    answer: Body,
    upload: Option<Body>,
    drain: usize,
}

impl Drop for Holding {
    fn drop(&mut self) {
        let Some(upload) = self.upload.take() else {
            return;
        };
        if self.drain > 0 {
            if let Ok(runtime) = tokio::runtime::Handle::try_current() {
                runtime.spawn(discard(upload, self.drain));
            }
        }
    }
}

impl HttpBody for Holding {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        Pin::new(&mut self.answer).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.answer.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.answer.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_refusal_is_a_kubernetes_status() {
        let response = status(StatusCode::PAYLOAD_TOO_LARGE, "RequestEntityTooLarge", "too big");
        assert_eq!(response.status(), 413);
        assert_eq!(response.headers()[header::CONTENT_TYPE], "application/json");
        let body = axum::body::to_bytes(response.into_body(), 1024).await.unwrap();
        let status: serde_json::Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(
            status,
            json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                "message": "too big", "reason": "RequestEntityTooLarge", "code": 413})
        );
    }

    #[test]
    fn header_lists_are_counted_as_http2_does() {
        let mut headers = HeaderMap::new();
        headers.insert("x-a", HeaderValue::from_static("bcd"));
        let uri: Uri = "/p?q".parse().unwrap();
        assert_eq!(header_bytes(&headers, &uri), 3 + 3 + 32 + 4 + 32);
    }
}
