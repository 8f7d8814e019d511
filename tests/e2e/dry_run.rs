//! A dry run against a running management cluster: the Quickstart's `dev` reconciled by
//! `capi-topology serve` on the e2e API server, exported with kubectl, and planned offline with
//! `--current` and live with `--kubeconfig` (read-only): both give the same diff, no change for
//! the unchanged Cluster, and for a version bump exactly the change the controller then writes.

use std::path::Path;
use std::process::Command;

use serde_json::Value;

use crate::class_status;
use crate::controllers::{condition, owned_by, provision_control_plane, CONVERGED};
use crate::env::{repo_path, Env};
use crate::kubectl::Kubectl;
use crate::manifests::{quickstart_object, render};
use crate::process::poll;

/// The kinds a `kubectl get` exports for the Cluster's current state.
const EXPORTED: &str = "clusters,clusterclasses,dockerclusters,kubeadmcontrolplanes,dockermachinetemplates,\
                        kubeadmconfigtemplates,machinedeployments,machinesets,machines,machinehealthchecks";

/// `capi-topology plan -o diff` of `files` with `state` (`--current DIR` or `--kubeconfig PATH`).
pub fn plan_diff(files: &[&str], state: &[&str]) -> Result<String, String> {
    let mut command = Command::new(env!("CARGO_BIN_EXE_capi-topology"));
    command
        .current_dir(repo_path(""))
        .arg("plan")
        .arg("-f")
        .args(files);
    command.args(state).args(["-o", "diff"]);
    let out = command.output().map_err(|e| e.to_string())?;
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    if !out.status.success() {
        return Err(format!(
            "plan failed: {stdout}{}",
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    Ok(stdout)
}

/// The current state of namespace `default`, as `kubectl get -o yaml` prints it, in `dir`.
fn export(kubectl: &Kubectl, dir: &Path) -> Result<(), String> {
    let yaml = kubectl.ok(&["get", EXPORTED, "-n", "default", "-o", "yaml"])?;
    std::fs::create_dir_all(dir).map_err(|e| e.to_string())?;
    std::fs::write(dir.join("current.yaml"), yaml).map_err(|e| e.to_string())
}

/// The diff planned both ways, which must agree.
fn planned(files: &[&str], current: &Path, kubeconfig: &Path) -> Result<String, String> {
    let offline = plan_diff(files, &["--current", &current.display().to_string()])?;
    let live = plan_diff(files, &["--kubeconfig", &kubeconfig.display().to_string()])?;
    if offline != live {
        return Err(format!(
            "--current and --kubeconfig differ:\n{offline}---\n{live}"
        ));
    }
    Ok(offline)
}

/// One `~ changed KIND default/NAME` block of a diff: kind, name, and each (path, desired value).
type Changed = (String, String, Vec<(String, Value)>);

/// The `~ changed` blocks of a diff.
fn changed(diff: &str) -> Vec<Changed> {
    let mut blocks: Vec<Changed> = Vec::new();
    for line in diff.lines() {
        if let Some(what) = line.strip_prefix("  ~ changed ") {
            let (kind, rest) = what.split_once(' ').unwrap_or_default();
            let name = rest.rsplit('/').next().unwrap_or_default();
            blocks.push((kind.to_owned(), name.to_owned(), Vec::new()));
        } else if let (Some(field), Some(block)) = (line.strip_prefix("      "), blocks.last_mut()) {
            let (path, change) = field.split_once(": ").unwrap_or_default();
            let to = change.rsplit_once(" -> ").map_or("", |(_, to)| to);
            block
                .2
                .push((path.to_owned(), serde_json::from_str(to).unwrap_or(Value::Null)));
        }
    }
    blocks
}

/// Whether `live` is the name `planned` generated, but for the random suffix both draw (the
/// controller names new objects as `plan` does, `<prefix>-<5 random characters>`).
fn same_but_suffix(live: Option<&str>, planned: &str) -> bool {
    let prefix = |name: &str| {
        name.rsplit_once('-')
            .map(|(prefix, suffix)| (prefix.to_owned(), suffix.len()))
    };
    live.is_some_and(|live| prefix(live).is_some() && prefix(live) == prefix(planned))
}

/// `object` at a dotted `path` (no list indices in the paths checked here).
fn at<'a>(object: &'a Value, path: &str) -> &'a Value {
    path.split('.').fold(object, |value, key| &value[key])
}

#[test]
fn a_dry_run_against_the_cluster_is_what_the_controller_then_does() {
    let env = Env::with_webhooks("dry-run");
    let kubectl = &env.kubectl;
    let fail = |e: String| -> ! { panic!("{e}\n{}", env.logs()) };
    class_status::install_quickstart(kubectl).unwrap_or_else(|e| fail(e));
    let dev = quickstart_object("10-cluster-dev.yaml", "Cluster");
    kubectl.accepts(&render(&[dev])).unwrap_or_else(|e| fail(e));
    provision_control_plane(kubectl, "dev", "v1.31.2").unwrap_or_else(|e| fail(e));
    poll("dev to be reconciled", CONVERGED, || {
        let cluster = kubectl.get_json("cluster", "default", "dev")?;
        let deployments = owned_by(kubectl, "dev", "machinedeployment")?;
        (condition(&cluster)["status"] == "True" && deployments.len() == 1)
            .then_some(())
            .ok_or_else(|| format!("not yet: {}", condition(&cluster)))
    })
    .unwrap_or_else(|e| fail(e));

    let kubeconfig = env.plane.kubeconfig().to_path_buf();
    let repo = [
        "examples/quickstart/00-clusterclass.yaml",
        "examples/quickstart/10-cluster-dev.yaml",
    ];
    let exported = env.run.join("exported");
    export(kubectl, &exported).unwrap_or_else(|e| fail(e));
    let steady = planned(&repo, &exported, &kubeconfig).unwrap_or_else(|e| fail(e));
    assert!(steady.contains("  no changes\n"), "{steady}");

    let bump = [
        "examples/quickstart/00-clusterclass.yaml",
        "examples/quickstart-upgrade/10-cluster-dev.yaml",
    ];
    let diff = planned(&bump, &exported, &kubeconfig).unwrap_or_else(|e| fail(e));
    let control_plane = owned_by(kubectl, "dev", "kubeadmcontrolplane").unwrap_or_else(|e| fail(e));
    let cp_name = control_plane[0]["metadata"]["name"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    let blocks = changed(&diff);
    assert!(
        blocks
            .iter()
            .any(|(kind, name, _)| kind == "KubeadmControlPlane" && *name == cp_name),
        "the live control plane {cp_name} is changed in place:\n{diff}"
    );
    assert!(!diff.contains("deleted KubeadmControlPlane"), "{diff}");

    let upgrade = std::fs::read_to_string(repo_path("examples/quickstart-upgrade/10-cluster-dev.yaml"))
        .unwrap_or_else(|e| fail(e.to_string()));
    kubectl.accepts(&upgrade).unwrap_or_else(|e| fail(e));
    poll("the controller to write the upgrade", CONVERGED, || {
        let cp = kubectl.get_json("kubeadmcontrolplane", "default", &cp_name)?;
        (cp["spec"]["version"] == "v1.32.0")
            .then_some(())
            .ok_or_else(|| "not yet".to_owned())
    })
    .unwrap_or_else(|e| fail(e));
    let created: Vec<(&str, &str)> = diff
        .lines()
        .filter_map(|l| l.strip_prefix("  + created "))
        .map(|line| {
            let (kind, rest) = line.split_once(' ').unwrap_or_default();
            (kind, rest.rsplit('/').next().unwrap_or_default())
        })
        .collect();
    for (kind, name) in &created {
        let names = owned_by(kubectl, "dev", &kind.to_lowercase()).unwrap_or_else(|e| fail(e));
        assert!(
            names
                .iter()
                .any(|o| same_but_suffix(o["metadata"]["name"].as_str(), name)),
            "{kind} {name} was planned, the controller made {:?}:\n{diff}",
            names.iter().map(|o| &o["metadata"]["name"]).collect::<Vec<_>>()
        );
    }
    for (kind, name, fields) in &blocks {
        let live = kubectl
            .get_json(&kind.to_lowercase(), "default", name)
            .unwrap_or_else(|e| fail(e));
        for (path, value) in fields {
            let planned_name = created.iter().any(|(_, created)| value.as_str() == Some(created));
            if planned_name {
                assert!(
                    same_but_suffix(at(&live, path).as_str(), value.as_str().unwrap_or_default()),
                    "{kind} {name} {path}: {} as planned:\n{diff}",
                    at(&live, path)
                );
            } else {
                assert_eq!(at(&live, path), value, "{kind} {name} {path} as planned:\n{diff}");
            }
        }
    }
    for line in diff.lines().filter_map(|l| l.strip_prefix("  - deleted ")) {
        let (kind, rest) = line.split_once(' ').unwrap_or_default();
        let name = rest.rsplit('/').next().unwrap_or_default();
        poll(
            &format!("{kind} {name} to be deleted, as planned"),
            CONVERGED,
            || {
                let names = owned_by(kubectl, "dev", &kind.to_lowercase())?;
                names
                    .iter()
                    .all(|o| o["metadata"]["name"] != name)
                    .then_some(())
                    .ok_or_else(|| "not yet".to_owned())
            },
        )
        .unwrap_or_else(|e| fail(e));
    }
    let deployment = owned_by(kubectl, "dev", "machinedeployment").unwrap_or_else(|e| fail(e));
    assert_eq!(
        deployment[0]["spec"]["template"]["spec"]["version"], "v1.31.2",
        "the workers are held, as planned:\n{diff}"
    );
}
