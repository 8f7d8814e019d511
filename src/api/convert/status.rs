//! Status fields every converted kind shares: v1beta1 `conditions` (Cluster API's own type) move
//! to `deprecated.v1beta1.conditions`, and `v1beta2.conditions` (metav1) become `conditions`;
//! the way back mirrors it.

use serde_json::Value;

use super::value::{child, put, take, Obj};

/// v1beta1 status → v1beta2 status: the condition lists trade places, and `deprecated_keys`
/// (`failureReason`, ...) follow the old conditions into `deprecated.v1beta1`. The other
/// `v1beta2.*` fields are left for the kind to place (Cluster's counters).
pub(super) fn conditions_to_hub(status: &mut Obj, deprecated_keys: &[&str]) {
    let legacy = status.remove("conditions");
    let current = take(status, &["v1beta2", "conditions"]);
    if let Some(current) = current {
        status.insert("conditions".into(), current);
    }
    if let Some(legacy) = legacy {
        put(status, &["deprecated", "v1beta1", "conditions"], legacy);
    }
    for key in deprecated_keys {
        if let Some(value) = status.remove(*key) {
            put(status, &["deprecated", "v1beta1", key], value);
        }
    }
}

/// v1beta2 status → v1beta1 status, the inverse of [`conditions_to_hub`].
pub(super) fn conditions_from_hub(status: &mut Obj, deprecated_keys: &[&str]) {
    let current = status.remove("conditions");
    let legacy = take(status, &["deprecated", "v1beta1", "conditions"]);
    for key in deprecated_keys {
        if let Some(value) = take(status, &["deprecated", "v1beta1", key]) {
            status.insert((*key).to_owned(), value);
        }
    }
    if let Some(legacy) = legacy {
        status.insert("conditions".into(), legacy);
    }
    if let Some(current) = current {
        put(status, &["v1beta2", "conditions"], current);
    }
}

/// Runs `f` on `obj.status` when it is an object.
pub(super) fn with_status(obj: &mut Obj, f: impl FnOnce(&mut Obj)) {
    if let Some(status) = child(obj, "status") {
        f(status);
    }
}

/// A `bool` that v1beta1 writes without omitempty, read as v1beta2's `*bool`: `true` stays, and
/// `false` (or absent) stays `false` only when the hub this spoke came from said `false`
/// (`Convert_bool_To_Pointer_bool`).
pub(super) fn restore_bool(obj: &mut Obj, key: &str, restored: Option<&Value>) {
    match obj.get(key) {
        Some(Value::Bool(true)) => {}
        Some(Value::Bool(false)) | None => {
            if restored == Some(&Value::Bool(false)) {
                obj.insert(key.to_owned(), Value::Bool(false));
            } else {
                obj.remove(key);
            }
        }
        Some(_) => {}
    }
}
