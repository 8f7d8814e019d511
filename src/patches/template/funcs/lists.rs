//! sprig list, dictionary and default functions.

use std::collections::BTreeMap;

use super::super::value::Value;
use super::strings::{strslice, strval};
use super::{arg, fixed, str_arg, variadic, Ctx, Func, Param};

use Param::{Any, Bool, Map, Str};

/// Finds a sprig list/dict/default function.
pub(super) fn lookup(name: &str) -> Option<Func> {
    Some(match name {
        "list" | "tuple" => variadic(&[], Any, |ctx, a| {
            ctx.charge(a.len())?;
            Ok(Value::new_list(a))
        }),
        "append" | "push" | "mustAppend" | "mustPush" => fixed(&[Any, Any], |ctx, a| {
            let mut items = list_of(ctx, &arg(&a, 0), "push on")?;
            items.push(arg(&a, 1));
            Ok(Value::new_list(items))
        }),
        "prepend" | "mustPrepend" => fixed(&[Any, Any], |ctx, a| {
            let mut items = list_of(ctx, &arg(&a, 0), "prepend on")?;
            items.insert(0, arg(&a, 1));
            Ok(Value::new_list(items))
        }),
        "first" | "mustFirst" => fixed(&[Any], |ctx, a| {
            Ok(list_of(ctx, &arg(&a, 0), "find first on")?
                .first()
                .cloned()
                .unwrap_or(Value::Nil))
        }),
        "last" | "mustLast" => fixed(&[Any], |ctx, a| {
            Ok(list_of(ctx, &arg(&a, 0), "find last on")?
                .last()
                .cloned()
                .unwrap_or(Value::Nil))
        }),
        "rest" | "mustRest" => fixed(&[Any], |ctx, a| {
            let items = list_of(ctx, &arg(&a, 0), "find rest on")?;
            Ok(if items.is_empty() {
                Value::Nil
            } else {
                Value::new_list(items[1..].to_vec())
            })
        }),
        "initial" | "mustInitial" => fixed(&[Any], |ctx, a| {
            let items = list_of(ctx, &arg(&a, 0), "find initial on")?;
            Ok(if items.is_empty() {
                Value::Nil
            } else {
                Value::new_list(items[..items.len() - 1].to_vec())
            })
        }),
        "reverse" | "mustReverse" => fixed(&[Any], |ctx, a| {
            let mut items = list_of(ctx, &arg(&a, 0), "find reverse on")?;
            items.reverse();
            Ok(Value::new_list(items))
        }),
        "uniq" | "mustUniq" => fixed(&[Any], |ctx, a| {
            let items = list_of(ctx, &arg(&a, 0), "find uniq on")?;
            ctx.charge(items.len().saturating_mul(items.len()) / 16)?;
            let mut budget = EQUAL_BUDGET;
            let mut out: Vec<Value> = Vec::new();
            for item in items {
                if !contains(&out, &item, &mut budget)? {
                    out.push(item);
                }
            }
            Ok(Value::new_list(out))
        }),
        "compact" | "mustCompact" => fixed(&[Any], |ctx, a| {
            let items = list_of(ctx, &arg(&a, 0), "compact on")?;
            Ok(Value::new_list(
                items.into_iter().filter(Value::is_true).collect(),
            ))
        }),
        "without" | "mustWithout" => variadic(&[Any], Any, |ctx, a| {
            let items = list_of(ctx, &arg(&a, 0), "find without on")?;
            ctx.charge(items.len().saturating_mul(a.len()) / 16)?;
            let mut budget = EQUAL_BUDGET;
            let mut kept = Vec::new();
            for item in items {
                if !contains(a.get(1..).unwrap_or_default(), &item, &mut budget)? {
                    kept.push(item);
                }
            }
            Ok(Value::new_list(kept))
        }),
        "has" | "mustHas" => fixed(&[Any, Any], |ctx, a| {
            if matches!(arg(&a, 1), Value::Nil) {
                return Ok(Value::Bool(false));
            }
            let items = list_of(ctx, &arg(&a, 1), "find has on")?;
            Ok(Value::Bool(contains(
                &items,
                &arg(&a, 0),
                &mut EQUAL_BUDGET.clone(),
            )?))
        }),
        "concat" => variadic(&[], Any, |ctx, a| {
            let mut out = Vec::new();
            for list in &a {
                out.extend(list_of(ctx, list, "concat")?);
            }
            Ok(Value::new_list(out))
        }),
        "slice" | "mustSlice" => variadic(&[Any], Any, slice),
        "sortAlpha" => fixed(&[Any], |ctx, a| {
            if !matches!(arg(&a, 0), Value::List(_)) {
                return Ok(Value::str_list(vec![strval(ctx, &arg(&a, 0))?]));
            }
            let mut items = strslice(ctx, &arg(&a, 0))?;
            items.sort();
            Ok(Value::str_list(items))
        }),
        "dict" => variadic(&[], Any, dict),
        "get" => fixed(&[Map, Str], |_, a| {
            Ok(map_of(&arg(&a, 0))
                .get(str_arg(&a, 1))
                .cloned()
                .unwrap_or(Value::Str(String::new())))
        }),
        "hasKey" => fixed(&[Map, Str], |_, a| {
            Ok(Value::Bool(map_of(&arg(&a, 0)).contains_key(str_arg(&a, 1))))
        }),
        "set" => fixed(&[Map, Str, Any], |_, a| {
            if let Value::Map(m) = &arg(&a, 0) {
                m.borrow_mut().insert(str_arg(&a, 1).to_string(), arg(&a, 2));
            }
            Ok(arg(&a, 0))
        }),
        "unset" => fixed(&[Map, Str], |_, a| {
            if let Value::Map(m) = &arg(&a, 0) {
                m.borrow_mut().remove(str_arg(&a, 1));
            }
            Ok(arg(&a, 0))
        }),
        "keys" => variadic(&[], Map, |ctx, a| {
            let mut keys: Vec<String> = a.iter().flat_map(|m| map_of(m).into_keys()).collect();
            ctx.charge(keys.len())?;
            keys.sort();
            Ok(Value::str_list(keys))
        }),
        "values" => fixed(&[Map], |_, a| {
            Ok(Value::new_list(map_of(&arg(&a, 0)).into_values().collect()))
        }),
        "pluck" => variadic(&[Str], Map, |_, a| {
            let key = str_arg(&a, 0);
            Ok(Value::new_list(
                a.iter()
                    .skip(1)
                    .filter_map(|m| map_of(m).get(key).cloned())
                    .collect(),
            ))
        }),
        "default" => variadic(&[Any], Any, |_, a| {
            Ok(match a.get(1) {
                Some(given) if given.is_true() => given.clone(),
                _ => arg(&a, 0),
            })
        }),
        "empty" => fixed(&[Any], |_, a| Ok(Value::Bool(!arg(&a, 0).is_true()))),
        "coalesce" => variadic(&[], Any, |_, a| {
            Ok(a.into_iter().find(Value::is_true).unwrap_or(Value::Nil))
        }),
        "all" => variadic(&[], Any, |_, a| Ok(Value::Bool(a.iter().all(Value::is_true)))),
        "any" => variadic(&[], Any, |_, a| Ok(Value::Bool(a.iter().any(Value::is_true)))),
        "ternary" => fixed(&[Any, Any, Bool], |_, a| {
            Ok(if matches!(arg(&a, 2), Value::Bool(true)) {
                arg(&a, 0)
            } else {
                arg(&a, 1)
            })
        }),
        "deepEqual" => fixed(&[Any, Any], |_, a| {
            Ok(Value::Bool(
                arg(&a, 0).deep_equal(&arg(&a, 1), &mut EQUAL_BUDGET.clone())?,
            ))
        }),
        _ => return None,
    })
}

/// Most nodes one function call may visit comparing values.
const EQUAL_BUDGET: usize = 100_000;

/// Whether `items` holds a value deeply equal to `needle`.
fn contains(items: &[Value], needle: &Value, budget: &mut usize) -> Result<bool, String> {
    for item in items {
        if item.deep_equal(needle, budget)? {
            return Ok(true);
        }
    }
    Ok(false)
}

/// The items of a list argument, or sprig's "Cannot <what> type X" error.
fn list_of(ctx: &mut Ctx<'_>, v: &Value, what: &str) -> Result<Vec<Value>, String> {
    match v {
        Value::List(items) => {
            ctx.charge(items.len())?;
            Ok(items.as_ref().clone())
        }
        // sprig dereferences the nil type and panics.
        Value::Nil | Value::Missing => {
            Err("runtime error: invalid memory address or nil pointer dereference".into())
        }
        other => Err(format!("Cannot {what} type {}", other.kind_name())),
    }
}

fn map_of(v: &Value) -> BTreeMap<String, Value> {
    match v {
        Value::Map(m) => m.borrow().clone(),
        _ => BTreeMap::new(),
    }
}

fn dict(ctx: &mut Ctx<'_>, a: Vec<Value>) -> Result<Value, String> {
    ctx.charge(a.len())?;
    let mut map = BTreeMap::new();
    for pair in a.chunks(2) {
        let key = strval(ctx, &pair[0])?;
        map.insert(key, pair.get(1).cloned().unwrap_or(Value::Str(String::new())));
    }
    Ok(Value::new_map(map))
}

fn slice(ctx: &mut Ctx<'_>, a: Vec<Value>) -> Result<Value, String> {
    let items = list_of(ctx, &arg(&a, 0), "slice").map_err(|_| {
        format!(
            "list should be type of slice or array but {}",
            arg(&a, 0).kind_name()
        )
    })?;
    if items.is_empty() {
        return Ok(Value::Nil);
    }
    let len = items.len() as i64;
    let start = a.get(1).map_or(0, super::convert::to_int64);
    let end = a.get(2).map_or(len, super::convert::to_int64);
    if start < 0 || end < start || end > len {
        return Err(format!("reflect: slice index out of range [{start}:{end}]"));
    }
    Ok(Value::new_list(items[start as usize..end as usize].to_vec()))
}
