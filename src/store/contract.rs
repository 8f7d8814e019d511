//! The CustomResourceDefinitions a store holds, found for their Cluster API contract labels
//! (`cluster.x-k8s.io/<contract>: <version>[_<version>...]`); what the labels mean is
//! `crate::contract::versions`.

use serde_json::Value;

use crate::contract::crd_name::crd_name;

/// The API group of CustomResourceDefinitions.
pub const CRD_GROUP: &str = "apiextensions.k8s.io";
/// The kind of CustomResourceDefinitions.
pub const CRD_KIND: &str = "CustomResourceDefinition";

/// True when `crd` is the CRD of `group`/`kind`: named as Cluster API looks it up
/// (`<plural>.<group>`, `contract::crd_name`), or defining that group and kind in its spec (a
/// plural the name rule does not form).
pub fn defines(crd: &Value, group: &str, kind: &str) -> bool {
    let named = crd["metadata"]["name"].as_str() == Some(crd_name(group, kind).as_str());
    named
        || (crd["spec"]["group"].as_str() == Some(group)
            && crd["spec"]["names"]["kind"].as_str() == Some(kind))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_crd_is_found_by_its_name_or_its_spec() {
        let (group, kind) = ("controlplane.cluster.x-k8s.io", "KubeadmControlPlane");
        let named = json!({"metadata": {"name": "kubeadmcontrolplanes.controlplane.cluster.x-k8s.io"}});
        assert!(defines(&named, group, kind));
        let by_spec = json!({"metadata": {"name": "kcps.controlplane.cluster.x-k8s.io"},
            "spec": {"group": group, "names": {"kind": kind}}});
        assert!(defines(&by_spec, group, kind));
        assert!(!defines(&named, group, "KubeadmControlPlaneTemplate"));
    }
}
