//! Hostile Runtime Extension answers (issue 26), served over TLS on a loopback port and planned
//! through the real client, as the topology controller plans: a copy bomb, a quadratic answer, an
//! answer of millions of tiny values, a 20 MB failure message and error body. Each must end in an
//! error saying why, within a generous time and resident-memory bound, never in an abort.

use std::net::{IpAddr, Ipv4Addr, TcpListener};
use std::time::{Duration, Instant};

use axum::body::Bytes;
use axum::http::StatusCode;
use axum::routing::post;
use axum::{Json, Router};
use axum_server::tls_rustls::{RustlsAcceptor, RustlsConfig};
use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use capi_topology::api::runtime::{ClientConfig, ExtensionConfig, ExtensionConfigSpec};
use capi_topology::api::ObjectMeta;
use capi_topology::runtime::{NamespaceLabels, RuntimeExtensions};
use capi_topology::server::dev_certs::generate;
use capi_topology::topology::{plan, Current};
use serde_json::{json, Value};

use crate::local_extension::fixture;
use crate::local_extension::handlers::{discovery, GENERATE_PATCHES, VALIDATE_TOPOLOGY};
use crate::local_extension::server::{tls_config, HOOKS_PATH};

/// A safety bound on one case's time: each ends in well under a second on a quiet machine.
const TIME_BOUND: Duration = Duration::from_secs(20);
/// A safety bound on the process's peak resident memory (the copy bomb took 6 GiB before).
const PEAK_BOUND_KIB: u64 = 1024 * 1024;

/// How the hostile server answers a GeneratePatches request: a status and a body.
type Answer = fn(&Value) -> (StatusCode, Vec<u8>);

/// An extension server answering Discovery as the example does and GeneratePatches with `answer`.
struct HostileExtension {
    config: ExtensionConfig,
    runtime: Option<tokio::runtime::Runtime>,
}

impl HostileExtension {
    fn start(answer: Answer) -> Self {
        let certificates =
            generate(&[], &[IpAddr::V4(Ipv4Addr::LOCALHOST)], 1).expect("development certificates");
        let tls = tls_config(certificates.cert_pem.as_bytes(), certificates.key_pem.as_bytes())
            .expect("the serving certificate loads");
        let listener = TcpListener::bind("127.0.0.1:0").expect("a loopback port");
        let addr = listener.local_addr().expect("its address");
        listener.set_nonblocking(true).expect("a non-blocking listener");
        let router = Router::new()
            .route(
                &format!("{HOOKS_PATH}/discovery"),
                post(|| async { Json(discovery()) }),
            )
            .route(
                &format!("{HOOKS_PATH}/generatepatches/{GENERATE_PATCHES}"),
                post(move |body: Bytes| async move {
                    let request: Value = serde_json::from_slice(&body).unwrap_or_default();
                    answer(&request)
                }),
            )
            .route(
                &format!("{HOOKS_PATH}/validatetopology/{VALIDATE_TOPOLOGY}"),
                post(|| async { Json(json!({"status": "Success"})) }),
            );
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .expect("a runtime");
        runtime.spawn(async move {
            let server = axum_server::from_tcp(listener).expect("a server");
            server
                .acceptor(RustlsAcceptor::new(RustlsConfig::from_config(tls)))
                .serve(router.into_make_service())
                .await
        });
        let config = ExtensionConfig {
            metadata: ObjectMeta {
                name: Some("ext".to_owned()),
                ..ObjectMeta::default()
            },
            spec: ExtensionConfigSpec {
                client_config: ClientConfig {
                    url: Some(format!("https://{addr}")),
                    ca_bundle: Some(STANDARD.encode(&certificates.ca_pem)),
                    ..ClientConfig::default()
                },
                ..ExtensionConfigSpec::default()
            },
            ..ExtensionConfig::default()
        };
        Self {
            config,
            runtime: Some(runtime),
        }
    }
}

impl Drop for HostileExtension {
    fn drop(&mut self) {
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_background();
        }
    }
}

/// A Success answer patching the first `templates` items of `request` with the JSON patch
/// `operations`.
fn patch_items(request: &Value, operations: &Value, templates: usize) -> (StatusCode, Vec<u8>) {
    let patch = STANDARD.encode(serde_json::to_vec(operations).expect("a patch"));
    let items: Vec<Value> = request["items"]
        .as_array()
        .into_iter()
        .flatten()
        .take(templates)
        .map(|item| json!({"uid": item["uid"], "patchType": "JSONPatch", "patch": patch}))
        .collect();
    let answer = json!({"apiVersion": "hooks.runtime.cluster.x-k8s.io/v1alpha1",
                        "kind": "GeneratePatchesResponse", "status": "Success", "items": items});
    (StatusCode::OK, serde_json::to_vec(&answer).expect("an answer"))
}

/// Issue 26: `add a [0,0]`, then 30 copies of `a` into itself: each doubles the template.
fn copy_bomb(request: &Value) -> (StatusCode, Vec<u8>) {
    let mut operations = vec![json!({"op": "add", "path": "/spec/template/spec/a", "value": [0, 0]})];
    operations.extend(
        (0..30).map(
            |_| json!({"op": "copy", "from": "/spec/template/spec/a", "path": "/spec/template/spec/a/0"}),
        ),
    );
    patch_items(request, &Value::Array(operations), usize::MAX)
}

/// Issue 26: `count` inserts at the front of one array of the first template, in one patch.
fn front_inserts(request: &Value, count: usize) -> (StatusCode, Vec<u8>) {
    let mut operations = vec![json!({"op": "add", "path": "/spec/template/spec/a", "value": []})];
    operations
        .extend((1..count).map(|_| json!({"op": "add", "path": "/spec/template/spec/a/0", "value": 0})));
    patch_items(request, &Value::Array(operations), 1)
}

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

/// Resets the process's peak resident set (Linux `clear_refs`); false where not possible.
fn reset_peak() -> bool {
    std::fs::write("/proc/self/clear_refs", "5").is_ok()
}

/// The process's peak resident set (`VmHWM`), when the platform reports it.
fn peak_rss_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// Plans the fixture against an extension answering `answer`: the plan must fail, within the
/// bounds, with an error containing every one of `expected`, and no longer than `longest`.
fn refused(answer: Answer, expected: &[&str], longest: usize) {
    let extension = HostileExtension::start(answer);
    let extensions = RuntimeExtensions::new(vec![extension.config.clone()], NamespaceLabels::new());
    let (blueprint, cluster) = fixture();
    let measured = reset_peak();
    let start = Instant::now();
    let err = plan(&blueprint, &cluster, &Current::default(), &extensions)
        .expect_err("the answer is refused")
        .to_string();
    let took = start.elapsed();
    assert!(took < TIME_BOUND, "took {took:?}: {err}");
    for text in expected {
        assert!(err.contains(text), "{text:?} not in {err}");
    }
    assert!(err.len() <= longest, "an error of {} bytes", err.len());
    if let (true, Some(peak)) = (measured, peak_rss_kib()) {
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
