//! Decoding JSON into typed objects, naming the field at fault when it does not fit.

use serde::de::DeserializeOwned;
use serde_json::Value;

/// Decodes `value` into `T`; the error names the path of the first field that does not fit
/// (`spec.topology.replicas: invalid type: string "x", expected i32`).
pub fn decode_value<T: DeserializeOwned>(value: Value) -> Result<T, String> {
    serde_path_to_error::deserialize(value).map_err(|err| {
        let path = err.path().to_string();
        if path == "." {
            err.inner().to_string()
        } else {
            format!("{path}: {}", err.inner())
        }
    })
}

/// Most JSON objects and arrays one AdmissionReview may hold. Each decodes into a typed node of
/// up to about 600 bytes, so this bounds a request's decoded size to some 25 MiB; the largest
/// ClusterClass of our real-world corpus has under 600.
pub const MAX_JSON_CONTAINERS: usize = 40_000;

/// How many JSON objects and arrays `json` opens (brackets inside strings are not counted), or
/// `None` as soon as there are more than `max`. One linear pass, no allocation.
pub fn count_containers(json: &[u8], max: usize) -> Option<usize> {
    let mut count = 0;
    let mut in_string = false;
    let mut escaped = false;
    for &byte in json {
        if in_string {
            match (escaped, byte) {
                (true, _) => escaped = false,
                (false, b'\\') => escaped = true,
                (false, b'"') => in_string = false,
                _ => {}
            }
            continue;
        }
        match byte {
            b'"' => in_string = true,
            b'{' | b'[' => {
                count += 1;
                if count > max {
                    return None;
                }
            }
            _ => {}
        }
    }
    Some(count)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn containers_are_counted_outside_strings_only() {
        assert_eq!(
            count_containers(br#"{"a": [1, {"b": "{[\"["}], "c": {}}"#, 10),
            Some(4)
        );
        assert_eq!(count_containers(b"[]", 10), Some(1));
    }

    #[test]
    fn counting_stops_past_the_limit() {
        let many = "[".repeat(1_000);
        assert_eq!(count_containers(many.as_bytes(), 999), None);
        assert_eq!(count_containers(many.as_bytes(), 1_000), Some(1_000));
    }
}
