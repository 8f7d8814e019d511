//! Hostile inputs of the offline commands: files that are not files (a FIFO that never gets a
//! writer, an endless device, a huge file), add-on data listed thousands of times, object names
//! the API server refuses, manifests nested 100,000 deep or holding millions of values. Each must end in seconds with a clear answer; the bounds here are
//! generous safety bounds, not timing targets.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// Runs the binary with `args` from the repository root; fails the test past `limit`.
pub(crate) fn run_within(limit: Duration, args: &[&str]) -> Output {
    run_measured(limit, args).0
}

/// [`run_within`], with the child's peak resident memory in KiB as last seen while it ran
/// (Linux `/proc`; `None` elsewhere or when it ended before the first look): a lower bound.
pub(super) fn run_measured(limit: Duration, args: &[&str]) -> (Output, Option<u64>) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_capi-topology"))
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the binary starts");
    let started = Instant::now();
    // The output is read on threads so a large output cannot stall the child.
    let stdout = child.stdout.take().expect("stdout");
    let stderr = child.stderr.take().expect("stderr");
    let read = |mut pipe: Box<dyn std::io::Read + Send>| {
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            let _ = pipe.read_to_end(&mut bytes);
            bytes
        })
    };
    let (out, err) = (read(Box::new(stdout)), read(Box::new(stderr)));
    let status_file = format!("/proc/{}/status", child.id());
    let mut peak = None;
    let status = loop {
        peak = peak_kib(&status_file).or(peak);
        if let Some(status) = child.try_wait().expect("wait") {
            break status;
        }
        if started.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("capi-topology {args:?} still running after {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    let output = Output {
        status,
        stdout: out.join().expect("stdout read"),
        stderr: err.join().expect("stderr read"),
    };
    (output, peak)
}

/// `VmHWM` of a `/proc/<pid>/status` file.
fn peak_kib(status_file: &str) -> Option<u64> {
    let status = std::fs::read_to_string(status_file).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// A fresh directory of this test's own under the system temp dir.
pub(crate) fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("capi-topology-hostile-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
}

fn mkfifo(path: &Path) -> bool {
    Command::new("mkfifo")
        .arg(path)
        .status()
        .is_ok_and(|status| status.success())
}

pub(crate) fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

pub(crate) const SOON: Duration = Duration::from_secs(20);

#[test]
fn a_fifo_in_a_directory_is_skipped_and_named() {
    let dir = temp_dir("fifo-dir");
    let fifo = dir.join("x.yaml");
    if !mkfifo(&fifo) {
        eprintln!("mkfifo is not available here");
        return;
    }
    std::fs::copy("examples/quickstart/10-cluster-dev.yaml", dir.join("a.yaml")).expect("copy");
    let dir_arg = dir.display().to_string();
    let output = run_within(
        SOON,
        &[
            "check",
            "-f",
            "examples/quickstart/00-clusterclass.yaml",
            "-f",
            &dir_arg,
        ],
    );
    let stderr = text(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "Warning: skipped {}: not a regular file (a FIFO)",
            fifo.display()
        )),
        "{stderr}"
    );
    assert!(text(&output.stdout).contains("cluster.cluster.x-k8s.io/dev created"));
    let named = fifo.display().to_string();
    let output = run_within(SOON, &["plan", "-f", &named]);
    assert_eq!(output.status.code(), Some(2));
    assert!(
        text(&output.stderr).contains(&format!("cannot read {named}: not a regular file (a FIFO)")),
        "{}",
        text(&output.stderr)
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn devices_and_huge_files_are_refused_at_once() {
    let output = run_within(SOON, &["check", "-f", "/dev/zero"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(
        text(&output.stderr).contains("cannot read /dev/zero: not a regular file (a character device)"),
        "{}",
        text(&output.stderr)
    );
    let dir = temp_dir("huge");
    let huge = dir.join("huge.yaml");
    // Sparse: 64 MiB that take no disk.
    std::fs::File::create(&huge)
        .and_then(|file| file.set_len(64 * 1024 * 1024))
        .expect("sparse file");
    let output = run_within(SOON, &["plan", "-f", &dir.display().to_string()]);
    assert_eq!(output.status.code(), Some(2));
    assert!(
        text(&output.stderr).contains("larger than 32 MiB, the most a manifest file may hold"),
        "{}",
        text(&output.stderr)
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// One 2.9 MB ConfigMap listed 100 times by each of 50 sets selecting 3 Clusters: read and
/// parsed once, not 15,000 times.
#[test]
fn add_on_data_listed_thousands_of_times_is_parsed_once() {
    let dir = temp_dir("crs");
    let big = format!(
        "{{kind: ConfigMap, apiVersion: v1, metadata: {{name: x}}, data: {{k: '{}'}}}}",
        "a".repeat(145_000)
    );
    let documents = vec![big; 20].join("\n---\n");
    let config_map = serde_json::json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "calico", "namespace": "default"}, "data": {"calico.yaml": documents}});
    let mut files = vec![serde_json::to_string(&config_map).expect("json")];
    for set in 0..50 {
        let resources: Vec<_> = (0..100)
            .map(|_| serde_json::json!({"kind": "ConfigMap", "name": "calico"}))
            .collect();
        files.push(
            serde_json::json!({"apiVersion": "addons.cluster.x-k8s.io/v1beta2", "kind": "ClusterResourceSet",
                "metadata": {"name": format!("set-{set}"), "namespace": "default"},
                "spec": {"clusterSelector": {"matchLabels": {"cni": "calico"}}, "resources": resources}})
            .to_string(),
        );
    }
    for cluster in 0..3 {
        files.push(
            serde_json::json!({"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "Cluster",
                "metadata": {"name": format!("c{cluster}"), "namespace": "default", "labels": {"cni": "calico"}},
                "spec": {"controlPlaneRef": {"apiGroup": "controlplane.cluster.x-k8s.io",
                                             "kind": "KubeadmControlPlane", "name": format!("c{cluster}")}}})
            .to_string(),
        );
    }
    std::fs::write(dir.join("all.yaml"), files.join("\n---\n")).expect("write");
    let output = run_within(
        Duration::from_secs(90),
        &["plan", "-o", "diff", "-f", &dir.display().to_string()],
    );
    let stdout = text(&output.stdout);
    assert!(output.status.success(), "{}", text(&output.stderr));
    assert_eq!(
        stdout.matches("  set-").count(),
        150,
        "50 sets for each of 3 Clusters"
    );
    assert_eq!(stdout.matches("      + ConfigMap x").count(), 3 * 50 * 100 * 20);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn broken_add_on_data_and_refused_names_fail_the_command() {
    let dir = temp_dir("broken");
    let objects = [
        serde_json::json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "nameless", "namespace": "default"},
            "data": {"a.yaml": "kind: Namespace\nmetadata: {labels: {a: b}}\n"}}),
        serde_json::json!({"apiVersion": "addons.cluster.x-k8s.io/v1beta2", "kind": "ClusterResourceSet",
            "metadata": {"name": "s", "namespace": "default"},
            "spec": {"clusterSelector": {"matchLabels": {"cni": "x"}}, "resources": [{"kind": "ConfigMap", "name": "nameless"}]}}),
        serde_json::json!({"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "Cluster",
            "metadata": {"name": "c", "namespace": "default", "labels": {"cni": "x"}},
            "spec": {"controlPlaneRef": {"apiGroup": "controlplane.cluster.x-k8s.io", "kind": "KubeadmControlPlane", "name": "c"}}}),
    ];
    let body: Vec<String> = objects.iter().map(ToString::to_string).collect();
    std::fs::write(dir.join("a.yaml"), body.join("\n---\n")).expect("write");
    let path = dir.display().to_string();
    let output = run_within(SOON, &["plan", "-o", "diff", "-f", &path]);
    let stderr = text(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains(r#"ClusterResourceSet s: ConfigMap nameless: data key "a.yaml", document 1: the object has no metadata.name"#),
        "{stderr}"
    );
    let long = "a".repeat(1 << 20);
    let refused = [
        r#"{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "Bad_Name!"}}"#.to_owned(),
        format!(r#"{{"apiVersion": "addons.cluster.x-k8s.io/v1beta2", "kind": "ClusterResourceSetBinding", "metadata": {{"name": "{long}", "namespace": "default"}}, "spec": {{"clusterName": "c"}}}}"#),
        r#"{"apiVersion": "addons.cluster.x-k8s.io/v1beta2", "kind": "ClusterResourceSet", "metadata": {"name": "n", "namespace": "default"}, "spec": null}"#.to_owned(),
        r#"{"apiVersion": "runtime.cluster.x-k8s.io/v1beta2", "kind": "ExtensionConfig", "metadata": {"name": "e"}, "spec": null}"#.to_owned(),
    ];
    std::fs::write(dir.join("a.yaml"), refused.join("\n---\n")).expect("write");
    let output = run_within(SOON, &["check", "-f", &path]);
    // As kubectl: refusals on stderr.
    let stdout = text(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stdout}");
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 4, "{stdout}");
    assert!(lines[0].starts_with(
        r#"The ConfigMap "Bad_Name!" is invalid: metadata.name: Invalid value: "Bad_Name!": a lowercase RFC 1123 subdomain must consist of"#
    ));
    assert!(lines[1].starts_with("The ClusterResourceSetBinding \"aaaa"));
    assert!(
        lines[1].contains("must be no more than 253 characters"),
        "{}",
        lines[1]
    );
    assert!(lines[1].len() < 8192, "a 1 MB name is not echoed whole");
    assert_eq!(
        lines[2],
        r#"The ClusterResourceSet "n" is invalid: spec: Required value"#
    );
    assert_eq!(
        lines[3],
        r#"The ExtensionConfig "e" is invalid: spec: Required value"#
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// Most memory a refused hostile manifest may take (the refusal comes before decoding). The
/// 8 MB file of 4.2 million values peaks at 64.0-64.2 MiB in a debug build (2026-11-28: the
/// input, the scanner's ~14 bytes per value counted up to the 4,000,000th, and the binary), so
/// 64 MiB sat on the edge and failed one run in two; decoding those values takes some 430 MiB
/// (54 times the input), which this bound still refuses.
const REFUSED_PEAK_KIB: u64 = 96 * 1024;

/// Files nested 100,000 deep, in flow YAML, as JSON and as a flow mapping: refused at the
/// 129th level as they are read (the full reader took a minute on the first and more than two on
/// the last), by every reader of manifests.
#[test]
fn deeply_nested_manifests_are_refused_as_they_are_read() {
    let dir = temp_dir("deep");
    let files = [
        (
            "flow.yaml",
            format!("x: {}{}\n", "[".repeat(100_000), "]".repeat(100_000)),
        ),
        (
            "deep.json",
            format!("{}1{}", r#"{"a": "#.repeat(100_000), "}".repeat(100_000)),
        ),
        (
            "map.yaml",
            format!("{}1{}\n", "{a: ".repeat(125_000), "}".repeat(125_000)),
        ),
    ];
    for (name, content) in files {
        let path = dir.join(name);
        std::fs::write(&path, content).expect("write");
        let path = path.display().to_string();
        for args in [
            vec!["check", "-f", &path],
            vec!["plan", "-f", "examples/quickstart", "--current", &path],
            vec!["convert", "-f", &path, "--to", "v1beta2"],
        ] {
            let (output, peak) = run_measured(SOON, &args);
            let stderr = text(&output.stderr);
            assert_eq!(output.status.code(), Some(2), "{args:?}: {stderr}");
            assert!(
                stderr.contains("document 1: nested deeper than 128 levels at line 1"),
                "{args:?}: {stderr}"
            );
            if let Some(peak) = peak {
                assert!(peak < REFUSED_PEAK_KIB, "{args:?}: peak {peak} KiB");
            }
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// 4.2 million values in one 8 MB file (the reader once took some 54 times its input): refused
/// with the bound's name before any is decoded.
#[test]
fn manifests_past_the_value_budget_are_refused_before_decoding() {
    let dir = temp_dir("many");
    let path = dir.join("many.yaml");
    std::fs::write(&path, format!("x: [{}1]\n", "1,".repeat(4_200_000))).expect("write");
    let path = path.display().to_string();
    let (output, peak) = run_measured(SOON, &["check", "-f", &path]);
    let stderr = text(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("document 1: more than 4000000 values in the manifests read (at line 1)"),
        "{stderr}"
    );
    if let Some(peak) = peak {
        assert!(peak < REFUSED_PEAK_KIB, "peak {peak} KiB");
    }
    let _ = std::fs::remove_dir_all(&dir);
}
