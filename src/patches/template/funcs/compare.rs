//! Go template comparison functions: `eq`, `ne`, `lt`, `le`, `gt`, `ge` (basic kinds only).

use std::cmp::Ordering;
use std::rc::Rc;

use super::super::value::Value;

#[derive(PartialEq, Clone, Copy)]
enum Kind {
    Bool,
    Int,
    Uint,
    Float,
    Str,
    Invalid,
}

fn kind(v: &Value) -> Kind {
    match v {
        Value::Bool(_) => Kind::Bool,
        Value::Int(_) | Value::Int64(_) => Kind::Int,
        Value::Uint(_) => Kind::Uint,
        Value::Float(_) => Kind::Float,
        Value::Str(_) => Kind::Str,
        _ => Kind::Invalid,
    }
}

fn is_nil(v: &Value) -> bool {
    matches!(v, Value::Missing | Value::Nil)
}

fn int_uint_eq(i: i64, u: u64) -> bool {
    i >= 0 && i as u64 == u
}

/// `eq arg1 arg2...`: true when `arg1` equals any of the others.
/// The value of any signed integer (Go compares `int` and `int64` alike).
fn signed(v: &Value) -> Option<i64> {
    match v {
        Value::Int(i) | Value::Int64(i) => Some(*i),
        _ => None,
    }
}

pub(super) fn eq(args: &[Value]) -> Result<bool, String> {
    let Some((first, rest)) = args.split_first() else {
        return Err("missing argument for comparison".into());
    };
    if rest.is_empty() {
        return Err("missing argument for comparison".into());
    }
    let k1 = kind(first);
    for other in rest {
        let k2 = kind(other);
        let truth = if k1 != k2 {
            match (first, other) {
                (Value::Uint(u), other) | (other, Value::Uint(u)) if signed(other).is_some() => {
                    int_uint_eq(signed(other).unwrap_or(0), *u)
                }
                _ if !is_nil(first) && !is_nil(other) => {
                    return Err(format!(
                        "incompatible types for comparison: {} and {}",
                        first.type_name(),
                        other.type_name()
                    ))
                }
                _ => false,
            }
        } else {
            match (first, other) {
                (Value::Bool(a), Value::Bool(b)) => a == b,
                (Value::Uint(a), Value::Uint(b)) => a == b,
                _ if k1 == Kind::Int => signed(first) == signed(other),
                (Value::Float(a), Value::Float(b)) => a == b,
                (Value::Str(a), Value::Str(b)) => a == b,
                _ => compare_composite(first, other)?,
            }
        };
        if truth {
            return Ok(true);
        }
    }
    Ok(false)
}

/// Equality of non-basic values: only nil-ness and pointer identity are comparable.
fn compare_composite(a: &Value, b: &Value) -> Result<bool, String> {
    let same_kind = std::mem::discriminant(a) == std::mem::discriminant(b);
    if !same_kind && !is_nil(a) && !is_nil(b) {
        return Err(format!(
            "non-comparable types {}: {}",
            a.type_name(),
            b.type_name()
        ));
    }
    if is_nil(a) || is_nil(b) {
        return Ok(is_nil(a) == is_nil(b));
    }
    match (a, b) {
        (Value::Version(x), Value::Version(y)) => Ok(Rc::ptr_eq(x, y)),
        _ => Err(format!(
            "non-comparable type {}: {}",
            super::super::printf::sprintf("%s", std::slice::from_ref(b), 4096).unwrap_or_default(),
            b.type_name()
        )),
    }
}

/// `ne a b`.
pub(super) fn ne(args: &[Value]) -> Result<bool, String> {
    eq(args).map(|e| !e)
}

/// `lt a b`.
pub(super) fn lt(a: &Value, b: &Value) -> Result<bool, String> {
    let (k1, k2) = (kind(a), kind(b));
    if k1 == Kind::Invalid || k2 == Kind::Invalid {
        return Err("invalid type for comparison".into());
    }
    if k1 != k2 {
        return match (a, b) {
            (Value::Uint(u), other) if signed(other).is_some() => {
                let i = signed(other).unwrap_or(0);
                Ok(i >= 0 && *u < i as u64)
            }
            (other, Value::Uint(u)) if signed(other).is_some() => {
                let i = signed(other).unwrap_or(0);
                Ok(i < 0 || (i as u64) < *u)
            }
            _ => Err(format!(
                "incompatible types for comparison: {} and {}",
                a.type_name(),
                b.type_name()
            )),
        };
    }
    if k1 == Kind::Int {
        return Ok(signed(a) < signed(b));
    }
    Ok(match (a, b) {
        (Value::Uint(x), Value::Uint(y)) => x < y,
        (Value::Float(x), Value::Float(y)) => x.partial_cmp(y) == Some(Ordering::Less),
        (Value::Str(x), Value::Str(y)) => x < y,
        _ => return Err("invalid type for comparison".into()),
    })
}

/// `le a b`.
pub(super) fn le(a: &Value, b: &Value) -> Result<bool, String> {
    Ok(lt(a, b)? || eq(&[a.clone(), b.clone()])?)
}
