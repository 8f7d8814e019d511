use serde_json::{json, Value};

use super::*;

fn yaml(text: &str) -> Value {
    serde_yaml_ng::from_str(text).unwrap_or_else(|e| panic!("bad test YAML: {e}"))
}

#[test]
fn reads_contract_fields() {
    let object = yaml(
        "
spec:
  version: v1.31.2
  replicas: 3
  machineTemplate:
    infrastructureRef: {apiVersion: infrastructure.cluster.x-k8s.io/v1beta1, kind: DockerMachineTemplate, name: cp}
status:
  version: v1.30.4
  replicas: 3
  updatedReplicas: 1
  readyReplicas: 3
  unavailableReplicas: 0
  ready: true
  initialized: true
  selector: cluster.x-k8s.io/cluster-name=c1
  availableReplicas: 2
  v1beta2: {readyReplicas: 2}
",
    );
    let cp = ControlPlane::new(&object);
    assert_eq!(cp.version(), Ok(Some("v1.31.2")));
    assert_eq!(cp.status_version(), Ok(Some("v1.30.4")));
    assert_eq!(cp.replicas(), Ok(Some(3)));
    assert_eq!(cp.status_replicas(), Ok(Some(3)));
    assert_eq!(cp.updated_replicas(), Ok(Some(1)));
    assert_eq!(cp.ready_replicas(), Ok(Some(3)));
    assert_eq!(cp.unavailable_replicas(), Ok(Some(0)));
    assert_eq!(cp.ready(), Ok(Some(true)));
    assert_eq!(cp.initialized(), Ok(Some(true)));
    assert_eq!(cp.external_managed(), Ok(None));
    assert_eq!(cp.selector(), Ok(Some("cluster.x-k8s.io/cluster-name=c1")));
    assert_eq!(cp.v1beta2_ready_replicas(), Ok(Some(2)), "v1beta2 field wins");
    assert_eq!(
        cp.v1beta2_available_replicas(),
        Ok(Some(2)),
        "falls back to status"
    );
    assert_eq!(cp.v1beta2_up_to_date_replicas(), Ok(None));
    let infra = cp.machine_infrastructure_ref().ok().flatten().unwrap_or_default();
    assert_eq!(infra.kind.as_deref(), Some("DockerMachineTemplate"));
    assert_eq!(infra.name.as_deref(), Some("cp"));
}

#[test]
fn wrong_types_are_errors() {
    let object = json!({"spec": {"version": 131, "replicas": "3"}, "status": {"ready": "yes"}});
    let cp = ControlPlane::new(&object);
    assert_eq!(
        cp.version().map_err(|e| e.to_string()),
        Err("failed to get .spec.version from object: expected string, found 131".to_owned())
    );
    assert_eq!(
        cp.replicas().map_err(|e| e.to_string()),
        Err("failed to get .spec.replicas from object: expected integer, found \"3\"".to_owned())
    );
    assert!(matches!(
        cp.ready(),
        Err(ContractError::WrongType {
            expected: "boolean",
            ..
        })
    ));
    assert!(matches!(cp.is_upgrading(), Err(ContractError::WrongType { .. })));
}

#[test]
fn provisioning_until_status_version_is_set() {
    let cases = [
        (json!({"spec": {"version": "v1.31.0"}}), Ok(true)),
        (json!({"status": {"version": ""}}), Ok(true)),
        (json!({"status": {"version": "v1.31.0"}}), Ok(false)),
    ];
    for (object, want) in cases {
        assert_eq!(ControlPlane::new(&object).is_provisioning(), want, "{object}");
    }
    let bad = json!({"status": {"version": true}});
    assert!(ControlPlane::new(&bad).is_provisioning().is_err());
}

#[test]
fn upgrading_when_spec_is_ahead_of_status() {
    let case = |spec: &str, status: Option<&str>| {
        let mut object = json!({"spec": {"version": spec}});
        if let Some(status) = status {
            object["status"] = json!({"version": status});
        }
        ControlPlane::new(&object).is_upgrading()
    };
    assert_eq!(case("v1.31.0", Some("v1.30.5")), Ok(true));
    assert_eq!(case("v1.31.0", Some("v1.31.0")), Ok(false));
    assert_eq!(
        case("v1.31.0", Some("1.31.0")),
        Ok(false),
        "the v prefix does not matter"
    );
    assert_eq!(
        case("v1.30.0", Some("v1.31.0")),
        Ok(false),
        "status ahead is not an upgrade"
    );
    assert_eq!(case("v1.31.0+build.2", Some("v1.31.0+build.1")), Ok(true));
    assert_eq!(
        case("v1.31.0+rke2r2", Some("v1.31.0+rke2r1")),
        Ok(true),
        "unordered builds"
    );
    assert_eq!(case("v1.31.0", None), Ok(false), "no status version yet");
    assert_eq!(
        case("v1.31.0", Some("latest")),
        Err(ContractError::InvalidVersion {
            path: ".status.version".to_owned(),
            value: "latest".to_owned()
        })
    );
    assert_eq!(
        ControlPlane::new(&json!({})).is_upgrading(),
        Err(ContractError::NotFound {
            path: ".spec.version".to_owned()
        })
    );
    assert_eq!(
        ControlPlane::new(&json!({}))
            .is_upgrading()
            .map_err(|e| e.to_string()),
        Err("path .spec.version: field not found".to_owned())
    );
}

#[test]
fn scaling_until_counters_match() {
    let case =
        |status: Value| ControlPlane::new(&json!({"spec": {"replicas": 3}, "status": status})).is_scaling();
    let settled = json!({"replicas": 3, "updatedReplicas": 3, "readyReplicas": 3});
    assert_eq!(case(settled.clone()), Ok(false));
    let mut unavailable = settled.clone();
    unavailable["unavailableReplicas"] = json!(1);
    assert_eq!(case(unavailable), Ok(true));
    assert_eq!(
        case(json!({"replicas": 3, "updatedReplicas": 2, "readyReplicas": 3})),
        Ok(true)
    );
    assert_eq!(
        case(json!({"replicas": 3, "readyReplicas": 3})),
        Ok(true),
        "missing counter"
    );
    assert_eq!(
        ControlPlane::new(&json!({"status": settled})).is_scaling(),
        Err(ContractError::NotFound {
            path: ".spec.replicas".to_owned()
        })
    );
}
