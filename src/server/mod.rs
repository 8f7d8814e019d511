//! The webhook server: admission reviews over HTTPS (HTTP/2 and HTTP/1.1, certificate reloaded
//! from disk without a restart), and probes and metrics over plain HTTP on a side port. Every
//! listener caps its connections and times out slow or idle ones ([`ServerLimits`]). On
//! shutdown the admission listener stops accepting and drains while `/readyz` answers 503; the
//! probe listener closes last.

mod connections;
pub mod convert;
pub mod dev_certs;
mod handlers;
mod limits;
mod probes;
mod refusals;
mod router;
pub mod tls;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result};
use axum::Router;
use axum_server::accept::DefaultAcceptor;
use axum_server::tls_rustls::{RustlsAcceptor, RustlsConfig};
use hyper_util::rt::TokioTimer;
use prometheus_client::registry::Registry;
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;

use crate::metrics::Metrics;
use crate::store::ObjectSource;
use connections::LimitedAcceptor;

pub use limits::ServerLimits;
pub use router::router;

/// What every admission request reads: the objects, the metrics and the limits.
#[derive(Clone)]
pub struct AppState {
    /// Where ClusterClasses, Clusters and the objects version checks read come from.
    pub source: Arc<dyn ObjectSource>,
    /// The server's metrics.
    pub metrics: Metrics,
    /// The bounds on what a request may cost.
    pub limits: ServerLimits,
    /// The places for reviews being evaluated ([`ServerLimits::max_in_flight`]).
    in_flight: Arc<Semaphore>,
}

impl AppState {
    /// The state of a server over `source` within `limits`.
    pub fn new(source: Arc<dyn ObjectSource>, metrics: Metrics, limits: ServerLimits) -> Self {
        Self {
            source,
            metrics,
            limits,
            in_flight: Arc::new(Semaphore::new(limits.max_in_flight.max(1))),
        }
    }
}

/// Whether the server can answer for the cluster now (`/readyz`).
pub type Readiness = Arc<dyn Fn() -> bool + Send + Sync>;

/// Where and how to serve.
#[derive(Debug, Clone)]
pub struct ServerConfig {
    /// The HTTPS admission address.
    pub bind: SocketAddr,
    /// The plain-HTTP address of `/metrics`, `/healthz` and `/readyz`.
    pub probes: SocketAddr,
    /// The directory holding `tls.crt` and `tls.key`.
    pub cert_dir: PathBuf,
    /// How often the certificate directory is checked for a new pair.
    pub cert_poll: Duration,
    /// How long in-flight requests may take to finish after shutdown begins.
    pub drain: Duration,
}

/// The two listening sockets of a server, bound: port 0 picks a free port, which the addresses
/// then tell (tests on a shared machine bind this way).
#[derive(Debug)]
pub struct Listeners {
    admission: std::net::TcpListener,
    probes: std::net::TcpListener,
}

impl Listeners {
    /// Binds the admission address `admission` and the probes address `probes`.
    pub fn bind(admission: SocketAddr, probes: SocketAddr) -> Result<Self> {
        Ok(Self {
            admission: listen(admission, "admission reviews")?,
            probes: listen(probes, "probes and metrics")?,
        })
    }

    /// The address admission reviews are served on.
    pub fn admission_addr(&self) -> SocketAddr {
        self.admission
            .local_addr()
            .expect("a bound listener has an address")
    }

    /// The address of `/metrics`, `/healthz` and `/readyz`.
    pub fn probes_addr(&self) -> SocketAddr {
        self.probes.local_addr().expect("a bound listener has an address")
    }
}

/// Binds `config`'s addresses and serves on them ([`serve_on`]).
pub async fn serve(
    config: &ServerConfig,
    state: AppState,
    registry: Arc<Registry>,
    ready: Readiness,
    shutdown: CancellationToken,
) -> Result<()> {
    let listeners = Listeners::bind(config.bind, config.probes)?;
    serve_on(listeners, config, state, registry, ready, shutdown).await
}

/// Serves on `listeners` until `shutdown` is cancelled, then drains. Fails at once when the
/// certificate cannot be loaded.
pub async fn serve_on(
    listeners: Listeners,
    config: &ServerConfig,
    state: AppState,
    registry: Arc<Registry>,
    ready: Readiness,
    shutdown: CancellationToken,
) -> Result<()> {
    let limits = state.limits;
    let metrics = state.metrics.clone();
    let cert = tls::ReloadingCert::load(&config.cert_dir, Some(metrics.clone()))
        .context("cannot load the serving certificate (make a pair with `capi-topology certs --dns localhost --out DIR`, then --cert-dir DIR)")?;
    let tls_config = RustlsConfig::from_config(cert.server_config()?);
    let cert_watch = cert.watch(config.cert_poll, shutdown.clone());
    let Listeners {
        admission: admission_listener,
        probes: probe_listener,
    } = listeners;

    let admission_handle = axum_server::Handle::new();
    let tls = RustlsAcceptor::new(tls_config).handshake_timeout(limits.handshake_timeout);
    let mut admission = axum_server::from_tcp(admission_listener)?
        .acceptor(LimitedAcceptor::new(
            tls,
            limits.max_connections,
            limits.idle_timeout,
            Some(metrics.clone()),
        ))
        .handle(admission_handle.clone());
    configure_http(admission.http_builder(), &limits);
    let admission = admission.serve(router(state).into_make_service());

    let probes_handle = axum_server::Handle::new();
    let probes = probe_server(
        probe_listener,
        registry,
        ready,
        &shutdown,
        &limits,
        metrics,
        &probes_handle,
    )?;

    let drain = config.drain;
    let stopper = tokio::spawn(async move {
        shutdown.cancelled().await;
        tracing::info!("shutting down: /readyz answers 503 while requests in flight drain");
        admission_handle.graceful_shutdown(Some(drain));
    });
    let probes = tokio::spawn(probes);
    let admission = admission.await;
    // The probe listener outlives the drain, so /readyz keeps saying 503 until the end.
    probes_handle.graceful_shutdown(Some(Duration::from_secs(1)));
    let probes = probes.await;
    stopper.abort();
    cert_watch.abort();
    admission.context("admission server failed")?;
    probes
        .context("probe server task failed")?
        .context("probe server failed")?;
    tracing::info!("stopped");
    Ok(())
}

/// Serves only `/metrics`, `/healthz` and `/readyz` on `addr` until `shutdown` (a process
/// running the controllers alone); `/readyz` fails from the moment shutdown begins.
pub async fn serve_probes(
    addr: SocketAddr,
    registry: Arc<Registry>,
    ready: Readiness,
    limits: ServerLimits,
    metrics: Metrics,
    shutdown: CancellationToken,
) -> Result<()> {
    let listener = listen(addr, "probes and metrics")?;
    let handle = axum_server::Handle::new();
    let server = probe_server(listener, registry, ready, &shutdown, &limits, metrics, &handle)?;
    let stopper = tokio::spawn(async move {
        shutdown.cancelled().await;
        handle.graceful_shutdown(Some(Duration::from_secs(1)));
    });
    let served = server.await;
    stopper.abort();
    served.context("probe server failed")
}

/// A listening socket on `addr`, ready for the async runtime; the log names the address bound.
fn listen(addr: SocketAddr, what: &str) -> Result<std::net::TcpListener> {
    let listener = std::net::TcpListener::bind(addr).with_context(|| format!("cannot listen on {addr}"))?;
    listener.set_nonblocking(true)?;
    let addr = listener.local_addr()?;
    tracing::info!(%addr, "serving {what}");
    Ok(listener)
}

/// The plain-HTTP probe server on `listener`, under the same connection limits as admission;
/// `/readyz` fails from the moment `shutdown` is cancelled.
fn probe_server(
    listener: std::net::TcpListener,
    registry: Arc<Registry>,
    ready: Readiness,
    shutdown: &CancellationToken,
    limits: &ServerLimits,
    metrics: Metrics,
    handle: &axum_server::Handle<SocketAddr>,
) -> Result<impl std::future::Future<Output = std::io::Result<()>>> {
    let stopping = shutdown.clone();
    let ready: Readiness = Arc::new(move || !stopping.is_cancelled() && ready());
    let mut server = axum_server::from_tcp(listener)?
        .acceptor(LimitedAcceptor::new(
            DefaultAcceptor,
            limits.max_connections,
            limits.idle_timeout,
            Some(metrics),
        ))
        .handle(handle.clone());
    configure_http(server.http_builder(), limits);
    let probe_router: Router = probes::router(registry, ready);
    Ok(server.serve(probe_router.into_make_service()))
}

/// Header-read timeout (slow clients), HTTP/2 keep-alive pings so dead peers are noticed, HTTP/2
/// flow-control windows of [`H2_WINDOW`] (what a connection may have sent and the server not yet
/// read: requests waiting for an evaluation place hold no more than that), and header lists read
/// up to [`TRANSPORT_HEADER_FACTOR`] times the limit, so that one over it
/// reaches [`refusals`] and is answered 431 with the reason on either protocol (past that the
/// protocol layer refuses it: hyper's bare 431 over HTTP/1.1, the h2 crate's 431 and a reset
/// over HTTP/2).
fn configure_http(
    builder: &mut hyper_util::server::conn::auto::Builder<hyper_util::rt::TokioExecutor>,
    limits: &ServerLimits,
) {
    let header_bytes = limits.max_header_bytes.saturating_mul(TRANSPORT_HEADER_FACTOR);
    builder
        .http1()
        .timer(TokioTimer::new())
        .header_read_timeout(limits.header_read_timeout)
        .max_buf_size(header_bytes.max(MIN_HTTP1_BUFFER));
    builder
        .http2()
        .timer(TokioTimer::new())
        .keep_alive_interval(Some(limits.idle_timeout / 2))
        .keep_alive_timeout(limits.header_read_timeout)
        .max_concurrent_streams(Some(64))
        .initial_stream_window_size(H2_WINDOW)
        .initial_connection_window_size(H2_WINDOW)
        .max_header_list_size(u32::try_from(header_bytes).unwrap_or(u32::MAX));
}

/// How many times `--max-header-bytes` the protocol layer reads before refusing by itself.
const TRANSPORT_HEADER_FACTOR: usize = 4;
/// The HTTP/2 flow-control window of a stream and of a connection (hyper's default is 1 MiB, so
/// that 512 connections could park 512 MiB of uploads the server has not read).
const H2_WINDOW: u32 = 256 * 1024;
/// hyper's smallest HTTP/1 read buffer.
const MIN_HTTP1_BUFFER: usize = 8 * 1024;
