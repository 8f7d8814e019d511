//! Parsing manifest text: multi-document YAML, a JSON object, or a `List` of objects.

use serde::de::DeserializeSeed;
use serde_json::Value;

use super::bounds::{check, Bound, Budget};
use super::duplicates::{Seen, Tracked};

/// Why manifest text could not be read as Kubernetes objects.
#[derive(Debug, thiserror::Error)]
pub enum ManifestError {
    /// The text is not valid YAML or JSON.
    #[error("document {document}: {source}")]
    Yaml {
        /// 1-based position of the document in the text.
        document: usize,
        /// The parser's error.
        source: serde_yaml_ng::Error,
    },
    /// The text nests too deep or holds too many values (checked before it is decoded).
    #[error(transparent)]
    Bound(#[from] Bound),
    /// A document is not a Kubernetes object.
    #[error("document {document}: not a Kubernetes object: {reason}")]
    NotAnObject {
        /// 1-based position of the document in the text.
        document: usize,
        /// What is missing.
        reason: &'static str,
    },
}

/// Every object in `text`, in order: YAML documents (JSON is YAML), with `kind: List` (or any
/// `*List`) flattened into its items and empty documents skipped.
pub fn parse_manifests(text: &str) -> Result<Vec<Value>, ManifestError> {
    Ok(parse_manifests_noting_duplicates(text)?
        .into_iter()
        .map(|(object, _)| object)
        .collect())
}

/// As [`parse_manifests`], with each object the paths of the keys it repeats
/// (`spec.topology.version`); the last of repeated keys is the one kept.
pub fn parse_manifests_noting_duplicates(text: &str) -> Result<Vec<(Value, Vec<String>)>, ManifestError> {
    parse_manifests_within(text, &mut Budget::default())
}

/// As [`parse_manifests_noting_duplicates`], taking the values read from `budget` (shared by
/// the files of one command); the text's depth and size are checked before it is decoded.
pub fn parse_manifests_within(
    text: &str,
    budget: &mut Budget,
) -> Result<Vec<(Value, Vec<String>)>, ManifestError> {
    check(text, budget)?;
    let mut objects = Vec::new();
    for (index, document) in serde_yaml_ng::Deserializer::from_str(text).enumerate() {
        let position = index + 1;
        let seen = Seen::default();
        let value = Tracked(&seen)
            .deserialize(document)
            .map_err(|source| ManifestError::Yaml {
                document: position,
                source,
            })?;
        let start = objects.len();
        collect(value, position, &mut objects)?;
        let duplicates = seen.duplicates.into_inner();
        assign(&mut objects[start..], duplicates);
    }
    Ok(objects)
}

/// Gives each object of one document the repeated keys under it: all of them for a lone
/// object, those under `items[i]` (relative to it) for the i-th item of a List.
fn assign(objects: &mut [(Value, Vec<String>)], duplicates: Vec<String>) {
    if let [(_, only)] = objects {
        if !duplicates.iter().any(|d| d.starts_with("items[")) {
            *only = duplicates;
            return;
        }
    }
    for duplicate in duplicates {
        let item = duplicate
            .strip_prefix("items[")
            .and_then(|rest| rest.split_once(']'))
            .and_then(|(index, rest)| Some((index.parse::<usize>().ok()?, rest.strip_prefix('.')?)));
        match item {
            Some((index, path)) if index < objects.len() => objects[index].1.push(path.to_owned()),
            // A repeated key of the List itself (or of a nested List) is named on its first object.
            _ => {
                if let Some((_, first)) = objects.first_mut() {
                    first.push(duplicate);
                }
            }
        }
    }
}

fn collect(
    value: Value,
    document: usize,
    objects: &mut Vec<(Value, Vec<String>)>,
) -> Result<(), ManifestError> {
    let Value::Object(map) = value else {
        return match value {
            Value::Null => Ok(()),
            _ => Err(ManifestError::NotAnObject {
                document,
                reason: "not a mapping",
            }),
        };
    };
    let kind = map.get("kind").and_then(Value::as_str).unwrap_or_default();
    if kind.ends_with("List") {
        if let Some(Value::Array(items)) = map.get("items") {
            for item in items {
                collect(item.clone(), document, objects)?;
            }
            return Ok(());
        }
    }
    if kind.is_empty() {
        return Err(ManifestError::NotAnObject {
            document,
            reason: "no kind",
        });
    }
    if map.get("apiVersion").and_then(Value::as_str).is_none() {
        return Err(ManifestError::NotAnObject {
            document,
            reason: "no apiVersion",
        });
    }
    objects.push((Value::Object(map), Vec::new()));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_documents_lists_and_json() {
        let text = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n---\n---\n\
                    {\"apiVersion\": \"v1\", \"kind\": \"List\", \"items\": [\
                    {\"apiVersion\": \"v1\", \"kind\": \"Secret\", \"metadata\": {\"name\": \"b\"}}]}\n";
        let objects = parse_manifests(text).unwrap();
        let kinds: Vec<&str> = objects.iter().map(|o| o["kind"].as_str().unwrap()).collect();
        assert_eq!(kinds, ["ConfigMap", "Secret"]);
    }

    #[test]
    fn names_the_bad_document() {
        let err = parse_manifests("kind: A\napiVersion: v1\n---\n- 1\n").unwrap_err();
        assert_eq!(
            err.to_string(),
            "document 2: not a Kubernetes object: not a mapping"
        );
        let err = parse_manifests("apiVersion: v1\n").unwrap_err();
        assert_eq!(err.to_string(), "document 1: not a Kubernetes object: no kind");
    }

    #[test]
    fn repeated_keys_are_noted_per_object_and_the_last_kept() {
        let text =
            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, name: b}\ndata:\n  k: 1\n  k: 2\n---\n\
                    {\"apiVersion\": \"v1\", \"kind\": \"List\", \"items\": [\
                    {\"apiVersion\": \"v1\", \"kind\": \"Secret\", \"metadata\": {\"name\": \"b\"}},\
                    {\"apiVersion\": \"v1\", \"kind\": \"Secret\", \"metadata\": {\"name\": \"c\"},\
                     \"x\": [{\"y\": 1, \"y\": 2}]}]}\n";
        let objects = parse_manifests_noting_duplicates(text).unwrap();
        assert_eq!(objects[0].0["metadata"]["name"], "b");
        assert_eq!(objects[0].1, ["metadata.name", "data.k"]);
        assert!(objects[1].1.is_empty());
        assert_eq!(objects[2].1, ["x[0].y"]);
    }
}
