//! Our webhook server away for 30 s while GitOps-style writes go on (#34): a `kubectl apply` loop
//! rewrites a Cluster's worker replicas; `capi-topology serve` (webhooks and controllers) is
//! killed with SIGKILL and started again 30 s later. While it is away every change is refused by
//! the API server naming our webhook (failurePolicy: Fail) and none lands (an apply that changes
//! nothing sends no write); once it is back the
//! loop's writes succeed again and the last one is carried out. Slow: run with
//! `cargo test --test e2e webhook_away -- --ignored --nocapture`.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::json;

use crate::class_status;
use crate::controllers::{owned_by, provision_control_plane, CONVERGED};
use crate::env::Env;
use crate::kubectl::Kubectl;
use crate::manifests::{quickstart_object, render, with};
use crate::process::poll;
use crate::runtime_extensions::expect;

const AWAY: Duration = Duration::from_secs(30);
/// The first webhook the API server calls for a Cluster.
const REFUSED_BY: &str = "failed calling webhook \"default.cluster.cluster.x-k8s.io\"";

/// One `kubectl apply` of the loop: when it started and ended, the replicas it asked for,
/// kubectl's complaint when it was refused, and whether kubectl found nothing to change (then it
/// sends no write, and no webhook is called).
#[derive(Debug, Clone)]
pub(crate) struct Write {
    pub(crate) started: Instant,
    pub(crate) ended: Instant,
    pub(crate) replicas: u32,
    pub(crate) refused: Option<String>,
    pub(crate) unchanged: bool,
}

/// Applies Cluster `default/dev` with replicas 1, 2, 3, 1... about once a second until `stop`.
pub(crate) fn apply_loop(kubectl: Kubectl, stop: Arc<AtomicBool>, writes: Arc<Mutex<Vec<Write>>>) {
    let mut round: u32 = 0;
    while !stop.load(Ordering::Relaxed) {
        round += 1;
        let replicas = round % 3 + 1;
        let cluster = with(
            quickstart_object("10-cluster-dev.yaml", "Cluster"),
            "/spec/topology/workers/machineDeployments/0/replicas",
            json!(replicas),
        );
        let started = Instant::now();
        let (refused, unchanged) = match kubectl.apply(&render(&[cluster]), &[]) {
            Ok(out) if out.success => (None, out.stdout.contains(" unchanged")),
            Ok(out) => (Some(out.stderr), false),
            Err(e) => (Some(e), false),
        };
        let ended = Instant::now();
        let write = Write {
            started,
            ended,
            replicas,
            refused,
            unchanged,
        };
        writes.lock().expect("the writes").push(write);
        std::thread::sleep(Duration::from_millis(800));
    }
}

#[test]
#[ignore = "slow: the webhook server is away for 30 s"]
fn webhook_away_refuses_writes_clearly_and_they_succeed_on_retry() {
    let mut env = Env::with_webhooks("faults-webhook");
    if let Err(e) = scenario(&mut env) {
        panic!("{e}\n{}", env.logs());
    }
}

fn scenario(env: &mut Env) -> Result<(), String> {
    let kubectl = env.kubectl.clone();
    class_status::install_quickstart(&kubectl)?;
    kubectl.accepts(&render(&[quickstart_object("10-cluster-dev.yaml", "Cluster")]))?;
    provision_control_plane(&kubectl, "dev", "v1.31.2")?;
    let (stop, writes) = (Arc::new(AtomicBool::new(false)), Arc::new(Mutex::new(Vec::new())));
    let looping = {
        let (kubectl, stop, writes) = (kubectl.clone(), stop.clone(), writes.clone());
        std::thread::spawn(move || apply_loop(kubectl, stop, writes))
    };
    std::thread::sleep(Duration::from_secs(5));
    let killed = Instant::now();
    env.server().kill();
    std::thread::sleep(AWAY);
    env.server().restart()?;
    let back = Instant::now();
    let succeeded_again = poll("a write to succeed again", CONVERGED, || {
        let writes = writes.lock().expect("the writes");
        writes
            .iter()
            .find(|w| w.started >= back && w.refused.is_none())
            .map(|w| w.ended - back)
            .ok_or_else(|| format!("{} writes so far", writes.len()))
    })?;
    std::thread::sleep(Duration::from_secs(3));
    stop.store(true, Ordering::Relaxed);
    looping.join().map_err(|_| "the apply loop panicked".to_owned())?;
    let writes = writes.lock().expect("the writes").clone();
    check(&kubectl, &writes, killed, back, succeeded_again)
}

/// Checks the writes of the loop: refused, naming our webhook, while the server was away; the
/// last one carried out.
fn check(
    kubectl: &Kubectl,
    writes: &[Write],
    killed: Instant,
    back: Instant,
    succeeded_again: Duration,
) -> Result<(), String> {
    let away: Vec<&Write> = writes
        .iter()
        .filter(|w| w.started > killed && w.ended < back)
        .collect();
    let unclear: Vec<&Write> = away
        .iter()
        .copied()
        .filter(|w| !w.unchanged && !w.refused.as_deref().is_some_and(|e| e.contains(REFUSED_BY)))
        .collect();
    let refused = away.iter().filter(|w| w.refused.is_some()).count();
    expect(
        refused > 0 && unclear.is_empty(),
        format!("every change while away refused naming our webhook: {unclear:?}"),
    )?;
    let last = writes
        .iter()
        .rev()
        .find(|w| w.refused.is_none())
        .ok_or("no write succeeded")?
        .replicas;
    let carried_out = poll("the last write carried out", CONVERGED, || {
        let mds = owned_by(kubectl, "dev", "machinedeployment")?;
        let replicas = mds.first().map(|md| md["spec"]["replicas"].clone());
        (replicas == Some(json!(last)))
            .then(|| back.elapsed())
            .ok_or(format!("replicas {replicas:?}, last applied {last}"))
    })?;
    eprintln!(
        "faults: webhook server away {AWAY:?}: {refused} writes refused meanwhile, each naming our \
         webhook (e.g. {:?}), {} found nothing to change; a write succeeded again \
         {succeeded_again:?} after the server was back; the last write (replicas {last}) carried \
         out {carried_out:?} after; {} writes in all",
        away.iter()
            .find_map(|w| w.refused.as_deref())
            .and_then(|e| e.lines().find(|line| line.contains(REFUSED_BY)))
            .unwrap_or_default(),
        away.len() - refused,
        writes.len(),
    );
    Ok(())
}
