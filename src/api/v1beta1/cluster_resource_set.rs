//! ClusterResourceSet (addons.cluster.x-k8s.io/v1beta1): Secrets and ConfigMaps whose objects
//! are created in every Cluster of the namespace its label selector matches.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::common::{Condition, ObjectMeta, V1Beta2Conditions};

/// A ClusterResourceSet.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ClusterResourceSet {
    /// `addons.cluster.x-k8s.io/v1beta1`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub api_version: String,
    /// `ClusterResourceSet`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub kind: String,
    /// Standard object metadata.
    #[serde(default)]
    pub metadata: ObjectMeta,
    /// The desired state.
    #[serde(default)]
    pub spec: ClusterResourceSetSpec,
    /// The observed state.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<ClusterResourceSetStatus>,
}

/// Which Clusters get which resources, and how.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ClusterResourceSetSpec {
    /// Selects the Clusters of the namespace to apply the resources to; an empty selector
    /// selects none. Immutable.
    #[serde(default)]
    pub cluster_selector: LabelSelector,
    /// Secrets and ConfigMaps of the namespace, each holding one or more objects.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 100))]
    pub resources: Vec<ResourceRef>,
    /// `ApplyOnce` (the default) or `Reconcile`. Immutable once set.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    #[schemars(extend("enum" = ["ApplyOnce", "Reconcile"]))]
    pub strategy: String,
}

/// A Secret or ConfigMap in the ClusterResourceSet's namespace. Both fields are required (no
/// empty default in the schema, which its enum and length limits would refuse).
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ResourceRef {
    /// The object's name.
    #[schemars(length(min = 1, max = 253))]
    pub name: String,
    /// `Secret` or `ConfigMap`.
    #[schemars(extend("enum" = ["Secret", "ConfigMap"]))]
    pub kind: String,
}

/// What the ClusterResourceSet controller observed.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ClusterResourceSetStatus {
    /// The generation the status describes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
    /// v1beta1 conditions (`ResourcesApplied`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<Condition>,
    /// v1beta2 conditions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub v1beta2: Option<V1Beta2Conditions>,
}

impl ClusterResourceSet {
    /// The object's name.
    pub fn name(&self) -> &str {
        self.metadata.name.as_deref().unwrap_or_default()
    }

    /// The object's namespace.
    pub fn namespace(&self) -> &str {
        self.metadata.namespace.as_deref().unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::{RESOURCE_KIND_CONFIG_MAP, STRATEGY_RECONCILE};

    #[test]
    fn round_trips_the_wire_names() {
        let yaml = "apiVersion: addons.cluster.x-k8s.io/v1beta1\nkind: ClusterResourceSet\n\
                    metadata: {name: crs1, namespace: default}\n\
                    spec:\n  clusterSelector: {matchLabels: {cni: calico}}\n  strategy: Reconcile\n\
                    \x20 resources: [{name: calico, kind: ConfigMap}]\n\
                    status: {observedGeneration: 2}\n";
        let crs: ClusterResourceSet = serde_yaml_ng::from_str(yaml).unwrap();
        assert_eq!(crs.name(), "crs1");
        assert_eq!(crs.namespace(), "default");
        assert_eq!(crs.spec.strategy, STRATEGY_RECONCILE);
        assert_eq!(
            crs.spec.resources,
            [ResourceRef {
                name: "calico".to_owned(),
                kind: RESOURCE_KIND_CONFIG_MAP.to_owned()
            }]
        );
        let back = serde_json::to_value(&crs).unwrap();
        assert_eq!(back["spec"]["clusterSelector"]["matchLabels"]["cni"], "calico");
        assert_eq!(back["status"]["observedGeneration"], 2);
        let bare = serde_json::to_value(ClusterResourceSetSpec::default()).unwrap();
        assert_eq!(bare, serde_json::json!({"clusterSelector": {}}));
    }
}
