//! Naming strategies: each template renders, with sample values, to a valid object name.

use serde_json::json;

use crate::api::ClusterClass;
use crate::field::{FieldError, FieldErrors, FieldPath};
use crate::patches::template::{ExecOptions, Template};

/// Longest DNS-1123 subdomain.
const MAX_SUBDOMAIN: usize = 253;

/// Errors of every naming strategy of the class.
pub fn validate(class: &ClusterClass) -> FieldErrors {
    let mut errors = FieldErrors::new();
    let spec = FieldPath::new("spec");
    let strategies = [
        (
            class.spec.infrastructure_naming_strategy.as_ref(),
            spec.children(&["infrastructureNamingStrategy", "template"]),
            "InfraCluster",
            None,
        ),
        (
            class.spec.control_plane.naming_strategy.as_ref(),
            spec.children(&["controlPlane", "namingStrategy", "template"]),
            "ControlPlane",
            None,
        ),
    ];
    let md = class.spec.workers.machine_deployments.iter().map(|c| {
        let path = spec
            .children(&["workers", "machineDeployments"])
            .key(&c.class)
            .children(&["namingStrategy", "template"]);
        (
            c.naming_strategy.as_ref(),
            path,
            "MachineDeployment",
            Some("machineDeployment"),
        )
    });
    let mp = class.spec.workers.machine_pools.iter().map(|c| {
        let path = spec
            .children(&["workers", "machinePools"])
            .key(&c.class)
            .children(&["namingStrategy", "template"]);
        (
            c.naming_strategy.as_ref(),
            path,
            "MachinePool",
            Some("machinePool"),
        )
    });
    for (strategy, path, kind, worker) in strategies.into_iter().chain(md).chain(mp) {
        let Some(source) = strategy.and_then(|s| s.template.as_ref()) else {
            continue;
        };
        match render(source, worker) {
            Err(reason) => errors.push(FieldError::invalid(
                &path,
                source.as_str(),
                format!("invalid {kind} name template: {reason}"),
            )),
            Ok(name) => {
                for problem in subdomain_problems(&name) {
                    errors.push(FieldError::invalid(&path, source.as_str(), problem));
                }
            }
        }
    }
    errors
}

/// Renders a naming template with the sample values Cluster API checks with.
fn render(source: &str, worker: Option<&str>) -> Result<String, String> {
    let template = Template::parse_builtins_only(source).map_err(|e| e.to_string())?;
    let mut data = json!({"cluster": {"name": "cluster"}, "random": "abcde"});
    if let Some(worker) = worker {
        data[worker] =
            json!({"topologyName": if worker == "machinePool" { "mptopology" } else { "mdtopology" }});
    }
    let options = ExecOptions {
        missing_key_error: true,
        ..ExecOptions::default()
    };
    template.execute(&data, &options).map_err(|e| e.to_string())
}

/// Why `name` is not a DNS-1123 subdomain, in Kubernetes' words.
fn subdomain_problems(name: &str) -> Vec<String> {
    let mut problems = Vec::new();
    if name.len() > MAX_SUBDOMAIN {
        problems.push(format!("must be no more than {MAX_SUBDOMAIN} characters"));
    }
    let label_ok = |label: &str| {
        let bytes = label.as_bytes();
        !bytes.is_empty()
            && bytes
                .iter()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || *b == b'-')
            && bytes.first().is_some_and(|b| b.is_ascii_alphanumeric())
            && bytes.last().is_some_and(|b| b.is_ascii_alphanumeric())
    };
    if !name.split('.').all(label_ok) {
        problems.push(
            "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must \
             start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is \
             '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
                .to_owned(),
        );
    }
    problems
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_with_sample_values() {
        assert_eq!(
            render("{{ .cluster.name }}-{{ .random }}", None).unwrap(),
            "cluster-abcde"
        );
        assert_eq!(
            render("{{ .machineDeployment.topologyName }}", Some("machineDeployment")).unwrap(),
            "mdtopology"
        );
        assert!(render("{{ .nope.name }}", None).unwrap_err().contains("nope"));
        assert!(
            render("{{ upper .cluster.name }}", None).is_err(),
            "sprig functions are not available to names"
        );
    }

    #[test]
    fn names_must_be_subdomains() {
        assert!(subdomain_problems("cluster-abcde").is_empty());
        assert_eq!(subdomain_problems("Cluster_1").len(), 1);
        assert_eq!(subdomain_problems(&"a".repeat(254)).len(), 1);
    }
}
