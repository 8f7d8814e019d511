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

/// What the ClusterResourceSets of the files do: `Text` for `-o yaml`/`diff`, `Json` (one entry
/// per Cluster) for the List of `-o json`.
pub enum Section {
    /// Lines to print after the plans.
    Text(String),
    /// `{"cluster": ..., "clusterResourceSets": [...]}` per Cluster.
    Json(Vec<Value>),
}

/// The section for `format`, `None` when the files hold no ClusterResourceSet. Each resource
/// that cannot be read is said once on stderr too, and sets `broken`; with no Cluster in the
/// files, stderr says the sets select none.
pub fn render(store: &MemoryStore, format: Format, broken: &mut bool) -> Option<Section> {
    let sets: Vec<ClusterResourceSet> = all(store, ADDONS_GROUP, "ClusterResourceSet");
    if sets.is_empty() {
        return None;
    }
    let lookup =
        |kind: &str, namespace: &str, name: &str| store.get("", kind, namespace, name).map(|o| (*o).clone());
    let mut previews = Previews::new(&lookup);
    let mut problems = BTreeSet::new();
    let mut text_out = String::new();
    let mut json_out = Vec::new();
    let clusters = all::<Cluster>(store, "cluster.x-k8s.io", "Cluster");
    if clusters.is_empty() {
        let names: Vec<&str> = sets.iter().map(ClusterResourceSet::name).collect();
        eprint_line(&format!(
            "ClusterResourceSet {}: no Cluster in the files to select; add the Clusters (-f) to see what each would apply",
            names.join(", ")
        ));
    }
    for cluster in clusters {
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
            Format::Json => json_out.push(
                json!({"cluster": name, "clusterResourceSets": previews.iter().map(as_json).collect::<Vec<_>>()}),
            ),
            Format::Yaml => text_out.extend(text(&name, &previews).lines().map(|line| format!("# {line}
"))),
            Format::Diff => text_out.push_str(&text(&name, &previews)),
        }
    }
    for problem in &problems {
        eprint_line(problem);
    }
    *broken |= !problems.is_empty();
    Some(match format {
        Format::Json => Section::Json(json_out),
        Format::Yaml | Format::Diff => Section::Text(text_out),
    })
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
