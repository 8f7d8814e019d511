//! The version edge of admission: the rules read only the hub (v1beta2), so an object sent in
//! v1beta1 (ExtensionConfig: v1alpha1) is converted to the hub before they run, a mutating
//! answer to it is a JSONPatch against what the client sent, and its denials name fields as
//! v1beta1 does.

use json_patch::Patch;
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::Value;

use super::webhook::Kind;
use crate::api::convert::{self, paths, ContractVersions, CONVERSION_DATA, V1BETA1_FIELDS};
use crate::field::{FieldError, FieldErrors, FieldPath};
use crate::store::group_of;

/// One object of a request, decoded into the hub type.
pub(super) struct Decoded<T> {
    /// The object on the hub.
    pub(super) object: T,
    /// The object as the client sent it, when that was not the hub and it was asked for (the
    /// JSONPatch is computed against it).
    pub(super) sent: Option<Value>,
    /// The object was sent in the spoke version.
    pub(super) spoke: bool,
}

/// Decodes `object` (the request's `field`) of `kind` in any served version into the hub type,
/// keeping a spoke object as it was sent when `keep_sent` (a mutating webhook's object).
pub(super) fn decode<T: DeserializeOwned>(
    kind: Kind,
    field: &str,
    mut object: Value,
    keep_sent: bool,
) -> Result<Decoded<T>, String> {
    let (api_version, object_kind) = type_meta(&object);
    let version = api_version
        .strip_prefix(kind.group())
        .and_then(|v| v.strip_prefix('/'));
    let served = version.filter(|v| kind.serves(v));
    if served.is_none() || object_kind != kind.name() {
        return Err(format!(
            "{field} is {} {}, but this webhook admits {} {name}",
            shown(api_version),
            shown(object_kind),
            kind.served_versions(),
            name = kind.name(),
        ));
    }
    let spoke = served != Some(kind.version());
    let sent = (spoke && keep_sent).then(|| object.clone());
    if spoke {
        object = convert::to_hub(object)
            .map_err(|err| format!("cannot convert {field} to {}: {err}", kind.version()))?;
    }
    let object =
        crate::decode::decode_value(object).map_err(|err| format!("cannot decode {field}: {err}"))?;
    Ok(Decoded { object, sent, spoke })
}

/// `apiVersion` and `kind` of a JSON object (`""` when absent).
fn type_meta(object: &Value) -> (&str, &str) {
    let text = |key: &str| object.get(key).and_then(Value::as_str).unwrap_or_default();
    (text("apiVersion"), text("kind"))
}

/// An attacker-supplied string as an error repeats it: quoted, and cut when long.
pub(super) fn shown(text: &str) -> String {
    crate::field::truncate(format!("{text:?}"), 128)
}

/// The JSONPatch, against `sent` (the object as the client sent it, in a spoke version), of what
/// defaulting changed between the hub objects `before` and `after`: both are converted back to
/// the client's version and compared, so only what defaulting changed appears (never the
/// conversion-data annotations, nor fields our types do not know).
pub(super) fn spoke_patch<T: Serialize>(before: &T, after: &T, sent: &Value) -> Result<Patch, String> {
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
    let changes = super::diff::diff(&render(before)?, &render(after)?);
    if changes.0.is_empty() {
        return Ok(changes);
    }
    let mut patched = sent.clone();
    json_patch::patch(&mut patched, &changes.0)
        .map_err(|err| format!("cannot apply the defaults to the {api_version} object: {err}"))?;
    Ok(super::diff::diff(sent, &patched))
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

/// The errors with every hub field path (in their paths and details) written as v1beta1 names
/// the field; a path with no v1beta1 equivalent stays as it is.
pub(super) fn to_v1beta1_paths(errors: FieldErrors) -> FieldErrors {
    errors
        .into_iter()
        .map(|mut error| {
            let path = error.path.to_string();
            if let std::borrow::Cow::Owned(translated) = paths::to_v1beta1(&path) {
                error.path = FieldPath::root().child(&translated);
            }
            if let std::borrow::Cow::Owned(detail) = paths::text_to_v1beta1(&error.detail) {
                error.detail = detail;
            }
            error
        })
        .collect::<Vec<FieldError>>()
        .into()
}
