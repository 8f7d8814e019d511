//! Which topology controller owns the fleet: Cluster API's (its core manager runs with
//! `ClusterTopology` on, read as the manager reads its flags), capi-topology's (its controller
//! Deployment runs `topology` with replicas), both (an error: two controllers write every
//! Cluster's objects) or none (a warning when topology-managed Clusters exist).

use serde_json::Value;

use super::dry_run::BEFORE_CLUSTER_DELETE_GIVEN_UP;
use super::findings::{Finding, Severity};
use super::manager_flags::{feature_gate, manager_argv, CLUSTER_TOPOLOGY};
use super::our_controllers::runs_our_topology;

/// The topology controller that owns the fleet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Owner {
    /// Cluster API's own (core manager, `ClusterTopology=true`).
    ClusterApi,
    /// capi-topology's.
    CapiTopology,
    /// Both run: they fight.
    Both,
    /// Neither runs.
    None,
}

pub(super) fn name_of(object: &Value) -> String {
    let meta = &object["metadata"];
    match meta["namespace"].as_str() {
        Some(ns) => format!("{ns}/{}", meta["name"].as_str().unwrap_or_default()),
        None => meta["name"].as_str().unwrap_or_default().to_owned(),
    }
}

/// Whether Cluster API's core manager Deployment runs its topology controller; an error finding
/// when its manager would refuse its command line.
fn core_runs_topology(deployment: &Value) -> Result<bool, Finding> {
    let replicas = deployment["spec"]["replicas"].as_i64().unwrap_or(1);
    let containers = deployment["spec"]["template"]["spec"]["containers"].as_array();
    let Some(manager) = containers.into_iter().flatten().find(|c| c["name"] == "manager") else {
        return Ok(false);
    };
    match feature_gate(&manager_argv(manager), CLUSTER_TOPOLOGY) {
        Ok(on) => Ok(on && replicas > 0),
        Err(error) => Err(Finding::new(
            Severity::Error,
            format!(
                "Deployment {}: the manager refuses its command line ({error}): Cluster API's core \
                 manager does not run; fix its args",
                name_of(deployment)
            ),
        )),
    }
}

/// The owner of the fleet and the findings that say so.
pub fn ownership(core: &[&Value], ours: &[Value], topology_clusters: usize) -> (Owner, Vec<Finding>) {
    let mut findings = Vec::new();
    let mut capi = Vec::new();
    for deployment in core {
        match core_runs_topology(deployment) {
            Ok(true) => capi.push(name_of(deployment)),
            Ok(false) => {}
            Err(finding) => findings.push(finding),
        }
    }
    let mut own = Vec::new();
    for deployment in ours {
        match runs_our_topology(deployment) {
            Ok(true) => own.push(name_of(deployment)),
            Ok(false) => {}
            Err(error) => findings.push(Finding::new(
                Severity::Error,
                format!("Deployment {}: {error}", name_of(deployment)),
            )),
        }
    }
    let owner = match (capi.is_empty(), own.is_empty()) {
        (false, false) => Owner::Both,
        (false, true) => Owner::ClusterApi,
        (true, false) => Owner::CapiTopology,
        (true, true) => Owner::None,
    };
    findings.push(match owner {
        Owner::Both => Finding::new(
            Severity::Error,
            format!(
                "two topology controllers write every Cluster's objects: Cluster API's ({}, \
                 ClusterTopology=true) and capi-topology's ({}); run `capi-topology cluster-api \
                 take-over --apply` or `give-back --apply` to leave one",
                capi.join(", "),
                own.join(", ")
            ),
        ),
        Owner::ClusterApi => Finding::new(
            Severity::Ok,
            format!(
                "Cluster API's topology controller owns the fleet (Deployment {}, ClusterTopology=true); \
                 capi-topology's is not running",
                capi.join(", ")
            ),
        ),
        Owner::CapiTopology => Finding::new(
            Severity::Ok,
            format!(
                "capi-topology's topology controller owns the fleet (Deployment {}); Cluster API's is off",
                own.join(", ")
            ),
        ),
        Owner::None if topology_clusters > 0 => Finding::new(
            Severity::Warning,
            format!(
                "no topology controller runs: {topology_clusters} topology-managed Clusters are not \
                 reconciled; run `capi-topology cluster-api take-over --apply` (or `give-back --apply`)"
            ),
        ),
        Owner::None => Finding::new(
            Severity::Ok,
            "no topology controller runs, and no Cluster has a spec.topology",
        ),
    });
    if owner == Owner::CapiTopology {
        findings.push(Finding::new(Severity::Warning, BEFORE_CLUSTER_DELETE_GIVEN_UP));
    }
    (owner, findings)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn core(args: &[&str]) -> Value {
        json!({"metadata": {"name": "capi-controller-manager", "namespace": "capi-system"},
               "spec": {"replicas": 1, "template": {"spec": {"containers": [{"name": "manager", "args": args}]}}}})
    }

    fn ours(replicas: i64, controllers: &str) -> Value {
        json!({"metadata": {"name": "capi-topology-controller", "namespace": "capi-topology-system"},
               "spec": {"replicas": replicas, "template": {"spec": {"containers": [{"name": "capi-topology",
                   "args": ["serve", "--components=controllers", format!("--controllers={controllers}")]}]}}}})
    }

    fn owner(core_args: &[&str], our: Value, clusters: usize) -> (Owner, Vec<Finding>) {
        let core = core(core_args);
        ownership(&[&core], &[our], clusters)
    }

    #[test]
    fn each_owner_is_named() {
        let on = [
            "--feature-gates",
            "MachinePool=true",
            "--feature-gates=ClusterTopology=true",
        ];
        let off = ["--feature-gates=ClusterTopology=true,ClusterTopology=false"];
        assert_eq!(owner(&on, ours(0, "topology"), 3).0, Owner::ClusterApi);
        assert_eq!(
            owner(&off, ours(1, "topology,cluster-class"), 3).0,
            Owner::CapiTopology
        );
        let (both, findings) = owner(&on, ours(2, "topology"), 3);
        assert_eq!(both, Owner::Both);
        assert!(findings.iter().any(|f| f.severity == Severity::Error
            && f.message
                .contains("two topology controllers write every Cluster's objects")));
        let (none, findings) = owner(&off, ours(1, "extension-config"), 3);
        assert_eq!(none, Owner::None);
        assert!(findings
            .iter()
            .any(|f| f.severity == Severity::Warning && f.message.contains("3 topology-managed Clusters")));
        let (_, findings) = owner(&off, ours(1, "extension-config"), 0);
        assert!(findings.iter().all(|f| f.severity == Severity::Ok));
    }

    #[test]
    fn owning_the_fleet_says_what_before_cluster_delete_gives_up() {
        let (_, findings) = owner(&[], ours(1, "topology"), 1);
        assert!(findings
            .iter()
            .any(|f| f.message.contains("BeforeClusterDelete cannot hold a deletion")));
    }

    #[test]
    fn a_command_line_the_manager_refuses_is_an_error() {
        let (owner, findings) = owner(&["-feature-gates=ClusterTopology=true"], ours(0, "topology"), 0);
        assert_eq!(owner, Owner::None);
        assert!(findings
            .iter()
            .any(|f| f.severity == Severity::Error && f.message.contains("unknown shorthand flag")));
    }
}
