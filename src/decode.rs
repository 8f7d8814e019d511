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
