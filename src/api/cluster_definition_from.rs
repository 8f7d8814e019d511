//! A Cluster variable's `definitionFrom` on the hub (project decision, seed 003; see
//! `api::convert`'s module doc). v1beta2 has no such field, so a hub Cluster keeps each value's
//! `definitionFrom` in the [`V1BETA1_FIELDS`] annotation, as the converter writes it: an entry
//! `{"path": "<list>/<i>/definitionFrom", "value": <from>, "guard": {<pointer>: <name>}}` per
//! value, `guard` holding the names on the path (the MachineDeployment's or MachinePool's, the
//! variable's). The typed model carries it in [`ClusterVariable::definition_from`]: decoding a
//! Cluster fills it from the annotation (entries whose guard no longer matches are ignored, as
//! the converter ignores them), and encoding one writes the annotation's `definitionFrom`
//! entries from it (other kept fields untouched), so every layer reads the value where it is
//! typed and every hub object written carries it. The v1beta1 `spec.topology.rolloutAfter` kept
//! there is read the same way, into [`Topology::v1beta1_rollout_after`] (read only: encoding
//! leaves its entry as it is).

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};

use super::cluster::{Cluster, Topology};
use super::convert::{is_date_time, V1BETA1_FIELDS};
use super::variables::ClusterVariable;

const SUFFIX: &str = "/definitionFrom";
const ROLLOUT_AFTER: &str = "/spec/topology/rolloutAfter";
const MACHINE_DEPLOYMENTS: &str = "/spec/topology/workers/machineDeployments";
const MACHINE_POOLS: &str = "/spec/topology/workers/machinePools";

impl Serialize for Cluster {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self.v1beta1_fields() {
            Annotation::Current => Cluster::serialize(self, serializer),
            Annotation::New(text) => {
                let mut annotated = self.clone();
                set_annotation(&mut annotated, text);
                Cluster::serialize(&annotated, serializer)
            }
        }
    }
}

impl<'de> Deserialize<'de> for Cluster {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let mut cluster = Cluster::deserialize(deserializer)?;
        cluster.restore_v1beta1_fields();
        Ok(cluster)
    }
}

/// The [`V1BETA1_FIELDS`] annotation a Cluster serialises with.
enum Annotation {
    /// The one in its metadata.
    Current,
    /// Another text, or none.
    New(Option<String>),
}

impl Cluster {
    /// The [`V1BETA1_FIELDS`] annotation as this Cluster serialises it: its kept fields, with
    /// the `definitionFrom` entries of the variables' `definition_from` (`None`: no annotation).
    pub fn v1beta1_fields_annotation(&self) -> Option<String> {
        match self.v1beta1_fields() {
            Annotation::Current => self.current_v1beta1_fields().map(str::to_owned),
            Annotation::New(text) => text,
        }
    }

    fn current_v1beta1_fields(&self) -> Option<&str> {
        self.metadata
            .annotations
            .as_ref()
            .and_then(|a| a.get(V1BETA1_FIELDS))
            .map(String::as_str)
    }

    /// Whether the annotation says what the variables' `definition_from` say, and if not, what
    /// it should say.
    fn v1beta1_fields(&self) -> Annotation {
        let current = self.current_v1beta1_fields();
        let kept = current.map(parse).unwrap_or_default();
        let mut wanted: Vec<Value> = kept
            .iter()
            .filter(|entry| !is_definition_from(entry))
            .cloned()
            .collect();
        wanted.extend(entries(&self.spec.topology));
        if wanted == kept && (current.is_some() || wanted.is_empty()) {
            return Annotation::Current;
        }
        Annotation::New((!wanted.is_empty()).then(|| Value::Array(wanted).to_string()))
    }

    /// Fills each variable's `definition_from` from the annotation's entries that still match,
    /// and the topology's `v1beta1_rollout_after`.
    fn restore_v1beta1_fields(&mut self) {
        let Some(text) = self
            .metadata
            .annotations
            .as_ref()
            .and_then(|a| a.get(V1BETA1_FIELDS))
        else {
            return;
        };
        let kept = parse(text);
        let topology = &mut self.spec.topology;
        let after = kept
            .iter()
            .find(|entry| entry.get("path").and_then(Value::as_str) == Some(ROLLOUT_AFTER))
            .and_then(|entry| entry.get("value"));
        topology.v1beta1_rollout_after = match after {
            Some(Value::String(after)) if is_date_time(after) => Some(after.clone()),
            Some(bad) => {
                let name = self.metadata.name.as_deref().unwrap_or_default();
                tracing::warn!(cluster = name, annotation = V1BETA1_FIELDS, value = %bad,
                    "ignoring a kept spec.topology.rolloutAfter that is not a date-time");
                None
            }
            None => None,
        };
        for entry in kept.iter().filter(|entry| is_definition_from(entry)) {
            let (Some(path), Some(Value::String(from))) =
                (entry.get("path").and_then(Value::as_str), entry.get("value"))
            else {
                continue;
            };
            let guard = entry.get("guard").and_then(Value::as_object);
            let found = List::all(topology)
                .into_iter()
                .find_map(|list| list.index_in(path).map(|index| (list, index)));
            let Some((list, index)) = found else {
                continue;
            };
            let expected = list.guard(topology, index);
            if guard.is_some_and(|guard| !matches(guard, &expected)) {
                continue;
            }
            if let Some(value) = list.value_mut(topology, index) {
                value.definition_from = from.clone();
            }
        }
    }
}

/// Sets (or, `None`, removes) the annotation.
fn set_annotation(cluster: &mut Cluster, text: Option<String>) {
    let annotations = cluster.metadata.annotations.get_or_insert_with(Default::default);
    match text {
        Some(text) => {
            annotations.insert(V1BETA1_FIELDS.to_owned(), text);
        }
        None => {
            annotations.remove(V1BETA1_FIELDS);
        }
    }
    if annotations.is_empty() {
        cluster.metadata.annotations = None;
    }
}

/// The annotation's entries; unreadable text has none (the annotation is only advisory).
fn parse(text: &str) -> Vec<Value> {
    match serde_json::from_str(text) {
        Ok(Value::Array(entries)) => entries,
        _ => Vec::new(),
    }
}

fn is_definition_from(entry: &Value) -> bool {
    entry
        .get("path")
        .and_then(Value::as_str)
        .is_some_and(|path| path.starts_with("/spec/topology/") && path.ends_with(SUFFIX))
}

/// Whether every pointer of `guard` is one `expected` names, with the same name.
fn matches(guard: &Map<String, Value>, expected: &[(String, String)]) -> bool {
    guard.iter().all(|(pointer, name)| {
        expected
            .iter()
            .any(|(p, n)| p == pointer && name.as_str() == Some(n.as_str()))
    })
}

/// The annotation entries of the topology's values with a `definition_from`, in document order
/// (as the converter writes them).
fn entries(topology: &Topology) -> Vec<Value> {
    let mut out = Vec::new();
    for list in List::all(topology) {
        for (index, value) in list.values(topology).iter().enumerate() {
            if value.definition_from.is_empty() {
                continue;
            }
            let guard: Map<String, Value> = list
                .guard(topology, index)
                .into_iter()
                .map(|(pointer, name)| (pointer, Value::String(name)))
                .collect();
            let mut entry = Map::new();
            entry.insert(
                "path".into(),
                Value::String(format!("{}/{index}{SUFFIX}", list.base())),
            );
            entry.insert("value".into(), Value::String(value.definition_from.clone()));
            entry.insert("guard".into(), Value::Object(guard));
            out.push(Value::Object(entry));
        }
    }
    out
}

/// One variable list of a topology.
#[derive(Debug, Clone, Copy)]
enum List {
    /// `spec.topology.variables`.
    Cluster,
    /// `spec.topology.controlPlane.variables.overrides`.
    ControlPlane,
    /// The overrides of the MachineDeployment at this index.
    MachineDeployment(usize),
    /// The overrides of the MachinePool at this index.
    MachinePool(usize),
}

impl List {
    /// Every list of `topology`, in document order.
    fn all(topology: &Topology) -> Vec<List> {
        let workers = &topology.workers;
        let mut lists = vec![List::Cluster, List::ControlPlane];
        lists.extend((0..workers.machine_deployments.len()).map(List::MachineDeployment));
        lists.extend((0..workers.machine_pools.len()).map(List::MachinePool));
        lists
    }

    /// The pointer of the list (in v1beta1 and v1beta2 alike).
    fn base(self) -> String {
        match self {
            List::Cluster => "/spec/topology/variables".to_owned(),
            List::ControlPlane => "/spec/topology/controlPlane/variables/overrides".to_owned(),
            List::MachineDeployment(i) => format!("{MACHINE_DEPLOYMENTS}/{i}/variables/overrides"),
            List::MachinePool(i) => format!("{MACHINE_POOLS}/{i}/variables/overrides"),
        }
    }

    /// The index `path` (`<base>/<i>/definitionFrom`) names in this list.
    fn index_in(self, path: &str) -> Option<usize> {
        let base = self.base();
        let rest = path.strip_prefix(base.as_str())?.strip_prefix('/')?;
        rest.strip_suffix(SUFFIX)?.parse().ok()
    }

    /// The names on the path of this list's entry at `index`, as the converter guards it: the
    /// MachineDeployment's or MachinePool's, then the variable's.
    fn guard(self, topology: &Topology, index: usize) -> Vec<(String, String)> {
        let workers = &topology.workers;
        let mut guard = Vec::with_capacity(2);
        match self {
            List::MachineDeployment(i) => {
                let name = workers.machine_deployments.get(i).map(|md| md.name.clone());
                guard.push((
                    format!("{MACHINE_DEPLOYMENTS}/{i}/name"),
                    name.unwrap_or_default(),
                ));
            }
            List::MachinePool(i) => {
                let name = workers.machine_pools.get(i).map(|mp| mp.name.clone());
                guard.push((format!("{MACHINE_POOLS}/{i}/name"), name.unwrap_or_default()));
            }
            List::Cluster | List::ControlPlane => {}
        }
        let name = self.values(topology).get(index).map(|v| v.name.clone());
        guard.push((format!("{}/{index}/name", self.base()), name.unwrap_or_default()));
        guard
    }

    fn values(self, topology: &Topology) -> &[ClusterVariable] {
        let workers = &topology.workers;
        match self {
            List::Cluster => &topology.variables,
            List::ControlPlane => &topology.control_plane.variables.overrides,
            List::MachineDeployment(i) => workers
                .machine_deployments
                .get(i)
                .map_or(&[], |md| md.variables.overrides.as_slice()),
            List::MachinePool(i) => workers
                .machine_pools
                .get(i)
                .map_or(&[], |mp| mp.variables.overrides.as_slice()),
        }
    }

    fn value_mut(self, topology: &mut Topology, index: usize) -> Option<&mut ClusterVariable> {
        let workers = &mut topology.workers;
        let list = match self {
            List::Cluster => &mut topology.variables,
            List::ControlPlane => &mut topology.control_plane.variables.overrides,
            List::MachineDeployment(i) => &mut workers.machine_deployments.get_mut(i)?.variables.overrides,
            List::MachinePool(i) => &mut workers.machine_pools.get_mut(i)?.variables.overrides,
        };
        list.get_mut(index)
    }
}

#[cfg(test)]
#[path = "cluster_definition_from_tests.rs"]
mod tests;
