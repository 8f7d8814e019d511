//! The ClusterResourceSet part of `plan`: for every Cluster in the files, the sets that select it
//! and the objects each would apply, from the Secrets and ConfigMaps in the files.

use std::collections::BTreeSet;

use serde_json::{json, Value};

use super::plan_format::Format;
use super::terminal::eprint_line;
use crate::addons::preview::{Previews, SetPreview};
use crate::api::{Cluster, ClusterResourceSet, ADDONS_GROUP};
use crate::decode::decode_value;
use crate::store::{MemoryStore, ObjectSource};

/// The section for `format`, `None` when the files hold no ClusterResourceSet. Each resource
/// that cannot be read is said once on stderr too, and sets `broken`.
pub fn render(store: &MemoryStore, format: Format, broken: &mut bool) -> Option<String> {
    let sets: Vec<ClusterResourceSet> = all(store, ADDONS_GROUP, "ClusterResourceSet");
    if sets.is_empty() {
        return None;
    }
    let lookup =
        |kind: &str, namespace: &str, name: &str| store.get("", kind, namespace, name).map(|o| (*o).clone());
    let mut previews = Previews::new(&lookup);
    let mut problems = BTreeSet::new();
    let mut out = String::new();
    for cluster in all::<Cluster>(store, "cluster.x-k8s.io", "Cluster") {
        let name = format!(
            "{}/{}",
            cluster.metadata.namespace.as_deref().unwrap_or_default(),
            cluster.metadata.name.as_deref().unwrap_or_default()
        );
        let previews = previews.of(&cluster, &sets);
        for set in &previews {
            for resource in &set.resources {
                if let Err(why) = &resource.objects {
                    let named = format!("{} {}", resource.resource.kind, resource.resource.name);
                    problems.insert(format!("ClusterResourceSet {}: {named}: {why}", set.name));
                }
            }
        }
        match format {
            Format::Json => {
                let listed = json!({"cluster": name, "clusterResourceSets": previews.iter().map(as_json).collect::<Vec<_>>()});
                out.push_str(&serde_json::to_string_pretty(&listed).unwrap_or_default());
                out.push('\n');
            }
            Format::Yaml => out.extend(text(&name, &previews).lines().map(|line| format!("# {line}\n"))),
            Format::Diff => out.push_str(&text(&name, &previews)),
        }
    }
    for problem in &problems {
        eprint_line(problem);
    }
    *broken |= !problems.is_empty();
    Some(out)
}

/// Every object of a kind in the store that decodes, in namespace/name order.
fn all<T: serde::de::DeserializeOwned>(store: &MemoryStore, group: &str, kind: &str) -> Vec<T> {
    store
        .names_of_kind(group, kind)
        .iter()
        .filter_map(|(namespace, name)| store.get(group, kind, namespace, name))
        .filter_map(|object| decode_value((*object).clone()).ok())
        .collect()
}

fn text(cluster: &str, previews: &[SetPreview]) -> String {
    let mut out = format!("Cluster {cluster} ClusterResourceSets:\n");
    if previews.is_empty() {
        out.push_str("  none selects it\n");
    }
    for set in previews {
        out.push_str(&format!("  {} ({}):\n", set.name, set.strategy));
        for resource in &set.resources {
            let named = format!("{} {}", resource.resource.kind, resource.resource.name);
            match &resource.objects {
                Ok(objects) => {
                    out.push_str(&format!("    {named}:\n"));
                    for object in objects.iter() {
                        out.push_str(&format!("      + {object}\n"));
                    }
                }
                Err(why) => out.push_str(&format!("    {named}: {why}\n")),
            }
        }
    }
    out
}

fn as_json(set: &SetPreview) -> Value {
    let resources: Vec<Value> = set
        .resources
        .iter()
        .map(|r| {
            let mut entry = json!({"kind": r.resource.kind, "name": r.resource.name});
            match &r.objects {
                Ok(objects) => entry["objects"] = json!(objects.as_ref()),
                Err(why) => entry["error"] = json!(why),
            }
            entry
        })
        .collect();
    json!({"name": set.name, "strategy": set.strategy, "resources": resources})
}
