//! ClusterClass changes rolled out in waves (issue #35), pure: what a revision of a class holds,
//! a source that computes a Cluster's desired state from its revision, the waves a policy makes
//! of a class's Clusters, when a Cluster counts as healthy at a revision, maintenance windows,
//! and the rollout's next step. The controller (`controller::class_rollout`) reads and writes;
//! every decision is made here.

pub mod health;
pub mod pin;
pub mod policy;
pub mod revision;
pub mod source;
pub mod step;
mod step_conditions;
#[cfg(test)]
mod step_tests;
mod step_wave;
pub mod waves;
pub mod window;
