//! `capi-topology serve`: the admission webhooks over HTTPS, reading objects from the API server's
//! watch caches (or, with `--objects`, from files), with probes and metrics on a side port.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result};
use clap::Args;
use prometheus_client::registry::Registry;

use super::files::admitted_store;
use crate::metrics::Metrics;
use crate::server::{self, AppState, Readiness, ServerConfig};
use crate::store::{ObjectSource, WatchCache};
use crate::telemetry::{self, LogFormat};

/// How often the certificate directory is checked for a rotated pair.
const CERT_POLL: Duration = Duration::from_secs(2);
/// How long requests in flight may take to finish after SIGTERM (the pod's grace period is 30 s).
const DRAIN: Duration = Duration::from_secs(20);

/// Arguments of `serve`.
#[derive(Debug, Args)]
pub struct ServeArgs {
    /// Directory with the serving certificate `tls.crt` and key `tls.key` (reloaded on change).
    #[arg(
        long,
        value_name = "DIR",
        default_value = "/tmp/k8s-webhook-server/serving-certs"
    )]
    pub cert_dir: PathBuf,
    /// Address of the HTTPS admission endpoints.
    #[arg(long, value_name = "ADDR", default_value = "0.0.0.0:9443")]
    pub bind_address: SocketAddr,
    /// Address of /metrics, /healthz and /readyz (plain HTTP).
    #[arg(long, value_name = "ADDR", default_value = "0.0.0.0:8080")]
    pub metrics_addr: SocketAddr,
    /// Serve over the objects in these files or directories instead of an API server (local
    /// development, demos, load tests). They are admitted as `kubectl apply` would.
    #[arg(long = "objects", value_name = "PATH", num_args = 1..)]
    pub objects: Vec<PathBuf>,
    /// Log line format.
    #[arg(long, value_enum, default_value_t = LogFormat::Text)]
    pub log_format: LogFormat,
    /// Log filter (`info`, `debug`, `capi_topology=debug`...); `RUST_LOG` wins when set.
    #[arg(long, value_name = "FILTER", default_value = "info")]
    pub log_level: String,
}

/// Runs the server until SIGTERM or SIGINT.
pub fn run(args: &ServeArgs) -> Result<ExitCode> {
    telemetry::init(args.log_format, &args.log_level)?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .thread_name("capi-topology")
        .build()
        .context("cannot start the async runtime")?;
    runtime.block_on(serve(args))?;
    Ok(ExitCode::SUCCESS)
}

async fn serve(args: &ServeArgs) -> Result<()> {
    // kube's client and the server both use rustls with ring; make it the process default.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let shutdown = crate::shutdown::on_signal().context("cannot listen for signals")?;
    let mut registry = Registry::default();
    let metrics = Metrics::register(&mut registry);

    let (source, ready): (Arc<dyn ObjectSource>, Readiness) = if args.objects.is_empty() {
        let client = kube::Client::try_default()
            .await
            .context("cannot configure the Kubernetes client (in-cluster or KUBECONFIG)")?;
        let cache = WatchCache::start(client, Some(metrics.clone()), shutdown.clone());
        let synced = cache.clone();
        (Arc::new(cache), Arc::new(move || synced.is_synced()))
    } else {
        let store = admitted_store(&args.objects)?;
        tracing::info!(objects = store.len(), "serving over files");
        (Arc::new(store), Arc::new(|| true))
    };

    let config = ServerConfig {
        bind: args.bind_address,
        probes: args.metrics_addr,
        cert_dir: args.cert_dir.clone(),
        cert_poll: CERT_POLL,
        drain: DRAIN,
    };
    let state = AppState { source, metrics };
    server::serve(&config, state, Arc::new(registry), ready, shutdown).await
}
