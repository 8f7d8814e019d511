//! A Cluster paused in the middle of a chained upgrade (#34): while BeforeWorkersUpgrade holds
//! (the control plane upgraded, the workers not), the Cluster is paused (`spec.paused`), the hook
//! lets go, and for [`PAUSED`] nothing may move: no hook called, no Machine or MachineDeployment
//! changed, the TopologyReconciled condition saying why. Then it is unpaused and the upgrade
//! finishes ([`crate::beside_cluster_api_upgrade::chained`] checks the rest). Run by
//! `crate::faults_leader::upgrade_paused_then_unpaused` (ignored, slow).

use std::time::{Duration, Instant};

use serde_json::json;

use crate::beside_cluster_api::condition;
use crate::controllers::CONVERGED;
use crate::kubectl::Kubectl;
use crate::lifecycle_hooks::count;
use crate::process::poll;
use crate::runtime_extensions::expect;
use crate::runtime_extensions::extension::Extension;

/// How long the Cluster stays paused.
const PAUSED: Duration = Duration::from_secs(30);

/// Cluster `default/cluster`'s Machines, MachineDeployments and KubeadmControlPlanes, each with
/// its generation (a change of spec; Cluster API's controllers still write their Paused
/// conditions in the status).
pub(crate) fn moving_parts(kubectl: &Kubectl, cluster: &str) -> Result<String, String> {
    let selector = format!("cluster.x-k8s.io/cluster-name={cluster}");
    let template = "jsonpath={range .items[*]}{.kind}/{.metadata.name}@{.metadata.generation} {end}";
    let kinds = "machines,machinedeployments,kubeadmcontrolplanes";
    kubectl.ok(&["get", kinds, "-n", "default", "-l", &selector, "-o", template])
}

/// Pauses Cluster `default/cluster` while `hook` holds, lets the hook go, checks for [`PAUSED`]
/// that nothing moves, then unpauses it; returns when it was unpaused.
pub fn pause_while_held(
    kubectl: &Kubectl,
    extension: &Extension,
    cluster: &str,
    hook: &str,
) -> Result<Instant, String> {
    let key = format!("default/{cluster}");
    let paused = Instant::now();
    let patch = |value: bool| json!({"spec": {"paused": value}});
    kubectl.merge_patch(("cluster", "default", cluster), &patch(true), false)?;
    poll("the condition to say Paused", CONVERGED, || {
        let reason = kubectl.ok(&[
            "get",
            &format!("cluster/{cluster}"),
            "-n",
            "default",
            "-o",
            "jsonpath={.status.conditions[?(@.type==\"TopologyReconciled\")].reason}",
        ])?;
        (reason == "Paused").then_some(()).ok_or(reason)
    })?;
    let said = paused.elapsed();
    extension.answer(&json!({}));
    let (calls, parts) = (extension.calls().len(), moving_parts(kubectl, cluster)?);
    std::thread::sleep(PAUSED);
    let new_calls: Vec<String> = extension.calls()[calls..]
        .iter()
        .filter(|c| c.cluster == key)
        .map(|c| c.hook.clone())
        .collect();
    let now = moving_parts(kubectl, cluster)?;
    expect(
        new_calls.is_empty() && now == parts,
        format!("nothing moves while paused: hooks {new_calls:?}; {parts} then {now}"),
    )?;
    let unpaused = Instant::now();
    kubectl.merge_patch(("cluster", "default", cluster), &patch(false), false)?;
    poll(&format!("{hook} called after the unpause"), CONVERGED, || {
        let n = count(&extension.calls()[calls..], hook, &key);
        (n > 0).then_some(()).ok_or_else(|| {
            format!(
                "Available {}",
                condition(kubectl, &format!("cluster/{cluster}"), "Available")
            )
        })
    })?;
    eprintln!(
        "faults: Cluster paused while {hook} held: the condition said Paused after {said:?}; \
         nothing moved for {PAUSED:?}; {hook} called again {:?} after the unpause",
        unpaused.elapsed()
    );
    Ok(unpaused)
}
