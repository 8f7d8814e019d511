//! References: v1beta1 `ObjectReference {apiVersion, kind, namespace, name, ...}` to the
//! v1beta2 `ContractVersionedObjectReference {apiGroup, kind, name}` (Cluster refs) and the
//! template references `{apiVersion, kind, name}` (ClusterClass templates, remediation
//! templates), and back. Namespace, uid, resourceVersion and fieldPath have no v1beta2 field.

use serde_json::Value;

use super::value::{str_of, Obj};
use super::{ContractVersions, ConvertError, Ctx};

/// The group of an apiVersion, as `schema.ParseGroupVersion` splits it.
fn group_of(api_version: &str) -> Result<&str, String> {
    match api_version.split('/').count() {
        1 => Ok(""),
        2 => Ok(api_version.split_once('/').map_or("", |(group, _)| group)),
        _ => Err(format!(
            "failed to parse apiVersion: unexpected GroupVersion string: {api_version}"
        )),
    }
}

/// Inserts `key: text` unless `text` is empty (v1beta2 omits empty strings).
fn insert_some(out: &mut Obj, key: &str, text: &str) {
    if !text.is_empty() {
        out.insert(key.to_owned(), Value::String(text.to_owned()));
    }
}

/// v1beta1 ObjectReference → `{apiGroup, kind, name}`.
pub(super) fn to_contract_ref(reference: &Value, ctx: &Ctx, field: &str) -> Result<Value, ConvertError> {
    let Some(reference) = reference.as_object() else {
        return Ok(reference.clone());
    };
    let group = group_of(str_of(reference, "apiVersion")).map_err(|message| ctx.invalid(field, message))?;
    let mut out = Obj::new();
    insert_some(&mut out, "apiGroup", group);
    insert_some(&mut out, "kind", str_of(reference, "kind"));
    insert_some(&mut out, "name", str_of(reference, "name"));
    Ok(Value::Object(out))
}

/// `{apiGroup, kind, name}` → v1beta1 ObjectReference, the apiVersion from the referenced CRD's
/// contract label and the namespace the object's own.
pub(super) fn from_contract_ref(
    reference: &Value,
    ctx: &Ctx,
    versions: &dyn ContractVersions,
) -> Result<Value, ConvertError> {
    let Some(reference) = reference.as_object() else {
        return Ok(reference.clone());
    };
    let (group, kind) = (str_of(reference, "apiGroup"), str_of(reference, "kind"));
    let version = versions
        .version_of(group, kind)
        .ok_or_else(|| ConvertError::MissingContract {
            object: ctx.object.clone(),
            group: group.to_owned(),
            kind: kind.to_owned(),
        })?;
    let api_version = if group.is_empty() {
        version
    } else {
        format!("{group}/{version}")
    };
    let mut out = Obj::new();
    insert_some(&mut out, "apiVersion", &api_version);
    insert_some(&mut out, "kind", kind);
    insert_some(&mut out, "namespace", &ctx.namespace);
    insert_some(&mut out, "name", str_of(reference, "name"));
    Ok(Value::Object(out))
}

/// v1beta1 ObjectReference → template reference `{apiVersion, kind, name}`.
pub(super) fn to_template_ref(reference: &Value) -> Value {
    let Some(reference) = reference.as_object() else {
        return reference.clone();
    };
    let mut out = Obj::new();
    insert_some(&mut out, "apiVersion", str_of(reference, "apiVersion"));
    insert_some(&mut out, "kind", str_of(reference, "kind"));
    insert_some(&mut out, "name", str_of(reference, "name"));
    Value::Object(out)
}

/// Template reference → v1beta1 ObjectReference in `namespace`.
pub(super) fn from_template_ref(reference: &Value, namespace: &str) -> Value {
    let Some(reference) = reference.as_object() else {
        return reference.clone();
    };
    let mut out = Obj::new();
    insert_some(&mut out, "apiVersion", str_of(reference, "apiVersion"));
    insert_some(&mut out, "kind", str_of(reference, "kind"));
    insert_some(&mut out, "namespace", namespace);
    insert_some(&mut out, "name", str_of(reference, "name"));
    Value::Object(out)
}
