//! The objects a topology owns today (as read from a cluster or from files).

use serde_json::Value;

use crate::api::labels::{
    CLUSTER_NAME_LABEL, MACHINE_CONTROL_PLANE_LABEL, TOPOLOGY_DEPLOYMENT_NAME_LABEL, TOPOLOGY_OWNED_LABEL,
    TOPOLOGY_POOL_NAME_LABEL,
};

/// The current objects of one Cluster; empty when the Cluster is new.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Current {
    /// Objects owned by the Cluster (`cluster.x-k8s.io/cluster-name` + `topology.cluster.x-k8s.io/owned`).
    pub objects: Vec<Value>,
}

impl Current {
    /// Keeps the objects of `objects` that the topology of Cluster `cluster` owns.
    pub fn owned_by(cluster: &str, namespace: &str, objects: impl IntoIterator<Item = Value>) -> Self {
        let objects = objects
            .into_iter()
            .filter(|object| {
                let labels = &object["metadata"]["labels"];
                object["metadata"]["namespace"].as_str().unwrap_or("default") == namespace
                    && labels[CLUSTER_NAME_LABEL].as_str() == Some(cluster)
                    && labels.get(TOPOLOGY_OWNED_LABEL).is_some()
            })
            .collect();
        Current { objects }
    }

    /// The object of this kind and name.
    pub fn find(&self, kind: &str, name: &str) -> Option<&Value> {
        self.objects
            .iter()
            .find(|o| o["kind"].as_str() == Some(kind) && o["metadata"]["name"].as_str() == Some(name))
    }

    /// The MachineDeployment generated for the worker topology named `topology_name`.
    pub fn machine_deployment(&self, topology_name: &str) -> Option<&Value> {
        self.objects.iter().find(|o| {
            o["kind"].as_str() == Some("MachineDeployment")
                && o["metadata"]["labels"][TOPOLOGY_DEPLOYMENT_NAME_LABEL].as_str() == Some(topology_name)
        })
    }

    /// The MachinePool generated for the worker topology named `topology_name`.
    pub fn machine_pool(&self, topology_name: &str) -> Option<&Value> {
        self.objects.iter().find(|o| {
            o["kind"].as_str() == Some("MachinePool")
                && o["metadata"]["labels"][TOPOLOGY_POOL_NAME_LABEL].as_str() == Some(topology_name)
        })
    }

    /// The Machines of the control plane.
    pub fn control_plane_machines(&self) -> Vec<&Value> {
        self.machines()
            .filter(|m| m["metadata"]["labels"].get(MACHINE_CONTROL_PLANE_LABEL).is_some())
            .collect()
    }

    /// Whether any Machine `selector` (a label selector's `matchLabels`) picks runs another version
    /// than `version` (machines without one do not count): the worker is still rolling out.
    pub fn machines_differ(&self, selector: &Value, version: &str) -> bool {
        let Some(match_labels) = selector["matchLabels"].as_object().filter(|m| !m.is_empty()) else {
            return false;
        };
        self.machines()
            .filter(|m| {
                match_labels
                    .iter()
                    .all(|(key, value)| m["metadata"]["labels"].get(key) == Some(value))
            })
            .any(|m| m["spec"]["version"].as_str().is_some_and(|v| v != version))
    }

    fn machines(&self) -> impl Iterator<Item = &Value> {
        self.objects
            .iter()
            .filter(|o| o["kind"].as_str() == Some("Machine"))
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn machine(name: &str, labels: Value, version: Option<&str>) -> Value {
        let mut machine =
            json!({"kind": "Machine", "metadata": {"name": name, "labels": labels}, "spec": {}});
        if let Some(version) = version {
            machine["spec"]["version"] = json!(version);
        }
        machine
    }

    #[test]
    fn a_worker_rolls_out_while_a_machine_it_selects_runs_another_version() {
        let selector = json!({"matchLabels": {"pool": "a"}});
        let current = |machines: Vec<Value>| Current { objects: machines };
        let same = current(vec![
            machine("m1", json!({"pool": "a"}), Some("v1.31.0")),
            machine("m2", json!({"pool": "b"}), Some("v1.30.0")),
            machine("m3", json!({"pool": "a"}), None),
        ]);
        assert!(
            !same.machines_differ(&selector, "v1.31.0"),
            "other pools and versionless machines do not count"
        );
        let rolling = current(vec![machine(
            "m4",
            json!({"pool": "a", "x": "y"}),
            Some("v1.30.0"),
        )]);
        assert!(rolling.machines_differ(&selector, "v1.31.0"));
        assert!(
            !rolling.machines_differ(&json!({}), "v1.31.0"),
            "an empty selector picks nothing"
        );
    }

    #[test]
    fn control_plane_machines_carry_the_control_plane_label() {
        let current = Current {
            objects: vec![
                machine("cp", json!({MACHINE_CONTROL_PLANE_LABEL: ""}), Some("v1")),
                machine("worker", json!({}), Some("v1")),
            ],
        };
        let names: Vec<&Value> = current
            .control_plane_machines()
            .iter()
            .map(|m| &m["metadata"]["name"])
            .collect();
        assert_eq!(names, [&json!("cp")]);
    }
}
