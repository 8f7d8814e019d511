//! A ClusterResourceSet applies to the simulated workload cluster (#24): Cluster API's own
//! ClusterResourceSet controller (it stays Cluster API's beside capi-topology) creates the
//! resource in the workload API server the Docker provider's in-memory backend simulates, and
//! records it in the ClusterResourceSetBinding. The test reads the resource back through the
//! workload kubeconfig Secret `<cluster>-kubeconfig`, as an operator would.

use std::time::Duration;

use base64::Engine;
use serde_json::Value;

use crate::cache::kubernetes;
use crate::kubectl::Kubectl;
use crate::process::{poll, RunDir};

/// The label the ClusterResourceSet selects Clusters by.
const SELECTOR: (&str, &str) = ("addons.e2e/crs", "demo");

/// A ConfigMap carrying a ConfigMap for the workload cluster, and the ClusterResourceSet (v1beta2)
/// that applies it to the Clusters labelled [`SELECTOR`].
fn manifests() -> String {
    let (key, value) = SELECTOR;
    format!(
        r#"apiVersion: v1
kind: ConfigMap
metadata:
  name: crs-payload
  namespace: default
data:
  payload.yaml: |
    apiVersion: v1
    kind: ConfigMap
    metadata:
      name: crs-applied
      namespace: default
    data:
      hello: workload
---
apiVersion: addons.cluster.x-k8s.io/v1beta2
kind: ClusterResourceSet
metadata:
  name: crs-demo
  namespace: default
spec:
  strategy: ApplyOnce
  clusterSelector:
    matchLabels:
      {key}: {value}
  resources:
  - name: crs-payload
    kind: ConfigMap
"#
    )
}

/// Creates the ClusterResourceSet and labels `cluster` for it (any time: Cluster API applies it
/// once the control plane is initialized).
pub fn create(kubectl: &Kubectl, cluster: &str) -> Result<(), String> {
    let out = kubectl.apply(&manifests(), &[])?;
    if !out.success {
        return Err(out.stderr);
    }
    let (key, value) = SELECTOR;
    kubectl
        .ok(&[
            "label",
            "cluster",
            cluster,
            "-n",
            "default",
            &format!("{key}={value}"),
        ])
        .map(drop)
}

/// Waits until the ClusterResourceSetBinding of `cluster` records the payload as applied and the
/// workload cluster serves the ConfigMap it carries.
pub fn applied(run: &RunDir, kubectl: &Kubectl, cluster: &str) -> Result<(), String> {
    poll(
        "the ClusterResourceSetBinding to record the payload applied",
        Duration::from_secs(120),
        || {
            let text = kubectl.ok(&[
                "get",
                "clusterresourcesetbinding",
                cluster,
                "-n",
                "default",
                "-o",
                "json",
            ])?;
            let binding: Value = serde_json::from_str(&text).map_err(|e| e.to_string())?;
            let applied = binding["spec"]["bindings"]
                .as_array()
                .into_iter()
                .flatten()
                .any(|b| {
                    b["clusterResourceSetName"] == "crs-demo"
                        && b["resources"]
                            .as_array()
                            .into_iter()
                            .flatten()
                            .any(|r| r["name"] == "crs-payload" && r["applied"] == true)
                });
            if applied {
                Ok(())
            } else {
                Err(text)
            }
        },
    )?;
    let workload = workload_kubectl(run, kubectl, cluster)?;
    poll(
        "the workload cluster to serve the applied ConfigMap",
        Duration::from_secs(60),
        || {
            let hello = workload.ok(&[
                "get",
                "configmap",
                "crs-applied",
                "-n",
                "default",
                "-o",
                "jsonpath={.data.hello}",
            ])?;
            if hello == "workload" {
                Ok(())
            } else {
                Err(format!("data.hello={hello}"))
            }
        },
    )
}

/// kubectl for the workload cluster, with the kubeconfig Cluster API wrote into `<cluster>-kubeconfig`.
fn workload_kubectl(run: &RunDir, kubectl: &Kubectl, cluster: &str) -> Result<Kubectl, String> {
    let encoded = kubectl.ok(&[
        "get",
        "secret",
        &format!("{cluster}-kubeconfig"),
        "-n",
        "default",
        "-o",
        "jsonpath={.data.value}",
    ])?;
    let kubeconfig = base64::engine::general_purpose::STANDARD
        .decode(encoded.trim())
        .map_err(|e| format!("{cluster}-kubeconfig: {e}"))?;
    let path = run.join(&format!("{cluster}-workload.kubeconfig"));
    std::fs::write(&path, kubeconfig).map_err(|e| e.to_string())?;
    Ok(Kubectl::new(kubernetes().tool("kubectl"), path))
}
