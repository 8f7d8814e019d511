//! Cluster API contract versions read from CustomResourceDefinitions: a provider's CRD carries
//! labels `cluster.x-k8s.io/<contract>: <version>[_<version>...]` naming the API versions of its
//! kind that implement each contract (`cluster.x-k8s.io/v1beta2: v1beta1_v1beta2`).

use serde_json::Value;

/// The API group of CustomResourceDefinitions.
pub const CRD_GROUP: &str = "apiextensions.k8s.io";
/// The kind of CustomResourceDefinitions.
pub const CRD_KIND: &str = "CustomResourceDefinition";
/// The contracts looked up, newest first.
const CONTRACTS: [&str; 2] = ["v1beta2", "v1beta1"];

/// True when `crd` defines `group`/`kind`.
pub fn defines(crd: &Value, group: &str, kind: &str) -> bool {
    crd["spec"]["group"].as_str() == Some(group) && crd["spec"]["names"]["kind"].as_str() == Some(kind)
}

/// The versions a contract label of `crd` lists, when it has the label.
fn listed<'a>(crd: &'a Value, contract: &str) -> Option<impl Iterator<Item = &'a str>> {
    let value = crd["metadata"]["labels"][format!("cluster.x-k8s.io/{contract}")].as_str()?;
    Some(value.split('_').filter(|v| !v.is_empty()))
}

/// The API version to use for the kind `crd` defines: the newest version listed by its
/// `cluster.x-k8s.io/v1beta2` label, else by its `cluster.x-k8s.io/v1beta1` label.
pub fn contract_api_version(crd: &Value) -> Option<String> {
    CONTRACTS.iter().find_map(|contract| {
        listed(crd, contract)?
            .max_by(|a, b| version_rank(a).cmp(&version_rank(b)))
            .map(str::to_owned)
    })
}

/// The contract (`v1beta2`, `v1beta1`) whose label of `crd` lists `version`, the newest first.
pub fn contract_of_version(crd: &Value, version: &str) -> Option<String> {
    CONTRACTS
        .iter()
        .find(|contract| listed(crd, contract).is_some_and(|mut versions| versions.any(|v| v == version)))
        .map(|contract| (*contract).to_owned())
}

/// How Kubernetes orders API versions: GA over beta over alpha, then by major, then by minor
/// (`v2` > `v1` > `v1beta2` > `v1beta1` > `v1alpha1`); unparsable versions lowest.
fn version_rank(version: &str) -> (u8, u64, u64) {
    let Some(rest) = version.strip_prefix('v') else {
        return (0, 0, 0);
    };
    let digits = rest.find(|c: char| !c.is_ascii_digit()).unwrap_or(rest.len());
    let Ok(major) = rest[..digits].parse::<u64>() else {
        return (0, 0, 0);
    };
    let (level, minor) = match &rest[digits..] {
        "" => (3, 0),
        tail => match tail
            .strip_prefix("beta")
            .map(|m| (2, m))
            .or_else(|| tail.strip_prefix("alpha").map(|m| (1, m)))
        {
            Some((level, minor)) => match minor.parse::<u64>() {
                Ok(minor) => (level, minor),
                Err(_) => return (0, 0, 0),
            },
            None => return (0, 0, 0),
        },
    };
    (level, major, minor)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn crd(labels: Value) -> Value {
        json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": "kubeadmcontrolplanes.controlplane.cluster.x-k8s.io", "labels": labels},
            "spec": {"group": "controlplane.cluster.x-k8s.io", "names": {"kind": "KubeadmControlPlane"}}})
    }

    #[test]
    fn the_v1beta2_label_wins_and_its_newest_version_is_used() {
        let both = crd(
            json!({"cluster.x-k8s.io/v1beta1": "v1beta1", "cluster.x-k8s.io/v1beta2": "v1beta1_v1beta2"}),
        );
        assert!(defines(
            &both,
            "controlplane.cluster.x-k8s.io",
            "KubeadmControlPlane"
        ));
        assert_eq!(contract_api_version(&both).as_deref(), Some("v1beta2"));
        assert_eq!(contract_of_version(&both, "v1beta2").as_deref(), Some("v1beta2"));
        assert_eq!(contract_of_version(&both, "v1beta1").as_deref(), Some("v1beta2"));
        let old = crd(json!({"cluster.x-k8s.io/v1beta1": "v1alpha4_v1beta1"}));
        assert_eq!(contract_api_version(&old).as_deref(), Some("v1beta1"));
        assert_eq!(contract_of_version(&old, "v1beta1").as_deref(), Some("v1beta1"));
        assert_eq!(contract_of_version(&old, "v1beta2"), None);
        assert_eq!(contract_api_version(&crd(json!({}))), None);
    }

    #[test]
    fn versions_order_as_kubernetes_orders_them() {
        let mut versions = ["v1beta1", "v2", "v1alpha1", "v1", "v1beta2", "x"];
        versions.sort_by_key(|v| version_rank(v));
        assert_eq!(versions, ["x", "v1alpha1", "v1beta1", "v1beta2", "v1", "v2"]);
    }
}
