//! `plan` of a ClusterClass change over the current state when a ClusterClassRollout governs the
//! class: the revision the change makes, the waves it would roll out in, and for each Cluster
//! whether its Machines roll when its wave comes, and why.

use anyhow::Result;
use serde_json::{json, Value};

use super::plan_current::{plan_against_current, At};
use super::plan_format::Format;
use super::plan_resource_sets::Section;
use crate::api::class_rollout::{
    ClusterClassRolloutSpec, ClusterClassRolloutStatus, ROLLOUT_GROUP, ROLLOUT_KIND,
};
use crate::decode::decode_value;
use crate::rollout::pin::policies_of;
use crate::rollout::revision::{revision_name, snapshot};
use crate::rollout::waves::{plan_waves, Member};
use crate::runtime::RuntimeExtensions;
use crate::store::{MemoryStore, ObjectSource};

/// The rollout section for `format`; `None` when no ClusterClassRollout is in the state.
pub fn render(
    store: &MemoryStore,
    extensions: &RuntimeExtensions,
    format: Format,
) -> Result<Option<Section>> {
    let mut text = String::new();
    let mut documents = Vec::new();
    for (namespace, name) in store.names_of_kind(ROLLOUT_GROUP, ROLLOUT_KIND) {
        let Some(policy) = store.get(ROLLOUT_GROUP, ROLLOUT_KIND, &namespace, &name) else {
            continue;
        };
        let spec: ClusterClassRolloutSpec = decode_value(policy["spec"].clone())
            .map_err(|e| anyhow::anyhow!("ClusterClassRollout {namespace}/{name}: {e}"))?;
        let governs = policies_of(store, &namespace, &spec.class_ref.name)
            .first()
            .is_some_and(|first| first.pointer("/metadata/name") == policy.pointer("/metadata/name"));
        if !governs {
            continue;
        }
        let status: ClusterClassRolloutStatus = policy
            .get("status")
            .and_then(|s| decode_value(s.clone()).ok())
            .unwrap_or_default();
        let document = plan_rollout(store, extensions, (&namespace, &name), &spec, &status)?;
        text.push_str(&describe(&document));
        documents.push(document);
    }
    Ok(match (documents.is_empty(), format) {
        (true, _) => None,
        (false, Format::Json) => Some(Section::Json(documents)),
        (false, Format::Diff) => Some(Section::Text(text)),
        (false, Format::Yaml) => Some(Section::Text(text.lines().map(|l| format!("# {l}\n")).collect())),
    })
}

/// The rollout of the class of one policy: its new revision and waves, as a document.
fn plan_rollout(
    store: &MemoryStore,
    extensions: &RuntimeExtensions,
    (namespace, name): (&str, &str),
    spec: &ClusterClassRolloutSpec,
    status: &ClusterClassRolloutStatus,
) -> Result<Value> {
    let class = &spec.class_ref.name;
    let mut document = json!({
        "rollout": format!("{namespace}/{name}"), "class": format!("{namespace}/{class}"),
        "targetRevision": status.target_revision, "phase": status.phase,
    });
    let taken = match snapshot(store, namespace, class) {
        Ok(taken) => taken,
        Err(why) => {
            document["waiting"] = json!(why.to_string());
            return Ok(document);
        }
    };
    let revision = revision_name(class, &taken.hash);
    document["newRevision"] = json!(revision);
    let unchanged = status.target_revision.as_deref() == Some(revision.as_str());
    let halted = status.halted_revision.as_deref() == Some(revision.as_str());
    if unchanged || halted || status.target_revision.is_none() {
        return Ok(document);
    }
    let clusters = store.clusters_using_class(namespace, class);
    let members: Vec<Member> = clusters
        .iter()
        .map(|c| Member {
            namespace: c.metadata.namespace.clone().unwrap_or_default(),
            name: c.metadata.name.clone().unwrap_or_default(),
            labels: c
                .metadata
                .labels
                .clone()
                .unwrap_or_default()
                .into_iter()
                .collect(),
        })
        .collect();
    let waves = plan_waves(spec, &members).map_err(anyhow::Error::msg)?;
    let mut planned_waves = Vec::new();
    for wave in waves {
        let mut planned = Vec::new();
        for (cluster_namespace, cluster) in &wave.members {
            let when_moved = plan_against_current(store, cluster_namespace, cluster, extensions, At::Class);
            let (rolls, error) = match when_moved {
                Ok(plan) => (plan.machine_rolls, None),
                Err(error) => (Vec::new(), Some(format!("{error:#}"))),
            };
            planned.push(json!({"cluster": format!("{cluster_namespace}/{cluster}"), "machinesRoll": rolls, "error": error}));
        }
        planned_waves.push(json!({"name": wave.name, "maxRolling": wave.max_rolling, "clusters": planned}));
    }
    document["waves"] = Value::Array(planned_waves);
    Ok(document)
}

/// The rollout as `plan -o diff` prints it.
fn describe(document: &Value) -> String {
    let text = |pointer: &str| {
        document
            .pointer(pointer)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned()
    };
    let mut out = format!(
        "ClusterClassRollout {} of ClusterClass {}:\n",
        text("/rollout"),
        text("/class")
    );
    if let Some(waiting) = document.get("waiting").and_then(Value::as_str) {
        out.push_str(&format!("  no revision can be taken of the class: {waiting}\n"));
        return out;
    }
    let Some(waves) = document.get("waves").and_then(Value::as_array) else {
        let at = text("/targetRevision");
        let new = text("/newRevision");
        out.push_str(&match at.as_str() {
            "" => format!("  not started: the controller takes the class as its first revision, {new}\n"),
            _ if at == new => format!("  no change to roll out: every Cluster stays at {at}\n"),
            _ => format!("  {new} halted before: not rolled out again until the class changes\n"),
        });
        return out;
    };
    out.push_str(&format!(
        "  rolls out {} over {}, in waves:\n",
        text("/newRevision"),
        text("/targetRevision")
    ));
    for wave in waves {
        let clusters = wave["clusters"].as_array().map_or(&[][..], Vec::as_slice);
        out.push_str(&format!(
            "  wave {} ({} Clusters, {} at a time):\n",
            wave["name"].as_str().unwrap_or_default(),
            clusters.len(),
            wave["maxRolling"]
        ));
        for cluster in clusters {
            let name = cluster["cluster"].as_str().unwrap_or_default();
            let rolls: Vec<&str> = cluster["machinesRoll"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .collect();
            let line = match (cluster["error"].as_str(), rolls.is_empty()) {
                (Some(error), _) => format!("    {name}: cannot be planned: {error}\n"),
                (None, true) => format!("    {name}: no Machine rolls\n"),
                (None, false) => format!("    {name}: Machines roll: {}\n", rolls.join("; ")),
            };
            out.push_str(&line);
        }
    }
    out
}
