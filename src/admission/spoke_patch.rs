//! The JSONPatch against an object sent in a spoke version (v1beta1), of what defaulting
//! changed on the hub, made one of two ways that give the same patch:
//! - [`mapped`]: the hub's patch (the one defaulting records) with each operation's pointer taken
//!   to the spoke's place through the conversion's declarations ([`convert::spoke_place`]) and
//!   checked against the object as sent, so that the patch is, operation for operation and in
//!   its order, the one `diff(sent, sent with the operations applied)` gives. It answers only
//!   where every pointer has such a place and the object as sent vouches for every operation
//!   (the key an `add` names is not there yet, its parent is, a `replace` changes the value).
//! - [`rendered`]: the hub object before and after defaulting converted back to the spoke and
//!   compared, for every other case (a value whose written form differs between the versions,
//!   an annotation the hub keeps).

use std::borrow::Cow;

use json_patch::jsonptr::PointerBuf;
use json_patch::{AddOperation, Patch, PatchOperation, ReplaceOperation};
use serde::Serialize;
use serde_json::Value;

use super::diff::diff;
use crate::api::convert::{self, ContractVersions, CONVERSION_DATA, V1BETA1_FIELDS};
use crate::store::group_of;

/// One operation at its spoke pointer, with the position of each step of that pointer in the
/// patched object (a key's index in its object, an entry's in its list): the diff's order.
struct Placed {
    position: Vec<usize>,
    operation: PatchOperation,
}

/// The entries `add` operations put into one container of the object as sent, named by the
/// container's address (it is borrowed for the whole mapping, so the address is its identity).
#[derive(Default)]
struct Added {
    containers: Vec<(*const Value, Vec<String>)>,
}

impl Added {
    /// What was added to `container` so far.
    fn to(&mut self, container: &Value) -> &mut Vec<String> {
        let address: *const Value = container;
        let index = match self.containers.iter().position(|(at, _)| *at == address) {
            Some(index) => index,
            None => {
                self.containers.push((address, Vec::new()));
                self.containers.len() - 1
            }
        };
        &mut self.containers[index].1
    }
}

/// The JSONPatch, against `sent` (the object as the client sent it, in a spoke version), of what
/// defaulting changed between the hub objects `before` and `after`: both are converted back to
/// the client's version and compared, so only what defaulting changed appears (never the
/// conversion-data annotations, nor fields our types do not know).
pub fn rendered<T: Serialize>(before: &T, after: &T, sent: &Value) -> Result<Patch, String> {
    let api_version = sent.get("apiVersion").and_then(Value::as_str).unwrap_or_default();
    let versions = SentVersions { sent };
    let render = |object: &T| -> Result<Value, String> {
        let hub = serde_json::to_value(object).map_err(|err| format!("cannot encode object: {err}"))?;
        let mut spoke = convert::from_hub_without_data(hub, api_version, &versions)
            .map_err(|err| format!("cannot convert the defaulted object to {api_version}: {err}"))?;
        if let Some(annotations) = spoke
            .pointer_mut("/metadata/annotations")
            .and_then(Value::as_object_mut)
        {
            annotations.remove(CONVERSION_DATA);
            annotations.remove(V1BETA1_FIELDS);
        }
        Ok(spoke)
    };
    let changes = diff(&render(before)?, &render(after)?);
    if changes.0.is_empty() {
        return Ok(changes);
    }
    let mut patched = sent.clone();
    json_patch::patch(&mut patched, &changes.0)
        .map_err(|err| format!("cannot apply the defaults to the {api_version} object: {err}"))?;
    Ok(diff(sent, &patched))
}

/// The versions of referenced kinds for converting back: the apiVersion the client sent on the
/// Cluster's own refs (so the refs come back exactly as sent, and never appear in the patch).
struct SentVersions<'a> {
    sent: &'a Value,
}

impl ContractVersions for SentVersions<'_> {
    fn version_of(&self, group: &str, kind: &str) -> Option<String> {
        let sent_ref = ["/spec/controlPlaneRef", "/spec/infrastructureRef"]
            .into_iter()
            .filter_map(|pointer| self.sent.pointer(pointer))
            .find(|r| r.get("kind").and_then(Value::as_str) == Some(kind))
            .and_then(|r| r.get("apiVersion").and_then(Value::as_str))
            .filter(|api_version| group_of(api_version) == group);
        sent_ref.map(|api_version| api_version.rsplit('/').next().unwrap_or_default().to_owned())
    }
}

/// `hub` (a patch against the hub object) as the patch against `sent`, the object as the client
/// sent it in a spoke version; `None` when an operation cannot be mapped and vouched for.
pub fn mapped(hub: &Patch, sent: &Value) -> Option<Patch> {
    let text = |key: &str| sent.get(key).and_then(Value::as_str).unwrap_or_default();
    let (api_version, kind) = (text("apiVersion"), text("kind"));
    let mut added = Added::default();
    let mut placed = Vec::with_capacity(hub.0.len());
    for operation in &hub.0 {
        let (pointer, value, add) = match operation {
            PatchOperation::Add(op) => (&op.path, &op.value, true),
            PatchOperation::Replace(op) => (&op.path, &op.value, false),
            _ => return None,
        };
        let tokens: Vec<&str> = pointer.as_str().split('/').skip(1).collect();
        let spoke = convert::spoke_place(api_version, kind, &tokens, value)?;
        let position = position(sent, &spoke, add, value, &mut added)?;
        let path = match spoke {
            Cow::Borrowed(_) => pointer.clone(),
            Cow::Owned(tokens) => PointerBuf::parse(format!("/{}", tokens.join("/"))).ok()?,
        };
        let value = value.clone();
        let operation = if add {
            PatchOperation::Add(AddOperation { path, value })
        } else {
            PatchOperation::Replace(ReplaceOperation { path, value })
        };
        placed.push(Placed { position, operation });
    }
    placed.sort_by(|a, b| a.position.cmp(&b.position));
    // Two operations at one place, or one inside the value another sets: the diff decides.
    if placed
        .windows(2)
        .any(|pair| pair[1].position.starts_with(&pair[0].position))
    {
        return None;
    }
    Some(Patch(placed.into_iter().map(|p| p.operation).collect()))
}

/// The position in the patched object of the place `tokens` (encoded pointer tokens) of `sent`,
/// when an `add` (`add`) or a `replace` of `value` there is exactly what the diff would find.
fn position(
    sent: &Value,
    tokens: &[&str],
    add: bool,
    value: &Value,
    added: &mut Added,
) -> Option<Vec<usize>> {
    let (last, parents) = tokens.split_last()?;
    let mut position = Vec::with_capacity(tokens.len());
    let mut node = sent;
    for token in parents {
        let (index, child) = child_of(node, &decoded(token))?;
        position.push(index);
        node = child;
    }
    let last = decoded(last);
    if !add {
        let (index, current) = child_of(node, &last)?;
        let same_shape = matches!(
            (current, value),
            (Value::Object(_), Value::Object(_)) | (Value::Array(_), Value::Array(_))
        );
        if same_shape || current == value {
            return None;
        }
        position.push(index);
        return Some(position);
    }
    let index = match node {
        Value::Object(map) => {
            let keys = added.to(node);
            if map.contains_key(&*last) || keys.iter().any(|key| *key == last) {
                return None;
            }
            let index = map.len() + keys.len();
            keys.push(last.into_owned());
            index
        }
        Value::Array(items) => {
            let appended = added.to(node);
            let index = list_index(&last)?;
            if index != items.len() + appended.len() {
                return None;
            }
            appended.push(last.into_owned());
            index
        }
        _ => return None,
    };
    position.push(index);
    Some(position)
}

/// The child of `node` named `token`, with its index among its siblings.
fn child_of<'v>(node: &'v Value, token: &str) -> Option<(usize, &'v Value)> {
    match node {
        Value::Object(map) => map
            .iter()
            .enumerate()
            .find(|(_, (key, _))| key.as_str() == token)
            .map(|(index, (_, child))| (index, child)),
        Value::Array(items) => {
            let index = list_index(token)?;
            items.get(index).map(|child| (index, child))
        }
        _ => None,
    }
}

/// A list index as a pointer writes it: digits, no leading zero.
fn list_index(token: &str) -> Option<usize> {
    let canonical = token == "0" || (!token.starts_with('0') && token.bytes().all(|b| b.is_ascii_digit()));
    canonical.then(|| token.parse().ok()).flatten()
}

/// An encoded pointer token decoded (`~1` is `/`, `~0` is `~`).
fn decoded(token: &str) -> Cow<'_, str> {
    if token.contains('~') {
        Cow::Owned(token.replace("~1", "/").replace("~0", "~"))
    } else {
        Cow::Borrowed(token)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn patch(operations: Value) -> Patch {
        serde_json::from_value(operations).unwrap()
    }

    /// A v1beta1 Cluster whose topology lists its variables before its version.
    fn sent() -> Value {
        json!({"apiVersion": "cluster.x-k8s.io/v1beta1", "kind": "Cluster",
            "metadata": {"name": "c"},
            "spec": {"topology": {"class": "c", "variables": [{"name": "a", "value": {"x": 1}}],
                "version": "1.30.0", "futureField": true,
                "workers": {"machineDeployments": [{"name": "md", "variables": {"overrides": []}}]}}}})
    }

    #[test]
    fn operations_come_in_the_order_of_the_object_as_sent() {
        let hub = patch(json!([
            {"op": "replace", "path": "/spec/topology/version", "value": "v1.30.0"},
            {"op": "add", "path": "/spec/topology/workers/machineDeployments/0/variables/overrides/0",
             "value": {"name": "b", "value": 2}},
            {"op": "add", "path": "/spec/topology/variables/0/value/y", "value": 2},
            {"op": "add", "path": "/spec/topology/variables/1", "value": {"name": "c", "value": 3}},
            {"op": "add", "path": "/spec/topology/variables/2", "value": {"name": "d", "value": 4}},
        ]));
        let mapped = mapped(&hub, &sent()).expect("every operation maps");
        let mut patched = sent();
        json_patch::patch(&mut patched, &hub.0).unwrap();
        assert_eq!(mapped, diff(&sent(), &patched));
        assert_eq!(mapped.0[0], hub.0[2], "the variables come first, as sent");
    }

    #[test]
    fn a_moved_field_takes_its_spoke_pointer() {
        let hub = patch(json!([{"op": "add", "path": "/spec/topology/classRef/namespace", "value": "ns"}]));
        let expected = patch(json!([{"op": "add", "path": "/spec/topology/classNamespace", "value": "ns"}]));
        assert_eq!(mapped(&hub, &sent()), Some(expected));
    }

    #[test]
    fn operations_the_object_as_sent_does_not_vouch_for_are_left_to_the_rendering() {
        for operations in [
            // The key is there already (an add would replace it).
            json!([{"op": "add", "path": "/spec/topology/version", "value": "v1"}]),
            // Not the next entry of the list.
            json!([{"op": "add", "path": "/spec/topology/variables/2", "value": {}}]),
            // The parent is missing.
            json!([{"op": "add", "path": "/spec/topology/controlPlane/variables/overrides/0", "value": {}}]),
            // A replace that changes nothing, or one of an object by an object.
            json!([{"op": "replace", "path": "/spec/topology/version", "value": "1.30.0"}]),
            json!([{"op": "replace", "path": "/spec/topology/variables/0/value", "value": {"x": 2}}]),
            // One operation inside the value another sets.
            json!([{"op": "replace", "path": "/spec/topology/variables/0/value", "value": 1},
                   {"op": "add", "path": "/spec/topology/variables/0/value/z", "value": 1}]),
            json!([{"op": "add", "path": "/spec/topology/variables/1", "value": {}},
                   {"op": "add", "path": "/spec/topology/variables/1/value", "value": 1}]),
            // A place the conversion rewrites, or an operation defaulting never makes.
            json!([{"op": "add", "path": "/metadata/annotations", "value": {}}]),
            json!([{"op": "add", "path": "/spec/topology/controlPlane/healthCheck", "value": {}}]),
            json!([{"op": "remove", "path": "/spec/topology/version"}]),
        ] {
            assert_eq!(mapped(&patch(operations.clone()), &sent()), None, "{operations}");
        }
        let hub_object = json!({"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "Cluster"});
        let version = patch(json!([{"op": "add", "path": "/spec/topology/version", "value": "v1"}]));
        assert_eq!(mapped(&version, &hub_object), None, "not a spoke");
    }
}
