//! The hash a ClusterResourceSetBinding records for a resource, computed as Cluster API
//! computes it, so bindings written by either controller agree.

use std::fmt::Write;

use sha2::{Digest, Sha256};

use super::DataEntry;

/// `sha256:<hex>` over the normalized data values, concatenated in key order (the keys
/// themselves are not hashed, as in Cluster API).
pub fn compute_hash(data: &[DataEntry]) -> String {
    let mut hasher = Sha256::new();
    for entry in data {
        hasher.update(&entry.bytes);
    }
    let digest = hasher.finalize();
    let mut out = String::with_capacity("sha256:".len() + 2 * digest.len());
    out.push_str("sha256:");
    for byte in digest.iter() {
        // Writing to a String cannot fail.
        let _ = write!(out, "{byte:02x}");
    }
    out
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

    #[test]
    fn hashes_the_values_in_order_and_not_the_keys() {
        assert_eq!(
            compute_hash(&[]),
            "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
        let ours = compute_hash(&[entry("a", "one"), entry("b", "two")]);
        assert_eq!(
            ours, "sha256:25b6746d5172ed6352966a013d93ac846e1110d5a25e8f183b5931f4688842a1",
            "sha256 of \"onetwo\""
        );
        assert_eq!(ours, compute_hash(&[entry("x", "one"), entry("y", "two")]));
        assert_ne!(ours, compute_hash(&[entry("a", "two"), entry("b", "one")]));
    }
}
