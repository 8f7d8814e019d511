//! `capi-topology cluster-api`: capi-topology beside Cluster API's own managers. `doctor` reads a
//! management cluster and says what is missing or in conflict; `take-over` and `give-back` switch
//! Cluster API's own admission webhooks for the resources capi-topology serves off and on again
//! (the install and uninstall steps of docs/beside-cluster-api.md).

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result};
use clap::{Args, Subcommand};
use k8s_openapi::api::admissionregistration::v1::{
    MutatingWebhookConfiguration, ValidatingWebhookConfiguration,
};
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, ListParams};
use serde::Serialize;

use super::api_reads::{bounded_client, request_timeout_arg, RequestTimeout, DEFAULT_REQUEST_TIMEOUT};
use super::serve::kube_config;
use super::{print_stdout, EXIT_FINDINGS};
use crate::beside_cluster_api::{diagnose, Severity, State, Switch};
use crate::controller::cluster_api_webhooks::switch_all;

/// The name of capi-topology's own webhook configurations (manifests/base/webhooks.yaml).
const OWN_CONFIGURATION: &str = "capi-topology";

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
    /// Read the management cluster (never write) and say what is missing or in conflict: Cluster
    /// API's topology controller on, webhooks registered twice or not at all, CRD versions.
    /// Exits 1 when something must be fixed.
    Doctor,
    /// Switch Cluster API's own admission webhooks for Clusters, ClusterClasses and
    /// ExtensionConfigs off (an always-false match condition; nothing is deleted). Idempotent.
    TakeOver,
    /// Switch them on again, as installed (uninstall). Idempotent.
    GiveBack,
}

/// Runs `cluster-api`.
pub fn run(args: &ClusterApiArgs) -> Result<ExitCode> {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    runtime.block_on(async {
        let config = kube_config(args.kubeconfig.as_deref()).await?;
        let client = bounded_client(config, args.request_timeout)?;
        match args.action {
            Action::Doctor => doctor(&client).await,
            Action::TakeOver => switch(&client, Switch::Off).await,
            Action::GiveBack => switch(&client, Switch::On).await,
        }
    })
}

async fn switch(client: &kube::Client, switch: Switch) -> Result<ExitCode> {
    let mut changed = switch_all::<ValidatingWebhookConfiguration>(client, switch).await?;
    changed.extend(switch_all::<MutatingWebhookConfiguration>(client, switch).await?);
    let state = if switch == Switch::Off { "off" } else { "on" };
    if changed.is_empty() {
        print_stdout(&format!(
            "Cluster API's webhooks for clusters, clusterclasses and extensionconfigs were already {state}\n"
        ))?;
    }
    for name in changed {
        print_stdout(&format!("{name}: switched {state}\n"))?;
    }
    Ok(ExitCode::SUCCESS)
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
    let findings = diagnose(&State {
        webhook_configurations,
        crds,
        provider_deployments,
        own_configuration: OWN_CONFIGURATION.to_owned(),
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
    print_stdout(&text)?;
    let broken = findings.iter().any(|f| f.severity == Severity::Error);
    Ok(if broken {
        ExitCode::from(EXIT_FINDINGS)
    } else {
        ExitCode::SUCCESS
    })
}
