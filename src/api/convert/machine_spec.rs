//! What MachineDeployment, MachineSet and MachinePool share (`core/webhooks/conversion/common.go`):
//! the Machine template's spec, whose `bootstrap.configRef` and `infrastructureRef` become
//! contract-versioned references, whose node timeouts become `deletion.*Seconds` and whose
//! `*string`s become strings; the owner's `minReadySeconds`, which moves into that spec; and the
//! frame of a conversion (conversion-data, kept v1beta1 fields, status).

use serde_json::Value;

use super::data::{hub_data, set_annotation, unmarshal_hub, Kept};
use super::refs::{from_contract_ref, to_contract_ref};
use super::status::{conditions_from_hub, conditions_to_hub, Counters};
use super::value::{at, child, child_or_new, drop_empty, is_empty, put, take, Obj};
use super::{rollout, ContractVersions, ConvertError, Ctx, CONVERSION_DATA};

/// `*string` fields of v1beta1 that are strings (omitted when empty) in v1beta2.
const OPTIONAL_STRINGS: [&str; 3] = ["version", "providerID", "failureDomain"];
/// The references of a Machine spec, as paths below it.
const REFS: [&[&str]; 2] = [&["bootstrap", "configRef"], &["infrastructureRef"]];
const FIELD: &str = "spec.template.spec";

/// How a kind's `minReadySeconds` reads.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum MinReady {
    /// `*int32` on both sides (MachineDeployment, MachinePool).
    Pointer,
    /// `int32` with omitempty in v1beta1 (MachineSet): `0` is unset unless the conversion-data
    /// says the hub had it.
    Int,
}

/// The parts of one kind's conversion that differ.
pub(super) struct Machines {
    pub(super) min_ready: MinReady,
    /// Status counters.
    pub(super) counters: Counters,
    /// Status fields that follow the old conditions into `deprecated.v1beta1`.
    pub(super) deprecated: &'static [&'static str],
    /// The kind's own spec fields → hub, given the hub restored from the conversion-data
    /// (`Null` without one) and the v1beta1 fields to keep.
    pub(super) spec_to_hub: fn(&mut Obj, &Value, &mut Kept),
    /// The kind's own spec fields → v1beta1.
    pub(super) spec_from_hub: fn(&mut Obj),
    /// The kind's own status fields → hub, given the restored hub.
    pub(super) status_to_hub: fn(&mut Obj, &Value),
    /// The kind's own status fields → v1beta1.
    pub(super) status_from_hub: fn(&mut Obj),
}

impl Machines {
    /// A v1beta1 object → v1beta2, in place.
    pub(super) fn spoke_to_hub(&self, obj: &mut Obj, ctx: &Ctx) -> Result<(), ConvertError> {
        let restored = unmarshal_hub(obj, ctx)?.map(Value::Object);
        let restored_or_null = restored.clone().unwrap_or(Value::Null);
        let mut kept = Kept::default();
        if let Some(spec) = child(obj, "spec") {
            template_to_hub(spec, ctx, self.min_ready, &restored_or_null)?;
            (self.spec_to_hub)(spec, &restored_or_null, &mut kept);
        }
        if let Some(status) = child(obj, "status") {
            conditions_to_hub(status, self.deprecated);
            self.counters.spoke_to_hub(status, restored.as_ref());
            (self.status_to_hub)(status, &restored_or_null);
            drop_empty(status, "deprecated");
        }
        drop_empty(obj, "status");
        kept.annotate(obj);
        Ok(())
    }

    /// A v1beta2 object → v1beta1, in place, writing the conversion-data.
    pub(super) fn hub_to_spoke(
        &self,
        obj: &mut Obj,
        ctx: &Ctx,
        versions: &dyn ContractVersions,
    ) -> Result<(), ConvertError> {
        let data = hub_data(obj, ctx);
        if let Some(spec) = child(obj, "spec") {
            template_from_hub(spec, ctx, versions, self.min_ready)?;
            (self.spec_from_hub)(spec);
        }
        // v1beta1 writes some counters always (no omitempty), so a status always.
        if let Some(status) = child_or_new(obj, "status") {
            self.counters.hub_to_spoke(status);
            conditions_from_hub(status, self.deprecated);
            (self.status_from_hub)(status);
        }
        if let Some(data) = data {
            set_annotation(obj, CONVERSION_DATA, data);
        }
        Ok(())
    }
}

/// `spec.template.spec` of a v1beta1 owner → v1beta2, and the owner's `minReadySeconds` into it.
fn template_to_hub(
    spec: &mut Obj,
    ctx: &Ctx,
    min_ready: MinReady,
    restored: &Value,
) -> Result<(), ConvertError> {
    let min = spec.remove("minReadySeconds").filter(|m| !m.is_null());
    if let Some(machine) = at(spec, &["template", "spec"]) {
        for path in REFS {
            let Some((last, parents)) = path.split_last() else {
                continue;
            };
            let Some(holder) = at(machine, parents) else {
                continue;
            };
            if let Some(reference) = holder.get(*last).filter(|r| !r.is_null()) {
                let converted = to_contract_ref(reference, ctx, &format!("{FIELD}.{}", path.join(".")))?;
                holder.insert((*last).to_owned(), converted);
            }
        }
        for key in OPTIONAL_STRINGS {
            if machine.get(key).is_some_and(is_empty) {
                machine.remove(key);
            }
        }
        rollout::timeouts_to_hub(machine, ctx, FIELD)?;
    }
    // An `int32` 0 is written as nothing: the hub's `0` comes back from the conversion-data.
    let unset = min.as_ref().is_none_or(|m| m.as_i64() == Some(0));
    let min = if min_ready == MinReady::Int && unset {
        let zero = Value::from(0);
        (restored.pointer("/spec/template/spec/minReadySeconds") == Some(&zero)).then_some(zero)
    } else {
        min
    };
    if let Some(min) = min {
        put(spec, &["template", "spec", "minReadySeconds"], min);
    }
    Ok(())
}

/// The inverse of [`template_to_hub`]; references get their apiVersion from `versions`.
fn template_from_hub(
    spec: &mut Obj,
    ctx: &Ctx,
    versions: &dyn ContractVersions,
    min_ready: MinReady,
) -> Result<(), ConvertError> {
    let min = take(spec, &["template", "spec", "minReadySeconds"]);
    if let Some(machine) = at(spec, &["template", "spec"]) {
        for path in REFS {
            if let Some(reference) = take(machine, path) {
                if !is_empty(&reference) {
                    put(machine, path, from_contract_ref(&reference, ctx, versions)?);
                }
            }
        }
        for key in OPTIONAL_STRINGS {
            if machine.get(key).is_some_and(is_empty) {
                machine.remove(key);
            }
        }
        rollout::timeouts_from_hub(machine);
    }
    let min = match min {
        Some(zero) if min_ready == MinReady::Int && zero.as_i64() == Some(0) => None,
        other => other,
    };
    if let Some(min) = min {
        spec.insert("minReadySeconds".into(), min);
    }
    Ok(())
}
