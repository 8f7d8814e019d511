//! The size of a JSON value as the API server would store it: values, compact-JSON bytes and
//! nesting, measured without recursion and paid for from a [`Budget`].

use std::fmt::Write;

use serde_json::Value;

use super::{Bound, Budget, MAX_DEPTH, MAX_OBJECT_BYTES, MAX_VALUES};

/// How large a value is.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Size {
    /// Scalars, arrays and objects, itself included.
    pub values: usize,
    /// Its compact JSON serialisation's length.
    pub bytes: usize,
    /// How many arrays and objects nest at its deepest (0 for a scalar).
    pub depth: usize,
}

/// The size of `value`, one unit of `budget` per value.
pub fn measure(value: &Value, budget: &mut Budget) -> Result<Size, Bound> {
    let mut size = Size::default();
    let mut pending = vec![(value, 0usize)];
    while let Some((value, level)) = pending.pop() {
        budget.charge(1)?;
        size.values += 1;
        size.bytes += match value {
            Value::Array(items) => {
                size.depth = size.depth.max(level + 1);
                pending.extend(items.iter().map(|item| (item, level + 1)));
                2 + items.len().saturating_sub(1)
            }
            Value::Object(map) => {
                size.depth = size.depth.max(level + 1);
                pending.extend(map.values().map(|item| (item, level + 1)));
                let keys: usize = map.keys().map(|key| string_bytes(key) + 1).sum();
                2 + map.len().saturating_sub(1) + keys
            }
            scalar => scalar_bytes(scalar),
        };
    }
    Ok(size)
}

/// `Err(Bound::Bytes)` when `object` serialises to more than [`MAX_OBJECT_BYTES`]: the API
/// server refuses such an object, so it is an error before it is applied or shown.
pub fn check_object_size(object: &Value) -> Result<(), Bound> {
    let size = measure(object, &mut Budget::new(u64::MAX))?;
    if size.bytes > MAX_OBJECT_BYTES {
        return Err(Bound::Bytes(size.bytes));
    }
    Ok(())
}

/// Whether an object of `size` is within the bounds of a patched object.
pub(super) fn within(size: Size) -> Result<(), Bound> {
    if size.values > MAX_VALUES {
        Err(Bound::Values)
    } else if size.bytes > MAX_OBJECT_BYTES {
        Err(Bound::Bytes(size.bytes))
    } else if size.depth > MAX_DEPTH {
        Err(Bound::Depth)
    } else {
        Ok(())
    }
}

/// The length of a scalar's compact JSON.
fn scalar_bytes(value: &Value) -> usize {
    match value {
        Value::Null | Value::Bool(true) => 4,
        Value::Bool(false) => 5,
        Value::Number(number) => {
            let mut counter = Counter(0);
            let _ = write!(counter, "{number}");
            counter.0
        }
        Value::String(text) => string_bytes(text),
        Value::Array(_) | Value::Object(_) => 0,
    }
}

/// The length of `text` as a JSON string, quotes and escapes included (as serde_json escapes).
pub(super) fn string_bytes(text: &str) -> usize {
    let escapes: usize = text
        .bytes()
        .map(|byte| match byte {
            b'"' | b'\\' | b'\n' | b'\r' | b'\t' | 0x08 | 0x0c => 1,
            0..=0x1f => 5,
            _ => 0,
        })
        .sum();
    2 + text.len() + escapes
}

/// Counts what is written to it.
struct Counter(usize);

impl Write for Counter {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        self.0 += s.len();
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn the_measured_bytes_are_the_compact_serialisation() {
        for value in [
            json!(null),
            json!(false),
            json!(-1.5e300),
            json!(12345678901234567u64),
            json!("a\"b\\c\n\u{1}é"),
            json!([]),
            json!({}),
            json!([1, [2, []], {"k\"ey": {"x": [null, true]}}]),
            json!({"spec": {"template": {"spec": {"list": ["a", "b"], "n": 0.25}}}}),
        ] {
            let size = measure(&value, &mut Budget::default()).unwrap();
            assert_eq!(
                size.bytes,
                serde_json::to_string(&value).unwrap().len(),
                "{value}"
            );
        }
        let size = measure(&json!([1, [2, []], {"k": {"x": [null]}}]), &mut Budget::default()).unwrap();
        assert_eq!(size.values, 9);
        assert_eq!(size.depth, 4);
        assert_eq!(measure(&json!(1), &mut Budget::default()).unwrap().depth, 0);
    }

    #[test]
    fn measuring_is_paid_for_and_objects_are_capped() {
        assert_eq!(measure(&json!([1, 2, 3]), &mut Budget::new(3)), Err(Bound::Work));
        assert_eq!(check_object_size(&json!({"a": "b"})), Ok(()));
        let large = json!({"data": "x".repeat(MAX_OBJECT_BYTES)});
        assert_eq!(
            check_object_size(&large),
            Err(Bound::Bytes(MAX_OBJECT_BYTES + 11))
        );
    }
}
