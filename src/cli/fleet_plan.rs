//! The dry run of `cluster-api take-over` / `give-back`: every topology-managed Cluster of the
//! management cluster planned against its live state, read-only, by the code path of `plan
//! --kubeconfig` (the same reader, the same offline API server, the same plan and `-o diff`).

use std::path::{Path, PathBuf};

use anyhow::Result;

use super::api_reads::RequestTimeout;
use super::current::CurrentArgs;
use super::extensions::runtime_extensions;
use super::live::{topology_clusters, Target};
use super::plan::{stored_extension_configs, stored_namespaces};
use super::plan_current::{plan_against_current, At};
use super::plan_output::render_diff;
use crate::beside_cluster_api::{ClusterPlan, DryRun};

/// Plans every topology-managed Cluster the kubeconfig's management cluster holds.
pub fn plan_fleet(kubeconfig: Option<&Path>, request_timeout: RequestTimeout) -> Result<DryRun> {
    let target = Target {
        kubeconfig,
        context: None,
        request_timeout,
    };
    let clusters = topology_clusters(&target)?;
    if clusters.is_empty() {
        return Ok(DryRun { clusters: Vec::new() });
    }
    let state = CurrentArgs {
        current: Vec::new(),
        kubeconfig: Some(kubeconfig.map(PathBuf::from)),
        context: None,
        request_timeout,
    }
    .load(&clusters)?
    .map(|state| state.store)
    .unwrap_or_default();
    let extensions =
        runtime_extensions(&[stored_extension_configs(&state), stored_namespaces(&state)].concat());
    let mut plans = Vec::new();
    for cluster in &clusters {
        let namespace = cluster["metadata"]["namespace"].as_str().unwrap_or("default");
        let name = cluster["metadata"]["name"].as_str().unwrap_or_default();
        let planned = plan_against_current(&state, namespace, name, &extensions, At::Pinned);
        let mut report = String::new();
        let outcome = planned.inspect(|planned| render_diff(&mut report, namespace, name, planned));
        plans.push(match outcome {
            Ok(planned) => ClusterPlan {
                cluster: format!("{namespace}/{name}"),
                changes: !report.contains("  no changes\n"),
                outcome: Ok(report),
                rolls: planned.machine_rolls,
                upgrade_rolls: planned.upgrade_rolls,
            },
            Err(error) => ClusterPlan {
                cluster: format!("{namespace}/{name}"),
                outcome: Err(format!("{error:#}")),
                rolls: Vec::new(),
                upgrade_rolls: Vec::new(),
                changes: false,
            },
        });
    }
    Ok(DryRun { clusters: plans })
}
