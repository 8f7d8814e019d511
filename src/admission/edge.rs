//! The version edge of admission: the rules read only the hub (v1beta2), so an object sent in
//! v1beta1 (ExtensionConfig: v1alpha1) is converted to the hub before they run, a mutating
//! answer to it is a JSONPatch against what the client sent, and its denials name fields as
//! v1beta1 does.

use json_patch::Patch;
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::Value;

use super::webhook::Kind;
use crate::api::convert::{self, paths};
use crate::field::{FieldError, FieldErrors, FieldPath};

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

/// How [`decode`] reads an object into the hub type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Decoding {
    /// Moved into the type, no string or free-form value copied; an object that does not decode
    /// as it is gives [`Undecoded::Unexplained`], for the request to be read again
    /// [`Explained`](Decoding::Explained).
    Moved,
    /// Read by reference, made lenient where Go's decoder is (`null`s), and a failure explained
    /// with the field's path.
    Explained,
}

/// Why [`decode`] gave no object.
#[derive(Debug)]
pub(super) enum Undecoded {
    /// The answer's message: the object is not one the webhook admits, or it does not convert
    /// or decode.
    Refused(String),
    /// A [`Decoding::Moved`] object did not decode as it is: read it again explained.
    Unexplained,
}

impl From<String> for Undecoded {
    fn from(message: String) -> Self {
        Undecoded::Refused(message)
    }
}

/// Decodes `object` (the request's `field`) of `kind` in any served version into the hub type,
/// keeping a spoke object as it was sent when `keep_sent` (a mutating webhook's object).
pub(super) fn decode<T: DeserializeOwned>(
    kind: Kind,
    field: &str,
    object: Value,
    keep_sent: bool,
    decoding: Decoding,
) -> Result<Decoded<T>, Undecoded> {
    let hub = to_hub(kind, field, object, keep_sent)?;
    let object = match decoding {
        // By value the strings move into the type: what the by-reference first try of
        // `decode_value` gives when it succeeds, without its copies.
        Decoding::Moved => T::deserialize(hub.object).map_err(|_| Undecoded::Unexplained)?,
        Decoding::Explained => explained(field, hub.object)?,
    };
    Ok(Decoded {
        object,
        sent: hub.sent,
        spoke: hub.spoke,
    })
}

/// [`decode_value`](crate::decode::decode_value) of the request's `field`, its error as the
/// answer says it.
fn explained<T: DeserializeOwned>(field: &str, object: Value) -> Result<T, String> {
    crate::decode::decode_value(object).map_err(|err| format!("cannot decode {field}: {err}"))
}

/// `object` (the request's `field`), checked to be `kind` in a served version, as JSON on the hub.
fn to_hub(kind: Kind, field: &str, object: Value, keep_sent: bool) -> Result<Decoded<Value>, String> {
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
    if !spoke {
        return Ok(Decoded {
            object,
            sent: None,
            spoke,
        });
    }
    let sent = keep_sent.then(|| object.clone());
    let object = convert::to_hub(object)
        .map_err(|err| format!("cannot convert {field} to {}: {err}", kind.version()))?;
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

/// The JSONPatch, against `sent` (the object of `kind` as the client sent it, in a spoke
/// version), of what defaulting changed: `hub` (defaulting's patch against the hub object)
/// mapped onto `sent` where the conversion carries every changed value as it is
/// ([`spoke_patch::mapped`](super::spoke_patch::mapped)); else the hub object before
/// defaulting (decoded from `sent` again) and `after` rendered in the client's version and
/// compared ([`spoke_patch::rendered`](super::spoke_patch::rendered)). Either way the same
/// patch.
pub(super) fn spoke_patch<T: Serialize + DeserializeOwned>(
    kind: Kind,
    hub: &Patch,
    after: &T,
    sent: &Value,
) -> Result<Patch, String> {
    if let Some(patch) = super::spoke_patch::mapped(hub, sent) {
        return Ok(patch);
    }
    let before: T = explained("object", to_hub(kind, "object", sent.clone(), false)?.object)?;
    super::spoke_patch::rendered(&before, after, sent)
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
