//! Wire types for cluster.x-k8s.io/v1beta1: the kinds admission and the topology engine read,
//! with the JSON names of Cluster API v1.10.

mod cluster;
mod cluster_class;
mod cluster_class_patches;
mod common;
mod json_schema;
pub mod labels;
mod variables;

pub use cluster::*;
pub use cluster_class::*;
pub use cluster_class_patches::*;
pub use common::*;
pub use json_schema::*;
pub use variables::*;
