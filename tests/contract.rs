//! `capi-topology contract` on the real CRDs of five infrastructure providers (fetched by
//! `scripts/fetch-provider-crds.sh`) and on a provider that breaks every rule: the verdicts are
//! pinned here and quoted in the README.

use std::process::Output;

use serde_json::Value;

fn contract(args: &[&str]) -> Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_capi-topology"))
        .arg("contract")
        .args(args)
        .output()
        .expect("the binary runs")
}

fn provider(name: &str) -> String {
    format!("tests/fixtures/contract/providers/{name}.yaml")
}

/// The JSON report and the exit code.
fn report(files: &[&str]) -> (Value, Option<i32>) {
    let mut args: Vec<&str> = Vec::new();
    for file in files {
        args.extend(["-f", file]);
    }
    args.extend(["-o", "json"]);
    let output = contract(&args);
    let report = serde_json::from_slice(&output.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&output.stderr)));
    (report, output.status.code())
}

/// `kind@version: rules broken` for each kind checked, in order.
fn verdicts(report: &Value) -> Vec<String> {
    let findings = report["findings"].as_array().expect("findings");
    report["checked"]
        .as_array()
        .expect("checked")
        .iter()
        .map(|checked| {
            let crd = checked["crd"].as_str().unwrap_or_default();
            let template = checked["template"].as_str().unwrap_or("-");
            let mut rules: Vec<&str> = findings
                .iter()
                .filter(|f| f["crd"] == crd || f["crd"] == template)
                .map(|f| f["rule"].as_str().unwrap_or_default())
                .collect();
            rules.dedup();
            format!(
                "{}@{}: {}",
                checked["kind"].as_str().unwrap_or_default(),
                checked["version"].as_str().unwrap_or("-"),
                rules.join(",")
            )
        })
        .collect()
}

#[test]
fn five_providers_fit_the_schema_rules_and_lack_only_aggregated_rbac() {
    let expected: [(&str, &[&str]); 5] = [
        (
            "docker",
            &["DevCluster@v1beta1: rbac", "DockerCluster@v1beta1: rbac"],
        ),
        (
            "aws",
            &[
                "AWSCluster@v1beta2: rbac",
                "AWSManagedCluster@v1beta2: rbac",
                "ROSACluster@v1beta2: rbac,template",
            ],
        ),
        (
            "azure",
            &[
                "AzureASOManagedCluster@v1beta1: rbac",
                "AzureCluster@v1beta1: rbac",
                "AzureManagedCluster@v1beta1: rbac",
            ],
        ),
        // CAPV labels its manager role for aggregation: it covers VSphereClusters, not their templates.
        ("vsphere", &["VSphereCluster@v1beta1: rbac"]),
        ("openstack", &["OpenStackCluster@v1beta1: rbac"]),
    ];
    for (name, verdict) in expected {
        let file = provider(name);
        let (report, code) = report(&[&file]);
        assert_eq!(verdicts(&report), verdict, "{name}: {report:#}");
        assert_eq!(code, Some(1), "{name}");
    }
}

#[test]
fn the_printed_cluster_role_completes_each_provider() {
    let dir = std::env::temp_dir().join(format!("capi-topology-contract-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    for name in ["docker", "aws", "azure", "vsphere", "openstack"] {
        let file = provider(name);
        let printed = contract(&["-f", &file, "--print-rbac"]);
        assert!(printed.status.success(), "{name}");
        let role = dir.join(format!("{name}-role.yaml"));
        std::fs::write(&role, &printed.stdout).expect("write the role");
        let role = role.to_string_lossy().into_owned();
        let (report, code) = report(&[&file, &role]);
        let template_missing = report["findings"]
            .as_array()
            .is_some_and(|f| f.iter().any(|f| f["rule"] == "template"));
        let expected = if template_missing { 1 } else { 0 };
        assert_eq!(code, Some(expected), "{name}: {report:#}");
        assert!(
            report["findings"]
                .as_array()
                .is_some_and(|f| f.iter().all(|f| f["rule"] != "rbac")),
            "{name}"
        );
    }
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn every_broken_rule_is_one_line_with_the_crd_and_schema_path() {
    let output = contract(&["-f", "tests/fixtures/contract/broken/"]);
    assert_eq!(output.status.code(), Some(1));
    let text = String::from_utf8_lossy(&output.stdout);
    let expected = r#"foo-clusters.infrastructure.foo.com: metadata.name: must be "fooclusters.infrastructure.foo.com" (contract.CalculateCRDName of group and kind), is "foo-clusters.infrastructure.foo.com"
foo-clusters.infrastructure.foo.com: spec.scope: must be Namespaced, is "Cluster"
foo-clusters.infrastructure.foo.com: metadata.labels[cluster.x-k8s.io/v1beta1]: is missing: Cluster API finds the versions implementing the v1beta1 contract in this label (e.g. cluster.x-k8s.io/v1beta1: v1beta1)
foo-clusters.infrastructure.foo.com: spec.versions[v1alpha1].schema.openAPIV3Schema.properties.spec.properties.controlPlaneEndpoint.properties.port: must be of type integer, is string (spec.controlPlaneEndpoint.port)
foo-clusters.infrastructure.foo.com: spec.versions[v1alpha1].schema.openAPIV3Schema.properties.status.properties.ready: is not declared in the schema (status.ready)
foo-clusters.infrastructure.foo.com: spec.versions[v1alpha1].schema.openAPIV3Schema.properties.status.properties.failureDomains: must be of type object, is array (a map of failure domains) (status.failureDomains)
foo-clusters.infrastructure.foo.com: spec.names.kind: no CRD of its template kind FooClusterTemplate (group infrastructure.foo.com) among the files; a ClusterClass refers to InfraClusterTemplates
FooCluster (foo-clusters.infrastructure.foo.com, v1alpha1): 7 rules broken
BarCluster (barclusters.infrastructure.foo.com, v1alpha2): fits the contract
"#;
    pretty_assertions::assert_eq!(text, expected);
}

#[test]
fn kinds_can_be_named_and_nothing_to_check_is_an_error() {
    let output = contract(&["-f", "tests/fixtures/contract/broken/", "--kind", "BarCluster"]);
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stdout)
    );
    let output = contract(&["-f", "tests/fixtures/contract/broken/", "--kind", "Nope"]);
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("no CRD of kind Nope among the files; CRD kinds found: FooCluster, BarCluster, BarClusterTemplate"), "{stderr}");
}
