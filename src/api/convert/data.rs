//! The two annotations that make round trips lossless: [`CONVERSION_DATA`] on a spoke holds the
//! hub it came from (as `util/conversion.MarshalDataUnsafeNoCopy` writes it); [`V1BETA1_FIELDS`]
//! on a hub holds the v1beta1 fields v1beta2 has no place for (see the module doc of
//! `api::convert`).

use serde_json::{json, Value};

use super::value::{child, Obj};
use super::{ConvertError, Ctx};

/// The spoke annotation holding the hub object, `cluster.x-k8s.io/conversion-data`.
pub const CONVERSION_DATA: &str = "cluster.x-k8s.io/conversion-data";

/// The hub annotation holding v1beta1-only fields, `topology.cluster.x-k8s.io/v1beta1-fields`.
pub const V1BETA1_FIELDS: &str = "topology.cluster.x-k8s.io/v1beta1-fields";

/// Removes annotation `key` from `obj` and returns its text; drops `metadata.annotations` when
/// that leaves it empty (Go omits an empty map).
pub(super) fn take_annotation(obj: &mut Obj, key: &str) -> Option<String> {
    let meta = child(obj, "metadata")?;
    let annotations = child(meta, "annotations")?;
    let value = annotations.remove(key)?;
    if annotations.is_empty() {
        meta.remove("annotations");
    }
    match value {
        Value::String(text) => Some(text),
        other => Some(other.to_string()),
    }
}

/// Sets annotation `key` on `obj`, creating the maps on the way.
pub(super) fn set_annotation(obj: &mut Obj, key: &str, text: String) {
    super::value::put(obj, &["metadata", "annotations", key], Value::String(text));
}

/// The hub object `hub` as the spoke's conversion-data: everything but `metadata`, keys sorted so
/// that equal hubs give equal annotations whatever order their fields came in.
pub(super) fn marshal_hub(hub: &Obj) -> String {
    let data: Obj = hub
        .iter()
        .filter(|(k, _)| *k != "metadata")
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    sorted(&Value::Object(data)).to_string()
}

fn sorted(value: &Value) -> Value {
    match value {
        Value::Object(obj) => {
            let mut entries: Vec<(&String, &Value)> = obj.iter().collect();
            entries.sort_by(|a, b| a.0.cmp(b.0));
            Value::Object(entries.into_iter().map(|(k, v)| (k.clone(), sorted(v))).collect())
        }
        Value::Array(items) => Value::Array(items.iter().map(sorted).collect()),
        other => other.clone(),
    }
}

/// The conversion-data of a hub about to become a spoke: any stale conversion-data is taken
/// off `obj`, and the data left without our kept v1beta1 fields (they go back into the spoke);
/// `None` when `ctx` writes no conversion-data.
pub(super) fn hub_data(obj: &mut Obj, ctx: &Ctx) -> Option<String> {
    take_annotation(obj, CONVERSION_DATA);
    if !ctx.conversion_data {
        return None;
    }
    let mut hub = obj.clone();
    take_annotation(&mut hub, V1BETA1_FIELDS);
    Some(marshal_hub(&hub))
}

/// Takes the conversion-data off a spoke and parses it: `Ok(None)` without the annotation.
pub(super) fn unmarshal_hub(spoke: &mut Obj, ctx: &Ctx) -> Result<Option<Obj>, ConvertError> {
    let Some(text) = take_annotation(spoke, CONVERSION_DATA) else {
        return Ok(None);
    };
    match serde_json::from_str::<Value>(&text) {
        Ok(Value::Object(hub)) => Ok(Some(hub)),
        Ok(_) => Err(ctx.invalid(
            &format!("metadata.annotations[{CONVERSION_DATA}]"),
            "not a JSON object",
        )),
        Err(err) => Err(ctx.invalid(
            &format!("metadata.annotations[{CONVERSION_DATA}]"),
            err.to_string(),
        )),
    }
}

/// v1beta1-only fields collected while converting a spoke, in JSON-pointer form.
#[derive(Debug, Default)]
pub(super) struct Kept(Vec<Value>);

impl Kept {
    /// Keeps `value`, found at `path` (JSON pointer into the spoke), valid while every pointer of
    /// `guard` still holds its name.
    pub(super) fn keep(&mut self, path: String, value: Value, guard: &[(String, String)]) {
        let guard: Obj = guard
            .iter()
            .map(|(p, n)| (p.clone(), Value::String(n.clone())))
            .collect();
        let mut entry = json!({ "path": path, "value": value });
        if !guard.is_empty() {
            entry["guard"] = Value::Object(guard);
        }
        self.0.push(entry);
    }

    /// Writes the kept fields on the hub, when there are any.
    pub(super) fn annotate(self, hub: &mut Obj) {
        if !self.0.is_empty() {
            set_annotation(hub, V1BETA1_FIELDS, Value::Array(self.0).to_string());
        }
    }
}

/// Puts `entries` (pointer, value) at the start of the hub's [`V1BETA1_FIELDS`] annotation,
/// before what the kind's converter kept (the order a typed Cluster writes them back in).
pub(super) fn keep_first(hub: &mut Obj, entries: Vec<(String, Value)>) {
    if entries.is_empty() {
        return;
    }
    let mut list: Vec<Value> = entries
        .into_iter()
        .map(|(path, value)| json!({ "path": path, "value": value }))
        .collect();
    if let Some(Ok(Value::Array(kept))) =
        take_annotation(hub, V1BETA1_FIELDS).map(|text| serde_json::from_str::<Value>(&text))
    {
        list.extend(kept);
    }
    set_annotation(hub, V1BETA1_FIELDS, Value::Array(list).to_string());
}

/// Escapes one JSON-pointer token.
pub(super) fn token(key: &str) -> String {
    if !key.contains(['~', '/']) {
        return key.to_owned();
    }
    key.replace('~', "~0").replace('/', "~1")
}
