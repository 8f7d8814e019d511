//! The JSONPatch of a Cluster's defaulting, recorded as each default is set: the operations
//! `json_patch::diff` gives for the Cluster's typed serialisation before and after, without
//! serialising it twice (`tests/admission_patch.rs` holds the two together).

use json_patch::jsonptr::PointerBuf;
use json_patch::{AddOperation, Patch, PatchOperation, ReplaceOperation};
use serde_json::Value;

/// Where a change sits in the serialised Cluster, in the order the diff visits the places.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum Place {
    /// `metadata` (the `V1BETA1_FIELDS` annotation holding defaulted values' `definitionFrom`);
    /// its operations carry whole pointers.
    Metadata,
    /// `spec.topology.version`.
    Version,
    /// `spec.topology.controlPlane`: its health check, then its variable overrides.
    ControlPlane,
    /// The MachineDeployment topology at this index: its health check, then its overrides.
    MachineDeployment(usize),
    /// The MachinePool topology at this index: its variable overrides.
    MachinePool(usize),
    /// `spec.topology.variables`.
    Variables,
}

impl Place {
    /// The JSON pointer of the place, with `tokens` after it.
    pub(super) fn pointer(self, tokens: &[&str]) -> PointerBuf {
        let base: &[&str] = match self {
            Place::Metadata => &["metadata"],
            Place::Version => &["spec", "topology", "version"],
            Place::ControlPlane => &["spec", "topology", "controlPlane"],
            Place::MachineDeployment(_) => &["spec", "topology", "workers", "machineDeployments"],
            Place::MachinePool(_) => &["spec", "topology", "workers", "machinePools"],
            Place::Variables => &["spec", "topology", "variables"],
        };
        let mut pointer = PointerBuf::from_tokens(base.iter().copied());
        if let Place::MachineDeployment(index) | Place::MachinePool(index) = self {
            pointer.push_back(index);
        }
        for token in tokens {
            pointer.push_back(*token);
        }
        pointer
    }
}

/// Operations collected in the order defaulting makes them, each with its place.
#[derive(Debug, Default)]
pub(super) struct Recorder {
    operations: Vec<(Place, PatchOperation)>,
}

impl Recorder {
    /// Records operations at `place`, after those already recorded there.
    pub(super) fn record(&mut self, place: Place, operations: impl IntoIterator<Item = PatchOperation>) {
        self.operations
            .extend(operations.into_iter().map(|operation| (place, operation)));
    }

    /// Records that the string at `pointer` was set to `value`: an add when it was absent (an
    /// `Option` serialised only when set), a replace otherwise.
    pub(super) fn set_string(&mut self, place: Place, pointer: PointerBuf, was_absent: bool, value: &str) {
        let value = Value::String(value.to_owned());
        let operation = if was_absent {
            PatchOperation::Add(AddOperation { path: pointer, value })
        } else {
            PatchOperation::Replace(ReplaceOperation { path: pointer, value })
        };
        self.operations.push((place, operation));
    }

    /// The patch, in the order of the serialised Cluster (a stable sort by place keeps each
    /// place's operations in the order they were made).
    pub(super) fn finish(mut self) -> Patch {
        self.operations.sort_by_key(|(place, _)| *place);
        Patch(
            self.operations
                .into_iter()
                .map(|(_, operation)| operation)
                .collect(),
        )
    }
}

/// The operations of a defaulted list whose key was absent before (an empty list is not
/// serialised): every entry was appended, and the diff adds the whole list at once.
pub(super) fn added_list(pointer: PointerBuf, appended: Vec<PatchOperation>) -> Option<PatchOperation> {
    let entries: Vec<Value> = appended
        .into_iter()
        .filter_map(|operation| match operation {
            PatchOperation::Add(add) => Some(add.value),
            _ => None,
        })
        .collect();
    (!entries.is_empty()).then(|| {
        PatchOperation::Add(AddOperation {
            path: pointer,
            value: Value::Array(entries),
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn operations_come_out_in_document_order() {
        let mut recorder = Recorder::default();
        let md = |index, field| Place::MachineDeployment(index).pointer(&[field]);
        recorder.set_string(Place::MachineDeployment(1), md(1, "b"), true, "x");
        recorder.set_string(Place::Version, Place::Version.pointer(&[]), false, "v1");
        recorder.set_string(Place::MachineDeployment(0), md(0, "a"), true, "y");
        recorder.set_string(Place::MachineDeployment(1), md(1, "c"), false, "z");
        let patch = serde_json::to_value(recorder.finish()).unwrap();
        let mds = "/spec/topology/workers/machineDeployments";
        assert_eq!(
            patch,
            json!([
                {"op": "replace", "path": "/spec/topology/version", "value": "v1"},
                {"op": "add", "path": format!("{mds}/0/a"), "value": "y"},
                {"op": "add", "path": format!("{mds}/1/b"), "value": "x"},
                {"op": "replace", "path": format!("{mds}/1/c"), "value": "z"},
            ])
        );
    }

    #[test]
    fn entries_appended_to_an_absent_list_add_the_list() {
        let appended = [json!({"name": "a"}), json!({"name": "b"})]
            .into_iter()
            .enumerate()
            .map(|(i, value)| {
                PatchOperation::Add(AddOperation {
                    path: Place::Variables.pointer(&[&i.to_string()]),
                    value,
                })
            })
            .collect();
        let added = added_list(Place::Variables.pointer(&[]), appended).unwrap();
        assert_eq!(
            serde_json::to_value(added).unwrap(),
            json!({"op": "add", "path": "/spec/topology/variables", "value": [{"name": "a"}, {"name": "b"}]})
        );
        assert!(added_list(Place::Variables.pointer(&[]), Vec::new()).is_none());
    }
}
