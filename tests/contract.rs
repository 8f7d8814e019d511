//! `capi-topology contract` on the real CRDs of five infrastructure providers (fetched by
//! `scripts/fetch-provider-crds.sh`), on a provider of the v1beta2 contract, and on a provider
//! that breaks every rule: the verdicts are pinned here and quoted in the README.

use std::process::Output;

#[path = "common/tempdir.rs"]
mod tempdir;

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

/// The five are providers of the v1beta1 contract (judged by its rules, as Cluster API v1.14 still
/// accepts them) in `infrastructure.cluster.x-k8s.io`, which the controllers' own role grants as
/// Cluster API's manager role does: no aggregated ClusterRole is asked of them.
#[test]
fn five_providers_fit_the_contract_and_need_no_aggregated_role() {
    let expected: [(&str, &[&str]); 5] = [
        ("docker", &["DevCluster@v1beta1: ", "DockerCluster@v1beta1: "]),
        (
            "aws",
            &[
                "AWSCluster@v1beta2: ",
                "AWSManagedCluster@v1beta2: ",
                "ROSACluster@v1beta2: template",
            ],
        ),
        (
            "azure",
            &[
                "AzureASOManagedCluster@v1beta1: ",
                "AzureCluster@v1beta1: ",
                "AzureManagedCluster@v1beta1: ",
            ],
        ),
        ("vsphere", &["VSphereCluster@v1beta1: "]),
        ("openstack", &["OpenStackCluster@v1beta1: "]),
    ];
    for (name, verdict) in expected {
        let file = provider(name);
        let (report, code) = report(&[&file]);
        assert_eq!(verdicts(&report), verdict, "{name}: {report:#}");
        assert_eq!(report["contract"], "v1beta2", "{name}");
        let template_missing = name == "aws";
        assert_eq!(code, Some(i32::from(template_missing)), "{name}");
    }
}

#[test]
fn a_v1beta2_provider_is_judged_by_the_v1beta2_rules_and_asked_for_its_role() {
    let file = "tests/fixtures/contract/v1beta2/baz.yaml";
    let (report, code) = report(&[file]);
    assert_eq!(
        verdicts(&report),
        [
            "BazCluster@v1alpha2: rbac",
            "QuxCluster@v1alpha1: schema,rbac,template"
        ],
        "{report:#}"
    );
    assert_eq!(code, Some(1));
    let fields: Vec<&str> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|f| f["field"].as_str())
        .collect();
    assert_eq!(fields, ["status.initialization", "status.failureDomains"]);
}

#[test]
fn the_printed_cluster_role_completes_a_provider_outside_cluster_x_k8s_io() {
    let dir = tempdir::Dir::new("contract");
    let file = "tests/fixtures/contract/v1beta2/baz.yaml";
    let printed = contract(&["-f", file, "--print-rbac"]);
    assert!(printed.status.success());
    let role = dir.join("baz-role.yaml");
    std::fs::write(&role, &printed.stdout).expect("write the role");
    let role = role.to_string_lossy().into_owned();
    let (report, _) = report(&[file, &role]);
    assert_eq!(
        verdicts(&report),
        ["BazCluster@v1alpha2: ", "QuxCluster@v1alpha1: schema,template"],
        "{report:#}"
    );
    drop(dir);
    // A provider in infrastructure.cluster.x-k8s.io needs none.
    let printed = contract(&["-f", &provider("docker"), "--print-rbac"]);
    assert!(printed.status.success());
    assert!(String::from_utf8_lossy(&printed.stdout).starts_with('#'));
}

#[test]
fn every_broken_rule_is_one_line_with_the_crd_and_schema_path() {
    let output = contract(&["-f", "tests/fixtures/contract/broken/"]);
    assert_eq!(output.status.code(), Some(1));
    let text = String::from_utf8_lossy(&output.stdout);
    let expected = r#"foo-clusters.infrastructure.foo.com: metadata.name: must be "fooclusters.infrastructure.foo.com" (contract.CalculateCRDName of group and kind), is "foo-clusters.infrastructure.foo.com"
foo-clusters.infrastructure.foo.com: spec.scope: must be Namespaced, is "Cluster"
foo-clusters.infrastructure.foo.com: metadata.labels[cluster.x-k8s.io/v1beta2]: is missing: Cluster API finds the versions implementing the v1beta2 contract in this label (e.g. cluster.x-k8s.io/v1beta2: v1beta2), or those of the deprecated v1beta1 contract in cluster.x-k8s.io/v1beta1
foo-clusters.infrastructure.foo.com: spec.versions[v1alpha1].schema.openAPIV3Schema.properties.spec.properties.controlPlaneEndpoint.properties.port: must be of type integer, is string (spec.controlPlaneEndpoint.port)
foo-clusters.infrastructure.foo.com: spec.versions[v1alpha1].schema.openAPIV3Schema.properties.status.properties.initialization: is not declared in the schema (status.initialization)
foo-clusters.infrastructure.foo.com: spec.versions[v1alpha1].schema.openAPIV3Schema.properties.status.properties.failureDomains: a failure domain must declare name (string) (status.failureDomains)
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
