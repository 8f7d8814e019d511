//! The scale run split in shards (`SCALE_SHARDS=2`, issue #37.4): the first instance serves the
//! webhooks and reconciles the objects labelled `cluster.x-k8s.io/watch-filter=shard-0`, a
//! second one (controllers only) those labelled `shard-1`; the Clusters alternate, the class is
//! the first shard's to report on. Both processes are measured.

use serde_json::{json, Value};

use crate::class_status::wait_reconciled;
use crate::env::Env;
use crate::manifests::{quickstart_object, quickstart_templates, render};
use crate::proc_stats::pid_of;
use crate::process::RunDir;
use crate::webhook::WebhookServer;

const FILTER_LABEL: &str = "cluster.x-k8s.io/watch-filter";

/// How many instances split the fleet: `$SCALE_SHARDS`, 1 (the default) or 2.
pub fn shards() -> usize {
    match std::env::var("SCALE_SHARDS").as_deref() {
        Err(_) | Ok("" | "1") => 1,
        Ok("2") => 2,
        Ok(other) => panic!("SCALE_SHARDS: {other:?}: 1 or 2"),
    }
}

/// The `serve` arguments of the first instance (webhooks and the controllers of shard 0).
pub const FIRST: [&str; 4] = [
    "--watch-filter",
    "shard-0",
    "--leader-election-identity",
    "shard-0",
];

/// The second instance: controllers only, for shard 1; and its pid.
pub struct Second {
    /// The process, stopped when dropped.
    _server: WebhookServer,
    /// Its pid, for CPU and memory.
    pub pid: u32,
}

/// Starts the second instance beside `env`'s.
pub fn start_second(env: &Env, label: &str) -> Second {
    let run = RunDir::create(&format!("{label}-shard-1"));
    let args = [
        "--components",
        "controllers",
        "--watch-filter",
        "shard-1",
        "--leader-election-identity",
        "shard-1",
    ];
    let server = WebhookServer::start_with(&run, env.plane.kubeconfig(), &args)
        .unwrap_or_else(|e| panic!("{e}\n{}", env.logs()));
    let pid = pid_of(&run, "capi-topology").unwrap_or_else(|e| panic!("{e}"));
    Second { _server: server, pid }
}

/// The quickstart's templates and class, the class labelled for shard 0, reconciled.
pub fn install_quickstart(env: &Env) -> Result<Value, String> {
    env.kubectl.accepts(&render(&quickstart_templates()))?;
    let mut class = quickstart_object("00-clusterclass.yaml", "ClusterClass");
    class["metadata"]["labels"][FILTER_LABEL] = json!("shard-0");
    env.kubectl.accepts(&render(&[class]))?;
    wait_reconciled(&env.kubectl, "default", "quick-start")
}

/// Labels the Clusters for the shards in turn.
pub fn label(clusters: &mut [Value]) {
    for (index, cluster) in clusters.iter_mut().enumerate() {
        cluster["metadata"]["labels"][FILTER_LABEL] = json!(format!("shard-{}", index % 2));
    }
}
