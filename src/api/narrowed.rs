//! Schema narrowing for fields whose Rust type is shared with a place that has more: Cluster API
//! v1.14.0 declares `deletion.order` only for MachineDeployments and `remediation.maxInFlight`
//! only for MachineDeployment health checks, so the CRDs must not carry them for the control
//! plane, MachinePools, Machines or MachineHealthChecks (the API server prunes them there, as it
//! does beside Cluster API), nor a Node field newer than the Kubernetes API Cluster API v1.14.0
//! is built on. Used as `#[schemars(transform = ...)]` on the narrower field.

use schemars::Schema;
use serde_json::Value;

/// Removes the property at `path` (names through nested `properties`) from `schema`.
fn without(schema: &mut Schema, path: &[&str]) {
    let Some((last, parents)) = path.split_last() else {
        return;
    };
    let Some(mut node) = schema.as_object_mut() else {
        return;
    };
    for name in parents {
        let child = node
            .get_mut("properties")
            .and_then(|properties| properties.get_mut(*name))
            .and_then(Value::as_object_mut);
        match child {
            Some(child) => node = child,
            None => return,
        }
    }
    if let Some(Value::Object(properties)) = node.get_mut("properties") {
        properties.remove(*last);
    }
}

/// A `deletion` without `order` (control plane, MachinePools, Machines).
pub(crate) fn deletion_without_order(schema: &mut Schema) {
    without(schema, &["order"]);
}

/// A `remediation` without `maxInFlight` (control plane, MachineHealthChecks).
pub(crate) fn remediation_without_max_in_flight(schema: &mut Schema) {
    without(schema, &["maxInFlight"]);
}

/// A `healthCheck` whose remediation has no `maxInFlight` (the control plane's class).
pub(crate) fn health_check_without_max_in_flight(schema: &mut Schema) {
    without(schema, &["remediation", "maxInFlight"]);
}

/// A Node's `nodeInfo` as Kubernetes 1.34's API has it (Cluster API v1.14.0's): without
/// `runningInUserNamespace`, which k8s-openapi's newest API adds.
pub(crate) fn node_info_of_kubernetes_1_34(schema: &mut Schema) {
    without(schema, &["runningInUserNamespace"]);
}
