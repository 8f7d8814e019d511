//! Machine taints of Cluster topologies and ClusterClasses, as Cluster API v1.14 validates them.
//!
//! **Project decision:** Cluster API forbids any taint while its `MachineTaintPropagation`
//! feature gate is off (the default). capi-topology has no feature gates: it accepts taints and
//! validates them as the gate-on path does (reserved keys, label-key syntax). The CRD's own rules
//! (effect and propagation enums, required fields) are enforced when the object is decoded.

use crate::api::MachineTaint;
use crate::field::{FieldError, FieldErrors, FieldPath};

use crate::api::names::qualified_name_problems;

/// Errors of the taints at `path` (`...taints`).
pub fn validate(taints: &[MachineTaint], path: &FieldPath) -> FieldErrors {
    let mut errors = FieldErrors::new();
    for (i, taint) in taints.iter().enumerate() {
        let at = path.index(i).child("key");
        let key = taint.key.as_str();
        let reserved = match key {
            "node.cluster.x-k8s.io/uninitialized" | "node.cluster.x-k8s.io/outdated-revision" => {
                Some("taint key is not allowed")
            }
            _ if key.starts_with("node.kubernetes.io/") && key != "node.kubernetes.io/out-of-service" => Some(
                "taint key must not have the prefix node.kubernetes.io/, except for node.kubernetes.io/out-of-service",
            ),
            _ if key.starts_with("node.cloudprovider.kubernetes.io/") => {
                Some("taint key must not have the prefix node.cloudprovider.kubernetes.io/")
            }
            "node-role.kubernetes.io/master" => Some("taint is deprecated since 1.24 and should not be used anymore"),
            _ => None,
        };
        if let Some(detail) = reserved {
            errors.push(FieldError::invalid(&at, key, detail));
        }
        for problem in qualified_name_problems(key) {
            errors.push(FieldError::invalid(&at, key, problem));
        }
    }
    errors
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reserved_and_malformed_keys() {
        let taints: Vec<MachineTaint> = serde_yaml_ng::from_str(
            "[{key: node.kubernetes.io/not-ready, effect: NoSchedule, propagation: Always},
              {key: node.kubernetes.io/out-of-service, effect: NoExecute, propagation: Always},
              {key: node-role.kubernetes.io/master, effect: NoSchedule, propagation: OnInitialization},
              {key: 'bad key', effect: NoSchedule, propagation: Always}]",
        )
        .unwrap();
        let errors: Vec<String> = validate(&taints, &FieldPath::new("spec").child("taints"))
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(errors.len(), 3, "{errors:#?}");
        assert_eq!(
            errors[0],
            r#"spec.taints[0].key: Invalid value: "node.kubernetes.io/not-ready": taint key must not have the prefix node.kubernetes.io/, except for node.kubernetes.io/out-of-service"#
        );
        assert_eq!(
            errors[1],
            r#"spec.taints[2].key: Invalid value: "node-role.kubernetes.io/master": taint is deprecated since 1.24 and should not be used anymore"#
        );
        assert!(errors[2]
            .starts_with(r#"spec.taints[3].key: Invalid value: "bad key": name part must consist of"#));
    }
}
