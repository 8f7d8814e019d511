//! Running beside Cluster API's own managers: which of Cluster API's registrations capi-topology
//! takes over, and how a management cluster is checked for conflicts. Pure: values in, values
//! out; the controller and the `cluster-api` subcommand do the reading and writing.

mod doctor;
mod webhook_entries;

pub use doctor::{diagnose, Finding, Severity, State};
pub use webhook_entries::{
    served_resource, switch_ops, Switch, CLUSTER_API_PROVIDER_SELECTOR, MATCH_CONDITION_NAME, TAKEN_RESOURCES,
};
