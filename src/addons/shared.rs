//! Resource data parsed once per content: every set, reference and Cluster that lists a Secret
//! or ConfigMap with the same data shares one parse of it (and one copy of its objects).

use std::collections::HashMap;
use std::sync::{Arc, Weak};

use serde_json::Value;
use sha2::{Digest, Sha256};

use super::{compute_hash, normalize_data, parse_objects, DataEntry, Resource, ResourceError};

/// Most failed parses remembered; past it they are forgotten (and parsed again if seen again).
const MAX_FAILURES: usize = 1024;

/// Parses of resource data by content. Objects are held weakly: an entry lives as long as some
/// [`Resource`] read through it does, so the cache never holds more than its readers do.
#[derive(Debug, Default)]
pub struct SharedParses {
    parsed: HashMap<[u8; 32], Weak<[Value]>>,
    failed: HashMap<[u8; 32], ResourceError>,
}

impl SharedParses {
    /// Reads `resource` as [`read_resource`](super::read_resource) does, parsing its data only
    /// when no live reader holds a parse of the same keys and values.
    pub fn read(&mut self, resource: &Value) -> Result<Resource, ResourceError> {
        let data = normalize_data(resource)?;
        let hash = compute_hash(&data);
        let content = content_key(&data);
        if let Some(error) = self.failed.get(&content) {
            return Err(error.clone());
        }
        if let Some(objects) = self.parsed.get(&content).and_then(Weak::upgrade) {
            return Ok(Resource { hash, objects });
        }
        match parse_objects(&data) {
            Ok(objects) => {
                let objects: Arc<[Value]> = objects.into();
                // Dead entries go when the map has doubled since it was last swept.
                if self.parsed.len() >= 64 && self.parsed.len().is_power_of_two() {
                    self.parsed.retain(|_, objects| objects.strong_count() > 0);
                }
                self.parsed.insert(content, Arc::downgrade(&objects));
                Ok(Resource { hash, objects })
            }
            Err(error) => {
                if self.failed.len() >= MAX_FAILURES {
                    self.failed.clear();
                }
                self.failed.insert(content, error.clone());
                Err(error)
            }
        }
    }
}

/// A digest of the keys and values (the binding's hash leaves the keys out, and two splits of
/// the same bytes into values parse differently).
fn content_key(data: &[DataEntry]) -> [u8; 32] {
    let mut hasher = Sha256::new();
    for entry in data {
        for part in [entry.key.as_bytes(), &entry.bytes] {
            hasher.update((part.len() as u64).to_le_bytes());
            hasher.update(part);
        }
    }
    hasher.finalize().into()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn config_map(name: &str, data: Value) -> Value {
        json!({"kind": "ConfigMap", "metadata": {"name": name}, "data": data})
    }

    #[test]
    fn the_same_data_is_parsed_once_and_shared() {
        let mut shared = SharedParses::default();
        let text = "kind: Namespace\nmetadata: {name: net}\n";
        let a = shared.read(&config_map("a", json!({"k": text}))).unwrap();
        let b = shared.read(&config_map("b", json!({"k": text}))).unwrap();
        assert!(Arc::ptr_eq(&a.objects, &b.objects), "two ConfigMaps, one parse");
        assert_eq!(
            a,
            super::super::read_resource(&config_map("a", json!({"k": text}))).unwrap()
        );
        let other_key = shared.read(&config_map("c", json!({"j": text}))).unwrap();
        assert!(!Arc::ptr_eq(&a.objects, &other_key.objects));
        assert_eq!(a.hash, other_key.hash, "the binding's hash leaves keys out");
        drop((a, b, other_key));
        let again = shared.read(&config_map("a", json!({"k": text}))).unwrap();
        assert_eq!(again.objects.len(), 1, "parsed again once nobody held it");
    }

    #[test]
    fn failures_are_remembered_too() {
        let mut shared = SharedParses::default();
        let bad = config_map("a", json!({"k": "kind: [\n"}));
        let first = shared.read(&bad).unwrap_err();
        assert_eq!(shared.failed.len(), 1);
        assert_eq!(shared.read(&bad).unwrap_err(), first);
    }
}
