//! The topology engine: what a ClusterClass allows and what a topology should create.

pub mod blueprint;
pub mod builtins;
pub mod class_status;
pub mod compatibility;
pub mod current;
pub mod desired;
pub mod diff;
pub mod error;
pub mod hooks;
pub mod hooks_pending;
pub mod names;
pub mod plan;
mod plan_facts;
mod plan_items;
mod plan_patches;
mod plan_upgrade;
mod plan_workers;
pub mod reconcile;
mod reconcile_class;
pub mod server_side_apply;
mod template_names;
pub mod topology_finalizers;
pub mod upgrade;
pub mod upgrade_hooks;
pub mod upgrade_outline;
pub mod upgrade_report;
pub mod upgrade_steps;
pub mod what_changes;
pub mod workers;

pub use blueprint::Blueprint;
pub use current::Current;
pub use error::TopologyError;
pub use plan::{plan, plan_with_hooks, Plan};
