//! Naming strategies: each template renders, with sample values, to a valid object name.

use serde_json::json;

use crate::api::names::subdomain_problems;
use crate::api::ClusterClass;
use crate::field::{FieldError, FieldErrors, FieldPath};
use crate::patches::template::{ExecOptions, Template};

/// Errors of every naming strategy of the class.
pub fn validate(class: &ClusterClass) -> FieldErrors {
    let mut errors = FieldErrors::new();
    let spec = FieldPath::new("spec");
    let strategies = [
        (
            &class.spec.infrastructure.naming,
            spec.children(&["infrastructure", "naming", "template"]),
            "InfraCluster",
            None,
        ),
        (
            &class.spec.control_plane.naming,
            spec.children(&["controlPlane", "naming", "template"]),
            "ControlPlane",
            None,
        ),
    ];
    let md = class.spec.workers.machine_deployments.iter().map(|c| {
        let path = spec
            .children(&["workers", "machineDeployments"])
            .key(&c.class)
            .children(&["naming", "template"]);
        (&c.naming, path, "MachineDeployment", Some("machineDeployment"))
    });
    let mp = class.spec.workers.machine_pools.iter().map(|c| {
        let path = spec
            .children(&["workers", "machinePools"])
            .key(&c.class)
            .children(&["naming", "template"]);
        (&c.naming, path, "MachinePool", Some("machinePool"))
    });
    for (strategy, path, kind, worker) in strategies.into_iter().chain(md).chain(mp) {
        // v1.14: an empty template is unset.
        let source = &strategy.template;
        if source.is_empty() {
            continue;
        }
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
