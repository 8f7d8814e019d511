//! Which templates a patch definition's selector matches.

use crate::api::PatchSelector;

/// The place of a template in the topology, which decides the selectors that match it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Role {
    /// The infrastructure cluster template.
    InfrastructureCluster,
    /// The control plane template.
    ControlPlane,
    /// The control plane's infrastructure machine template.
    ControlPlaneMachineInfrastructure,
    /// A bootstrap or infrastructure template of a MachineDeployment of this class.
    MachineDeployment {
        /// The MachineDeployment class.
        class: String,
    },
    /// A bootstrap or infrastructure template of a MachinePool of this class.
    MachinePool {
        /// The MachinePool class.
        class: String,
    },
}

/// Whether `selector` matches a template of `api_version`/`kind` in `role`.
pub fn matches(selector: &PatchSelector, api_version: &str, kind: &str, role: &Role) -> bool {
    if selector.api_version != api_version || selector.kind != kind {
        return false;
    }
    let resources = &selector.match_resources;
    match role {
        Role::InfrastructureCluster => resources.infrastructure_cluster == Some(true),
        Role::ControlPlane | Role::ControlPlaneMachineInfrastructure => resources.control_plane == Some(true),
        Role::MachineDeployment { class } => resources
            .machine_deployment_class
            .as_ref()
            .is_some_and(|names| names.names.iter().any(|pattern| class_matches(pattern, class))),
        Role::MachinePool { class } => resources
            .machine_pool_class
            .as_ref()
            .is_some_and(|names| names.names.iter().any(|pattern| class_matches(pattern, class))),
    }
}

/// `*` matches every class, `*suffix` and `prefix*` match by suffix and prefix, anything else exactly.
pub fn class_matches(pattern: &str, class: &str) -> bool {
    if pattern == "*" || pattern == class {
        return true;
    }
    if let Some(suffix) = pattern.strip_prefix('*') {
        if class.ends_with(suffix) {
            return true;
        }
    }
    pattern
        .strip_suffix('*')
        .is_some_and(|prefix| class.starts_with(prefix))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn selector(yaml: &str) -> PatchSelector {
        serde_yaml_ng::from_str(yaml).unwrap()
    }

    #[test]
    fn class_patterns() {
        assert!(class_matches("*", "anything"));
        assert!(class_matches("default-worker", "default-worker"));
        assert!(class_matches("*-worker", "default-worker"));
        assert!(class_matches("default-*", "default-worker"));
        assert!(!class_matches("default-*", "large-worker"));
        assert!(!class_matches("", "default-worker"));
    }

    #[test]
    fn control_plane_matches_its_machine_template_too() {
        let s = selector("{apiVersion: a/v1, kind: T, matchResources: {controlPlane: true}}");
        assert!(matches(&s, "a/v1", "T", &Role::ControlPlane));
        assert!(matches(&s, "a/v1", "T", &Role::ControlPlaneMachineInfrastructure));
        assert!(!matches(&s, "a/v1", "T", &Role::InfrastructureCluster));
        assert!(!matches(&s, "a/v2", "T", &Role::ControlPlane));
    }

    #[test]
    fn machine_deployment_names_and_empty_lists() {
        let s = selector(
            "{apiVersion: a/v1, kind: T, matchResources: {machineDeploymentClass: {names: ['*-worker']}}}",
        );
        let worker = Role::MachineDeployment {
            class: "default-worker".into(),
        };
        assert!(matches(&s, "a/v1", "T", &worker));
        assert!(!matches(
            &s,
            "a/v1",
            "T",
            &Role::MachineDeployment { class: "gpu".into() }
        ));
        let empty =
            selector("{apiVersion: a/v1, kind: T, matchResources: {machineDeploymentClass: {names: []}}}");
        assert!(!matches(&empty, "a/v1", "T", &worker));
    }
}
