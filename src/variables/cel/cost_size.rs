//! Sizes for the static cost estimate: the size arithmetic of cel-go's estimator (saturating,
//! factors rounded up), and how large the API server takes a value of a schema to be (its CEL
//! declaration's `MaxElements` and `MinSerializedSize`).

use crate::api::JSONSchemaProps;

/// The largest request the API server accepts (`MaxRequestSizeBytes`).
pub const MAX_REQUEST_SIZE_BYTES: u64 = 3 * 1024 * 1024;

/// The smallest and largest size (characters, bytes or elements) a value can have.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Size {
    pub min: u64,
    pub max: u64,
}

impl Size {
    /// Exactly `n`.
    pub fn fixed(n: u64) -> Size {
        Size { min: n, max: n }
    }

    /// Anything from 0 to the largest `u64`.
    pub fn unknown() -> Size {
        Size {
            min: 0,
            max: u64::MAX,
        }
    }

    /// The sizes of two values put together.
    pub fn add(self, other: Size) -> Size {
        Size {
            min: self.min.saturating_add(other.min),
            max: self.max.saturating_add(other.max),
        }
    }

    /// The product of two sizes.
    pub fn mul(self, other: Size) -> Size {
        Size {
            min: self.min.saturating_mul(other.min),
            max: self.max.saturating_mul(other.max),
        }
    }

    /// The range covering both.
    pub fn union(self, other: Size) -> Size {
        Size {
            min: self.min.min(other.min),
            max: self.max.max(other.max),
        }
    }

    /// The largest size times a cost factor, rounded up (cel-go's `MultiplyByCostFactor`).
    pub fn factor(self, per_unit: f64) -> u64 {
        factor(self.max, per_unit)
    }
}

/// `x * per_unit` rounded up, saturating at the largest `u64`.
pub fn factor(x: u64, per_unit: f64) -> u64 {
    let product = (x as f64 * per_unit).ceil();
    if product >= 18_446_744_073_709_551_616.0 {
        u64::MAX
    } else {
        product as u64
    }
}

/// A schema's largest size as the API server declares it to CEL: `maxLength` four bytes per
/// character, `maxItems`, `maxProperties`, or, without a bound, as many as fit in one request;
/// 0 for numbers, booleans and objects with properties.
pub fn max_elements(schema: &JSONSchemaProps) -> u64 {
    let bound = |max: i64| u64::try_from(max).unwrap_or(0);
    let unbounded_string = MAX_REQUEST_SIZE_BYTES - 2;
    if schema.is_int_or_string() {
        return schema
            .max_length
            .map_or(unbounded_string, |m| bound(m).saturating_mul(4));
    }
    match schema.type_.as_str() {
        "array" => match (&schema.items, schema.max_items) {
            (_, Some(max)) => bound(max),
            (Some(items), None) => unbounded_string / (min_serialized_size(items) + 1),
            (None, None) => 0,
        },
        "object" => match (&schema.additional_properties, schema.max_properties) {
            (Some(_), Some(max)) => bound(max),
            (Some(values), None) => unbounded_string / (min_serialized_size(values) + 6),
            (None, _) => 0,
        },
        "string" => string_max_elements(schema),
        _ => 0,
    }
}

fn string_max_elements(schema: &JSONSchemaProps) -> u64 {
    let bound = |max: i64| u64::try_from(max).unwrap_or(0);
    match (schema.format.as_str(), schema.max_length) {
        ("byte", Some(max)) => bound(max),
        ("duration" | "date-time", _) => 32,
        ("date", _) => 12,
        ("byte", None) => MAX_REQUEST_SIZE_BYTES - 2,
        (_, Some(max)) => bound(max).saturating_mul(4),
        (_, None) if !schema.r#enum.is_empty() => schema
            .r#enum
            .iter()
            .filter_map(|value| value.as_str())
            .map(|value| value.len() as u64)
            .max()
            .unwrap_or(0),
        (_, None) => MAX_REQUEST_SIZE_BYTES - 2,
    }
}

/// The fewest bytes a value of `schema` takes in JSON, as the API server counts them: an object
/// counts its required properties without a default.
pub fn min_serialized_size(schema: &JSONSchemaProps) -> u64 {
    if schema.is_int_or_string() {
        return 1;
    }
    match (schema.type_.as_str(), schema.format.as_str()) {
        ("boolean", _) => 4,
        ("integer" | "number", _) => 1,
        ("string", "duration") => 3,
        ("string", "date") => 12,
        ("string", "date-time") => 21,
        ("object", _) if schema.additional_properties.is_none() => {
            schema.properties.iter().fold(2, |sum, (name, property)| {
                let counted = schema.required.contains(name) && property.default.is_none();
                if counted {
                    sum.saturating_add(name.len() as u64 + min_serialized_size(property) + 4)
                } else {
                    sum
                }
            })
        }
        _ => 2,
    }
}

/// How many times a value of serialized size `min_size` (plus a comma each) fits in one request:
/// the cardinality of a node under lists or maps without bounds.
pub fn max_cardinality(min_size: u64) -> u64 {
    MAX_REQUEST_SIZE_BYTES / (min_size + 1)
}
