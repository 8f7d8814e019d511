//! RFC 6902 `add`, `replace` and `remove` over a JSON pointer (RFC 6901) split and unescaped once,
//! when the patch is compiled, instead of on every application.

use serde_json::{Map, Value};

/// Objects up to this many members are searched by comparing keys, not by hashing the key
/// (SipHash in serde_json's order-preserving maps costs more than a few comparisons).
const SCAN_MEMBERS: usize = 8;

/// `map[key]`, the same member `Map::get` finds, without hashing `key` in small objects.
pub fn member<'a>(map: &'a Map<String, Value>, key: &str) -> Option<&'a Value> {
    if map.len() <= SCAN_MEMBERS {
        map.iter().find(|(k, _)| k.as_str() == key).map(|(_, v)| v)
    } else {
        map.get(key)
    }
}

/// [`member`], mutable.
pub fn member_mut<'a>(map: &'a mut Map<String, Value>, key: &str) -> Option<&'a mut Value> {
    if map.len() <= SCAN_MEMBERS {
        map.iter_mut().find(|(k, _)| k.as_str() == key).map(|(_, v)| v)
    } else {
        map.get_mut(key)
    }
}

/// The member `key` of `value` if it is an object that has one ([`member`]).
pub fn field<'a>(value: &'a Value, key: &str) -> Option<&'a Value> {
    value.as_object().and_then(|map| member(map, key))
}

/// A parsed JSON pointer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pointer {
    text: String,
    tokens: Vec<String>,
}

/// One of the operations a ClusterClass patch may use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    /// Insert into an array or set an object member (the parent must exist).
    Add,
    /// Set an existing location.
    Replace,
    /// Delete an existing location.
    Remove,
}

impl Op {
    /// The op named `name`.
    pub fn parse(name: &str) -> Result<Self, String> {
        match name {
            "add" => Ok(Op::Add),
            "replace" => Ok(Op::Replace),
            "remove" => Ok(Op::Remove),
            other => Err(format!(
                "unsupported op {other:?}: must be one of add, replace, remove"
            )),
        }
    }
}

impl Pointer {
    /// Parses `text`: empty (the whole document) or `/`-separated tokens with `~1` for `/` and
    /// `~0` for `~`.
    pub fn parse(text: &str) -> Result<Self, String> {
        let invalid = |why: &str| format!("invalid path {text:?}: {why}");
        let tokens = match text.strip_prefix('/') {
            None if text.is_empty() => Vec::new(),
            None => return Err(invalid("a JSON pointer starts with \"/\"")),
            Some(rest) => rest
                .split('/')
                .map(|token| {
                    unescape(token).ok_or_else(|| invalid("\"~\" must be followed by \"0\" or \"1\""))
                })
                .collect::<Result<_, _>>()?,
        };
        Ok(Pointer {
            text: text.to_owned(),
            tokens,
        })
    }

    /// The pointer as written.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// The unescaped reference tokens, outermost first (none for the whole document).
    pub fn tokens(&self) -> &[String] {
        &self.tokens
    }

    /// Applies `op` at this location of `doc` (`value` is ignored by `remove`); on failure `doc`
    /// may be partly changed, and the error says the path is invalid, as `json-patch` words it.
    pub fn apply(&self, doc: &mut Value, op: Op, value: Value) -> Result<(), String> {
        let invalid = || "path is invalid".to_owned();
        let Some((last, parents)) = self.tokens.split_last() else {
            return match op {
                Op::Add | Op::Replace => {
                    *doc = value;
                    Ok(())
                }
                Op::Remove => Err(invalid()),
            };
        };
        let parent = parents
            .iter()
            .try_fold(doc, |node, token| child(node, token))
            .ok_or_else(invalid)?;
        match (parent, op) {
            (Value::Object(map), Op::Add) => {
                map.insert(last.clone(), value);
                Ok(())
            }
            (Value::Object(map), Op::Replace) => {
                let slot = member_mut(map, last).ok_or_else(invalid)?;
                *slot = value;
                Ok(())
            }
            (Value::Object(map), Op::Remove) => map.shift_remove(last).map(drop).ok_or_else(invalid),
            (Value::Array(items), Op::Add) => {
                let at = if last == "-" {
                    items.len()
                } else {
                    index(last).filter(|i| *i <= items.len()).ok_or_else(invalid)?
                };
                items.insert(at, value);
                Ok(())
            }
            (Value::Array(items), Op::Replace) => {
                let slot = index(last).and_then(|i| items.get_mut(i)).ok_or_else(invalid)?;
                *slot = value;
                Ok(())
            }
            (Value::Array(items), Op::Remove) => {
                let at = index(last).filter(|i| *i < items.len()).ok_or_else(invalid)?;
                items.remove(at);
                Ok(())
            }
            _ => Err(invalid()),
        }
    }
}

/// `token` with `~1` and `~0` decoded; `None` for any other `~` sequence.
fn unescape(token: &str) -> Option<String> {
    if !token.contains('~') {
        return Some(token.to_owned());
    }
    let mut out = String::with_capacity(token.len());
    let mut chars = token.chars();
    while let Some(c) = chars.next() {
        match c {
            '~' => match chars.next() {
                Some('0') => out.push('~'),
                Some('1') => out.push('/'),
                _ => return None,
            },
            c => out.push(c),
        }
    }
    Some(out)
}

/// An array index as RFC 6901 writes it: digits without a leading zero.
fn index(token: &str) -> Option<usize> {
    let digits = !token.is_empty() && token.bytes().all(|b| b.is_ascii_digit());
    (digits && (token == "0" || !token.starts_with('0')))
        .then(|| token.parse().ok())
        .flatten()
}

/// The member or element `token` names in `node`.
fn child<'a>(node: &'a mut Value, token: &str) -> Option<&'a mut Value> {
    match node {
        Value::Object(map) => member_mut(map, token),
        Value::Array(items) => index(token).and_then(|i| items.get_mut(i)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn apply(doc: &mut Value, op: Op, path: &str, value: Value) -> Result<(), String> {
        Pointer::parse(path)?.apply(doc, op, value)
    }

    #[test]
    fn add_sets_members_and_inserts_or_appends_elements() {
        let mut doc = json!({"a": {"list": [1, 3]}, "k~/": 0});
        apply(&mut doc, Op::Add, "/a/b", json!("x")).unwrap();
        apply(&mut doc, Op::Add, "/a/list/1", json!(2)).unwrap();
        apply(&mut doc, Op::Add, "/a/list/-", json!(4)).unwrap();
        apply(&mut doc, Op::Add, "/a/list/4", json!(5)).unwrap();
        apply(&mut doc, Op::Add, "/k~0~1", json!(1)).unwrap();
        assert_eq!(doc, json!({"a": {"list": [1, 2, 3, 4, 5], "b": "x"}, "k~/": 1}));
        apply(&mut doc, Op::Add, "", json!({"new": true})).unwrap();
        assert_eq!(doc, json!({"new": true}));
    }

    #[test]
    fn replace_and_remove_need_an_existing_target() {
        let mut doc = json!({"a": {"list": [1, 2]}});
        apply(&mut doc, Op::Replace, "/a/list/0", json!(9)).unwrap();
        apply(&mut doc, Op::Remove, "/a/list/1", Value::Null).unwrap();
        assert_eq!(doc, json!({"a": {"list": [9]}}));
        for (op, path) in [
            (Op::Replace, "/a/missing"),
            (Op::Replace, "/a/list/1"),
            (Op::Remove, "/a/list/5"),
            (Op::Remove, "/a/missing"),
            (Op::Add, "/a/missing/deep"),
            (Op::Add, "/a/list/7"),
            (Op::Add, "/a/list/01"),
            (Op::Add, "/a/list/x"),
            (Op::Add, "/a/list/0/under-a-number"),
            (Op::Remove, ""),
        ] {
            assert_eq!(
                apply(&mut doc, op, path, json!(0)),
                Err("path is invalid".into()),
                "{op:?} {path}"
            );
        }
    }

    #[test]
    fn members_are_found_in_small_and_large_objects_alike() {
        for size in [0, 1, SCAN_MEMBERS, SCAN_MEMBERS + 1, 40] {
            let mut map: Map<String, Value> = (0..size).map(|i| (format!("k{i}"), json!(i))).collect();
            for i in 0..=size {
                let key = format!("k{i}");
                let expected = map.get(&key).cloned();
                assert_eq!(member(&map, &key).cloned(), expected, "{size} {key}");
                assert_eq!(member_mut(&mut map, &key).cloned(), expected, "{size} {key}");
            }
            let object = Value::Object(map);
            assert_eq!(field(&object, "k0"), object.get("k0"), "{size}");
        }
        assert_eq!(field(&json!([1]), "k0"), None);
    }

    #[test]
    fn malformed_pointers_and_ops_are_named() {
        assert_eq!(
            Pointer::parse("spec"),
            Err(r#"invalid path "spec": a JSON pointer starts with "/""#.into())
        );
        assert_eq!(
            Pointer::parse("/a~2"),
            Err(r#"invalid path "/a~2": "~" must be followed by "0" or "1""#.into())
        );
        assert_eq!(
            Op::parse("copy"),
            Err(r#"unsupported op "copy": must be one of add, replace, remove"#.into())
        );
    }
}
