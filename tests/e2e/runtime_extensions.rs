//! Runtime Extensions end to end, with the test extension built on Cluster API's Runtime SDK:
//! `capi-topology serve` discovers an ExtensionConfig (its `status.handlers` and `Discovered`),
//! injects a CA from the Secret an annotation names (once the Secret exists), and writes the
//! `status.variables` of seed 003's class from the inline definitions and the extension's
//! DiscoverVariables answer, with the conflict on `http-proxy` flagged. Seed 003's Cluster picks
//! one definition per value with `definitionFrom` (a v1beta1 field Cluster API v1.14 dropped; the
//! seed's behaviour stays): it is admitted as written, stored as v1beta2 with `definitionFrom`
//! kept aside, and read back intact through v1beta1; a value without `definitionFrom` is refused.
//! On the class without the inline `http-proxy` a single value with `definitionFrom` is admitted
//! and kept the same way. A class whose
//! DiscoverVariables handler is not registered gets `VariablesReady` False, as do the classes of
//! an ExtensionConfig once it is deleted.

#[path = "../common/extension.rs"]
pub(crate) mod extension;

use std::time::Duration;

use base64::Engine;
use serde_json::{json, Value};

use crate::controllers::CONVERGED as TOPOLOGY_CONVERGED;
use crate::env::{repo_path, Env};
use crate::kubectl::Kubectl;
use crate::manifests::{quickstart_templates, render, with, without};
use crate::process::poll;
use extension::Extension;

/// How long the controllers may take to discover and write a status.
const CONVERGED: Duration = Duration::from_secs(60);
/// The ExtensionConfig's name, as seed 003 names its handlers.
pub(crate) const CONFIG: &str = "k8s-upgrade-with-runtimesdk";

#[test]
fn runtime_extensions_discover_handlers_and_variables() {
    let mut env = Env::with_webhooks("runtime-extensions");
    let extension = Extension::start();
    if let Err(e) = scenario(&env.kubectl, &extension) {
        panic!("{e}\n{}", env.logs());
    }
    if let Err(e) = crate::runtime_isolation::patched_then_isolated(&mut env, extension) {
        panic!("{e}\n{}", env.logs());
    }
}

fn scenario(kubectl: &Kubectl, extension: &Extension) -> Result<(), String> {
    let url = format!("https://{}", extension.addr);
    let ca_bundle = base64::engine::general_purpose::STANDARD.encode(&extension.ca_pem);

    // Discovery: status.handlers and Discovered True.
    kubectl.accepts(&extension_config(CONFIG, &url, Some(&ca_bundle), None).to_string())?;
    let config = wait_discovered(kubectl, CONFIG)?;
    let handlers = &config["status"]["handlers"];
    let discover = handlers
        .as_array()
        .into_iter()
        .flatten()
        .find(|h| h["name"] == format!("discover-variables.{CONFIG}"))
        .ok_or_else(|| format!("no discover-variables handler in {handlers}"))?;
    expect(
        discover["requestHook"]["hook"] == "DiscoverVariables"
            && discover["timeoutSeconds"] == 10
            && discover["failurePolicy"] == "Fail",
        format!("the discovered handler as Cluster API lists it: {discover}"),
    )?;

    // A settled config is not written again (each write would trigger another discovery).
    std::thread::sleep(Duration::from_secs(3));
    let again = kubectl.get_json("extensionconfig", "default", CONFIG)?;
    expect(
        again["metadata"]["resourceVersion"] == config["metadata"]["resourceVersion"],
        format!(
            "the status is written once: {} then {}",
            config["status"], again["status"]
        ),
    )?;

    // CA injection: no CA until the annotated Secret exists, then the Secret's ca.crt. This
    // config is written as v1alpha1, the deprecated version a v1.10 client still sends.
    let annotation = "runtime.cluster.x-k8s.io/inject-ca-from-secret";
    let mut injected = extension_config("injected", &url, None, Some((annotation, "default/extension-ca")));
    injected["apiVersion"] = json!("runtime.cluster.x-k8s.io/v1alpha1");
    kubectl.accepts(&injected.to_string())?;
    kubectl.accepts(
        &json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "extension-ca", "namespace": "default"},
                "data": {"ca.crt": ca_bundle}})
        .to_string(),
    )?;
    let injected = wait_discovered(kubectl, "injected")?;
    expect(
        injected["spec"]["clientConfig"]["caBundle"] == json!(ca_bundle),
        format!("the Secret's CA is injected: {}", injected["spec"]),
    )?;

    // Seed 003's class: inline and discovered definitions, http-proxy in conflict.
    let fixtures = fixtures();
    kubectl.accepts(&render(&quickstart_templates()))?;
    kubectl.accepts(&render(&[fixtures[0].clone()]))?;
    let class = wait_condition(kubectl, "clusterclass", "VariablesReady", "proxy-class", "True")?;
    let variables = &class["status"]["variables"];
    let proxy = variables
        .as_array()
        .into_iter()
        .flatten()
        .find(|v| v["name"] == "http-proxy")
        .ok_or_else(|| format!("no http-proxy in {variables}"))?;
    let froms: Vec<&Value> = proxy["definitions"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|d| &d["from"])
        .collect();
    expect(
        proxy["definitionsConflict"] == true && froms == [&json!("inline"), &json!("lbImageRepository")],
        format!("http-proxy has both definitions, in conflict: {proxy}"),
    )?;
    let names: Vec<&Value> = variables
        .as_array()
        .into_iter()
        .flatten()
        .map(|v| &v["name"])
        .collect();
    expect(
        names
            == [
                &json!("http-proxy"),
                &json!("lbImageRepository"),
                &json!("no-proxy"),
            ],
        format!("inline and discovered variables, by name: {variables}"),
    )?;

    // Seed 003's Cluster, one value per conflicting definition with definitionFrom, is admitted
    // (product decision: the seed's behaviour stays, although v1.14 has no definitionFrom); a
    // value without definitionFrom cannot say which definition it is for and is refused.
    let seed = fixtures[1].clone();
    kubectl.accepts(&seed.to_string())?;
    seed_kept(kubectl, &seed)?;
    let without_from = with(
        with(seed.clone(), "/metadata/name", json!("proxy-ambiguous")),
        "/spec/topology/variables",
        json!([{"name": "no-proxy", "value": "internal.domain.com"},
               {"name": "http-proxy", "value": "http://proxy.example2.com:1234"}]),
    );
    kubectl.rejects(
        &without_from.to_string(),
        &[
            "spec.topology.variables[http-proxy].definitionFrom: Required value:",
            r#"variable "http-proxy" has conflicting definitions"#,
        ],
    )?;

    // Without the inline http-proxy: seed 003's Cluster, written as v1beta1 with definitionFrom
    // on its one http-proxy value, is admitted, stored as v1beta2, and reads back through v1beta1
    // as written.
    let discovered_only = with(
        without(fixtures[0].clone(), "/spec/variables", "name", "http-proxy"),
        "/metadata/name",
        json!("proxy-discovered"),
    );
    kubectl.accepts(&render(&[discovered_only]))?;
    wait_condition(
        kubectl,
        "clusterclass",
        "VariablesReady",
        "proxy-discovered",
        "True",
    )?;
    kubectl.accepts(&proxy_dev(&seed).to_string())?;
    definition_from_kept(kubectl, PROXY_DEV)?;

    // A DiscoverVariables handler no ExtensionConfig registers: the class's variables are not
    // reconciled, saying why.
    let orphan = with(
        with(fixtures[0].clone(), "/metadata/name", json!("orphan-class")),
        "/spec/patches/0/external/discoverVariablesExtension",
        json!("discover-variables.missing"),
    );
    kubectl.accepts(&render(&[orphan]))?;
    let class = wait_condition(kubectl, "clusterclass", "VariablesReady", "orphan-class", "False")?;
    let condition = condition_of(&class, "VariablesReady");
    let message = condition["message"].as_str().unwrap_or_default();
    expect(
        condition["reason"] == "VariableDiscoveryFailed"
            && message.starts_with(
                "VariableDiscovery failed: failed to call DiscoverVariables for patch lbImageRepository: \
                 failed to call extension handler \"discover-variables.missing\"",
            ),
        format!("VariablesReady says why: {condition}"),
    )?;
    std::thread::sleep(Duration::from_secs(3));
    let again = kubectl.get_json("clusterclass", "default", "orphan-class")?;
    expect(
        again["metadata"]["resourceVersion"] == class["metadata"]["resourceVersion"],
        format!(
            "a failing class's status is written once: {} then {}",
            class["status"], again["status"]
        ),
    )?;

    // A deleted ExtensionConfig's handlers are forgotten: its classes' variables are no longer
    // reconciled (they keep the variables listed).
    kubectl.ok(&["delete", "extensionconfig", CONFIG])?;
    let class = wait_condition(kubectl, "clusterclass", "VariablesReady", "proxy-class", "False")?;
    let condition = condition_of(&class, "VariablesReady");
    expect(
        condition["message"]
            .as_str()
            .unwrap_or_default()
            .ends_with(&format!(
                "handler with name \"discover-variables.{CONFIG}\" has not been registered"
            ))
            && class["status"]["variables"].as_array().map_or(0, Vec::len) == 3,
        format!("VariablesReady False, variables kept: {}", class["status"]),
    )
}

/// The name of seed 003's Cluster on the class without the inline http-proxy.
const PROXY_DEV: &str = "proxy-discovered-dev";

/// Seed 003's Cluster `seed` on the class without the inline http-proxy: its one http-proxy
/// value keeps `definitionFrom: lbImageRepository`.
fn proxy_dev(seed: &Value) -> Value {
    with(
        with(
            with(seed.clone(), "/spec/topology/class", json!("proxy-discovered")),
            "/metadata/name",
            json!(PROXY_DEV),
        ),
        "/spec/topology/variables",
        json!([{"name": "no-proxy", "value": "internal.domain.com"},
               {"name": "http-proxy", "definitionFrom": "lbImageRepository",
                "value": {"host": "proxy.example2.com", "port": 1234}}]),
    )
}

/// `(name, definitionFrom, value)` of every value of `cluster`'s topology variables.
fn values_of(cluster: &Value) -> Vec<(Value, Value, Value)> {
    cluster["spec"]["topology"]["variables"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|v| {
            let from = v.get("definitionFrom").cloned().unwrap_or(Value::Null);
            (v["name"].clone(), from, v["value"].clone())
        })
        .collect()
}

/// Seed 003's Cluster as admitted: v1beta2 (what etcd holds) has both http-proxy values without
/// definitionFrom, kept aside in the v1beta1-fields annotation; v1beta1 reads every value the
/// seed wrote back with its definitionFrom.
fn seed_kept(kubectl: &Kubectl, seed: &Value) -> Result<(), String> {
    let hub = kubectl.get_json("clusters.v1beta2.cluster.x-k8s.io", "default", "proxy-dev")?;
    let spoke = kubectl.get_json("clusters.v1beta1.cluster.x-k8s.io", "default", "proxy-dev")?;
    let proxies: Vec<_> = values_of(&hub)
        .into_iter()
        .filter(|(name, _, _)| name == "http-proxy")
        .collect();
    expect(
        proxies.len() == 2
            && proxies.iter().all(|(_, from, _)| from.is_null())
            && hub["metadata"]["annotations"]["topology.cluster.x-k8s.io/v1beta1-fields"]
                .as_str()
                .is_some_and(|kept| kept.contains("inline") && kept.contains("lbImageRepository")),
        format!("the v1beta2 Cluster: both values, definitionFrom kept aside: {hub:#}"),
    )?;
    let read = values_of(&spoke);
    expect(
        values_of(seed).iter().all(|value| read.contains(value))
            && spoke["metadata"]["annotations"]
                .get("topology.cluster.x-k8s.io/v1beta1-fields")
                .is_none(),
        format!("the v1beta1 Cluster has the values as written: {spoke:#}"),
    )
}

/// Cluster `name` as admitted: the discovered variable's default set; v1beta2 (what etcd holds)
/// has no definitionFrom but keeps it aside, and v1beta1 reads it back where it was written.
fn definition_from_kept(kubectl: &Kubectl, name: &str) -> Result<(), String> {
    let hub = kubectl.get_json("clusters.v1beta2.cluster.x-k8s.io", "default", name)?;
    let spoke = kubectl.get_json("clusters.v1beta1.cluster.x-k8s.io", "default", name)?;
    let values = &hub["spec"]["topology"]["variables"];
    let value = |variables: &Value, name: &str| {
        variables
            .as_array()
            .into_iter()
            .flatten()
            .find(|v| v["name"] == name)
            .cloned()
            .unwrap_or(Value::Null)
    };
    expect(
        value(values, "lbImageRepository")["value"] == "kindest"
            && value(values, "http-proxy").get("definitionFrom").is_none()
            && hub["metadata"]["annotations"]["topology.cluster.x-k8s.io/v1beta1-fields"]
                .as_str()
                .is_some_and(|kept| kept.contains("lbImageRepository")),
        format!("the v1beta2 Cluster: defaulted, definitionFrom kept aside: {hub:#}"),
    )?;
    let proxy = value(&spoke["spec"]["topology"]["variables"], "http-proxy");
    expect(
        proxy["definitionFrom"] == "lbImageRepository"
            && spoke["apiVersion"] == "cluster.x-k8s.io/v1beta1"
            && spoke["metadata"]["annotations"]
                .get("topology.cluster.x-k8s.io/v1beta1-fields")
                .is_none(),
        format!("the v1beta1 Cluster as written: {spoke:#}"),
    )
}

/// A v1beta2 ExtensionConfig at `url` trusting `ca_bundle`, or annotated to have it injected.
pub(crate) fn extension_config(
    name: &str,
    url: &str,
    ca_bundle: Option<&str>,
    annotation: Option<(&str, &str)>,
) -> Value {
    let mut config = json!({"apiVersion": "runtime.cluster.x-k8s.io/v1beta2", "kind": "ExtensionConfig",
        "metadata": {"name": name}, "spec": {"clientConfig": {"url": url}}});
    if let Some(ca_bundle) = ca_bundle {
        config["spec"]["clientConfig"]["caBundle"] = json!(ca_bundle);
    }
    if let Some((key, value)) = annotation {
        let mut annotations = serde_json::Map::new();
        annotations.insert(key.to_owned(), json!(value));
        config["metadata"]["annotations"] = Value::Object(annotations);
    }
    config
}

/// The class and the Cluster of tests/e2e/fixtures/runtime-extensions.yaml.
fn fixtures() -> Vec<Value> {
    let path = repo_path("tests/e2e/fixtures/runtime-extensions.yaml");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_yaml_ng::Deserializer::from_str(&text)
        .map(|document| serde::Deserialize::deserialize(document).expect("the fixture is YAML"))
        .collect()
}

/// Waits until ExtensionConfig `name` is discovered (`Discovered` True, handlers listed).
pub(crate) fn wait_discovered(kubectl: &Kubectl, name: &str) -> Result<Value, String> {
    poll(
        &format!("ExtensionConfig {name} to be discovered"),
        CONVERGED,
        || {
            let config = kubectl.get_json("extensionconfig", "default", name)?;
            let discovered = config["status"]["conditions"]
                .as_array()
                .into_iter()
                .flatten()
                .any(|c| c["type"] == "Discovered" && c["status"] == "True");
            let handlers = config["status"]["handlers"].as_array().map_or(0, Vec::len);
            (discovered && handlers == 3)
                .then(|| config.clone())
                .ok_or_else(|| format!("status {}", config["status"]))
        },
    )
}

/// `Ok` when `holds`, else the failure `what` describes.
pub(crate) fn expect(holds: bool, what: String) -> Result<(), String> {
    if holds {
        Ok(())
    } else {
        Err(format!("expected {what}"))
    }
}

/// The condition `type_` of `object`'s status, or null.
pub(crate) fn condition_of(object: &Value, type_: &str) -> Value {
    object["status"]["conditions"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|c| c["type"] == type_)
        .cloned()
        .unwrap_or(Value::Null)
}

/// Waits until the `resource` `name` in `default` has condition `type_` at `status`.
pub(crate) fn wait_condition(
    kubectl: &Kubectl,
    resource: &str,
    type_: &str,
    name: &str,
    status: &str,
) -> Result<Value, String> {
    poll(
        &format!("{resource} {name}'s {type_} {status}"),
        TOPOLOGY_CONVERGED,
        || {
            let object = kubectl.get_json(resource, "default", name)?;
            (condition_of(&object, type_)["status"] == status)
                .then(|| object.clone())
                .ok_or_else(|| format!("{type_} {}", condition_of(&object, type_)))
        },
    )
}
