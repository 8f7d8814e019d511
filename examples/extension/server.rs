//! The extension's HTTPS server: each hook's path of the Runtime SDK
//! (`/hooks.runtime.cluster.x-k8s.io/v1alpha1/<hook>/<handler>`) answered by its function of
//! [`handlers`](super::handlers). A request that does not decode gets a `Failure` answer (HTTP
//! 200), as the Runtime SDK's Go server does.

use std::net::TcpListener;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use axum::body::Bytes;
use axum::routing::post;
use axum::{Json, Router};
use axum_server::tls_rustls::{RustlsAcceptor, RustlsConfig};
use capi_topology::api::runtime::HOOKS_API_VERSION;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::{json, Value};

use super::handlers::{self, DISCOVER_VARIABLES, GENERATE_PATCHES, VALIDATE_TOPOLOGY};

/// The path every hook is served under.
pub const HOOKS_PATH: &str = "/hooks.runtime.cluster.x-k8s.io/v1alpha1";

/// The routes of the four hooks; `calls` counts the requests answered.
pub fn router(calls: Arc<AtomicUsize>) -> Router {
    let discovery = {
        let calls = Arc::clone(&calls);
        move || async move {
            count(&calls, "Discovery");
            Json(to_json(&handlers::discovery()))
        }
    };
    Router::new()
        .route(&format!("{HOOKS_PATH}/discovery"), post(discovery))
        .route(
            &format!("{HOOKS_PATH}/generatepatches/{GENERATE_PATCHES}"),
            hook(&calls, "GeneratePatches", handlers::generate_patches),
        )
        .route(
            &format!("{HOOKS_PATH}/validatetopology/{VALIDATE_TOPOLOGY}"),
            hook(&calls, "ValidateTopology", handlers::validate_topology),
        )
        .route(
            &format!("{HOOKS_PATH}/discovervariables/{DISCOVER_VARIABLES}"),
            hook(&calls, "DiscoverVariables", handlers::discover_variables),
        )
}

/// The POST route of the hook `hook`, answered by `handler`.
fn hook<Q, R>(
    calls: &Arc<AtomicUsize>,
    hook: &'static str,
    handler: fn(&Q) -> R,
) -> axum::routing::MethodRouter
where
    Q: DeserializeOwned + Send + 'static,
    R: Serialize + 'static,
{
    let calls = Arc::clone(calls);
    post(move |body: Bytes| async move {
        count(&calls, hook);
        Json(match serde_json::from_slice::<Q>(&body) {
            Ok(request) => to_json(&handler(&request)),
            Err(error) => json!({
                "apiVersion": HOOKS_API_VERSION,
                "kind": format!("{hook}Response"),
                "status": "Failure",
                "message": format!("error unmarshalling request: {error}"),
            }),
        })
    })
}

fn count(calls: &AtomicUsize, hook: &str) {
    let call = calls.fetch_add(1, Ordering::Relaxed) + 1;
    tracing::info!(hook, call, "answering");
}

fn to_json<R: Serialize>(response: &R) -> Value {
    serde_json::to_value(response).unwrap_or_else(
        |error| json!({"apiVersion": HOOKS_API_VERSION, "status": "Failure", "message": error.to_string()}),
    )
}

/// A TLS configuration serving the certificate chain `cert_pem` with the key `key_pem`.
pub fn tls_config(cert_pem: &[u8], key_pem: &[u8]) -> Result<Arc<rustls::ServerConfig>, String> {
    let chain = CertificateDer::pem_slice_iter(cert_pem)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| format!("tls.crt: {e}"))?;
    let key = PrivateKeyDer::from_pem_slice(key_pem).map_err(|e| format!("tls.key: {e}"))?;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| e.to_string())?
        .with_no_client_auth()
        .with_single_cert(chain, key)
        .map_err(|e| format!("tls.crt and tls.key: {e}"))?;
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(Arc::new(config))
}

/// Serves the hooks over TLS on `listener` until the task is dropped.
pub async fn serve(
    listener: TcpListener,
    tls: Arc<rustls::ServerConfig>,
    calls: Arc<AtomicUsize>,
) -> std::io::Result<()> {
    listener.set_nonblocking(true)?;
    axum_server::from_tcp(listener)?
        .acceptor(RustlsAcceptor::new(RustlsConfig::from_config(tls)))
        .serve(router(calls).into_make_service())
        .await
}
