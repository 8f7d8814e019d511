//! Reading a value out of the variables visible to a template: `name`, `obj.field`,
//! `list[0].field`, `builtin.cluster.name`.

use serde_json::{Map, Value};

/// Why a variable path could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum VariablePathError {
    /// The path is empty or has an empty segment.
    #[error("variable path {0:?} has an empty segment")]
    EmptySegment(String),
    /// A segment's `[index]` is malformed.
    #[error("variable path {path:?}: invalid index in {segment:?}")]
    BadIndex {
        /// The whole path.
        path: String,
        /// The segment at fault.
        segment: String,
    },
    /// A key does not exist.
    #[error("variable {0:?} not found")]
    NotFound(String),
    /// An index is out of range, or used on something that is not a list.
    #[error("variable path {path:?}: index {index} out of range")]
    OutOfRange {
        /// The whole path.
        path: String,
        /// The index.
        index: usize,
    },
}

/// The value at `path` among `variables`, JSON types kept.
pub fn lookup(variables: &Map<String, Value>, path: &str) -> Result<Value, VariablePathError> {
    let mut current: Option<&Value> = None;
    for segment in path.split('.') {
        let (key, index) = split_segment(path, segment)?;
        let map = match current {
            None => Some(variables),
            Some(value) => value.as_object(),
        };
        let mut value = map
            .and_then(|m| m.get(key))
            .ok_or_else(|| VariablePathError::NotFound(path.to_owned()))?;
        if let Some(index) = index {
            value = value
                .as_array()
                .and_then(|items| items.get(index))
                .ok_or_else(|| VariablePathError::OutOfRange {
                    path: path.to_owned(),
                    index,
                })?;
        }
        current = Some(value);
    }
    current
        .cloned()
        .ok_or_else(|| VariablePathError::EmptySegment(path.to_owned()))
}

/// Splits `name[3]` into `("name", Some(3))`.
fn split_segment<'a>(path: &str, segment: &'a str) -> Result<(&'a str, Option<usize>), VariablePathError> {
    let bad = || VariablePathError::BadIndex {
        path: path.to_owned(),
        segment: segment.to_owned(),
    };
    let (key, index) = match segment.split_once('[') {
        None => (segment, None),
        Some((key, rest)) => {
            let digits = rest.strip_suffix(']').ok_or_else(bad)?;
            (key, Some(digits.parse::<usize>().map_err(|_| bad())?))
        }
    };
    if key.is_empty() {
        return Err(VariablePathError::EmptySegment(path.to_owned()));
    }
    Ok((key, index))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn vars() -> Map<String, Value> {
        json!({"region": "eu", "obj": {"a": {"b": 3}}, "list": [{"n": "x"}, {"n": "y"}],
               "builtin": {"cluster": {"name": "c1"}}})
        .as_object()
        .cloned()
        .unwrap()
    }

    #[test]
    fn reads_names_fields_and_indexes() {
        assert_eq!(lookup(&vars(), "region"), Ok(json!("eu")));
        assert_eq!(lookup(&vars(), "obj.a.b"), Ok(json!(3)));
        assert_eq!(lookup(&vars(), "obj.a"), Ok(json!({"b": 3})));
        assert_eq!(lookup(&vars(), "list[1].n"), Ok(json!("y")));
        assert_eq!(lookup(&vars(), "builtin.cluster.name"), Ok(json!("c1")));
    }

    #[test]
    fn missing_keys_bad_and_out_of_range_indexes_are_errors() {
        assert_eq!(
            lookup(&vars(), "nope"),
            Err(VariablePathError::NotFound("nope".into()))
        );
        assert_eq!(
            lookup(&vars(), "obj.x"),
            Err(VariablePathError::NotFound("obj.x".into()))
        );
        assert_eq!(
            lookup(&vars(), "list[2]"),
            Err(VariablePathError::OutOfRange {
                path: "list[2]".into(),
                index: 2
            })
        );
        assert!(matches!(
            lookup(&vars(), "list[x]"),
            Err(VariablePathError::BadIndex { .. })
        ));
        assert!(matches!(
            lookup(&vars(), "region[0]"),
            Err(VariablePathError::OutOfRange { .. })
        ));
        assert!(matches!(
            lookup(&vars(), "obj..a"),
            Err(VariablePathError::EmptySegment(_))
        ));
    }
}
