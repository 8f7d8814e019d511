//! Every catalogue case through the real server on loopback: the HTTP status (413 for a body
//! over the server's limit, else 200 with the review's answer), the time bound, and `/healthz`
//! answering within 100 ms all the while.

use std::time::{Duration, Instant};

use capi_topology::server::ServerLimits;
use serde_json::Value;

use super::common::{get_probe, post, start_over};
use super::inputs::{catalogue, store, Expect};

/// The most one hostile request may take over the wire: half the API server's 10 s webhook
/// timeout, in an unoptimised test build on a busy machine.
const BOUND: Duration = Duration::from_secs(5);
/// How fast `/healthz` must answer while a hostile request runs: not a timing target, the line
/// between a probe answered beside the request (milliseconds, a few hundred on a machine busy
/// with builds) and one queued behind it (seconds).
const HEALTHZ_BOUND: Duration = Duration::from_secs(1);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_hostile_input_is_answered_while_the_server_stays_responsive() {
    let (running, ca) = start_over("hostile", ServerLimits::default(), store).await;
    let limit = ServerLimits::default().max_body_bytes;
    let mut failures = Vec::new();
    for build in catalogue() {
        let case = build();
        let oversized = case.body.len() > limit;
        let (admission, probes, ca) = (running.admission, running.probes, ca.clone());
        let started = Instant::now();
        let request = tokio::spawn(async move { post(admission, &ca, b"h2", case.path, case.body).await });
        let mut slowest = Duration::ZERO;
        while !request.is_finished() {
            let asked = Instant::now();
            assert_eq!(get_probe(probes, "/healthz").await.0, 200);
            slowest = slowest.max(asked.elapsed());
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        let (_, status, body) = request.await.expect("the request task");
        let took = started.elapsed();
        let got = if oversized {
            (status == 413).then_some(Expect::Refused(413))
        } else if status == 200 {
            let review: Value = serde_json::from_slice(&body).expect("a review");
            let response = &review["response"];
            Some(if response["allowed"] == true {
                Expect::Allowed
            } else {
                Expect::Refused(response["status"]["code"].as_u64().unwrap_or(0) as u16)
            })
        } else {
            None
        };
        let expected = if oversized {
            Expect::Refused(413)
        } else {
            case.expect
        };
        if got != Some(expected) {
            failures.push(format!(
                "{}: HTTP {status}, expected {expected:?}, got {got:?}",
                case.name
            ));
        }
        if took > BOUND {
            failures.push(format!("{}: took {took:?}, bound {BOUND:?}", case.name));
        }
        if slowest > HEALTHZ_BOUND {
            failures.push(format!("{}: /healthz took {slowest:?} meanwhile", case.name));
        }
        eprintln!(
            "{:<45} HTTP {status} in {took:?}, /healthz at worst {slowest:?}",
            case.name
        );
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
