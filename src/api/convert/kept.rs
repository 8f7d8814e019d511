//! What the hub annotation [`V1BETA1_FIELDS`] may hold, and putting it back into a spoke.
//!
//! The annotation exists for a closed set of v1beta1 fields, per kind: the fields v1beta2 has no
//! place for (Cluster `spec.topology.rolloutAfter` and the variables' `definitionFrom`,
//! MachineDeployment `revisionHistoryLimit` and `progressDeadlineSeconds`), and the written form
//! of each v1beta1 duration whose spelling v1beta2's whole seconds lose (`90s` is stored as
//! `90` and would read back as `1m30s`). Every entry is checked as the v1beta1 field itself is:
//! a `rolloutAfter` must be a date-time, a duration must parse as Go's `time.ParseDuration`
//! does, an `int32` must be one. An entry for any other path, or with a value its field would
//! refuse, is refused by admission ([`problems`]) and ignored, with a warning, when a stored
//! object already carries it ([`restore`]): the annotation never makes a v1beta1 view show a
//! field or value the stored object does not have.

use std::sync::OnceLock;

use serde_json::Value;

use super::duration;
use super::value::Obj;
use super::{Ctx, Kind, V1BETA1_FIELDS};

/// What the value of a kept field must be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Form {
    /// A `metav1.Time`: an RFC 3339 date-time.
    Time,
    /// A variable's `definitionFrom`: a string.
    Text,
    /// An `*int32`.
    Int32,
    /// A `metav1.Duration` as written: kept only to spell the stored value as it was written.
    Duration,
}

const TIMEOUTS: [&str; 3] = [
    "nodeDrainTimeout",
    "nodeVolumeDetachTimeout",
    "nodeDeletionTimeout",
];
const HEALTH_CHECK: [&str; 3] = [
    "machineHealthCheck/nodeStartupTimeout",
    "machineHealthCheck/unhealthyConditions/*/timeout",
    "machineHealthCheck/unhealthyMachineConditions/*/timeout",
];

/// A pointer pattern (`*` = a list index) and the form of the value found at it.
type Pattern = (String, Form);

/// The pointer patterns the annotation may hold for `kind`, with their form (built once per
/// kind: every conversion reads them).
fn fields(kind: Kind) -> &'static [Pattern] {
    static FIELDS: OnceLock<Vec<(Kind, Vec<Pattern>)>> = OnceLock::new();
    let all = FIELDS.get_or_init(|| Kind::ALL.into_iter().map(|kind| (kind, patterns(kind))).collect());
    all.iter()
        .find(|(of, _)| *of == kind)
        .map_or(&[], |(_, fields)| fields.as_slice())
}

/// [`fields`] of `kind`, made.
fn patterns(kind: Kind) -> Vec<Pattern> {
    let mut out = Vec::new();
    let mut machines = |prefix: &str, health_check: bool| {
        for timeout in TIMEOUTS {
            out.push((format!("{prefix}/{timeout}"), Form::Duration));
        }
        if health_check {
            for field in HEALTH_CHECK {
                out.push((format!("{prefix}/{field}"), Form::Duration));
            }
        }
    };
    match kind {
        Kind::Cluster => {
            machines("/spec/topology/controlPlane", true);
            machines("/spec/topology/workers/machineDeployments/*", true);
            machines("/spec/topology/workers/machinePools/*", false);
            out.push(("/spec/topology/rolloutAfter".into(), Form::Time));
            for list in [
                "variables",
                "controlPlane/variables/overrides",
                "workers/machineDeployments/*/variables/overrides",
                "workers/machinePools/*/variables/overrides",
            ] {
                out.push((format!("/spec/topology/{list}/*/definitionFrom"), Form::Text));
            }
        }
        Kind::ClusterClass => {
            machines("/spec/controlPlane", true);
            machines("/spec/workers/machineDeployments/*", true);
            machines("/spec/workers/machinePools/*", false);
        }
        Kind::MachineHealthCheck => {
            for field in HEALTH_CHECK {
                let field = field.trim_start_matches("machineHealthCheck/");
                out.push((format!("/spec/{field}"), Form::Duration));
            }
        }
        Kind::MachineDeployment => {
            machines("/spec/template/spec", false);
            out.push(("/spec/revisionHistoryLimit".into(), Form::Int32));
            out.push(("/spec/progressDeadlineSeconds".into(), Form::Int32));
        }
        Kind::MachineSet | Kind::MachinePool => machines("/spec/template/spec", false),
        Kind::ClusterResourceSet | Kind::ClusterResourceSetBinding | Kind::ExtensionConfig => {}
    }
    out
}

/// Whether `path` is an instance of `pattern` (`*` matches a list index).
fn matches(pattern: &str, path: &str) -> bool {
    let (mut pattern, mut path) = (pattern.split('/'), path.split('/'));
    loop {
        match (pattern.next(), path.next()) {
            (None, None) => return true,
            (Some("*"), Some(token)) if is_index(token) => {}
            (Some(want), Some(token)) if want == token => {}
            _ => return false,
        }
    }
}

/// A list index as a JSON pointer writes it: digits, no leading zero, at most 9 of them.
pub(super) fn is_index(token: &str) -> bool {
    !token.is_empty()
        && token.len() <= 9
        && token.bytes().all(|b| b.is_ascii_digit())
        && (token == "0" || !token.starts_with('0'))
}

fn form_of(kind: Kind, path: &str) -> Option<Form> {
    fields(kind)
        .iter()
        .find(|(pattern, _)| matches(pattern, path))
        .map(|(_, form)| *form)
}

/// `/spec/topology/rolloutAfter` as a field path: `spec.topology.rolloutAfter`.
fn dotted(path: &str) -> String {
    path.trim_start_matches('/').replace('/', ".")
}

/// Why `value` is not a valid value of the field at `path`, in the API server's words.
fn value_problem(form: Form, path: &str, value: &Value) -> Option<String> {
    let field = dotted(path);
    match (form, value) {
        (Form::Time, Value::String(text)) if is_date_time(text) => None,
        (Form::Time, Value::String(text)) => {
            Some(format!("{field} in body must be of type date-time: {text:?}"))
        }
        (Form::Text, Value::String(_)) => None,
        (Form::Int32, Value::Number(n)) if n.as_i64().and_then(|n| i32::try_from(n).ok()).is_some() => None,
        (Form::Int32, Value::Number(n)) => Some(format!("{field} in body must be of type int32: {n}")),
        (Form::Duration, Value::String(text)) if duration::to_seconds(text).is_some() => None,
        (Form::Duration, Value::String(text)) => Some(format!("time: invalid duration {text:?}")),
        (Form::Time | Form::Text | Form::Duration, other) => Some(format!(
            "{field} in body must be of type string: {:?}",
            type_name(other)
        )),
        (Form::Int32, other) => Some(format!(
            "{field} in body must be of type integer: {:?}",
            type_name(other)
        )),
    }
}

/// JSON's name of a value's type, as the API server's schema errors print it.
fn type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// An RFC 3339 date-time as `metav1.Time` reads it (`2026-01-01T00:00:00Z`, an offset, a
/// fraction of a second).
pub fn is_date_time(text: &str) -> bool {
    let bytes = text.as_bytes();
    let shape = bytes.len() >= 20
        && bytes[..19].iter().enumerate().all(|(i, b)| match i {
            4 | 7 => *b == b'-',
            10 => *b == b'T' || *b == b't',
            13 | 16 => *b == b':',
            _ => b.is_ascii_digit(),
        });
    shape && text.parse::<jiff::Timestamp>().is_ok()
}

/// The most problems [`problems`] lists: a hostile annotation of thousands of bad entries gets
/// a short answer.
const MAX_PROBLEMS: usize = 10;

/// A problem with one entry: the value to show and why.
pub type Problem = (Value, String);

/// Checks one entry of the annotation of a `kind` object: `Ok` with its path, form and value.
fn check_entry(kind: Kind, kind_name: &str, index: usize, entry: &Value) -> Result<(String, Form), Problem> {
    let at = |detail: String| format!("entry {index}: {detail}");
    let Some(fields) = entry.as_object() else {
        return Err((
            entry.clone(),
            at("must be an object with \"path\" and \"value\"".into()),
        ));
    };
    if let Some(key) = fields
        .keys()
        .find(|k| !matches!(k.as_str(), "path" | "value" | "guard"))
    {
        return Err((Value::String(key.clone()), at("unknown field".into())));
    }
    let (Some(Value::String(path)), Some(value)) = (fields.get("path"), fields.get("value")) else {
        return Err((
            entry.clone(),
            at("must have a string \"path\" and a \"value\"".into()),
        ));
    };
    let Some(form) = form_of(kind, path) else {
        let detail = format!("not a v1beta1 field of a {kind_name} that this annotation keeps");
        return Err((Value::String(path.clone()), at(detail)));
    };
    if let Some(problem) = value_problem(form, path, value) {
        return Err((value.clone(), at(problem)));
    }
    match fields.get("guard") {
        None => {}
        Some(Value::Object(guard)) => {
            for (pointer, name) in guard {
                let names_on_path = pointer
                    .strip_suffix("/name")
                    .is_some_and(|parent| path.starts_with(&format!("{parent}/")));
                if !names_on_path || !name.is_string() {
                    return Err((
                        Value::String(pointer.clone()),
                        at("guard: not a name on the path".into()),
                    ));
                }
            }
        }
        Some(other) => return Err((other.clone(), at("guard: must be an object".into()))),
    }
    Ok((path.clone(), form))
}

/// The problems with annotation text `text` on a hub object of `kind_name` (`Cluster`, ...):
/// empty when every entry is one the annotation exists for, with a value its field accepts.
pub fn problems(kind_name: &str, text: &str) -> Vec<Problem> {
    let Some(kind) = Kind::of("cluster.x-k8s.io", kind_name) else {
        return vec![(
            Value::String(kind_name.into()),
            "this kind keeps no v1beta1 fields".into(),
        )];
    };
    let entries = match serde_json::from_str::<Value>(text) {
        Ok(Value::Array(entries)) => entries,
        Ok(_) => {
            return vec![(
                Value::String(text.into()),
                "must be a JSON list of entries".into(),
            )]
        }
        Err(err) => return vec![(Value::String(text.into()), format!("not JSON: {err}"))],
    };
    let mut seen = std::collections::BTreeSet::new();
    let mut out = Vec::new();
    for (index, entry) in entries.iter().enumerate() {
        if out.len() == MAX_PROBLEMS {
            let left = entries.len() - index;
            out.push((
                Value::from(left),
                format!("entries {index} and after: not checked"),
            ));
            break;
        }
        match check_entry(kind, kind_name, index, entry) {
            Ok((path, _)) if !seen.insert(path.clone()) => {
                out.push((
                    Value::String(path),
                    format!("entry {index}: a second entry for this path"),
                ));
            }
            Ok(_) => {}
            Err(problem) => out.push(problem),
        }
    }
    out
}

/// The pointer patterns of `kind`'s durations (`*` = a list index), in the annotation's order.
pub(super) fn duration_patterns(kind: Kind) -> impl Iterator<Item = &'static str> {
    fields(kind)
        .iter()
        .filter(|(_, form)| *form == Form::Duration)
        .map(|(pattern, _)| pattern.as_str())
}

/// `object` (a hub) without the durations' written forms in its [`V1BETA1_FIELDS`] annotation,
/// the v1beta1 fields v1beta2 has no place for kept: for manifests rewritten to v1beta2 for good
/// (`convert`), which no v1beta1 reader will ask for them.
pub fn without_written_forms(object: &mut Value) {
    let group = super::split_api_version(object["apiVersion"].as_str().unwrap_or_default()).0;
    let Some(kind) = object["kind"].as_str().and_then(|k| Kind::of(group, k)) else {
        return;
    };
    let Some(meta) = object.get_mut("metadata").and_then(Value::as_object_mut) else {
        return;
    };
    let Some(annotations) = meta.get_mut("annotations").and_then(Value::as_object_mut) else {
        return;
    };
    let Some(Ok(Value::Array(entries))) = annotations
        .get(V1BETA1_FIELDS)
        .and_then(Value::as_str)
        .map(serde_json::from_str::<Value>)
    else {
        return;
    };
    let is_form =
        |entry: &Value| entry["path"].as_str().and_then(|p| form_of(kind, p)) == Some(Form::Duration);
    let kept: Vec<Value> = entries.into_iter().filter(|entry| !is_form(entry)).collect();
    if kept.is_empty() {
        annotations.remove(V1BETA1_FIELDS);
    } else {
        annotations.insert(
            V1BETA1_FIELDS.into(),
            Value::String(Value::Array(kept).to_string()),
        );
    }
    if annotations.is_empty() {
        meta.remove("annotations");
    }
}

/// Puts the entries of annotation text `text` back into `spoke` (a `kind` object just converted
/// from the hub): a kept field where its parent still exists, it is absent and its guard still
/// matches; a duration's written form where the field holds the same duration. Entries the
/// annotation does not exist for, or with a value their field refuses, are ignored with a
/// warning (a stored object written before admission checked them).
pub(super) fn restore(spoke: &mut Obj, kind: Kind, text: &str, ctx: &Ctx) {
    let Ok(Value::Array(entries)) = serde_json::from_str::<Value>(text) else {
        tracing::warn!(object = %ctx.object, annotation = V1BETA1_FIELDS, "ignoring an annotation that is not a JSON list");
        return;
    };
    let kind_name = ctx.object.split(' ').next().unwrap_or_default().to_owned();
    let mut root = Value::Object(std::mem::take(spoke));
    for (index, entry) in entries.iter().enumerate() {
        let (path, form) = match check_entry(kind, &kind_name, index, entry) {
            Ok(checked) => checked,
            Err((value, why)) => {
                tracing::warn!(object = %ctx.object, annotation = V1BETA1_FIELDS, %value, "ignoring {why}");
                continue;
            }
        };
        let value = &entry["value"];
        let guarded = entry.get("guard").and_then(Value::as_object).is_none_or(|guard| {
            guard
                .iter()
                .all(|(pointer, name)| root.pointer(pointer) == Some(name))
        });
        if !guarded {
            continue;
        }
        if form == Form::Duration {
            let same = |v: &Value| v.as_str().and_then(duration::to_seconds);
            if let Some(current) = root.pointer_mut(&path) {
                if same(current).is_some() && same(current) == same(value) {
                    *current = value.clone();
                }
            }
            continue;
        }
        let Some((parent, key)) = path.rsplit_once('/') else {
            continue;
        };
        if let Some(parent) = root.pointer_mut(parent).and_then(Value::as_object_mut) {
            let key = key.replace("~1", "/").replace("~0", "~");
            parent.entry(key).or_insert_with(|| value.clone());
        }
    }
    if let Value::Object(obj) = root {
        *spoke = obj;
    }
}

#[cfg(test)]
#[path = "kept_tests.rs"]
mod tests;
