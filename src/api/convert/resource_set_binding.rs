//! ClusterResourceSetBinding addons v1beta1 ↔ v1beta2: `bindings` lose their pointers (an empty
//! binding is written as `null` in v1beta1), `resources[].applied` is a `bool` v1beta1 always
//! writes and v1beta2 a `*bool` (set from it), an empty `lastAppliedTime` is dropped. No
//! conversion-data.

use serde_json::Value;

use super::value::{at, each, is_empty, Obj};
use super::ConvertError;

/// A v1beta1 ClusterResourceSetBinding → v1beta2, in place.
pub(super) fn to_hub(obj: &mut Obj) -> Result<(), ConvertError> {
    for_each_resource(obj, |resource| {
        let applied = resource.get("applied").and_then(Value::as_bool).unwrap_or(false);
        resource.insert("applied".into(), Value::Bool(applied));
        if resource.get("lastAppliedTime").is_some_and(is_empty) {
            resource.remove("lastAppliedTime");
        }
    });
    if let Some(bindings) = obj.pointer_mut_bindings() {
        for binding in bindings.iter_mut().filter(|b| b.is_null()) {
            *binding = Value::Object(Obj::new());
        }
    }
    Ok(())
}

/// A v1beta2 ClusterResourceSetBinding → v1beta1, in place.
pub(super) fn from_hub(obj: &mut Obj) -> Result<(), ConvertError> {
    for_each_resource(obj, |resource| {
        let applied = resource.get("applied").and_then(Value::as_bool).unwrap_or(false);
        resource.insert("applied".into(), Value::Bool(applied));
    });
    if let Some(bindings) = obj.pointer_mut_bindings() {
        for binding in bindings.iter_mut().filter(|b| is_empty(b)) {
            *binding = Value::Null;
        }
    }
    Ok(())
}

trait Bindings {
    fn pointer_mut_bindings(&mut self) -> Option<&mut Vec<Value>>;
}

impl Bindings for Obj {
    fn pointer_mut_bindings(&mut self) -> Option<&mut Vec<Value>> {
        at(self, &["spec"])?.get_mut("bindings")?.as_array_mut()
    }
}

fn for_each_resource(obj: &mut Obj, mut f: impl FnMut(&mut Obj)) {
    if let Some(spec) = at(obj, &["spec"]) {
        let _ = each(spec, "bindings", |binding| {
            each(binding, "resources", |resource| {
                f(resource);
                Ok::<_, ()>(())
            })
        });
    }
}
