//! A ClusterClass change reaches every Cluster of the class: a new worker machine template in the
//! class rotates the clones of both quickstart Clusters (old clones deleted), and new control
//! plane labels in the class show on both control planes.

use serde_json::{json, Value};

use crate::class_status;
use crate::controllers::{condition, owned_by, CONVERGED};
use crate::env::Env;
use crate::manifests::{quickstart_object, quickstart_templates, render, with};
use crate::process::poll;

const CLUSTERS: [&str; 2] = ["dev", "prod"];
const NEW_TEMPLATE: &str = "quick-start-default-worker-v2";

#[test]
fn a_class_change_rolls_out_to_every_cluster_of_the_class() {
    let env = Env::with_webhooks("class-rollout");
    let kubectl = &env.kubectl;
    let fail = |e: String| -> ! { panic!("{e}\n{}", env.logs()) };
    let templates = quickstart_templates();
    kubectl.accepts(&render(&templates)).unwrap_or_else(|e| fail(e));
    let class = quickstart_object("00-clusterclass.yaml", "ClusterClass");
    kubectl
        .accepts(&render(std::slice::from_ref(&class)))
        .unwrap_or_else(|e| fail(e));
    class_status::wait_reconciled(kubectl, "default", "quick-start").unwrap_or_else(|e| fail(e));
    kubectl
        .accepts(&render(&[
            quickstart_object("10-cluster-dev.yaml", "Cluster"),
            quickstart_object("11-cluster-prod.yaml", "Cluster"),
        ]))
        .unwrap_or_else(|e| fail(e));
    for cluster in CLUSTERS {
        poll("the topology to be created", CONVERGED, || {
            let object = kubectl.get_json("cluster", "default", cluster)?;
            let reconciled = condition(&object);
            (reconciled["status"] == "True")
                .then_some(())
                .ok_or(format!("{cluster}: {reconciled}"))
        })
        .unwrap_or_else(|e| fail(e));
    }

    // A new machine image for the default workers: a new template, and the class pointing at it.
    let old = templates
        .iter()
        .find(|t| t["metadata"]["name"] == "quick-start-default-worker")
        .cloned()
        .unwrap_or_else(|| fail("no default worker template".into()));
    let new = with(
        with(old, "/metadata/name", json!(NEW_TEMPLATE)),
        "/spec/template/spec/bootstrapTimeout",
        json!("15m"),
    );
    kubectl.accepts(&render(&[new])).unwrap_or_else(|e| fail(e));
    let changed = with(
        with(
            class,
            "/spec/workers/machineDeployments/0/infrastructure/templateRef/name",
            json!(NEW_TEMPLATE),
        ),
        "/spec/controlPlane/metadata/labels/image-generation",
        json!("2"),
    );
    kubectl.accepts(&render(&[changed])).unwrap_or_else(|e| fail(e));

    for cluster in CLUSTERS {
        poll("the class change to reach the Cluster", CONVERGED, || {
            rolled_out(kubectl, cluster)
        })
        .unwrap_or_else(|e| fail(e));
    }
}

/// Ok when `cluster`'s control plane carries the class's new label and every machine template
/// clone of its default workers comes from the new template (the old clones deleted).
fn rolled_out(kubectl: &crate::kubectl::Kubectl, cluster: &str) -> Result<(), String> {
    let planes = owned_by(kubectl, cluster, "kubeadmcontrolplane")?;
    let labelled = planes
        .iter()
        .all(|cp| cp["metadata"]["labels"]["image-generation"] == "2");
    if planes.is_empty() || !labelled {
        return Err(format!("{cluster}: control plane labels not updated"));
    }
    let sources: Vec<Value> = owned_by(kubectl, cluster, "dockermachinetemplate")?
        .iter()
        .map(|t| t["metadata"]["annotations"]["cluster.x-k8s.io/cloned-from-name"].clone())
        .collect();
    let stale = sources.iter().any(|s| s == "quick-start-default-worker");
    let fresh = sources.iter().any(|s| s == NEW_TEMPLATE);
    (fresh && !stale)
        .then_some(())
        .ok_or(format!("{cluster}: machine templates cloned from {sources:?}"))
}
