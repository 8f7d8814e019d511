//! A ClusterClass's `kubernetesVersions`: semantic versions, strictly increasing, each at most
//! one minor after the one before; on update, no version a Cluster of the class runs may go.

use std::sync::Arc;

use crate::api::version::{compare_with_build, parse_tolerant, VersionOrder};
use crate::api::{Cluster, ClusterClass};
use crate::field::{FieldError, FieldErrors, FieldPath};

/// Errors of the list's format. The path is `spec.kubernetesVersion[i]`, singular, as Cluster
/// API v1.14 writes it.
pub fn validate(class: &ClusterClass) -> FieldErrors {
    let mut errors = FieldErrors::new();
    let path = FieldPath::new("spec").child("kubernetesVersion");
    let mut previous: Option<semver::Version> = None;
    for (i, text) in class.spec.kubernetes_versions.iter().enumerate() {
        let at = path.index(i);
        let Some(version) = parse_tolerant(text) else {
            errors.push(FieldError::invalid(
                &at,
                text.as_str(),
                "version must be a valid semantic version",
            ));
            continue;
        };
        if let Some(previous) = &previous {
            // Same numbers with another textual build tag are tolerated (not ordered).
            if matches!(
                compare_with_build(&version, previous),
                VersionOrder::Less | VersionOrder::Equal
            ) {
                errors.push(FieldError::invalid(
                    &at,
                    text.as_str(),
                    format!("version must be greater than v{previous}"),
                ));
            }
            if previous.minor != version.minor && previous.minor + 1 != version.minor {
                errors.push(FieldError::invalid(
                    &at,
                    text.as_str(),
                    format!(
                        "expecting a version with minor {} or {}, found version {version}",
                        previous.minor,
                        previous.minor + 1
                    ),
                ));
            }
        }
        previous = Some(version);
    }
    errors
}

/// With a version list in the new class, each Cluster using it must run a listed version.
pub fn validate_used(clusters: &[Arc<Cluster>], new: &ClusterClass) -> FieldErrors {
    let versions = &new.spec.kubernetes_versions;
    if versions.is_empty() {
        return FieldErrors::new();
    }
    let path = FieldPath::new("spec").child("kubernetesVersions");
    clusters
        .iter()
        .filter(|c| !versions.contains(&c.spec.topology.version))
        .map(|c| {
            FieldError::forbidden(
                &path,
                format!(
                    "Kubernetes Version {} is used by Cluster {:?} but not set in ClusterClass",
                    c.spec.topology.version,
                    c.metadata.name.as_deref().unwrap_or_default()
                ),
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn errors_of(versions: &[&str]) -> Vec<String> {
        let mut class = ClusterClass::default();
        class.spec.kubernetes_versions = versions.iter().map(|v| (*v).to_owned()).collect();
        validate(&class).iter().map(ToString::to_string).collect()
    }

    #[test]
    fn versions_increase_one_minor_at_a_time() {
        assert!(errors_of(&["v1.30.0", "v1.30.5", "1.31", "v1.32.0+a", "v1.32.0+b"]).is_empty());
        assert_eq!(
            errors_of(&["v1.30.0", "v1.32.0", "v1.31.0", "x"]),
            [
                r#"spec.kubernetesVersion[1]: Invalid value: "v1.32.0": expecting a version with minor 30 or 31, found version 1.32.0"#,
                r#"spec.kubernetesVersion[2]: Invalid value: "v1.31.0": version must be greater than v1.32.0"#,
                r#"spec.kubernetesVersion[2]: Invalid value: "v1.31.0": expecting a version with minor 32 or 33, found version 1.31.0"#,
                r#"spec.kubernetesVersion[3]: Invalid value: "x": version must be a valid semantic version"#,
            ]
        );
    }
}
