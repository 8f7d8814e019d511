//! `capi-topology contract`: whether a provider's CRDs (and ClusterRoles) fit the InfraCluster
//! contract Cluster API v1.14 speaks (v1beta2, or the deprecated v1beta1 one for a CRD labelled
//! only for it), before anyone installs them.

use std::fmt;

use serde::Serialize;
use serde_json::Value;

use super::crd::{Crd, CrdVersion};
use super::crd_name::crd_name;
use super::rbac::{granted_to_core, AggregatedGrants, AGGREGATE_LABEL, INFRA_CLUSTER_VERBS, TEMPLATE_VERBS};
use super::schema_rules::{
    check_fields, FieldRule, INFRA_CLUSTER, INFRA_CLUSTER_TEMPLATE, INFRA_CLUSTER_V1BETA1,
};
use super::versions::{compare_versions, contract_versions, CONTRACT, CONTRACT_LABEL};

/// Which contract rule a finding breaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Rule {
    /// The CRD's name is not `CalculateCRDName(group, kind)`.
    CrdName,
    /// The kind is cluster-scoped.
    Scope,
    /// No `cluster.x-k8s.io/v1beta2` (or `v1beta1`) label, or it names versions the CRD does not
    /// serve.
    ContractLabel,
    /// A field the contract names is missing or mistyped in the schema.
    Schema,
    /// The InfraClusterTemplate kind is missing.
    Template,
    /// No aggregated ClusterRole grants what the controllers need (for a group outside
    /// `*.cluster.x-k8s.io`, which the controllers' own role covers).
    Rbac,
}

/// One broken rule.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Finding {
    /// The CRD (`awsclusters.infrastructure.cluster.x-k8s.io`).
    pub crd: String,
    /// The rule.
    pub rule: Rule,
    /// The API version whose schema was checked, for schema findings.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// The object field (`spec.controlPlaneEndpoint.port`), for schema findings.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub field: Option<String>,
    /// The path in the CRD document (`spec.versions[v1beta2].schema.openAPIV3Schema.properties...`).
    pub schema_path: String,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for Finding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}: {}", self.crd, self.schema_path, self.message)
    }
}

/// One InfraCluster kind that was checked.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Checked {
    /// The kind (`AWSCluster`).
    pub kind: String,
    /// Its CRD.
    pub crd: String,
    /// The version checked: the newest the contract label lists, else the storage version.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// Its template's CRD, when among the files.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub template: Option<String>,
    /// How many findings concern the two.
    pub findings: usize,
}

/// What the check found.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Report {
    /// The contract checked against.
    pub contract: &'static str,
    /// Each InfraCluster kind checked, in the files' order.
    pub checked: Vec<Checked>,
    /// ClusterRoles labelled to aggregate into the manager.
    pub aggregated_cluster_roles: usize,
    /// Every broken rule.
    pub findings: Vec<Finding>,
    /// The grants the aggregated ClusterRoles lack, one per resource (see [`Report::cluster_role`]).
    pub missing_grants: Vec<Grant>,
}

/// Verbs on one resource.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Grant {
    /// The API group.
    pub group: String,
    /// The resource (plural).
    pub resource: String,
    /// The verbs.
    pub verbs: Vec<String>,
}

impl Report {
    /// A ClusterRole granting every missing verb, labelled to aggregate into the manager;
    /// `None` when nothing is missing.
    pub fn cluster_role(&self) -> Option<Value> {
        if self.missing_grants.is_empty() {
            return None;
        }
        let rules: Vec<Value> = self
            .missing_grants
            .iter()
            .map(|g| serde_json::json!({"apiGroups": [g.group], "resources": [g.resource], "verbs": g.verbs}))
            .collect();
        let group = &self.missing_grants[0].group;
        Some(serde_json::json!({
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRole",
            "metadata": {
                "name": format!("capi-topology-{}", group.replace('.', "-")),
                "labels": {AGGREGATE_LABEL: "true"},
            },
            "rules": rules,
        }))
    }
}

/// Checks every InfraCluster CRD among `objects` (those whose kind is in `kinds`, or, when
/// `kinds` is empty, every kind ending in `Cluster` outside cluster.x-k8s.io) with its template
/// CRD and the aggregated ClusterRoles. `Err` when there is no InfraCluster CRD to check.
pub fn check_provider(objects: &[Value], kinds: &[String]) -> Result<Report, String> {
    let crds: Vec<Crd<'_>> = objects.iter().filter_map(Crd::read).collect();
    let wanted = |crd: &Crd<'_>| {
        if kinds.is_empty() {
            crd.kind.ends_with("Cluster") && crd.group != "cluster.x-k8s.io"
        } else {
            kinds.iter().any(|k| k == crd.kind)
        }
    };
    let infra_clusters: Vec<&Crd<'_>> = crds.iter().filter(|crd| wanted(crd)).collect();
    if infra_clusters.is_empty() {
        return Err(no_infra_cluster(&crds, kinds));
    }
    let grants = AggregatedGrants::from_objects(objects);
    let mut report = Report {
        contract: CONTRACT,
        checked: Vec::new(),
        aggregated_cluster_roles: grants.roles(),
        findings: Vec::new(),
        missing_grants: Vec::new(),
    };
    for crd in infra_clusters {
        let before = report.findings.len();
        let version = check_crd(crd, infra_cluster_rules, &mut report.findings);
        check_rbac(crd, &grants, &INFRA_CLUSTER_VERBS, &mut report);
        let template_kind = format!("{}Template", crd.kind);
        let template = crds
            .iter()
            .find(|t| t.group == crd.group && t.kind == template_kind);
        match template {
            Some(template) => {
                check_crd(template, |_| &INFRA_CLUSTER_TEMPLATE, &mut report.findings);
                check_rbac(template, &grants, &TEMPLATE_VERBS, &mut report);
            }
            None => report.findings.push(finding(
                crd,
                Rule::Template,
                "spec.names.kind".to_owned(),
                format!(
                    "no CRD of its template kind {template_kind} (group {}) among the files; a ClusterClass \
                     refers to InfraClusterTemplates",
                    crd.group
                ),
            )),
        }
        report.checked.push(Checked {
            kind: crd.kind.to_owned(),
            crd: crd.name.to_owned(),
            version,
            template: template.map(|t| t.name.to_owned()),
            findings: report.findings.len() - before,
        });
    }
    Ok(report)
}

fn no_infra_cluster(crds: &[Crd<'_>], kinds: &[String]) -> String {
    let what = if kinds.is_empty() {
        "no InfraCluster CRD (a kind ending in Cluster) among the files".to_owned()
    } else {
        format!("no CRD of kind {} among the files", kinds.join(", "))
    };
    let seen: Vec<&str> = crds.iter().map(|c| c.kind).collect();
    if seen.is_empty() {
        format!("{what}: they hold no CustomResourceDefinition")
    } else {
        format!(
            "{what}; CRD kinds found: {} (name one with --kind)",
            seen.join(", ")
        )
    }
}

fn finding(crd: &Crd<'_>, rule: Rule, schema_path: String, message: String) -> Finding {
    Finding {
        crd: crd.name.to_owned(),
        rule,
        version: None,
        field: None,
        schema_path,
        message,
    }
}

/// The InfraCluster's rules under `contract`.
fn infra_cluster_rules(contract: &str) -> &'static [FieldRule] {
    if contract == CONTRACT {
        &INFRA_CLUSTER
    } else {
        &INFRA_CLUSTER_V1BETA1
    }
}

/// Name, scope, contract label and the schema of the version Cluster API would use, against the
/// rules of the contract the CRD implements; returns that version's name.
fn check_crd(
    crd: &Crd<'_>,
    rules_of: impl Fn(&str) -> &'static [FieldRule],
    findings: &mut Vec<Finding>,
) -> Option<String> {
    let expected = crd_name(crd.group, crd.kind);
    if crd.name != expected {
        findings.push(finding(
            crd,
            Rule::CrdName,
            "metadata.name".to_owned(),
            format!(
                "must be {expected:?} (contract.CalculateCRDName of group and kind), is {:?}",
                crd.name
            ),
        ));
    }
    if crd.scope != "Namespaced" {
        findings.push(finding(
            crd,
            Rule::Scope,
            "spec.scope".to_owned(),
            format!("must be Namespaced, is {:?}", crd.scope),
        ));
    }
    let (contract, version) = contract_version(crd, findings);
    let version = version?;
    let rules = rules_of(contract);
    let Some(schema) = version.schema else {
        findings.push(finding(
            crd,
            Rule::Schema,
            format!("spec.versions[{}].schema.openAPIV3Schema", version.name),
            "is missing: the contract's fields cannot be checked".to_owned(),
        ));
        return Some(version.name.to_owned());
    };
    for problem in check_fields(schema, rules) {
        findings.push(Finding {
            version: Some(version.name.to_owned()),
            field: Some(problem.field.clone()),
            ..finding(
                crd,
                Rule::Schema,
                format!(
                    "spec.versions[{}].schema.openAPIV3Schema.{}",
                    version.name, problem.schema_path
                ),
                format!("{} ({})", problem.message, problem.field),
            )
        });
    }
    Some(version.name.to_owned())
}

/// The contract the CRD implements and the version Cluster API reads: the newest one the
/// contract label lists (it must be served); the storage version, with a finding, when no label
/// names versions or its newest is not served (then judged by [`CONTRACT`]).
fn contract_version<'c, 'a>(
    crd: &'c Crd<'a>,
    findings: &mut Vec<Finding>,
) -> (&'static str, Option<&'c CrdVersion<'a>>) {
    let Some((contract, listed)) = contract_versions(&crd.labels) else {
        findings.push(finding(
            crd,
            Rule::ContractLabel,
            format!("metadata.labels[{CONTRACT_LABEL}]"),
            format!(
                "is missing: Cluster API finds the versions implementing the {CONTRACT} contract in this label \
                 (e.g. {CONTRACT_LABEL}: {CONTRACT}), or those of the deprecated v1beta1 contract in \
                 cluster.x-k8s.io/v1beta1"
            ),
        ));
        return (CONTRACT, crd.storage_version());
    };
    let newest = listed
        .iter()
        .copied()
        .max_by(|a, b| compare_versions(a, b))
        .unwrap_or_default();
    match crd.version(newest).filter(|v| v.served) {
        Some(version) => (contract, Some(version)),
        None => {
            findings.push(finding(
                crd,
                Rule::ContractLabel,
                format!("metadata.labels[cluster.x-k8s.io/{contract}]"),
                format!("names {newest} as the newest version of the {contract} contract, which the CRD does not serve"),
            ));
            (contract, crd.storage_version())
        }
    }
}

fn check_rbac(crd: &Crd<'_>, grants: &AggregatedGrants, verbs: &[&str], report: &mut Report) {
    if granted_to_core(crd.group) {
        return;
    }
    let missing = grants.missing(crd.group, crd.plural, verbs);
    if missing.is_empty() {
        return;
    }
    report.missing_grants.push(Grant {
        group: crd.group.to_owned(),
        resource: crd.plural.to_owned(),
        verbs: missing.iter().map(|v| (*v).to_owned()).collect(),
    });
    report.findings.push(finding(
        crd,
        Rule::Rbac,
        "spec.names.plural".to_owned(),
        format!(
            "no ClusterRole labelled {AGGREGATE_LABEL}: \"true\" among the files grants {} on {}.{}",
            missing.join(", "),
            crd.plural,
            crd.group
        ),
    ));
}
