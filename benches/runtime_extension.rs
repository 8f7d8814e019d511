//! GeneratePatches round trips through our Runtime Extension client to the example extension
//! (examples/extension) served in-process over loopback TLS, for the topology of
//! tests/fixtures/runtime/extension-10md.yaml (10 MachineDeployments: 23 templates per request).
//!
//! Prints percentiles of: a whole settled resync plan, with the number of calls the extension
//! saw during the resyncs (the target is none); a call the cache cannot answer (each request
//! differs by a setting the extension ignores); a call it answers.
//!
//! `cargo bench --bench runtime_extension`

#[path = "../tests/local_extension/mod.rs"]
mod local_extension;

use std::cell::RefCell;
use std::time::{Duration, Instant};

use capi_topology::api::runtime::{
    GeneratePatchesRequest, GeneratePatchesResponse, ValidateTopologyRequest, ValidateTopologyResponse,
};
use capi_topology::patches::external::ExternalPatches;
use capi_topology::runtime::{NamespaceLabels, RuntimeExtensions};
use capi_topology::topology::{plan, Current};
use local_extension::{fixture, LocalExtension};

const WARM_UP: usize = 100;
const ROUNDS: usize = 2_000;
const RESYNCS: usize = 500;
/// The round trip target of issue #12.
const TARGET_P99: Duration = Duration::from_millis(2);

/// Passes calls on, keeping the last GeneratePatches request: the one the engine builds.
struct Recording<'a> {
    inner: &'a RuntimeExtensions,
    generate: RefCell<Option<GeneratePatchesRequest>>,
}

impl ExternalPatches for Recording<'_> {
    fn generate(
        &self,
        extension: &str,
        namespace: &str,
        request: &GeneratePatchesRequest,
    ) -> Result<GeneratePatchesResponse, String> {
        self.generate.replace(Some(request.clone()));
        self.inner.generate(extension, namespace, request)
    }

    fn validate(
        &self,
        extension: &str,
        namespace: &str,
        request: &ValidateTopologyRequest,
    ) -> Result<ValidateTopologyResponse, String> {
        self.inner.validate(extension, namespace, request)
    }
}

/// p50, p90, p99 and max of `samples`, in milliseconds.
fn report(what: &str, samples: &mut [Duration]) -> Duration {
    samples.sort_unstable();
    let at = |q: f64| {
        // The index of a quantile of a non-empty sample.
        #[allow(
            clippy::cast_possible_truncation,
            clippy::cast_sign_loss,
            clippy::cast_precision_loss
        )]
        let index = ((samples.len() - 1) as f64 * q).round() as usize;
        samples[index]
    };
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    let p99 = at(0.99);
    println!(
        "{what:<44} n={:<5} p50 {:>7.3} ms  p90 {:>7.3} ms  p99 {:>7.3} ms  max {:>7.3} ms",
        samples.len(),
        ms(at(0.5)),
        ms(at(0.9)),
        ms(p99),
        ms(samples[samples.len() - 1])
    );
    p99
}

fn main() {
    let extension = LocalExtension::start();
    let extensions = RuntimeExtensions::new(vec![extension.config("ext")], NamespaceLabels::new());
    let (blueprint, cluster) = fixture();
    let recording = Recording {
        inner: &extensions,
        generate: RefCell::new(None),
    };
    let first = plan(&blueprint, &cluster, &Current::default(), &recording).expect("the first plan");
    let request = recording
        .generate
        .take()
        .expect("the class's external patch was called");
    println!(
        "GeneratePatches request: {} templates, {} bytes",
        request.items.len(),
        serde_json::to_vec(&request).map_or(0, |bytes| bytes.len())
    );

    // The first reconcile after creation sends the names of the clones just created (new in the
    // request); from then on the topology is settled.
    let created = Current {
        objects: first.objects.clone(),
    };
    let current = Current {
        objects: plan(&blueprint, &cluster, &created, &extensions)
            .expect("the first resync")
            .objects,
    };
    let before = extension.calls();
    let mut resyncs: Vec<Duration> = (0..RESYNCS)
        .map(|_| {
            let start = Instant::now();
            let again = plan(&blueprint, &cluster, &current, &extensions).expect("the resync");
            let elapsed = start.elapsed();
            assert_eq!(again.objects.len(), first.objects.len());
            elapsed
        })
        .collect();
    report("settled resync: whole plan, 10 MDs", &mut resyncs);
    let calls = extension.calls() - before;
    println!("extension calls during {RESYNCS} settled resyncs: {calls}");

    let call = |n: usize| {
        let mut varied = request.clone();
        varied.settings.insert("round".to_owned(), n.to_string());
        let start = Instant::now();
        let answer = extensions.generate("generate-patches.ext", "default", &varied);
        let elapsed = start.elapsed();
        assert!(answer.is_ok(), "{answer:?}");
        elapsed
    };
    for n in 0..WARM_UP {
        call(n);
    }
    let mut uncached: Vec<Duration> = (WARM_UP..WARM_UP + ROUNDS).map(call).collect();
    let p99 = report("GeneratePatches round trip (not cached)", &mut uncached);

    // The rounds above pushed the plan's own answer out of the cache: one call puts it back.
    let _ = extensions.generate("generate-patches.ext", "default", &request);
    let mut cached: Vec<Duration> = (0..ROUNDS)
        .map(|_| {
            let start = Instant::now();
            let answer = extensions.generate("generate-patches.ext", "default", &request);
            let elapsed = start.elapsed();
            assert!(answer.is_ok(), "{answer:?}");
            elapsed
        })
        .collect();
    report("GeneratePatches answered from the cache", &mut cached);

    println!(
        "target: p99 round trip under {TARGET_P99:?}: {}; zero calls on a settled resync: {}",
        if p99 < TARGET_P99 { "met" } else { "MISSED" },
        if calls == 0 { "met" } else { "MISSED" }
    );
}
