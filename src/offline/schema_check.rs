//! The API server's schema check of our kinds (`customResourceStrategy.Validate`): the object, in
//! the version it was written in, against that version's schema in our CRDs, which carry every
//! constraint of Cluster API v1.14.0's ([`crate::api::crd_constraints`]). In the API server's
//! order and words: the OpenAPI keywords (`spec.topology.classRef.name: Too long: may not be
//! more than 253 bytes`, `Unsupported value`, `Invalid value: ... in body should match '^...$'`,
//! `Too many: 101: must have at most 100 items`), then duplicate list-map keys, then the CEL
//! rules (`x-kubernetes-validations`), which run only when no error before them blocks them.
//!
//! Fields written `null` are pruned first, as the API server prunes them. `status` is not checked: with the status subresource the API server drops it from a create or
//! update of the object. On an update, an error at a field whose value the stored object already
//! has is let through, as the API server's validation ratcheting lets it through.

use std::collections::HashMap;
use std::sync::OnceLock;

use serde_json::Value;

use super::list_maps::{duplicate_keys, our_schemas};
use crate::api::JSONSchemaProps;
use crate::field::{ErrorType, FieldError, FieldErrors, FieldPath};
use crate::store::group_of as api_group;
use crate::variables::cel::{CelRules, Shown};
use crate::variables::Schema;

/// One version of one of our kinds, compiled for checking.
struct Compiled {
    schema: Schema,
    /// Its CEL rules; `None` if they do not compile (a unit test proves ours do).
    rules: Option<CelRules>,
}

/// The API server's word when an error before the CEL rules keeps them from running.
const RULES_NOT_CHECKED: &str = "some validation rules were not checked because the object was invalid; \
                                 correct the existing errors to complete validation";

/// `(group, version, kind)` of one of our served versions.
type Key = (String, String, String);

/// The schema of `key` compiled, once and only when first asked for (a check of Clusters
/// compiles no MachinePool schema); `None` for a kind or version that is not ours, or a schema
/// that does not compile (a unit test proves ours all do).
fn compiled(key: &Key) -> Option<&'static Compiled> {
    static COMPILED: OnceLock<HashMap<Key, OnceLock<Option<Compiled>>>> = OnceLock::new();
    let all = COMPILED.get_or_init(|| {
        our_schemas()
            .keys()
            .map(|key| (key.clone(), OnceLock::new()))
            .collect()
    });
    all.get(key)?
        .get_or_init(|| our_schemas().get(key).and_then(compile))
        .as_ref()
}

/// One schema compiled for checking, with its CEL rules.
fn compile(schema: &Value) -> Option<Compiled> {
    let mut schema = schema.clone();
    integral_bounds(&mut schema);
    let props: JSONSchemaProps = serde_json::from_value(schema).ok()?;
    let rules = CelRules::compile_to_evaluate(&props, &FieldPath::root()).ok();
    Some(Compiled {
        schema: Schema::compile(&props).ok()?,
        rules,
    })
}

/// Rewrites the `minimum` and `maximum` of `node` and every node below it from the floats the
/// CRD type holds (`1.0`) to the integers a variable schema holds (Cluster API's are all whole).
fn integral_bounds(node: &mut Value) {
    match node {
        Value::Object(map) => {
            for (key, value) in map.iter_mut() {
                let whole = value.as_f64().filter(|f| f.fract() == 0.0 && f.abs() < 9.0e15);
                match whole {
                    Some(whole) if key == "minimum" || key == "maximum" => *value = Value::from(whole as i64),
                    _ => integral_bounds(value),
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(integral_bounds),
        _ => {}
    }
}

/// What the API server's schema check finds in `object` (one of our kinds, in the version it was
/// written in, after the mutating webhooks); `old` is the stored object in the same version on
/// an update. Empty for a kind or version that is not ours.
pub fn schema_errors(object: &Value, old: Option<&Value>) -> FieldErrors {
    let api_version = object["apiVersion"].as_str().unwrap_or_default();
    let key = (
        api_group(api_version).to_owned(),
        api_version.rsplit('/').next().unwrap_or_default().to_owned(),
        object["kind"].as_str().unwrap_or_default().to_owned(),
    );
    let Some(compiled) = compiled(&key) else {
        return duplicate_keys(object);
    };
    let object = without_status(object);
    let old = old.map(without_status);
    let mut errors = FieldErrors::new();
    compiled.schema.validate_resource(&object, &mut errors);
    errors.extend(duplicate_keys(&object));
    let mut errors = ratcheted(errors, &object, old.as_ref());
    if errors.iter().any(blocks_rules) {
        errors.push(FieldError::invalid(
            &FieldPath::new("<nil>"),
            Value::Null,
            RULES_NOT_CHECKED,
        ));
    } else if let Some(rules) = &compiled.rules {
        let failures = rules.validate(&object, old.as_ref(), &FieldPath::root(), Shown::NodeType);
        errors.extend(ratcheted(failures, &object, old.as_ref()));
    }
    errors
}

/// `object` without its `status`, and without the `null` fields the API server prunes before it
/// validates (none of our CRDs' fields is `nullable`).
fn without_status(object: &Value) -> Value {
    let mut object = object.clone();
    if let Some(map) = object.as_object_mut() {
        map.remove("status");
    }
    prune_nulls(&mut object, 0);
    object
}

/// Removes every object field whose value is `null`, at every depth (up to the schema's).
fn prune_nulls(value: &mut Value, depth: usize) {
    if depth > crate::variables::limits::MAX_DEPTH {
        return;
    }
    match value {
        Value::Object(map) => {
            map.retain(|_, field| !field.is_null());
            map.values_mut().for_each(|field| prune_nulls(field, depth + 1));
        }
        Value::Array(items) => items.iter_mut().for_each(|item| prune_nulls(item, depth + 1)),
        _ => {}
    }
}

/// Whether the API server skips the CEL rules after `error` (its `hasBlockingErr`).
fn blocks_rules(error: &FieldError) -> bool {
    matches!(
        error.kind,
        ErrorType::NotSupported
            | ErrorType::Required
            | ErrorType::TooLong
            | ErrorType::TooMany
            | ErrorType::TypeInvalid
    )
}

/// `errors` less those at a field whose value `old` has too (validation ratcheting): an object
/// stored before a constraint existed can still be updated elsewhere. A missing required field
/// is judged by the object that lacks it.
fn ratcheted(errors: FieldErrors, object: &Value, old: Option<&Value>) -> FieldErrors {
    let Some(old) = old else {
        return errors;
    };
    errors
        .into_iter()
        .filter(|error| {
            let path = error.path.to_string();
            let path = match error.kind {
                ErrorType::Required => path.rsplit_once('.').map_or("", |(parent, _)| parent),
                _ => path.as_str(),
            };
            let unchanged = matches!(
                (value_at(object, path), value_at(old, path)),
                (Some(new), Some(was)) if new == was
            );
            !unchanged
        })
        .collect()
}

/// The value at the field path `path` (`spec.a[0].b`, empty for `value` itself) of `value`. A
/// map key holding dots (a label) is matched whole, the longest key first.
fn value_at<'a>(value: &'a Value, path: &str) -> Option<&'a Value> {
    let rest = path.strip_prefix('.').unwrap_or(path);
    if rest.is_empty() {
        return Some(value);
    }
    if let Some(index) = rest.strip_prefix('[') {
        let (index, tail) = index.split_once(']')?;
        return value_at(value.get(index.parse::<usize>().ok()?)?, tail);
    }
    let fields = value.as_object()?;
    let (key, child) = fields
        .iter()
        .filter(|(key, _)| {
            rest.strip_prefix(key.as_str())
                .is_some_and(|tail| tail.is_empty() || tail.starts_with(['.', '[']))
        })
        .max_by_key(|(key, _)| key.len())?;
    value_at(child, &rest[key.len()..])
}

#[cfg(test)]
#[path = "schema_check_tests.rs"]
mod tests;
