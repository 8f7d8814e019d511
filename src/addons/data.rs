//! A resource's data, normalized as Cluster API normalizes it before hashing and parsing: the
//! values of `data` in key order, a Secret's base64-decoded.

use std::collections::BTreeMap;

use base64::Engine;
use serde_json::Value;

use super::ResourceError;
use crate::api::{RESOURCE_KIND_CONFIG_MAP, RESOURCE_KIND_SECRET, RESOURCE_SET_SECRET_TYPE};

/// Most bytes of data one resource may hold: the API server's request limit, well above the
/// 1 MiB it lets a Secret or ConfigMap hold.
pub const MAX_DATA_BYTES: usize = 3 * 1024 * 1024;

/// One value of a resource's `data`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DataEntry {
    /// The data key (a file name, usually).
    pub key: String,
    /// The value; for a Secret, decoded.
    pub bytes: Vec<u8>,
}

/// The `data` of a Secret (of the resource-set type) or ConfigMap, in key order. A Secret's
/// `stringData`, which the API server folds into `data` on write, counts as data too, so a
/// Secret read from a file hashes as it will once stored.
pub fn normalize_data(resource: &Value) -> Result<Vec<DataEntry>, ResourceError> {
    let kind = resource.get("kind").and_then(Value::as_str).unwrap_or_default();
    let secret = match kind {
        RESOURCE_KIND_SECRET => true,
        RESOURCE_KIND_CONFIG_MAP => false,
        other => return Err(ResourceError::UnsupportedKind(other.to_owned())),
    };
    if secret {
        let secret_type = resource.get("type").and_then(Value::as_str).unwrap_or("Opaque");
        if secret_type != RESOURCE_SET_SECRET_TYPE {
            return Err(ResourceError::WrongSecretType(secret_type.to_owned()));
        }
    }
    let data = resource.get("data").and_then(Value::as_object);
    let string_data = secret
        .then(|| resource.get("stringData").and_then(Value::as_object))
        .flatten();
    if data.is_none() && string_data.is_none() {
        return Err(ResourceError::NoData(object_name(resource)));
    }
    // stringData comes second so that it wins over data, as the API server merges them.
    let encoded = data
        .into_iter()
        .flatten()
        .map(|(key, value)| (key, value, secret));
    let plain = string_data
        .into_iter()
        .flatten()
        .map(|(key, value)| (key, value, false));
    let mut values: BTreeMap<&str, Vec<u8>> = BTreeMap::new();
    let mut size = 0;
    for (key, value, base64) in encoded.chain(plain) {
        let bytes = decode(key, value, base64)?;
        // Counts an overridden data value too: a bound on the work, not the exact size.
        size += bytes.len();
        if size > MAX_DATA_BYTES {
            return Err(ResourceError::TooLarge {
                size,
                max: MAX_DATA_BYTES,
            });
        }
        values.insert(key, bytes);
    }
    Ok(values
        .into_iter()
        .map(|(key, bytes)| DataEntry {
            key: key.to_owned(),
            bytes,
        })
        .collect())
}

/// The bytes of one data value: a string, base64-decoded when `base64`.
fn decode(key: &str, value: &Value, base64: bool) -> Result<Vec<u8>, ResourceError> {
    let text = value
        .as_str()
        .ok_or_else(|| ResourceError::NotAString(key.to_owned()))?;
    if !base64 {
        return Ok(text.as_bytes().to_vec());
    }
    base64::engine::general_purpose::STANDARD
        .decode(text)
        .map_err(|_| ResourceError::NotBase64(key.to_owned()))
}

/// `namespace/name`, or `name` without a namespace, as Kubernetes logs name an object.
fn object_name(resource: &Value) -> String {
    let field = |name: &str| {
        resource
            .pointer(&format!("/metadata/{name}"))
            .and_then(Value::as_str)
            .unwrap_or_default()
    };
    match field("namespace") {
        "" => field("name").to_owned(),
        namespace => format!("{namespace}/{}", field("name")),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn keys_and_text(entries: &[DataEntry]) -> Vec<(&str, String)> {
        entries
            .iter()
            .map(|e| (e.key.as_str(), String::from_utf8_lossy(&e.bytes).into_owned()))
            .collect()
    }

    #[test]
    fn values_come_in_key_order_and_secrets_decoded() {
        let config_map = json!({"kind": "ConfigMap", "data": {"b": "two", "a": "one", "B": "zero"}});
        assert_eq!(
            keys_and_text(&normalize_data(&config_map).unwrap()),
            [
                ("B", "zero".to_owned()),
                ("a", "one".to_owned()),
                ("b", "two".to_owned())
            ]
        );
        let secret = json!({"kind": "Secret", "type": "addons.cluster.x-k8s.io/resource-set",
            "data": {"x.yaml": "a2luZDogQQ==", "y.yaml": "b2xk"}, "stringData": {"y.yaml": "new"}});
        assert_eq!(
            keys_and_text(&normalize_data(&secret).unwrap()),
            [("x.yaml", "kind: A".to_owned()), ("y.yaml", "new".to_owned())]
        );
    }

    #[test]
    fn wrong_kinds_types_and_values_are_errors() {
        let err = |object: Value| normalize_data(&object).unwrap_err().to_string();
        assert_eq!(
            err(json!({"kind": "Secret", "data": {}})),
            r#"unsupported secret type "Opaque": a ClusterResourceSet reads only Secrets of type "addons.cluster.x-k8s.io/resource-set""#
        );
        assert!(err(json!({"kind": "Pod"})).starts_with(r#"unsupported resource kind "Pod""#));
        assert_eq!(
            err(json!({"kind": "ConfigMap", "metadata": {"name": "c", "namespace": "ns"}})),
            "failed to get data field from resource ns/c"
        );
        assert_eq!(
            err(json!({"kind": "ConfigMap", "data": {"k": 1}})),
            r#"data key "k": the value is not a string"#
        );
        let secret =
            json!({"kind": "Secret", "type": "addons.cluster.x-k8s.io/resource-set", "data": {"k": "%%%"}});
        assert_eq!(err(secret), r#"data key "k": the value is not valid base64"#);
        let big = "x".repeat(MAX_DATA_BYTES / 2 + 1);
        let too_big = json!({"kind": "ConfigMap", "data": {"a": big, "b": big}});
        assert!(err(too_big).starts_with("the data holds"));
    }
}
