//! The scenarios' objects: the quickstart examples as JSON values, edited per scenario and
//! rendered back to a manifest for `kubectl apply -f -`.

use serde_json::Value;

use crate::env::repo_path;

/// Every document of `examples/quickstart/<file>` (v1beta2).
pub fn quickstart(file: &str) -> Vec<Value> {
    documents("examples/quickstart", file)
}

/// The one document of `examples/v1beta1/<file>` of `kind`: the quickstart as a v1beta1 client
/// writes it.
pub fn v1beta1_object(file: &str, kind: &str) -> Value {
    documents("examples/v1beta1", file)
        .into_iter()
        .find(|object| object["kind"] == kind)
        .unwrap_or_else(|| panic!("no {kind} in examples/v1beta1/{file}"))
}

/// Every document of `<dir>/<file>`.
fn documents(dir: &str, file: &str) -> Vec<Value> {
    let path = repo_path(dir).join(file);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_yaml_ng::Deserializer::from_str(&text)
        .map(|document| {
            serde::Deserialize::deserialize(document).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        })
        .collect()
}

/// The one document of `examples/quickstart/<file>` of `kind`.
pub fn quickstart_object(file: &str, kind: &str) -> Value {
    quickstart(file)
        .into_iter()
        .find(|object| object["kind"] == kind)
        .unwrap_or_else(|| panic!("no {kind} in examples/quickstart/{file}"))
}

/// The provider templates of the quickstart class (everything but the ClusterClass).
pub fn quickstart_templates() -> Vec<Value> {
    quickstart("00-clusterclass.yaml")
        .into_iter()
        .filter(|object| object["kind"] != "ClusterClass")
        .collect()
}

/// `objects` as one multi-document YAML manifest.
pub fn render(objects: &[Value]) -> String {
    objects
        .iter()
        .map(|object| serde_yaml_ng::to_string(object).expect("objects render as YAML"))
        .collect::<Vec<_>>()
        .join("---\n")
}

/// `object` with the value at JSON pointer `pointer` set to `value` (missing objects on the
/// way are created; an index past the end of a list appends).
pub fn with(mut object: Value, pointer: &str, value: Value) -> Value {
    set(&mut object, pointer, value);
    object
}

fn set(object: &mut Value, pointer: &str, value: Value) {
    let Some((parent, last)) = pointer.rsplit_once('/') else {
        panic!("{pointer:?} is not a JSON pointer")
    };
    if !parent.is_empty() && object.pointer(parent).is_none() {
        set(object, parent, Value::Object(Default::default()));
    }
    let target = if parent.is_empty() {
        object
    } else {
        object.pointer_mut(parent).expect("parent exists")
    };
    match target {
        Value::Array(items) => match last.parse::<usize>() {
            Ok(index) if index < items.len() => items[index] = value,
            _ => items.push(value),
        },
        Value::Object(fields) => {
            fields.insert(last.to_owned(), value);
        }
        other => panic!("cannot set {pointer:?} inside {other}"),
    }
}

/// `object` without the list item at `pointer` whose `key` is `name`.
pub fn without(mut object: Value, pointer: &str, key: &str, name: &str) -> Value {
    let items = object
        .pointer_mut(pointer)
        .and_then(Value::as_array_mut)
        .unwrap_or_else(|| panic!("no list at {pointer}"));
    let before = items.len();
    items.retain(|item| item[key] != name);
    assert_ne!(items.len(), before, "no item {key}={name} in {pointer}");
    object
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn set_creates_and_appends() {
        let object = with(json!({"a": [1]}), "/b/c", json!(2));
        assert_eq!(
            with(object, "/a/5", json!(3)),
            json!({"a": [1, 3], "b": {"c": 2}})
        );
    }

    #[test]
    fn without_removes_named_items() {
        let object = json!({"l": [{"name": "x"}, {"name": "y"}]});
        assert_eq!(without(object, "/l", "name", "x"), json!({"l": [{"name": "y"}]}));
    }
}
