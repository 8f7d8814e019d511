//! `capi-topology serve`: the admission webhooks over HTTPS and the controllers, reading objects
//! from the API server's watch caches (or, webhooks only, from files), with probes and metrics on
//! a side port.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result};
use clap::Args;
use prometheus_client::registry::Registry;

use super::files::admitted_store;
use crate::controller::{self, ControllerOptions};
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
    /// What this process runs: the admission webhooks, the controllers (topology and
    /// ClusterClass, on the replica holding the leader Lease), or both. Default: both against an
    /// API server, webhooks with --objects.
    #[arg(long, value_enum, value_delimiter = ',', value_name = "COMPONENT")]
    pub components: Vec<Component>,
    /// Namespace of the controllers' leader Lease.
    #[arg(
        long,
        env = "POD_NAMESPACE",
        default_value = "default",
        value_name = "NAMESPACE"
    )]
    pub leader_election_namespace: String,
    /// This replica's identity in the leader Lease.
    #[arg(long, env = "POD_NAME", value_name = "NAME")]
    pub leader_election_identity: Option<String>,
    /// Log line format.
    #[arg(long, value_enum, default_value_t = LogFormat::Text)]
    pub log_format: LogFormat,
    /// Log filter (`info`, `debug`, `capi_topology=debug`...); `RUST_LOG` wins when set.
    #[arg(long, value_name = "FILTER", default_value = "info")]
    pub log_level: String,
}

/// A part of the system `serve` can run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Component {
    /// The HTTPS admission webhooks.
    Webhooks,
    /// The topology and ClusterClass controllers.
    Controllers,
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
    let files = !args.objects.is_empty();
    let components = match args.components.as_slice() {
        [] if files => vec![Component::Webhooks],
        [] => vec![Component::Webhooks, Component::Controllers],
        given => given.to_vec(),
    };
    anyhow::ensure!(
        !(files && components.contains(&Component::Controllers)),
        "--objects serves webhooks only: controllers need an API server"
    );

    let mut controllers = None;
    let (source, ready): (Arc<dyn ObjectSource>, Readiness) = if files {
        let store = admitted_store(&args.objects)?;
        tracing::info!(objects = store.len(), "serving over files");
        (Arc::new(store), Arc::new(|| true))
    } else {
        let client = kube::Client::try_default()
            .await
            .context("cannot configure the Kubernetes client (in-cluster or KUBECONFIG)")?;
        let cache = WatchCache::start(client.clone(), Some(metrics.clone()), shutdown.clone());
        if components.contains(&Component::Controllers) {
            let options = ControllerOptions {
                lease_namespace: args.leader_election_namespace.clone(),
                identity: identity(args),
            };
            let (cache, shutdown) = (cache.clone(), shutdown.clone());
            controllers = Some(tokio::spawn(async move {
                let result = controller::run(client, cache, options, shutdown.clone()).await;
                // A replica that lost the Lease stops serving too, so its pod restarts clean.
                shutdown.cancel();
                result
            }));
        }
        let synced = cache.clone();
        (Arc::new(cache), Arc::new(move || synced.is_synced()))
    };

    let served = if components.contains(&Component::Webhooks) {
        let config = ServerConfig {
            bind: args.bind_address,
            probes: args.metrics_addr,
            cert_dir: args.cert_dir.clone(),
            cert_poll: CERT_POLL,
            drain: DRAIN,
        };
        let state = AppState { source, metrics };
        server::serve(&config, state, Arc::new(registry), ready, shutdown.clone()).await
    } else {
        server::serve_probes(args.metrics_addr, Arc::new(registry), ready, shutdown.clone()).await
    };
    shutdown.cancel();
    if let Some(controllers) = controllers {
        controllers.await.context("the controllers panicked")??;
    }
    served
}

/// The leader-election identity: `--leader-election-identity` (the pod name), else the host name
/// and process id.
fn identity(args: &ServeArgs) -> String {
    args.leader_election_identity.clone().unwrap_or_else(|| {
        let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
            .map(|h| h.trim().to_owned())
            .unwrap_or_else(|_| "capi-topology".to_owned());
        format!("{host}-{}", std::process::id())
    })
}
