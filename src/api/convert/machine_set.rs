//! MachineSet v1beta1 ↔ v1beta2 (`core/webhooks/conversion/machineset.go`): `deletePolicy` →
//! `deletion.order`, `machineNamingStrategy` → `machineNaming`, `minReadySeconds` into the
//! Machine template ([`machine_spec`](super::machine_spec)), the status counters and
//! `failureReason`/`failureMessage` regrouped.
//!
//! **Beyond the reference:** Cluster API does not write conversion-data on a v1beta1 MachineSet;
//! we do, so that the `0`s a v1beta1 `int32` cannot leave out (status counters, a hub
//! `minReadySeconds: 0`) read back as the hub had them.

use super::cluster_class::{naming_from_hub, naming_to_hub};
use super::machine_spec::{Machines, MinReady};
use super::status::Counters;
use super::value::{is_empty, Move, Obj};

/// v1beta1's `deletePolicy` is the hub's `deletion.order`.
const DELETE_POLICY: Move = Move {
    spoke: &["deletePolicy"],
    hub: &["deletion", "order"],
};

/// The MachineSet converter.
pub(super) const MACHINE_SET: Machines = Machines {
    min_ready: MinReady::Int,
    counters: Counters {
        legacy: &["fullyLabeledReplicas", "readyReplicas", "availableReplicas"],
        current: &["readyReplicas", "availableReplicas", "upToDateReplicas"],
        always: &[
            "replicas",
            "fullyLabeledReplicas",
            "readyReplicas",
            "availableReplicas",
        ],
    },
    deprecated: &["failureReason", "failureMessage"],
    spec_to_hub: |spec, _, _| {
        drop_empty_policy(spec, "deletePolicy");
        DELETE_POLICY.forwards(spec);
        naming_to_hub(spec, "machineNamingStrategy", "machineNaming");
    },
    spec_from_hub: |spec| {
        DELETE_POLICY.backwards(spec);
        drop_empty_policy(spec, "deletePolicy");
        naming_from_hub(spec, "machineNaming", "machineNamingStrategy");
    },
    status_to_hub: |_, _| {},
    status_from_hub: |_| {},
};

/// Drops a `deletePolicy` of `""`, which both versions omit.
fn drop_empty_policy(spec: &mut Obj, key: &str) {
    if spec.get(key).is_some_and(is_empty) {
        spec.remove(key);
    }
}
