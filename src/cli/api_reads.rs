//! The management cluster's API as the CLI reads it (`plan`/`check --kubeconfig`,
//! `cluster-api doctor`): every request bounded in time (`--request-timeout`, with kubectl's
//! syntax) and in the size of its answer, and a redirect a clear error rather than an empty
//! body read as JSON. Errors name the request: `GET /apis/...: timed out after 30s`.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use anyhow::Result;
use http_body_util::{BodyExt, Full, Limited};
use hyper::body::Bytes;
use hyper::{Request, Response};
use kube::client::{Body, ClientBuilder};

/// The default of `--request-timeout`. kubectl's is `0` (none); a read-only check that hangs
/// silently on a server that never answers is worse than one that says so.
pub const DEFAULT_REQUEST_TIMEOUT: &str = "30s";

/// Largest answer read, in bytes: lists are read in pages far smaller, and one object is at
/// most what etcd stores (1.5 MiB by default, 3 MiB of request).
pub const MAX_ANSWER_BYTES: usize = 64 * 1024 * 1024;

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// `--request-timeout`: how long one request to the API server may take, `None` for no bound.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RequestTimeout(pub Option<Duration>);

impl Default for RequestTimeout {
    fn default() -> Self {
        RequestTimeout(Some(Duration::from_secs(30)))
    }
}

/// [`parse_request_timeout`] for clap.
pub fn request_timeout_arg(text: &str) -> Result<RequestTimeout, String> {
    parse_request_timeout(text).map(RequestTimeout)
}

/// `--request-timeout` as kubectl reads it: a whole number of seconds or a Go duration (`1s`,
/// `2m`, `1m30s`); `0` means no timeout.
pub fn parse_request_timeout(text: &str) -> Result<Option<Duration>, String> {
    let invalid = || {
        "invalid timeout value: a timeout is a single integer in seconds, or an integer followed by \
         a time unit (e.g. 1s | 2m | 3h)"
            .to_owned()
    };
    let nanos = match text.parse::<u64>() {
        Ok(seconds) => seconds.checked_mul(1_000_000_000).ok_or_else(invalid)?,
        Err(_) => crate::api::convert::parse_go_duration_nanos(text)
            .and_then(|nanos| u64::try_from(nanos).ok())
            .ok_or_else(invalid)?,
    };
    Ok((nanos > 0).then(|| Duration::from_nanos(nanos)))
}

/// A client for `config` whose every request ends within `timeout` (none: no bound) and reads
/// at most [`MAX_ANSWER_BYTES`]. For reads and small writes only: a watch would be cut.
pub fn bounded_client(
    mut config: kube::Config,
    RequestTimeout(timeout): RequestTimeout,
) -> Result<kube::Client> {
    // A removed auth provider is refused before any client is built: its command never runs.
    if let Some(refusal) = crate::kube_credentials::removed_auth_provider(&config.auth_info) {
        anyhow::bail!("cannot create the Kubernetes client: {refusal}");
    }
    if timeout.is_some() {
        config.connect_timeout = timeout;
    }
    let builder = ClientBuilder::try_from(config).map_err(|err| {
        anyhow::anyhow!(
            "cannot create the Kubernetes client: {}",
            crate::kube_credentials::redacted(&err)
        )
    })?;
    Ok(builder
        .with_layer(&Bounds {
            timeout,
            max_bytes: MAX_ANSWER_BYTES,
        })
        .build())
}

/// The bounds, as a tower layer over kube's service stack (outermost: credentials and TLS are
/// inside the time bound).
#[derive(Debug, Clone, Copy)]
struct Bounds {
    timeout: Option<Duration>,
    max_bytes: usize,
}

impl<S> tower::Layer<S> for Bounds {
    type Service = Bounded<S>;

    fn layer(&self, inner: S) -> Bounded<S> {
        Bounded { inner, bounds: *self }
    }
}

/// kube's service with [`Bounds`] on each request.
struct Bounded<S> {
    inner: S,
    bounds: Bounds,
}

impl<S, B> tower::Service<Request<Body>> for Bounded<S>
where
    S: tower::Service<Request<Body>, Response = Response<B>>,
    S::Error: Into<BoxError>,
    S::Future: Send + 'static,
    B: hyper::body::Body<Data = Bytes> + Send + 'static,
    B::Error: Into<BoxError>,
{
    type Response = Response<Full<Bytes>>;
    type Error = BoxError;
    type Future = Pin<Box<dyn Future<Output = Result<Self::Response, BoxError>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        self.inner.poll_ready(cx).map_err(Into::into)
    }

    fn call(&mut self, request: Request<Body>) -> Self::Future {
        let name = format!(
            "{} {}",
            request.method(),
            request.uri().path_and_query().map_or("/", |p| p.as_str())
        );
        let Bounds { timeout, max_bytes } = self.bounds;
        let answer = self.inner.call(request);
        Box::pin(async move {
            let read = read_whole(answer, &name, max_bytes);
            match timeout {
                None => read.await,
                Some(limit) => tokio::time::timeout(limit, read)
                    .await
                    .map_err(|_| format!("{name}: timed out after {limit:?}"))?,
            }
        })
    }
}

/// The answer to one request, read whole up to `max_bytes`; a redirect is an error.
async fn read_whole<F, B, E>(
    answer: F,
    name: &str,
    max_bytes: usize,
) -> Result<Response<Full<Bytes>>, BoxError>
where
    F: Future<Output = Result<Response<B>, E>>,
    E: Into<BoxError>,
    B: hyper::body::Body<Data = Bytes>,
    B::Error: Into<BoxError>,
{
    let response = answer.await.map_err(|err| format!("{name}: {}", err.into()))?;
    let status = response.status();
    if status.is_redirection() {
        let to = response
            .headers()
            .get(hyper::header::LOCATION)
            .and_then(|l| l.to_str().ok())
            .map(|l| format!(" to {}", crate::field::truncate(l.to_owned(), 256)))
            .unwrap_or_default();
        return Err(format!(
            "{name}: the server answered {status}{to}; redirects are not followed (is the kubeconfig's server the API server?)"
        )
        .into());
    }
    let (parts, body) = response.into_parts();
    let bytes = Limited::new(body, max_bytes).collect().await.map_err(|err| {
        if err.is::<http_body_util::LengthLimitError>() {
            format!(
                "{name}: the answer is larger than {} MiB, the most read at once",
                max_bytes / (1024 * 1024)
            )
        } else {
            format!("{name}: cannot read the answer: {err}")
        }
    })?;
    Ok(Response::from_parts(parts, Full::new(bytes.to_bytes())))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_is_the_flags_default() {
        assert_eq!(
            request_timeout_arg(DEFAULT_REQUEST_TIMEOUT),
            Ok(RequestTimeout::default())
        );
    }

    #[test]
    fn timeouts_read_as_kubectl_reads_them() {
        assert_eq!(parse_request_timeout("0"), Ok(None));
        assert_eq!(parse_request_timeout("0s"), Ok(None));
        assert_eq!(parse_request_timeout("5"), Ok(Some(Duration::from_secs(5))));
        assert_eq!(parse_request_timeout("1m30s"), Ok(Some(Duration::from_secs(90))));
        assert_eq!(
            parse_request_timeout("250ms"),
            Ok(Some(Duration::from_millis(250)))
        );
        for bad in ["", "-1s", "5x", "s"] {
            assert!(parse_request_timeout(bad).is_err(), "{bad}");
        }
    }
}
