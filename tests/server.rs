//! The webhook server in-process on loopback: reviews over HTTP/1.1 and HTTP/2 with TLS, the body
//! limit, certificate rotation without a restart, probes, metrics, graceful shutdown, and every
//! bound on what a client may cost (in-flight cap, deadline, connection cap and timeouts).

mod common;

use std::net::SocketAddr;
use std::sync::atomic::Ordering;
use std::time::Duration;

use base64::Engine;
use capi_topology::api::convert::to_hub;
use capi_topology::server::ServerLimits;
use common::*;
use serde_json::{json, Value};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn answers_reviews_over_http1_and_http2() {
    let (running, ca) = start("protocols").await;
    for alpn in [b"http/1.1".as_slice(), b"h2".as_slice()] {
        let (_, status, body) = post(running.admission, &ca, alpn, MUTATE_CLUSTER, cluster_review()).await;
        assert_eq!(status, 200);
        let review: Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(review["response"]["uid"], "uid-1");
        assert_eq!(review["response"]["allowed"], true);
        assert_eq!(review["response"]["patchType"], "JSONPatch");
        let patch = base64::engine::general_purpose::STANDARD
            .decode(review["response"]["patch"].as_str().expect("a base64 patch"))
            .unwrap();
        let patch: Vec<Value> = serde_json::from_slice(&patch).unwrap();
        assert!(
            patch.iter().any(|op| op["path"] == "/spec/topology/variables"),
            "defaulted variables are patched in: {patch:?}"
        );
    }
}

/// The CRDs' conversion webhook: `POST /convert` answers a ConversionReview, converting every
/// object to the desired version, and refuses an oversized body as the admission routes do.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn converts_objects_for_the_api_server() {
    let (running, ca) = start("convert").await;
    let review = json!({
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "ConversionReview",
        "request": {"uid": "conv-1", "desiredAPIVersion": "addons.cluster.x-k8s.io/v1beta2",
            "objects": [{"apiVersion": "addons.cluster.x-k8s.io/v1beta1", "kind": "ClusterResourceSet",
                "metadata": {"name": "crs", "namespace": "default"},
                "spec": {"clusterSelector": {"matchLabels": {"cni": "calico"}},
                    "resources": [{"kind": "ConfigMap", "name": "calico"}]}}]}
    });
    let body = serde_json::to_vec(&review).unwrap();
    let (_, status, answer) = post(running.admission, &ca, b"h2", "/convert", body).await;
    assert_eq!(status, 200);
    let answer: Value = serde_json::from_slice(&answer).unwrap();
    assert_eq!(answer["kind"], "ConversionReview");
    assert_eq!(answer["response"]["uid"], "conv-1");
    assert_eq!(answer["response"]["result"]["status"], "Success");
    let converted = &answer["response"]["convertedObjects"][0];
    assert_eq!(converted["apiVersion"], "addons.cluster.x-k8s.io/v1beta2");
    assert_eq!(converted["spec"]["resources"][0]["name"], "calico");

    let unknown = json!({"request": {"uid": "conv-2", "desiredAPIVersion": "cluster.x-k8s.io/v1alpha3",
        "objects": [{"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "Cluster", "metadata": {"name": "c"}}]}});
    let (_, status, answer) = post(
        running.admission,
        &ca,
        b"http/1.1",
        "/convert",
        serde_json::to_vec(&unknown).unwrap(),
    )
    .await;
    assert_eq!(status, 200);
    let answer: Value = serde_json::from_slice(&answer).unwrap();
    assert_eq!(answer["response"]["result"]["status"], "Failure");
    assert!(answer["response"]["result"]["message"]
        .as_str()
        .unwrap_or_default()
        .contains("cluster.x-k8s.io/v1alpha3 is not served"));

    let huge = vec![b' '; ServerLimits::default().max_body_bytes + 1];
    let (_, status, _) = post(running.admission, &ca, b"h2", "/convert", huge).await;
    assert_eq!(status, 413);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bodies_over_the_limit_are_refused_before_decoding() {
    let (running, ca) = start("limit").await;
    let huge = vec![b' '; ServerLimits::default().max_body_bytes + 1];
    // Over HTTP/2 the early answer reaches the client however much of the body it sent.
    let (_, status, _) = post(running.admission, &ca, b"h2", MUTATE_CLUSTER, huge).await;
    assert_eq!(status, 413);
    let (_, status, body) = post(running.admission, &ca, b"http/1.1", MUTATE_CLUSTER, b"{".to_vec()).await;
    assert_eq!(status, 200, "a bad review is answered in the review");
    let review: Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(review["response"]["status"]["code"], 400);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rotated_certificate_is_served_from_the_next_connection() {
    let (running, first_ca) = start("rotation").await;
    let (before, ..) = post(
        running.admission,
        &first_ca,
        b"h2",
        MUTATE_CLUSTER,
        cluster_review(),
    )
    .await;
    let second_ca = write_certs(running.cert_dir.path());
    // Until the swap only the first CA verifies the server, after it only the second; every
    // connection meanwhile is answered by one of the two.
    for _ in 0..100 {
        tokio::time::sleep(Duration::from_millis(50)).await;
        if let Ok(tls) = connect(running.admission, &second_ca, b"h2").await {
            let (after, status, _) = exchange(tls, b"h2", MUTATE_CLUSTER, cluster_review()).await;
            assert_eq!(status, 200);
            assert_ne!(after, before);
            return;
        }
        if connect(running.admission, &first_ca, b"h2").await.is_err() {
            // The swap may land between the two handshakes; then the second CA verifies now.
            let tls = connect(running.admission, &second_ca, b"h2").await;
            assert!(tls.is_ok(), "neither certificate was served: {tls:?}");
        }
    }
    panic!("the new certificate was never served");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn probes_follow_readiness_and_metrics_count_reviews() {
    let (running, ca) = start("probes").await;
    assert_eq!(get_probe(running.probes, "/healthz").await.0, 200);
    assert_eq!(get_probe(running.probes, "/readyz").await.0, 503);
    running.ready.store(true, Ordering::SeqCst);
    assert_eq!(get_probe(running.probes, "/readyz").await.0, 200);
    post(
        running.admission,
        &ca,
        b"http/1.1",
        MUTATE_CLUSTER,
        cluster_review(),
    )
    .await;
    let (status, metrics) = get_probe(running.probes, "/metrics").await;
    assert_eq!(status, 200);
    let line =
        format!(r#"capi_topology_webhook_requests_total{{webhook="{MUTATE_CLUSTER}",verdict="allowed"}} 1"#);
    assert!(metrics.contains(&line), "{metrics}");
    assert!(metrics.contains("capi_topology_certificate_expiration_timestamp_seconds "));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutdown_stops_serving_and_returns() {
    let (mut running, _) = start("shutdown").await;
    running.shutdown.cancel();
    let task = running.task.take().unwrap();
    let result = tokio::time::timeout(Duration::from_secs(10), task)
        .await
        .expect("serve returns after shutdown")
        .unwrap();
    result.expect("a clean stop");
    assert!(tokio::net::TcpStream::connect(running.admission).await.is_err());
}

/// The v1beta2 (hub) mutating webhook of Cluster.
const MUTATE_CLUSTER_HUB: &str = "/mutate-cluster-x-k8s-io-v1beta2-cluster";

/// A Cluster CREATE review that takes a while to evaluate (30,000 MachineDeployments), on the
/// mutating path.
fn heavy_review() -> Vec<u8> {
    let mut review: Value = serde_json::from_slice(&cluster_review()).unwrap();
    review["request"]["object"]["spec"]["topology"]["workers"]["machineDeployments"] = json!((0..30_000)
        .map(|i| json!({"class": "default-worker", "name": format!("md-{i}")}))
        .collect::<Vec<_>>());
    serde_json::to_vec(&review).unwrap()
}

/// The slowest of `rounds` `/healthz` answers, one every 20 ms.
async fn slowest_healthz(probes: SocketAddr, rounds: usize) -> Duration {
    let mut slowest = Duration::ZERO;
    for _ in 0..rounds {
        let started = std::time::Instant::now();
        let (status, _) = get_probe(probes, "/healthz").await;
        assert_eq!(status, 200);
        slowest = slowest.max(started.elapsed());
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    slowest
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn probes_answer_at_once_while_heavy_reviews_run() {
    let (running, ca) = start("busy").await;
    let body = heavy_review();
    let heavy: Vec<_> = (0..6)
        .map(|_| {
            let (ca, body) = (ca.clone(), body.clone());
            let addr = running.admission;
            tokio::spawn(async move { post(addr, &ca, b"h2", MUTATE_CLUSTER, body).await.1 })
        })
        .collect();
    let slowest = slowest_healthz(running.probes, 15).await;
    for review in heavy {
        let status = review.await.unwrap();
        assert!(status == 200 || status == 429, "{status}");
    }
    // Not a timing target: a probe queued behind the heavy reviews would wait for seconds; one
    // answered beside them takes milliseconds, or a few hundred on a machine busy with builds.
    assert!(slowest < Duration::from_secs(1), "/healthz took {slowest:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn excess_reviews_wait_then_get_429_with_retry_after() {
    let limits = ServerLimits {
        max_in_flight: 1,
        queue_wait: Duration::from_millis(20),
        ..ServerLimits::default()
    };
    let (running, ca) = start_with("overload", limits).await;
    let body = heavy_review();
    let reviews: Vec<_> = (0..4)
        .map(|_| {
            let (ca, body) = (ca.clone(), body.clone());
            let addr = running.admission;
            tokio::spawn(async move { post(addr, &ca, b"http/1.1", MUTATE_CLUSTER, body).await.1 })
        })
        .collect();
    let mut statuses = Vec::new();
    for review in reviews {
        statuses.push(review.await.unwrap());
    }
    assert!(statuses.contains(&200), "{statuses:?}");
    assert!(statuses.contains(&429), "{statuses:?}");
    let (_, metrics) = get_probe(running.probes, "/metrics").await;
    assert!(
        metrics.contains(r#"capi_topology_rejections_total{reason="overloaded"}"#),
        "{metrics}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_evaluation_past_its_deadline_is_answered_with_the_reason() {
    let limits = ServerLimits {
        deadline: Duration::from_millis(30),
        ..ServerLimits::default()
    };
    let (running, ca) = start_with("deadline", limits).await;
    let (_, status, body) = post(running.admission, &ca, b"h2", MUTATE_CLUSTER, heavy_review()).await;
    assert_eq!(status, 200);
    let review: Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(review["response"]["uid"], "uid-1");
    assert_eq!(review["response"]["allowed"], false);
    assert_eq!(review["response"]["status"]["code"], 500);
    let message = review["response"]["status"]["message"].as_str().unwrap();
    assert!(
        message.contains("could not evaluate this request within"),
        "{message}"
    );
}

/// Reads from `stream` until it closes; how long that took, or `None` past `limit`.
async fn closed_within<S: tokio::io::AsyncRead + Unpin>(stream: &mut S, limit: Duration) -> Option<Duration> {
    use tokio::io::AsyncReadExt;
    let started = std::time::Instant::now();
    let mut buffer = [0_u8; 1024];
    loop {
        match tokio::time::timeout(limit.saturating_sub(started.elapsed()), stream.read(&mut buffer)).await {
            Ok(Ok(0) | Err(_)) => return Some(started.elapsed()),
            Ok(Ok(_)) => continue,
            Err(_) => return None,
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slow_headers_and_idle_connections_are_closed() {
    use tokio::io::AsyncWriteExt;
    let limits = ServerLimits {
        header_read_timeout: Duration::from_millis(300),
        idle_timeout: Duration::from_millis(600),
        ..ServerLimits::default()
    };
    let (running, ca) = start_with("slow", limits).await;
    // A slowloris client: half a request line, then nothing.
    let mut tls = connect(running.admission, &ca, b"http/1.1").await.unwrap();
    tls.write_all(b"POST /mutate-cluster-x-k8s-io-v1beta1-cluster HTTP/1.1\r\nHost: x\r\n")
        .await
        .unwrap();
    let closed = closed_within(&mut tls, Duration::from_secs(5)).await;
    assert!(
        closed.is_some(),
        "a client trickling headers keeps its connection"
    );
    // Idle connections, on both listeners.
    for addr in [running.admission, running.probes] {
        let mut tcp = tokio::net::TcpStream::connect(addr).await.unwrap();
        let closed = closed_within(&mut tcp, Duration::from_secs(5)).await;
        assert!(closed.is_some(), "an idle connection to {addr} stays open");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connections_past_the_cap_are_closed_at_once() {
    let limits = ServerLimits {
        max_connections: 2,
        ..ServerLimits::default()
    };
    let (running, ca) = start_with("cap", limits).await;
    // Held connections the server has surely accepted: TLS handshakes done on the admission
    // listener, a kept-alive HTTP exchange on the probes listener.
    let mut held_tls = Vec::new();
    for _ in 0..2 {
        held_tls.push(connect(running.admission, &ca, b"http/1.1").await.unwrap());
    }
    let mut extra = tokio::net::TcpStream::connect(running.admission).await.unwrap();
    let closed = closed_within(&mut extra, Duration::from_secs(3)).await;
    assert!(
        closed.is_some(),
        "a connection past the cap to the admission listener stays open"
    );
    drop(held_tls);
    let mut held_plain = Vec::new();
    for _ in 0..2 {
        held_plain.push(probe_kept_alive(running.probes).await);
    }
    let mut extra = tokio::net::TcpStream::connect(running.probes).await.unwrap();
    let closed = closed_within(&mut extra, Duration::from_secs(3)).await;
    assert!(
        closed.is_some(),
        "a connection past the cap to the probes listener stays open"
    );
    drop(held_plain);
    // Slots are given back: the server answers again once the held connections are gone.
    tokio::time::sleep(Duration::from_millis(100)).await;
    let (_, status, _) = post(running.admission, &ca, b"h2", MUTATE_CLUSTER, cluster_review()).await;
    assert_eq!(status, 200);
}

/// A connection to the probes listener that has had one `/healthz` answered and stays open.
async fn probe_kept_alive(addr: SocketAddr) -> tokio::net::TcpStream {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut tcp = tokio::net::TcpStream::connect(addr).await.unwrap();
    tcp.write_all(b"GET /healthz HTTP/1.1\r\nHost: probes\r\n\r\n")
        .await
        .unwrap();
    let mut answer = Vec::new();
    let mut buffer = [0u8; 512];
    while !answer.windows(4).any(|w| w == b"\r\n\r\n") {
        let read = tcp.read(&mut buffer).await.unwrap();
        assert!(read > 0, "the probes listener closed a connection within the cap");
        answer.extend_from_slice(&buffer[..read]);
    }
    tcp
}

/// [`heavy_review`] as the API server sends it for a Cluster stored as v1beta2: the object in the
/// hub version, on the v1beta2 mutating path, so that its cost is the evaluation alone (no
/// conversion of 30,000 MachineDeployments there and back).
fn heavy_hub_review() -> Vec<u8> {
    let mut review: Value = serde_json::from_slice(&heavy_review()).unwrap();
    let object = review["request"]["object"].take();
    review["request"]["object"] = to_hub(object).unwrap();
    review["request"]["kind"]["version"] = json!("v1beta2");
    review["request"]["resource"]["version"] = json!("v1beta2");
    serde_json::to_vec(&review).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn readyz_answers_503_while_in_flight_reviews_drain() {
    let (mut running, ca) = start("drain").await;
    running.ready.store(true, Ordering::SeqCst);
    assert_eq!(get_probe(running.probes, "/readyz").await.0, 200);
    let addr = running.admission;
    let body = heavy_hub_review();
    // Shut down once a review is being evaluated; one answered before it was seen in flight (a
    // fast machine) proves nothing, so another is sent.
    let mut in_flight = None;
    for _ in 0..20 {
        let review = tokio::spawn({
            let (ca, body) = (ca.clone(), body.clone());
            async move { post(addr, &ca, b"h2", MUTATE_CLUSTER_HUB, body).await.1 }
        });
        let mut seen = false;
        while !seen && !review.is_finished() {
            let (_, metrics) = get_probe(running.probes, "/metrics").await;
            seen = metrics.contains("capi_topology_webhook_in_flight 1");
            if !seen {
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
        }
        if seen {
            in_flight = Some(review);
            break;
        }
        assert_eq!(review.await.unwrap(), 200);
    }
    let in_flight = in_flight.expect("a review seen in flight");
    running.shutdown.cancel();
    let (status, _) = get_probe(running.probes, "/readyz").await;
    assert_eq!(status, 503, "/readyz during the drain");
    assert_eq!(in_flight.await.unwrap(), 200, "the review in flight is answered");
    let task = running.task.take().unwrap();
    tokio::time::timeout(Duration::from_secs(10), task)
        .await
        .expect("serve returns after the drain")
        .unwrap()
        .expect("a clean stop");
}
