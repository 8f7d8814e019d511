//! The binary on the bundled examples: `check` accepts the quickstart, refuses the invalid
//! changes the way kubectl would show them, and `admit` answers a review read from stdin.

use std::io::Write;
use std::process::{Command, Output, Stdio};

use serde_json::{json, Value};

fn capi_topology(args: &[&str], stdin: Option<&[u8]>) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_capi-topology"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the binary starts");
    if let Some(input) = stdin {
        // The binary may exit before reading (usage errors): a closed pipe is fine here.
        let _ = child.stdin.take().expect("stdin").write_all(input);
    }
    drop(child.stdin.take());
    child.wait_with_output().expect("the binary finishes")
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

#[test]
fn check_accepts_the_quickstart() {
    let output = capi_topology(&["check", "-f", "examples/quickstart/"], None);
    assert!(
        output.status.success(),
        "stderr: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let text = stdout(&output);
    assert!(
        text.contains("clusterclass.cluster.x-k8s.io/quick-start created"),
        "{text}"
    );
    assert!(text.contains("cluster.cluster.x-k8s.io/dev created"), "{text}");
    assert!(text.contains("cluster.cluster.x-k8s.io/prod created"), "{text}");
}

#[test]
fn check_reports_json_per_object() {
    let output = capi_topology(&["check", "-f", "examples/quickstart/", "-o", "json"], None);
    assert!(output.status.success());
    let reports: Vec<Value> = serde_json::from_slice(&output.stdout).expect("JSON output");
    assert_eq!(reports.len(), 9);
    assert!(reports.iter().all(|r| r["verdict"] == "created"), "{reports:?}");
}

#[test]
fn check_admits_extension_configs_and_refuses_a_plain_http_url() {
    let file = "tests/fixtures/runtime/extension-configs.yaml";
    let output = capi_topology(&["check", "-f", file], None);
    assert_eq!(output.status.code(), Some(1));
    let text = stdout(&output);
    assert!(
        text.contains("extensionconfig.runtime.cluster.x-k8s.io/k8s-upgrade-with-runtimesdk created"),
        "{text}"
    );
    // As kubectl: refusals on stderr.
    let text = String::from_utf8_lossy(&output.stderr);
    assert!(
        text.contains(
            r#"admission webhook "validation.extensionconfig.runtime.cluster.x-k8s.io" denied the request: ExtensionConfig.runtime.cluster.x-k8s.io "plain-http" is invalid: spec.clientConfig.url: Invalid value: "http://extension.example.com:8080": 'https' is the only allowed URL scheme, e.g. https://example.com"#
        ),
        "{text}"
    );
    let output = capi_topology(&["check", "-f", file, "-o", "json"], None);
    let reports: Vec<Value> = serde_json::from_slice(&output.stdout).expect("JSON output");
    assert_eq!(reports[0]["namespace"], "", "ExtensionConfig is cluster-scoped");
}

#[test]
fn check_admits_cluster_resource_sets_and_refuses_a_strategy_change() {
    let output = capi_topology(
        &[
            "check",
            "-f",
            "tests/fixtures/addons/calico.yaml",
            "tests/fixtures/addons/crs-strategy-change.yaml",
        ],
        None,
    );
    assert_eq!(output.status.code(), Some(1));
    let text = stdout(&output);
    assert!(
        text.contains("clusterresourceset.addons.cluster.x-k8s.io/crs1 created"),
        "{text}"
    );
    let text = String::from_utf8_lossy(&output.stderr);
    assert!(
        text.contains(
            r#"admission webhook "validation.clusterresourceset.addons.cluster.x-k8s.io" denied the request: ClusterResourceSet.addons.cluster.x-k8s.io "crs1" is invalid: spec.strategy: Invalid value: "Reconcile": field is immutable"#
        ),
        "{text}"
    );
}

#[test]
fn check_fails_cleanly_on_unreadable_input() {
    let output = capi_topology(&["check", "-f", "does/not/exist.yaml"], None);
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).starts_with("error: cannot read does/not/exist.yaml"));
}

#[test]
fn admit_answers_a_review_from_stdin() {
    let review = json!({
        "apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
        "request": {
            "uid": "abc-123",
            "kind": {"group": "cluster.x-k8s.io", "version": "v1beta1", "kind": "Cluster"},
            "resource": {"group": "cluster.x-k8s.io", "version": "v1beta1", "resource": "clusters"},
            "name": "dev", "namespace": "default", "operation": "CREATE",
            "userInfo": {"username": "me"},
            "object": {"apiVersion": "cluster.x-k8s.io/v1beta1", "kind": "Cluster",
                       "metadata": {"name": "dev", "namespace": "default"},
                       "spec": {"topology": {"class": "quick-start", "version": "v1.31.2"}}}
        }
    });
    let output = capi_topology(
        &[
            "admit",
            "--objects",
            "examples/quickstart/",
            "--path",
            "/validate-cluster-x-k8s-io-v1beta1-cluster",
        ],
        Some(&serde_json::to_vec(&review).unwrap()),
    );
    assert!(
        output.status.success(),
        "stderr: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let answer: Value = serde_json::from_slice(&output.stdout).expect("an AdmissionReview");
    assert_eq!(answer["kind"], "AdmissionReview");
    assert_eq!(answer["response"]["uid"], "abc-123");
}

#[test]
fn admit_rejects_an_unknown_path_as_usage_error() {
    let output = capi_topology(
        &["admit", "--objects", "examples/quickstart/", "--path", "/nope"],
        Some(b"{}"),
    );
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("unknown webhook path \"/nope\""));
}

#[test]
fn readme_documents_every_subcommand() {
    let readme = std::fs::read_to_string("README.md").expect("README.md");
    for subcommand in [
        None,
        Some("plan"),
        Some("check"),
        Some("admit"),
        Some("serve"),
        Some("contract"),
        Some("crds"),
        Some("certs"),
        Some("convert"),
        Some("cluster-api"),
    ] {
        let mut args: Vec<&str> = subcommand.into_iter().collect();
        args.push("--help");
        let help = stdout(&capi_topology(&args, None));
        assert!(
            readme.contains(help.trim()),
            "README.md lacks the current `{}` help:\n{help}",
            args.join(" ")
        );
    }
}

/// The README's typo, in a file of its own beside the quickstart class.
fn typo_cluster_file(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("capi-topology-cli-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let cluster = std::fs::read_to_string("examples/quickstart/10-cluster-dev.yaml")
        .expect("quickstart")
        .replace("machineDeployments:", "machineDeployment:")
        .replace("  name: dev\n", "  name: dev\n  name: dev\n");
    let file = dir.join("typo.yaml");
    std::fs::write(&file, cluster).expect("write");
    file
}

#[test]
fn check_refuses_unknown_fields_and_warns_of_repeated_keys_as_kubectl_does() {
    let file = typo_cluster_file("strict");
    let path = file.display().to_string();
    let class = "examples/quickstart/00-clusterclass.yaml";
    let output = capi_topology(&["check", "-f", class, "-f", &path], None);
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&output.stderr)
            .lines()
            .find(|line| line.starts_with("Error from server")),
        Some(
            format!(
                "Error from server (BadRequest): error when creating {path:?}: Cluster in version \"v1beta2\" cannot \
                 be handled as a Cluster: strict decoding error: unknown field \"spec.topology.workers.machineDeployment\""
            )
            .as_str()
        )
    );
    assert!(
        String::from_utf8_lossy(&output.stderr).contains(&format!(
            "Warning: {path}: field \"metadata.name\" is written more than once; kubectl sends only its last value"
        )),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let warned = capi_topology(&["check", "--validate=warn", "-f", class, "-f", &path], None);
    assert!(warned.status.success());
    let stderr = String::from_utf8_lossy(&warned.stderr);
    assert!(
        stderr.contains("Warning: unknown field \"spec.topology.workers.machineDeployment\""),
        "{stderr}"
    );
    let ignored = capi_topology(&["plan", "--validate=false", "-f", class, "-f", &path], None);
    assert!(ignored.status.success());
    assert!(!String::from_utf8_lossy(&ignored.stderr).contains("unknown field"));
    let refused = capi_topology(&["plan", "-f", class, "-f", &path], None);
    assert_eq!(refused.status.code(), Some(1));
    let _ = std::fs::remove_file(&file);
}
