//! The variables of every real-world ClusterClass pass the definition checks, and every
//! real-world Cluster's values (Cluster level and overrides), defaulted, pass validation
//! against the status the ClusterClass reconciler would write for those definitions. Values of
//! variables that a class discovers from runtime extensions (not in this corpus) are left out.

use std::path::{Path, PathBuf};

use capi_topology::api::{Cluster, ClusterClass, ClusterVariable};
use capi_topology::field::FieldPath;
use capi_topology::store::parse_manifests;
use capi_topology::variables::{status_variables, validate_definitions, CompiledVariables};
use rstest::rstest;
use serde_json::Value;

/// The first object of `kind` in the file, converted to the v1beta2 hub (the files are v1beta1).
fn object_of_kind(path: &Path, kind: &str) -> Value {
    let text = std::fs::read_to_string(path).unwrap();
    let object = parse_manifests(&text)
        .unwrap()
        .into_iter()
        .find(|object| object["kind"] == kind)
        .unwrap_or_else(|| panic!("no {kind} in {}", path.display()));
    capi_topology::api::convert::to_hub(object).unwrap()
}

#[rstest]
fn real_world_variables_are_valid(
    #[files("tests/fixtures/realworld/*")]
    #[dirs]
    dir: PathBuf,
) {
    let class: ClusterClass =
        serde_json::from_value(object_of_kind(&dir.join("clusterclass.yaml"), "ClusterClass")).unwrap();
    let definitions = validate_definitions(&class.spec.variables, &FieldPath::new("spec").child("variables"));
    assert!(definitions.is_empty(), "{definitions}");

    let compiled = CompiledVariables::compile(&status_variables(&class.spec.variables, &[]));
    let cluster: Cluster =
        serde_json::from_value(object_of_kind(&dir.join("cluster.yaml"), "Cluster")).unwrap();
    let topology = cluster.spec.topology;
    let discovers = class.spec.patches.iter().any(|patch| {
        patch
            .external
            .as_ref()
            .is_some_and(|external| !external.discover_variables_extension.is_empty())
    });
    let inline = |values: &[ClusterVariable]| -> Vec<ClusterVariable> {
        values
            .iter()
            .filter(|value| !discovers || class.spec.variables.iter().any(|v| v.name == value.name))
            .cloned()
            .collect()
    };
    let path = FieldPath::new("spec").children(&["topology", "variables"]);
    let values = compiled
        .default_cluster_variables(inline(&topology.variables), &path, None)
        .unwrap();
    let errors = compiled.validate_cluster_variables(&values, None, &path);
    assert!(errors.is_empty(), "{errors}");

    let workers = topology.workers;
    let overrides: Vec<(FieldPath, Vec<ClusterVariable>)> = workers
        .machine_deployments
        .iter()
        .map(|md| (md.name.as_str(), &md.variables, "machineDeployments"))
        .chain(
            workers
                .machine_pools
                .iter()
                .map(|mp| (mp.name.as_str(), &mp.variables, "machinePools")),
        )
        .filter_map(|(name, variables, list)| {
            let path = FieldPath::new("spec")
                .children(&["topology", "workers", list])
                .key(name)
                .children(&["variables", "overrides"]);
            (!variables.is_empty()).then(|| (path, inline(&variables.overrides)))
        })
        .collect();
    for (path, values) in overrides {
        let values = compiled.default_override_variables(values, &path, None).unwrap();
        let errors = compiled.validate_override_variables(&values, None, &path);
        assert!(errors.is_empty(), "{errors}");
    }
}
