//! Runtime SDK wire types: the ExtensionConfig kind (runtime.cluster.x-k8s.io/v1beta2, the hub;
//! the served v1alpha1 spoke is in [`v1alpha1`]) that registers a Runtime Extension server, and
//! the request and response bodies of the hooks (hooks.runtime.cluster.x-k8s.io/v1alpha1) that
//! server answers, with the JSON names of Cluster API v1.14.

mod extension_config;
mod hooks;
mod lifecycle;
mod topology_mutation;
pub mod v1alpha1;

pub use extension_config::*;
pub use hooks::*;
pub use lifecycle::*;
pub use topology_mutation::*;

#[cfg(test)]
mod tests;
