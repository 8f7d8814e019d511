//! Hostile Runtime Extension answers against the running controllers (issue 26): an extension
//! whose GeneratePatches answers the copy bomb (each op doubles the template) and one whose
//! answer is quadratic to apply (10000 inserts at the front of one array) are registered with the
//! API server, each for a class of its own. `capi-topology serve` stays up with a bounded peak
//! resident set, each Cluster of those classes gets `TopologyReconciled` False naming the patch
//! and the bound it crossed, and a Cluster of a healthy class is reconciled (and scaled) at the
//! same time.

use std::time::Instant;

use serde_json::{json, Value};

use crate::controllers::{condition, owned_by, CONVERGED};
use crate::env::Env;
use crate::local_extension::handlers::GENERATE_PATCHES;
use crate::local_extension::hostile::{copy_bomb, front_inserts, HostileExtension};
use crate::manifests::{quickstart_object, quickstart_templates, render, with};
use crate::proc_stats::{peak_rss_mib, pid_of};
use crate::process::poll;
use crate::runtime_extensions::{expect, extension_config, wait_condition, wait_discovered};

/// A safety bound on the server's peak resident set (the copy bomb alone took 6 GiB before).
const PEAK_BOUND_MIB: f64 = 512.0;

#[test]
fn hostile_extension_answers_block_only_their_clusters() {
    let mut env = Env::with_webhooks("hostile-extensions");
    let bomb = HostileExtension::start(copy_bomb);
    let quadratic = HostileExtension::start(|request| front_inserts(request, 10_000));
    if let Err(e) = scenario(&mut env, &bomb, &quadratic) {
        panic!("{e}\n{}", env.logs());
    }
}

fn scenario(env: &mut Env, bomb: &HostileExtension, quadratic: &HostileExtension) -> Result<(), String> {
    let kubectl = &env.kubectl;
    for (name, extension) in [("bomb", bomb), ("quadratic", quadratic)] {
        let config = extension_config(name, &extension.url(), Some(&extension.ca_bundle()), None);
        kubectl.accepts(&config.to_string())?;
    }
    for name in ["bomb", "quadratic"] {
        wait_discovered(kubectl, name)?;
    }

    // The quickstart class, and a copy of it per hostile extension with its external patch.
    let class = quickstart_object("00-clusterclass.yaml", "ClusterClass");
    let mut objects = quickstart_templates();
    objects.push(class.clone());
    for name in ["bomb", "quadratic"] {
        let mut hostile = with(class.clone(), "/metadata/name", json!(format!("{name}-class")));
        let patch = json!({"name": format!("{name}-patch"),
                           "external": {"generatePatchesExtension": format!("{GENERATE_PATCHES}.{name}")}});
        hostile["spec"]["patches"]
            .as_array_mut()
            .ok_or("the quickstart class has patches")?
            .push(patch);
        objects.push(hostile);
    }
    kubectl.accepts(&render(&objects))?;
    for name in ["quick-start", "bomb-class", "quadratic-class"] {
        crate::class_status::wait_reconciled(kubectl, "default", name)?;
    }

    // One Cluster per class, all at once.
    let dev = quickstart_object("10-cluster-dev.yaml", "Cluster");
    let clusters: Vec<Value> = [
        ("healthy", "quick-start"),
        ("bomb", "bomb-class"),
        ("quadratic", "quadratic-class"),
    ]
    .into_iter()
    .map(|(name, class)| {
        with(
            with(dev.clone(), "/metadata/name", json!(name)),
            "/spec/topology/classRef/name",
            json!(class),
        )
    })
    .collect();
    let start = Instant::now();
    kubectl.accepts(&render(&clusters))?;

    for (name, bound) in [
        ("bomb", "more than 524288 values"),
        ("quadratic", "more than the work budget of 10000000"),
    ] {
        let blocked = condition(&wait_condition(
            kubectl,
            "cluster",
            "TopologyReconciled",
            name,
            "False",
        )?);
        let message = blocked["message"].as_str().unwrap_or_default();
        expect(
            blocked["reason"] == "ReconcileFailed"
                && message.contains(&format!("external patch \"{name}-patch\""))
                && message.contains(bound)
                && message.len() <= 32768,
            format!("{name}'s TopologyReconciled names the patch and the bound {bound:?}: {blocked}"),
        )?;
        eprintln!(
            "{name}: TopologyReconciled False after {:?}: {message}",
            start.elapsed()
        );
        let selector = format!("involvedObject.kind=Cluster,involvedObject.name={name}");
        let events = kubectl.ok(&["get", "events", "-n", "default", "--field-selector", &selector])?;
        eprintln!("{name}: events\n{events}");
    }
    wait_condition(kubectl, "cluster", "TopologyReconciled", "healthy", "True")?;
    eprintln!("healthy: TopologyReconciled True after {:?}", start.elapsed());

    // The healthy Cluster scales while the others keep failing (their answers are asked again).
    kubectl.ok(&[
        "patch",
        "cluster",
        "healthy",
        "-n",
        "default",
        "--type=json",
        "-p",
        r#"[{"op": "replace", "path": "/spec/topology/workers/machineDeployments/0/replicas", "value": 3}]"#,
    ])?;
    poll(
        "the healthy Cluster's MachineDeployment to scale",
        CONVERGED,
        || {
            let deployments = owned_by(kubectl, "healthy", "machinedeployment")?;
            deployments
                .iter()
                .any(|md| md["spec"]["replicas"] == 3)
                .then_some(())
                .ok_or_else(|| format!("{} MachineDeployments, none at 3 replicas", deployments.len()))
        },
    )?;
    eprintln!("healthy: scaled after {:?}", start.elapsed());

    // The server never restarted and its peak resident set stayed bounded.
    env.server().ensure_running()?;
    let peak = peak_rss_mib(pid_of(&env.run, "capi-topology")?)?;
    eprintln!("capi-topology peak resident set {peak:.0} MiB");
    expect(
        peak < PEAK_BOUND_MIB,
        format!("capi-topology's peak resident set under {PEAK_BOUND_MIB} MiB: {peak:.0} MiB"),
    )
}
