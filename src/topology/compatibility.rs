//! Whether one ClusterClass may replace another for the Clusters that use it: templates keep
//! their API group and kind, so existing objects can be updated rather than replaced.

use crate::api::{ClusterClass, ClusterClassTemplateReference};
use crate::field::{FieldError, FieldErrors, FieldPath};

/// The errors that make `desired` incompatible with `current` (for a Cluster moving between
/// classes, or a class being updated). Paths are ClusterClass paths; worker errors use the
/// index of the class in `current`. As Cluster API v1.14, the control plane's machine
/// infrastructure is compared when either class has one (so adding or removing it is refused).
pub fn check_classes_compatible(current: &ClusterClass, desired: &ClusterClass) -> FieldErrors {
    let mut errors = FieldErrors::new();
    let spec = FieldPath::new("spec");
    check_refs(
        &current.spec.infrastructure.template_ref,
        &desired.spec.infrastructure.template_ref,
        &spec.children(&["infrastructure", "templateRef"]),
        &mut errors,
    );
    check_refs(
        &current.spec.control_plane.template_ref,
        &desired.spec.control_plane.template_ref,
        &spec.children(&["controlPlane", "templateRef"]),
        &mut errors,
    );
    let (current_machine, desired_machine) = (
        &current.spec.control_plane.machine_infrastructure.template_ref,
        &desired.spec.control_plane.machine_infrastructure.template_ref,
    );
    if !current_machine.is_unset() || !desired_machine.is_unset() {
        check_refs(
            current_machine,
            desired_machine,
            &spec.children(&["controlPlane", "machineInfrastructure", "templateRef"]),
            &mut errors,
        );
    }
    for class in &desired.spec.workers.machine_deployments {
        for (i, old) in current.spec.workers.machine_deployments.iter().enumerate() {
            if old.class == class.class {
                let path = spec.children(&["workers", "machineDeployments"]).index(i);
                check_refs(
                    &old.infrastructure.template_ref,
                    &class.infrastructure.template_ref,
                    &path.children(&["infrastructure", "templateRef"]),
                    &mut errors,
                );
            }
        }
    }
    for class in &desired.spec.workers.machine_pools {
        for (i, old) in current.spec.workers.machine_pools.iter().enumerate() {
            if old.class == class.class {
                let path = spec.children(&["workers", "machinePools"]).index(i);
                check_refs(
                    &old.infrastructure.template_ref,
                    &class.infrastructure.template_ref,
                    &path.children(&["infrastructure", "templateRef"]),
                    &mut errors,
                );
            }
        }
    }
    errors
}

/// Group and kind of a template reference must not change.
fn check_refs(
    current: &ClusterClassTemplateReference,
    desired: &ClusterClassTemplateReference,
    path: &FieldPath,
    errors: &mut FieldErrors,
) {
    let current_group = crate::store::group_of(&current.api_version);
    let desired_group = crate::store::group_of(&desired.api_version);
    if current_group != desired_group {
        errors.push(FieldError::forbidden(
            &path.child("apiVersion"),
            format!(
                "group of apiVersion cannot be changed from {current_group:?} to {desired_group:?} to prevent incompatible changes in the Clusters"
            ),
        ));
    }
    if current.kind != desired.kind {
        errors.push(FieldError::forbidden(
            &path.child("kind"),
            format!(
                "kind cannot be changed from {:?} to {:?} to prevent incompatible changes in the Clusters",
                current.kind, desired.kind
            ),
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn class(infra_kind: &str, worker_group: &str) -> ClusterClass {
        serde_yaml_ng::from_str(&format!(
            "spec:
  infrastructure: {{templateRef: {{apiVersion: infrastructure.cluster.x-k8s.io/v1beta2, kind: {infra_kind}, name: a}}}}
  controlPlane: {{templateRef: {{apiVersion: controlplane.cluster.x-k8s.io/v1beta2, kind: KCPTemplate, name: b}}}}
  workers:
    machineDeployments:
    - class: other
      bootstrap: {{templateRef: {{apiVersion: b/v1, kind: C, name: c}}}}
      infrastructure: {{templateRef: {{apiVersion: b/v1, kind: M, name: m}}}}
    - class: md
      bootstrap: {{templateRef: {{apiVersion: b/v1, kind: C, name: c}}}}
      infrastructure: {{templateRef: {{apiVersion: {worker_group}/v2, kind: M, name: x}}}}
"
        ))
        .unwrap()
    }

    #[test]
    fn names_and_versions_may_change_groups_and_kinds_may_not() {
        assert!(check_classes_compatible(
            &class("DockerClusterTemplate", "infra"),
            &class("DockerClusterTemplate", "infra")
        )
        .is_empty());
        let errors: Vec<String> = check_classes_compatible(
            &class("DockerClusterTemplate", "infra"),
            &class("AWSClusterTemplate", "other"),
        )
        .iter()
        .map(ToString::to_string)
        .collect();
        assert_eq!(
            errors,
            [
                r#"spec.infrastructure.templateRef.kind: Forbidden: kind cannot be changed from "DockerClusterTemplate" to "AWSClusterTemplate" to prevent incompatible changes in the Clusters"#,
                r#"spec.workers.machineDeployments[1].infrastructure.templateRef.apiVersion: Forbidden: group of apiVersion cannot be changed from "infra" to "other" to prevent incompatible changes in the Clusters"#,
            ]
        );
    }
}
