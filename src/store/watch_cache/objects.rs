//! Objects as the cache keeps them: the value stored for an object from the API server, its
//! identity and resourceVersion, and the insertion that drops what does not decode.

use kube::api::DynamicObject;
use kube::api::ObjectMeta;
use kube::core::ApiResource;
use serde_json::{Map, Value};

use crate::managed_fields::{self, TOPOLOGY_MANAGER};
use crate::store::contract::{CRD_GROUP, CRD_KIND};
use crate::store::MemoryStore;

/// An object from the API server as the store keeps it: with `apiVersion` and `kind` (list items
/// may lack them), without `kubectl apply`'s copy of the object in the
/// `kubectl.kubernetes.io/last-applied-configuration` annotation, which nothing here reads, and
/// with `managedFields` slimmed to what the topology controller's apply model reads (see
/// [`managed_fields::slim`]: none on an object it never applied).
pub fn object_value(object: &DynamicObject, resource: &ApiResource) -> Value {
    kept_value(&object.metadata, object.data.as_object().cloned(), resource)
}

/// [`object_value`] of an object the caller gives up (a watch event's): its fields besides the
/// metadata move into the value instead of being copied.
pub fn owned_object_value(object: DynamicObject, resource: &ApiResource) -> Value {
    let fields = match object.data {
        Value::Object(fields) => Some(fields),
        _ => None,
    };
    kept_value(&object.metadata, fields, resource)
}

/// The value [`object_value`] describes, from the object's metadata and its other fields.
fn kept_value(metadata: &ObjectMeta, fields: Option<Map<String, Value>>, resource: &ApiResource) -> Value {
    let mut map = Map::new();
    map.insert("apiVersion".to_owned(), Value::from(resource.api_version.clone()));
    map.insert("kind".to_owned(), Value::from(resource.kind.clone()));
    map.insert(
        "metadata".to_owned(),
        serde_json::to_value(metadata).unwrap_or(Value::Null),
    );
    let rest = fields
        .into_iter()
        .flatten()
        .filter(|(field, _)| !matches!(field.as_str(), "apiVersion" | "kind" | "metadata"));
    map.extend(rest);
    let mut value = Value::Object(map);
    managed_fields::slim(&mut value, TOPOLOGY_MANAGER);
    if let Some(metadata) = value.get_mut("metadata").and_then(Value::as_object_mut) {
        let annotations = metadata.get_mut("annotations").and_then(Value::as_object_mut);
        if let Some(annotations) = annotations {
            // An empty map stays: Cluster API's builtin metadata tells it from none.
            annotations.remove(LAST_APPLIED);
        }
    }
    if resource.group == CRD_GROUP && resource.kind == CRD_KIND {
        keep_what_contracts_read(&mut value);
    }
    value
}

/// Drops from a CRD all but what the contract lookups read (`store::contract`): its metadata,
/// group and names. Its schemas, the bulk of it (hundreds of KiB for a Cluster API CRD), are
/// never read from the cache.
fn keep_what_contracts_read(crd: &mut Value) {
    let Some(spec) = crd.get_mut("spec").and_then(Value::as_object_mut) else {
        return;
    };
    spec.retain(|field, _| field == "group" || field == "names");
    if let Some(map) = crd.as_object_mut() {
        map.remove("status");
    }
}

/// The annotation in which `kubectl apply` keeps a whole copy of the object it applied.
const LAST_APPLIED: &str = "kubectl.kubernetes.io/last-applied-configuration";

/// An object's resourceVersion as a number (etcd's revision); 0 when it is not one.
pub(super) fn resource_version(object: &Value) -> u64 {
    object
        .pointer("/metadata/resourceVersion")
        .and_then(Value::as_str)
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}

pub(super) fn identity(object: &Value) -> Option<(String, String)> {
    let metadata = object.get("metadata")?;
    let name = metadata.get("name")?.as_str()?;
    let namespace = metadata
        .get("namespace")
        .and_then(Value::as_str)
        .unwrap_or_default();
    Some((namespace.to_owned(), name.to_owned()))
}

/// Stores an object; one that does not decode into its type is dropped (with its older version)
/// and logged, so the webhooks treat it as absent rather than as it was.
pub(super) fn insert(store: &mut MemoryStore, group: &str, kind: &str, object: Value) {
    let id = identity(&object);
    if let Err(err) = store.insert(object) {
        tracing::warn!(error = %err, "object not cached");
        if let Some((namespace, name)) = id {
            store.remove(group, kind, &namespace, &name);
        }
    }
}
