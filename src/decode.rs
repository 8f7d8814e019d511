//! Decoding JSON into typed objects, naming the field at fault when it does not fit.

use serde::de::DeserializeOwned;
use serde::Deserialize;
use serde_json::Value;

/// Decodes `value` into `T`; the error names the path of the first field that does not fit
/// (`spec.topology.replicas: invalid type: string "x", expected i32`). An explicit `null` in a
/// typed field counts as absent, as the API server's decoder takes it.
pub fn decode_value<T: DeserializeOwned>(value: Value) -> Result<T, String> {
    if let Ok(typed) = T::deserialize(&value) {
        return Ok(typed);
    }
    let mut lenient = value.clone();
    if drop_nulls(&mut lenient) {
        if let Ok(typed) = T::deserialize(&lenient) {
            return Ok(typed);
        }
    }
    decode_with_path(value)
}

/// [`decode_value`] of a value read by reference: no copy unless it must be made lenient.
pub fn decode_ref<T: DeserializeOwned>(value: &Value) -> Result<T, String> {
    T::deserialize(value).or_else(|_| decode_value(value.clone()))
}

/// A JSON body read several ways (a typed pass, then a fallback), its UTF-8 checked once up
/// front: serde_json's byte reader checks each string it reads again, one call per string,
/// which cost a Cluster review more than the check of the whole body. A body that is not UTF-8
/// throughout is read by the byte reader, for its own error (or for a review whose bad bytes
/// sit only in fields nobody reads, as before).
#[derive(Clone, Copy)]
pub struct JsonBody<'a> {
    bytes: &'a [u8],
    text: Option<&'a str>,
}

impl<'a> JsonBody<'a> {
    /// `bytes`, checked once for UTF-8.
    pub fn new(bytes: &'a [u8]) -> Self {
        JsonBody {
            bytes,
            text: std::str::from_utf8(bytes).ok(),
        }
    }

    /// The body decoded as `T`, as `serde_json::from_slice` would.
    pub fn parse<T: Deserialize<'a>>(&self) -> serde_json::Result<T> {
        match self.text {
            Some(text) => serde_json::from_str(text),
            None => serde_json::from_slice(self.bytes),
        }
    }
}

/// Members whose value is free-form JSON, where a `null` is data: a variable's `value`, and a
/// schema's `default`, `example` and `enum`.
const FREE_FORM: [&str; 4] = ["value", "default", "example", "enum"];

/// Removes every object member whose value is `null`, except inside free-form JSON members, as
/// Go's decoder leaves a typed field at its zero value on `null`. Returns whether any was removed.
/// Iterative: any depth is safe.
pub fn drop_nulls(value: &mut Value) -> bool {
    let mut removed = false;
    let mut pending = vec![value];
    while let Some(node) = pending.pop() {
        match node {
            Value::Object(map) => {
                let before = map.len();
                map.retain(|_, v| !v.is_null());
                removed |= map.len() != before;
                pending.extend(
                    map.iter_mut()
                        .filter(|(key, _)| !FREE_FORM.contains(&key.as_str()))
                        .map(|(_, v)| v),
                );
            }
            Value::Array(items) => pending.extend(items.iter_mut()),
            _ => {}
        }
    }
    removed
}

fn decode_with_path<T: DeserializeOwned>(value: Value) -> Result<T, String> {
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

/// Most JSON values (objects, arrays, keys, strings, numbers, booleans, nulls) one
/// AdmissionReview may hold: free-form fields (variable values) decode each into a node of
/// some 130 bytes, so this bounds them to some 50 MiB whatever the containers.
pub const MAX_JSON_VALUES: usize = 400_000;

/// Whether `json` opens at most `max` JSON objects and arrays (brackets inside strings are not
/// counted). One linear pass, no allocation, and none at all for a text too short to hold more
/// (each container takes at least two bytes).
pub fn within_containers(json: &[u8], max: usize) -> bool {
    json.len() / 2 <= max || count_containers(json, max).is_some()
}

/// How many JSON objects and arrays `json` opens (brackets inside strings are not counted), or
/// `None` as soon as there are more than `max`. One linear pass, no allocation.
pub fn count_containers(json: &[u8], max: usize) -> Option<usize> {
    count_up_to(value_starts(json).filter(|b| matches!(b, b'{' | b'[')), max)
}

/// How many JSON values `json` holds, counting objects, arrays, keys, strings, numbers,
/// booleans and nulls alike (what each costs decoded is about the same), or `None` as soon as
/// there are more than `max`. One linear pass, no allocation; the text need not be valid JSON.
pub fn count_values(json: &[u8], max: usize) -> Option<usize> {
    count_up_to(value_starts(json), max)
}

fn count_up_to(items: impl Iterator<Item = u8>, max: usize) -> Option<usize> {
    let mut count = 0;
    for _ in items {
        count += 1;
        if count > max {
            return None;
        }
    }
    Some(count)
}

/// The first byte of each JSON value in `json` (a key is a value here), in order: `{`, `[`, `"`
/// or a scalar's first byte; bytes inside strings are skipped.
fn value_starts(json: &[u8]) -> impl Iterator<Item = u8> + '_ {
    let mut in_string = false;
    let mut escaped = false;
    let mut in_scalar = false;
    json.iter().copied().filter(move |&byte| {
        if in_string {
            match (escaped, byte) {
                (true, _) => escaped = false,
                (false, b'\\') => escaped = true,
                (false, b'"') => in_string = false,
                _ => {}
            }
            return false;
        }
        match byte {
            b'"' | b'{' | b'[' => {
                in_string = byte == b'"';
                in_scalar = false;
                true
            }
            b'}' | b']' | b',' | b':' | b' ' | b'\t' | b'\n' | b'\r' => {
                in_scalar = false;
                false
            }
            _ => !std::mem::replace(&mut in_scalar, true),
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn nulls_in_typed_fields_are_absent_but_free_form_nulls_stay() {
        let mut value = json!({"spec": {"pods": {"cidrBlocks": null}, "name": null,
            "variables": [{"name": "v", "value": {"a": null}}], "schema": {"default": null, "x": [null, {"y": null}]}}});
        assert!(drop_nulls(&mut value));
        assert_eq!(
            value,
            json!({"spec": {"pods": {}, "variables": [{"name": "v", "value": {"a": null}}],
                "schema": {"x": [null, {}]}}})
        );
        assert!(!drop_nulls(&mut value));
    }

    #[test]
    fn a_null_optional_field_decodes_as_absent() {
        #[derive(serde::Deserialize, Debug, PartialEq)]
        struct Ranges {
            #[serde(default, rename = "cidrBlocks")]
            cidr_blocks: Vec<String>,
        }
        assert_eq!(
            decode_value::<Ranges>(json!({"cidrBlocks": null})),
            Ok(Ranges { cidr_blocks: vec![] })
        );
        assert!(decode_value::<Ranges>(json!({"cidrBlocks": 3}))
            .unwrap_err()
            .starts_with("cidrBlocks: invalid type"));
    }

    #[test]
    fn containers_are_counted_outside_strings_only() {
        assert_eq!(
            count_containers(br#"{"a": [1, {"b": "{[\"["}], "c": {}}"#, 10),
            Some(4)
        );
        assert_eq!(count_containers(b"[]", 10), Some(1));
    }

    #[test]
    fn values_are_keys_strings_scalars_and_containers() {
        let text = br#"{"a": [1, true, null, -2.5e3], "b\"": "x,y", "c": {}}"#;
        assert_eq!(count_values(text, 100), Some(11));
        assert_eq!(count_values(text, 10), None);
        assert_eq!(count_values(b"[[],[],[]]", 100), Some(4));
    }

    #[test]
    fn counting_stops_past_the_limit() {
        let many = "[".repeat(1_000);
        assert_eq!(count_containers(many.as_bytes(), 999), None);
        assert_eq!(count_containers(many.as_bytes(), 1_000), Some(1_000));
        assert!(!within_containers(many.as_bytes(), 400));
        assert!(within_containers(b"[[[]]]", 3));
    }

    #[test]
    fn a_body_read_as_text_decodes_as_the_byte_reader_does() {
        #[derive(Debug, Deserialize, PartialEq)]
        struct Head {
            uid: String,
        }
        let valid = b"{\"uid\": \"caf\\u00e9 \xc3\xa9\", \"other\": [1, {\"x\": \"y\"}]}";
        assert_eq!(
            JsonBody::new(valid).parse::<Head>().unwrap(),
            serde_json::from_slice::<Head>(valid).unwrap()
        );
        // Bad bytes in a field nobody reads: accepted, as by the byte reader.
        let unread = b"{\"uid\": \"u\", \"other\": \"\xff\"}";
        assert_eq!(JsonBody::new(unread).parse::<Head>().unwrap().uid, "u");
        // Bad bytes in a field read: the byte reader's own error.
        let read = b"{\"uid\": \"\xff\"}";
        assert_eq!(
            JsonBody::new(read).parse::<Head>().unwrap_err().to_string(),
            serde_json::from_slice::<Head>(read).unwrap_err().to_string()
        );
    }
}
