//! The infrastructure provider contract (v1beta2, and the deprecated v1beta1 one) as data: what an InfraCluster and its
//! template must declare, which version of a provider's kind Cluster API uses, and how an
//! InfraCluster's fields flow into its Cluster. Pure: the `contract` subcommand and the Cluster
//! infrastructure controller both decide here.

pub mod check;
pub mod cluster_status;
pub mod crd;
pub mod crd_name;
pub mod deletion;
pub mod external;
pub mod provider_fields;
pub mod rbac;
pub mod ref_versions;
pub mod schema_rules;
pub mod versions;

#[cfg(test)]
mod cluster_status_tests;
