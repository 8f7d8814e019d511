//! What a management cluster that runs capi-topology beside Cluster API must look like, and what
//! is missing or in conflict: read from its objects (as JSON), said in sentences an operator can
//! act on.

use serde_json::Value;

use super::findings::{Finding, Severity};
use super::ownership::{name_of, ownership, Owner};
use super::webhook_entries::{served_resource, MATCH_CONDITION_NAME, TAKEN_RESOURCES};

/// The objects of a management cluster the diagnosis reads (all as the API server returns them).
#[derive(Debug, Default, Clone)]
pub struct State {
    /// Every Validating- and MutatingWebhookConfiguration.
    pub webhook_configurations: Vec<Value>,
    /// The CustomResourceDefinitions of the `*.cluster.x-k8s.io` groups.
    pub crds: Vec<Value>,
    /// The Deployments labelled `cluster.x-k8s.io/provider` (Cluster API's managers).
    pub provider_deployments: Vec<Value>,
    /// The name of capi-topology's own webhook configurations.
    pub own_configuration: String,
    /// capi-topology's controller Deployments (labelled as in manifests/base/deployment.yaml).
    pub own_deployments: Vec<Value>,
    /// How many Clusters have a `spec.topology`.
    pub topology_clusters: usize,
}

/// The diagnosis of `state`, most serious first.
pub fn diagnose(state: &State) -> Vec<Finding> {
    let core: Vec<&Value> = state
        .provider_deployments
        .iter()
        .filter(|d| d["metadata"]["labels"]["cluster.x-k8s.io/provider"] == "cluster-api")
        .collect();
    let mut findings = Vec::new();
    if core.is_empty() {
        findings.push(Finding::new(
            Severity::Warning,
            "no Deployment labelled cluster.x-k8s.io/provider=cluster-api: Cluster API's core manager \
             was not found (Machines, MachineSets and MachineDeployments need it)",
        ));
    }
    let (owner, owners) = ownership(&core, &state.own_deployments, state.topology_clusters);
    findings.extend(owners);
    findings.extend(webhook_owners(state, owner));
    findings.extend(crd_versions(state));
    findings.sort_by_key(|finding| std::cmp::Reverse(finding.severity));
    findings
}

fn switched_off(webhook: &Value) -> bool {
    webhook["matchConditions"].as_array().is_some_and(|conditions| {
        conditions
            .iter()
            .any(|c| c["name"] == MATCH_CONDITION_NAME && c["expression"] == "false")
    })
}

/// Who admits each of the resources capi-topology serves; `owner` decides who should.
fn webhook_owners(state: &State, owner: Owner) -> Vec<Finding> {
    let mut findings = Vec::new();
    for kind in ["ValidatingWebhookConfiguration", "MutatingWebhookConfiguration"] {
        for resource in TAKEN_RESOURCES {
            let serving: Vec<String> = state
                .webhook_configurations
                .iter()
                .filter(|c| c["kind"] == kind)
                .flat_map(|c| {
                    let name = name_of(c);
                    c["webhooks"]
                        .as_array()
                        .into_iter()
                        .flatten()
                        .filter(|w| served_resource(w) == Some(resource) && !switched_off(w))
                        .map(move |w| format!("{name} ({})", w["name"].as_str().unwrap_or_default()))
                })
                .collect();
            let ours = serving
                .iter()
                .any(|s| s.starts_with(&format!("{} (", state.own_configuration)));
            if owner == Owner::ClusterApi && !serving.is_empty() {
                findings.push(admitted_while_cluster_api_owns(kind, resource, &serving, ours));
                continue;
            }
            let message = match (serving.len(), ours) {
                (1, true) => Finding::new(
                    Severity::Ok,
                    format!("{kind}: {resource} are admitted by capi-topology alone"),
                ),
                (0, _) if kind == "MutatingWebhookConfiguration" && resource == "clusterclasses" => continue,
                (0, _) => Finding::new(
                    Severity::Error,
                    format!("{kind}: no webhook admits {resource}: apply the beside-cluster-api overlay"),
                ),
                (_, false) => Finding::new(
                    Severity::Error,
                    format!(
                        "{kind}: {resource} are admitted by {} but not by capi-topology: apply the \
                         beside-cluster-api overlay",
                        serving.join(", ")
                    ),
                ),
                _ => Finding::new(
                    Severity::Error,
                    format!(
                        "{kind}: {resource} are admitted twice, by {}: run `capi-topology cluster-api \
                         take-over --apply` (or let the controller's cluster-api-webhooks switch do it)",
                        serving.join(", ")
                    ),
                ),
            };
            findings.push(message);
        }
    }
    findings
}

/// While Cluster API's topology controller owns the fleet its webhooks admit; ours beside them
/// is harmless (the same rules), ours alone is a switch left half done.
fn admitted_while_cluster_api_owns(kind: &str, resource: &str, serving: &[String], ours: bool) -> Finding {
    let by = serving.join(", ");
    match (ours, serving.len()) {
        (false, _) => Finding::new(
            Severity::Ok,
            format!("{kind}: {resource} are admitted by Cluster API ({by}), whose topology controller owns the fleet"),
        ),
        (true, 1) => Finding::new(
            Severity::Warning,
            format!(
                "{kind}: {resource} are admitted by capi-topology alone while Cluster API's topology \
                 controller owns the fleet: a switch was left half done; run `capi-topology cluster-api \
                 take-over --apply` or `give-back --apply`"
            ),
        ),
        (true, _) => Finding::new(
            Severity::Warning,
            format!(
                "{kind}: {resource} are admitted twice, by {by}: `capi-topology cluster-api give-back \
                 --apply` switches capi-topology's off"
            ),
        ),
    }
}

fn crd_versions(state: &State) -> Vec<Finding> {
    let mut findings = Vec::new();
    for name in ["clusters.cluster.x-k8s.io", "clusterclasses.cluster.x-k8s.io"] {
        let Some(crd) = state.crds.iter().find(|c| c["metadata"]["name"] == name) else {
            findings.push(Finding::new(
                Severity::Error,
                format!("CRD {name} is not installed: install Cluster API v1.14 (clusterctl init)"),
            ));
            continue;
        };
        let versions = crd["spec"]["versions"].as_array().into_iter().flatten();
        let storage = versions
            .clone()
            .find(|v| v["storage"] == true)
            .and_then(|v| v["name"].as_str())
            .unwrap_or_default();
        let served_v1beta2 = versions
            .clone()
            .any(|v| v["name"] == "v1beta2" && v["served"] == true);
        if served_v1beta2 && storage == "v1beta2" {
            findings.push(Finding::new(
                Severity::Ok,
                format!("CRD {name} serves and stores v1beta2"),
            ));
        } else {
            findings.push(Finding::new(
                Severity::Error,
                format!(
                    "CRD {name} stores {storage} and {} v1beta2: capi-topology needs Cluster API \
                     v1.11 or later (v1beta2 storage)",
                    if served_v1beta2 {
                        "serves"
                    } else {
                        "does not serve"
                    }
                ),
            ));
        }
    }
    findings
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::beside_cluster_api::{switch_ops, Switch};

    fn capi_webhooks() -> Value {
        serde_yaml_ng::from_str(include_str!(
            "testdata/capi-validating-webhook-configuration.yaml"
        ))
        .unwrap()
    }

    fn ours() -> Value {
        json!({"kind": "ValidatingWebhookConfiguration", "metadata": {"name": "capi-topology"},
               "webhooks": [
                 {"name": "validation.cluster.cluster.x-k8s.io", "rules": [{"resources": ["clusters"]}]},
                 {"name": "validation.clusterclass.cluster.x-k8s.io", "rules": [{"resources": ["clusterclasses"]}]},
                 {"name": "validation.extensionconfig.runtime.cluster.x-k8s.io", "rules": [{"resources": ["extensionconfigs"]}]}]})
    }

    fn ours_mutating() -> Value {
        json!({"kind": "MutatingWebhookConfiguration", "metadata": {"name": "capi-topology"},
               "webhooks": [
                 {"name": "default.cluster.cluster.x-k8s.io", "rules": [{"resources": ["clusters"]}]},
                 {"name": "default.extensionconfig.runtime.addons.cluster.x-k8s.io", "rules": [{"resources": ["extensionconfigs"]}]}]})
    }

    fn core(gates: &str) -> Value {
        json!({"metadata": {"name": "capi-controller-manager", "namespace": "capi-system",
                            "labels": {"cluster.x-k8s.io/provider": "cluster-api"}},
               "spec": {"template": {"spec": {"containers": [{"name": "manager",
                   "args": ["--leader-elect", format!("--feature-gates={gates}")]}]}}}})
    }

    fn crd(name: &str, storage: &str) -> Value {
        json!({"metadata": {"name": name}, "spec": {"versions": [
            {"name": "v1beta1", "served": true, "storage": storage == "v1beta1"},
            {"name": "v1beta2", "served": true, "storage": storage == "v1beta2"}]}})
    }

    fn state(capi: Value, gates: &str) -> State {
        State {
            webhook_configurations: vec![capi, ours(), ours_mutating()],
            crds: vec![
                crd("clusters.cluster.x-k8s.io", "v1beta2"),
                crd("clusterclasses.cluster.x-k8s.io", "v1beta2"),
            ],
            provider_deployments: vec![core(gates)],
            own_configuration: "capi-topology".to_owned(),
            own_deployments: vec![
                json!({"metadata": {"name": "capi-topology-controller", "namespace": "capi-topology-system"},
                "spec": {"replicas": 1, "template": {"spec": {"containers": [{"name": "capi-topology",
                    "args": ["serve", "--controllers=topology,cluster-class,extension-config"]}]}}}}),
            ],
            topology_clusters: 1,
        }
    }

    fn errors(findings: &[Finding]) -> Vec<&str> {
        findings
            .iter()
            .filter(|f| f.severity == Severity::Error)
            .map(|f| f.message.as_str())
            .collect()
    }

    #[test]
    fn a_taken_over_management_cluster_is_healthy() {
        let capi = capi_webhooks();
        let mut off = capi.clone();
        let patch: json_patch::Patch =
            serde_json::from_value(Value::Array(switch_ops(&capi, Switch::Off))).unwrap();
        json_patch::patch(&mut off, &patch).unwrap();
        let findings = diagnose(&state(off, "MachinePool=true,ClusterTopology=false"));
        assert_eq!(errors(&findings), Vec::<&str>::new());
    }

    #[test]
    fn webhooks_registered_twice_and_the_topology_gate_are_named() {
        let findings = diagnose(&state(capi_webhooks(), "ClusterTopology=true"));
        let errors = errors(&findings);
        assert!(
            errors[0].contains("capi-system/capi-controller-manager")
                || errors.iter().any(|e| e.contains("ClusterTopology=true"))
        );
        assert_eq!(
            errors.iter().filter(|e| e.contains("admitted twice")).count(),
            3,
            "{errors:#?}"
        );
        assert!(errors.iter().any(|e| e.contains("clusters are admitted twice, by capi-validating-webhook-configuration (validation.cluster.cluster.x-k8s.io), capi-topology")));
    }

    #[test]
    fn while_cluster_api_owns_the_fleet_its_webhooks_admit() {
        let mut standby = state(capi_webhooks(), "ClusterTopology=true");
        standby.own_deployments[0]["spec"]["replicas"] = json!(0);
        let findings = diagnose(&standby);
        assert_eq!(errors(&findings), Vec::<&str>::new());
        assert!(findings.iter().any(|f| f
            .message
            .contains("Cluster API's topology controller owns the fleet")));
        assert!(findings.iter().any(|f| f.severity == Severity::Warning
            && f.message.contains("clusters are admitted twice")
            && f.message.contains("give-back --apply")));
    }

    #[test]
    fn old_storage_versions_and_missing_crds_are_errors() {
        let mut state = state(capi_webhooks(), "");
        state.crds = vec![crd("clusters.cluster.x-k8s.io", "v1beta1")];
        let errors = errors(&diagnose(&state)).join("\n");
        assert!(errors.contains("CRD clusters.cluster.x-k8s.io stores v1beta1 and serves v1beta2"));
        assert!(errors.contains("CRD clusterclasses.cluster.x-k8s.io is not installed"));
    }
}
