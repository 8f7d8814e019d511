//! The test Runtime Extension (tests/e2e/extension, built with Cluster API's own Runtime SDK)
//! answers our hook wire types over TLS: discovery lists its three handlers, GeneratePatches
//! patches the templates it knows, ValidateTopology judges the result, and DiscoverVariables
//! declares an `http-proxy` whose schema conflicts with an inline string one. Every answer is
//! checked as raw JSON (the shape Cluster API sends) and decoded into our types.
//!
//! Needs Go: `tests/e2e/build-extension.sh` builds the extension once per machine from the Go
//! module proxy (a few minutes the first time) and reuses it after.

#[path = "common/extension.rs"]
mod extension;

use std::process::Command;
use std::sync::Arc;
use std::time::Duration;

use base64::Engine;
use capi_topology::api::runtime::{
    DiscoverVariablesRequest, DiscoverVariablesResponse, DiscoveryRequest, DiscoveryResponse,
    ExtensionHandler, GeneratePatchesRequest, GeneratePatchesRequestItem, GeneratePatchesResponse,
    GroupVersionHook, HolderReference, PatchType, ResponseStatus, ValidateTopologyRequest,
    ValidateTopologyRequestItem, ValidateTopologyResponse, Variable, HOOKS_API_VERSION,
};
use http_body_util::{BodyExt, Full};
use hyper::body::Bytes;
use hyper_util::rt::TokioIo;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName};
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::{json, Value};
use tokio_rustls::TlsConnector;

use extension::Extension;

const HOOKS_PATH: &str = "/hooks.runtime.cluster.x-k8s.io/v1alpha1";
const PROXY_DROP_IN: &str = "/etc/systemd/system/containerd.service.d/http-proxy.conf";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_runtime_sdk_extension_answers_our_hook_types() {
    let extension = Extension::start();

    let discovery = extension
        .call::<_, DiscoveryResponse>(
            "discovery",
            &typed(DiscoveryRequest::default(), "DiscoveryRequest"),
        )
        .await;
    let mut handlers = discovery.handlers.clone();
    handlers.sort_by(|a, b| a.name.cmp(&b.name));
    assert_eq!(
        handlers,
        [
            handler("discover-variables", "DiscoverVariables"),
            handler("generate-patches", "GeneratePatches"),
            handler("validate-topology", "ValidateTopology"),
        ]
    );

    let request = generate_patches_request();
    let generated: GeneratePatchesResponse =
        extension.call("generatepatches/generate-patches", &request).await;
    assert_eq!(generated.status, ResponseStatus::Success, "{}", generated.message);
    let patched = apply(&request, &generated);
    assert_eq!(
        patched["docker"]["spec"]["template"]["spec"]["loadBalancer"]["imageRepository"],
        "registry.example.com"
    );
    let files = &patched["kcp"]["spec"]["template"]["spec"]["kubeadmConfigSpec"]["files"];
    assert_eq!(
        files[0]["path"], "/etc/kubeadm-extra.conf",
        "existing files are kept"
    );
    assert_eq!(files[1]["path"], PROXY_DROP_IN);
    assert_eq!(
        files[1]["content"],
        "[Service]\nEnvironment=\"HTTP_PROXY=http://proxy.example2.com:1234\"\n"
    );
    assert_eq!(
        patched["other"], request.items[2].object,
        "unknown kinds are left alone"
    );

    let validated: ValidateTopologyResponse = extension
        .call(
            "validatetopology/validate-topology",
            &validate_request(&request, &patched),
        )
        .await;
    assert_eq!(
        (validated.status, validated.message.as_str()),
        (ResponseStatus::Success, "")
    );
    let unpatched: Value = request
        .items
        .iter()
        .map(|item| (item.uid.clone(), item.object.clone()))
        .collect();
    let refused: ValidateTopologyResponse = extension
        .call(
            "validatetopology/validate-topology",
            &validate_request(&request, &unpatched),
        )
        .await;
    assert_eq!(refused.status, ResponseStatus::Failure);
    assert!(
        refused.message.contains("http-proxy is set but"),
        "{}",
        refused.message
    );

    let variables: DiscoverVariablesResponse = extension
        .call(
            "discovervariables/discover-variables",
            &typed(DiscoverVariablesRequest::default(), "DiscoverVariablesRequest"),
        )
        .await;
    let proxy = variables
        .variables
        .iter()
        .find(|v| v.name == "http-proxy")
        .expect("http-proxy is declared");
    let schema = serde_json::to_value(&proxy.schema.open_api_v3_schema).unwrap();
    assert_eq!(schema["type"], "object", "not the inline definition's string");
    assert_eq!(schema["required"], json!(["host"]));
}

/// The raw answers have Cluster API's shape, whatever our types make of them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_answers_have_the_runtime_sdk_shape() {
    let extension = Extension::start();
    let discovery = extension.post("discovery", json!({})).await;
    assert_eq!(discovery["status"], "Success");
    let hooks: Vec<&Value> = discovery["handlers"]
        .as_array()
        .expect("handlers")
        .iter()
        .map(|h| &h["requestHook"])
        .collect();
    assert!(
        hooks.contains(&&json!({"apiVersion": HOOKS_API_VERSION, "hook": "GeneratePatches"})),
        "{discovery}"
    );
    let generated = extension
        .post(
            "generatepatches/generate-patches",
            serde_json::to_value(generate_patches_request()).unwrap(),
        )
        .await;
    assert_eq!(generated["status"], "Success");
    let item = &generated["items"][0];
    assert_eq!(item["uid"], "docker");
    assert_eq!(item["patchType"], "JSONPatch");
    assert!(item["patch"].is_string(), "[]byte is base64 on the wire: {item}");
    let bad = extension
        .post("generatepatches/generate-patches", json!({"items": "not a list"}))
        .await;
    assert_eq!(bad["status"], "Failure");
    assert!(bad["message"]
        .as_str()
        .unwrap()
        .starts_with("error unmarshalling request"));
}

/// Plans `manifest` (with the quick-start templates and an ExtensionConfig of `extension`) and
/// returns the output.
fn plan_seed_003(extension: &Extension, manifest: &str) -> std::process::Output {
    let dir = extension::tempdir::Dir::new("seed-003-plan");
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    std::fs::copy(
        root.join("examples/quickstart/00-clusterclass.yaml"),
        dir.join("00-templates.yaml"),
    )
    .unwrap();
    std::fs::copy(root.join(manifest), dir.join("10-seed-003.yaml")).unwrap();
    let ca_bundle = base64::engine::general_purpose::STANDARD.encode(&extension.ca_pem);
    let config = format!(
        "apiVersion: runtime.cluster.x-k8s.io/v1alpha1\nkind: ExtensionConfig\nmetadata: {{name: k8s-upgrade-with-runtimesdk}}\n\
         spec:\n  clientConfig:\n    url: https://{}\n    caBundle: {ca_bundle}\n",
        extension.addr
    );
    std::fs::write(dir.join("05-extension.yaml"), config).unwrap();
    let planned = Command::new(env!("CARGO_BIN_EXE_capi-topology"))
        .args(["plan", "-o", "json", "-f"])
        .arg(dir.path())
        .output()
        .expect("capi-topology plan runs");
    planned
}

/// The planned objects of a successful plan of seed 003's example: the discovered variable is
/// defaulted, the extension set the image repository, and its drop-in comes from the
/// object-valued http-proxy (the value of the extension's definition). Returns the Cluster.
fn assert_seed_003_planned(planned: &std::process::Output) -> Value {
    let stderr = String::from_utf8_lossy(&planned.stderr);
    assert!(planned.status.success(), "{stderr}");
    let list: Value = serde_json::from_slice(&planned.stdout).unwrap();
    let items = list["items"].as_array().unwrap();
    let of_kind = |kind: &str| {
        items
            .iter()
            .find(|o| o["kind"] == kind)
            .unwrap_or_else(|| panic!("no {kind}"))
    };
    let variables = &of_kind("Cluster")["spec"]["topology"]["variables"];
    assert!(
        variables
            .as_array()
            .unwrap()
            .iter()
            .any(|v| v["name"] == "lbImageRepository" && v["value"] == "kindest"),
        "the discovered variable is defaulted: {variables}"
    );
    assert_eq!(
        of_kind("DockerCluster")["spec"]["loadBalancer"]["imageRepository"],
        "kindest"
    );
    let files = &of_kind("KubeadmControlPlane")["spec"]["kubeadmConfigSpec"]["files"];
    assert!(
        files
            .as_array()
            .into_iter()
            .flatten()
            .any(|f| f["path"] == PROXY_DROP_IN
                && f["content"] == "[Service]\nEnvironment=\"HTTP_PROXY=http://proxy.example2.com:1234\"\n"),
        "the extension's drop-in from the object-valued http-proxy: {files}"
    );
    of_kind("Cluster").clone()
}

/// Seed 003's example offline, as the seed writes it (v1beta1): the quick-start templates, the
/// class with `http-proxy` defined inline (a string) and by the extension (an object), the
/// Cluster setting one value per definition with `definitionFrom`, and an ExtensionConfig
/// pointing at the Runtime SDK extension: `plan` discovers the variables, admits the Cluster and
/// patches its topology as the controllers do on a real API server
/// (`tests/e2e/runtime_extensions.rs`). The planned Cluster is v1beta2: its values keep their
/// `definitionFrom` in the `topology.cluster.x-k8s.io/v1beta1-fields` annotation.
#[test]
fn seed_003_example_plans_offline_against_the_extension() {
    let extension = Extension::start();
    let planned = plan_seed_003(&extension, "tests/fixtures/runtime/seed-003-v1beta1.yaml");
    let cluster = assert_seed_003_planned(&planned);
    let kept = cluster["metadata"]["annotations"]["topology.cluster.x-k8s.io/v1beta1-fields"]
        .as_str()
        .unwrap_or_else(|| panic!("definitionFrom kept in the annotation: {cluster}"));
    let kept: Value = serde_json::from_str(kept).unwrap();
    let froms: Vec<&Value> = kept.as_array().unwrap().iter().map(|e| &e["value"]).collect();
    assert_eq!(froms, ["inline", "lbImageRepository"], "{kept}");
}

/// Seed 003's class with a conflict also plans a v1beta2 Cluster (no `definitionFrom`) that
/// the extension's definition alone serves (`seed-003-v1beta2.yaml`: one definition); a
/// v1beta2 Cluster setting the conflicting variable without `definitionFrom` is refused, the
/// error saying how to set one value per definition.
#[test]
fn seed_003_at_v1beta2() {
    let extension = Extension::start();
    let planned = plan_seed_003(&extension, "tests/fixtures/runtime/seed-003-v1beta2.yaml");
    assert_seed_003_planned(&planned);
    let refused = plan_seed_003(
        &extension,
        "tests/fixtures/runtime/seed-003-v1beta2-conflict.yaml",
    );
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(!refused.status.success());
    assert!(
        stderr.contains(
            "spec.topology.variables[http-proxy].definitionFrom: Required value: variable \"http-proxy\" \
             has conflicting definitions: set one value per definition, with definitionFrom set to one \
             of \"inline\", \"lbImageRepository\" (a cluster.x-k8s.io/v1beta1 field: write the Cluster \
             through cluster.x-k8s.io/v1beta1)"
        ),
        "{stderr}"
    );
}

/// `plan` discovers the files' ExtensionConfig and calls its handlers as the controller would:
/// the class's variables come from its DiscoverVariables hook, and the DockerCluster gets the
/// image repository the extension sets from a Cluster variable; with the extension gone, the
/// variables cannot be discovered and the plan fails naming the patch.
#[test]
fn plan_and_check_call_the_extension_of_the_files() {
    let extension = Extension::start();
    // Not in the extension's directory: that goes with the extension.
    let dir = extension::tempdir::Dir::new("runtime-plan");
    let ca_bundle = base64::engine::general_purpose::STANDARD.encode(&extension.ca_pem);
    let files = PLAN_FILES
        .replace("{url}", &format!("https://{}", extension.addr))
        .replace("{caBundle}", &ca_bundle);
    std::fs::write(dir.join("objects.yaml"), files).unwrap();
    let command = |name: &str| {
        let mut command = Command::new(env!("CARGO_BIN_EXE_capi-topology"));
        command.arg(name);
        if name == "plan" {
            command.args(["-o", "json"]);
        }
        command
            .arg("-f")
            .arg(dir.path())
            .output()
            .expect("capi-topology runs")
    };
    let plan = || command("plan");

    let planned = plan();
    let stderr = String::from_utf8_lossy(&planned.stderr);
    assert!(planned.status.success(), "{stderr}");
    let list: Value = serde_json::from_slice(&planned.stdout).unwrap();
    let docker_cluster = list["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["kind"] == "DockerCluster")
        .expect("a DockerCluster is planned");
    assert_eq!(
        docker_cluster["spec"]["loadBalancer"]["imageRepository"], "registry.example.com",
        "{docker_cluster}"
    );

    // `check` admits the Cluster: its variable is declared by the extension's DiscoverVariables.
    let checked = command("check");
    let stdout = String::from_utf8_lossy(&checked.stdout);
    assert!(
        checked.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&checked.stderr)
    );
    assert!(stdout.contains("cluster.cluster.x-k8s.io/c1 created"), "{stdout}");

    drop(extension);
    // Without the extension the class's variables are not reconciled: the Cluster is admitted
    // with the warning the API server would relay, as Cluster API's webhook does.
    let unchecked = command("check");
    let stderr = String::from_utf8_lossy(&unchecked.stderr);
    assert!(unchecked.status.success(), "{stderr}");
    let warnings: Vec<&str> = stderr.lines().collect();
    assert_eq!(warnings.len(), 2, "{stderr}");
    assert!(
        warnings[0].starts_with("Warning: ")
            && warnings[0].contains("failed to call DiscoverVariables for patch lb"),
        "{stderr}"
    );
    assert!(
        warnings[1].contains("this ClusterClass hasn't been successfully reconciled"),
        "{stderr}"
    );
    let failed = plan();
    drop(dir);
    let stderr = String::from_utf8_lossy(&failed.stderr);
    assert_eq!(failed.status.code(), Some(1), "{stderr}");
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(lines.len(), 2, "{stderr}");
    assert!(
        lines[0].contains("objects.yaml: VariableDiscovery failed: failed to call DiscoverVariables for patch lb: failed to call extension handler \"discover-variables.ext\": "),
        "{stderr}"
    );
    assert!(
        lines[1].starts_with(
            "Cluster default/c1: external patch \"lb\": failed to call extension handler \"generate-patches.ext\": "
        ),
        "{stderr}"
    );
}

/// A class whose only patch lives in the extension, its templates, a Cluster and the ExtensionConfig.
const PLAN_FILES: &str = r#"
apiVersion: cluster.x-k8s.io/v1beta1
kind: ClusterClass
metadata: {name: ext-class, namespace: default}
spec:
  infrastructure:
    ref: {apiVersion: infrastructure.cluster.x-k8s.io/v1beta1, kind: DockerClusterTemplate, name: cluster}
  controlPlane:
    ref: {apiVersion: controlplane.cluster.x-k8s.io/v1beta1, kind: KubeadmControlPlaneTemplate, name: cp}
    machineInfrastructure:
      ref: {apiVersion: infrastructure.cluster.x-k8s.io/v1beta1, kind: DockerMachineTemplate, name: cp}
  patches:
  - name: lb
    external:
      generateExtension: generate-patches.ext
      validateExtension: validate-topology.ext
      discoverVariablesExtension: discover-variables.ext
---
apiVersion: infrastructure.cluster.x-k8s.io/v1beta1
kind: DockerClusterTemplate
metadata: {name: cluster, namespace: default}
spec: {template: {spec: {}}}
---
apiVersion: controlplane.cluster.x-k8s.io/v1beta1
kind: KubeadmControlPlaneTemplate
metadata: {name: cp, namespace: default}
spec: {template: {spec: {kubeadmConfigSpec: {}}}}
---
apiVersion: infrastructure.cluster.x-k8s.io/v1beta1
kind: DockerMachineTemplate
metadata: {name: cp, namespace: default}
spec: {template: {spec: {}}}
---
apiVersion: runtime.cluster.x-k8s.io/v1alpha1
kind: ExtensionConfig
metadata: {name: ext}
spec:
  clientConfig:
    url: {url}
    caBundle: {caBundle}
---
apiVersion: cluster.x-k8s.io/v1beta1
kind: Cluster
metadata: {name: c1, namespace: default}
spec:
  topology:
    class: ext-class
    version: v1.31.0
    variables:
    - {name: lbImageRepository, value: registry.example.com}
"#;

fn handler(name: &str, hook: &str) -> ExtensionHandler {
    ExtensionHandler {
        name: name.to_owned(),
        request_hook: GroupVersionHook {
            api_version: HOOKS_API_VERSION.to_owned(),
            hook: hook.to_owned(),
        },
        ..ExtensionHandler::default()
    }
}

/// A request with its apiVersion and kind set, as Cluster API sends it.
fn typed<T: Serialize>(request: T, kind: &str) -> Value {
    let mut value = serde_json::to_value(request).unwrap();
    value["apiVersion"] = json!(HOOKS_API_VERSION);
    value["kind"] = json!(kind);
    value
}

fn holder(kind: &str, name: &str, field_path: &str) -> HolderReference {
    HolderReference {
        api_version: "cluster.x-k8s.io/v1beta1".to_owned(),
        kind: kind.to_owned(),
        namespace: "default".to_owned(),
        name: name.to_owned(),
        field_path: field_path.to_owned(),
    }
}

fn generate_patches_request() -> GeneratePatchesRequest {
    let template = |api_version: &str, kind: &str, spec: Value| {
        json!({"apiVersion": api_version, "kind": kind, "metadata": {"name": "t", "namespace": "default"},
               "spec": {"template": {"spec": spec}}})
    };
    let item = |uid: &str, holder: HolderReference, object: Value| GeneratePatchesRequestItem {
        uid: uid.to_owned(),
        holder_reference: holder,
        object,
        variables: Vec::new(),
    };
    GeneratePatchesRequest {
        api_version: HOOKS_API_VERSION.to_owned(),
        kind: "GeneratePatchesRequest".to_owned(),
        variables: vec![
            Variable {
                name: "lbImageRepository".to_owned(),
                value: json!("registry.example.com"),
            },
            Variable {
                name: "http-proxy".to_owned(),
                value: json!({"host": "proxy.example2.com", "port": 1234}),
            },
        ],
        items: vec![
            item(
                "docker",
                holder("Cluster", "c1", "spec.infrastructureRef"),
                template(
                    "infrastructure.cluster.x-k8s.io/v1beta1",
                    "DockerClusterTemplate",
                    json!({}),
                ),
            ),
            item(
                "kcp",
                holder("Cluster", "c1", "spec.controlPlaneRef"),
                template(
                    "controlplane.cluster.x-k8s.io/v1beta1",
                    "KubeadmControlPlaneTemplate",
                    json!({"kubeadmConfigSpec": {"files": [{"path": "/etc/kubeadm-extra.conf", "content": "x"}]}}),
                ),
            ),
            item(
                "other",
                holder(
                    "MachineDeployment",
                    "c1-md-0",
                    "spec.template.spec.infrastructureRef",
                ),
                template(
                    "infrastructure.cluster.x-k8s.io/v1beta1",
                    "DockerMachineTemplate",
                    json!({}),
                ),
            ),
        ],
        ..GeneratePatchesRequest::default()
    }
}

/// Each request item's object with its JSON patches applied, by uid.
fn apply(request: &GeneratePatchesRequest, response: &GeneratePatchesResponse) -> Value {
    let mut objects = serde_json::Map::new();
    for item in &request.items {
        let mut object = item.object.clone();
        for patch in response.items.iter().filter(|p| p.uid == item.uid) {
            assert_eq!(patch.patch_type, PatchType::JsonPatch);
            let operations: json_patch::Patch = serde_json::from_slice(&patch.patch).unwrap();
            json_patch::patch(&mut object, &operations).unwrap();
        }
        objects.insert(item.uid.clone(), object);
    }
    Value::Object(objects)
}

fn validate_request(request: &GeneratePatchesRequest, objects: &Value) -> ValidateTopologyRequest {
    ValidateTopologyRequest {
        api_version: HOOKS_API_VERSION.to_owned(),
        kind: "ValidateTopologyRequest".to_owned(),
        variables: request.variables.clone(),
        items: request
            .items
            .iter()
            .map(|item| ValidateTopologyRequestItem {
                holder_reference: item.holder_reference.clone(),
                object: objects[&item.uid].clone(),
                variables: Vec::new(),
            })
            .collect(),
        ..ValidateTopologyRequest::default()
    }
}

/// Hook calls over TLS to the extension, trusting only its dev CA.
trait Calls {
    async fn call<B: Serialize, R: DeserializeOwned>(&self, path: &str, body: &B) -> R;
    async fn post(&self, path: &str, body: Value) -> Value;
}

impl Calls for Extension {
    /// POSTs `body` to the hook `path` (below the hooks API path) and decodes the answer.
    async fn call<B: Serialize, R: DeserializeOwned>(&self, path: &str, body: &B) -> R {
        let answer = self.post(path, serde_json::to_value(body).unwrap()).await;
        serde_json::from_value(answer.clone()).unwrap_or_else(|e| panic!("{path}: {e}: {answer}"))
    }

    /// POSTs `body` over TLS, trusting only the dev CA for 127.0.0.1; the answer as JSON.
    async fn post(&self, path: &str, body: Value) -> Value {
        let mut roots = rustls::RootCertStore::empty();
        roots
            .add(CertificateDer::from_pem_slice(self.ca_pem.as_bytes()).unwrap())
            .unwrap();
        let config = rustls::ClientConfig::builder()
            .with_root_certificates(roots)
            .with_no_client_auth();
        let connector = TlsConnector::from(Arc::new(config));
        // The extension accepts TCP connections a moment before it serves TLS on them (its
        // certificate watcher starts beside the listener): a handshake reset right after start
        // is retried a few times, any other failure is not.
        let mut attempts = 0;
        let tls = loop {
            let tcp = tokio::net::TcpStream::connect(self.addr).await.unwrap();
            let server_name = ServerName::try_from("127.0.0.1").unwrap();
            match connector.connect(server_name, tcp).await {
                Ok(tls) => break tls,
                Err(err) if attempts < 20 && err.kind() == std::io::ErrorKind::ConnectionReset => {
                    attempts += 1;
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
                Err(err) => panic!("TLS handshake with the dev CA's certificate for 127.0.0.1: {err}"),
            }
        };
        let (mut sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(tls))
            .await
            .unwrap();
        tokio::spawn(connection);
        let request = hyper::Request::post(format!("{HOOKS_PATH}/{path}"))
            .header("host", self.addr.to_string())
            .header("content-type", "application/json")
            .body(Full::new(Bytes::from(serde_json::to_vec(&body).unwrap())))
            .unwrap();
        let response = sender.send_request(request).await.unwrap();
        assert_eq!(response.status(), 200, "{path}");
        let bytes = response.into_body().collect().await.unwrap().to_bytes();
        serde_json::from_slice(&bytes)
            .unwrap_or_else(|e| panic!("{path}: {e}: {}", String::from_utf8_lossy(&bytes)))
    }
}
