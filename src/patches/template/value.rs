//! Runtime values of template execution, modelled on the Go values a template sees.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;

use super::version::Version;

/// A map value (Go `map[string]interface{}`); shared and mutable like a Go map (`set`).
pub(crate) type MapRef = Rc<RefCell<BTreeMap<String, Value>>>;

/// A value during execution.
#[derive(Debug, Clone)]
pub(crate) enum Value {
    /// Go's invalid `reflect.Value`: a missing map key; prints `<no value>`.
    Missing,
    /// A nil interface (JSON null); prints `<nil>`.
    Nil,
    /// Go `bool`.
    Bool(bool),
    /// Go `int` (template literals, `len`, `int`).
    Int(i64),
    /// Go `int64` (sprig arithmetic).
    Int64(i64),
    /// Go `uint64` (semver fields).
    Uint(u64),
    /// Go `float64` (every JSON number).
    Float(f64),
    /// Go `string`.
    Str(String),
    /// Go `[]interface{}`.
    List(Rc<Vec<Value>>),
    /// Go `map[string]interface{}`.
    Map(MapRef),
    /// A `*semver.Version`.
    Version(Rc<Version>),
}

/// Deepest nesting walked by recursive value operations (printing, JSON, equality).
pub(crate) const MAX_VALUE_DEPTH: usize = 200;

impl Value {
    /// Converts decoded JSON the way Go's `encoding/json` fills an `interface{}`;
    /// `None` when nested deeper than [`MAX_VALUE_DEPTH`].
    pub(crate) fn from_json(json: &serde_json::Value) -> Option<Value> {
        Self::from_json_at(json, 0)
    }

    /// Converts a JSON object (see [`Value::from_json`]) without wrapping it first.
    pub(crate) fn from_json_map(map: &serde_json::Map<String, serde_json::Value>) -> Option<Value> {
        Some(Value::new_map(
            map.iter()
                .map(|(k, v)| Some((k.clone(), Self::from_json_at(v, 1)?)))
                .collect::<Option<_>>()?,
        ))
    }

    /// Converts `json` found at nesting `depth` of the data (see [`Value::from_json`]).
    pub(crate) fn from_json_at(json: &serde_json::Value, depth: usize) -> Option<Value> {
        if depth > MAX_VALUE_DEPTH {
            return None;
        }
        Some(match json {
            serde_json::Value::Null => Value::Nil,
            serde_json::Value::Bool(b) => Value::Bool(*b),
            serde_json::Value::Number(n) => Value::Float(n.as_f64().unwrap_or(0.0)),
            serde_json::Value::String(s) => Value::Str(s.clone()),
            serde_json::Value::Array(items) => Value::new_list(
                items
                    .iter()
                    .map(|v| Self::from_json_at(v, depth + 1))
                    .collect::<Option<_>>()?,
            ),
            serde_json::Value::Object(map) => Value::new_map(
                map.iter()
                    .map(|(k, v)| Some((k.clone(), Self::from_json_at(v, depth + 1)?)))
                    .collect::<Option<_>>()?,
            ),
        })
    }

    /// Wraps a map.
    pub(crate) fn new_map(map: BTreeMap<String, Value>) -> Value {
        Value::Map(Rc::new(RefCell::new(map)))
    }

    /// Wraps a list.
    pub(crate) fn new_list(items: Vec<Value>) -> Value {
        Value::List(Rc::new(items))
    }

    /// Wraps a list of strings.
    pub(crate) fn str_list(items: Vec<String>) -> Value {
        Value::new_list(items.into_iter().map(Value::Str).collect())
    }

    /// Go's type name (`%T`), used in error messages and `typeOf`.
    pub(crate) fn type_name(&self) -> &'static str {
        match self {
            Value::Missing | Value::Nil => "<nil>",
            Value::Bool(_) => "bool",
            Value::Int(_) => "int",
            Value::Int64(_) => "int64",
            Value::Uint(_) => "uint64",
            Value::Float(_) => "float64",
            Value::Str(_) => "string",
            Value::List(_) => "[]interface {}",
            Value::Map(_) => "map[string]interface {}",
            Value::Version(_) => "*semver.Version",
        }
    }

    /// Go's reflect kind name (`kindOf`).
    pub(crate) fn kind_name(&self) -> &'static str {
        match self {
            Value::Missing | Value::Nil => "invalid",
            Value::List(_) => "slice",
            Value::Map(_) => "map",
            Value::Version(_) => "ptr",
            other => other.type_name(),
        }
    }

    /// Go template truth: empty strings, zero numbers, false, nil and empty collections are false.
    pub(crate) fn is_true(&self) -> bool {
        match self {
            Value::Missing | Value::Nil => false,
            Value::Bool(b) => *b,
            Value::Int(i) | Value::Int64(i) => *i != 0,
            Value::Uint(u) => *u != 0,
            Value::Float(f) => *f != 0.0,
            Value::Str(s) => !s.is_empty(),
            Value::List(l) => !l.is_empty(),
            Value::Map(m) => !m.borrow().is_empty(),
            Value::Version(_) => true,
        }
    }

    /// Go-style deep equality (`reflect.DeepEqual`); `budget` bounds the nodes visited.
    pub(crate) fn deep_equal(&self, other: &Value, budget: &mut usize) -> Result<bool, String> {
        self.deep_equal_at(other, budget, 0)
    }

    fn deep_equal_at(&self, other: &Value, budget: &mut usize, depth: usize) -> Result<bool, String> {
        if depth > MAX_VALUE_DEPTH || *budget == 0 {
            return Err("values too large or too deeply nested to compare".into());
        }
        *budget -= 1;
        Ok(match (self, other) {
            (Value::Missing | Value::Nil, Value::Missing | Value::Nil) => true,
            (Value::Bool(a), Value::Bool(b)) => a == b,
            (Value::Int(a), Value::Int(b)) | (Value::Int64(a), Value::Int64(b)) => a == b,
            (Value::Uint(a), Value::Uint(b)) => a == b,
            (Value::Float(a), Value::Float(b)) => a == b,
            (Value::Str(a), Value::Str(b)) => a == b,
            (Value::List(a), Value::List(b)) => {
                if a.len() != b.len() {
                    return Ok(false);
                }
                for (x, y) in a.iter().zip(b.iter()) {
                    if !x.deep_equal_at(y, budget, depth + 1)? {
                        return Ok(false);
                    }
                }
                true
            }
            (Value::Map(a), Value::Map(b)) => {
                if Rc::ptr_eq(a, b) {
                    return Ok(true);
                }
                let a: Vec<(String, Value)> =
                    a.borrow().iter().map(|(k, v)| (k.clone(), v.clone())).collect();
                let b: Vec<(String, Value)> =
                    b.borrow().iter().map(|(k, v)| (k.clone(), v.clone())).collect();
                if a.len() != b.len() {
                    return Ok(false);
                }
                for ((ka, va), (kb, vb)) in a.iter().zip(b.iter()) {
                    if ka != kb || !va.deep_equal_at(vb, budget, depth + 1)? {
                        return Ok(false);
                    }
                }
                true
            }
            (Value::Version(a), Value::Version(b)) => a == b,
            _ => false,
        })
    }

    /// Converts to JSON like Go's `encoding/json` would marshal it; `budget` bounds the nodes.
    pub(crate) fn to_json(&self, budget: &mut usize) -> Result<serde_json::Value, String> {
        self.to_json_at(budget, 0)
    }

    fn to_json_at(&self, budget: &mut usize, depth: usize) -> Result<serde_json::Value, String> {
        if depth > MAX_VALUE_DEPTH || *budget == 0 {
            return Err("json: value too large or too deeply nested".to_string());
        }
        *budget -= 1;
        Ok(match self {
            Value::Missing | Value::Nil => serde_json::Value::Null,
            Value::Bool(b) => serde_json::Value::Bool(*b),
            Value::Int(i) | Value::Int64(i) => serde_json::Value::from(*i),
            Value::Uint(u) => serde_json::Value::from(*u),
            Value::Float(f) => {
                if !f.is_finite() {
                    return Err(format!(
                        "json: unsupported value: {}",
                        super::float::format_float_v(*f)
                    ));
                }
                json_number(*f)
            }
            Value::Str(s) => serde_json::Value::String(s.clone()),
            Value::List(items) => serde_json::Value::Array(
                items
                    .iter()
                    .map(|v| v.to_json_at(budget, depth + 1))
                    .collect::<Result<_, _>>()?,
            ),
            Value::Map(map) => {
                let mut out = serde_json::Map::new();
                let entries: Vec<(String, Value)> =
                    map.borrow().iter().map(|(k, v)| (k.clone(), v.clone())).collect();
                for (k, v) in entries {
                    out.insert(k, v.to_json_at(budget, depth + 1)?);
                }
                serde_json::Value::Object(out)
            }
            Value::Version(v) => serde_json::Value::String(v.to_string()),
        })
    }
}

/// A JSON number for a float, written as an integer when Go's encoder would print no fraction.
pub(crate) fn json_number(f: f64) -> serde_json::Value {
    if f.fract() == 0.0 && f.abs() < 9.007_199_254_740_992e15 {
        // Exactly representable integers: Go prints them without a fraction.
        serde_json::Value::from(f as i64)
    } else {
        serde_json::Number::from_f64(f)
            .map(serde_json::Value::Number)
            .unwrap_or(serde_json::Value::Null)
    }
}

impl Version {
    /// A method reachable as a field (`.Major`, `.Prerelease`, ...).
    pub(crate) fn method(&self, name: &str) -> Option<Value> {
        Some(match name {
            "Major" => Value::Uint(self.major),
            "Minor" => Value::Uint(self.minor),
            "Patch" => Value::Uint(self.patch),
            "Prerelease" => Value::Str(self.pre.clone()),
            "Metadata" => Value::Str(self.metadata.clone()),
            "Original" => Value::Str(self.original.clone()),
            "String" => Value::Str(self.to_string()),
            _ => return None,
        })
    }
}
