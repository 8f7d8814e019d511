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

/// v1beta1 readiness `bool`s (written always) → v1beta2 `initialization.*` (`*bool`), each pair
/// `(v1beta1 key, initialization key)`; a `false` stays only when the conversion-data says so.
pub(super) fn initialization_to_hub(status: &mut Obj, pairs: &[(&str, &str)], restored: &Value) {
    for (from, to) in pairs {
        let mut initialization = Obj::new();
        if let Some(ready) = status.remove(*from) {
            initialization.insert((*to).into(), ready);
        }
        let pointer = format!("/status/initialization/{to}");
        restore_bool(&mut initialization, to, restored.pointer(&pointer));
        if let Some(value) = initialization.remove(*to) {
            put(status, &["initialization", to], value);
        }
    }
}

/// The inverse of [`initialization_to_hub`]: every v1beta1 boolean written, unset as `false`.
pub(super) fn initialization_from_hub(status: &mut Obj, pairs: &[(&str, &str)]) {
    for (to, from) in pairs {
        let ready = take(status, &["initialization", from])
            .and_then(|v| v.as_bool())
            .unwrap_or(false);
        status.insert((*to).into(), Value::Bool(ready));
    }
}

/// The replica counters of a MachineDeployment, MachineSet or MachinePool status.
pub(super) struct Counters {
    /// v1beta1 counters that move to `deprecated.v1beta1` (their meaning changed).
    pub(super) legacy: &'static [&'static str],
    /// v1beta1 `v1beta2.*` counters that become the top-level ones.
    pub(super) current: &'static [&'static str],
    /// v1beta1 counters written even when 0 (`int32` without omitempty), legacy or not.
    pub(super) always: &'static [&'static str],
}

impl Counters {
    /// The hub path of a v1beta1 top-level counter.
    fn hub_path(&self, key: &'static str) -> Vec<&'static str> {
        if self.legacy.contains(&key) {
            vec!["deprecated", "v1beta1", key]
        } else {
            vec![key]
        }
    }

    /// v1beta1 → hub, after [`conditions_to_hub`] has run. A counter v1beta1 writes always
    /// keeps its `0` in the hub unless the conversion-data (`restored`, when there was one)
    /// shows the hub this spoke came from did not have it.
    pub(super) fn spoke_to_hub(&self, status: &mut Obj, restored: Option<&Value>) {
        let legacy: Vec<(&str, Value)> = self
            .legacy
            .iter()
            .filter_map(|key| Some((*key, status.remove(*key)?)))
            .collect();
        for key in self.current {
            if let Some(value) = take(status, &["v1beta2", key]) {
                status.insert((*key).to_owned(), value);
            }
        }
        super::value::drop_empty(status, "v1beta2");
        for (key, value) in legacy {
            put(status, &["deprecated", "v1beta1", key], value);
        }
        let Some(restored) = restored else {
            return;
        };
        for key in self.always {
            let path = self.hub_path(key);
            let pointer = format!("/status/{}", path.join("/"));
            let zero = super::value::at(status, &path[..path.len() - 1])
                .and_then(|parent| parent.get(*key))
                .is_some_and(|v| v.as_i64() == Some(0));
            if zero && restored.pointer(&pointer).is_none() {
                take(status, &path);
            }
        }
    }

    /// hub → v1beta1, before [`conditions_from_hub`] runs: every `always` counter written.
    pub(super) fn hub_to_spoke(&self, status: &mut Obj) {
        for key in self.current {
            if let Some(value) = status.remove(*key) {
                put(status, &["v1beta2", key], value);
            }
        }
        for key in self.legacy {
            if let Some(value) = take(status, &["deprecated", "v1beta1", key]) {
                status.insert((*key).to_owned(), value);
            }
        }
        for key in self.always {
            status.entry(*key).or_insert(Value::from(0));
        }
    }
}
