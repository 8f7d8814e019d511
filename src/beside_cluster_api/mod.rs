//! Running beside Cluster API's own managers: which of Cluster API's registrations capi-topology
//! takes over, how a management cluster is checked for conflicts, and the pure decisions of
//! switching a fleet's topology controller (the manager's feature gates, our controllers, when a
//! rollout is complete, the dry run's verdict). Values in, values out; the controller and the
//! `cluster-api` subcommand do the reading and writing.

mod doctor;
mod dry_run;
mod findings;
mod manager_flags;
mod our_controllers;
mod ownership;
mod rollout;
mod webhook_entries;

pub use doctor::{diagnose, State};
pub use dry_run::{ClusterPlan, Direction, DryRun, BEFORE_CLUSTER_DELETE_GIVEN_UP};
pub use findings::{Finding, Severity};
pub use manager_flags::{feature_gate, manager_argv, string_list, with_feature_gate, CLUSTER_TOPOLOGY};
pub use our_controllers::{
    container_args, controller_name, running_controllers, runs_our_topology, with_controllers,
    GIVE_BACK_CONTROLLERS, OUR_CONTROLLER_SELECTOR, TAKE_OVER_CONTROLLERS,
};
pub use ownership::Owner;
pub use rollout::rollout_waiting;
pub use webhook_entries::{
    served_resource, switch_ops, Switch, CLUSTER_API_PROVIDER_SELECTOR, MATCH_CONDITION_NAME, TAKEN_RESOURCES,
};
