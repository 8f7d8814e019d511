//! Whether a v1beta2 ClusterClass refers to its templates at the API version Cluster API uses for
//! them: the newest version the template CRD's contract label lists (`v1beta2` label before
//! `v1beta1`). Reported as `RefVersionsUpToDate`, a metav1 condition and its v1beta1 twin, as
//! Cluster API v1.14 reports it; the class itself is not rewritten, so GitOps owners keep it.

use std::collections::BTreeMap;

use serde_json::{json, Value};

use super::crd_name::crd_name;
use super::versions::newest_for_contract;
use crate::api::conditions::meta_condition;

/// The class condition.
pub const REF_VERSIONS_UP_TO_DATE: &str = "RefVersionsUpToDate";

/// Where a ClusterClass refers to templates.
const REF_POINTERS: [&str; 3] = [
    "/spec/infrastructure/templateRef",
    "/spec/controlPlane/templateRef",
    "/spec/controlPlane/machineInfrastructure/templateRef",
];

/// Every template reference of `class`, each once, in the class's order.
pub fn template_refs(class: &Value) -> Vec<&Value> {
    let mut refs: Vec<&Value> = REF_POINTERS.iter().filter_map(|p| class.pointer(p)).collect();
    for pools in ["machineDeployments", "machinePools"] {
        let classes = class
            .pointer(&format!("/spec/workers/{pools}"))
            .and_then(Value::as_array);
        for pool in classes.into_iter().flatten() {
            for part in ["bootstrap", "infrastructure"] {
                refs.extend(pool.pointer(&format!("/{part}/templateRef")));
            }
        }
    }
    let mut seen = Vec::new();
    refs.retain(|r| {
        let key = (r["apiVersion"].clone(), r["kind"].clone(), r["name"].clone());
        if seen.contains(&key) {
            return false;
        }
        seen.push(key);
        true
    });
    refs
}

/// The CRD that serves a reference's kind.
pub fn crd_of(reference: &Value) -> String {
    let api_version = reference["apiVersion"].as_str().unwrap_or_default();
    let group = api_version.rsplit_once('/').map_or("", |(group, _)| group);
    crd_name(group, reference["kind"].as_str().unwrap_or_default())
}

/// `RefVersionsUpToDate` for `refs`, given each CRD's labels by name (`None`: the CRD was not
/// found): the metav1 condition and the v1beta1 one, without transition times.
pub fn ref_versions_condition(
    refs: &[&Value],
    labels_of: impl Fn(&str) -> Option<BTreeMap<String, String>>,
) -> (Value, Value) {
    let mut outdated = Vec::new();
    let mut problems = Vec::new();
    for reference in refs {
        let crd = crd_of(reference);
        let Some(labels) = labels_of(&crd) else {
            problems.push(format!("* CRD {crd} not found"));
            continue;
        };
        match newest_for_contract(&crd, &labels) {
            Err(why) => problems.push(format!("* {why}")),
            Ok(newest) => {
                let api_version = reference["apiVersion"].as_str().unwrap_or_default();
                let version = api_version.rsplit_once('/').map_or(api_version, |(_, v)| v);
                if version != newest {
                    outdated.push(format!(
                        "* {} {}: current: {version}, latest: {newest}",
                        reference["kind"].as_str().unwrap_or_default(),
                        reference["name"].as_str().unwrap_or_default(),
                    ));
                }
            }
        }
    }
    let old = |status: &str, reason: &str, severity: &str, message: &str| {
        json!({"type": REF_VERSIONS_UP_TO_DATE, "status": status, "severity": severity,
            "reason": reason, "message": message})
    };
    if !problems.is_empty() {
        let message = problems.join("\n");
        return (
            meta_condition(REF_VERSIONS_UP_TO_DATE, "Unknown", "InternalError", &message),
            old("Unknown", "InternalError", "Info", &message),
        );
    }
    if !outdated.is_empty() {
        outdated.insert(
            0,
            "The following templateRefs are not using the latest apiVersion:".to_owned(),
        );
        let message = outdated.join("\n");
        return (
            meta_condition(
                REF_VERSIONS_UP_TO_DATE,
                "False",
                "RefVersionsNotUpToDate",
                &message,
            ),
            old("False", "OutdatedRefVersions", "Warning", &message),
        );
    }
    (
        meta_condition(REF_VERSIONS_UP_TO_DATE, "True", "RefVersionsUpToDate", ""),
        json!({"type": REF_VERSIONS_UP_TO_DATE, "status": "True"}),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn class() -> Value {
        json!({"spec": {
            "infrastructure": {"templateRef": {"apiVersion": "infrastructure.cluster.x-k8s.io/v1beta1",
                "kind": "AWSClusterTemplate", "name": "aws"}},
            "controlPlane": {"templateRef": {"apiVersion": "controlplane.cluster.x-k8s.io/v1beta1",
                "kind": "KubeadmControlPlaneTemplate", "name": "cp"}},
            "workers": {"machineDeployments": [
                {"class": "a", "bootstrap": {"templateRef": {"apiVersion": "bootstrap.cluster.x-k8s.io/v1beta1",
                    "kind": "KubeadmConfigTemplate", "name": "boot"}}},
                {"class": "b", "bootstrap": {"templateRef": {"apiVersion": "bootstrap.cluster.x-k8s.io/v1beta1",
                    "kind": "KubeadmConfigTemplate", "name": "boot"}}}]}}})
    }

    fn labels(value: &str) -> Option<BTreeMap<String, String>> {
        Some(BTreeMap::from([(
            "cluster.x-k8s.io/v1beta1".to_owned(),
            value.to_owned(),
        )]))
    }

    #[test]
    fn refs_are_found_once_each() {
        let class = class();
        let names: Vec<&str> = template_refs(&class)
            .iter()
            .map(|r| r["name"].as_str().unwrap())
            .collect();
        assert_eq!(names, ["aws", "cp", "boot"]);
    }

    #[test]
    fn an_older_version_is_reported_with_the_one_to_use() {
        let class = class();
        let (meta, old) = ref_versions_condition(&template_refs(&class), |crd| match crd {
            "awsclustertemplates.infrastructure.cluster.x-k8s.io" => labels("v1beta1_v1beta2"),
            // The v1beta2 contract label wins over the v1beta1 one.
            "kubeadmcontrolplanetemplates.controlplane.cluster.x-k8s.io" => Some(BTreeMap::from([
                ("cluster.x-k8s.io/v1beta1".to_owned(), "v1beta1".to_owned()),
                ("cluster.x-k8s.io/v1beta2".to_owned(), "v1beta2".to_owned()),
            ])),
            _ => labels("v1beta1"),
        });
        assert_eq!(
            (&meta["status"], &meta["reason"]),
            (&json!("False"), &json!("RefVersionsNotUpToDate"))
        );
        assert_eq!(
            meta["message"],
            "The following templateRefs are not using the latest apiVersion:\n\
             * AWSClusterTemplate aws: current: v1beta1, latest: v1beta2\n\
             * KubeadmControlPlaneTemplate cp: current: v1beta1, latest: v1beta2"
        );
        assert_eq!(old["reason"], "OutdatedRefVersions");
        let (current, old) = ref_versions_condition(&template_refs(&class), |_| labels("v1beta1"));
        assert_eq!(
            (&current["status"], &current["reason"]),
            (&json!("True"), &json!("RefVersionsUpToDate"))
        );
        assert_eq!(old["status"], "True");
    }

    #[test]
    fn a_missing_crd_or_label_is_unknown_and_says_which() {
        let class = class();
        let (condition, _) = ref_versions_condition(&template_refs(&class), |_| None);
        assert_eq!(
            (&condition["status"], &condition["reason"]),
            (&json!("Unknown"), &json!("InternalError"))
        );
        assert!(condition["message"]
            .as_str()
            .unwrap()
            .contains("* CRD kubeadmconfigtemplates.bootstrap.cluster.x-k8s.io not found"));
        let (condition, _) = ref_versions_condition(&template_refs(&class), |_| Some(BTreeMap::new()));
        assert!(condition["message"]
            .as_str()
            .unwrap()
            .contains("contract version label(s) are either missing or empty"));
    }
}
