//! ClusterResourceSet (addons.cluster.x-k8s.io/v1beta2): Secrets and ConfigMaps whose objects
//! are created in every Cluster of the namespace its label selector matches.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::common::{DeprecatedConditions, MetaCondition, ObjectMeta};

/// The API group of ClusterResourceSet and ClusterResourceSetBinding.
pub const ADDONS_GROUP: &str = "addons.cluster.x-k8s.io";
/// Resources are applied once and never again (the default).
pub const STRATEGY_APPLY_ONCE: &str = "ApplyOnce";
/// Resources are applied again whenever their hash changes.
pub const STRATEGY_RECONCILE: &str = "Reconcile";
/// The strategies `spec.strategy` may name.
pub const STRATEGIES: [&str; 2] = [STRATEGY_APPLY_ONCE, STRATEGY_RECONCILE];
/// A resource held in a Secret.
pub const RESOURCE_KIND_SECRET: &str = "Secret";
/// A resource held in a ConfigMap.
pub const RESOURCE_KIND_CONFIG_MAP: &str = "ConfigMap";
/// The kinds a resource reference may name.
pub const RESOURCE_KINDS: [&str; 2] = [RESOURCE_KIND_SECRET, RESOURCE_KIND_CONFIG_MAP];
/// The only Secret type a ClusterResourceSet reads, so that no other Secret of the namespace
/// can be copied into a workload cluster by naming it.
pub const RESOURCE_SET_SECRET_TYPE: &str = "addons.cluster.x-k8s.io/resource-set";
/// The finalizer a ClusterResourceSet carries while its bindings are cleaned up.
pub const RESOURCE_SET_FINALIZER: &str = "addons.cluster.x-k8s.io";
/// Most resources one ClusterResourceSet (or one binding) lists.
pub const MAX_RESOURCES: usize = 100;
/// Longest name of a referenced Secret or ConfigMap.
pub const MAX_RESOURCE_NAME: usize = 253;

/// A ClusterResourceSet.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ClusterResourceSet {
    /// `addons.cluster.x-k8s.io/v1beta2`.
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
    /// Conditions (`ResourcesApplied`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(transform = crate::api::list_map::by_type)]
    pub conditions: Vec<MetaCondition>,
    /// The generation the status describes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
    /// What v1beta1 reported (its conditions).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deprecated: Option<DeprecatedConditions>,
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

    #[test]
    fn round_trips_the_wire_names() {
        let yaml = "apiVersion: addons.cluster.x-k8s.io/v1beta2\nkind: ClusterResourceSet\n\
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
