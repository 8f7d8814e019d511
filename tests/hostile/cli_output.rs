//! Hostile kubeconfigs and names against what the commands print: a failing exec credential
//! plugin, a removed auth provider with a command to run, a kubeconfig that does not parse, and
//! an object name made of terminal control sequences. Nothing secret and no control character
//! reaches the output, and nothing is run that kubectl would not run; each ends in seconds.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use crate::offline::{run_within, temp_dir, text, SOON};

const SECRETS: [&str; 3] = ["env-secret-789", "arg-secret-456", "out-secret-123"];

/// A kubeconfig whose one user is `user` (YAML, indented for `users[0].user`).
fn kubeconfig(dir: &Path, user: &str) -> String {
    let path = dir.join("kubeconfig");
    let text = format!(
        "apiVersion: v1\nkind: Config\ncurrent-context: c\nclusters:\n- name: c\n  cluster:\n    \
         server: https://127.0.0.1:1\ncontexts:\n- name: c\n  context: {{cluster: c, user: u}}\nusers:\n\
         - name: u\n  user:\n{user}"
    );
    std::fs::write(&path, text).expect("write the kubeconfig");
    path.display().to_string()
}

/// `plan --kubeconfig config` over the Quickstart, which must fail (exit 2): stdout and stderr.
fn plan_failing_with(config: &str) -> (String, String) {
    let output = run_within(
        SOON,
        &["plan", "-f", "examples/quickstart/", "--kubeconfig", config],
    );
    let stderr = text(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    (text(&output.stdout), stderr)
}

fn script(path: &Path, body: &str) {
    std::fs::write(path, format!("#!/bin/sh\n{body}\n")).expect("write the script");
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
}

#[test]
fn a_failing_exec_plugin_is_named_without_its_secrets() {
    let dir = temp_dir("exec-plugin");
    let plugin = dir.join("plugin.sh");
    script(&plugin, "echo '{\"token\": \"out-secret-123\"}'\nexit 3");
    let config = kubeconfig(
        &dir,
        &format!(
            "    exec:\n      apiVersion: client.authentication.k8s.io/v1\n      command: {}\n      \
             args: [--token=arg-secret-456]\n      env: [{{name: API_KEY, value: env-secret-789}}]\n      \
             interactiveMode: Never\n",
            plugin.display()
        ),
    );
    let (stdout, stderr) = plan_failing_with(&config);
    // kubectl 1.34 says: getting credentials: exec: executable PATH failed with exit code 3
    let expected = format!(
        "getting credentials: exec: executable {} failed with exit code 3",
        plugin.display()
    );
    assert!(stderr.contains(&expected), "{stderr}");
    for secret in SECRETS {
        assert!(
            !stderr.contains(secret) && !stdout.contains(secret),
            "{secret}: {stderr}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_removed_auth_provider_runs_nothing() {
    let dir = temp_dir("auth-provider");
    let marker = dir.join("RAN");
    let command = dir.join("gcloud.sh");
    script(&command, &format!("touch {}", marker.display()));
    let config = kubeconfig(
        &dir,
        &format!(
            "    auth-provider:\n      name: gcp\n      config:\n        cmd-path: {}\n        cmd-args: x\n",
            command.display()
        ),
    );
    let (_, stderr) = plan_failing_with(&config);
    assert!(!marker.exists(), "the provider's cmd-path ran");
    assert!(
        stderr.contains("The gcp auth plugin has been removed."),
        "{stderr}"
    );
    assert!(stderr.contains("gke-gcloud-auth-plugin"), "{stderr}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_kubeconfig_that_does_not_parse_is_located_not_quoted() {
    let dir = temp_dir("kubeconfig-parse");
    let config = kubeconfig(
        &dir,
        "    token: [env-secret-789, {arg-secret-456: out-secret-123}]\n",
    );
    let (_, stderr) = plan_failing_with(&config);
    assert!(
        stderr.contains("the kubeconfig does not parse at line"),
        "{stderr}"
    );
    for secret in SECRETS {
        assert!(!stderr.contains(secret), "{secret}: {stderr}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// A file name is printed raw in every message about the file; names of objects are quoted by
/// the API server's messages already, but a repository may hold any file name.
#[test]
fn a_crafted_file_name_cannot_clear_the_screen_or_fake_an_answer() {
    let dir = temp_dir("crafted-name");
    let crafted = "x\u{1b}[2J\u{1b}[H\rconfigmap ok created\u{7}\u{9b}0m";
    let broken = dir.join(format!("{crafted}.yaml"));
    std::fs::write(&broken, "kind: ConfigMap\n").expect("write");
    let refused = dir.join(format!("{crafted}.json"));
    let cluster = serde_json::json!({"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "Cluster",
        "metadata": {"name": "Not_A_Name", "namespace": "default"},
        "spec": {"topology": {"classRef": {"name": "quick-start"}, "version": "v1.31.2"}}});
    std::fs::write(&refused, cluster.to_string()).expect("write");
    let (broken, refused) = (broken.display().to_string(), refused.display().to_string());
    for args in [&["check", "-f", &broken][..], &["plan", "-f", &refused][..]] {
        let output = run_within(SOON, args);
        let printed = text(&output.stdout) + &text(&output.stderr);
        assert!(
            !printed.contains(['\u{1b}', '\r', '\u{7}', '\u{9b}']),
            "{args:?} printed a control character: {printed:?}"
        );
        assert!(
            printed.contains("x^[[2J^[[H\\rconfigmap ok created^G\\u009b0m"),
            "{args:?}: {printed}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}
