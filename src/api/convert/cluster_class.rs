//! ClusterClass v1beta1 ↔ v1beta2 (`core/webhooks/conversion/clusterclass.go`): template `ref`
//! ↔ `templateRef`, `namingStrategy` ↔ `naming`, a machine class's `template.*` flattened,
//! health checks, timeouts and strategies, patch and variable renames, status conditions.

use serde_json::Value;

use super::data::{marshal_hub, set_annotation, take_annotation, unmarshal_hub};
use super::refs::{from_template_ref, to_template_ref};
use super::schema::{variable_from_hub, variable_to_hub};
use super::status::{conditions_from_hub, conditions_to_hub, restore_bool};
use super::value::{child, each, each_at, is_empty, put, str_of, take, Move, Obj};
use super::{health_check, rollout, ConvertError, Ctx, CONVERSION_DATA};

const EXTENSIONS: [(&str, &str); 2] = [
    ("generateExtension", "generatePatchesExtension"),
    ("validateExtension", "validateTopologyExtension"),
];
const MATCH_BOOLS: [&str; 2] = ["controlPlane", "infrastructureCluster"];

/// A v1beta1 ClusterClass → v1beta2, in place.
pub(super) fn to_hub(obj: &mut Obj, ctx: &Ctx) -> Result<(), ConvertError> {
    let restored = unmarshal_hub(obj, ctx)?.map(Value::Object).unwrap_or(Value::Null);
    if let Some(spec) = child(obj, "spec") {
        template_ref_to_hub(spec, "infrastructure");
        if let Some(template) =
            take(spec, &["infrastructureNamingStrategy", "template"]).filter(|t| !is_empty(t))
        {
            put(spec, &["infrastructure", "naming", "template"], template);
        }
        spec.remove("infrastructureNamingStrategy");
        if let Some(control_plane) = child(spec, "controlPlane") {
            let field = "spec.controlPlane";
            ref_to_template_ref(control_plane);
            template_ref_to_hub(control_plane, "machineInfrastructure");
            health_check::to_hub(control_plane, ctx, field)?;
            rollout::timeouts_to_hub(control_plane, ctx, field)?;
            naming_to_hub(control_plane, "namingStrategy", "naming");
        }
        if let Some(workers) = child(spec, "workers") {
            for list in ["machineDeployments", "machinePools"] {
                let mut index = 0;
                each(workers, list, |class| {
                    let field = format!("spec.workers.{list}[{index}]");
                    index += 1;
                    flatten_template(class);
                    if list == "machineDeployments" {
                        rollout::strategy_to_hub(class, &rollout::CLASS_REMEDIATION);
                        health_check::to_hub(class, ctx, &field)?;
                        if class.get("failureDomain").is_some_and(is_empty) {
                            class.remove("failureDomain");
                        }
                    }
                    rollout::timeouts_to_hub(class, ctx, &field)?;
                    naming_to_hub(class, "namingStrategy", "naming");
                    Ok::<_, ConvertError>(())
                })?;
            }
        }
        let _ = each(spec, "variables", |variable| {
            let twin = twin(&restored, "/spec/variables", str_of(variable, "name"));
            variable_to_hub(variable, twin);
            Ok::<_, ()>(())
        });
        patches_to_hub(spec, &restored);
    }
    if let Some(status) = child(obj, "status") {
        conditions_to_hub(status, &[]);
        let _ = each(status, "variables", |variable| {
            let twin = twin(&restored, "/status/variables", str_of(variable, "name"));
            restore_bool(
                variable,
                "definitionsConflict",
                twin.and_then(|t| t.get("definitionsConflict")),
            );
            let _ = each(variable, "definitions", |definition| {
                let from = str_of(definition, "from");
                let restored = twin
                    .and_then(|t| t.get("definitions"))
                    .and_then(Value::as_array)
                    .and_then(|defs| {
                        defs.iter()
                            .find(|d| d.get("from").and_then(Value::as_str) == Some(from))
                    });
                variable_to_hub(definition, restored);
                Ok::<_, ()>(())
            });
            Ok::<_, ()>(())
        });
    }
    super::value::drop_empty(obj, "status");
    Ok(())
}

/// A v1beta2 ClusterClass → v1beta1, in place; template refs get the class's namespace.
pub(super) fn from_hub(obj: &mut Obj, ctx: &Ctx) -> Result<(), ConvertError> {
    take_annotation(obj, CONVERSION_DATA);
    let data = marshal_hub(obj);
    let namespace = ctx.namespace.as_str();
    if let Some(spec) = child(obj, "spec") {
        if let Some(template) = take(spec, &["infrastructure", "naming", "template"]).filter(|t| !is_empty(t))
        {
            put(spec, &["infrastructureNamingStrategy", "template"], template);
        }
        template_ref_from_hub(spec, "infrastructure", namespace);
        if let Some(control_plane) = child(spec, "controlPlane") {
            template_ref_from_hub_flat(control_plane, namespace);
            template_ref_from_hub(control_plane, "machineInfrastructure", namespace);
            health_check::from_hub(control_plane, namespace);
            rollout::timeouts_from_hub(control_plane);
            naming_from_hub(control_plane, "naming", "namingStrategy");
        }
        if let Some(workers) = child(spec, "workers") {
            for list in ["machineDeployments", "machinePools"] {
                let _ = each(workers, list, |class| {
                    if list == "machineDeployments" {
                        rollout::strategy_from_hub(class, &rollout::CLASS_REMEDIATION);
                        health_check::from_hub(class, namespace);
                    }
                    rollout::timeouts_from_hub(class);
                    naming_from_hub(class, "naming", "namingStrategy");
                    nest_template(class, namespace);
                    Ok::<_, ()>(())
                });
            }
        }
        let _ = each(spec, "variables", |variable| {
            variable_from_hub(variable);
            Ok::<_, ()>(())
        });
        let _ = each(spec, "patches", |patch| {
            patch_from_hub(patch);
            Ok::<_, ()>(())
        });
    }
    if let Some(status) = child(obj, "status") {
        conditions_from_hub(status, &[]);
        let _ = each(status, "variables", |variable| {
            let conflict = variable
                .get("definitionsConflict")
                .and_then(Value::as_bool)
                .unwrap_or(false);
            variable.insert("definitionsConflict".into(), Value::Bool(conflict));
            each(variable, "definitions", |definition| {
                variable_from_hub(definition);
                Ok::<_, ()>(())
            })
        });
    }
    set_annotation(obj, CONVERSION_DATA, data);
    Ok(())
}

/// The entry named `name` of the list at `pointer` in the restored hub.
fn twin<'a>(restored: &'a Value, pointer: &str, name: &str) -> Option<&'a Value> {
    restored
        .pointer(pointer)?
        .as_array()?
        .iter()
        .find(|v| v.get("name").and_then(Value::as_str) == Some(name))
}

/// `obj.ref` (an ObjectReference) → `obj.templateRef`.
fn ref_to_template_ref(obj: &mut Obj) {
    if let Some(reference) = obj.remove("ref").filter(|r| !r.is_null()) {
        obj.insert("templateRef".into(), to_template_ref(&reference));
    }
}

/// `obj[key].ref` → `obj[key].templateRef`.
fn template_ref_to_hub(obj: &mut Obj, key: &str) {
    if let Some(inner) = child(obj, key) {
        ref_to_template_ref(inner);
    }
    super::value::drop_empty(obj, key);
}

/// `obj.templateRef` → `obj.ref` in `namespace`.
fn template_ref_from_hub_flat(obj: &mut Obj, namespace: &str) {
    if let Some(reference) = obj.remove("templateRef").filter(|r| !is_empty(r)) {
        obj.insert("ref".into(), from_template_ref(&reference, namespace));
    }
}

/// `obj[key].templateRef` → `obj[key].ref` in `namespace`.
fn template_ref_from_hub(obj: &mut Obj, key: &str, namespace: &str) {
    if let Some(inner) = child(obj, key) {
        template_ref_from_hub_flat(inner, namespace);
    }
    super::value::drop_empty(obj, key);
}

/// v1beta1 `<from>.template` (`namingStrategy`, `machineNamingStrategy`) → `<to>.template`;
/// an empty strategy is dropped, as v1beta2 has nothing to say it with.
pub(super) fn naming_to_hub(obj: &mut Obj, from: &str, to: &str) {
    if let Some(template) = take(obj, &[from, "template"]).filter(|t| !is_empty(t)) {
        put(obj, &[to, "template"], template);
    }
    obj.remove(from);
}

/// `<from>.template` → v1beta1 `<to>.template`, the inverse of [`naming_to_hub`].
pub(super) fn naming_from_hub(obj: &mut Obj, from: &str, to: &str) {
    if let Some(template) = take(obj, &[from, "template"]).filter(|t| !is_empty(t)) {
        put(obj, &[to, "template"], template);
    }
}

/// A v1beta1 machine class's `template.metadata` is the hub class's `metadata`.
const TEMPLATE_METADATA: Move = Move {
    spoke: &["template", "metadata"],
    hub: &["metadata"],
};

/// A machine class's `template.{metadata, bootstrap.ref, infrastructure.ref}` → top level.
fn flatten_template(class: &mut Obj) {
    TEMPLATE_METADATA.forwards(class);
    for key in ["bootstrap", "infrastructure"] {
        if let Some(reference) = take(class, &["template", key, "ref"]).filter(|r| !r.is_null()) {
            put(class, &[key, "templateRef"], to_template_ref(&reference));
        }
        // Fields of a newer template than v1beta1 knew: kept beside the ref.
        if let Some(Value::Object(rest)) = take(class, &["template", key]) {
            for (k, v) in rest {
                put(class, &[key, &k], v);
            }
        }
    }
}

/// The inverse of [`flatten_template`], refs in `namespace`.
fn nest_template(class: &mut Obj, namespace: &str) {
    TEMPLATE_METADATA.backwards(class);
    for key in ["bootstrap", "infrastructure"] {
        if let Some(Value::Object(mut inner)) = class.remove(key) {
            if let Some(reference) = inner.remove("templateRef").filter(|r| !is_empty(r)) {
                inner.insert("ref".into(), from_template_ref(&reference, namespace));
            }
            put(class, &["template", key], Value::Object(inner));
        }
    }
}

fn patches_to_hub(spec: &mut Obj, restored: &Value) {
    let _ = each(spec, "patches", |patch| {
        let name = str_of(patch, "name").to_owned();
        let twin = twin(restored, "/spec/patches", &name);
        drop_empty_string(patch, "enabledIf");
        if let Some(external) = child(patch, "external") {
            for (from, to) in EXTENSIONS {
                if let Some(value) = external.remove(from).filter(|v| !is_empty(v)) {
                    external.insert(to.into(), value);
                }
            }
            drop_empty_string(external, "discoverVariablesExtension");
        }
        let count = patch
            .get("definitions")
            .and_then(Value::as_array)
            .map_or(0, Vec::len);
        let twin_definitions = twin
            .and_then(|t| t.get("definitions"))
            .and_then(Value::as_array)
            .filter(|defs| defs.len() == count);
        let mut index = 0;
        each(patch, "definitions", |definition| {
            let restored = twin_definitions.and_then(|defs| defs.get(index));
            index += 1;
            if let Some(selector) = definition.get_mut("selector").and_then(Value::as_object_mut) {
                let matches = child(selector, "matchResources");
                if let Some(matches) = matches {
                    for key in MATCH_BOOLS {
                        let pointer = format!("/selector/matchResources/{key}");
                        restore_bool(matches, key, restored.and_then(|r| r.pointer(&pointer)));
                    }
                }
            }
            each(definition, "jsonPatches", |json_patch| {
                if let Some(from) = child(json_patch, "valueFrom") {
                    drop_empty_string(from, "variable");
                    drop_empty_string(from, "template");
                }
                Ok::<_, ()>(())
            })
        })
    });
}

fn patch_from_hub(patch: &mut Obj) {
    if let Some(external) = child(patch, "external") {
        for (to, from) in EXTENSIONS {
            if let Some(value) = external.remove(from).filter(|v| !is_empty(v)) {
                external.insert(to.into(), value);
            }
        }
    }
    let _ = each_at(patch, &["definitions"], |definition| {
        if let Some(matches) = super::value::at(definition, &["selector", "matchResources"]) {
            for key in MATCH_BOOLS {
                if matches.get(key) == Some(&Value::Bool(false)) {
                    matches.remove(key);
                }
            }
        }
        Ok::<_, ()>(())
    });
}

fn drop_empty_string(obj: &mut Obj, key: &str) {
    if obj.get(key).and_then(Value::as_str) == Some("") {
        obj.remove(key);
    }
}
