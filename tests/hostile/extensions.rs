//! Hostile Runtime Extension answers (issue 26), served over TLS on a loopback port and planned
//! through the real client, as the topology controller plans: a copy bomb, a quadratic answer, an
//! answer of millions of tiny values, a 20 MB failure message and error body. Each must end in an
//! error saying why, within a generous time and resident-memory bound, never in an abort.

use std::time::{Duration, Instant};

use axum::http::StatusCode;
use capi_topology::runtime::{NamespaceLabels, RuntimeExtensions};
use capi_topology::topology::{plan, Current};
use serde_json::{json, Value};

use crate::local_extension::fixture;
use crate::local_extension::hostile::{copy_bomb, front_inserts, Answer, HostileExtension};
use crate::peak::{measured, Peak};

/// A safety bound on one case's time: each ends in well under a second on a quiet machine.
const TIME_BOUND: Duration = Duration::from_secs(20);
/// A safety bound on the process's peak resident memory (the copy bomb took 6 GiB before).
const PEAK_BOUND_KIB: u64 = 1024 * 1024;

/// An answer of nine million tiny values beside a valid one, under the 20 MiB body limit.
fn tiny_values(_request: &Value) -> (StatusCode, Vec<u8>) {
    let junk = format!("[{}0]", "0,".repeat(9_000_000));
    let body = format!(r#"{{"status": "Success", "items": [], "junk": {junk}}}"#);
    (StatusCode::OK, body.into_bytes())
}

/// A Failure answer with a 20 MB message.
fn huge_failure(_request: &Value) -> (StatusCode, Vec<u8>) {
    let answer = json!({"status": "Failure", "message": "m".repeat(20_000_000)});
    (StatusCode::OK, serde_json::to_vec(&answer).expect("an answer"))
}

/// A Success answer whose status is a 15 MB string (serde quotes a wrongly typed string whole).
fn huge_wrong_value(_request: &Value) -> (StatusCode, Vec<u8>) {
    let answer = json!({"status": "s".repeat(15_000_000), "items": []});
    (StatusCode::OK, serde_json::to_vec(&answer).expect("an answer"))
}

/// A 500 with a 20 MB body.
fn huge_error_body(_request: &Value) -> (StatusCode, Vec<u8>) {
    (StatusCode::INTERNAL_SERVER_ERROR, vec![b'e'; 20_000_000])
}

/// Plans the fixture against an extension answering `answer`: the plan must fail, within the
/// bounds, with an error containing every one of `expected`, and no longer than `longest`.
fn refused(answer: Answer, expected: &[&str], longest: usize) {
    let extension = HostileExtension::start(answer);
    let extensions = RuntimeExtensions::new(vec![extension.config("ext")], NamespaceLabels::new());
    let (blueprint, cluster) = fixture();
    let start = Instant::now();
    let (planned, peak) = measured(|| plan(&blueprint, &cluster, &Current::default(), &extensions));
    let err = planned.expect_err("the answer is refused").to_string();
    let took = start.elapsed();
    assert!(took < TIME_BOUND, "took {took:?}: {err}");
    for text in expected {
        assert!(err.contains(text), "{text:?} not in {err}");
    }
    assert!(err.len() <= longest, "an error of {} bytes", err.len());
    if let Some(Peak { peak, .. }) = peak {
        assert!(peak < PEAK_BOUND_KIB, "peak resident memory {peak} KiB: {err}");
    }
}

#[test]
fn a_copy_bomb_is_refused_at_the_value_bound() {
    refused(
        copy_bomb,
        &[
            "external patch \"lb\"",
            "error applying json patch (RFC6902) to ",
            "operation 18 (copy /spec/template/spec/a/0): more than 524288 values",
        ],
        4096,
    );
}

#[test]
fn a_hundred_thousand_operations_are_refused() {
    refused(
        |request| front_inserts(request, 100_000),
        &[
            "error decoding json patch (RFC6902)",
            "more than 10000 operations in one patch",
        ],
        4096,
    );
}

#[test]
fn front_inserts_under_the_operation_limit_run_out_of_work_budget() {
    refused(
        |request| front_inserts(request, 10_000),
        &["more than the work budget of 10000000"],
        4096,
    );
}

#[test]
fn an_answer_of_millions_of_values_is_refused_before_it_is_decoded() {
    refused(
        tiny_values,
        &["failed to decode response: the answer has more than 1048576 values"],
        4096,
    );
}

#[test]
fn a_huge_failure_message_is_echoed_in_part() {
    refused(huge_failure, &["got failure response: mmm", "more bytes)"], 8192);
}

#[test]
fn a_huge_wrongly_typed_value_is_echoed_in_part() {
    refused(
        huge_wrong_value,
        &["failed to decode response: unknown variant `sss", "more bytes)"],
        8192,
    );
}

#[test]
fn a_huge_error_body_is_quoted_in_part() {
    refused(
        huge_error_body,
        &["got response with status code 500 != 200"],
        4096,
    );
}
