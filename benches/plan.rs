//! Topology engine hot path: the desired state of a Cluster with 10 MachineDeployments under a
//! class of 40 patches (a third Go templates), the class compiled once into a Blueprint.

use capi_topology::api::Cluster;
use capi_topology::patches::external::NoExternalPatches;
use capi_topology::store::{MemoryStore, ObjectSource};
use capi_topology::topology::{plan, Blueprint, Current};
use criterion::{criterion_group, criterion_main, Criterion};

/// The binary's allocator, so the figures are the CLI's.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

const FIXTURE: &str = include_str!("../tests/fixtures/plan/bench-10md-40patches.yaml");

fn desired_state(c: &mut Criterion) {
    let store = MemoryStore::from_yaml(FIXTURE).expect("fixture loads");
    let class = store
        .cluster_class("default", "bench")
        .expect("class stored")
        .class
        .clone();
    let cluster: Cluster = serde_json::from_value(
        (*store
            .get("cluster.x-k8s.io", "Cluster", "default", "bench")
            .expect("cluster stored"))
        .clone(),
    )
    .expect("cluster decodes");
    let blueprint = Blueprint::new(class, &store).expect("blueprint");
    let current = Current::default();
    c.bench_function("plan/10 MachineDeployments, 40 patches", |b| {
        b.iter(|| plan(&blueprint, &cluster, &current, &NoExternalPatches).expect("plan"));
    });
    c.bench_function("plan/blueprint compile", |b| {
        b.iter(|| Blueprint::new(blueprint.class.clone(), &store).expect("blueprint"));
    });
}

criterion_group!(benches, desired_state);
criterion_main!(benches);
