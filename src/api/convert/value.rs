//! Small moves on a JSON object tree: take a field out, put it under a path (creating the
//! objects on the way), drop containers a move left empty. Every converter is written with
//! these so that fields it does not name stay where they are.

use serde_json::{Map, Value};

/// A JSON object.
pub(super) type Obj = Map<String, Value>;

/// The object under `key`, when there is one.
pub(super) fn child<'a>(obj: &'a mut Obj, key: &str) -> Option<&'a mut Obj> {
    obj.get_mut(key).and_then(Value::as_object_mut)
}

/// The object at `path`, when every step is an object.
pub(super) fn at<'a>(obj: &'a mut Obj, path: &[&str]) -> Option<&'a mut Obj> {
    path.iter().try_fold(obj, |cur, key| child(cur, key))
}

/// The object under `key`, created empty when absent. A non-object value there is kept and
/// `None` returned, so that a malformed input is carried through rather than overwritten.
pub(super) fn child_or_new<'a>(obj: &'a mut Obj, key: &str) -> Option<&'a mut Obj> {
    obj.entry(key)
        .or_insert_with(|| Value::Object(Obj::new()))
        .as_object_mut()
}

/// Puts `value` at `path` below `obj`, creating objects on the way. A step that holds
/// something other than an object is left alone (the input was malformed) and `value` dropped.
pub(super) fn put(obj: &mut Obj, path: &[&str], value: Value) {
    let Some((last, parents)) = path.split_last() else {
        return;
    };
    let mut cur = obj;
    for key in parents {
        match child_or_new(cur, key) {
            Some(next) => cur = next,
            None => return,
        }
    }
    cur.insert((*last).to_owned(), value);
}

/// Takes the value at `path` out of `obj`, then removes the objects on the way that this left
/// empty.
pub(super) fn take(obj: &mut Obj, path: &[&str]) -> Option<Value> {
    match path {
        [] => None,
        [key] => obj.remove(*key),
        [key, rest @ ..] => {
            let inner = child(obj, key)?;
            let value = take(inner, rest);
            if value.is_some() && inner.is_empty() {
                obj.remove(*key);
            }
            value
        }
    }
}

/// Moves the value at `from` to `to` (both below `obj`), when there is one.
pub(super) fn rename(obj: &mut Obj, from: &[&str], to: &[&str]) {
    if let Some(value) = take(obj, from) {
        put(obj, to, value);
    }
}

/// A field that only changed place between a spoke and the hub, declared once: a kind's
/// `to_hub` runs it [`forwards`](Move::forwards) and its `from_hub`
/// [`backwards`](Move::backwards), so each way is the other's inverse by construction.
#[derive(Debug, Clone, Copy)]
pub(super) struct Move<'a> {
    /// Where the spoke keeps the field.
    pub(super) spoke: &'a [&'a str],
    /// Where the hub keeps it.
    pub(super) hub: &'a [&'a str],
}

impl Move<'_> {
    /// Spoke → hub: the value at `spoke`, when there is one, moved to `hub`.
    pub(super) fn forwards(self, obj: &mut Obj) {
        rename(obj, self.spoke, self.hub);
    }

    /// Hub → spoke: the value at `hub`, when there is one, moved back to `spoke`.
    pub(super) fn backwards(self, obj: &mut Obj) {
        rename(obj, self.hub, self.spoke);
    }
}

/// Removes `key` when it holds an empty object, array or string, or null.
pub(super) fn drop_empty(obj: &mut Obj, key: &str) {
    if obj.get(key).is_some_and(is_empty) {
        obj.remove(key);
    }
}

/// `null`, `""`, `{}` or `[]`.
pub(super) fn is_empty(value: &Value) -> bool {
    match value {
        Value::Null => true,
        Value::String(s) => s.is_empty(),
        Value::Array(a) => a.is_empty(),
        Value::Object(o) => o.is_empty(),
        _ => false,
    }
}

/// Calls `f` on each object of the array under `key`.
pub(super) fn each<E>(
    obj: &mut Obj,
    key: &str,
    mut f: impl FnMut(&mut Obj) -> Result<(), E>,
) -> Result<(), E> {
    if let Some(items) = obj.get_mut(key).and_then(Value::as_array_mut) {
        for item in items.iter_mut().filter_map(Value::as_object_mut) {
            f(item)?;
        }
    }
    Ok(())
}

/// Calls `f` on each object of the array at `path`.
pub(super) fn each_at<E>(
    obj: &mut Obj,
    path: &[&str],
    f: impl FnMut(&mut Obj) -> Result<(), E>,
) -> Result<(), E> {
    let Some((last, parents)) = path.split_last() else {
        return Ok(());
    };
    match at(obj, parents) {
        Some(parent) => each(parent, last, f),
        None => Ok(()),
    }
}

/// The string under `key`, or `""`.
pub(super) fn str_of<'a>(obj: &'a Obj, key: &str) -> &'a str {
    obj.get(key).and_then(Value::as_str).unwrap_or("")
}
