//! Whether one ClusterClass may replace another for the Clusters that use it: templates keep
//! their API group and kind, so existing objects can be updated rather than replaced.

use crate::api::{ClusterClass, LocalObjectTemplate, ObjectReference};
use crate::field::{FieldError, FieldErrors, FieldPath};

/// The errors that make `desired` incompatible with `current` (for a Cluster moving between
/// classes, or a class being updated). Paths are ClusterClass paths; worker errors use the
/// index of the class in `current`.
pub fn check_classes_compatible(current: &ClusterClass, desired: &ClusterClass) -> FieldErrors {
    let mut errors = FieldErrors::new();
    let spec = FieldPath::new("spec");
    check_refs(
        current.spec.infrastructure.r#ref.as_ref(),
        desired.spec.infrastructure.r#ref.as_ref(),
        &spec.child("infrastructure"),
        &mut errors,
    );
    check_refs(
        current.spec.control_plane.r#ref.as_ref(),
        desired.spec.control_plane.r#ref.as_ref(),
        &spec.child("controlPlane"),
        &mut errors,
    );
    if let (Some(current_infra), Some(desired_infra)) = (
        &current.spec.control_plane.machine_infrastructure,
        &desired.spec.control_plane.machine_infrastructure,
    ) {
        check_templates(
            current_infra,
            desired_infra,
            &spec.children(&["controlPlane", "machineInfrastructure"]),
            &mut errors,
        );
    }
    for class in &desired.spec.workers.machine_deployments {
        for (i, old) in current.spec.workers.machine_deployments.iter().enumerate() {
            if old.class == class.class {
                let path = spec.children(&["workers", "machineDeployments"]).index(i);
                check_templates(
                    &old.template.infrastructure,
                    &class.template.infrastructure,
                    &path,
                    &mut errors,
                );
            }
        }
    }
    for class in &desired.spec.workers.machine_pools {
        for (i, old) in current.spec.workers.machine_pools.iter().enumerate() {
            if old.class == class.class {
                let path = spec.children(&["workers", "machinePools"]).index(i);
                check_templates(
                    &old.template.infrastructure,
                    &class.template.infrastructure,
                    &path,
                    &mut errors,
                );
            }
        }
    }
    errors
}

fn check_templates(
    current: &LocalObjectTemplate,
    desired: &LocalObjectTemplate,
    path: &FieldPath,
    errors: &mut FieldErrors,
) {
    check_refs(current.r#ref.as_ref(), desired.r#ref.as_ref(), path, errors);
}

/// Group and kind of a template reference must not change.
fn check_refs(
    current: Option<&ObjectReference>,
    desired: Option<&ObjectReference>,
    path: &FieldPath,
    errors: &mut FieldErrors,
) {
    let (current_group, current_kind) = group_kind(current);
    let (desired_group, desired_kind) = group_kind(desired);
    if current_group != desired_group {
        errors.push(FieldError::forbidden(
            &path.children(&["ref", "apiVersion"]),
            format!(
                "apiVersion.group cannot be changed from {current_group:?} to {desired_group:?} to prevent incompatible changes in the Clusters"
            ),
        ));
    }
    if current_kind != desired_kind {
        errors.push(FieldError::forbidden(
            &path.children(&["ref", "kind"]),
            format!(
                "apiVersion.kind cannot be changed from {current_kind:?} to {desired_kind:?} to prevent incompatible changes in the Clusters"
            ),
        ));
    }
}

fn group_kind(reference: Option<&ObjectReference>) -> (&str, &str) {
    let Some(reference) = reference else {
        return ("", "");
    };
    let group = crate::store::group_of(reference.api_version.as_deref().unwrap_or_default());
    (group, reference.kind.as_deref().unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn class(infra_kind: &str, worker_group: &str) -> ClusterClass {
        serde_yaml_ng::from_str(&format!(
            "spec:
  infrastructure: {{ref: {{apiVersion: infrastructure.cluster.x-k8s.io/v1beta1, kind: {infra_kind}, name: a}}}}
  controlPlane: {{ref: {{apiVersion: controlplane.cluster.x-k8s.io/v1beta1, kind: KCPTemplate, name: b}}}}
  workers:
    machineDeployments:
    - class: other
      template: {{bootstrap: {{ref: {{apiVersion: b/v1, kind: C, name: c}}}}, infrastructure: {{ref: {{apiVersion: b/v1, kind: M, name: m}}}}}}
    - class: md
      template: {{bootstrap: {{ref: {{apiVersion: b/v1, kind: C, name: c}}}}, infrastructure: {{ref: {{apiVersion: {worker_group}/v2, kind: M, name: x}}}}}}
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
                r#"spec.infrastructure.ref.kind: Forbidden: apiVersion.kind cannot be changed from "DockerClusterTemplate" to "AWSClusterTemplate" to prevent incompatible changes in the Clusters"#,
                r#"spec.workers.machineDeployments[1].ref.apiVersion: Forbidden: apiVersion.group cannot be changed from "infra" to "other" to prevent incompatible changes in the Clusters"#,
            ]
        );
    }
}
