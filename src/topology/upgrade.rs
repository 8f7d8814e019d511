//! Version sequencing: the control plane upgrades first, workers only once it is done.

use serde_json::Value;

use crate::api::labels::{TOPOLOGY_DEFER_UPGRADE_ANNOTATION, TOPOLOGY_HOLD_UPGRADE_SEQUENCE_ANNOTATION};
use crate::api::TopologyMetadata;

/// Whether the control plane runs `version` and is not rolling out (spec and status agree).
pub fn control_plane_settled(control_plane: Option<&Value>, version: &str) -> bool {
    let Some(cp) = control_plane else {
        return false;
    };
    cp["spec"]["version"].as_str() == Some(version) && cp["status"]["version"].as_str() == Some(version)
}

/// The version a MachineDeployment should run: the topology's when it is new, already there, or
/// the control plane has settled on it (and the topology does not defer or hold it); its current
/// version otherwise.
pub fn machine_deployment_version(
    topology_version: &str,
    control_plane: Option<&Value>,
    current: Option<&Value>,
    metadata: &TopologyMetadata,
) -> String {
    let Some(current_version) = current.and_then(|md| md["spec"]["template"]["spec"]["version"].as_str())
    else {
        return topology_version.to_owned();
    };
    let held = metadata
        .annotations
        .contains_key(TOPOLOGY_DEFER_UPGRADE_ANNOTATION)
        || metadata
            .annotations
            .contains_key(TOPOLOGY_HOLD_UPGRADE_SEQUENCE_ANNOTATION);
    if current_version == topology_version
        || (!held && control_plane_settled(control_plane, topology_version))
    {
        topology_version.to_owned()
    } else {
        current_version.to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn workers_wait_for_the_control_plane() {
        let md = json!({"spec": {"template": {"spec": {"version": "v1.30.0"}}}});
        let upgrading = json!({"spec": {"version": "v1.31.0"}, "status": {"version": "v1.30.0"}});
        let settled = json!({"spec": {"version": "v1.31.0"}, "status": {"version": "v1.31.0"}});
        let none = TopologyMetadata::default();
        assert_eq!(
            machine_deployment_version("v1.31.0", Some(&upgrading), Some(&md), &none),
            "v1.30.0"
        );
        assert_eq!(
            machine_deployment_version("v1.31.0", Some(&settled), Some(&md), &none),
            "v1.31.0"
        );
        assert_eq!(
            machine_deployment_version("v1.31.0", Some(&upgrading), None, &none),
            "v1.31.0"
        );
        let mut deferred = TopologyMetadata::default();
        deferred
            .annotations
            .insert(TOPOLOGY_DEFER_UPGRADE_ANNOTATION.to_owned(), String::new());
        assert_eq!(
            machine_deployment_version("v1.31.0", Some(&settled), Some(&md), &deferred),
            "v1.30.0"
        );
    }
}
