//! What the plan reads from the Cluster and its current control plane, and `builtin.cluster`,
//! what every patch sees of the Cluster.

use serde_json::{json, Value};

use super::blueprint::Blueprint;
use super::builtins;
use super::current::Current;
use super::desired::LAST_APPLIED_ANNOTATION;
use super::error::TopologyError;
use super::names;
use crate::api::convert::{CONVERSION_DATA, V1BETA1_FIELDS};
use crate::api::labels::{CLUSTER_NAME_LABEL, TOPOLOGY_OWNED_LABEL};
use crate::api::{Cluster, ContractVersionedObjectReference, Topology};

/// What the plan reads from the Cluster and its current control plane.
pub(super) struct Facts<'c> {
    pub(super) cluster_name: String,
    pub(super) namespace: String,
    pub(super) topology: &'c Topology,
    /// The infrastructure cluster's name: the Cluster's reference, else from the naming strategy.
    pub(super) infra_name: String,
    /// The control plane's name, likewise.
    pub(super) cp_name: String,
    /// The control plane's kind (its template's without `Template`).
    pub(super) cp_kind: String,
    /// The control plane as it is, if it exists.
    pub(super) current_cp: Option<&'c Value>,
    /// The v1beta1 topology-wide `rolloutAfter` the Cluster was written with, if any
    /// (`Topology::v1beta1_rollout_after`); it is still sequenced (control plane first, then the workers) as before.
    pub(super) rollout_after: Option<String>,
}

impl<'c> Facts<'c> {
    pub(super) fn read(
        blueprint: &Blueprint,
        cluster: &'c Cluster,
        current: &'c Current,
    ) -> Result<Self, TopologyError> {
        let cluster_name = cluster.metadata.name.clone().unwrap_or_default();
        let namespace = cluster
            .metadata
            .namespace
            .clone()
            .unwrap_or_else(|| "default".to_owned());
        let topology = cluster
            .spec
            .managed_topology()
            .ok_or_else(|| TopologyError::NoTopology(cluster_name.clone()))?;
        let class = &blueprint.class;
        let name_data = || json!({"cluster": {"name": cluster_name}});
        let named = |reference: &ContractVersionedObjectReference, strategy, suffix| {
            if reference.name.is_empty() {
                names::from_strategy(Some(strategy), name_data, &cluster_name, suffix)
            } else {
                Ok(reference.name.clone())
            }
        };
        let infra_name = named(
            &cluster.spec.infrastructure_ref,
            &class.spec.infrastructure.naming,
            "infrastructure",
        )?;
        let cp_name = named(
            &cluster.spec.control_plane_ref,
            &class.spec.control_plane.naming,
            "control-plane",
        )?;
        let cp_kind = blueprint
            .template(&class.spec.control_plane.template_ref)
            .and_then(|t| t["kind"].as_str())
            .map(|k| k.trim_end_matches("Template").to_owned())
            .unwrap_or_default();
        let current_cp = current.find(&cp_kind, &cp_name);
        let rollout_after = cluster.spec.topology.v1beta1_rollout_after.clone();
        Ok(Facts {
            cluster_name,
            namespace,
            topology,
            infra_name,
            cp_name,
            cp_kind,
            current_cp,
            rollout_after,
        })
    }
}

/// `builtin.cluster`: what every patch sees of the Cluster.
pub(super) fn cluster_builtin(facts: &Facts<'_>, cluster: &Cluster) -> Value {
    // An empty classRef.namespace means the Cluster's own, as Cluster API reads it.
    let class_ref = &facts.topology.class_ref;
    let class_namespace = match class_ref.namespace.as_str() {
        "" => facts.namespace.clone(),
        namespace => namespace.to_owned(),
    };
    // The desired Cluster's metadata, as Cluster API v1.14 builds `builtin.cluster.metadata`: its
    // labels with the two the topology sets on it (see `assemble`), its annotations without those
    // of `kubectl apply` and of conversions (ours included: a Cluster API hub object has no
    // v1beta1 fields annotation), each map left out when empty.
    let mut labels = cluster.metadata.labels.clone().unwrap_or_default();
    labels.insert(CLUSTER_NAME_LABEL.to_owned(), facts.cluster_name.clone());
    labels.insert(TOPOLOGY_OWNED_LABEL.to_owned(), String::new());
    let mut metadata = json!({ "labels": labels });
    if let Some(mut annotations) = cluster.metadata.annotations.clone() {
        for annotation in [LAST_APPLIED_ANNOTATION, CONVERSION_DATA, V1BETA1_FIELDS] {
            annotations.remove(annotation);
        }
        if !annotations.is_empty() {
            metadata["annotations"] = json!(annotations);
        }
    }
    let metadata = Some(metadata);
    builtins::cluster(&builtins::ClusterFacts {
        name: &facts.cluster_name,
        namespace: &facts.namespace,
        uid: cluster.metadata.uid.as_deref().unwrap_or_default(),
        metadata,
        class: &class_ref.name,
        class_namespace: &class_namespace,
        version: facts.topology.version.as_str(),
        network: &cluster.spec.cluster_network,
    })
}
