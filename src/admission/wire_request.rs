//! The parts of an AdmissionReview the webhooks read when the one-pass typed decoding does not
//! apply (an object in an older version, or one that does not decode): each object parsed into
//! JSON in the same pass ([`Value`]), or, when that fails, kept as its raw text (`&RawValue`) so
//! the answer can say which object does not parse and why.

use kube::core::admission::Operation;
use kube::core::GroupVersionKind;
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::Value;

/// An AdmissionReview with its objects read as `O`.
#[derive(Debug, Deserialize)]
#[serde(bound(deserialize = "O: Deserialize<'de>"))]
pub(super) struct WireReview<O> {
    pub(super) request: Option<WireRequest<O>>,
}

/// The request of a [`WireReview`].
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", bound(deserialize = "O: Deserialize<'de>"))]
pub(super) struct WireRequest<O> {
    pub(super) uid: String,
    pub(super) kind: GroupVersionKind,
    #[serde(default)]
    pub(super) request_kind: Option<GroupVersionKind>,
    pub(super) operation: Operation,
    #[serde(default = "none")]
    pub(super) object: Option<O>,
    #[serde(default = "none")]
    pub(super) old_object: Option<O>,
}

fn none<O>() -> Option<O> {
    None
}

/// An object of a request as read: JSON already, or raw text still to parse.
pub(super) trait WireObject {
    /// The object as JSON; the error names the request's `field` it came from.
    fn parsed(self, field: &str) -> Result<Value, String>;
}

impl WireObject for Value {
    fn parsed(self, _field: &str) -> Result<Value, String> {
        Ok(self)
    }
}

impl WireObject for &RawValue {
    fn parsed(self, field: &str) -> Result<Value, String> {
        serde_json::from_str(self.get()).map_err(|err| format!("cannot decode {field}: {err}"))
    }
}
