//! A readable difference between current and desired objects: created, changed (per field), deleted.

use serde_json::Value;

use crate::api::describe;

/// One field that differs: its path, the current and the desired value (null when absent).
#[derive(Debug, Clone, PartialEq)]
pub struct FieldChange {
    /// Dotted path, list items as `[i]`.
    pub path: String,
    /// The current value.
    pub from: Value,
    /// The desired value.
    pub to: Value,
}

/// What happens to one object.
#[derive(Debug, Clone, PartialEq)]
pub enum Change {
    /// The object does not exist yet.
    Created(String),
    /// The object exists and these owned fields differ.
    Changed(String, Vec<FieldChange>),
    /// The object exists and is not desired any more.
    Deleted(String),
}

/// Most nesting levels compared; deeper differences are reported whole.
const MAX_DEPTH: usize = 64;

/// Compares `desired` with `current` by kind and name; only the fields the topology owns
/// (labels, annotations, spec) are compared. Unchanged objects are left out.
pub fn diff(current: &[Value], desired: &[Value]) -> Vec<Change> {
    let key = |o: &Value| (o["kind"].clone(), o["metadata"]["name"].clone());
    let mut changes = Vec::new();
    for object in desired {
        match current.iter().find(|c| key(c) == key(object)) {
            None => changes.push(Change::Created(describe(object))),
            Some(existing) => {
                let mut fields = Vec::new();
                for (path, part) in [
                    ("metadata.labels", &["metadata", "labels"][..]),
                    ("metadata.annotations", &["metadata", "annotations"]),
                    ("spec", &["spec"]),
                ] {
                    let pick = |o: &Value| part.iter().fold(o, |v, k| &v[*k]).clone();
                    compare(path, &pick(existing), &pick(object), 0, &mut fields);
                }
                if !fields.is_empty() {
                    changes.push(Change::Changed(describe(object), fields));
                }
            }
        }
    }
    for object in current {
        if !desired.iter().any(|d| key(d) == key(object)) {
            changes.push(Change::Deleted(describe(object)));
        }
    }
    changes
}

/// Records the leaves where `from` and `to` differ.
fn compare(path: &str, from: &Value, to: &Value, depth: usize, out: &mut Vec<FieldChange>) {
    if from == to {
        return;
    }
    match (from, to) {
        (Value::Object(a), Value::Object(b)) if depth < MAX_DEPTH => {
            for key in a.keys().chain(b.keys().filter(|k| !a.contains_key(*k))) {
                let child = format!("{path}.{key}");
                compare(
                    &child,
                    a.get(key).unwrap_or(&Value::Null),
                    b.get(key).unwrap_or(&Value::Null),
                    depth + 1,
                    out,
                );
            }
        }
        (Value::Array(a), Value::Array(b)) if depth < MAX_DEPTH && a.len() == b.len() => {
            for (i, (x, y)) in a.iter().zip(b).enumerate() {
                compare(&format!("{path}[{i}]"), x, y, depth + 1, out);
            }
        }
        _ => out.push(FieldChange {
            path: path.to_owned(),
            from: from.clone(),
            to: to.clone(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reports_created_changed_and_deleted() {
        let current = vec![
            json!({"kind": "A", "metadata": {"name": "a", "namespace": "n"}, "spec": {"x": 1, "l": [1, 2]}, "status": {"y": 1}}),
            json!({"kind": "B", "metadata": {"name": "b", "namespace": "n"}}),
        ];
        let desired = vec![
            json!({"kind": "A", "metadata": {"name": "a", "namespace": "n"}, "spec": {"x": 2, "l": [1, 3]}}),
            json!({"kind": "C", "metadata": {"name": "c", "namespace": "n"}}),
        ];
        assert_eq!(
            diff(&current, &desired),
            vec![
                Change::Changed(
                    "A n/a".to_owned(),
                    vec![
                        FieldChange {
                            path: "spec.x".to_owned(),
                            from: json!(1),
                            to: json!(2)
                        },
                        FieldChange {
                            path: "spec.l[1]".to_owned(),
                            from: json!(2),
                            to: json!(3)
                        },
                    ]
                ),
                Change::Created("C n/c".to_owned()),
                Change::Deleted("B n/b".to_owned()),
            ]
        );
    }
}
