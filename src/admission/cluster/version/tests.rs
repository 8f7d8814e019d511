use super::*;
use crate::store::MemoryStore;

const OLD_CLUSTER: &str = r#"
apiVersion: cluster.x-k8s.io/v1beta2
kind: Cluster
metadata: {name: prod, namespace: default}
spec:
  controlPlaneRef: {apiGroup: controlplane.cluster.x-k8s.io, kind: KubeadmControlPlane, name: prod-cp}
  topology: {classRef: {name: quick-start}, version: OLD}
"#;

fn control_plane(spec: &str, status: Option<&str>) -> String {
    let status = status.map_or(String::new(), |v| format!("\nstatus: {{version: {v}}}"));
    format!(
        "apiVersion: controlplane.cluster.x-k8s.io/v1beta1\nkind: KubeadmControlPlane\n\
         metadata: {{name: prod-cp, namespace: default}}\nspec: {{version: {spec}}}{status}\n"
    )
}

/// The detail of the error for changing the version from `old` to `new` with `objects` stored.
fn change(old: &str, new: &str, objects: &str) -> Option<String> {
    change_with(old, new, objects, "", true)
}

/// [`change`] with the new Cluster's annotations (a YAML map) and whether the ceiling applies.
fn change_with(old: &str, new: &str, objects: &str, annotations: &str, ceiling: bool) -> Option<String> {
    let cluster: Cluster = serde_yaml_ng::from_str(&OLD_CLUSTER.replace("OLD", old)).unwrap();
    let mut new_cluster = cluster.clone();
    if !annotations.is_empty() {
        new_cluster.metadata.annotations = Some(serde_yaml_ng::from_str(annotations).unwrap());
    }
    let store = MemoryStore::from_yaml(objects).unwrap();
    let path = FieldPath::new("spec").children(&["topology", "version"]);
    let (new_version, old_version, errors) = parse_update(&path, new, old);
    assert!(errors.is_empty());
    let change = Change {
        cluster: &new_cluster,
        old_cluster: &cluster,
        ceiling,
    };
    check_change(&path, new, &new_version, &old_version, &change, &store).map(|e| e.to_string())
}

#[test]
fn tolerant_parsing_follows_go() {
    assert_eq!(parse_tolerant("v1.31"), Some(Version::new(1, 31, 0)));
    assert_eq!(parse_tolerant(" v01.02.03 "), Some(Version::new(1, 2, 3)));
    assert_eq!(parse_tolerant("v1.31-rc.1"), None);
    assert_eq!(parse_tolerant("vv1.2.3"), None);
}

#[test]
fn build_identifiers_compare_like_go() {
    let order = |a: &str, b: &str| compare(&parse_tolerant(a).unwrap(), &parse_tolerant(b).unwrap());
    assert_eq!(order("v1.30.0+rke2r1", "v1.30.0+rke2r2"), Order::Different);
    assert_eq!(order("v1.30.0+2", "v1.30.0+10"), Order::Less);
    assert_eq!(order("v1.30.0+1", "v1.30.0+a"), Order::Less);
    assert_eq!(order("v1.30.0", "v1.30.0+a"), Order::Less);
    assert_eq!(order("v1.30.0+a.1", "v1.30.0+a"), Order::Greater);
    assert_eq!(order("v1.30.0-rc.1+b", "v1.30.0+a"), Order::Less);
}

#[test]
fn other_textual_build_is_no_decrease() {
    let objects = control_plane("v1.30.0+rke2r2", Some("v1.30.0+rke2r2"));
    assert_eq!(change("v1.30.0+rke2r2", "v1.30.0+rke2r1", &objects), None);
}

#[test]
fn decrease_ignores_builds_and_pre_releases() {
    // v1.14 compares without pre-releases and build metadata: these fall through to the
    // control plane check instead of being a decrease.
    let objects = control_plane("v1.30.0+2", Some("v1.30.0+2"));
    assert_eq!(change("v1.30.0+2", "v1.30.0+1", &objects), None);
    let objects = control_plane("v1.30.0", Some("v1.30.0"));
    assert_eq!(change("v1.30.0", "v1.30.0-rc.0", &objects), None);
    assert_eq!(
        change("v1.30.1", "v1.30.0-rc.0", "").as_deref(),
        Some(
            r#"spec.topology.version: Invalid value: "v1.30.0-rc.0": version cannot be decreased from "1.30.1" to "1.30.0-rc.0""#
        )
    );
}

#[test]
fn ceiling_ignores_pre_releases_and_is_skipped_when_the_class_bounds_versions() {
    let objects = control_plane("v1.30.0", Some("v1.30.0"));
    assert_eq!(change("v1.30.0", "v1.31.0-rc.1", &objects), None);
    assert_eq!(
        change("v1.30.0", "v1.32.0-rc.1", &objects).as_deref(),
        Some(
            r#"spec.topology.version: Invalid value: "v1.32.0-rc.1": version cannot be increased from "1.30.0" to "1.32.0-rc.1""#
        ),
        "v1.14 compares without the pre-release"
    );
    assert_eq!(change_with("v1.30.0", "v1.33.0", &objects, "", false), None);
    assert_eq!(
        change("v1.30.0", "v1.32.0", &objects).as_deref(),
        Some(
            r#"spec.topology.version: Invalid value: "v1.32.0": version cannot be increased from "1.30.0" to "1.32.0""#
        )
    );
}

#[test]
fn pending_after_cluster_upgrade_hook_blocks_a_change() {
    let objects = control_plane("v1.30.0", Some("v1.30.0"));
    let pending = "{runtime.cluster.x-k8s.io/pending-hooks: 'BeforeClusterUpgrade,AfterClusterUpgrade'}";
    assert_eq!(
        change_with("v1.30.0", "v1.31.0", &objects, pending, true).as_deref(),
        Some(
            r#"spec.topology.version: Invalid value: "v1.31.0": version cannot be changed when the "AfterClusterUpgrade" hook is still blocking"#
        )
    );
    let other = "{runtime.cluster.x-k8s.io/pending-hooks: AfterControlPlaneUpgrade}";
    assert_eq!(change_with("v1.30.0", "v1.31.0", &objects, other, true), None);
    assert_eq!(change_with("v1.30.0", "v1.30.0", &objects, pending, true), None);
}

#[test]
fn strict_format_needs_the_v() {
    let path = FieldPath::new("spec").children(&["topology", "version"]);
    let shown =
        |v: &str| -> Vec<String> { format_errors(&path, v).iter().map(ToString::to_string).collect() };
    assert!(shown("v1.30.0-rc.1+b.2").is_empty());
    assert_eq!(
        shown("1.30.0"),
        [r#"spec.topology.version: Invalid value: "1.30.0": must start with v"#]
    );
    for bad in [
        "v1.30.0.1",
        "v1.30.0_x",
        "v1.30.0-",
        "v1.30.0-rc.01",
        "v1.30.0+",
        "v1.30",
    ] {
        assert_eq!(
            shown(bad),
            [format!(
                r#"spec.topology.version: Invalid value: "{bad}": version must be a valid semantic version"#
            )],
        );
    }
}

#[test]
fn missing_control_plane_is_named_like_the_api_server() {
    assert_eq!(
        change("v1.30.0", "v1.30.1", "").as_deref(),
        Some(
            "spec.topology.version: Invalid value: \"v1.30.1\": version cannot be changed: failed to check if control \
             plane is upgrading: failed to get control plane object: failed to retrieve KubeadmControlPlane \
             default/prod-cp: kubeadmcontrolplanes.controlplane.cluster.x-k8s.io \"prod-cp\" not found"
        )
    );
}

#[test]
fn control_plane_states() {
    let detail = |objects: &str| {
        change("v1.30.0", "v1.30.1", objects).map(|e| e.rsplit(": ").next().unwrap().to_owned())
    };
    assert_eq!(
        detail(&control_plane("v1.30.0", None)).as_deref(),
        Some("control plane is currently provisioning")
    );
    assert_eq!(
        detail(&control_plane("v1.30.0", Some("''"))).as_deref(),
        Some("control plane is currently provisioning")
    );
    assert_eq!(
        change(
            "v1.30.0+b",
            "v1.30.1",
            &control_plane("v1.30.0+b", Some("v1.30.0+a"))
        )
        .map(|e| e.rsplit(": ").next().unwrap().to_owned())
        .as_deref(),
        Some("control plane is still completing a previous upgrade"),
        "another textual build counts as upgrading"
    );
    assert_eq!(
        detail(&control_plane("v1.30.0+a", Some("v1.30.0+a"))).as_deref(),
        Some("Cluster.spec.topology.version 1.30.0 was not propagated to control plane yet (control plane version 1.30.0+a)"),
        "v1.14 compares the full version string, build metadata included"
    );
    assert_eq!(
        change("v1.30.0", "v1.30.1", "apiVersion: controlplane.cluster.x-k8s.io/v1beta1\nkind: KubeadmControlPlane\nmetadata: {name: prod-cp, namespace: default}\nspec: {}\n").as_deref(),
        Some("spec.topology.version: Invalid value: \"v1.30.1\": version cannot be changed: failed to check if control plane is upgrading: failed to get control plane version: path .spec.version: field not found")
    );
}

const DEPLOYMENT: &str = r#"
---
apiVersion: cluster.x-k8s.io/v1beta1
kind: MachineDeployment
metadata:
  name: prod-md-0
  namespace: default
  labels: {cluster.x-k8s.io/cluster-name: prod, topology.cluster.x-k8s.io/owned: OWNED}
spec:
  selector: {matchLabels: {md: prod-md-0}}
  template: {spec: {version: v1.30.0}}
---
apiVersion: cluster.x-k8s.io/v1beta1
kind: Machine
metadata: {name: m1, namespace: default, labels: {md: prod-md-0}}
spec: MACHINE
"#;

#[test]
fn machine_without_version_is_an_error() {
    let objects = control_plane("v1.30.0", Some("v1.30.0"))
        + &DEPLOYMENT.replace("OWNED", "''").replace("MACHINE", "{}");
    assert_eq!(
        change("v1.30.0", "v1.30.1", &objects).as_deref(),
        Some("spec.topology.version: Invalid value: \"v1.30.1\": version cannot be changed: failed to check if MachineDeployment prod-md-0 is upgrading: Machine m1 has no version")
    );
}

#[test]
fn only_topology_owned_deployments_count() {
    let rolling = DEPLOYMENT.replace("MACHINE", "{version: v1.29.9}");
    let base = control_plane("v1.30.0", Some("v1.30.0"));
    assert_eq!(
        change("v1.30.0", "v1.30.1", &(base.clone() + &rolling.replace("OWNED", "''"))).as_deref(),
        Some("spec.topology.version: Invalid value: \"v1.30.1\": version cannot be changed: there are still MachineDeployments completing a previous upgrade: [prod-md-0]")
    );
    assert_eq!(
        change("v1.30.0", "v1.30.1", &(base + &rolling.replace("OWNED", "x"))),
        None
    );
}

#[test]
fn unparsable_versions_are_reported_on_update() {
    let path = FieldPath::new("spec").children(&["topology", "version"]);
    let (new, old, errors) = parse_update(&path, "v1.x", "junk");
    assert_eq!((new, old), (Version::new(0, 0, 0), Version::new(0, 0, 0)));
    let causes: Vec<String> = errors.iter().map(ToString::to_string).collect();
    assert_eq!(
        causes,
        vec![
            r#"spec.topology.version: Invalid value: "v1.x": version must be a valid semantic version"#,
            r#"spec.topology.version: Invalid value: "junk": old version must be a valid semantic version"#,
        ]
    );
}

#[test]
fn a_version_that_reached_nothing_can_be_taken_back() {
    // v1.31.0 was asked for but the control plane and the workers still run v1.30.0.
    let objects = control_plane("v1.30.0", Some("v1.30.0"))
        + &DEPLOYMENT
            .replace("OWNED", "''")
            .replace("MACHINE", "{version: v1.30.0}");
    assert_eq!(change("v1.31.0", "v1.30.0", &objects), None);
    // Not while the upgrade's AfterClusterUpgrade is owed.
    let pending = "{runtime.cluster.x-k8s.io/pending-hooks: AfterClusterUpgrade}";
    assert!(change_with("v1.31.0", "v1.30.0", &objects, pending, true).is_some());
}

#[test]
fn taking_back_a_version_that_reached_an_object_names_it() {
    let objects = control_plane("v1.31.0", Some("v1.30.0"));
    assert_eq!(
        change("v1.31.0", "v1.30.0", &objects).as_deref(),
        Some(
            r#"spec.topology.version: Invalid value: "v1.30.0": version cannot be decreased from "1.31.0" to "1.30.0": KubeadmControlPlane prod-cp (v1.31.0) already has a version above it"#
        )
    );
    let objects = control_plane("v1.30.0", Some("v1.30.0"))
        + &DEPLOYMENT
            .replace("OWNED", "''")
            .replace("v1.30.0}}", "v1.31.0}}")
            .replace("MACHINE", "{version: v1.31.0}");
    assert!(change("v1.31.0", "v1.30.0", &objects)
        .unwrap()
        .ends_with("MachineDeployment prod-md-0 (v1.31.0) already has a version above it"));
}
