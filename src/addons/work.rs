//! What a ClusterResourceSet still has to do in one Cluster, given that Cluster's binding: which
//! resources to apply, and how their objects reach the workload cluster.

use serde_json::Value;

use super::Resource;
use crate::api::{ClusterResourceSet, ResourceRef, ResourceSetBinding, STRATEGY_RECONCILE};

/// How a resource's objects are written into the workload cluster.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ApplyMode {
    /// `ApplyOnce`: each object is created; one that already exists is left as it is (whoever
    /// made it) and counts as applied.
    CreateMissing,
    /// `Reconcile`: each object is server-side applied under our field manager, so fields we set
    /// are restored and fields others set stay.
    ServerSideApply,
}

impl ApplyMode {
    /// The mode of `set`'s strategy; an empty or unknown strategy is `ApplyOnce`, the default.
    pub fn of(set: &ClusterResourceSet) -> ApplyMode {
        if set.spec.strategy == STRATEGY_RECONCILE {
            ApplyMode::ServerSideApply
        } else {
            ApplyMode::CreateMissing
        }
    }
}

/// One resource to apply to one Cluster.
#[derive(Debug, Clone, PartialEq)]
pub struct ResourceWork<'a> {
    /// The Secret or ConfigMap.
    pub resource: &'a ResourceRef,
    /// How its objects are written.
    pub mode: ApplyMode,
    /// The hash of its data, recorded in the binding once applied.
    pub hash: &'a str,
    /// Its objects, in creation order.
    pub objects: &'a [Value],
}

/// Whether `resource`, whose data now hashes to `hash`, must be applied: it was never applied
/// (or its last attempt failed), or, under `Reconcile`, it was applied with other data.
/// Under `ApplyOnce` an applied resource is never applied again.
pub fn needs_apply(
    mode: ApplyMode,
    binding: Option<&ResourceSetBinding>,
    resource: &ResourceRef,
    hash: &str,
) -> bool {
    let Some(entry) = binding.and_then(|b| b.resource(resource)) else {
        return true;
    };
    match mode {
        ApplyMode::CreateMissing => !entry.is_applied(),
        ApplyMode::ServerSideApply => !entry.is_applied() || entry.hash != hash,
    }
}

/// The resources of `set` to apply to a Cluster whose binding entry for `set` is `binding`, in
/// the set's order, out of `resources` (those that could be read; others are skipped).
pub fn pending_work<'a>(
    set: &ClusterResourceSet,
    binding: Option<&ResourceSetBinding>,
    resources: &'a [(ResourceRef, Resource)],
) -> Vec<ResourceWork<'a>> {
    let mode = ApplyMode::of(set);
    resources
        .iter()
        .filter(|(resource, read)| needs_apply(mode, binding, resource, &read.hash))
        .map(|(resource, read)| ResourceWork {
            resource,
            mode,
            hash: &read.hash,
            objects: &read.objects,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::api::ResourceBinding;

    fn set(strategy: &str) -> ClusterResourceSet {
        serde_json::from_value(json!({"metadata": {"name": "cni", "namespace": "default"},
            "spec": {"strategy": strategy, "resources": [{"name": "a", "kind": "ConfigMap"}]}}))
        .unwrap()
    }

    fn config_map(name: &str) -> ResourceRef {
        ResourceRef {
            name: name.to_owned(),
            kind: "ConfigMap".to_owned(),
        }
    }

    fn read(hash: &str) -> Resource {
        Resource {
            hash: hash.to_owned(),
            objects: vec![json!({"kind": "Namespace"})].into(),
        }
    }

    fn binding(entries: &[(&str, &str, bool)]) -> ResourceSetBinding {
        ResourceSetBinding {
            cluster_resource_set_name: "cni".to_owned(),
            resources: entries
                .iter()
                .map(|(name, hash, applied)| ResourceBinding {
                    resource: config_map(name),
                    hash: (*hash).to_owned(),
                    applied: Some(*applied),
                    last_applied_time: None,
                })
                .collect(),
        }
    }

    fn names(work: &[ResourceWork<'_>]) -> Vec<String> {
        work.iter().map(|w| w.resource.name.clone()).collect()
    }

    #[test]
    fn apply_once_applies_what_was_never_applied_and_nothing_twice() {
        let resources = [
            (config_map("a"), read("h1")),
            (config_map("b"), read("h2")),
            (config_map("c"), read("h3")),
        ];
        let recorded = binding(&[("a", "old", true), ("b", "h2", false)]);
        let work = pending_work(&set("ApplyOnce"), Some(&recorded), &resources);
        assert_eq!(names(&work), ["b", "c"], "a is applied, even with other data now");
        assert!(work.iter().all(|w| w.mode == ApplyMode::CreateMissing));
        let all = pending_work(&set(""), None, &resources);
        assert_eq!(
            names(&all),
            ["a", "b", "c"],
            "no binding yet: everything, ApplyOnce by default"
        );
        assert_eq!(all[0].hash, "h1");
        assert_eq!(all[0].objects.len(), 1);
    }

    #[test]
    fn reconcile_applies_again_when_the_data_changed() {
        let resources = [
            (config_map("a"), read("h1")),
            (config_map("b"), read("h2")),
            (config_map("c"), read("h3")),
        ];
        let recorded = binding(&[("a", "h1", true), ("b", "old", true), ("c", "h3", false)]);
        let work = pending_work(&set("Reconcile"), Some(&recorded), &resources);
        assert_eq!(names(&work), ["b", "c"]);
        assert!(work.iter().all(|w| w.mode == ApplyMode::ServerSideApply));
    }
}
