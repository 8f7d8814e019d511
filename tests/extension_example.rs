//! The example Runtime Extension in Rust (examples/extension), served in-process, called through
//! our client as the topology controller calls it: the answers have the Runtime SDK's shape, a
//! settled topology plans again without calling it (answers are cached by request), and a server
//! that does not answer is not called again during its backoff window, with the same error.

mod local_extension;

use std::collections::BTreeMap;
use std::net::TcpListener;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use base64::Engine;
use capi_topology::api::runtime::{
    ClientConfig, DiscoverVariablesRequest, FailurePolicy, GeneratePatchesRequest, ResponseStatus,
};
use capi_topology::api::Cluster;
use capi_topology::metrics::{encode, Metrics};
use capi_topology::patches::external::ExternalPatches;
use capi_topology::runtime::{
    discover_config, ExtensionClient, NamespaceLabels, Registration, RuntimeExtensions, SharedRegistry,
};
use capi_topology::topology::{plan, Current, Plan};
use local_extension::handlers::PROXY_DROP_IN;
use local_extension::{fixture, LocalExtension};
use serde_json::{json, Value};

fn object<'a>(planned: &'a Plan, kind: &str) -> &'a Value {
    planned
        .objects
        .iter()
        .find(|o| o["kind"] == kind)
        .unwrap_or_else(|| panic!("a {kind} is planned"))
}

/// The Cluster with `lbImageRepository` set to `repository`.
fn with_repository(cluster: &Cluster, repository: &str) -> Cluster {
    let mut value = serde_json::to_value(cluster).unwrap();
    for variable in value["spec"]["topology"]["variables"].as_array_mut().unwrap() {
        if variable["name"] == "lbImageRepository" {
            variable["value"] = json!(repository);
        }
    }
    serde_json::from_value(value).unwrap()
}

#[test]
fn a_settled_topology_plans_again_without_calling_the_extension() {
    let extension = LocalExtension::start();
    let extensions = RuntimeExtensions::new(vec![extension.config("ext")], NamespaceLabels::new());
    let (blueprint, cluster) = fixture();

    let first = plan(&blueprint, &cluster, &Current::default(), &extensions).expect("the first plan");
    assert_eq!(
        extension.calls(),
        3,
        "Discovery, then one GeneratePatches and one ValidateTopology for the whole topology"
    );
    assert_eq!(
        object(&first, "DockerCluster")["spec"]["loadBalancer"]["imageRepository"],
        "registry.example.com"
    );
    let files = &object(&first, "KubeadmControlPlane")["spec"]["kubeadmConfigSpec"]["files"];
    assert_eq!(files[1]["path"], PROXY_DROP_IN, "{files}");

    let created = Current {
        objects: first.objects.clone(),
    };
    let named = plan(&blueprint, &cluster, &created, &extensions).expect("the first resync");
    assert_eq!(
        extension.calls(),
        5,
        "the first resync sends the names of the clones just created, as Cluster API sends them"
    );
    assert_eq!(named.objects, first.objects);
    let current = Current {
        objects: named.objects.clone(),
    };
    let again = plan(&blueprint, &cluster, &current, &extensions).expect("the resync");
    assert_eq!(extension.calls(), 5, "a settled resync calls no extension");
    assert_eq!(again.objects, first.objects);

    let changed = with_repository(&cluster, "mirror.example.com");
    let moved = plan(&blueprint, &changed, &current, &extensions).expect("the changed plan");
    assert_eq!(extension.calls(), 7, "a changed variable is a new request");
    assert_eq!(
        object(&moved, "DockerCluster")["spec"]["loadBalancer"]["imageRepository"],
        "mirror.example.com"
    );
}

#[test]
fn the_answers_have_the_runtime_sdk_shape() {
    let extension = LocalExtension::start();
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let client = ExtensionClient::new(&extension.config("ext").spec.client_config).unwrap();
    let call = |hook: &str, handler: Option<&str>, body: Value| {
        runtime
            .block_on(client.call::<Value>(hook, handler, body, Duration::from_secs(10)))
            .unwrap_or_else(|e| panic!("{hook}: {e}"))
    };

    let discovery = call("Discovery", None, json!({}));
    assert_eq!(discovery["status"], "Success");
    let handlers: Vec<(&str, &str)> = discovery["handlers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| {
            (
                h["name"].as_str().unwrap(),
                h["requestHook"]["hook"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        handlers,
        [
            ("generate-patches", "GeneratePatches"),
            ("validate-topology", "ValidateTopology"),
            ("discover-variables", "DiscoverVariables"),
        ]
    );

    let request = json!({"items": [{"uid": "docker", "holderReference": {}, "object": {
        "apiVersion": "infrastructure.cluster.x-k8s.io/v1beta1", "kind": "DockerClusterTemplate",
        "metadata": {"name": "t"}, "spec": {"template": {"spec": {}}}}}],
        "variables": [{"name": "lbImageRepository", "value": "registry.example.com"}]});
    let generated = call("GeneratePatches", Some("generate-patches"), request);
    assert_eq!(generated["status"], "Success", "{generated}");
    let item = &generated["items"][0];
    assert_eq!(
        (&item["uid"], &item["patchType"]),
        (&json!("docker"), &json!("JSONPatch"))
    );
    let patch = base64::engine::general_purpose::STANDARD
        .decode(item["patch"].as_str().expect("[]byte is base64 on the wire"))
        .unwrap();
    assert_eq!(
        serde_json::from_slice::<Value>(&patch).unwrap(),
        json!([{"op": "add", "path": "/spec/template/spec/loadBalancer",
                "value": {"imageRepository": "registry.example.com"}}])
    );

    let bad = call(
        "GeneratePatches",
        Some("generate-patches"),
        json!({"items": "not a list"}),
    );
    assert_eq!(bad["status"], "Failure");
    assert!(
        bad["message"]
            .as_str()
            .unwrap()
            .starts_with("error unmarshalling request"),
        "{bad}"
    );
}

#[test]
fn variables_are_discovered_through_the_shared_registry() {
    let extension = LocalExtension::start();
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let registry = SharedRegistry::default();
    let config = extension.config("ext");
    registry.set("ext", runtime.block_on(discover_config(&config)));
    let names: Vec<String> = registry
        .registrations("ext")
        .unwrap()
        .into_iter()
        .map(|r| r.name)
        .collect();
    assert_eq!(
        names,
        [
            "discover-variables.ext",
            "generate-patches.ext",
            "validate-topology.ext"
        ]
    );
    let extensions =
        RuntimeExtensions::shared(registry, runtime.handle().clone(), Arc::new(|_: &str| None), None);
    let answer = runtime
        .block_on(extensions.discover_variables(
            "discover-variables.ext",
            "default",
            &DiscoverVariablesRequest::default(),
        ))
        .unwrap();
    assert_eq!(answer.status, ResponseStatus::Success);
    let names: Vec<&str> = answer.variables.iter().map(|v| v.name.as_str()).collect();
    assert_eq!(names, ["lbImageRepository", "http-proxy"]);
    let wrong = runtime.block_on(extensions.discover_variables(
        "generate-patches.ext",
        "default",
        &DiscoverVariablesRequest::default(),
    ));
    assert_eq!(
        wrong.unwrap_err(),
        "failed to call extension handler \"generate-patches.ext\": handler does not match GroupHook \"hooks.runtime.cluster.x-k8s.io/DiscoverVariables\""
    );
}

#[test]
fn calls_and_cache_hits_are_counted_per_handler() {
    let extension = LocalExtension::start();
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let registry = SharedRegistry::default();
    registry.set("ext", runtime.block_on(discover_config(&extension.config("ext"))));
    let mut metrics_registry = prometheus_client::registry::Registry::default();
    let metrics = Metrics::register(&mut metrics_registry);
    let extensions = RuntimeExtensions::shared(
        registry,
        runtime.handle().clone(),
        Arc::new(|_: &str| None),
        Some(metrics),
    );
    let (blueprint, cluster) = fixture();
    let first = plan(&blueprint, &cluster, &Current::default(), &extensions).unwrap();
    // Once created, every plan sends the same requests (the clones' names included).
    let current = Current {
        objects: first.objects,
    };
    for _ in 0..3 {
        plan(&blueprint, &cluster, &current, &extensions).unwrap();
    }
    let text = encode(&metrics_registry).unwrap();
    for line in [
        r#"capi_topology_extension_calls_total{handler="generate-patches.ext"} 2"#,
        r#"capi_topology_extension_calls_total{handler="validate-topology.ext"} 2"#,
        r#"capi_topology_extension_cache_hits_total{handler="generate-patches.ext"} 2"#,
        r#"capi_topology_extension_cache_hits_total{handler="validate-topology.ext"} 2"#,
        r#"capi_topology_extension_call_duration_seconds_count{handler="generate-patches.ext"} 2"#,
    ] {
        assert!(text.contains(line), "missing {line} in\n{text}");
    }
    assert!(
        !text.contains("capi_topology_extension_errors_total{"),
        "no call failed:\n{text}"
    );
}

/// A server that accepts connections and closes them at once, counting them.
fn slamming_door() -> (std::net::SocketAddr, Arc<AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let accepted = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&accepted);
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            counted.fetch_add(1, Ordering::SeqCst);
            drop(stream);
        }
    });
    (addr, accepted)
}

#[test]
fn a_server_that_does_not_answer_is_not_called_again_during_its_backoff() {
    let (addr, accepted) = slamming_door();
    let certificates =
        capi_topology::server::dev_certs::generate(&[], &[std::net::IpAddr::from([127, 0, 0, 1])], 1)
            .unwrap();
    let client = Arc::new(
        ExtensionClient::new(&ClientConfig {
            url: Some(format!("https://{addr}")),
            ca_bundle: Some(base64::engine::general_purpose::STANDARD.encode(&certificates.ca_pem)),
            ..ClientConfig::default()
        })
        .unwrap(),
    );
    let registration = |handler: &str, failure_policy| Registration {
        name: format!("{handler}.down"),
        config: "down".to_owned(),
        handler: handler.to_owned(),
        hook: "GeneratePatches".to_owned(),
        timeout: Duration::from_secs(10),
        failure_policy,
        settings: BTreeMap::new(),
        namespace_selector: Arc::default(),
        client: Arc::clone(&client),
    };
    let registry = SharedRegistry::default();
    registry.set(
        "down",
        Ok(vec![
            registration("strict", FailurePolicy::Fail),
            registration("lenient", FailurePolicy::Ignore),
        ]),
    );
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let extensions =
        RuntimeExtensions::shared(registry, runtime.handle().clone(), Arc::new(|_: &str| None), None);
    let request = GeneratePatchesRequest::default();

    let start = Instant::now();
    let first = extensions
        .generate("strict.down", "default", &request)
        .unwrap_err();
    assert!(
        first.starts_with(&format!(
            "failed to call extension handler \"strict.down\": http call failed: Post \"https://{addr}/"
        )),
        "{first}"
    );
    let connections = accepted.load(Ordering::SeqCst);
    assert!(connections >= 1, "the first call reached the server");

    let again = extensions
        .generate("strict.down", "default", &request)
        .unwrap_err();
    let ignored = extensions
        .generate("lenient.down", "default", &request)
        .expect("failurePolicy Ignore passes");
    assert!(ignored.items.is_empty());
    // The window is a second long: only a machine stalled past it would have called again.
    if start.elapsed() < Duration::from_secs(1) {
        assert_eq!(again, first, "the same error, word for word");
        assert_eq!(
            accepted.load(Ordering::SeqCst),
            connections,
            "no call reached the server during the window"
        );
    }
}
