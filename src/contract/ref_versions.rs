//! Whether a ClusterClass refers to its templates at the API version Cluster API uses for them:
//! the newest version the template CRD's contract label lists (`RefVersionsUpToDate`, as
//! Cluster API v1.10 reports it; the class itself is not rewritten, so GitOps owners keep it).

use std::collections::BTreeMap;

use serde_json::{json, Value};

use super::crd_name::crd_name;
use super::versions::newest_for_contract;

/// The class condition.
pub const REF_VERSIONS_UP_TO_DATE: &str = "RefVersionsUpToDate";

/// Where a ClusterClass refers to templates.
const REF_POINTERS: [&str; 3] = [
    "/spec/infrastructure/ref",
    "/spec/controlPlane/ref",
    "/spec/controlPlane/machineInfrastructure/ref",
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
                refs.extend(pool.pointer(&format!("/template/{part}/ref")));
            }
        }
    }
    let mut seen = Vec::new();
    refs.retain(|r| {
        let key = (
            r["apiVersion"].clone(),
            r["kind"].clone(),
            r["namespace"].clone(),
            r["name"].clone(),
        );
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
/// found).
pub fn ref_versions_condition(
    refs: &[&Value],
    labels_of: impl Fn(&str) -> Option<BTreeMap<String, String>>,
    now: &str,
) -> Value {
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
                let (group, version) = api_version.rsplit_once('/').unwrap_or(("", api_version));
                if version != newest {
                    let mut up_to_date = (*reference).clone();
                    up_to_date["apiVersion"] = json!(format!("{group}/{newest}"));
                    outdated.push(format!(
                        "* Ref {:?} should be {:?}",
                        ref_string(reference),
                        ref_string(&up_to_date)
                    ));
                }
            }
        }
    }
    if !problems.is_empty() {
        return json!({"type": REF_VERSIONS_UP_TO_DATE, "status": "Unknown", "severity": "Warning",
            "reason": "RefVersionsUnknown", "message": problems.join("\n"), "lastTransitionTime": now});
    }
    if !outdated.is_empty() {
        return json!({"type": REF_VERSIONS_UP_TO_DATE, "status": "False", "severity": "Warning",
            "reason": "OutdatedRefVersions", "message": outdated.join("\n"), "lastTransitionTime": now});
    }
    json!({"type": REF_VERSIONS_UP_TO_DATE, "status": "True", "lastTransitionTime": now})
}

/// `group/version, Kind=Kind namespace/name`, as Cluster API prints a reference.
fn ref_string(reference: &Value) -> String {
    let text = |key: &str| reference[key].as_str().unwrap_or_default();
    let api_version = text("apiVersion");
    let (group, version) = api_version.rsplit_once('/').unwrap_or(("", api_version));
    let gvk = if group.is_empty() {
        format!("/{version}, Kind={}", text("kind"))
    } else {
        format!("{group}/{version}, Kind={}", text("kind"))
    };
    format!("{gvk} {}/{}", text("namespace"), text("name"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn class() -> Value {
        json!({"spec": {
            "infrastructure": {"ref": {"apiVersion": "infrastructure.cluster.x-k8s.io/v1beta1",
                "kind": "AWSClusterTemplate", "namespace": "ns", "name": "aws"}},
            "controlPlane": {"ref": {"apiVersion": "controlplane.cluster.x-k8s.io/v1beta1",
                "kind": "KubeadmControlPlaneTemplate", "namespace": "ns", "name": "cp"}},
            "workers": {"machineDeployments": [
                {"class": "a", "template": {"bootstrap": {"ref": {"apiVersion": "bootstrap.cluster.x-k8s.io/v1beta1",
                    "kind": "KubeadmConfigTemplate", "namespace": "ns", "name": "boot"}}}},
                {"class": "b", "template": {"bootstrap": {"ref": {"apiVersion": "bootstrap.cluster.x-k8s.io/v1beta1",
                    "kind": "KubeadmConfigTemplate", "namespace": "ns", "name": "boot"}}}}]}}})
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
        let condition = ref_versions_condition(
            &template_refs(&class),
            |crd| match crd {
                "awsclustertemplates.infrastructure.cluster.x-k8s.io" => labels("v1beta1_v1beta2"),
                _ => labels("v1beta1"),
            },
            "now",
        );
        assert_eq!(condition["status"], "False");
        assert_eq!(
            condition["message"],
            "* Ref \"infrastructure.cluster.x-k8s.io/v1beta1, Kind=AWSClusterTemplate ns/aws\" should be \
             \"infrastructure.cluster.x-k8s.io/v1beta2, Kind=AWSClusterTemplate ns/aws\""
        );
        let current = ref_versions_condition(&template_refs(&class), |_| labels("v1beta1"), "now");
        assert_eq!(current["status"], "True");
    }

    #[test]
    fn a_missing_crd_or_label_is_unknown_and_says_which() {
        let class = class();
        let condition = ref_versions_condition(&template_refs(&class), |_| None, "now");
        assert_eq!(condition["status"], "Unknown");
        assert!(condition["message"]
            .as_str()
            .unwrap()
            .contains("* CRD kubeadmconfigtemplates.bootstrap.cluster.x-k8s.io not found"));
        let condition = ref_versions_condition(&template_refs(&class), |_| Some(BTreeMap::new()), "now");
        assert!(condition["message"]
            .as_str()
            .unwrap()
            .contains("label cluster.x-k8s.io/v1beta1 is missing"));
    }
}
