//! What the fault tests check afterwards, from the API server's audit log and the objects left:
//! Machines created and deleted, our writes once settled, template clones and
//! MachineHealthChecks, and the after-hooks called more than once.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::time::Duration;

use serde_json::Value;

use crate::audit_log::writes_since;
use crate::kubectl::Kubectl;
use crate::runtime_extensions::extension::HookCall;

/// How long our writes are watched once the work is done.
pub const QUIET: Duration = Duration::from_secs(15);

/// The calls beyond the first of each non-blocking hook (AfterControlPlaneUpgrade,
/// AfterWorkersUpgrade, AfterClusterUpgrade) per version, for `cluster`.
pub fn duplicate_after_hooks(calls: &[HookCall], cluster: &str) -> BTreeMap<String, usize> {
    let mut counts: BTreeMap<String, usize> = BTreeMap::new();
    for call in calls
        .iter()
        .filter(|c| c.cluster == cluster && c.hook.starts_with("After"))
    {
        let version = if call.version.is_empty() {
            &call.to
        } else {
            &call.version
        };
        *counts.entry(format!("{} {version}", call.hook)).or_default() += 1;
    }
    counts
        .into_iter()
        .map(|(k, n)| (k, n - 1))
        .filter(|(_, n)| *n > 0)
        .collect()
}

/// How many Machines the audit log at `path` (from line `from` on) shows created (by anyone)
/// and the names of those deleted.
pub fn machine_writes(path: &Path, from: usize) -> (usize, BTreeSet<String>) {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let (mut created, mut deleted) = (0, BTreeSet::new());
    for line in text.lines().skip(from) {
        let event: Value = serde_json::from_str(line).unwrap_or_default();
        let code = event["responseStatus"]["code"].as_u64().unwrap_or(0);
        let machine =
            event["objectRef"]["resource"] == "machines" && event["objectRef"]["subresource"].is_null();
        if event["stage"] != "ResponseComplete" || !machine || !(200..300).contains(&code) {
            continue;
        }
        // Cluster API v1.14 creates Machines with server-side apply: a patch answered 201.
        match event["verb"].as_str() {
            Some("create" | "patch") if code == 201 => created += 1,
            Some("delete") => {
                deleted.insert(event["objectRef"]["name"].as_str().unwrap_or_default().to_owned());
            }
            _ => {}
        }
    }
    (created, deleted)
}

/// The deletions of `resource` (no subresource) by `writer` in the audit log at `path` (from
/// line `from` on), each as `name code`, in order.
pub fn deletions(path: &Path, from: usize, writer: &str, resource: &str) -> Vec<String> {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    text.lines()
        .skip(from)
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .filter(|event| {
            event["stage"] == "ResponseComplete"
                && event["verb"] == "delete"
                && event["user"]["username"] == writer
                && event["objectRef"]["resource"] == resource
                && event["objectRef"]["subresource"].is_null()
        })
        .map(|event| {
            let name = event["objectRef"]["name"].as_str().unwrap_or_default().to_owned();
            format!("{name} {}", event["responseStatus"]["code"])
        })
        .collect()
}

/// The names of the template clones and MachineHealthChecks of Cluster `default/cluster`.
pub fn clones(kubectl: &Kubectl, cluster: &str) -> Result<BTreeSet<String>, String> {
    let selector = format!("cluster.x-k8s.io/cluster-name={cluster}");
    let kinds = "devmachinetemplates,kubeadmconfigtemplates,devclusters,machinehealthchecks";
    let names = kubectl.ok(&["get", kinds, "-n", "default", "-l", &selector, "-o", "name"])?;
    Ok(names.lines().map(str::to_owned).collect())
}

/// The ClusterResourceSetBindings of namespace `default`, each with the ClusterResourceSets
/// and resources it records applied.
pub fn bindings(kubectl: &Kubectl) -> Result<BTreeSet<String>, String> {
    let template = "jsonpath={range .items[*]}{.metadata.name}:{range .spec.bindings[*]}\
        {.clusterResourceSetName}({range .resources[*]}{.name}{end}){end}{\"\\n\"}{end}";
    let text = kubectl.ok(&[
        "get",
        "clusterresourcesetbindings",
        "-n",
        "default",
        "-o",
        template,
    ])?;
    Ok(text.lines().map(str::to_owned).collect())
}

/// The lines of the audit log at `path`.
pub fn audit_mark(path: &Path) -> usize {
    writes_since(path, 0).1
}

/// Waits [`QUIET`] and returns our writes (the `capi-topology` user) meanwhile.
pub fn quiet_writes(audit: &Path) -> BTreeMap<String, u64> {
    let mark = audit_mark(audit);
    std::thread::sleep(QUIET);
    let (writes, _) = writes_since(audit, mark);
    writes.get("capi-topology").cloned().unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn machines_created_by_apply_or_create_and_deleted_once_each_count() {
        let dir = std::env::temp_dir().join(format!("faults-audit-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("audit.log");
        let event = |verb: &str, sub: &str, code: u32, name: &str| {
            let sub = if sub.is_empty() {
                String::new()
            } else {
                format!(r#","subresource":"{sub}""#)
            };
            format!(
                r#"{{"stage":"ResponseComplete","verb":"{verb}","objectRef":{{"resource":"machines","name":"{name}"{sub}}},"responseStatus":{{"code":{code}}}}}"#
            )
        };
        let lines = [
            event("patch", "", 201, "m1"),
            event("create", "", 201, "m2"),
            event("patch", "", 200, "m1"),
            event("patch", "status", 201, "m1"),
            event("create", "", 409, "m2"),
            event("delete", "", 200, "m1"),
            event("delete", "", 200, "m1"),
            event("delete", "", 404, "m2"),
        ];
        std::fs::write(&path, lines.join("\n")).unwrap();
        let (created, deleted) = machine_writes(&path, 0);
        assert_eq!(created, 2);
        assert_eq!(deleted, BTreeSet::from(["m1".to_owned()]));
        assert_eq!(machine_writes(&path, 2).0, 0);
        assert!(deletions(&path, 0, "capi-topology", "machines").is_empty());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn deletions_name_each_object_and_its_answer() {
        let dir = std::env::temp_dir().join(format!("faults-deletions-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("audit.log");
        let event = |user: &str, verb: &str, name: &str, code: u32| {
            format!(
                r#"{{"stage":"ResponseComplete","verb":"{verb}","user":{{"username":"{user}"}},"objectRef":{{"resource":"devmachinetemplates","name":"{name}"}},"responseStatus":{{"code":{code}}}}}"#
            )
        };
        let lines = [
            event("capi-topology", "delete", "a", 200),
            event("someone", "delete", "b", 200),
            event("capi-topology", "patch", "c", 200),
            event("capi-topology", "delete", "a", 404),
        ];
        std::fs::write(&path, lines.join("\n")).unwrap();
        let deleted = deletions(&path, 0, "capi-topology", "devmachinetemplates");
        assert_eq!(deleted, ["a 200", "a 404"]);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
