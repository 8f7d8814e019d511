//! Current state in the offline API server: objects as a management cluster stores them (kubectl
//! `get -o yaml` output, with status, uid, resourceVersion), loaded without admission, and files
//! applied over them as `kubectl apply` would: a three-way merge of the file, the live object and
//! the configuration last applied (its annotation), then an UPDATE through the webhooks with the
//! live object as `oldObject`.

use serde_json::{Map, Value};

use super::apply::{apply, created, Applied, ApplyError, Verdict};
use super::edge::check_served;
use crate::api::convert::to_hub;
use crate::store::{MemoryStore, ObjectKey, ObjectSource, StoreError};

/// The annotation `kubectl apply` keeps the applied configuration in.
pub const LAST_APPLIED: &str = "kubectl.kubernetes.io/last-applied-configuration";

/// Deeper nesting than this is replaced whole by a merge rather than merged field by field.
const MAX_MERGE_DEPTH: usize = 64;

/// Stores `object` (read from `source`) as the API server holds it: converted to the stored
/// version, status and server fields kept, no webhook run.
pub fn load_stored(store: &mut MemoryStore, object: Value, source: &str) -> Result<(), ApplyError> {
    check_served(&object, source)?;
    store.insert(object).map_err(|err| match err {
        StoreError::NoName { kind } => ApplyError::Store(StoreError::NoName {
            kind: format!("{kind} in {source}"),
        }),
        other => ApplyError::Store(other),
    })
}

/// Applies `object` (from `source`) as `kubectl apply` would: when `store` holds an object of the
/// same kind and name, the file is merged over it (see [`merged_over`]) and the result goes
/// through the webhooks as an update; otherwise it is created.
pub fn apply_over(
    store: &mut MemoryStore,
    object: Value,
    source: &str,
    now: &str,
) -> Result<Applied, ApplyError> {
    check_served(&object, source)?;
    let key = ObjectKey::of(&object);
    let live = store.get(&key.group, &key.kind, &key.namespace, &key.name);
    let object = match live {
        Some(live) => match unreadable_last_applied(&live, &key.group) {
            Some(reason) => return Ok(refused_patch(&object, source, reason)),
            None => merged_over(&live, object),
        },
        None => with_last_applied(object),
    };
    apply(store, object, source, now)
}

/// Why kubectl cannot build its patch from `live`'s last applied configuration (of a kind of
/// `group`), `None` when it can (absent, or a JSON object). A kind kubectl knows (the core and
/// `*.k8s.io` groups) gets a strategic merge patch, which says `invalid JSON document`; any other
/// a JSON merge patch, which says `Invalid JSON Document`, or `Mismatched JSON Documents` for an
/// array.
fn unreadable_last_applied(live: &Value, group: &str) -> Option<&'static str> {
    let text = live
        .pointer("/metadata/annotations")
        .and_then(|a| a.get(LAST_APPLIED))?
        .as_str()?;
    let built_in = !group.contains('.') || group.ends_with(".k8s.io");
    let parsed = serde_json::from_str::<Value>(text);
    let fits = match &parsed {
        Ok(Value::Object(_) | Value::Null) => true,
        // An empty annotation is taken as `{}` by the JSON merge patch, not by the strategic one.
        Err(_) => text.is_empty() && !built_in,
        Ok(_) => false,
    };
    match (fits, built_in, parsed) {
        (true, _, _) => None,
        (false, true, _) => Some("invalid JSON document"),
        (false, false, Ok(Value::Array(_))) => Some("Mismatched JSON Documents"),
        (false, false, _) => Some("Invalid JSON Document"),
    }
}

/// kubectl's failure to patch `object` (from `source`) over a live object whose last applied
/// configuration it cannot read.
fn refused_patch(object: &Value, source: &str, reason: &str) -> Applied {
    let mut applied = created(object);
    applied.verdict = Verdict::Denied;
    applied.message = format!(
        "error when applying patch to {}: error when creating patch with the original configuration \
         (the live object's {LAST_APPLIED} annotation) for: {source:?}: {reason}",
        applied.resource
    );
    applied
}

/// `file` merged over `live` (both converted to the stored version when they are of our kinds)
/// as kubectl's client-side apply merges a custom resource: fields the file sets replace the
/// live ones (lists whole), fields the last applied configuration set and the file no longer
/// does are removed, every other live field (status, server fields, the refs the topology
/// controller wrote) is kept. The result carries the file as its last applied configuration.
pub fn merged_over(live: &Value, file: Value) -> Value {
    let original = live
        .pointer("/metadata/annotations")
        .and_then(|a| a.get(LAST_APPLIED))
        .and_then(Value::as_str)
        .and_then(|text| serde_json::from_str::<Value>(text).ok())
        .map(hub_or_given);
    let file = with_last_applied(file);
    let modified = hub_or_given(file);
    let mut merged = live.clone();
    three_way(&mut merged, original.as_ref(), &modified, 0);
    merged
}

/// `object` in the stored version when it is of our kinds and converts, else as given.
fn hub_or_given(object: Value) -> Value {
    to_hub(object.clone()).unwrap_or(object)
}

/// `object` with its own text (without that annotation) in the last-applied annotation.
fn with_last_applied(mut object: Value) -> Value {
    let mut configuration = object.clone();
    if let Some(annotations) = configuration
        .pointer_mut("/metadata/annotations")
        .and_then(Value::as_object_mut)
    {
        annotations.remove(LAST_APPLIED);
        if annotations.is_empty() {
            if let Some(metadata) = configuration["metadata"].as_object_mut() {
                metadata.remove("annotations");
            }
        }
    }
    let Ok(text) = serde_json::to_string(&configuration) else {
        return object;
    };
    if let Some(metadata) = object.get_mut("metadata").and_then(Value::as_object_mut) {
        let annotations = metadata
            .entry("annotations")
            .or_insert_with(|| Value::Object(Map::new()));
        if !annotations.is_object() {
            *annotations = Value::Object(Map::new());
        }
        if let Some(annotations) = annotations.as_object_mut() {
            annotations.insert(LAST_APPLIED.to_owned(), Value::String(text));
        }
    }
    object
}

/// Merges `modified` into `target` (the live object): set fields replace, `null` removes, maps
/// merge key by key; keys of `original` that `modified` no longer has are removed.
fn three_way(target: &mut Value, original: Option<&Value>, modified: &Value, depth: usize) {
    let (Some(live), Value::Object(wanted)) = (target.as_object_mut(), modified) else {
        *target = modified.clone();
        return;
    };
    if depth >= MAX_MERGE_DEPTH {
        *target = modified.clone();
        return;
    }
    if let Some(Value::Object(before)) = original {
        for key in before.keys().filter(|key| !wanted.contains_key(*key)) {
            live.remove(key);
        }
    }
    for (key, value) in wanted {
        if value.is_null() {
            live.remove(key);
            continue;
        }
        let before = original.and_then(|o| o.get(key));
        match live.get_mut(key) {
            Some(existing) if existing.is_object() && value.is_object() => {
                three_way(existing, before, value, depth + 1);
            }
            _ => {
                live.insert(key.clone(), value.clone());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_file_merged_over_a_live_object_keeps_what_others_wrote() {
        let live = json!({
            "apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "c", "namespace": "ns", "uid": "u1", "resourceVersion": "7",
                "annotations": {LAST_APPLIED: r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","namespace":"ns"},"data":{"a":"1","gone":"x"}}"#}},
            "data": {"a": "1", "gone": "x", "written-by-others": "y"},
        });
        let file = json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "c", "namespace": "ns"}, "data": {"a": "2"}});
        let merged = merged_over(&live, file);
        assert_eq!(merged["data"], json!({"a": "2", "written-by-others": "y"}));
        assert_eq!(merged["metadata"]["uid"], "u1");
        let applied: Value = serde_json::from_str(
            merged["metadata"]["annotations"][LAST_APPLIED]
                .as_str()
                .unwrap_or_default(),
        )
        .unwrap_or_default();
        assert_eq!(applied["data"], json!({"a": "2"}));
    }

    #[test]
    fn without_a_last_applied_configuration_nothing_is_removed() {
        let live = json!({"kind": "X", "metadata": {"name": "x"}, "spec": {"ref": {"name": "dev-x7k2p"}, "l": [1, 2]}});
        let file = json!({"kind": "X", "metadata": {"name": "x"}, "spec": {"l": [3], "n": null}});
        let merged = merged_over(&live, file);
        assert_eq!(merged["spec"], json!({"ref": {"name": "dev-x7k2p"}, "l": [3]}));
    }

    #[test]
    fn a_live_cluster_with_refs_takes_a_file_without_them_as_an_update() {
        let mut store = MemoryStore::default();
        let live = json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "c", "namespace": "ns", "uid": "u1"}, "data": {"a": "1"}});
        load_stored(&mut store, live, "current.yaml").unwrap_or_else(|err| panic!("{err}"));
        let file = json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "c", "namespace": "ns"}, "data": {"a": "1"}});
        let applied = apply_over(&mut store, file, "f.yaml", "1970-01-01T00:00:00Z")
            .unwrap_or_else(|err| panic!("{err}"));
        assert_eq!(
            applied.verdict.to_string(),
            "configured",
            "the last-applied annotation is new"
        );
        let stored = store.get("", "ConfigMap", "ns", "c").unwrap_or_default();
        assert_eq!(stored["metadata"]["uid"], "u1");
    }

    #[test]
    fn an_unreadable_last_applied_configuration_fails_as_kubectl_fails() {
        let cases = [
            (
                r#"{"apiVersion":"cluster.x-k8s.io/v1beta2","kind":"Clus"#,
                "cluster.x-k8s.io",
                Some("Invalid JSON Document"),
            ),
            ("not json", "", Some("invalid JSON document")),
            ("not json", "apps", Some("invalid JSON document")),
            ("[]", "cluster.x-k8s.io", Some("Mismatched JSON Documents")),
            ("1", "cluster.x-k8s.io", Some("Invalid JSON Document")),
            ("", "", Some("invalid JSON document")),
            ("", "cluster.x-k8s.io", None),
            ("null", "cluster.x-k8s.io", None),
            ("{}", "rbac.authorization.k8s.io", None),
        ];
        for (text, group, reason) in cases {
            let live = json!({"metadata": {"annotations": {LAST_APPLIED: text}}});
            assert_eq!(
                unreadable_last_applied(&live, group),
                reason,
                "{text:?} of {group:?}"
            );
        }
        assert_eq!(unreadable_last_applied(&json!({"metadata": {}}), ""), None);
    }

    #[test]
    fn a_truncated_last_applied_configuration_is_not_configured_over() {
        let mut store = MemoryStore::default();
        let live = json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "c", "namespace": "ns", "annotations": {LAST_APPLIED: r#"{"apiVersion":"v1","#}},
            "data": {"a": "1"}});
        load_stored(&mut store, live, "current.yaml").unwrap_or_else(|err| panic!("{err}"));
        let file = json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "c", "namespace": "ns"}, "data": {"a": "2"}});
        let applied = apply_over(&mut store, file, "f.yaml", "1970-01-01T00:00:00Z")
            .unwrap_or_else(|err| panic!("{err}"));
        assert_eq!(applied.verdict, Verdict::Denied);
        assert_eq!(
            applied.message,
            "error when applying patch to configmap/c: error when creating patch with the original \
             configuration (the live object's kubectl.kubernetes.io/last-applied-configuration annotation) \
             for: \"f.yaml\": invalid JSON document"
        );
        assert_eq!(
            store.get("", "ConfigMap", "ns", "c").unwrap_or_default()["data"]["a"],
            "1"
        );
    }
}
