//! ClusterResourceSetBinding (addons.cluster.x-k8s.io/v1beta2): one per Cluster, recording which
//! resources of which ClusterResourceSets were applied to it, when, and with what hash.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::cluster_resource_set::ResourceRef;
use super::common::{ObjectMeta, Time};

/// A ClusterResourceSetBinding, named after its Cluster.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ClusterResourceSetBinding {
    /// `addons.cluster.x-k8s.io/v1beta2`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub api_version: String,
    /// `ClusterResourceSetBinding`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub kind: String,
    /// Standard object metadata.
    #[serde(default)]
    pub metadata: ObjectMeta,
    /// The bindings.
    #[serde(default)]
    pub spec: ClusterResourceSetBindingSpec,
}

/// The ClusterResourceSets applied to one Cluster.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ClusterResourceSetBindingSpec {
    /// One entry per ClusterResourceSet that selected the Cluster.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 100))]
    pub bindings: Vec<ResourceSetBinding>,
    /// The Cluster this binding belongs to. Immutable once set.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    #[schemars(length(min = 1, max = 63))]
    pub cluster_name: String,
}

/// The resources of one ClusterResourceSet, as applied to the Cluster.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ResourceSetBinding {
    /// The ClusterResourceSet's name (required).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    #[schemars(length(min = 1, max = 253))]
    pub cluster_resource_set_name: String,
    /// Its resources.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 100))]
    pub resources: Vec<ResourceBinding>,
}

/// One resource and whether (and when, with which data) it was applied.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ResourceBinding {
    /// The Secret or ConfigMap.
    #[serde(flatten)]
    pub resource: ResourceRef,
    /// `sha256:<hex>` of the resource's data when it was last applied.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    #[schemars(length(min = 1, max = 256))]
    pub hash: String,
    /// When the resource was last applied.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_applied_time: Option<Time>,
    /// Whether the resource was applied (unset: not applied).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub applied: Option<bool>,
}

impl ResourceBinding {
    /// Whether the resource was applied.
    pub fn is_applied(&self) -> bool {
        self.applied.unwrap_or(false)
    }
}

impl ResourceSetBinding {
    /// The entry of `resource`, if any.
    pub fn resource(&self, resource: &ResourceRef) -> Option<&ResourceBinding> {
        self.resources.iter().find(|r| r.resource == *resource)
    }

    /// Whether `resource` is recorded as applied.
    pub fn is_applied(&self, resource: &ResourceRef) -> bool {
        self.resource(resource).is_some_and(ResourceBinding::is_applied)
    }

    /// Records `entry`, replacing the entry of the same resource or adding it last.
    pub fn set_resource(&mut self, entry: ResourceBinding) {
        match self.resources.iter_mut().find(|r| r.resource == entry.resource) {
            Some(existing) => *existing = entry,
            None => self.resources.push(entry),
        }
    }
}

impl ClusterResourceSetBindingSpec {
    /// The binding of the ClusterResourceSet `name`, added (with no resources) if missing.
    pub fn binding_mut(&mut self, name: &str) -> &mut ResourceSetBinding {
        let index = match self
            .bindings
            .iter()
            .position(|b| b.cluster_resource_set_name == name)
        {
            Some(index) => index,
            None => {
                self.bindings.push(ResourceSetBinding {
                    cluster_resource_set_name: name.to_owned(),
                    resources: Vec::new(),
                });
                self.bindings.len() - 1
            }
        };
        &mut self.bindings[index]
    }

    /// Drops the binding of the ClusterResourceSet `name`; whether there was one.
    pub fn remove_binding(&mut self, name: &str) -> bool {
        let before = self.bindings.len();
        self.bindings.retain(|b| b.cluster_resource_set_name != name);
        self.bindings.len() != before
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn secret(name: &str) -> ResourceRef {
        ResourceRef {
            name: name.to_owned(),
            kind: "Secret".to_owned(),
        }
    }

    #[test]
    fn resource_fields_sit_beside_the_reference() {
        let yaml = "spec:\n  clusterName: c1\n  bindings:\n  - clusterResourceSetName: crs1\n    resources:\n\
                    \x20   - {kind: Secret, name: db, applied: true, hash: 'sha256:ab', lastAppliedTime: '2020-07-02T05:47:38Z'}\n";
        let binding: ClusterResourceSetBinding = serde_yaml_ng::from_str(yaml).unwrap();
        let set = &binding.spec.bindings[0];
        assert!(set.is_applied(&secret("db")));
        assert!(!set.is_applied(&secret("other")));
        assert_eq!(
            set.resource(&secret("db")).map(|r| r.hash.as_str()),
            Some("sha256:ab")
        );
        let back = serde_json::to_value(&binding).unwrap();
        assert_eq!(
            back["spec"]["bindings"][0]["resources"][0],
            serde_json::json!({"name": "db", "kind": "Secret", "hash": "sha256:ab",
                               "lastAppliedTime": "2020-07-02T05:47:38Z", "applied": true})
        );
    }

    #[test]
    fn bindings_are_added_updated_and_removed_by_name() {
        let mut spec = ClusterResourceSetBindingSpec::default();
        spec.binding_mut("crs1").set_resource(ResourceBinding {
            resource: secret("db"),
            ..ResourceBinding::default()
        });
        spec.binding_mut("crs1").set_resource(ResourceBinding {
            resource: secret("db"),
            applied: Some(true),
            ..ResourceBinding::default()
        });
        spec.binding_mut("crs2");
        assert_eq!(spec.bindings.len(), 2);
        assert_eq!(spec.bindings[0].resources.len(), 1);
        assert!(spec.bindings[0].is_applied(&secret("db")));
        assert!(spec.remove_binding("crs1"));
        assert!(!spec.remove_binding("crs1"));
        assert_eq!(spec.bindings[0].cluster_resource_set_name, "crs2");
    }
}
