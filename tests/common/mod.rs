//! A webhook server in-process on loopback for integration tests, and a TLS client for it:
//! shared by `tests/server.rs` and the hostile catalogue. Each test binary uses part of it.
#![allow(dead_code)]

use std::net::SocketAddr;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use capi_topology::metrics::Metrics;
use capi_topology::offline::apply::{apply, Verdict};
use capi_topology::server::dev_certs::generate;
use capi_topology::server::{serve_on, AppState, Listeners, Readiness, ServerConfig, ServerLimits};
use capi_topology::store::{parse_manifests, MemoryStore};
use http_body_util::{BodyExt, Full};
use hyper::body::Bytes;
use hyper_util::rt::{TokioExecutor, TokioIo};
use prometheus_client::registry::Registry;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName};
use serde_json::json;
use tokio::task::JoinHandle;
use tokio_rustls::TlsConnector;
use tokio_util::sync::CancellationToken;

pub const MUTATE_CLUSTER: &str = "/mutate-cluster-x-k8s-io-v1beta1-cluster";

/// A server on free loopback ports, stopped (and awaited) when the test ends.
pub struct Running {
    /// The admission (HTTPS) address.
    pub admission: SocketAddr,
    /// The probes and metrics address.
    pub probes: SocketAddr,
    /// Where the serving certificate is.
    pub cert_dir: tempdir::Dir,
    /// What `/readyz` answers.
    pub ready: Arc<AtomicBool>,
    /// Stops the server.
    pub shutdown: CancellationToken,
    /// The server task.
    pub task: Option<JoinHandle<anyhow::Result<()>>>,
}

impl Drop for Running {
    fn drop(&mut self) {
        self.shutdown.cancel();
    }
}

#[path = "tempdir.rs"]
pub mod tempdir;

/// Writes a fresh CA and serving certificate for `localhost` into `dir`; returns the CA.
pub fn write_certs(dir: &Path) -> String {
    let certs = generate(&["localhost".to_owned()], &[], 1).expect("certificates");
    // Key first, then certificate, each atomically, as a Secret update lands.
    for (name, text) in [("tls.key", &certs.key_pem), ("tls.crt", &certs.cert_pem)] {
        let temporary = dir.join(format!("{name}.new"));
        std::fs::write(&temporary, text).unwrap();
        std::fs::rename(&temporary, dir.join(name)).unwrap();
    }
    certs.ca_pem
}

pub fn quickstart_store() -> MemoryStore {
    let mut store = MemoryStore::default();
    for file in ["00-clusterclass.yaml", "10-cluster-dev.yaml"] {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("examples/quickstart")
            .join(file);
        let text = std::fs::read_to_string(&path).unwrap();
        for object in parse_manifests(&text).unwrap() {
            let applied = apply(&mut store, object, file, "2026-01-01T00:00:00Z").unwrap();
            assert_ne!(applied.verdict, Verdict::Denied, "{}", applied.message);
        }
    }
    store
}

/// Starts a server on ports the system picks.
pub async fn start(label: &str) -> (Running, String) {
    start_with(label, ServerLimits::default()).await
}

/// Starts a server over the quickstart with `limits`.
pub async fn start_with(label: &str, limits: ServerLimits) -> (Running, String) {
    start_over(label, limits, quickstart_store).await
}

/// Starts a server over the objects `store` makes, with `limits`, on loopback ports the system
/// picks (bound before the server starts, so no other process can take them meanwhile).
pub async fn start_over(label: &str, limits: ServerLimits, store: fn() -> MemoryStore) -> (Running, String) {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let cert_dir = tempdir::Dir::new(&format!("server-{label}"));
    let ca = write_certs(cert_dir.path());
    let mut registry = Registry::default();
    let metrics = Metrics::register(&mut registry);
    let ready = Arc::new(AtomicBool::new(false));
    let readiness: Readiness = {
        let ready = ready.clone();
        Arc::new(move || ready.load(Ordering::SeqCst))
    };
    let loopback = SocketAddr::from(([127, 0, 0, 1], 0));
    let config = ServerConfig {
        bind: loopback,
        probes: loopback,
        cert_dir: cert_dir.path().to_owned(),
        cert_poll: Duration::from_millis(100),
        drain: Duration::from_secs(5),
    };
    let listeners = Listeners::bind(loopback, loopback).expect("loopback ports");
    let (admission, probes) = (listeners.admission_addr(), listeners.probes_addr());
    let state = AppState::new(Arc::new(store()), metrics, limits);
    let shutdown = CancellationToken::new();
    let task = tokio::spawn({
        let shutdown = shutdown.clone();
        async move { serve_on(listeners, &config, state, Arc::new(registry), readiness, shutdown).await }
    });
    let running = Running {
        admission,
        probes,
        cert_dir,
        ready,
        shutdown,
        task: Some(task),
    };
    (running, ca)
}

/// A cluster CREATE review of the quickstart's dev Cluster under a new name.
pub fn cluster_review() -> Vec<u8> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/v1beta1/10-cluster-dev.yaml");
    let mut cluster = parse_manifests(&std::fs::read_to_string(path).unwrap())
        .unwrap()
        .remove(0);
    cluster["metadata"]["name"] = json!("served");
    serde_json::to_vec(&json!({
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "request": {
            "uid": "uid-1",
            "kind": {"group": "cluster.x-k8s.io", "version": "v1beta1", "kind": "Cluster"},
            "resource": {"group": "cluster.x-k8s.io", "version": "v1beta1", "resource": "clusters"},
            "namespace": "default", "name": "served", "operation": "CREATE",
            "userInfo": {"username": "test"},
            "object": cluster,
        }
    }))
    .unwrap()
}

/// One TLS connection to the admission port offering `alpn`: the certificate the server
/// presented and the answer to one POST.
pub async fn post(
    addr: SocketAddr,
    ca_pem: &str,
    alpn: &[u8],
    path: &str,
    body: Vec<u8>,
) -> (Vec<u8>, u16, Vec<u8>) {
    let tls = connect(addr, ca_pem, alpn)
        .await
        .expect("TLS handshake with the dev CA");
    exchange(tls, alpn, path, body).await
}

pub type Tls = tokio_rustls::client::TlsStream<tokio::net::TcpStream>;

/// A TLS connection trusting only `ca_pem`; fails when the server's certificate is not its.
pub async fn connect(addr: SocketAddr, ca_pem: &str, alpn: &[u8]) -> std::io::Result<Tls> {
    let mut roots = rustls::RootCertStore::empty();
    roots
        .add(CertificateDer::from_pem_slice(ca_pem.as_bytes()).unwrap())
        .unwrap();
    let mut config = rustls::ClientConfig::builder()
        .with_root_certificates(roots)
        .with_no_client_auth();
    config.alpn_protocols = vec![alpn.to_vec()];
    let tcp = tokio::net::TcpStream::connect(addr).await?;
    TlsConnector::from(Arc::new(config))
        .connect(ServerName::try_from("localhost").unwrap(), tcp)
        .await
}

pub async fn exchange(tls: Tls, alpn: &[u8], path: &str, body: Vec<u8>) -> (Vec<u8>, u16, Vec<u8>) {
    let served = tls.get_ref().1.peer_certificates().unwrap()[0].to_vec();
    let request = hyper::Request::post(path)
        .header("host", "localhost")
        .header("content-type", "application/json")
        .body(Full::new(Bytes::from(body)))
        .unwrap();
    let (status, _, body) = send(tls, alpn, request).await.unwrap();
    (served, status, body)
}

/// Sends `request` over `tls` (HTTP/2 when `alpn` is `h2`): the status, headers and body of the
/// answer, or what failed (a reset stream, a closed connection).
pub async fn send<B>(
    tls: Tls,
    alpn: &[u8],
    request: hyper::Request<B>,
) -> Result<(u16, hyper::HeaderMap, Vec<u8>), String>
where
    B: hyper::body::Body<Data = Bytes> + Send + Unpin + 'static,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    assert_eq!(tls.get_ref().1.alpn_protocol(), Some(alpn), "ALPN negotiated");
    let io = TokioIo::new(tls);
    let response = if alpn == b"h2" {
        let (mut sender, connection) = hyper::client::conn::http2::handshake(TokioExecutor::new(), io)
            .await
            .map_err(|e| e.to_string())?;
        tokio::spawn(connection);
        sender.send_request(request).await
    } else {
        let (mut sender, connection) = hyper::client::conn::http1::handshake(io)
            .await
            .map_err(|e| e.to_string())?;
        tokio::spawn(connection);
        sender.send_request(request).await
    };
    let response = response.map_err(|e| format!("no answer: {e:?}"))?;
    let status = response.status().as_u16();
    let headers = response.headers().clone();
    let body = response
        .into_body()
        .collect()
        .await
        .map_err(|e| format!("HTTP {status}, then the body failed: {e:?}"))?;
    Ok((status, headers, body.to_bytes().to_vec()))
}

pub async fn get_probe(addr: SocketAddr, path: &str) -> (u16, String) {
    let tcp = tokio::net::TcpStream::connect(addr).await.unwrap();
    let (mut sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(tcp))
        .await
        .unwrap();
    tokio::spawn(connection);
    let request = hyper::Request::get(path)
        .header("host", "localhost")
        .body(Full::new(Bytes::new()))
        .unwrap();
    let response = sender.send_request(request).await.unwrap();
    let status = response.status().as_u16();
    let body = response.into_body().collect().await.unwrap().to_bytes();
    (status, String::from_utf8_lossy(&body).into_owned())
}
