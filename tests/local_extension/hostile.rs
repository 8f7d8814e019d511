//! A hostile Runtime Extension on a loopback port (issue 26): Discovery as the example answers
//! it, GeneratePatches with a canned answer (a copy bomb, a quadratic answer, ...). Shared by the
//! in-process catalogue (`tests/hostile/extensions.rs`) and the e2e scenario
//! (`tests/e2e/hostile_extensions.rs`).

use std::net::{IpAddr, Ipv4Addr, SocketAddr, TcpListener};

use axum::body::Bytes;
use axum::http::StatusCode;
use axum::routing::post;
use axum::{Json, Router};
use axum_server::tls_rustls::{RustlsAcceptor, RustlsConfig};
use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use capi_topology::api::runtime::{ClientConfig, ExtensionConfig, ExtensionConfigSpec};
use capi_topology::api::ObjectMeta;
use capi_topology::server::dev_certs::generate;
use serde_json::{json, Value};

use super::handlers::{discovery, GENERATE_PATCHES, VALIDATE_TOPOLOGY};
use super::server::{tls_config, HOOKS_PATH};

/// How the hostile server answers a GeneratePatches request: a status and a body.
pub type Answer = fn(&Value) -> (StatusCode, Vec<u8>);

/// An extension server answering Discovery as the example does and GeneratePatches with an
/// [`Answer`]; stopped when dropped.
pub struct HostileExtension {
    /// Where it listens.
    pub addr: SocketAddr,
    /// The CA its certificate is signed by, PEM.
    pub ca_pem: String,
    runtime: Option<tokio::runtime::Runtime>,
}

/// Serves `router` over TLS on a free loopback port, on a runtime of its own, with a fresh
/// development CA: its address, the CA's PEM, and the runtime (shut down to stop it).
pub fn serve_router(router: Router) -> (SocketAddr, String, tokio::runtime::Runtime) {
    let certificates =
        generate(&[], &[IpAddr::V4(Ipv4Addr::LOCALHOST)], 1).expect("development certificates");
    let tls = tls_config(certificates.cert_pem.as_bytes(), certificates.key_pem.as_bytes())
        .expect("the serving certificate loads");
    let listener = TcpListener::bind("127.0.0.1:0").expect("a loopback port");
    let addr = listener.local_addr().expect("its address");
    listener.set_nonblocking(true).expect("a non-blocking listener");
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .expect("a runtime");
    runtime.spawn(async move {
        let server = axum_server::from_tcp(listener).expect("a server");
        server
            .acceptor(RustlsAcceptor::new(RustlsConfig::from_config(tls)))
            .serve(router.into_make_service())
            .await
    });
    (addr, certificates.ca_pem, runtime)
}

impl HostileExtension {
    /// Starts the server on a free port, on a runtime of its own.
    pub fn start(answer: Answer) -> Self {
        let router = Router::new()
            .route(
                &format!("{HOOKS_PATH}/discovery"),
                post(|| async { Json(discovery()) }),
            )
            .route(
                &format!("{HOOKS_PATH}/generatepatches/{GENERATE_PATCHES}"),
                post(move |body: Bytes| async move {
                    let request: Value = serde_json::from_slice(&body).unwrap_or_default();
                    answer(&request)
                }),
            )
            .route(
                &format!("{HOOKS_PATH}/validatetopology/{VALIDATE_TOPOLOGY}"),
                post(|| async { Json(json!({"status": "Success"})) }),
            );
        let (addr, ca_pem, runtime) = serve_router(router);
        Self {
            addr,
            ca_pem,
            runtime: Some(runtime),
        }
    }

    /// The url it serves at.
    pub fn url(&self) -> String {
        format!("https://{}", self.addr)
    }

    /// Its CA, base64 as an ExtensionConfig's `caBundle`.
    pub fn ca_bundle(&self) -> String {
        STANDARD.encode(&self.ca_pem)
    }

    /// An ExtensionConfig `name` registering it.
    pub fn config(&self, name: &str) -> ExtensionConfig {
        ExtensionConfig {
            metadata: ObjectMeta {
                name: Some(name.to_owned()),
                ..ObjectMeta::default()
            },
            spec: ExtensionConfigSpec {
                client_config: ClientConfig {
                    url: Some(self.url()),
                    ca_bundle: Some(self.ca_bundle()),
                    ..ClientConfig::default()
                },
                ..ExtensionConfigSpec::default()
            },
            ..ExtensionConfig::default()
        }
    }
}

impl Drop for HostileExtension {
    fn drop(&mut self) {
        // Not waiting: a test may drop it from inside another runtime.
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_background();
        }
    }
}

/// A Success answer patching the first `templates` items of `request` with the JSON patch
/// `operations`.
pub fn patch_items(request: &Value, operations: &Value, templates: usize) -> (StatusCode, Vec<u8>) {
    let patch = STANDARD.encode(serde_json::to_vec(operations).expect("a patch"));
    let items: Vec<Value> = request["items"]
        .as_array()
        .into_iter()
        .flatten()
        .take(templates)
        .map(|item| json!({"uid": item["uid"], "patchType": "JSONPatch", "patch": patch}))
        .collect();
    let answer = json!({"apiVersion": "hooks.runtime.cluster.x-k8s.io/v1alpha1",
                        "kind": "GeneratePatchesResponse", "status": "Success", "items": items});
    (StatusCode::OK, serde_json::to_vec(&answer).expect("an answer"))
}

/// Issue 26: `add a [0,0]`, then 30 copies of `a` into itself: each doubles the template.
pub fn copy_bomb(request: &Value) -> (StatusCode, Vec<u8>) {
    let mut operations = vec![json!({"op": "add", "path": "/spec/template/spec/a", "value": [0, 0]})];
    operations.extend(
        (0..30).map(
            |_| json!({"op": "copy", "from": "/spec/template/spec/a", "path": "/spec/template/spec/a/0"}),
        ),
    );
    patch_items(request, &Value::Array(operations), usize::MAX)
}

/// Issue 26: `count` inserts at the front of one array of the first template, in one patch.
pub fn front_inserts(request: &Value, count: usize) -> (StatusCode, Vec<u8>) {
    let mut operations = vec![json!({"op": "add", "path": "/spec/template/spec/a", "value": []})];
    operations
        .extend((1..count).map(|_| json!({"op": "add", "path": "/spec/template/spec/a/0", "value": 0})));
    patch_items(request, &Value::Array(operations), 1)
}
