//! A JSON value read from YAML or JSON that remembers the keys a mapping repeats (the last one
//! wins, as before), so strict field validation can refuse them as the API server does.

use std::cell::RefCell;
use std::fmt;

use serde::de::{DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Number, Value};

/// Most repeated keys remembered per document: past it, further ones are not named.
const MAX_DUPLICATES: usize = 100;
/// Longest path named, in bytes (a hostile key can be megabytes long).
const MAX_PATH: usize = 1024;

/// What reading one document noted.
#[derive(Debug, Default)]
pub(super) struct Seen {
    /// The path to the node being read, one entry per key or index.
    stack: RefCell<Vec<String>>,
    /// Paths of repeated keys (`spec.topology.version`, `items[0].spec.x`), in reading order.
    pub(super) duplicates: RefCell<Vec<String>>,
}

impl Seen {
    fn path_with(&self, last: &str) -> String {
        let stack = self.stack.borrow();
        let mut path = String::new();
        for segment in stack.iter().map(String::as_str).chain([last]) {
            if !path.is_empty() && !segment.starts_with('[') {
                path.push('.');
            }
            path.push_str(segment);
            if path.len() > MAX_PATH {
                return crate::field::truncate(path, MAX_PATH);
            }
        }
        path
    }
}

/// Reads one value, noting repeated keys in `Seen`.
pub(super) struct Tracked<'a>(pub(super) &'a Seen);

impl<'de> DeserializeSeed<'de> for Tracked<'_> {
    type Value = Value;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl Tracked<'_> {
    fn child<T>(&self, segment: String, read: impl FnOnce(Tracked<'_>) -> T) -> T {
        self.0.stack.borrow_mut().push(segment);
        let out = read(Tracked(self.0));
        self.0.stack.borrow_mut().pop();
        out
    }
}

impl<'de> Visitor<'de> for Tracked<'_> {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any YAML or JSON value")
    }

    fn visit_bool<E>(self, value: bool) -> Result<Value, E> {
        Ok(Value::Bool(value))
    }

    fn visit_i64<E>(self, value: i64) -> Result<Value, E> {
        Ok(Value::Number(value.into()))
    }

    fn visit_u64<E>(self, value: u64) -> Result<Value, E> {
        Ok(Value::Number(value.into()))
    }

    fn visit_f64<E>(self, value: f64) -> Result<Value, E> {
        Ok(Number::from_f64(value).map_or(Value::Null, Value::Number))
    }

    fn visit_str<E>(self, value: &str) -> Result<Value, E> {
        Ok(Value::String(value.to_owned()))
    }

    fn visit_string<E>(self, value: String) -> Result<Value, E> {
        Ok(Value::String(value))
    }

    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_some<D: Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        deserializer.deserialize_any(self)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::new();
        loop {
            let index = format!("[{}]", items.len());
            let Some(item) = self.child(index, |tracked| seq.next_element_seed(tracked))? else {
                break;
            };
            items.push(item);
        }
        Ok(Value::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut object = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            let value = self.child(key.clone(), |tracked| map.next_value_seed(tracked))?;
            if object.insert(key.clone(), value).is_some() {
                let mut duplicates = self.0.duplicates.borrow_mut();
                if duplicates.len() < MAX_DUPLICATES {
                    duplicates.push(self.0.path_with(&key));
                }
            }
        }
        Ok(Value::Object(object))
    }
}
