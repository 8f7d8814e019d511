//! Waiting for the ClusterClass controller: the Cluster webhook trusts only reconciled classes,
//! so the scenarios wait for the status `capi-topology serve` writes before creating Clusters.

use std::time::Duration;

use serde_json::Value;

use crate::kubectl::Kubectl;
use crate::manifests::{quickstart_object, quickstart_templates, render};
use crate::process::poll;

/// How long the controller may take to write a class's status (it leads within a second or two).
const RECONCILED: Duration = Duration::from_secs(60);

/// Waits until ClusterClass `namespace/name` has `status.observedGeneration` equal to its
/// generation, every inline variable in `status.variables`, and `VariablesReady` True (read as
/// v1beta2, the preferred version).
pub fn wait_reconciled(kubectl: &Kubectl, namespace: &str, name: &str) -> Result<Value, String> {
    poll("ClusterClass status from the controller", RECONCILED, || {
        let class = kubectl.get_json("clusterclass", namespace, name)?;
        let generation = &class["metadata"]["generation"];
        let status = &class["status"];
        if status["observedGeneration"] != *generation {
            return Err(format!(
                "observedGeneration {} of generation {generation}",
                status["observedGeneration"]
            ));
        }
        let inline = class["spec"]["variables"].as_array().map_or(0, Vec::len);
        let listed = status["variables"].as_array().map_or(0, Vec::len);
        if listed != inline {
            return Err(format!("{listed} of {inline} variables in status"));
        }
        let reconciled = status["conditions"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|c| c["type"] == "VariablesReady" && c["status"] == "True");
        if !reconciled {
            return Err("VariablesReady is not True".to_owned());
        }
        Ok(class.clone())
    })
}

/// Applies the quickstart templates and its ClusterClass in `default`, and waits for the class to
/// be reconciled: the start of every scenario on the quickstart class.
pub fn install_quickstart(kubectl: &Kubectl) -> Result<Value, String> {
    kubectl.accepts(&render(&quickstart_templates()))?;
    let class = quickstart_object("00-clusterclass.yaml", "ClusterClass");
    kubectl.accepts(&render(&[class]))?;
    wait_reconciled(kubectl, "default", "quick-start")
}
