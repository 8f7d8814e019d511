//! The kube-apiserver restarted in the middle of a template rotation (#34), beside Cluster API
//! v1.14.0's real managers with the in-memory backend: right after the ClusterClass's machine
//! templates are swapped (capi-topology is cloning new templates for the Cluster and pointing the
//! KubeadmControlPlane and MachineDeployment at them), the API server is killed (SIGKILL) and
//! started again on the same port and etcd. Checked afterwards: every Machine rolled exactly once
//! (one creation per Machine, each old Machine deleted once, from the audit log), the old clones
//! deleted and no clone leaked, the ClusterResourceSetBinding of a ClusterResourceSet applied to
//! the Cluster unchanged, and our writes quiet once settled. The time to converge after the
//! API server is back is printed, not asserted. Slow: run with
//! `cargo test --test e2e apiserver_restarted_during_a_template_rotation -- --ignored --nocapture`.

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use crate::audit_log::{total, writes_since};
use crate::beside_cluster_api::{condition, in_memory_manifests, PROVISIONED};
use crate::beside_cluster_api_resource_set as resource_set;
use crate::beside_cluster_api_rotation as rotation;
use crate::faults_checks::{audit_mark, bindings, clones, deletions, machine_writes, quiet_writes, QUIET};
use crate::faults_stack::{provision_mem, Stack};
use crate::process::poll;
use crate::runtime_extensions::expect;

/// The Cluster's Machines: one of the control plane, two workers; each rolls once.
const MACHINES: usize = 3;

#[test]
#[ignore = "slow: about 3 minutes"]
fn apiserver_restarted_during_a_template_rotation() {
    let mut stack = Stack::start("faults-apiserver");
    if let Err(e) = scenario(&mut stack) {
        panic!("{e}\n{}", stack.logs());
    }
}

fn scenario(stack: &mut Stack) -> Result<(), String> {
    let (kubectl, run) = (&stack.kubectl, &stack.run);
    let (class, cluster) = in_memory_manifests();
    provision_mem(kubectl, &[&class, &cluster])?;
    let available = || condition(kubectl, "cluster/mem", "Available") == "True";
    resource_set::create(kubectl, "mem")?;
    resource_set::applied(run, kubectl, "mem")?;
    let audit = run.join("audit.log");
    let (clones_before, mark) = (clones(kubectl, "mem")?, audit_mark(&audit));
    let bindings_before = bindings(kubectl)?;

    let before = rotation::swap_class_templates(kubectl, "mem")?;
    let killed = Instant::now();
    stack.plane.kill_apiserver();
    stack.plane.restart_apiserver();
    let (back, outage) = (Instant::now(), killed.elapsed());
    let during = rotation::machines(kubectl, "mem")?;
    let old_left = during.keys().filter(|m| before.machines.contains_key(*m)).count();
    rotation::rotated(kubectl, "mem", &before, (MACHINES, PROVISIONED), available, true)?;
    let rotated = back.elapsed();
    poll("TopologyReconciled", Duration::from_secs(60), || {
        let now = condition(kubectl, "cluster/mem", "TopologyReconciled");
        (now == "True").then_some(()).ok_or(now)
    })?;
    stack.server.ensure_running()?;

    let (created, deleted) = machine_writes(&audit, mark);
    let (writes, _) = writes_since(&audit, mark);
    let ours_meanwhile = writes.get("capi-topology").cloned().unwrap_or_default();
    let clones_after = clones(kubectl, "mem")?;
    let clones_deleted = deletions(&audit, mark, "capi-topology", "devmachinetemplates");
    let bindings_after = bindings(kubectl)?;
    let quiet = quiet_writes(&audit);
    eprintln!(
        "faults: API server killed right after the class's templates were swapped, away \
         {outage:?}; {old_left} of {} old Machines still there when it was back; every Machine \
         rolled {rotated:?} after; Machines created {created}, deleted {}; clones before \
         {clones_before:?}, after {clones_after:?}, deleted (with the answer) {clones_deleted:?}; \
         ClusterResourceSetBindings before \
         {bindings_before:?}, after {bindings_after:?}; our writes meanwhile {} ({ours_meanwhile:?}); \
         our writes in {QUIET:?} once settled: {quiet:?}",
        before.machines.len(),
        deleted.len(),
        total(&writes, "capi-topology"),
    );
    expect(
        old_left > 0,
        format!("the API server was back before the rotation was done ({old_left} old Machines left)"),
    )?;
    let old: BTreeSet<String> = before.machines.keys().cloned().collect();
    expect(
        created == MACHINES && deleted == old,
        format!("each Machine rolled once: {created} created, deleted {deleted:?}, old {old:?}"),
    )?;
    expect(
        clones_after.len() == clones_before.len() && clones_after != clones_before,
        format!("the clones replaced, none leaked: {clones_before:?}, now {clones_after:?}"),
    )?;
    // A deletion answered 200 (gone) or 202 (finalizers pending); 404: deleted already.
    let succeeded: Vec<&str> = clones_deleted
        .iter()
        .filter_map(|d| d.strip_suffix(" 200").or_else(|| d.strip_suffix(" 202")))
        .collect();
    let deleted_once: BTreeSet<String> = succeeded.iter().map(|d| (*d).to_owned()).collect();
    expect(
        deleted_once == before.templates && succeeded.len() == deleted_once.len(),
        format!(
            "the old clones deleted, each once, no other: {clones_deleted:?}, old {:?}",
            before.templates
        ),
    )?;
    expect(
        bindings_after == bindings_before && !bindings_before.is_empty(),
        format!("no binding lost, doubled or leaked: {bindings_before:?}, now {bindings_after:?}"),
    )?;
    expect(quiet.is_empty(), format!("no writes once settled: {quiet:?}"))
}
