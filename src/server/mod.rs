//! The webhook server: admission reviews over HTTPS (HTTP/2 and HTTP/1.1, certificate reloaded
//! from disk without a restart), and probes and metrics over plain HTTP on a side port. Both stop
//! accepting on shutdown and finish the requests in flight.

pub mod dev_certs;
mod handlers;
mod probes;
mod router;
pub mod tls;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result};
use axum_server::tls_rustls::RustlsConfig;
use prometheus_client::registry::Registry;
use tokio_util::sync::CancellationToken;

use crate::metrics::Metrics;
use crate::store::ObjectSource;

pub use router::{router, REQUEST_TIMEOUT};

/// What every admission request reads: the objects and the metrics.
#[derive(Clone)]
pub struct AppState {
    /// Where ClusterClasses, Clusters and the objects version checks read come from.
    pub source: Arc<dyn ObjectSource>,
    /// The server's metrics.
    pub metrics: Metrics,
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

/// Serves until `shutdown` is cancelled, then drains. Fails at once when the certificate cannot
/// be loaded or an address cannot be bound.
pub async fn serve(
    config: &ServerConfig,
    state: AppState,
    registry: Arc<Registry>,
    ready: Readiness,
    shutdown: CancellationToken,
) -> Result<()> {
    let cert = tls::ReloadingCert::load(&config.cert_dir, Some(state.metrics.clone()))
        .context("cannot load the serving certificate")?;
    let tls_config = RustlsConfig::from_config(cert.server_config()?);
    let cert_watch = cert.watch(config.cert_poll, shutdown.clone());

    let admission_listener = std::net::TcpListener::bind(config.bind)
        .with_context(|| format!("cannot listen on {}", config.bind))?;
    admission_listener.set_nonblocking(true)?;
    tracing::info!(admission = %config.bind, "serving admission reviews");

    let handle = axum_server::Handle::new();
    let admission = axum_server::from_tcp_rustls(admission_listener, tls_config)?
        .handle(handle.clone())
        .serve(router(state).into_make_service());

    let probes = serve_probes(config.probes, registry, ready, shutdown.clone());

    let drain = config.drain;
    let stopper = tokio::spawn(async move {
        shutdown.cancelled().await;
        handle.graceful_shutdown(Some(drain));
    });
    let (admission, probes) = tokio::join!(admission, probes);
    stopper.abort();
    cert_watch.abort();
    admission.context("admission server failed")?;
    probes?;
    tracing::info!("stopped");
    Ok(())
}

/// Serves `/metrics`, `/healthz` and `/readyz` on `addr` until `shutdown`; `/readyz` fails from
/// the moment shutdown begins.
pub async fn serve_probes(
    addr: SocketAddr,
    registry: Arc<Registry>,
    ready: Readiness,
    shutdown: CancellationToken,
) -> Result<()> {
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .with_context(|| format!("cannot listen on {addr}"))?;
    tracing::info!(probes = %addr, "serving probes and metrics");
    let shutting_down = shutdown.clone();
    let ready_unless_stopping: Readiness = Arc::new(move || !shutting_down.is_cancelled() && ready());
    axum::serve(listener, probes::router(registry, ready_unless_stopping))
        .with_graceful_shutdown(shutdown.cancelled_owned())
        .await
        .context("probe server failed")
}
