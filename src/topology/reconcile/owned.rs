//! The objects a Cluster's topology owns: the kinds to read them from, and which of them are
//! stale (worker pools and health checks no longer desired, template clones nothing references).

use std::collections::BTreeSet;

use serde_json::Value;

use super::CAPI_GROUP;
use crate::api::{Cluster, ClusterClassTemplateReference};
use crate::store::{group_of, ObjectSource};
use crate::topology::blueprint::Blueprint;
use crate::topology::current::Current;

/// Kinds the Cluster's topology may own: the objects the class's templates stand for, the clones
/// of those templates, and Cluster API's worker and health check kinds.
pub(super) fn owned_kinds(cluster: &Cluster, blueprint: &Blueprint) -> BTreeSet<(String, String)> {
    let class = &blueprint.class;
    // Templates of objects created once per Cluster (the object is the template's kind without
    // "Template"); every template is also cloned under its own kind.
    let singletons: Vec<&ClusterClassTemplateReference> = vec![
        &class.spec.infrastructure.template_ref,
        &class.spec.control_plane.template_ref,
    ];
    let mut templates: Vec<&ClusterClassTemplateReference> = singletons.clone();
    templates.extend(class.spec.control_plane.machine_infrastructure_ref());
    for md in &class.spec.workers.machine_deployments {
        templates.push(&md.bootstrap.template_ref);
        templates.push(&md.infrastructure.template_ref);
    }
    for mp in &class.spec.workers.machine_pools {
        templates.push(&mp.bootstrap.template_ref);
        templates.push(&mp.infrastructure.template_ref);
    }
    let group_kind = |reference: &ClusterClassTemplateReference| {
        (
            group_of(&reference.api_version).to_owned(),
            reference.kind.clone(),
        )
    };
    let mut kinds: BTreeSet<(String, String)> = templates.into_iter().map(group_kind).collect();
    for (group, kind) in singletons.into_iter().map(group_kind) {
        if let Some(object_kind) = kind.strip_suffix("Template") {
            kinds.insert((group, object_kind.to_owned()));
        }
    }
    for reference in [&cluster.spec.infrastructure_ref, &cluster.spec.control_plane_ref] {
        if !reference.is_unset() {
            kinds.insert((reference.api_group.clone(), reference.kind.clone()));
        }
    }
    for kind in [
        "MachineDeployment",
        "MachineHealthCheck",
        "MachinePool",
        "Machine",
    ] {
        kinds.insert((CAPI_GROUP.to_owned(), kind.to_owned()));
    }
    kinds
}

/// Owned objects to delete: worker pools and health checks no longer desired, and template
/// clones neither a desired object nor a MachineSet of the namespace references.
pub(super) fn stale_objects(
    current: &Current,
    desired: &[(Value, Option<Value>)],
    source: &dyn ObjectSource,
    namespace: &str,
) -> Vec<Value> {
    let key = |object: &Value| {
        (
            object["kind"].as_str().unwrap_or_default().to_owned(),
            object["metadata"]["name"].as_str().unwrap_or_default().to_owned(),
        )
    };
    let wanted: BTreeSet<(String, String)> = desired.iter().map(|(object, _)| key(object)).collect();
    // The namespace's MachineSets are read only when a template is no longer wanted (a rotation):
    // a settled Cluster's reconcile does not read every MachineSet of the namespace.
    let unwanted_template = current.objects.iter().any(|object| {
        let (kind, name) = key(object);
        kind.ends_with("Template") && !wanted.contains(&(kind.clone(), name))
    });
    let mut referenced: BTreeSet<String> = BTreeSet::new();
    if unwanted_template {
        let machine_sets = source.list(CAPI_GROUP, "MachineSet", namespace);
        for object in desired
            .iter()
            .map(|(o, _)| o)
            .chain(machine_sets.iter().map(AsRef::as_ref))
        {
            collect_reference_names(object, &mut referenced);
        }
    }
    current
        .objects
        .iter()
        .filter(|object| {
            let (kind, name) = key(object);
            if wanted.contains(&(kind.clone(), name.clone())) {
                return false;
            }
            match kind.as_str() {
                "MachineDeployment" | "MachineHealthCheck" | "MachinePool" => object["apiVersion"]
                    .as_str()
                    .is_some_and(|v| group_of(v) == CAPI_GROUP),
                kind if kind.ends_with("Template") => !referenced.contains(&name),
                _ => false,
            }
        })
        .cloned()
        .collect()
}

/// Adds the `name` of every object reference (`{kind, name, ...}`) found anywhere in `value`.
fn collect_reference_names(value: &Value, names: &mut BTreeSet<String>) {
    match value {
        Value::Object(map) => {
            if let (Some(Value::String(_)), Some(Value::String(name))) = (map.get("kind"), map.get("name")) {
                names.insert(name.clone());
            }
            for child in map.values() {
                collect_reference_names(child, names);
            }
        }
        Value::Array(items) => items.iter().for_each(|item| collect_reference_names(item, names)),
        _ => {}
    }
}
