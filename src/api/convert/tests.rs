//! Unit tests of the converters on YAML fixtures (`testdata/`).

use pretty_assertions::assert_eq;
use serde_json::{json, Value};

use super::review::review_value;
use super::*;

/// CRDs as the contract labels list them.
pub(super) struct Crds(pub(super) Vec<(&'static str, &'static str, &'static str)>);

impl ContractVersions for Crds {
    fn version_of(&self, group: &str, kind: &str) -> Option<String> {
        self.0
            .iter()
            .find(|(g, k, _)| *g == group && *k == kind)
            .map(|(_, _, v)| (*v).to_owned())
    }
}

pub(super) fn crds() -> Crds {
    Crds(vec![
        ("infrastructure.cluster.x-k8s.io", "DockerCluster", "v1beta2"),
        ("controlplane.cluster.x-k8s.io", "KubeadmControlPlane", "v1beta2"),
        (
            "infrastructure.cluster.x-k8s.io",
            "DockerMachineTemplate",
            "v1beta2",
        ),
        ("infrastructure.cluster.x-k8s.io", "DockerMachinePool", "v1beta2"),
        ("bootstrap.cluster.x-k8s.io", "KubeadmConfigTemplate", "v1beta2"),
        ("bootstrap.cluster.x-k8s.io", "KubeadmConfig", "v1beta2"),
    ])
}

/// A fixture of `testdata/`, compiled in (the engine reads no files, even in tests).
fn fixture(name: &str) -> Value {
    let text = match name {
        "cluster.v1beta1.yaml" => include_str!("testdata/cluster.v1beta1.yaml"),
        "cluster.v1beta2.yaml" => include_str!("testdata/cluster.v1beta2.yaml"),
        "clusterclass.v1beta1.yaml" => include_str!("testdata/clusterclass.v1beta1.yaml"),
        "clusterclass.v1beta2.yaml" => include_str!("testdata/clusterclass.v1beta2.yaml"),
        "clusterresourceset.spoke.yaml" => include_str!("testdata/clusterresourceset.spoke.yaml"),
        "clusterresourceset.v1beta2.yaml" => include_str!("testdata/clusterresourceset.v1beta2.yaml"),
        "clusterresourcesetbinding.spoke.yaml" => {
            include_str!("testdata/clusterresourcesetbinding.spoke.yaml")
        }
        "clusterresourcesetbinding.v1beta2.yaml" => {
            include_str!("testdata/clusterresourcesetbinding.v1beta2.yaml")
        }
        "extensionconfig.spoke.yaml" => include_str!("testdata/extensionconfig.spoke.yaml"),
        "extensionconfig.v1beta2.yaml" => include_str!("testdata/extensionconfig.v1beta2.yaml"),
        "machinedeployment.v1beta1.yaml" => include_str!("testdata/machinedeployment.v1beta1.yaml"),
        "machinedeployment.v1beta2.yaml" => include_str!("testdata/machinedeployment.v1beta2.yaml"),
        "machineset.v1beta1.yaml" => include_str!("testdata/machineset.v1beta1.yaml"),
        "machineset.v1beta2.yaml" => include_str!("testdata/machineset.v1beta2.yaml"),
        "machinepool.v1beta1.yaml" => include_str!("testdata/machinepool.v1beta1.yaml"),
        "machinepool.v1beta2.yaml" => include_str!("testdata/machinepool.v1beta2.yaml"),
        other => panic!("no fixture {other}"),
    };
    serde_yaml_ng::from_str(text).unwrap_or_else(|err| panic!("{name}: {err}"))
}

fn annotation<'a>(object: &'a Value, key: &str) -> Option<&'a str> {
    object.pointer("/metadata/annotations")?.get(key)?.as_str()
}

fn without_annotation(mut object: Value, key: &str) -> Value {
    if let Some(annotations) = object
        .pointer_mut("/metadata/annotations")
        .and_then(Value::as_object_mut)
    {
        annotations.remove(key);
        if annotations.is_empty() {
            object["metadata"]
                .as_object_mut()
                .map(|m| m.remove("annotations"));
        }
    }
    object
}

#[test]
fn cluster_v1beta1_to_hub_matches_fixture() {
    let hub = to_hub(fixture("cluster.v1beta1.yaml")).unwrap();
    assert_eq!(hub, fixture("cluster.v1beta2.yaml"));
}

/// Found beside Cluster API's conversion webhook (tests/e2e/beside_cluster_api_conversion.rs): a
/// Cluster without an endpoint reads as v1beta1 with the zero one, which is none in v1beta2.
#[test]
fn cluster_zero_endpoint_is_no_endpoint_in_the_hub() {
    let mut spoke = fixture("cluster.v1beta1.yaml");
    spoke["spec"]["controlPlaneEndpoint"] = json!({"host": "", "port": 0});
    let hub = to_hub(spoke).unwrap();
    assert_eq!(hub["spec"].get("controlPlaneEndpoint"), None);
    let mut spoke = fixture("cluster.v1beta1.yaml");
    spoke["spec"]["controlPlaneEndpoint"] = json!({"host": "h", "port": 0});
    let hub = to_hub(spoke).unwrap();
    assert_eq!(hub["spec"]["controlPlaneEndpoint"], json!({"host": "h"}));
}

#[test]
fn cluster_hub_to_v1beta1_rebuilds_refs_durations_and_status() {
    let spoke = from_hub(
        fixture("cluster.v1beta2.yaml"),
        "cluster.x-k8s.io/v1beta1",
        &crds(),
    )
    .unwrap();
    assert_eq!(spoke["apiVersion"], "cluster.x-k8s.io/v1beta1");
    assert_eq!(
        spoke["spec"]["infrastructureRef"],
        json!({"apiVersion": "infrastructure.cluster.x-k8s.io/v1beta2", "kind": "DockerCluster",
               "namespace": "ns1", "name": "c1-infra"})
    );
    // The durations read back as the v1beta1 object wrote them (the hub keeps the written
    // forms); without those, as Go prints them.
    let mut bare = fixture("cluster.v1beta2.yaml");
    bare["metadata"]["annotations"].as_object_mut().unwrap().clear();
    let spoke_of_bare = from_hub(bare, "cluster.x-k8s.io/v1beta1", &crds()).unwrap();
    for (spoke, forms) in [
        (&spoke, ["10m", "1s5ms", "1h5m", "300s"]),
        (&spoke_of_bare, ["10m0s", "1s", "1h5m0s", "5m0s"]),
    ] {
        let cp = &spoke["spec"]["topology"]["controlPlane"];
        let mhc = &cp["machineHealthCheck"];
        let read = [
            &cp["nodeDrainTimeout"],
            &cp["nodeDeletionTimeout"],
            &mhc["nodeStartupTimeout"],
            &mhc["unhealthyConditions"][0]["timeout"],
        ];
        assert_eq!(read, forms.map(Value::from).each_ref());
    }
    let cp = &spoke["spec"]["topology"]["controlPlane"];
    assert_eq!(
        cp["machineHealthCheck"]["remediationTemplate"]["namespace"],
        "ns1"
    );
    let md = &spoke["spec"]["topology"]["workers"]["machineDeployments"][0];
    assert_eq!(
        md["strategy"],
        json!({"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0, "deletePolicy": "Oldest"},
               "remediation": {"maxInFlight": 2}})
    );
    assert!(
        md.get("machineHealthCheck").is_none(),
        "maxInFlight alone makes no health check"
    );
    assert_eq!(md["variables"]["overrides"][0]["definitionFrom"], "patch-a");
    assert_eq!(
        spoke["spec"]["topology"]["variables"][1]["definitionFrom"],
        "inline"
    );
    assert_eq!(spoke["spec"]["topology"]["rolloutAfter"], "2026-01-01T00:00:00Z");
    assert_eq!(spoke["spec"]["topology"]["class"], "quick-start");
    assert_eq!(spoke["status"]["controlPlaneReady"], false);
    assert_eq!(spoke["status"]["infrastructureReady"], true);
    assert_eq!(
        spoke["status"]["failureDomains"],
        json!({"fd-a": {"attributes": {"zone": "a"}}, "fd-b": {"controlPlane": true}})
    );
    assert_eq!(spoke["status"]["failureReason"], "CreateError");
    assert_eq!(spoke["status"]["v1beta2"]["controlPlane"]["replicas"], 3);
    assert!(annotation(&spoke, V1BETA1_FIELDS).is_none());
    let data: Value = serde_json::from_str(annotation(&spoke, CONVERSION_DATA).unwrap()).unwrap();
    assert!(data.get("metadata").is_none());
    assert_eq!(data["spec"], fixture("cluster.v1beta2.yaml")["spec"]);
}

#[test]
fn cluster_hub_round_trips_through_v1beta1() {
    let mut hub = fixture("cluster.v1beta2.yaml");
    hub["spec"]["paused"] = json!(false);
    hub["status"]["initialization"]["controlPlaneInitialized"] = json!(false);
    let spoke = from_hub(hub.clone(), "cluster.x-k8s.io/v1beta1", &crds()).unwrap();
    assert!(
        spoke["spec"].get("paused").is_none(),
        "v1beta1 omits paused: false"
    );
    assert_eq!(to_hub(spoke).unwrap(), hub);
}

#[test]
fn cluster_spoke_round_trips_after_normalising() {
    // The first trip normalises what v1beta1 cannot say twice (durations, ref namespaces).
    let versions = crds();
    let once = convert(
        fixture("cluster.v1beta1.yaml"),
        "cluster.x-k8s.io/v1beta2",
        &versions,
    )
    .unwrap();
    let spoke = convert(once.clone(), "cluster.x-k8s.io/v1beta1", &versions).unwrap();
    let again = convert(spoke.clone(), "cluster.x-k8s.io/v1beta2", &versions).unwrap();
    assert_eq!(again, once);
    let spoke_again = convert(again, "cluster.x-k8s.io/v1beta1", &versions).unwrap();
    assert_eq!(spoke_again, spoke);
}

#[test]
fn definition_from_survives_storage_as_v1beta2_without_conversion_data() {
    let versions = crds();
    let mut spoke = fixture("cluster.v1beta1.yaml");
    let hub = to_hub(spoke.clone()).unwrap();
    let back = without_annotation(
        from_hub(hub, "cluster.x-k8s.io/v1beta1", &versions).unwrap(),
        CONVERSION_DATA,
    );
    spoke["spec"]["topology"]["controlPlane"]["machineHealthCheck"]["remediationTemplate"]["namespace"] =
        json!("ns1");
    assert_eq!(
        back["spec"]["topology"]["workers"]["machineDeployments"][0]["variables"],
        spoke["spec"]["topology"]["workers"]["machineDeployments"][0]["variables"]
    );
    assert_eq!(
        back["spec"]["topology"]["variables"],
        spoke["spec"]["topology"]["variables"]
    );
}

#[test]
fn kept_fields_follow_names_not_positions() {
    let versions = crds();
    let mut hub = to_hub(fixture("cluster.v1beta1.yaml")).unwrap();
    // A v1beta2 client reorders the variables: the kept definitionFrom no longer applies.
    hub["spec"]["topology"]["variables"]
        .as_array_mut()
        .unwrap()
        .reverse();
    let spoke = from_hub(hub, "cluster.x-k8s.io/v1beta1", &versions).unwrap();
    let variables = spoke["spec"]["topology"]["variables"].as_array().unwrap();
    assert!(variables.iter().all(|v| v.get("definitionFrom").is_none()));
    assert_eq!(spoke["spec"]["topology"]["rolloutAfter"], "2026-01-01T00:00:00Z");
}

#[test]
fn missing_crd_names_group_and_kind() {
    let err = from_hub(
        fixture("cluster.v1beta2.yaml"),
        "cluster.x-k8s.io/v1beta1",
        &Crds(vec![]),
    )
    .unwrap_err();
    assert_eq!(
        err,
        ConvertError::MissingContract {
            object: "Cluster ns1/c1".into(),
            group: "infrastructure.cluster.x-k8s.io".into(),
            kind: "DockerCluster".into(),
        }
    );
    let message = err.to_string();
    assert!(
        message.contains("Cluster ns1/c1") && message.contains("DockerCluster"),
        "{message}"
    );
}

#[test]
fn bad_duration_and_api_version_are_errors() {
    let mut spoke = fixture("cluster.v1beta1.yaml");
    spoke["spec"]["topology"]["controlPlane"]["nodeDrainTimeout"] = json!("10 minutes");
    let err = to_hub(spoke).unwrap_err().to_string();
    assert!(
        err.contains("spec.topology.controlPlane.nodeDrainTimeout"),
        "{err}"
    );
    let mut spoke = fixture("cluster.v1beta1.yaml");
    spoke["spec"]["infrastructureRef"]["apiVersion"] = json!("a/b/c");
    let err = to_hub(spoke).unwrap_err().to_string();
    assert!(
        err.contains("spec.infrastructureRef") && err.contains("a/b/c"),
        "{err}"
    );
}

#[test]
fn versions_served_and_pass_through() {
    assert_eq!(is_convertible("cluster.x-k8s.io/v1beta1", "Cluster"), Ok(true));
    assert_eq!(
        is_convertible("runtime.cluster.x-k8s.io/v1alpha1", "ExtensionConfig"),
        Ok(true)
    );
    assert_eq!(is_convertible("cluster.x-k8s.io/v1beta1", "Machine"), Ok(false));
    assert_eq!(is_convertible("apps/v1", "Deployment"), Ok(false));
    assert!(matches!(
        is_convertible("cluster.x-k8s.io/v1alpha3", "Cluster"),
        Err(ConvertError::UnknownVersion { .. })
    ));
    let old =
        json!({"apiVersion": "cluster.x-k8s.io/v1alpha4", "kind": "Cluster", "metadata": {"name": "x"}});
    assert!(matches!(to_hub(old), Err(ConvertError::UnknownVersion { .. })));
    let machine = json!({"apiVersion": "cluster.x-k8s.io/v1beta1", "kind": "Machine", "spec": {"x": 1}});
    assert_eq!(to_hub(machine.clone()).unwrap(), machine);
    let hub = fixture("cluster.v1beta2.yaml");
    assert_eq!(to_hub(hub.clone()).unwrap(), hub);
    assert!(matches!(
        from_hub(hub, "addons.cluster.x-k8s.io/v1beta1", &crds()),
        Err(ConvertError::Unsupported { .. })
    ));
}

#[test]
fn cluster_class_v1beta1_to_hub_matches_fixture() {
    let hub = to_hub(fixture("clusterclass.v1beta1.yaml")).unwrap();
    assert_eq!(hub, fixture("clusterclass.v1beta2.yaml"));
}

#[test]
fn cluster_class_round_trips() {
    let hub = fixture("clusterclass.v1beta2.yaml");
    let spoke = from_hub(hub.clone(), "cluster.x-k8s.io/v1beta1", &Crds(vec![])).unwrap();
    let md = &spoke["spec"]["workers"]["machineDeployments"][0];
    assert_eq!(md["template"]["bootstrap"]["ref"]["namespace"], "ns1");
    assert_eq!(md["template"]["metadata"]["labels"]["role"], "worker");
    assert_eq!(
        spoke["spec"]["patches"][1]["external"]["generateExtension"],
        "gen.ext"
    );
    assert_eq!(to_hub(spoke.clone()).unwrap(), hub);
    // Without the conversion-data, `false` booleans are not known to be intended.
    let bare = to_hub(without_annotation(spoke, CONVERSION_DATA)).unwrap();
    let matches = &bare["spec"]["patches"][0]["definitions"][0]["selector"]["matchResources"];
    assert_eq!(matches, &json!({"controlPlane": true}));
}

#[test]
fn resource_set_binding_and_extension_config_round_trip() {
    let versions = Crds(vec![]);
    for (name, spoke_version) in [
        ("clusterresourceset", "addons.cluster.x-k8s.io/v1beta1"),
        ("clusterresourcesetbinding", "addons.cluster.x-k8s.io/v1beta1"),
        ("extensionconfig", "runtime.cluster.x-k8s.io/v1alpha1"),
    ] {
        let spoke = fixture(&format!("{name}.spoke.yaml"));
        let hub = to_hub(spoke.clone()).unwrap();
        assert_eq!(hub, fixture(&format!("{name}.v1beta2.yaml")), "{name}");
        assert_eq!(from_hub(hub, spoke_version, &versions).unwrap(), spoke, "{name}");
    }
}

#[test]
fn review_converts_every_object_or_fails() {
    let review = json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "ConversionReview",
        "request": {
            "uid": "u-1",
            "desiredAPIVersion": "cluster.x-k8s.io/v1beta2",
            "objects": [fixture("cluster.v1beta1.yaml")],
        },
    });
    let answer = review_value(&review, &crds());
    assert_eq!(answer["response"]["uid"], "u-1");
    assert_eq!(answer["response"]["result"]["status"], "Success");
    assert_eq!(
        answer["response"]["convertedObjects"][0],
        fixture("cluster.v1beta2.yaml")
    );

    let mut back = review.clone();
    back["request"]["desiredAPIVersion"] = json!("cluster.x-k8s.io/v1beta1");
    back["request"]["objects"] = json!([fixture("cluster.v1beta2.yaml")]);
    let answer = review_value(&back, &Crds(vec![]));
    assert_eq!(answer["response"]["result"]["status"], "Failure");
    let message = answer["response"]["result"]["message"].as_str().unwrap();
    assert!(message.contains("DockerCluster"), "{message}");
    assert_eq!(answer["response"]["uid"], "u-1");

    let answer = review::review_bytes(b"{not json", &crds());
    assert!(answer
        .failure
        .is_some_and(|m| m.starts_with("cannot read the ConversionReview")));
}

#[test]
fn machines_v1beta1_to_hub_match_fixtures() {
    for kind in ["machinedeployment", "machineset", "machinepool"] {
        let hub = to_hub(fixture(&format!("{kind}.v1beta1.yaml"))).unwrap();
        assert_eq!(hub, fixture(&format!("{kind}.v1beta2.yaml")), "{kind}");
    }
}

#[test]
fn machine_deployment_hub_to_v1beta1_rebuilds_strategy_refs_and_counters() {
    let hub = fixture("machinedeployment.v1beta2.yaml");
    let spoke = from_hub(hub.clone(), "cluster.x-k8s.io/v1beta1", &crds()).unwrap();
    let spec = &spoke["spec"];
    assert_eq!(
        spec["strategy"],
        json!({"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0, "deletePolicy": "Oldest"},
               "remediation": {"maxInFlight": "50%"}})
    );
    assert_eq!(spec["rolloutAfter"], "2026-01-01T00:00:00Z");
    assert_eq!(spec["minReadySeconds"], 30);
    assert_eq!(spec["revisionHistoryLimit"], 2, "kept v1beta1 field restored");
    assert_eq!(spec["progressDeadlineSeconds"], 600);
    assert_eq!(spec["paused"], true);
    assert_eq!(
        spec["machineNamingStrategy"]["template"],
        "{{ .machineSet.name }}-{{ .random }}"
    );
    let machine = &spec["template"]["spec"];
    assert_eq!(
        machine["infrastructureRef"],
        json!({"apiVersion": "infrastructure.cluster.x-k8s.io/v1beta2", "kind": "DockerMachineTemplate",
               "namespace": "ns1", "name": "md-0-infra"})
    );
    assert_eq!(
        machine["bootstrap"]["configRef"]["apiVersion"],
        "bootstrap.cluster.x-k8s.io/v1beta2"
    );
    assert_eq!(machine["nodeDrainTimeout"], "10m");
    assert_eq!(machine["nodeVolumeDetachTimeout"], "1s5ms");
    assert!(machine.get("minReadySeconds").is_none());
    let status = &spoke["status"];
    assert_eq!(status["updatedReplicas"], 2);
    assert_eq!(status["readyReplicas"], 3, "the v1beta1 counter, not the new one");
    assert_eq!(status["unavailableReplicas"], 0);
    assert_eq!(status["v1beta2"]["readyReplicas"], 2);
    assert_eq!(status["v1beta2"]["upToDateReplicas"], 1);
    assert_eq!(status["conditions"][0]["type"], "Ready");
    assert_eq!(status["v1beta2"]["conditions"][0]["type"], "Available");
    assert!(annotation(&spoke, V1BETA1_FIELDS).is_none());
    assert_eq!(to_hub(spoke).unwrap(), hub);
}

#[test]
fn machines_round_trip_both_ways() {
    let versions = crds();
    for kind in ["machinedeployment", "machineset", "machinepool"] {
        let spoke = fixture(&format!("{kind}.v1beta1.yaml"));
        let hub = to_hub(spoke.clone()).unwrap();
        let back = from_hub(hub.clone(), "cluster.x-k8s.io/v1beta1", &versions).unwrap();
        // The first trip normalises what v1beta1 writes twice (durations, empty strings).
        let again = to_hub(back.clone()).unwrap();
        assert_eq!(again, hub, "{kind}: hub -> spoke -> hub");
        let back_again = from_hub(again, "cluster.x-k8s.io/v1beta1", &versions).unwrap();
        assert_eq!(back_again, back, "{kind}: spoke -> hub -> spoke");
    }
}

#[test]
fn machine_set_zeros_survive_only_through_the_conversion_data() {
    let versions = crds();
    let mut hub = fixture("machineset.v1beta2.yaml");
    hub["spec"]["template"]["spec"]["minReadySeconds"] = json!(0);
    hub["status"].as_object_mut().unwrap().remove("replicas");
    hub["status"]["deprecated"]["v1beta1"]
        .as_object_mut()
        .unwrap()
        .remove("availableReplicas");
    let spoke = from_hub(hub.clone(), "cluster.x-k8s.io/v1beta1", &versions).unwrap();
    assert!(spoke["spec"].get("minReadySeconds").is_none(), "v1beta1 omits 0");
    assert_eq!(spoke["status"]["replicas"], 0, "v1beta1 writes it always");
    assert_eq!(spoke["status"]["availableReplicas"], 0);
    assert_eq!(to_hub(spoke.clone()).unwrap(), hub);
    // Without the conversion-data a v1beta1 0 is a 0, as Cluster API reads it.
    let bare = to_hub(without_annotation(spoke, CONVERSION_DATA)).unwrap();
    assert_eq!(bare["status"]["replicas"], 0);
    assert!(bare["spec"]["template"]["spec"].get("minReadySeconds").is_none());
}

#[test]
fn machine_pool_initialization_keeps_false_intent() {
    let versions = crds();
    let mut hub = fixture("machinepool.v1beta2.yaml");
    assert_eq!(
        hub["status"]["initialization"],
        json!({"bootstrapDataSecretCreated": true})
    );
    hub["status"]["initialization"]["infrastructureProvisioned"] = json!(false);
    let spoke = from_hub(hub.clone(), "cluster.x-k8s.io/v1beta1", &versions).unwrap();
    assert_eq!(spoke["status"]["infrastructureReady"], false);
    assert_eq!(spoke["status"]["bootstrapReady"], true);
    assert_eq!(spoke["status"]["nodeRefs"][0]["name"], "node-a");
    assert_eq!(spoke["spec"]["minReadySeconds"], 5);
    assert_eq!(to_hub(spoke).unwrap(), hub);
}

#[test]
fn machine_template_without_crd_fails() {
    let err = from_hub(
        fixture("machinepool.v1beta2.yaml"),
        "cluster.x-k8s.io/v1beta1",
        &Crds(vec![]),
    )
    .unwrap_err();
    assert!(
        matches!(err, ConvertError::MissingContract { ref kind, .. } if kind == "KubeadmConfig" || kind == "DockerMachinePool"),
        "{err}"
    );
    let mut spoke = fixture("machineset.v1beta1.yaml");
    spoke["spec"]["template"]["spec"]["nodeDrainTimeout"] = json!("soon");
    let err = to_hub(spoke).unwrap_err().to_string();
    assert!(err.contains("spec.template.spec.nodeDrainTimeout"), "{err}");
}
