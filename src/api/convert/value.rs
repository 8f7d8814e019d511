//! Small moves on a JSON object tree: take a field out, put it under a path (creating the
//! objects on the way), drop containers a move left empty. Every converter is written with
//! these so that fields it does not name stay where they are.

use serde_json::{Map, Value};

/// A JSON object.
pub(super) type Obj = Map<String, Value>;

/// Objects of up to this many members are searched by comparing keys rather than by hashing
/// the one looked for: serde_json's maps hash with SipHash, which costs more than comparing a
/// few short keys, and most objects a converter looks into (a variable, a topology, a health
/// check) are this small. Most lookups are for a key that is not there.
const COMPARED: usize = 8;

/// `obj[key]`.
pub(super) fn get<'a>(obj: &'a Obj, key: &str) -> Option<&'a Value> {
    if obj.len() > COMPARED {
        return obj.get(key);
    }
    obj.iter().find(|(name, _)| *name == key).map(|(_, value)| value)
}

/// `obj[key]`, to change.
pub(super) fn get_mut<'a>(obj: &'a mut Obj, key: &str) -> Option<&'a mut Value> {
    if obj.len() > COMPARED {
        return obj.get_mut(key);
    }
    obj.iter_mut()
        .find(|(name, _)| *name == key)
        .map(|(_, value)| value)
}

/// `obj[key]` taken out, as [`Map::remove`] takes it.
pub(super) fn remove(obj: &mut Obj, key: &str) -> Option<Value> {
    if obj.len() <= COMPARED && !obj.keys().any(|name| name == key) {
        return None;
    }
    obj.remove(key)
}

/// The object under `key`, when there is one.
pub(super) fn child<'a>(obj: &'a mut Obj, key: &str) -> Option<&'a mut Obj> {
    get_mut(obj, key).and_then(Value::as_object_mut)
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
        [key] => remove(obj, key),
        [key, rest @ ..] => {
            let inner = child(obj, key)?;
            let value = take(inner, rest);
            if value.is_some() && inner.is_empty() {
                remove(obj, key);
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
    if get(obj, key).is_some_and(is_empty) {
        remove(obj, key);
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
    if let Some(items) = get_mut(obj, key).and_then(Value::as_array_mut) {
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
    get(obj, key).and_then(Value::as_str).unwrap_or("")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// An object of `members` members named `k0`, `k1`, ..., each holding its index.
    fn object(members: usize) -> Obj {
        (0..members).map(|i| (format!("k{i}"), json!(i))).collect()
    }

    #[test]
    fn lookups_find_the_same_member_in_small_and_large_objects() {
        for members in [0, 1, COMPARED, COMPARED + 1, 3 * COMPARED] {
            let mut obj = object(members);
            for i in 0..members {
                let key = format!("k{i}");
                assert_eq!(get(&obj, &key), Some(&json!(i)), "{members} members");
                *get_mut(&mut obj, &key).unwrap() = json!(i + 100);
            }
            assert_eq!(get(&obj, "absent"), None);
            assert!(get_mut(&mut obj, "absent").is_none());
            assert_eq!(remove(&mut obj, "absent"), None);
            if members > 0 {
                assert_eq!(remove(&mut obj, "k0"), Some(json!(100)));
                assert_eq!(obj.len(), members - 1);
                assert_eq!(get(&obj, "k0"), None);
            }
        }
    }
}
