//! Wire types. The hub, which every layer below works on, is cluster.x-k8s.io/v1beta2 and
//! addons.cluster.x-k8s.io/v1beta2 (here) and runtime.cluster.x-k8s.io/v1beta2 (`runtime`, with
//! the Runtime SDK hook bodies), with the JSON names of Cluster API v1.14. The served v1beta1
//! (and ExtensionConfig v1alpha1) spokes live in [`v1beta1`] and [`runtime::v1alpha1`].

pub mod class_revision;
pub mod class_rollout;
mod cluster;
mod cluster_class;
mod cluster_class_patches;
mod cluster_definition_from;
mod cluster_resource_set;
mod cluster_resource_set_binding;
mod cluster_status;
mod common;
pub mod conditions;
pub mod control_plane;
pub mod convert;
pub mod crd;
pub mod crd_constraints;
mod json_schema;
pub mod labels;
mod list_map;
mod machine;
mod machine_deployment;
mod machine_health_check;
mod machine_pool;
mod machine_set;
pub mod names;
mod narrowed;
mod object_ref;
pub mod rollout_crd;
pub mod runtime;
pub mod selector;
pub mod v1beta1;
mod variables;
pub mod version;

pub use cluster::*;
pub use cluster_class::*;
pub use cluster_class_patches::*;
pub use cluster_resource_set::*;
pub use cluster_resource_set_binding::*;
pub use cluster_status::*;
pub use common::*;
pub use json_schema::*;
pub use machine::*;
pub use machine_deployment::*;
pub use machine_health_check::*;
pub use machine_pool::*;
pub use machine_set::*;
pub use object_ref::*;
pub use variables::*;

/// The hub API version of the cluster.x-k8s.io and addons.cluster.x-k8s.io kinds.
pub const HUB_VERSION: &str = "v1beta2";

#[cfg(test)]
mod roundtrip_tests;
