//! The objects a resource's data holds: each value is a JSON list or a stream of YAML (or JSON)
//! documents split on `---` lines, as Cluster API splits them; each value's objects are put in
//! creation order (Namespaces and CRDs first).

use serde_json::Value;

use super::{DataEntry, ResourceError};
use crate::patches::template::parse_yaml_output;

/// Most objects one resource may create.
pub const MAX_OBJECTS: usize = 10_000;
/// Most JSON nodes all the objects of one resource may hold together, after YAML aliases are
/// expanded: a bound on the work a small hostile value can cause.
const MAX_NODES: usize = 2_000_000;

/// The objects of every data value, values in key order.
pub fn parse_objects(data: &[DataEntry]) -> Result<Vec<Value>, ResourceError> {
    let mut budget = Budget { nodes: 0, objects: 0 };
    let mut objects = Vec::new();
    for entry in data {
        let mut parsed = parse_value(entry, &mut budget)?;
        // Stable: objects of the same priority keep their order.
        parsed.sort_by_key(creation_priority);
        objects.extend(parsed);
    }
    Ok(objects)
}

/// What has been spent of the limits so far.
struct Budget {
    nodes: usize,
    objects: usize,
}

impl Budget {
    fn spend(&mut self, object: &Value) -> Result<(), ResourceError> {
        self.objects += 1;
        if self.objects > MAX_OBJECTS {
            return Err(ResourceError::TooManyObjects(MAX_OBJECTS));
        }
        self.nodes += count_nodes(object);
        if self.nodes > MAX_NODES {
            return Err(ResourceError::TooLarge {
                size: self.nodes,
                max: MAX_NODES,
            });
        }
        Ok(())
    }
}

fn parse_value(entry: &DataEntry, budget: &mut Budget) -> Result<Vec<Value>, ResourceError> {
    let syntax = |document: usize, reason: String| ResourceError::Syntax {
        key: entry.key.clone(),
        document,
        reason,
    };
    let text = std::str::from_utf8(&entry.bytes).map_err(|e| syntax(1, format!("not UTF-8: {e}")))?;
    let mut objects = Vec::new();
    if text.trim_start().starts_with('[') {
        let items: Vec<Value> = serde_json::from_str(text).map_err(|e| syntax(1, e.to_string()))?;
        for (index, item) in items.into_iter().enumerate() {
            objects.push(object(item, &entry.key, index + 1, budget)?);
        }
        return Ok(objects);
    }
    for (index, document) in split_documents(text).enumerate() {
        let value = parse_yaml_output(document).map_err(|e| syntax(index + 1, e.to_string()))?;
        if !value.is_null() {
            objects.push(object(value, &entry.key, index + 1, budget)?);
        }
    }
    Ok(objects)
}

fn object(value: Value, key: &str, document: usize, budget: &mut Budget) -> Result<Value, ResourceError> {
    if !value.is_object() {
        return Err(ResourceError::NotAnObject {
            key: key.to_owned(),
            document,
        });
    }
    let text = |pointer: &str| value.pointer(pointer).and_then(Value::as_str).unwrap_or_default();
    let missing = if text("/kind").is_empty() {
        Some("kind")
    } else if text("/metadata/name").is_empty() && text("/metadata/generateName").is_empty() {
        Some("metadata.name")
    } else {
        None
    };
    if let Some(missing) = missing {
        return Err(ResourceError::Unnamed {
            key: key.to_owned(),
            document,
            missing,
        });
    }
    budget.spend(&value)?;
    Ok(value)
}

/// The documents of a YAML stream, split as Kubernetes' YAML reader splits them: on lines that
/// start with `---` followed by nothing but spaces or a comment. Blank documents are skipped.
fn split_documents(text: &str) -> impl Iterator<Item = &str> {
    let mut documents = Vec::new();
    let mut start = 0;
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        if let Some(rest) = line.strip_prefix("---") {
            let rest = rest.trim();
            if rest.is_empty() || rest.starts_with('#') {
                documents.push(&text[start..offset]);
                start = offset + line.len();
            }
        }
        offset += line.len();
    }
    documents.push(&text[start..]);
    documents.into_iter().filter(|d| !d.trim().is_empty())
}

/// Lower goes first: what other objects depend on (Cluster API's `SortForCreate` order).
fn creation_priority(object: &Value) -> i32 {
    match object.get("kind").and_then(Value::as_str).unwrap_or_default() {
        "Namespace" => -100,
        "CustomResourceDefinition" => -99,
        "StorageClass" => -98,
        "PersistentVolume" => -97,
        "PersistentVolumeClaim" => -96,
        "Secret" => -95,
        "ConfigMap" => -94,
        "ServiceAccount" => -93,
        "LimitRange" => -92,
        "Pod" => -91,
        "ReplicaSet" => -90,
        "Endpoint" => -89,
        _ => 0,
    }
}

/// JSON nodes in `value`, counted without recursion.
fn count_nodes(value: &Value) -> usize {
    let mut count = 0;
    let mut pending = vec![value];
    while let Some(node) = pending.pop() {
        count += 1;
        match node {
            Value::Object(map) => pending.extend(map.values()),
            Value::Array(items) => pending.extend(items),
            _ => {}
        }
    }
    count
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(key: &str, text: &str) -> DataEntry {
        DataEntry {
            key: key.to_owned(),
            bytes: text.as_bytes().to_vec(),
        }
    }

    fn names(objects: &[Value]) -> Vec<&str> {
        objects
            .iter()
            .map(|o| o["metadata"]["name"].as_str().unwrap_or_default())
            .collect()
    }

    #[test]
    fn yaml_streams_json_objects_and_json_lists() {
        let data = [
            entry(
                "a.yaml",
                "---\nkind: Deployment\nmetadata: {name: d}\n--- # two\n\n---\n# only a comment\n---\nkind: Namespace\nmetadata: {name: ns}\n",
            ),
            entry("b.json", r#"  {"kind": "Service", "metadata": {"name": "s"}}"#),
            entry(
                "c.json",
                r#"
                [{"kind": "Role", "metadata": {"name": "r"}}, {"kind": "ServiceAccount", "metadata": {"name": "sa"}}]"#,
            ),
        ];
        let objects = parse_objects(&data).unwrap();
        assert_eq!(names(&objects), ["ns", "d", "s", "sa", "r"]);
    }

    #[test]
    fn values_resolve_as_go_yaml_v2_does() {
        let text = "kind: X\nmetadata: {name: x}\nspec: {enabled: yes, mode: 010, n: 1}\n";
        let objects = parse_objects(&[entry("a", text)]).unwrap();
        // `n` is a YAML 1.1 boolean, and a boolean key becomes "false" on the way to JSON.
        assert_eq!(
            objects[0]["spec"],
            serde_json::json!({"enabled": true, "mode": 8, "false": 1})
        );
    }

    #[test]
    fn bad_documents_name_their_key_and_position() {
        let err = |text: &str| parse_objects(&[entry("k", text)]).unwrap_err().to_string();
        assert_eq!(
            err("{kind: A, metadata: {name: a}}\n---\n- 1\n- 2\n"),
            r#"data key "k", document 2: not an object"#
        );
        assert!(err("{kind: A, metadata: {name: a}}\n---\nkind: [\n")
            .starts_with(r#"data key "k", document 2: "#));
        assert!(err(r#"[{"kind": "A", "metadata": {"generateName": "a-"}}, 3]"#)
            .ends_with("document 2: not an object"));
        assert_eq!(
            err("{kind: A, metadata: {name: a}}\n---\nmetadata: {name: b}\n"),
            r#"data key "k", document 2: the object has no kind"#
        );
        assert_eq!(
            err(r#"[{"kind": "A", "metadata": {"namespace": "n"}}]"#),
            r#"data key "k", document 1: the object has no metadata.name"#
        );
        assert!(err("[{\"kind\": ").starts_with(r#"data key "k", document 1: "#));
        let bytes = DataEntry {
            key: "k".to_owned(),
            bytes: vec![0xff, 0xfe],
        };
        assert!(parse_objects(&[bytes])
            .unwrap_err()
            .to_string()
            .contains("not UTF-8"));
    }

    #[test]
    fn hostile_values_are_refused_not_followed() {
        let deep = format!("kind: A\nx: {}{}\n", "[".repeat(100_000), "]".repeat(100_000));
        assert!(parse_objects(&[entry("deep", &deep)]).is_err());
        let deep_json = format!("[{}{}]", "[".repeat(100_000), "]".repeat(100_000));
        assert!(parse_objects(&[entry("deep", &deep_json)]).is_err());
        let mut bomb = String::from("kind: A\nmetadata: {name: a}\na: &a [x, x, x, x, x, x, x, x, x, x]\n");
        for level in 1..12 {
            let previous = level - 1;
            let refs = vec![format!("*l{previous}"); 10].join(", ");
            bomb.push_str(&format!("l{level}: &l{level} [{refs}]\n"));
        }
        let bomb = bomb.replace("&a", "&l0");
        assert!(parse_objects(&[entry("bomb", &bomb)]).is_err());
        let many = "{kind: A, metadata: {name: a}}\n---\n".repeat(MAX_OBJECTS + 1);
        assert_eq!(
            parse_objects(&[entry("many", &many)]).unwrap_err(),
            ResourceError::TooManyObjects(MAX_OBJECTS)
        );
    }
}
