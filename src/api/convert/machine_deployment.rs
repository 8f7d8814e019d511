//! MachineDeployment v1beta1 ↔ v1beta2 (`core/webhooks/conversion/machinedeployment.go`):
//! `strategy` splits into `rollout.strategy`, `deletion.order` and `remediation.maxInFlight`,
//! `rolloutAfter` becomes `rollout.after`, `machineNamingStrategy` → `machineNaming`,
//! `minReadySeconds` moves into the Machine template (shared with MachineSet and MachinePool in
//! [`machine_spec`](super::machine_spec)), `paused` becomes a `*bool`, and the status counters
//! trade places. `revisionHistoryLimit` and `progressDeadlineSeconds`, which v1beta2 dropped,
//! are kept in [`V1BETA1_FIELDS`](super::V1BETA1_FIELDS) rather than lost.

use serde_json::Value;

use super::cluster_class::{naming_from_hub, naming_to_hub};
use super::data::Kept;
use super::machine_spec::{Machines, MinReady};
use super::rollout;
use super::status::{restore_bool, Counters};
use super::value::{put, rename, Obj};

/// v1beta1 spec fields v1beta2 has no place for.
const DROPPED: [&str; 2] = ["revisionHistoryLimit", "progressDeadlineSeconds"];
const REMEDIATION: [&str; 1] = ["remediation"];

/// The MachineDeployment converter.
pub(super) const MACHINE_DEPLOYMENT: Machines = Machines {
    min_ready: MinReady::Pointer,
    counters: Counters {
        legacy: &[
            "updatedReplicas",
            "readyReplicas",
            "availableReplicas",
            "unavailableReplicas",
        ],
        current: &["readyReplicas", "availableReplicas", "upToDateReplicas"],
        always: &[
            "replicas",
            "updatedReplicas",
            "readyReplicas",
            "availableReplicas",
            "unavailableReplicas",
        ],
    },
    deprecated: &[],
    spec_to_hub,
    spec_from_hub,
    status_to_hub: |_, _| {},
    status_from_hub: |_| {},
};

fn spec_to_hub(spec: &mut Obj, restored: &Value, kept: &mut Kept) {
    rollout::strategy_to_hub(spec, &REMEDIATION);
    if let Some(after) = spec.remove("rolloutAfter").filter(|a| !a.is_null()) {
        put(spec, &["rollout", "after"], after);
    }
    naming_to_hub(spec, "machineNamingStrategy", "machineNaming");
    restore_bool(spec, "paused", restored.pointer("/spec/paused"));
    for key in DROPPED {
        if let Some(value) = spec.remove(key).filter(|v| !v.is_null()) {
            kept.keep(format!("/spec/{key}"), value, &[]);
        }
    }
}

fn spec_from_hub(spec: &mut Obj) {
    rename(spec, &["rollout", "after"], &["rolloutAfter"]);
    rollout::strategy_from_hub(spec, &REMEDIATION);
    naming_from_hub(spec, "machineNaming", "machineNamingStrategy");
    if spec.get("paused") == Some(&Value::Bool(false)) {
        spec.remove("paused");
    }
}
