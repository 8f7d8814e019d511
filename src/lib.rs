//! capi-topology: Cluster API's ClusterClass and managed topology, in Rust.
//!
//! The engine (`api`, `field`, `variables`, `patches`, `topology`, `addons`, `admission`) is
//! pure: values in, values out, no I/O. `store` is the object-source trait beside it; `cli` is the
//! adapter the binary runs.

pub mod addons;
pub mod admission;
pub mod api;
pub mod beside_cluster_api;
pub mod cli;
pub mod clock;
pub mod contract;
pub mod controller;
pub mod decode;
pub mod field;
pub mod go_format;
pub mod kube_credentials;
pub mod managed_fields;
pub mod metrics;
pub mod metrics_rollout;
pub mod offline;
pub mod patches;
pub mod rollout;
pub mod runtime;
pub mod server;
pub mod shutdown;
pub mod store;
pub mod telemetry;
pub mod topology;
pub mod variables;
