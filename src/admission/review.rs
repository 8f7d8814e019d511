//! AdmissionReview in, AdmissionReview out: decode the request (converting objects sent in an
//! older version to the hub), run the kind's rules, and answer with a minimal JSONPatch against
//! what the client sent, a 422 `Status`, or a 400 for a request we cannot read.

use json_patch::Patch;
use kube::core::admission::{AdmissionResponse, AdmissionReview, Operation};
use kube::core::response::Status;
use kube::core::{DynamicObject, GroupVersionKind};
use serde::de::DeserializeOwned;
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::Value;

use super::admitted::Admitted;
use super::class_rollout::AdmittedRollout;
use super::edge::{Decoding, Undecoded};
use super::webhook::{Kind, Webhook};
use super::wire_request::{WireObject, WireRequest, WireReview};
use super::{edge, status, Outcome};
use crate::api::runtime::ExtensionConfig;
use crate::api::{Cluster, ClusterClass, ClusterResourceSet, ClusterResourceSetBinding};
use crate::decode::{count_values, within_containers, JsonBody, MAX_JSON_CONTAINERS, MAX_JSON_VALUES};
use crate::store::ObjectSource;

/// The largest AdmissionReview body we read: the API server caps a request at 3 MiB, and a
/// review carries the object twice (object and oldObject).
pub const MAX_BODY_BYTES: usize = 7 * 1024 * 1024;

/// An AdmissionReview with its objects decoded straight into the webhook's (hub) type: one pass
/// over the body. Anything else falls back to [`WireReview`].
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
    #[serde(default)]
    request_kind: Option<GroupVersionKind>,
    operation: Operation,
    #[serde(default)]
    object: Option<T>,
    #[serde(default)]
    old_object: Option<T>,
}

/// How the client sent the request, for the answer's versions.
#[derive(Debug, Default)]
struct Sent {
    /// The object as sent, when not in the hub version (the JSONPatch is made against it).
    object: Option<Value>,
    /// Whether denials name fields as v1beta1 does (the client wrote an older version).
    spoke_paths: bool,
}

/// Answers one AdmissionReview sent to `path`, whatever the bytes are: an unknown path, a body
/// that is not an AdmissionReview, or an object that does not decode get `allowed: false`, code
/// 400. Objects may come in the hub version or the older one each kind serves; both paths of a
/// webhook (v1beta2 and v1beta1) run the same rules.
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
    // Each value takes a byte at least: a shorter body need not be counted.
    if body.len() > MAX_JSON_VALUES && count_values(body, MAX_JSON_VALUES).is_none() {
        return bad_request(
            None,
            &format!(
                "request body has more than {MAX_JSON_VALUES} JSON values; no ClusterClass or Cluster needs that many"
            ),
        );
    }
    let body = JsonBody::new(body);
    let webhook = match path.parse::<Webhook>() {
        Ok(webhook) => webhook,
        Err(err) => return bad_request(uid_of(body).as_deref(), &err.to_string()),
    };
    // The API server sends a spoke path's objects in the spoke version, which the one-pass hub
    // decoding would read whole only to refuse: they go straight to the converting path.
    let typed = match webhook.kind {
        _ if webhook.spoke => None,
        Kind::Cluster => admit_typed::<Cluster>(webhook.mutating, body, source),
        Kind::ClusterClass => admit_typed::<ClusterClass>(webhook.mutating, body, source),
        Kind::ClusterResourceSet => admit_typed::<ClusterResourceSet>(webhook.mutating, body, source),
        Kind::ClusterResourceSetBinding => {
            admit_typed::<ClusterResourceSetBinding>(webhook.mutating, body, source)
        }
        Kind::ExtensionConfig => admit_typed::<ExtensionConfig>(webhook.mutating, body, source),
        Kind::ClusterClassRollout => admit_typed::<AdmittedRollout>(webhook.mutating, body, source),
    };
    if let Some(response) = typed {
        return response.into_review();
    }
    // The objects parsed in the same pass and moved into their types. A body whose objects do
    // not parse, or do not decode as they are, is read again with them raw, for the answer to
    // say which one and why.
    if let Ok(review) = body.parse::<WireReview<Value>>() {
        let Some(request) = review.request else {
            return bad_request(None, NO_REQUEST);
        };
        if let Ok(response) = admit(webhook, request, source, Decoding::Moved) {
            return response.into_review();
        }
    }
    match body.parse::<WireReview<&RawValue>>() {
        Ok(review) => match review.request {
            Some(request) => match admit(webhook, request, source, Decoding::Explained) {
                Ok(response) => response.into_review(),
                // Not given by an explained decoding; answered all the same.
                Err(Unexplained) => {
                    bad_request(uid_of(body).as_deref(), "cannot decode the request's objects")
                }
            },
            None => bad_request(None, NO_REQUEST),
        },
        Err(err) => bad_request(
            uid_of(body).as_deref(),
            &format!("cannot decode AdmissionReview: {err}"),
        ),
    }
}

/// The answer to a review without a request.
const NO_REQUEST: &str = "invalid AdmissionReview: it has no request";

/// A [`Decoding::Moved`] object did not decode as it is: the request is read again.
struct Unexplained;

/// The request uid of a body that is JSON but not a well-formed review, so the answer can echo it.
fn uid_of(body: JsonBody<'_>) -> Option<String> {
    let value: Value = body.parse().ok()?;
    value.pointer("/request/uid")?.as_str().map(str::to_owned)
}

/// Runs `webhook` on one request, its objects decoded as `decoding` says.
fn admit<O: WireObject>(
    webhook: Webhook,
    request: WireRequest<O>,
    source: &dyn ObjectSource,
    decoding: Decoding,
) -> Result<AdmissionResponse, Unexplained> {
    let response = allowed(&request.uid);
    if let Err(message) = check_kind(webhook.kind, &request.kind) {
        return Ok(deny_bad_request(response, &message));
    }
    let read = Read {
        mutating: webhook.mutating,
        decoding,
        source,
    };
    match webhook.kind {
        Kind::Cluster => admit_kind::<Cluster, _>(read, request, response),
        Kind::ClusterClass => admit_kind::<ClusterClass, _>(read, request, response),
        Kind::ClusterResourceSet => admit_kind::<ClusterResourceSet, _>(read, request, response),
        Kind::ClusterResourceSetBinding => {
            admit_kind::<ClusterResourceSetBinding, _>(read, request, response)
        }
        Kind::ExtensionConfig => admit_kind::<ExtensionConfig, _>(read, request, response),
        Kind::ClusterClassRollout => admit_kind::<AdmittedRollout, _>(read, request, response),
    }
}

/// How [`admit_kind`] reads and judges a request.
#[derive(Clone, Copy)]
struct Read<'a> {
    mutating: bool,
    decoding: Decoding,
    source: &'a dyn ObjectSource,
}

/// An allowed answer to the request `uid`, before any rule has run.
fn allowed(uid: &str) -> AdmissionResponse {
    let mut response = AdmissionResponse::invalid("");
    response.uid = uid.to_owned();
    response.allowed = true;
    response.result = Status::default();
    response
}

/// Whether the client wrote the request in the kind's older version (`requestKind`).
fn requested_spoke(kind: Kind, request_kind: Option<&GroupVersionKind>) -> bool {
    request_kind
        .is_some_and(|gvk| gvk.group == kind.group() && kind.spoke_version() == Some(gvk.version.as_str()))
}

/// Runs the webhook on a body whose objects are hub objects that decode straight into `T` and
/// whose kind is the webhook's; `None` otherwise, for [`admit`] to convert or explain.
fn admit_typed<T: Admitted>(
    mutating: bool,
    body: JsonBody<'_>,
    source: &dyn ObjectSource,
) -> Option<AdmissionResponse> {
    let request = body.parse::<TypedReview<T>>().ok()?.request?;
    check_kind(T::KIND, &request.kind).ok()?;
    for object in [request.object.as_ref(), request.old_object.as_ref()]
        .into_iter()
        .flatten()
    {
        check_type_meta::<T>("object", object).ok()?;
    }
    let response = allowed(&request.uid);
    let sent = Sent {
        object: None,
        spoke_paths: requested_spoke(T::KIND, request.request_kind.as_ref()),
    };
    Some(admit_decoded(
        mutating,
        &request.operation,
        request.object,
        request.old_object,
        source,
        response,
        &sent,
    ))
}

/// Runs the webhook on a request whose objects are read as `O`: each converted to the hub and
/// decoded into `T` as `read.decoding` says.
fn admit_kind<T: Admitted, O: WireObject>(
    read: Read<'_>,
    request: WireRequest<O>,
    response: AdmissionResponse,
) -> Result<AdmissionResponse, Unexplained> {
    let decode = |object: Option<O>, field: &str| -> Result<Option<edge::Decoded<T>>, Undecoded> {
        let Some(object) = object else {
            return Ok(None);
        };
        let value = object.parsed(field)?;
        // Only a mutating webhook's answer is computed against the object as it was sent.
        let keep_sent = read.mutating && field == "object";
        edge::decode(T::KIND, field, value, keep_sent, read.decoding).map(Some)
    };
    let decoded =
        decode(request.object, "object").and_then(|o| Ok((o, decode(request.old_object, "oldObject")?)));
    let (object, old) = match decoded {
        Ok(decoded) => decoded,
        Err(Undecoded::Refused(message)) => return Ok(deny_bad_request(response, &message)),
        Err(Undecoded::Unexplained) => return Err(Unexplained),
    };
    let spoke_paths = requested_spoke(T::KIND, request.request_kind.as_ref())
        || object.as_ref().is_some_and(|o| o.spoke)
        || old.as_ref().is_some_and(|o| o.spoke);
    let (object, sent_object) = match object {
        Some(decoded) => (Some(decoded.object), decoded.sent),
        None => (None, None),
    };
    let sent = Sent {
        object: sent_object,
        spoke_paths,
    };
    Ok(admit_decoded(
        read.mutating,
        &request.operation,
        object,
        old.map(|o| o.object),
        read.source,
        response,
        &sent,
    ))
}

/// Runs the kind's rules for `operation` on hub objects.
fn admit_decoded<T: Admitted>(
    mutating: bool,
    operation: &Operation,
    object: Option<T>,
    old: Option<T>,
    source: &dyn ObjectSource,
    response: AdmissionResponse,
    sent: &Sent,
) -> AdmissionResponse {
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
                mutate(response, object, old.as_ref(), source, sent)
            } else {
                let outcome = object.validate(old.as_ref(), source);
                answer(response, T::KIND, object.name(), outcome, None, sent.spoke_paths)
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

/// Defaults `object` and answers with the JSONPatch of what the defaulting changed, against
/// the object as the client sent it.
fn mutate<T: Admitted>(
    response: AdmissionResponse,
    mut object: T,
    old: Option<&T>,
    source: &dyn ObjectSource,
    sent: &Sent,
) -> AdmissionResponse {
    let (outcome, patch) = match object.default(old, source) {
        Ok(defaulted) => defaulted,
        Err(message) => return deny_bad_request(response, &message),
    };
    let patch = match &sent.object {
        Some(sent_object) if outcome.errors.is_empty() && !patch.0.is_empty() => {
            match edge::spoke_patch(T::KIND, &patch, &object, sent_object) {
                Ok(patch) => patch,
                Err(message) => return deny_bad_request(response, &message),
            }
        }
        _ => patch,
    };
    answer(
        response,
        T::KIND,
        object.name(),
        outcome,
        Some(patch),
        sent.spoke_paths,
    )
}

fn answer(
    mut response: AdmissionResponse,
    kind: Kind,
    name: &str,
    outcome: Outcome,
    patch: Option<Patch>,
    spoke_paths: bool,
) -> AdmissionResponse {
    if !outcome.warnings.is_empty() {
        response.warnings = Some(outcome.warnings);
    }
    if !outcome.errors.is_empty() {
        let errors = if spoke_paths {
            edge::to_v1beta1_paths(outcome.errors)
        } else {
            outcome.errors
        };
        response.allowed = false;
        response.result = status::invalid(kind, name, &errors);
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

/// A hub object decoded by the one-pass path must be what the webhook admits, in the hub version.
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
        edge::shown(api_version),
        edge::shown(kind),
    ))
}

/// The request's `kind` must be the webhook's, in a served version (the hub or the older one).
fn check_kind(expected: Kind, gvk: &GroupVersionKind) -> Result<(), String> {
    if gvk.group == expected.group() && expected.serves(&gvk.version) && gvk.kind == expected.name() {
        return Ok(());
    }
    let got = if gvk.group.is_empty() {
        format!("{}/{}", gvk.version, gvk.kind)
    } else {
        format!("{}/{} {}", gvk.group, gvk.version, gvk.kind)
    };
    let got = crate::field::truncate(got, 256);
    Err(format!(
        "this webhook admits {} {}, not {got}",
        expected.served_versions(),
        expected.name(),
    ))
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
