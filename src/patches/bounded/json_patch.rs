//! RFC 6902 as Cluster API applies an extension's JSON patch (evanphx/json-patch v5 with its
//! default options: the six operations, `-` and negative array indices), within bounds: each
//! operation is paid for (path steps, values measured, copied or compared, array elements
//! shifted) and the object's size is kept up to date, so an operation that would grow it past a
//! bound is refused before anything is copied.

use std::fmt;

use serde::de::{self, Deserializer, SeqAccess, Visitor};
use serde::Deserialize;
use serde_json::Value;

use super::measure::{measure, string_bytes, within, Size};
use super::scan::check_values;
use super::{Bound, Budget, MAX_DEPTH, MAX_OPERATIONS, MAX_VALUES};
use crate::field::{truncate, truncated, MAX_RENDERED_DETAIL};
use crate::patches::pointer_ops::Pointer;

/// The longest path quoted in an error.
const QUOTED_PATH: usize = 256;

/// A decoded JSON patch: at most [`MAX_OPERATIONS`] operations.
#[derive(Debug, Clone, PartialEq)]
pub struct JsonPatch(Vec<Operation>);

/// One operation as written: checked when applied, as Cluster API's library does.
#[derive(Debug, Clone, PartialEq, Deserialize)]
struct Operation {
    op: String,
    #[serde(default)]
    path: Option<String>,
    #[serde(default)]
    from: Option<String>,
    /// `None` when absent (`null` is a value).
    #[serde(default, deserialize_with = "present")]
    value: Option<Value>,
}

fn present<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<Value>, D::Error> {
    Value::deserialize(deserializer).map(Some)
}

impl<'de> Deserialize<'de> for JsonPatch {
    /// An array of operations, refused past [`MAX_OPERATIONS`] as it is read.
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Operations;
        impl<'de> Visitor<'de> for Operations {
            type Value = JsonPatch;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an array of operations")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<JsonPatch, A::Error> {
                let mut operations = Vec::new();
                while let Some(operation) = seq.next_element()? {
                    if operations.len() == MAX_OPERATIONS {
                        return Err(de::Error::custom(Bound::Operations));
                    }
                    operations.push(operation);
                }
                Ok(JsonPatch(operations))
            }
        }
        deserializer.deserialize_seq(Operations)
    }
}

impl JsonPatch {
    /// Decodes the JSON patch `bytes`, refusing one with more than [`MAX_VALUES`] values or
    /// [`MAX_OPERATIONS`] operations before they are allocated.
    pub fn decode(bytes: &[u8]) -> Result<Self, String> {
        check_values(bytes, MAX_VALUES).map_err(|bound| format!("the patch has {bound}"))?;
        // serde quotes a wrongly typed string whole: cut as every echo of an answer is.
        serde_json::from_slice(bytes).map_err(|e| truncated(&e.to_string(), MAX_RENDERED_DETAIL))
    }

    /// Whether it has no operation.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Applies the operations in order to `doc`, paying `budget`; an error (`doc` may then be
    /// partly changed) names the operation and why, a bound included.
    pub fn apply(self, doc: &mut Value, budget: &mut Budget) -> Result<(), String> {
        let size = measure(doc, budget).map_err(|bound| bound.to_string())?;
        let mut document = Document {
            root: doc,
            size,
            budget,
        };
        for (index, operation) in self.0.into_iter().enumerate() {
            let shown = format!(
                "operation {index} ({} {})",
                truncate(operation.op.clone(), QUOTED_PATH),
                truncate(operation.path.clone().unwrap_or_default(), QUOTED_PATH)
            );
            document
                .apply(operation)
                .map_err(|why| format!("{shown}: {why}"))?;
        }
        Ok(())
    }
}

/// Applies the JSON patch `bytes` to `doc` within the bounds, paying `budget`: the decoding
/// error, or the application's (`doc` may then be partly changed).
pub fn apply_json_patch(doc: &mut Value, bytes: &[u8], budget: &mut Budget) -> Result<(), String> {
    JsonPatch::decode(bytes)?.apply(doc, budget)
}

/// Whether a value is placed by inserting (`add`) or by overwriting what is there (`replace`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    Add,
    Replace,
}

/// The object being patched, its size as patched so far, and the budget.
struct Document<'a> {
    root: &'a mut Value,
    size: Size,
    budget: &'a mut Budget,
}

impl Document<'_> {
    fn apply(&mut self, operation: Operation) -> Result<(), String> {
        self.budget.charge(1).map_err(|b| b.to_string())?;
        let path = pointer(operation.path.as_deref(), "path")?;
        let value = operation.value.ok_or_else(|| "missing value".to_owned());
        match operation.op.as_str() {
            "add" => self.put(path.tokens(), value?, Mode::Add),
            "replace" => self.put(path.tokens(), value?, Mode::Replace),
            "remove" => self.remove(path.tokens()).map(drop),
            "move" => {
                let from = pointer(operation.from.as_deref(), "from")?;
                let (moved, _) = self.remove(from.tokens())?;
                self.put(path.tokens(), moved, Mode::Add)
            }
            "copy" => {
                let from = pointer(operation.from.as_deref(), "from")?;
                self.copy(from.tokens(), path.tokens())
            }
            "test" => self.test(path.tokens(), &value?),
            other => Err(format!(
                "unexpected kind {:?}: must be one of add, remove, replace, move, copy, test",
                truncate(other.to_owned(), QUOTED_PATH)
            )),
        }
    }

    /// Places `value` at `tokens` once the object it makes is within bounds.
    fn put(&mut self, tokens: &[String], value: Value, mode: Mode) -> Result<(), String> {
        let size = measure(&value, self.budget).map_err(|b| b.to_string())?;
        let grown = self.placed(tokens, size, mode)?;
        self.place(tokens, value, mode)?;
        self.size = grown;
        Ok(())
    }

    /// Copies the value at `from` to `to`: measured, and the copy's size checked, before it is made.
    fn copy(&mut self, from: &[String], to: &[String]) -> Result<(), String> {
        self.budget.charge(from.len()).map_err(|b| b.to_string())?;
        let source = get(self.root, from)?;
        let size = measure(source, self.budget).map_err(|b| b.to_string())?;
        let grown = self.placed(to, size, Mode::Add)?;
        self.budget.charge(size.values).map_err(|b| b.to_string())?;
        let copied = get(self.root, from)?.clone();
        self.place(to, copied, Mode::Add)?;
        self.size = grown;
        Ok(())
    }

    /// Fails unless the value at `tokens` equals `expected`.
    fn test(&mut self, tokens: &[String], expected: &Value) -> Result<(), String> {
        self.budget.charge(tokens.len()).map_err(|b| b.to_string())?;
        let actual = get(self.root, tokens)?;
        measure(expected, self.budget).map_err(|b| b.to_string())?;
        if actual == expected {
            Ok(())
        } else {
            Err("testing value failed".to_owned())
        }
    }

    /// The size of the object once a value of `size` is placed at `tokens`, checked against the
    /// bounds; the elements an insertion shifts and the value it overwrites are paid for.
    fn placed(&mut self, tokens: &[String], size: Size, mode: Mode) -> Result<Size, String> {
        let bound = |b: Bound| b.to_string();
        if tokens.len() + size.depth > MAX_DEPTH {
            return Err(bound(Bound::Depth));
        }
        self.budget.charge(tokens.len()).map_err(bound)?;
        let Some((last, parents)) = tokens.split_last() else {
            within(size).map_err(bound)?;
            return Ok(size);
        };
        let (added, old) = match get(self.root, parents)? {
            Value::Object(map) => match (map.get(last), mode) {
                (Some(old), _) => (size.bytes, measure(old, self.budget).map_err(bound)?),
                (None, Mode::Replace) => return Err(missing(last)),
                (None, Mode::Add) => (
                    size.bytes + string_bytes(last) + 1 + comma(map.len()),
                    Size::default(),
                ),
            },
            Value::Array(items) => match mode {
                Mode::Add => {
                    let at = insertion(last, items.len())?;
                    self.budget.charge(items.len() - at).map_err(bound)?;
                    (size.bytes + comma(items.len()), Size::default())
                }
                Mode::Replace => {
                    let old = &items[element(last, items.len())?];
                    (size.bytes, measure(old, self.budget).map_err(bound)?)
                }
            },
            _ => return Err(missing(last)),
        };
        let grown = Size {
            values: self.size.values - old.values + size.values,
            bytes: self.size.bytes - old.bytes + added,
            depth: self.size.depth.max(tokens.len() + size.depth),
        };
        within(grown).map_err(bound)?;
        Ok(grown)
    }

    /// Places `value` at `tokens` (already checked by [`Self::placed`]).
    fn place(&mut self, tokens: &[String], value: Value, mode: Mode) -> Result<(), String> {
        let Some((last, parents)) = tokens.split_last() else {
            *self.root = value;
            return Ok(());
        };
        match get_mut(self.root, parents)? {
            Value::Object(map) => {
                map.insert(last.clone(), value);
            }
            Value::Array(items) => match mode {
                Mode::Add => {
                    let at = insertion(last, items.len())?;
                    items.insert(at, value);
                }
                Mode::Replace => {
                    let at = element(last, items.len())?;
                    items[at] = value;
                }
            },
            _ => return Err(missing(last)),
        }
        Ok(())
    }

    /// Takes the value at `tokens` out of the object, with its size; the elements or members
    /// after it, which shift, are paid for.
    fn remove(&mut self, tokens: &[String]) -> Result<(Value, Size), String> {
        let bound = |b: Bound| b.to_string();
        let Some((last, parents)) = tokens.split_last() else {
            return Err("the whole document cannot be removed".to_owned());
        };
        self.budget.charge(tokens.len()).map_err(bound)?;
        let (removed, member, left) = match get_mut(self.root, parents)? {
            Value::Object(map) => {
                // Keeping the order shifts the members after it: paid as if all did.
                self.budget.charge(map.len()).map_err(bound)?;
                let removed = map.shift_remove(last.as_str()).ok_or_else(|| missing(last))?;
                (removed, string_bytes(last) + 1, map.len())
            }
            Value::Array(items) => {
                let at = element(last, items.len())?;
                self.budget.charge(items.len() - at).map_err(bound)?;
                (items.remove(at), 0, items.len())
            }
            _ => return Err(missing(last)),
        };
        let size = measure(&removed, self.budget).map_err(bound)?;
        self.size.values -= size.values;
        self.size.bytes -= size.bytes + member + comma(left);
        Ok((removed, size))
    }
}

/// The separator a container of `len` members has before another one.
fn comma(len: usize) -> usize {
    usize::from(len > 0)
}

/// The pointer of the member `name`, which must be given.
fn pointer(text: Option<&str>, name: &str) -> Result<Pointer, String> {
    let text = text.ok_or_else(|| format!("missing {name}"))?;
    Pointer::parse(text).map_err(|e| truncate(e, 2 * QUOTED_PATH))
}

fn missing(token: &str) -> String {
    format!(
        "doc is missing path at {:?}",
        truncate(token.to_owned(), QUOTED_PATH)
    )
}

/// The value at `tokens`.
fn get<'v>(root: &'v Value, tokens: &[String]) -> Result<&'v Value, String> {
    tokens.iter().try_fold(root, |node, token| match node {
        Value::Object(map) => map.get(token).ok_or_else(|| missing(token)),
        Value::Array(items) => Ok(&items[element(token, items.len())?]),
        _ => Err(missing(token)),
    })
}

/// The value at `tokens`, to change.
fn get_mut<'v>(root: &'v mut Value, tokens: &[String]) -> Result<&'v mut Value, String> {
    tokens.iter().try_fold(root, |node, token| match node {
        Value::Object(map) => map.get_mut(token).ok_or_else(|| missing(token)),
        Value::Array(items) => {
            let at = element(token, items.len())?;
            Ok(&mut items[at])
        }
        _ => Err(missing(token)),
    })
}

/// The existing element `token` names in an array of `len` (negative counts from the end).
fn element(token: &str, len: usize) -> Result<usize, String> {
    position(token, len).ok_or_else(|| {
        format!(
            "unable to access invalid index: {}",
            truncate(token.to_owned(), QUOTED_PATH)
        )
    })
}

/// Where `token` inserts into an array of `len`: `-` appends; negative counts from the end of
/// the array as it will be.
fn insertion(token: &str, len: usize) -> Result<usize, String> {
    if token == "-" {
        return Ok(len);
    }
    element(token, len + 1)
}

/// An index as Go's `strconv.Atoi` reads it, negative ones counted from `len`; `None` outside.
fn position(token: &str, len: usize) -> Option<usize> {
    let index: i64 = token.parse().ok()?;
    let len = i64::try_from(len).ok()?;
    let index = if index < 0 { index + len } else { index };
    (0..len)
        .contains(&index)
        .then(|| usize::try_from(index).ok())
        .flatten()
}

#[cfg(test)]
#[path = "json_patch_tests.rs"]
mod tests;
