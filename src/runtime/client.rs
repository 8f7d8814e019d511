//! The HTTPS client of one Runtime Extension server: TLS trusting its ExtensionConfig's CA bundle
//! alone, one pooled keep-alive connection set, every call bounded by a timeout and its answer by
//! [`MAX_RESPONSE`]. As Cluster API v1.14's client, redirects are not followed: the server cannot
//! reroute a call elsewhere; a 3xx answer fails as any answer other than 200 does.

use std::sync::Arc;
use std::time::Duration;

use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use http_body_util::{BodyExt, Full, Limited};
use hyper::body::Bytes;
use hyper::header::{HeaderValue, AUTHORIZATION, CONTENT_TYPE};
use hyper::{Request, StatusCode, Uri};
use hyper_rustls::HttpsConnector;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::client::legacy::Client;
use hyper_util::rt::{TokioExecutor, TokioTimer};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::CertificateDer;
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::response::echoed;
use crate::api::runtime::{ClientConfig, HOOKS_API_VERSION};
use crate::patches::bounded::check_values;

/// How long a TCP connection may take to open.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// How long an idle pooled connection is kept.
const IDLE_TIMEOUT: Duration = Duration::from_secs(90);
/// The largest response body read (20 MiB, as Cluster API v1.14: above any legitimate hook
/// answer, and an extension cannot make the controller buffer an unbounded body).
pub const MAX_RESPONSE: usize = 20 << 20;
/// How much of a failed answer's body its error quotes.
const QUOTED_BODY: usize = 512;
/// The most JSON values an answer may hold (checked before it is decoded, so a 20 MiB answer
/// of tiny values cannot make the controller allocate gigabytes).
pub const MAX_ANSWER_VALUES: usize = 1 << 20;

/// A call that did not bring back a hook response: the connection, the HTTP status or the body
/// failed. Cluster API's `failurePolicy: Ignore` applies to these only.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("http call failed: {message}")]
pub struct CallError {
    message: String,
    /// No answer came: the connection failed or the call timed out.
    transport: bool,
}

impl CallError {
    /// A call the server answered wrongly (status, body).
    fn answered(message: String) -> Self {
        Self {
            message,
            transport: false,
        }
    }

    /// A call that got no answer.
    fn unanswered(message: String) -> Self {
        Self {
            message,
            transport: true,
        }
    }

    /// Whether no answer came at all (the server is down, unreachable or too slow), rather than
    /// a wrong one.
    pub fn is_transport(&self) -> bool {
        self.transport
    }
}

/// The client of one Extension server.
#[derive(Debug, Clone)]
pub struct ExtensionClient {
    http: Client<HttpsConnector<HttpConnector>, Full<Bytes>>,
    /// `https://host[:port]` and the path every hook path is joined to (no trailing `/`).
    base: String,
    /// `base` as errors show it: with the url's user, and its password as `xxxxx`.
    shown: String,
    /// `Basic` credentials from the url's user information, sent with every call.
    authorization: Option<HeaderValue>,
}

impl ExtensionClient {
    /// A client for the server `config` names (`url`, or `service` as
    /// `https://<name>.<namespace>.svc[:<port>]<path>`), trusting only its `caBundle`.
    pub fn new(config: &ClientConfig) -> Result<Self, String> {
        let Server {
            base,
            shown,
            authorization,
        } = base_url(config)?;
        let tls = tls_config(config.ca_bundle.as_deref())?;
        let mut http = HttpConnector::new();
        http.enforce_http(false);
        http.set_connect_timeout(Some(CONNECT_TIMEOUT));
        let connector = hyper_rustls::HttpsConnectorBuilder::new()
            .with_tls_config(tls)
            .https_only()
            .enable_http1()
            .wrap_connector(http);
        let http = Client::builder(TokioExecutor::new())
            .pool_idle_timeout(IDLE_TIMEOUT)
            .pool_timer(TokioTimer::new())
            .build(connector);
        Ok(Self {
            http,
            base,
            shown,
            authorization,
        })
    }

    /// POSTs `request` (a hook request as JSON) to the hook `hook` (e.g. `GeneratePatches`),
    /// handler `handler` (none for discovery), within `timeout`, and decodes the answer.
    pub async fn call<R: DeserializeOwned>(
        &self,
        hook: &str,
        handler: Option<&str>,
        mut request: Value,
        timeout: Duration,
    ) -> Result<R, CallError> {
        if let Some(fields) = request.as_object_mut() {
            fields.insert("apiVersion".into(), Value::from(HOOKS_API_VERSION));
            fields.insert("kind".into(), Value::from(format!("{hook}Request")));
        }
        let mut path = format!("/{HOOKS_API_VERSION}/{}", hook.to_lowercase());
        if let Some(handler) = handler {
            path = format!("{path}/{}", handler.to_lowercase());
        }
        // As Cluster API's client: the handler learns the caller's deadline (Go's Duration text).
        let path = format!("{path}?timeout={}s", timeout.as_secs());
        let url = format!("{}{path}", self.shown);
        let body = serde_json::to_vec(&request).map_err(|e| CallError::answered(e.to_string()))?;
        let mut http_request =
            Request::post(format!("{}{path}", self.base)).header(CONTENT_TYPE, "application/json");
        if let Some(credentials) = &self.authorization {
            http_request = http_request.header(AUTHORIZATION, credentials.clone());
        }
        let http_request = http_request
            .body(Full::new(Bytes::from(body)))
            .map_err(|e| CallError::answered(format!("failed to create http request: {e}")))?;
        let exchange = async {
            let response = self
                .http
                .request(http_request)
                .await
                .map_err(|e| CallError::unanswered(format!("Post {url:?}: {}", chain(&e))))?;
            let status = response.status();
            let bytes = Limited::new(response.into_body(), MAX_RESPONSE)
                .collect()
                .await
                .map_err(|e| CallError::unanswered(format!("failed to read the response: {e}")))?
                .to_bytes();
            if status != StatusCode::OK {
                return Err(CallError::answered(format!(
                    "got response with status code {} != 200: response : {:?}",
                    status.as_u16(),
                    quoted(&bytes)
                )));
            }
            check_values(&bytes, MAX_ANSWER_VALUES).map_err(|_| {
                CallError::answered(format!(
                    "failed to decode response: the answer has more than {MAX_ANSWER_VALUES} values"
                ))
            })?;
            serde_json::from_slice(&bytes).map_err(|e| {
                CallError::answered(format!("failed to decode response: {}", echoed(&e.to_string())))
            })
        };
        tokio::time::timeout(timeout, exchange).await.map_err(|_| {
            CallError::unanswered(format!(
                "Post {url:?}: http request timeout expired after {timeout:?}"
            ))
        })?
    }
}

/// The first [`QUOTED_BODY`] bytes of a body (cut at a character boundary), `...` after a cut.
fn quoted(body: &[u8]) -> String {
    let text = String::from_utf8_lossy(body);
    if text.len() <= QUOTED_BODY {
        return text.into_owned();
    }
    let mut end = QUOTED_BODY;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}...", &text[..end])
}

/// Where the Extension server is, as called and as shown.
#[derive(Debug, PartialEq)]
struct Server {
    /// The scheme, host, port and path prefix (no user information).
    base: String,
    /// The same with the url's user information, its password redacted as Go's
    /// `url.Redacted` does (`user:xxxxx@`).
    shown: String,
    /// `Basic` credentials of the url's user information, as Go's client sends them.
    authorization: Option<HeaderValue>,
}

/// The scheme, authority and path prefix of the Extension server, and its credentials.
fn base_url(config: &ClientConfig) -> Result<Server, String> {
    let url = match (&config.service, &config.url) {
        (Some(service), _) => {
            let port = service.port.map(|p| format!(":{p}")).unwrap_or_default();
            let path = service.path.as_deref().unwrap_or_default();
            format!("https://{}.{}.svc{port}{path}", service.name, service.namespace)
        }
        (None, Some(url)) => url.clone(),
        (None, None) => {
            return Err(
                "failed to compute URL: at least one of service and url should be defined in config".into(),
            )
        }
    };
    let uri: Uri = url
        .parse()
        .map_err(|e| format!("failed to compute URL: failed to parse url from clientConfig: {e}"))?;
    let (authority, path) = match (uri.scheme_str(), uri.authority()) {
        (Some("https"), Some(authority)) => (authority.as_str(), uri.path().trim_end_matches('/')),
        (Some(scheme), _) if scheme != "https" => {
            return Err(format!(
                "failed to compute URL: expected https scheme, got {scheme}"
            ))
        }
        _ => return Err(format!("failed to compute URL: {:?} has no host", redacted(&url))),
    };
    let (user, host) = match authority.rsplit_once('@') {
        Some((user, host)) => (Some(user), host),
        None => (None, authority),
    };
    let shown_user = user.map(|user| match user.split_once(':') {
        Some((name, _)) => format!("{name}:xxxxx@"),
        None => format!("{user}@"),
    });
    let authorization = user
        .map(|user| {
            let (name, password) = user.split_once(':').unwrap_or((user, ""));
            let credentials = format!("{}:{}", unescape(name), unescape(password));
            HeaderValue::try_from(format!("Basic {}", STANDARD.encode(credentials)))
                .map(|mut value| {
                    value.set_sensitive(true);
                    value
                })
                .map_err(|_| "failed to compute URL: the url's user information is not valid".to_owned())
        })
        .transpose()?;
    Ok(Server {
        base: format!("https://{host}{path}"),
        shown: format!("https://{}{host}{path}", shown_user.unwrap_or_default()),
        authorization,
    })
}

/// `url` with the password of its user information redacted (`user:xxxxx@`), as Go's
/// `url.Redacted`: how an ExtensionConfig's url is shown wherever it is printed.
fn redacted(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_owned();
    };
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(end);
    match authority.rsplit_once('@') {
        Some((user, host)) if user.contains(':') => {
            let name = user.split_once(':').map_or(user, |(name, _)| name);
            format!("{scheme}://{name}:xxxxx@{host}{tail}")
        }
        _ => url.to_owned(),
    }
}

/// `text` with its `%XX` escapes decoded, as Go decodes a url's user information.
fn unescape(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = bytes
            .get(i + 1..i + 3)
            .and_then(|pair| std::str::from_utf8(pair).ok())
            .and_then(|pair| u8::from_str_radix(pair, 16).ok());
        match (bytes[i], hex) {
            (b'%', Some(byte)) => {
                out.push(byte);
                i += 3;
            }
            (byte, _) => {
                out.push(byte);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// TLS that trusts the certificates of `ca_bundle` (base64 of PEM, as the API carries it) and
/// nothing else.
fn tls_config(ca_bundle: Option<&str>) -> Result<rustls::ClientConfig, String> {
    let pem = STANDARD
        .decode(ca_bundle.unwrap_or_default())
        .map_err(|e| format!("failed to create tls config: caBundle is not base64: {e}"))?;
    let mut roots = rustls::RootCertStore::empty();
    for certificate in CertificateDer::pem_slice_iter(&pem) {
        let certificate = certificate.map_err(|e| format!("failed to create tls config: caBundle: {e}"))?;
        roots
            .add(certificate)
            .map_err(|e| format!("failed to create tls config: caBundle: {e}"))?;
    }
    if roots.is_empty() {
        return Err("failed to create tls config: caBundle holds no certificate".into());
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    Ok(rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| format!("failed to create tls config: {e}"))?
        .with_root_certificates(roots)
        .with_no_client_auth())
}

/// An error with its causes, `: `-separated (hyper's own message is only the outermost).
fn chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        text = format!("{text}: {cause}");
        source = cause.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::runtime::ServiceReference;

    #[test]
    fn the_base_url_comes_from_the_url_or_the_service() {
        let url = |url: &str| ClientConfig {
            url: Some(url.to_owned()),
            ..ClientConfig::default()
        };
        let base = |text: &str| base_url(&url(text)).map(|server| server.base);
        assert_eq!(base("https://127.0.0.1:9443/").unwrap(), "https://127.0.0.1:9443");
        assert_eq!(
            base("https://ext.example/prefix").unwrap(),
            "https://ext.example/prefix"
        );
        assert_eq!(
            base("http://ext.example").unwrap_err(),
            "failed to compute URL: expected https scheme, got http"
        );
        let service = ClientConfig {
            service: Some(ServiceReference {
                namespace: "ns".into(),
                name: "ext".into(),
                path: Some("/p".into()),
                port: Some(8443),
            }),
            ..ClientConfig::default()
        };
        assert_eq!(base_url(&service).unwrap().base, "https://ext.ns.svc:8443/p");
    }

    /// Issue 26: a url's user information is sent as basic authentication and shown with its
    /// password redacted, as Go's client and `url.Redacted` do.
    #[test]
    fn url_credentials_are_sent_as_basic_auth_and_redacted() {
        let config = ClientConfig {
            url: Some("https://us%3Aer:p%40ss:word@ext.example:9443/prefix/".into()),
            ..ClientConfig::default()
        };
        let server = base_url(&config).unwrap();
        assert_eq!(server.base, "https://ext.example:9443/prefix");
        assert_eq!(server.shown, "https://us%3Aer:xxxxx@ext.example:9443/prefix");
        let expected = format!("Basic {}", STANDARD.encode("us:er:p@ss:word"));
        assert_eq!(server.authorization.unwrap().to_str().unwrap(), expected);
        let user_only = ClientConfig {
            url: Some("https://user@ext.example".into()),
            ..ClientConfig::default()
        };
        assert_eq!(base_url(&user_only).unwrap().shown, "https://user@ext.example");
        assert_eq!(
            redacted("https://u:secret@h:1/p?q=a@b"),
            "https://u:xxxxx@h:1/p?q=a@b"
        );
        assert_eq!(redacted("https://h/p@x"), "https://h/p@x");
        assert_eq!(redacted("not a url"), "not a url");
    }

    #[test]
    fn a_long_failed_answer_is_quoted_in_part() {
        assert_eq!(quoted(b"short"), "short");
        let long = "é".repeat(400);
        let cut = quoted(long.as_bytes());
        assert!(cut.ends_with("..."));
        assert_eq!(cut.len(), QUOTED_BODY + 3);
    }

    #[test]
    fn a_client_needs_a_ca_bundle() {
        let config = ClientConfig {
            url: Some("https://127.0.0.1:9443".into()),
            ..ClientConfig::default()
        };
        assert_eq!(
            ExtensionClient::new(&config).unwrap_err(),
            "failed to create tls config: caBundle holds no certificate"
        );
    }
}
