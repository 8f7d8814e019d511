//! RFC 7386 as Cluster API applies an extension's JSON merge patch, within bounds: a merge patch
//! is linear to apply and its result no larger than the object and the patch together, so its
//! cost is paid up front and the result is measured once.

use serde_json::Value;

use super::measure::{measure, within};
use super::scan::check_values;
use super::{Budget, MAX_VALUES};

/// Merges the merge patch `bytes` into `doc`, paying `budget` for the values of both; an error
/// (`doc` may then be partly changed) says why.
pub fn apply_merge_patch(doc: &mut Value, bytes: &[u8], budget: &mut Budget) -> Result<(), String> {
    check_values(bytes, MAX_VALUES).map_err(|bound| format!("the patch has {bound}"))?;
    let patch: Value = serde_json::from_slice(bytes).map_err(|e| e.to_string())?;
    measure(&patch, budget).map_err(|bound| bound.to_string())?;
    measure(doc, budget).map_err(|bound| bound.to_string())?;
    json_patch::merge(doc, &patch);
    let size = measure(doc, budget).map_err(|bound| bound.to_string())?;
    within(size).map_err(|bound| bound.to_string())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::patches::bounded::{Budget, MAX_OBJECT_BYTES};

    fn merge(doc: &mut Value, patch: &str) -> Result<(), String> {
        apply_merge_patch(doc, patch.as_bytes(), &mut Budget::default())
    }

    #[test]
    fn a_merge_patch_sets_and_removes_members() {
        let mut doc = json!({"spec": {"a": 1, "b": {"c": 2}}});
        merge(&mut doc, r#"{"spec": {"a": null, "b": {"d": [3]}}}"#).unwrap();
        assert_eq!(doc, json!({"spec": {"b": {"c": 2, "d": [3]}}}));
        assert!(merge(&mut doc, "{").is_err());
    }

    #[test]
    fn a_merge_patch_is_bounded() {
        let mut doc = json!({"spec": {}});
        let big = format!(r#"{{"spec": {{"data": "{}"}}}}"#, "x".repeat(MAX_OBJECT_BYTES));
        let err = merge(&mut doc, &big).unwrap_err();
        assert!(
            err.contains("over the 1572864 bytes the API server stores"),
            "{err}"
        );
        let many = format!("[{}0]", "0,".repeat(MAX_VALUES));
        assert_eq!(
            merge(&mut doc, &many).unwrap_err(),
            "the patch has more than 524288 values"
        );
        let mut small = Budget::new(2);
        assert!(apply_merge_patch(&mut doc, b"{\"a\": 1}", &mut small)
            .unwrap_err()
            .contains("work budget"));
    }
}
