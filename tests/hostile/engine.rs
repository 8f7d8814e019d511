//! Every catalogue case through the admission entry point in process: the answer it must get,
//! and within the bound, whatever the input.

use std::time::{Duration, Instant};

use capi_topology::admission;

use super::inputs::{catalogue, store, Expect};

/// The most one hostile request may take in process: half the API server's 10 s webhook
/// timeout, in an unoptimised test build on a busy machine (release builds are about ten times
/// faster; BENCHMARKS.md has their figures).
const BOUND: Duration = Duration::from_secs(5);

#[test]
fn every_hostile_input_gets_its_answer_in_time() {
    let store = store();
    let mut failures = Vec::new();
    for build in catalogue() {
        let case = build();
        let started = Instant::now();
        let review = admission::review(case.path, &case.body, &store);
        let took = started.elapsed();
        let response = review.response.expect("every review gets a response");
        let got = if response.allowed {
            Expect::Allowed
        } else {
            Expect::Refused(response.result.code)
        };
        let message = &response.result.message;
        if got != case.expect || !message.contains(case.message) {
            failures.push(format!(
                "{}: expected {:?} with {:?}, got {got:?}: {}",
                case.name,
                case.expect,
                case.message,
                capi_topology::field::truncate(message.clone(), 300)
            ));
        }
        if message.len() > 16 * 1024 {
            failures.push(format!(
                "{}: the answer echoes {} bytes",
                case.name,
                message.len()
            ));
        }
        if took > BOUND {
            failures.push(format!("{}: took {took:?}, bound {BOUND:?}", case.name));
        }
        eprintln!("{:<45} {got:?} in {took:?}", case.name);
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
