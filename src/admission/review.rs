//! AdmissionReview in, AdmissionReview out: decode the request, run the kind's rules, and answer
//! with a minimal JSONPatch, a 422 `Status`, or a 400 for a request we cannot read.

use json_patch::Patch;
use kube::core::admission::{AdmissionResponse, AdmissionReview, Operation};
use kube::core::response::Status;
use kube::core::{DynamicObject, GroupVersionKind};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::Value;

use super::webhook::{Kind, Webhook};
use super::{
    cluster, cluster_class, cluster_resource_set, cluster_resource_set_binding, extension_config, status,
    Outcome,
};
use crate::api::runtime::ExtensionConfig;
use crate::api::{Cluster, ClusterClass, ClusterResourceSet, ClusterResourceSetBinding};
use crate::decode::{within_containers, MAX_JSON_CONTAINERS};
use crate::store::ObjectSource;

/// The largest AdmissionReview body we read: the API server caps a request at 3 MiB, and a
/// review carries the object twice (object and oldObject).
pub const MAX_BODY_BYTES: usize = 7 * 1024 * 1024;

/// The rules of one admitted kind, as the webhooks run them.
trait Admitted: Serialize + DeserializeOwned + Clone {
    const KIND: Kind;
    fn name(&self) -> &str;
    fn type_meta(&self) -> (&str, &str);
    /// Defaults the object and gives the JSONPatch of what changed.
    fn default(&mut self, old: Option<&Self>, source: &dyn ObjectSource) -> Result<(Outcome, Patch), String>;
    fn validate(&self, old: Option<&Self>, source: &dyn ObjectSource) -> Outcome;
    fn validate_delete(old: &Self, source: &dyn ObjectSource) -> Outcome;
}

impl Admitted for Cluster {
    const KIND: Kind = Kind::Cluster;
    fn name(&self) -> &str {
        self.metadata.name.as_deref().unwrap_or_default()
    }
    fn type_meta(&self) -> (&str, &str) {
        (&self.api_version, &self.kind)
    }
    fn default(&mut self, old: Option<&Self>, source: &dyn ObjectSource) -> Result<(Outcome, Patch), String> {
        Ok(cluster::default(self, old, source))
    }
    fn validate(&self, old: Option<&Self>, source: &dyn ObjectSource) -> Outcome {
        cluster::validate(self, old, source)
    }
    fn validate_delete(_old: &Self, _source: &dyn ObjectSource) -> Outcome {
        Outcome::default()
    }
}

impl Admitted for ClusterClass {
    const KIND: Kind = Kind::ClusterClass;
    fn name(&self) -> &str {
        self.metadata.name.as_deref().unwrap_or_default()
    }
    fn type_meta(&self) -> (&str, &str) {
        (&self.api_version, &self.kind)
    }
    fn default(
        &mut self,
        _old: Option<&Self>,
        _source: &dyn ObjectSource,
    ) -> Result<(Outcome, Patch), String> {
        diffed(self, cluster_class::default)
    }
    fn validate(&self, old: Option<&Self>, source: &dyn ObjectSource) -> Outcome {
        cluster_class::validate(self, old, source)
    }
    fn validate_delete(old: &Self, source: &dyn ObjectSource) -> Outcome {
        cluster_class::validate_delete(old, source)
    }
}

impl Admitted for ClusterResourceSet {
    const KIND: Kind = Kind::ClusterResourceSet;
    fn name(&self) -> &str {
        ClusterResourceSet::name(self)
    }
    fn type_meta(&self) -> (&str, &str) {
        (&self.api_version, &self.kind)
    }
    fn default(
        &mut self,
        _old: Option<&Self>,
        _source: &dyn ObjectSource,
    ) -> Result<(Outcome, Patch), String> {
        diffed(self, cluster_resource_set::default)
    }
    fn validate(&self, old: Option<&Self>, _source: &dyn ObjectSource) -> Outcome {
        cluster_resource_set::validate(self, old)
    }
    fn validate_delete(_old: &Self, _source: &dyn ObjectSource) -> Outcome {
        Outcome::default()
    }
}

impl Admitted for ClusterResourceSetBinding {
    const KIND: Kind = Kind::ClusterResourceSetBinding;
    fn name(&self) -> &str {
        self.metadata.name.as_deref().unwrap_or_default()
    }
    fn type_meta(&self) -> (&str, &str) {
        (&self.api_version, &self.kind)
    }
    /// A binding has no mutating webhook: nothing is defaulted.
    fn default(
        &mut self,
        _old: Option<&Self>,
        _source: &dyn ObjectSource,
    ) -> Result<(Outcome, Patch), String> {
        Ok((Outcome::default(), Patch(Vec::new())))
    }
    fn validate(&self, old: Option<&Self>, _source: &dyn ObjectSource) -> Outcome {
        cluster_resource_set_binding::validate(self, old)
    }
    fn validate_delete(_old: &Self, _source: &dyn ObjectSource) -> Outcome {
        Outcome::default()
    }
}

impl Admitted for ExtensionConfig {
    const KIND: Kind = Kind::ExtensionConfig;
    fn name(&self) -> &str {
        ExtensionConfig::name(self)
    }
    fn type_meta(&self) -> (&str, &str) {
        (&self.api_version, &self.kind)
    }
    fn default(
        &mut self,
        _old: Option<&Self>,
        _source: &dyn ObjectSource,
    ) -> Result<(Outcome, Patch), String> {
        diffed(self, extension_config::default)
    }
    fn validate(&self, _old: Option<&Self>, _source: &dyn ObjectSource) -> Outcome {
        extension_config::validate(self)
    }
    fn validate_delete(_old: &Self, _source: &dyn ObjectSource) -> Outcome {
        Outcome::default()
    }
}

/// The parts of an AdmissionReview the webhooks read, objects kept raw: read when the one-pass
/// [`TypedReview`] fails, so that the answer can say which part is wrong.
#[derive(Debug, Deserialize)]
struct WireReview<'a> {
    #[serde(borrow)]
    request: Option<WireRequest<'a>>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct WireRequest<'a> {
    uid: String,
    kind: GroupVersionKind,
    operation: Operation,
    #[serde(borrow, default)]
    object: Option<&'a RawValue>,
    #[serde(borrow, default)]
    old_object: Option<&'a RawValue>,
}

/// An AdmissionReview with its objects decoded straight into the webhook's type: one pass over
/// the body. Any failure falls back to [`WireReview`], which names what is wrong.
#[derive(Debug, Deserialize)]
#[serde(bound = "T: DeserializeOwned")]
struct TypedReview<T> {
    request: Option<TypedRequest<T>>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", bound = "T: DeserializeOwned")]
struct TypedRequest<T> {
    uid: String,
    kind: GroupVersionKind,
    operation: Operation,
    #[serde(default)]
    object: Option<T>,
    #[serde(default)]
    old_object: Option<T>,
}

/// Answers one AdmissionReview sent to `path`, whatever the bytes are: an unknown path, a body
/// that is not an AdmissionReview, or an object that does not decode get `allowed: false`, code 400.
pub fn review(path: &str, body: &[u8], source: &dyn ObjectSource) -> AdmissionReview<DynamicObject> {
    if body.len() > MAX_BODY_BYTES {
        return bad_request(
            None,
            &format!("request body of {} bytes exceeds {MAX_BODY_BYTES}", body.len()),
        );
    }
    if !within_containers(body, MAX_JSON_CONTAINERS) {
        return bad_request(
            None,
            &format!(
                "request body has more than {MAX_JSON_CONTAINERS} JSON objects and arrays; no ClusterClass or Cluster needs that many"
            ),
        );
    }
    let webhook = match path.parse::<Webhook>() {
        Ok(webhook) => webhook,
        Err(err) => return bad_request(uid_of(body).as_deref(), &err.to_string()),
    };
    let typed = match webhook.kind {
        Kind::Cluster => admit_typed::<Cluster>(webhook.mutating, body, source),
        Kind::ClusterClass => admit_typed::<ClusterClass>(webhook.mutating, body, source),
        Kind::ClusterResourceSet => admit_typed::<ClusterResourceSet>(webhook.mutating, body, source),
        Kind::ClusterResourceSetBinding => {
            admit_typed::<ClusterResourceSetBinding>(webhook.mutating, body, source)
        }
        Kind::ExtensionConfig => admit_typed::<ExtensionConfig>(webhook.mutating, body, source),
    };
    if let Some(response) = typed {
        return response.into_review();
    }
    let review: WireReview = match serde_json::from_slice(body) {
        Ok(review) => review,
        Err(err) => {
            return bad_request(
                uid_of(body).as_deref(),
                &format!("cannot decode AdmissionReview: {err}"),
            )
        }
    };
    let Some(request) = review.request else {
        return bad_request(None, "invalid AdmissionReview: it has no request");
    };
    admit(webhook, &request, source).into_review()
}

/// The request uid of a body that is JSON but not a well-formed review, so the answer can echo it.
fn uid_of(body: &[u8]) -> Option<String> {
    let value: Value = serde_json::from_slice(body).ok()?;
    value.pointer("/request/uid")?.as_str().map(str::to_owned)
}

/// Runs `webhook` on one request.
fn admit(webhook: Webhook, request: &WireRequest, source: &dyn ObjectSource) -> AdmissionResponse {
    let response = allowed(&request.uid);
    if let Err(message) = check_kind(webhook.kind, &request.kind) {
        return deny_bad_request(response, &message);
    }
    match webhook.kind {
        Kind::Cluster => admit_kind::<Cluster>(webhook.mutating, request, source, response),
        Kind::ClusterClass => admit_kind::<ClusterClass>(webhook.mutating, request, source, response),
        Kind::ClusterResourceSet => {
            admit_kind::<ClusterResourceSet>(webhook.mutating, request, source, response)
        }
        Kind::ClusterResourceSetBinding => {
            admit_kind::<ClusterResourceSetBinding>(webhook.mutating, request, source, response)
        }
        Kind::ExtensionConfig => admit_kind::<ExtensionConfig>(webhook.mutating, request, source, response),
    }
}

/// An allowed answer to the request `uid`, before any rule has run.
fn allowed(uid: &str) -> AdmissionResponse {
    let mut response = AdmissionResponse::invalid("");
    response.uid = uid.to_owned();
    response.allowed = true;
    response.result = Status::default();
    response
}

/// Runs the webhook on a body whose objects decode straight into `T` and whose kind is the
/// webhook's; `None` when they do not, for [`admit`] to answer with the reason.
fn admit_typed<T: Admitted>(
    mutating: bool,
    body: &[u8],
    source: &dyn ObjectSource,
) -> Option<AdmissionResponse> {
    let request = serde_json::from_slice::<TypedReview<T>>(body).ok()?.request?;
    check_kind(T::KIND, &request.kind).ok()?;
    let response = allowed(&request.uid);
    Some(admit_decoded(
        mutating,
        &request.operation,
        request.object,
        request.old_object,
        source,
        response,
    ))
}

fn admit_kind<T: Admitted>(
    mutating: bool,
    request: &WireRequest,
    source: &dyn ObjectSource,
    response: AdmissionResponse,
) -> AdmissionResponse {
    let decoded = decode::<T>(request.object, "object")
        .and_then(|object| Ok((object, decode::<T>(request.old_object, "oldObject")?)));
    match decoded {
        Ok((object, old)) => admit_decoded(mutating, &request.operation, object, old, source, response),
        Err(message) => deny_bad_request(response, &message),
    }
}

/// Checks the decoded objects' type metadata, then runs the kind's rules for `operation`.
fn admit_decoded<T: Admitted>(
    mutating: bool,
    operation: &Operation,
    object: Option<T>,
    old: Option<T>,
    source: &dyn ObjectSource,
    response: AdmissionResponse,
) -> AdmissionResponse {
    for (field, decoded) in [("object", object.as_ref()), ("oldObject", old.as_ref())] {
        if let Some(Err(message)) = decoded.map(|o| check_type_meta::<T>(field, o)) {
            return deny_bad_request(response, &message);
        }
    }
    match (operation, object, old) {
        (Operation::Delete, _, Some(old)) if !mutating => {
            let outcome = T::validate_delete(&old, source);
            forbid(response, T::KIND, old.name(), outcome)
        }
        (Operation::Create | Operation::Update, Some(object), old) => {
            let old = if *operation == Operation::Update {
                old
            } else {
                None
            };
            if mutating {
                mutate(response, object, old.as_ref(), source)
            } else {
                let outcome = object.validate(old.as_ref(), source);
                answer(response, T::KIND, object.name(), outcome, None)
            }
        }
        (Operation::Update, None, _) | (Operation::Create, None, _) => {
            deny_bad_request(response, "request has no object")
        }
        (Operation::Delete, _, None) if !mutating => {
            deny_bad_request(response, "DELETE request has no oldObject")
        }
        _ => response,
    }
}

/// Defaults `object` and answers with the JSONPatch of what the defaulting changed.
fn mutate<T: Admitted>(
    response: AdmissionResponse,
    mut object: T,
    old: Option<&T>,
    source: &dyn ObjectSource,
) -> AdmissionResponse {
    match object.default(old, source) {
        Ok((outcome, patch)) => answer(response, T::KIND, object.name(), outcome, Some(patch)),
        Err(message) => deny_bad_request(response, &message),
    }
}

/// Runs `default` on `object` and gives the JSONPatch from its typed serialisation before to
/// after, so fields our types do not know never appear in the patch.
fn diffed<T: Admitted>(object: &mut T, default: impl FnOnce(&mut T)) -> Result<(Outcome, Patch), String> {
    let encode = |object: &T| {
        serde_json::to_value(object).map_err(|err| format!("cannot encode {}: {err}", T::KIND.name()))
    };
    let before = encode(object)?;
    default(object);
    Ok((Outcome::default(), super::diff::diff(&before, &encode(object)?)))
}

fn answer(
    mut response: AdmissionResponse,
    kind: Kind,
    name: &str,
    outcome: Outcome,
    patch: Option<Patch>,
) -> AdmissionResponse {
    if !outcome.warnings.is_empty() {
        response.warnings = Some(outcome.warnings);
    }
    if !outcome.errors.is_empty() {
        response.allowed = false;
        response.result = status::invalid(kind, name, &outcome.errors);
        return response;
    }
    match patch {
        Some(patch) if !patch.0.is_empty() => match response.clone().with_patch(patch) {
            Ok(patched) => patched,
            Err(err) => deny_bad_request(response, &format!("cannot encode patch: {err}")),
        },
        _ => response,
    }
}

/// A refused delete is Forbidden (403), not Invalid: the object is fine, the operation is not.
fn forbid(mut response: AdmissionResponse, kind: Kind, name: &str, outcome: Outcome) -> AdmissionResponse {
    if !outcome.warnings.is_empty() {
        response.warnings = Some(outcome.warnings);
    }
    if !outcome.errors.is_empty() {
        let reasons: Vec<&str> = outcome.errors.iter().map(|e| e.detail.as_str()).collect();
        response.allowed = false;
        response.result = status::forbidden(kind, name, &reasons.join("; "));
    }
    response
}

/// The decoded object must be what the webhook admits, whatever `request.kind` claims.
fn check_type_meta<T: Admitted>(field: &str, object: &T) -> Result<(), String> {
    let (api_version, kind) = object.type_meta();
    let expected = T::KIND.name();
    let group = T::KIND.group();
    let version = T::KIND.version();
    if api_version.strip_prefix(group).and_then(|v| v.strip_prefix('/')) == Some(version) && kind == expected
    {
        return Ok(());
    }
    Err(format!(
        "{field} is {} {}, but this webhook admits {group}/{version} {expected}",
        shown(api_version),
        shown(kind),
    ))
}

/// An attacker-supplied string as an error repeats it: quoted, and cut when long.
fn shown(text: &str) -> String {
    crate::field::truncate(format!("{text:?}"), 128)
}

fn check_kind(expected: Kind, gvk: &GroupVersionKind) -> Result<(), String> {
    if gvk.group == expected.group() && gvk.version == expected.version() && gvk.kind == expected.name() {
        return Ok(());
    }
    let got = if gvk.group.is_empty() {
        format!("{}/{}", gvk.version, gvk.kind)
    } else {
        format!("{}/{} {}", gvk.group, gvk.version, gvk.kind)
    };
    let got = crate::field::truncate(got, 256);
    Err(format!(
        "this webhook admits {}/{} {}, not {got}",
        expected.group(),
        expected.version(),
        expected.name()
    ))
}

/// Decodes a raw object; the fast path has no path tracking, and only a failure is decoded again
/// to name the field at fault.
fn decode<T: DeserializeOwned>(object: Option<&RawValue>, field: &str) -> Result<Option<T>, String> {
    let Some(raw) = object.filter(|raw| raw.get() != "null") else {
        return Ok(None);
    };
    match serde_json::from_str(raw.get()) {
        Ok(typed) => Ok(Some(typed)),
        Err(_) => {
            if let Some(typed) = lenient_decode::<T>(raw) {
                return Ok(Some(typed));
            }
            let mut deserializer = serde_json::Deserializer::from_str(raw.get());
            let error = match serde_path_to_error::deserialize::<_, T>(&mut deserializer) {
                Ok(_) => return Err(format!("cannot decode {field}")),
                Err(error) => error,
            };
            let path = error.path().to_string();
            Err(if path == "." {
                format!("cannot decode {field}: {}", error.inner())
            } else {
                format!("cannot decode {field}: {path}: {}", error.inner())
            })
        }
    }
}

/// The object decoded with explicit `null`s in typed fields taken as absent, as the API server
/// decodes them; `None` when it still does not fit.
fn lenient_decode<T: DeserializeOwned>(raw: &RawValue) -> Option<T> {
    let mut value: Value = serde_json::from_str(raw.get()).ok()?;
    crate::decode::drop_nulls(&mut value).then_some(())?;
    serde_json::from_value(value).ok()
}

fn deny_bad_request(mut response: AdmissionResponse, message: &str) -> AdmissionResponse {
    response.allowed = false;
    response.result = status::bad_request(message);
    response.patch = None;
    response
}

fn bad_request(uid: Option<&str>, message: &str) -> AdmissionReview<DynamicObject> {
    let mut response = AdmissionResponse::invalid(message);
    response.result = status::bad_request(message);
    if let Some(uid) = uid {
        response.uid = uid.to_owned();
    }
    response.into_review()
}
