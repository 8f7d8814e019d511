//! What a new user reads when something is off: every message once, with what to do next, and no
//! command that silently does nothing. Each case runs the built binary.

use std::path::Path;
use std::process::{Command, Output, Stdio};

fn capi_topology(args: &[&str], env: &[(&str, &str)], stdin: Option<&Path>) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_capi-topology"));
    command
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stdin(match stdin {
            Some(path) => Stdio::from(std::fs::File::open(path).expect("stdin file")),
            None => Stdio::null(),
        });
    for (key, value) in env {
        command.env(key, value);
    }
    command.output().expect("the binary runs")
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

#[path = "common/tempdir.rs"]
mod tempdir;

/// A scratch directory of one test's own.
fn scratch(name: &str) -> tempdir::Dir {
    tempdir::Dir::new(&format!("cli-{name}"))
}

#[test]
fn a_malformed_manifest_is_reported_once() {
    let dir = scratch("malformed");
    let file = dir.join("bad.yaml");
    std::fs::write(&file, "a: [\n").unwrap();
    let output = capi_topology(&["check", "-f", file.to_str().unwrap()], &[], None);
    assert_eq!(output.status.code(), Some(2));
    let text = stderr(&output);
    assert_eq!(
        text.matches("did not find expected node content").count(),
        1,
        "{text}"
    );
    assert!(
        text.starts_with(&format!("error: {}: document 1:", file.display())),
        "{text}"
    );
}

#[test]
fn a_missing_certificate_is_reported_once_with_how_to_make_one() {
    let output = capi_topology(
        &[
            "serve",
            "--objects",
            "examples/quickstart/",
            "--cert-dir",
            "/nonexistent/certs",
            "--bind-address",
            "127.0.0.1:0",
            "--metrics-addr",
            "127.0.0.1:0",
        ],
        &[],
        None,
    );
    assert_eq!(output.status.code(), Some(2));
    let text = stderr(&output);
    let last = text.lines().last().unwrap_or_default();
    assert_eq!(last.matches("No such file or directory").count(), 1, "{text}");
    assert!(
        last.contains("capi-topology certs --dns localhost --out DIR"),
        "{text}"
    );
}

#[test]
fn serving_without_an_api_server_says_what_to_do() {
    let output = capi_topology(
        &[
            "serve",
            "--bind-address",
            "127.0.0.1:0",
            "--metrics-addr",
            "127.0.0.1:0",
        ],
        &[
            ("KUBECONFIG", "/nonexistent/kubeconfig"),
            ("KUBERNETES_SERVICE_HOST", ""),
        ],
        None,
    );
    assert_eq!(output.status.code(), Some(2));
    let text = stderr(&output);
    let last = text.lines().last().unwrap_or_default();
    assert!(
        last.starts_with("error: no Kubernetes API server to serve from"),
        "{text}"
    );
    assert!(
        last.ends_with(
            "set KUBECONFIG or --kubeconfig, run in a pod, or pass --objects DIR to serve over files"
        ),
        "{text}"
    );
    assert_eq!(last.matches("/nonexistent/kubeconfig").count(), 1, "{text}");
    assert!(last.len() < 400, "{} characters: {last}", last.len());
}

#[test]
fn nothing_to_do_is_said_not_silent() {
    let dir = scratch("empty");
    let empty_dir = dir.join("empty");
    let no_yaml = dir.join("no-yaml");
    std::fs::create_dir_all(&empty_dir).unwrap();
    std::fs::create_dir_all(&no_yaml).unwrap();
    std::fs::write(no_yaml.join("notes.txt"), "not a manifest").unwrap();
    let empty_file = dir.join("empty.yaml");
    std::fs::write(&empty_file, "").unwrap();
    for (path, read) in [
        (
            empty_dir.to_str().unwrap(),
            "read 0 manifest files, 0 objects from",
        ),
        (no_yaml.to_str().unwrap(), "read 0 manifest files, 0 objects from"),
        (
            empty_file.to_str().unwrap(),
            "read 1 manifest file, 0 objects from",
        ),
    ] {
        let check = capi_topology(&["check", "-f", path], &[], None);
        assert_eq!(check.status.code(), Some(0));
        assert_eq!(stderr(&check), format!("nothing to check: {read} {path}\n"));
        let plan = capi_topology(&["plan", "-f", path], &[], None);
        assert_eq!(plan.status.code(), Some(0));
        assert_eq!(
            stderr(&plan),
            format!("no Cluster with a spec.topology to plan: {read} {path}\n")
        );
        assert!(plan.stdout.is_empty());
    }
    let class_only = capi_topology(
        &["plan", "-f", "examples/quickstart/00-clusterclass.yaml"],
        &[],
        None,
    );
    assert_eq!(
        stderr(&class_only),
        "no Cluster with a spec.topology to plan: read 1 manifest file, 7 objects from examples/quickstart/00-clusterclass.yaml\n"
    );
}

/// The review of `examples/review.json` (v1beta2, where the webhooks are registered) and of
/// `examples/review-v1beta1.json` (an older client's), each at its version's paths.
#[test]
fn admit_as_applied_gives_the_verdict_check_gives() {
    for (version, file) in [
        ("v1beta2", "examples/review.json"),
        ("v1beta1", "examples/review-v1beta1.json"),
    ] {
        let validate = format!("/validate-cluster-x-k8s-io-{version}-cluster");
        let args = [
            "admit",
            "--objects",
            "examples/quickstart/",
            "--path",
            validate.as_str(),
        ];
        let review = Path::new(file);
        let as_given = capi_topology(&args, &[], Some(review));
        let answer: serde_json::Value = serde_json::from_slice(&as_given.stdout).unwrap();
        assert_eq!(
            answer["response"]["allowed"], true,
            "{file}: a class without status is not reconciled yet"
        );
        assert!(answer["response"]["warnings"][0]
            .as_str()
            .unwrap()
            .contains("hasn't been successfully reconciled"));
        // Cluster API checks a Cluster's variables in its defaulting webhook, and so do we.
        let mutate = format!("/mutate-cluster-x-k8s-io-{version}-cluster");
        let mut applied_args = args.to_vec();
        applied_args.insert(1, "--as-applied");
        applied_args[5] = mutate.as_str();
        let as_applied = capi_topology(&applied_args, &[], Some(review));
        let answer: serde_json::Value = serde_json::from_slice(&as_applied.stdout).unwrap();
        assert_eq!(answer["response"]["allowed"], false, "{file}");
        assert!(answer["response"]["status"]["message"]
            .as_str()
            .unwrap()
            .contains("spec.topology.variables[kubeletLogLevel].value: Invalid value: \"42\": should be less than or equal to 10"));
    }
}

#[test]
fn certificates_must_be_valid_for_at_least_a_day() {
    let dir = scratch("days");
    let out = dir.join("unused");
    let output = capi_topology(
        &[
            "certs",
            "--dns",
            "localhost",
            "--days",
            "0",
            "--out",
            out.to_str().unwrap(),
        ],
        &[],
        None,
    );
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).contains("invalid value '0' for '--days <DAYS>': 0 is not in 1..=3650"));
}

/// A topology naming one MachineDeployment twice is refused by `check` as the API server refuses
/// it (the CRD keys the list by name), in kubectl's words, before any webhook speaks.
#[test]
fn a_repeated_list_map_key_is_refused_in_the_api_servers_words() {
    let dir = scratch("list-map");
    let class = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/quickstart/00-clusterclass.yaml");
    std::fs::copy(class, dir.join("00-clusterclass.yaml")).unwrap();
    let cluster = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/quickstart/10-cluster-dev.yaml"),
    )
    .unwrap();
    let repeated = "      - class: default-worker\n        name: md-0\n        replicas: 1\n";
    assert!(
        cluster.ends_with(repeated),
        "the example ends with its one worker pool"
    );
    std::fs::write(dir.join("10-cluster.yaml"), format!("{cluster}{repeated}")).unwrap();
    let output = capi_topology(&["check", "-f", dir.path().to_str().unwrap()], &[], None);
    assert_eq!(output.status.code(), Some(1));
    let text = format!("{}{}", String::from_utf8_lossy(&output.stdout), stderr(&output));
    assert!(
        text.contains(
            r#"The Cluster "dev" is invalid: spec.topology.workers.machineDeployments[1]: Duplicate value: {"name":"md-0"}"#
        ),
        "{text}"
    );
}

/// A plain `yes` or `1_000` label value is a bool or a number to kubectl's YAML 1.1 reader,
/// which then refuses the file: so do we, in its words, saying how to write it.
#[test]
fn a_yaml_1_1_bool_where_a_label_string_belongs_is_refused_as_kubectl_refuses_it() {
    let dir = scratch("yaml11-label");
    let file = dir.join("labels.yaml");
    std::fs::write(
        &file,
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n  labels:\n    quoted: 'yes'\n    team: yes\n",
    )
    .unwrap();
    let named = file.to_str().unwrap();
    for command in ["check", "plan"] {
        let output = capi_topology(&[command, "-f", named], &[], None);
        assert_eq!(output.status.code(), Some(2), "{command}");
        let text = stderr(&output);
        assert!(
            text.contains(&format!(
                "unable to decode {named:?}: json: cannot unmarshal bool into Go struct field \
                 ObjectMeta.metadata.labels of type string (metadata.labels.team is written yes, which \
                 kubectl's YAML 1.1 reader reads as a boolean: quote it, \"yes\")"
            )),
            "{command}: {text}"
        );
    }
}
