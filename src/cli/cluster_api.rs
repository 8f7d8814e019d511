//! `capi-topology cluster-api`: capi-topology beside Cluster API's own managers. `doctor` reads a
//! management cluster and says what is missing or in conflict, and which topology controller
//! owns the fleet; `take-over` and `give-back` plan every topology-managed Cluster against its
//! live state (a dry run, the default) and, with `--apply`, switch the fleet from Cluster API's
//! topology controller to capi-topology's and back (docs/beside-cluster-api.md).

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context, Result};
use clap::{Args, Subcommand};
use k8s_openapi::api::admissionregistration::v1::{
    MutatingWebhookConfiguration, ValidatingWebhookConfiguration,
};
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, DynamicObject, ListParams};
use kube::core::{ApiResource, GroupVersionKind};
use serde::Serialize;

use super::api_reads::{bounded_client, request_timeout_arg, RequestTimeout, DEFAULT_REQUEST_TIMEOUT};
use super::cluster_api_switch::{switch, OWN_CONFIGURATION};
use super::fleet_plan::plan_fleet;
use super::serve::{kube_config, parse_duration};
use super::terminal::print_text;
use super::EXIT_FINDINGS;
use crate::beside_cluster_api::{diagnose, Direction, Severity, State, OUR_CONTROLLER_SELECTOR};

/// Arguments of `cluster-api`.
#[derive(Debug, Args)]
pub struct ClusterApiArgs {
    /// What to do.
    #[command(subcommand)]
    pub action: Action,
    /// Kubeconfig of the management cluster (default: `KUBECONFIG`, then ~/.kube/config).
    #[arg(long, value_name = "FILE", global = true)]
    pub kubeconfig: Option<PathBuf>,
    /// How long one request to the API server may take, as kubectl's flag: `30s`, `2m`, a number
    /// of seconds; `0` for no limit (kubectl's default; ours is 30s).
    #[arg(long, value_name = "DURATION", global = true, value_parser = request_timeout_arg, default_value = DEFAULT_REQUEST_TIMEOUT)]
    pub request_timeout: RequestTimeout,
}

/// What `cluster-api` does.
#[derive(Debug, Subcommand)]
pub enum Action {
    /// Read the management cluster (never write) and say which topology controller owns the
    /// fleet (Cluster API's, capi-topology's; both is an error) and what is missing or in
    /// conflict: webhooks registered twice or not at all, CRD versions. Exits 1 when something
    /// must be fixed.
    Doctor,
    /// Move the fleet from Cluster API's topology controller (ClusterTopology=true) to
    /// capi-topology's. Without --apply a dry run (writes nothing): every topology-managed
    /// Cluster planned against its live state; exits 1 when one would roll Machines. With
    /// --apply: admission to capi-topology, Cluster API's controller stopped, ours started.
    TakeOver(SwitchArgs),
    /// Move the fleet back to Cluster API's topology controller: the same dry run; with --apply,
    /// ours stopped, Cluster API's started (ClusterTopology=true), admission back to Cluster API.
    GiveBack(SwitchArgs),
}

/// Arguments of `take-over` and `give-back`.
#[derive(Debug, Args)]
pub struct SwitchArgs {
    /// Switch after the dry run (default: the dry run only).
    #[arg(long)]
    pub apply: bool,
    /// Switch even when a Cluster would roll Machines or could not be planned.
    #[arg(long, requires = "apply")]
    pub force: bool,
    /// How long each Deployment may take to roll out (and admission to answer): 500ms, 90s, 5m.
    #[arg(long, value_name = "DURATION", value_parser = parse_duration, default_value = "5m")]
    pub timeout: Duration,
}

/// Runs `cluster-api`.
pub fn run(args: &ClusterApiArgs) -> Result<ExitCode> {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let (direction, switch_args) = match &args.action {
        Action::Doctor => return in_runtime(args, |client| async move { doctor(&client).await }),
        Action::TakeOver(switch_args) => (Direction::TakeOver, switch_args),
        Action::GiveBack(switch_args) => (Direction::GiveBack, switch_args),
    };
    let dry_run = plan_fleet(args.kubeconfig.as_deref(), args.request_timeout)?;
    print_text(&dry_run.text(direction))?;
    let refusal = dry_run.refusal(direction);
    if !switch_args.apply {
        return Ok(match refusal {
            Some(_) => ExitCode::from(EXIT_FINDINGS),
            None => ExitCode::SUCCESS,
        });
    }
    match refusal {
        Some(refusal) if !switch_args.force => {
            eprintln!("{refusal}");
            return Ok(ExitCode::from(EXIT_FINDINGS));
        }
        Some(_) => print_text("--force: switching although the dry run would refuse\n")?,
        None => {}
    }
    let timeout = switch_args.timeout;
    in_runtime(args, move |client| async move {
        switch(&client, direction, timeout).await?;
        Ok(ExitCode::SUCCESS)
    })
}

/// Runs `work` with a client of the management cluster on a runtime of its own.
fn in_runtime<F, Fut>(args: &ClusterApiArgs, work: F) -> Result<ExitCode>
where
    F: FnOnce(kube::Client) -> Fut,
    Fut: std::future::Future<Output = Result<ExitCode>>,
{
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    runtime.block_on(async {
        let config = kube_config(args.kubeconfig.as_deref()).await?;
        let client = bounded_client(config, args.request_timeout)?;
        work(client).await
    })
}

fn values<T: Serialize>(items: Vec<T>) -> Result<Vec<serde_json::Value>> {
    items
        .into_iter()
        .map(|item| serde_json::to_value(item).map_err(Into::into))
        .collect()
}

/// Lists every object of `K`, with its kind set (list items come without it).
async fn list<K>(client: &kube::Client, params: &ListParams) -> Result<Vec<serde_json::Value>>
where
    K: kube::Resource<DynamicType = ()> + Clone + std::fmt::Debug + Serialize + serde::de::DeserializeOwned,
{
    let items = Api::<K>::all(client.clone()).list(params).await?.items;
    let mut items = values(items)?;
    for item in &mut items {
        item["kind"] = serde_json::Value::from(K::kind(&()).into_owned());
    }
    Ok(items)
}

/// How many Clusters have a `spec.topology` (none when the Cluster CRD is not installed).
async fn topology_clusters(client: &kube::Client) -> Result<usize> {
    let gvk = GroupVersionKind::gvk("cluster.x-k8s.io", "v1beta2", "Cluster");
    let resource = ApiResource::from_gvk_with_plural(&gvk, "clusters");
    let api: Api<DynamicObject> = Api::all_with(client.clone(), &resource);
    match api.list(&ListParams::default()).await {
        Ok(list) => Ok(list
            .items
            .iter()
            .filter(|cluster| cluster.data["spec"]["topology"].is_object())
            .count()),
        Err(kube::Error::Api(status)) if status.code == 404 => Ok(0),
        Err(error) => Err(error).context("cannot list Clusters"),
    }
}

async fn doctor(client: &kube::Client) -> Result<ExitCode> {
    let all = ListParams::default();
    let mut webhook_configurations = list::<ValidatingWebhookConfiguration>(client, &all).await?;
    webhook_configurations.extend(list::<MutatingWebhookConfiguration>(client, &all).await?);
    let crds = list::<CustomResourceDefinition>(client, &all)
        .await?
        .into_iter()
        .filter(|crd| {
            crd["spec"]["group"]
                .as_str()
                .is_some_and(|g| g.ends_with("cluster.x-k8s.io"))
        })
        .collect();
    let provider_deployments =
        list::<Deployment>(client, &ListParams::default().labels("cluster.x-k8s.io/provider")).await?;
    let own_deployments =
        list::<Deployment>(client, &ListParams::default().labels(OUR_CONTROLLER_SELECTOR)).await?;
    let findings = diagnose(&State {
        webhook_configurations,
        crds,
        provider_deployments,
        own_configuration: OWN_CONFIGURATION.to_owned(),
        own_deployments,
        topology_clusters: topology_clusters(client).await?,
    });
    let mut text = String::new();
    for finding in &findings {
        let mark = match finding.severity {
            Severity::Ok => "ok     ",
            Severity::Warning => "warning",
            Severity::Error => "error  ",
        };
        text.push_str(&format!("{mark} {}\n", finding.message));
    }
    print_text(&text)?;
    let broken = findings.iter().any(|f| f.severity == Severity::Error);
    Ok(if broken {
        ExitCode::from(EXIT_FINDINGS)
    } else {
        ExitCode::SUCCESS
    })
}
