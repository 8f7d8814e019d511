//! Parsing manifest text: multi-document YAML, a JSON object, or a `List` of objects.

use serde_json::Value;

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
    let mut objects = Vec::new();
    for (index, document) in serde_yaml_ng::Deserializer::from_str(text).enumerate() {
        let position = index + 1;
        let value: Value =
            serde::Deserialize::deserialize(document).map_err(|source| ManifestError::Yaml {
                document: position,
                source,
            })?;
        collect(value, position, &mut objects)?;
    }
    Ok(objects)
}

fn collect(value: Value, document: usize, objects: &mut Vec<Value>) -> Result<(), ManifestError> {
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
    objects.push(Value::Object(map));
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
}
