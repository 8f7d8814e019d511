//! The ClusterResourceSet engine, pure: which sets select which Clusters, what objects a
//! Secret or ConfigMap holds, and the hash that says whether its data changed. The controller
//! fetches the objects and applies the answer; nothing here does I/O or reads a clock.

pub mod binding;
pub mod condition;
mod data;
mod error;
mod hash;
pub mod matching;
mod objects;
pub mod preview;
mod shared;
pub mod work;

pub use data::{normalize_data, DataEntry, MAX_DATA_BYTES};
pub use error::ResourceError;
pub use hash::compute_hash;
pub use objects::{parse_objects, MAX_OBJECTS};
pub use shared::SharedParses;

use std::sync::Arc;

use serde_json::Value;

/// What one Secret or ConfigMap of a ClusterResourceSet holds.
#[derive(Debug, Clone, PartialEq)]
pub struct Resource {
    /// `sha256:<hex>` of its normalized data, as recorded in a ClusterResourceSetBinding.
    pub hash: String,
    /// The objects to create, key by key in key order; within one key, in creation order.
    /// Shared by every reader of the same data (see [`SharedParses`]).
    pub objects: Arc<[Value]>,
}

/// Reads `resource` (a Secret of type `addons.cluster.x-k8s.io/resource-set`, or a ConfigMap):
/// its objects and its hash.
pub fn read_resource(resource: &Value) -> Result<Resource, ResourceError> {
    let data = normalize_data(resource)?;
    Ok(Resource {
        hash: compute_hash(&data),
        objects: parse_objects(&data)?.into(),
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_config_map_gives_its_objects_and_hash() {
        let config_map = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "calico"},
            "data": {"b.yaml": "kind: Deployment\napiVersion: apps/v1\nmetadata: {name: d}\n---\nkind: Namespace\napiVersion: v1\nmetadata: {name: net}\n",
                     "a.json": "{\"kind\": \"ConfigMap\", \"apiVersion\": \"v1\", \"metadata\": {\"name\": \"c\"}}"}});
        let resource = read_resource(&config_map).unwrap();
        let kinds: Vec<&str> = resource
            .objects
            .iter()
            .map(|o| o["kind"].as_str().unwrap())
            .collect();
        assert_eq!(kinds, ["ConfigMap", "Namespace", "Deployment"]);
        assert!(resource.hash.starts_with("sha256:"));
        assert_eq!(resource.hash.len(), "sha256:".len() + 64);
    }
}
