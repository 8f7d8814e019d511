//! The next state of a ClusterResourceSetBinding: one per Cluster, owned (not controlled) by
//! every set that selects the Cluster, recording what each set applied; a deleted set leaves it.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;

use crate::api::{
    ClusterResourceSet, ClusterResourceSetBinding, ResourceBinding, ResourceRef, ResourceSetBinding, Time,
    ADDONS_GROUP,
};

/// The `apiVersion` of ClusterResourceSets and their bindings (the hub).
pub const ADDONS_API_VERSION: &str = "addons.cluster.x-k8s.io/v1beta2";

/// The binding `current` (or a new one for the Cluster `namespace/cluster`) with an entry and a
/// non-controller owner reference for each of `sets`. Entries of other sets stay.
pub fn prepare_binding(
    current: Option<&ClusterResourceSetBinding>,
    namespace: &str,
    cluster: &str,
    sets: &[&ClusterResourceSet],
) -> ClusterResourceSetBinding {
    let mut binding = current.cloned().unwrap_or_else(|| ClusterResourceSetBinding {
        api_version: ADDONS_API_VERSION.to_owned(),
        kind: "ClusterResourceSetBinding".to_owned(),
        metadata: crate::api::ObjectMeta {
            name: Some(cluster.to_owned()),
            namespace: Some(namespace.to_owned()),
            ..Default::default()
        },
        ..Default::default()
    });
    if binding.spec.cluster_name.is_empty() {
        binding.spec.cluster_name = cluster.to_owned();
    }
    for set in sets {
        binding.spec.binding_mut(set.name());
        let owners = binding.metadata.owner_references.get_or_insert_with(Vec::new);
        ensure_owner(owners, owner_reference(set));
    }
    binding
}

/// A non-controller owner reference to `set`.
pub fn owner_reference(set: &ClusterResourceSet) -> OwnerReference {
    OwnerReference {
        api_version: ADDONS_API_VERSION.to_owned(),
        kind: "ClusterResourceSet".to_owned(),
        name: set.name().to_owned(),
        uid: set.metadata.uid.clone().unwrap_or_default(),
        ..Default::default()
    }
}

/// Adds `owner` to `owners` unless a reference to the same object (group, kind, name) is there
/// with the same uid; a reference to an earlier object of that name is replaced. Whether
/// `owners` changed.
pub fn ensure_owner(owners: &mut Vec<OwnerReference>, owner: OwnerReference) -> bool {
    match owners.iter_mut().find(|o| same_object(o, &owner)) {
        Some(existing) if existing.uid == owner.uid => false,
        Some(existing) => {
            *existing = owner;
            true
        }
        None => {
            owners.push(owner);
            true
        }
    }
}

fn same_object(a: &OwnerReference, b: &OwnerReference) -> bool {
    let group = |r: &OwnerReference| crate::store::group_of(&r.api_version).to_owned();
    group(a) == group(b) && a.kind == b.kind && a.name == b.name
}

/// Records the outcome of applying `resource` of the set `set` with data `hash` at `now`; whether
/// the binding changed. A failure already recorded for the same data is left as it is, so
/// retries of a failing resource do not rewrite the binding.
pub fn record_outcome(
    binding: &mut ClusterResourceSetBinding,
    set: &str,
    resource: &ResourceRef,
    hash: &str,
    applied: bool,
    now: &str,
) -> bool {
    let entry = binding.spec.binding_mut(set);
    if !applied
        && entry
            .resource(resource)
            .is_some_and(|r| !r.is_applied() && r.hash == hash)
    {
        return false;
    }
    entry.set_resource(ResourceBinding {
        resource: resource.clone(),
        hash: hash.to_owned(),
        applied: Some(applied),
        last_applied_time: parse_time(now),
    });
    true
}

fn parse_time(now: &str) -> Option<Time> {
    now.parse().ok().map(Time)
}

/// What removing a deleted set leaves of a binding.
#[derive(Debug, Clone, PartialEq)]
pub enum AfterSetRemoved {
    /// The binding neither lists nor is owned by the set.
    Unchanged,
    /// The binding without the set's entry and owner reference.
    Updated(Box<ClusterResourceSetBinding>),
    /// No set is left: the binding goes.
    Deleted,
}

/// `binding` once the set `set` is deleted. The objects it applied stay in the workload cluster.
pub fn remove_set(binding: &ClusterResourceSetBinding, set: &str) -> AfterSetRemoved {
    let mut next = binding.clone();
    let listed = next.spec.remove_binding(set);
    let owners = next.metadata.owner_references.get_or_insert_with(Vec::new);
    let before = owners.len();
    owners.retain(|o| !(o.kind == "ClusterResourceSet" && o.name == set && is_addons(o)));
    let owned = owners.len() != before;
    if next.spec.bindings.is_empty() {
        return AfterSetRemoved::Deleted;
    }
    if listed || owned {
        AfterSetRemoved::Updated(Box::new(next))
    } else {
        AfterSetRemoved::Unchanged
    }
}

fn is_addons(owner: &OwnerReference) -> bool {
    crate::store::group_of(&owner.api_version) == ADDONS_GROUP
}

/// The entry of the set `set` in `binding`, if any.
pub fn set_entry<'a>(
    binding: Option<&'a ClusterResourceSetBinding>,
    set: &str,
) -> Option<&'a ResourceSetBinding> {
    binding?
        .spec
        .bindings
        .iter()
        .find(|b| b.cluster_resource_set_name == set)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn set(name: &str, uid: &str) -> ClusterResourceSet {
        serde_json::from_value(json!({"metadata": {"name": name, "namespace": "ns", "uid": uid}})).unwrap()
    }

    fn config_map(name: &str) -> ResourceRef {
        ResourceRef {
            name: name.to_owned(),
            kind: "ConfigMap".to_owned(),
        }
    }

    #[test]
    fn a_new_binding_is_named_after_its_cluster_and_owned_by_each_set() {
        let (a, b) = (set("a", "u1"), set("b", "u2"));
        let binding = prepare_binding(None, "ns", "c1", &[&a, &b]);
        let value = serde_json::to_value(&binding).unwrap();
        assert_eq!(value["metadata"]["name"], "c1");
        assert_eq!(value["metadata"]["namespace"], "ns");
        assert_eq!(value["spec"]["clusterName"], "c1");
        assert_eq!(
            value["spec"]["bindings"],
            json!([{"clusterResourceSetName": "a"}, {"clusterResourceSetName": "b"}])
        );
        assert_eq!(
            value["metadata"]["ownerReferences"][1],
            json!({"apiVersion": "addons.cluster.x-k8s.io/v1beta2", "kind": "ClusterResourceSet", "name": "b", "uid": "u2"})
        );
        // Prepared again: nothing added twice; a set recreated under the same name takes over.
        let again = prepare_binding(Some(&binding), "ns", "c1", &[&a, &set("b", "u3")]);
        assert_eq!(again.spec.bindings.len(), 2);
        let owners = again.metadata.owner_references.unwrap();
        assert_eq!(owners.len(), 2);
        assert_eq!(owners[1].uid, "u3");
    }

    #[test]
    fn outcomes_are_recorded_and_a_repeated_failure_is_not_rewritten() {
        let mut binding = prepare_binding(None, "ns", "c1", &[&set("a", "u1")]);
        let now = "2024-05-01T10:00:00Z";
        assert!(record_outcome(
            &mut binding,
            "a",
            &config_map("x"),
            "h1",
            false,
            now
        ));
        assert!(!record_outcome(
            &mut binding,
            "a",
            &config_map("x"),
            "h1",
            false,
            "2024-05-01T10:05:00Z"
        ));
        let entry = &binding.spec.bindings[0].resources[0];
        assert_eq!(
            serde_json::to_value(&entry.last_applied_time).unwrap(),
            json!(now)
        );
        assert!(record_outcome(
            &mut binding,
            "a",
            &config_map("x"),
            "h1",
            true,
            now
        ));
        assert!(binding.spec.bindings[0].is_applied(&config_map("x")));
        assert!(record_outcome(
            &mut binding,
            "a",
            &config_map("x"),
            "h2",
            false,
            now
        ));
        assert!(!binding.spec.bindings[0].is_applied(&config_map("x")));
    }

    #[test]
    fn a_deleted_set_leaves_the_binding_which_goes_with_the_last_set() {
        let binding = prepare_binding(None, "ns", "c1", &[&set("a", "u1"), &set("b", "u2")]);
        let AfterSetRemoved::Updated(without_a) = remove_set(&binding, "a") else {
            panic!("a is listed");
        };
        assert_eq!(without_a.spec.bindings.len(), 1);
        let owners = without_a.metadata.owner_references.as_ref().unwrap();
        assert_eq!(owners.iter().map(|o| o.name.as_str()).collect::<Vec<_>>(), ["b"]);
        assert_eq!(remove_set(&without_a, "a"), AfterSetRemoved::Unchanged);
        assert_eq!(remove_set(&without_a, "b"), AfterSetRemoved::Deleted);
        assert!(set_entry(Some(&without_a), "b").is_some());
        assert!(set_entry(Some(&without_a), "a").is_none());
    }
}
