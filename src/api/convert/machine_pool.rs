//! MachinePool v1beta1 ↔ v1beta2 (`core/webhooks/conversion/machinepool.go`): the Machine
//! template and `minReadySeconds` as for a MachineDeployment
//! ([`machine_spec`](super::machine_spec)); in the status, `bootstrapReady` and
//! `infrastructureReady` become `initialization.*` (`*bool`, their `false` intent restored from
//! the conversion-data), and the counters and `failureReason`/`failureMessage` regroup.

use super::machine_spec::{Machines, MinReady};
use super::status::{initialization_from_hub, initialization_to_hub, Counters};

const READY: [(&str, &str); 2] = [
    ("bootstrapReady", "bootstrapDataSecretCreated"),
    ("infrastructureReady", "infrastructureProvisioned"),
];

/// The MachinePool converter.
pub(super) const MACHINE_POOL: Machines = Machines {
    min_ready: MinReady::Pointer,
    counters: Counters {
        legacy: &["readyReplicas", "availableReplicas", "unavailableReplicas"],
        current: &["readyReplicas", "availableReplicas", "upToDateReplicas"],
        always: &["replicas"],
    },
    deprecated: &["failureReason", "failureMessage"],
    spec_to_hub: |_, _, _| {},
    spec_from_hub: |_| {},
    status_to_hub: |status, restored| initialization_to_hub(status, &READY, restored),
    status_from_hub: |status| initialization_from_hub(status, &READY),
};
