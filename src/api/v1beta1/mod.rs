//! The served cluster.x-k8s.io/v1beta1 and addons.cluster.x-k8s.io/v1beta1 spoke: the typed
//! shape of Cluster API v1.10's v1beta1 kinds, with the fields v1.12 and v1.13 backported to
//! v1beta1 (topology `controlPlane.rollout` and `machineDeployments[].rollout`, `taints` of
//! topologies and classes, health checks' `unhealthyMachineConditions`), which the converter
//! passes through unchanged. Nothing below the edges reads them; they are the
//! schema source of the v1beta1 version in the generated CRDs (`api::crd`), and the JSON-level
//! converter in `api::convert` translates objects to and from the v1beta2 hub.

mod cluster;
mod cluster_class;
mod cluster_class_patches;
mod cluster_resource_set;
mod cluster_resource_set_binding;
mod cluster_status;
mod common;
mod json_schema;
mod variables;

pub use cluster::*;
pub use cluster_class::*;
pub use cluster_class_patches::*;
pub use cluster_resource_set::*;
pub use cluster_resource_set_binding::*;
pub use cluster_status::*;
pub use common::*;
pub use json_schema::*;
pub use variables::*;

#[cfg(test)]
mod roundtrip_tests;
