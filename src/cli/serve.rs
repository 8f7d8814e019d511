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
use crate::api::names::{dns1123_label_problems, label_value_problems};
use crate::controller::{self, ControllerKind, ControllerOptions, Scope};
use crate::kube_credentials::{client, redacted_messages, removed_auth_provider};
use crate::metrics::Metrics;
use crate::server::{self, AppState, Readiness, ServerConfig, ServerLimits};
use crate::store::{ObjectSource, WatchCache};
use crate::telemetry::{self, LogFormat};

/// How often the certificate directory is checked for a rotated pair.
const CERT_POLL: Duration = Duration::from_secs(2);
/// Blocking threads beyond the evaluation places, for file and DNS work.
const BLOCKING_SPARE: usize = 4;
/// The stack of every runtime thread, the blocking pool's included.
const THREAD_STACK: usize = 4 * 1024 * 1024;
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
    /// Kubeconfig of the API server to serve from (default: `KUBECONFIG`, then
    /// ~/.kube/config, then the pod's in-cluster configuration).
    #[arg(long, value_name = "FILE")]
    pub kubeconfig: Option<PathBuf>,
    /// Serve over the objects in these files or directories instead of an API server (local
    /// development, demos, load tests). They are admitted as `kubectl apply` would. Regular
    /// files only, at most 32 MiB each.
    #[arg(long = "objects", value_name = "PATH", num_args = 1..)]
    pub objects: Vec<PathBuf>,
    /// What this process runs: the admission webhooks, the controllers (topology and
    /// ClusterClass, on the replica holding the leader Lease), or both. Default: both against an
    /// API server, webhooks with --objects.
    #[arg(long, value_enum, value_delimiter = ',', value_name = "COMPONENT")]
    pub components: Vec<Component>,
    /// The controllers to run (with the `controllers` component). Default: all but
    /// `cluster-api-webhooks`, as capi-topology runs on its own; beside Cluster API's managers:
    /// `topology,cluster-class,extension-config,cluster-api-webhooks,class-rollout` (docs/beside-cluster-api.md).
    #[arg(long, value_enum, value_delimiter = ',', value_name = "CONTROLLER")]
    pub controllers: Vec<ControllerKind>,
    /// Reconcile only the objects labelled `cluster.x-k8s.io/watch-filter=VALUE`, as Cluster API's
    /// managers do with the same flag; instances with different filters split a fleet, each
    /// with its own leader Lease. The webhooks still admit every object.
    #[arg(long, value_name = "VALUE", value_parser = parse_label_value)]
    pub watch_filter: Option<String>,
    /// Reconcile only the objects of this namespace (repeat for several; default: all). The
    /// webhooks still admit every object.
    #[arg(long = "namespace", value_name = "NAMESPACE", value_parser = parse_namespace)]
    pub namespaces: Vec<String>,
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
    /// Largest admission request body read, in bytes (controller-runtime's 7 MiB: an UPDATE's
    /// object and oldObject at the API server's 3 MiB each); larger ones are answered 413.
    #[arg(long, value_name = "BYTES", default_value_t = ServerLimits::default().max_body_bytes)]
    pub max_body_bytes: usize,
    /// Admission reviews evaluated at once; others wait up to --queue-wait, then get 429. Only
    /// these read a body, so they bound the server's memory (the worst case is in
    /// docs/deployment.md, "Limits").
    #[arg(long, value_name = "N", default_value_t = ServerLimits::default().max_in_flight)]
    pub max_in_flight: usize,
    /// How long an admission review waits for an evaluation place before it is answered 429.
    #[arg(long, value_name = "DURATION", value_parser = parse_duration, default_value = "2s")]
    pub queue_wait: Duration,
    /// How long a ConversionReview waits for an evaluation place before it is answered 429
    /// (with --deadline, keep it under the API server's fixed 30 s for a conversion call).
    #[arg(long, value_name = "DURATION", value_parser = parse_duration, default_value = "15s")]
    pub conversion_queue_wait: Duration,
    /// How long one review's evaluation may run before it is answered with an error (keep it
    /// under the webhook configuration's timeoutSeconds).
    #[arg(long, value_name = "DURATION", value_parser = parse_duration, default_value = "9s")]
    pub deadline: Duration,
    /// Connections open at once on each listener (admission and probes); more are closed.
    #[arg(long, value_name = "N", default_value_t = ServerLimits::default().max_connections)]
    pub max_connections: usize,
    /// Largest request header list, in bytes (as HTTP/2 counts it); larger ones are answered 431.
    #[arg(long, value_name = "BYTES", default_value_t = ServerLimits::default().max_header_bytes)]
    pub max_header_bytes: usize,
    /// How long a client may take to send a request's headers.
    #[arg(long, value_name = "DURATION", value_parser = parse_duration, default_value = "5s")]
    pub header_read_timeout: Duration,
    /// How long a connection may go without traffic before it is closed.
    #[arg(long, value_name = "DURATION", value_parser = parse_duration, default_value = "60s")]
    pub idle_timeout: Duration,
    /// How long a TLS handshake may take.
    #[arg(long, value_name = "DURATION", value_parser = parse_duration, default_value = "5s")]
    pub handshake_timeout: Duration,
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

/// A duration written as a number with a unit: `500ms`, `9s`, `2m`.
pub(super) fn parse_duration(text: &str) -> Result<Duration, String> {
    let split = text.find(|c: char| !c.is_ascii_digit()).unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let number: u64 = number
        .parse()
        .map_err(|_| format!("{text:?} is not a duration: write a number and a unit (500ms, 9s, 2m)"))?;
    match unit {
        "ms" => Ok(Duration::from_millis(number)),
        "s" => Ok(Duration::from_secs(number)),
        "m" => number
            .checked_mul(60)
            .map(Duration::from_secs)
            .ok_or_else(|| format!("{text:?} is too long")),
        _ => Err(format!("{text:?} has no known unit: use ms, s or m")),
    }
}

/// A label value, as the API server would accept it in a label selector.
fn parse_label_value(text: &str) -> Result<String, String> {
    match label_value_problems(text).as_slice() {
        [] => Ok(text.to_owned()),
        problems => Err(format!("{text:?} is not a label value: {}", problems.join("; "))),
    }
}

/// A namespace name (a DNS-1123 label).
fn parse_namespace(text: &str) -> Result<String, String> {
    match dns1123_label_problems(text).as_slice() {
        [] => Ok(text.to_owned()),
        problems => Err(format!(
            "{text:?} is not a namespace name: {}",
            problems.join("; ")
        )),
    }
}

impl ServeArgs {
    /// The server limits the flags set.
    fn limits(&self) -> ServerLimits {
        ServerLimits {
            max_body_bytes: self.max_body_bytes,
            max_in_flight: self.max_in_flight.max(1),
            queue_wait: self.queue_wait,
            conversion_queue_wait: self.conversion_queue_wait,
            deadline: self.deadline,
            max_connections: self.max_connections.max(1),
            max_header_bytes: self.max_header_bytes,
            header_read_timeout: self.header_read_timeout,
            idle_timeout: self.idle_timeout,
            handshake_timeout: self.handshake_timeout,
        }
    }
}

/// Runs the server until SIGTERM or SIGINT.
pub fn run(args: &ServeArgs) -> Result<ExitCode> {
    telemetry::init(args.log_format, &args.log_level)?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .thread_name("capi-topology")
        // Room for the CEL evaluator's recursion without switching stacks (see variables::cel).
        .thread_stack_size(THREAD_STACK)
        // Evaluations hold at most --max-in-flight blocking threads; the rest is file and DNS
        // work. Without a cap the pool grows a thread (and an allocator heap) per burst.
        .max_blocking_threads(args.max_in_flight.max(1) + BLOCKING_SPARE)
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
        let client = kube_client(args.kubeconfig.as_deref()).await?;
        let cache = WatchCache::start(client.clone(), Some(metrics.clone()), shutdown.clone());
        if components.contains(&Component::Controllers) {
            let options = ControllerOptions {
                controllers: if args.controllers.is_empty() {
                    ControllerKind::STANDALONE.to_vec()
                } else {
                    args.controllers.clone()
                },
                lease_namespace: args.leader_election_namespace.clone(),
                identity: identity(args),
                metrics: Some(metrics.clone()),
                scope: Scope {
                    watch_filter: args.watch_filter.clone().filter(|value| !value.is_empty()),
                    namespaces: args.namespaces.iter().cloned().collect(),
                },
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
        let state = AppState::new(source, metrics, args.limits());
        server::serve(&config, state, Arc::new(registry), ready, shutdown.clone()).await
    } else {
        server::serve_probes(
            args.metrics_addr,
            Arc::new(registry),
            ready,
            args.limits(),
            metrics,
            shutdown.clone(),
        )
        .await
    };
    shutdown.cancel();
    if let Some(controllers) = controllers {
        controllers.await.context("the controllers panicked")??;
    }
    served
}

/// A client of the API server from `--kubeconfig`, or as kubectl finds one; failing, one line
/// saying why and what to do, without the kubeconfig's credentials.
pub(super) async fn kube_client(kubeconfig: Option<&std::path::Path>) -> Result<kube::Client> {
    let config = kube_config(kubeconfig).await?;
    client(config).map_err(|why| anyhow::anyhow!("cannot create the Kubernetes client: {why}"))
}

/// The client configuration [`kube_client`] uses.
pub(super) async fn kube_config(kubeconfig: Option<&std::path::Path>) -> Result<kube::Config> {
    let config = match kubeconfig {
        Some(path) => {
            let file = kube::config::Kubeconfig::read_from(path).map_err(|err| {
                anyhow::anyhow!(
                    "cannot read the kubeconfig {}: {}",
                    path.display(),
                    innermost(&err)
                )
            })?;
            kube::Config::from_custom_kubeconfig(file, &kube::config::KubeConfigOptions::default())
                .await
                .map_err(|err| {
                    anyhow::anyhow!(
                        "cannot use the kubeconfig {}: {}",
                        path.display(),
                        innermost(&err)
                    )
                })?
        }
        None => kube::Config::infer().await.map_err(|err| {
            anyhow::anyhow!(
                "no Kubernetes API server to serve from ({}); set KUBECONFIG or --kubeconfig, \
                 run in a pod, or pass --objects DIR to serve over files",
                redacted_messages(&err).into_iter().next().unwrap_or_default()
            )
        })?,
    };
    // A removed auth provider is refused before any client is built: its command never runs.
    if let Some(refusal) = removed_auth_provider(&config.auth_info) {
        anyhow::bail!("cannot create the Kubernetes client: {refusal}");
    }
    Ok(config)
}

/// The innermost cause of `err`, the one line that says what actually failed, without
/// credentials.
fn innermost(err: &(dyn std::error::Error + 'static)) -> String {
    redacted_messages(err).pop().unwrap_or_default()
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
