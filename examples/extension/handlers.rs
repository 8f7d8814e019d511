//! What the extension answers, free of HTTP: one function per hook, from the request to the
//! response, on `capi_topology::api::runtime` types. Start here to write your own handlers.
//!
//! - GeneratePatches `generate-patches`: sets a DockerClusterTemplate's load balancer image
//!   repository from the `lbImageRepository` variable, and adds a containerd proxy drop-in to a
//!   KubeadmControlPlaneTemplate from the `http-proxy` variable. Other kinds are left alone.
//! - ValidateTopology `validate-topology`: fails when `http-proxy` is set but a
//!   KubeadmControlPlaneTemplate lacks the drop-in (the patches were not applied).
//! - DiscoverVariables `discover-variables`: declares both variables.
//!
//! Handlers must be deterministic: the same request gets the same answer (capi-topology caches
//! answers by request), so read nothing but the request.

use std::collections::BTreeMap;

use capi_topology::api::runtime::{
    DiscoverVariablesRequest, DiscoverVariablesResponse, DiscoveryResponse, ExtensionHandler,
    GeneratePatchesRequest, GeneratePatchesResponse, GeneratePatchesResponseItem, GroupVersionHook,
    HolderReference, PatchType, ResponseStatus, ValidateTopologyRequest, ValidateTopologyResponse, Variable,
    HOOKS_API_VERSION,
};
use capi_topology::api::ClusterClassVariable;
use serde_json::{json, Value};

/// The GeneratePatches handler's name.
pub const GENERATE_PATCHES: &str = "generate-patches";
/// The ValidateTopology handler's name.
pub const VALIDATE_TOPOLOGY: &str = "validate-topology";
/// The DiscoverVariables handler's name.
pub const DISCOVER_VARIABLES: &str = "discover-variables";

const LB_IMAGE_REPOSITORY: &str = "lbImageRepository";
const HTTP_PROXY: &str = "http-proxy";
/// The containerd drop-in `http-proxy` becomes on control plane nodes.
pub const PROXY_DROP_IN: &str = "/etc/systemd/system/containerd.service.d/http-proxy.conf";
/// The name of the builtin variables, merged rather than replaced by a template's own.
const BUILTIN: &str = "builtin";

/// Variable values by name, the request's merged with a template's.
type Variables = BTreeMap<String, Value>;

/// The Discovery answer: the three handlers, with the server's default timeout and policy.
pub fn discovery() -> DiscoveryResponse {
    let handler = |name: &str, hook: &str| ExtensionHandler {
        name: name.to_owned(),
        request_hook: GroupVersionHook {
            api_version: HOOKS_API_VERSION.to_owned(),
            hook: hook.to_owned(),
        },
        timeout_seconds: None,
        failure_policy: None,
    };
    DiscoveryResponse {
        api_version: HOOKS_API_VERSION.to_owned(),
        kind: "DiscoveryResponse".to_owned(),
        status: ResponseStatus::Success,
        message: String::new(),
        handlers: vec![
            handler(GENERATE_PATCHES, "GeneratePatches"),
            handler(VALIDATE_TOPOLOGY, "ValidateTopology"),
            handler(DISCOVER_VARIABLES, "DiscoverVariables"),
        ],
    }
}

/// A JSON patch for every template of the request (empty for the kinds it does not know), or
/// a Failure naming the variable that could not be read.
pub fn generate_patches(request: &GeneratePatchesRequest) -> GeneratePatchesResponse {
    let mut response = GeneratePatchesResponse {
        api_version: HOOKS_API_VERSION.to_owned(),
        kind: "GeneratePatchesResponse".to_owned(),
        status: ResponseStatus::Success,
        message: String::new(),
        items: Vec::with_capacity(request.items.len()),
    };
    let global = to_map(&request.variables);
    for item in &request.items {
        let variables = merged(&global, &item.variables);
        let mut patched = item.object.clone();
        let outcome = match group_kind(&item.object).as_str() {
            "DockerClusterTemplate.infrastructure.cluster.x-k8s.io" => {
                patch_docker_cluster_template(&mut patched, &variables)
            }
            "KubeadmControlPlaneTemplate.controlplane.cluster.x-k8s.io" => {
                patch_kubeadm_control_plane_template(&mut patched, &variables)
            }
            _ => Ok(()),
        };
        let patch = outcome.and_then(|()| {
            serde_json::to_vec(&json_patch::diff(&item.object, &patched)).map_err(|e| e.to_string())
        });
        match patch {
            Ok(patch) => response.items.push(GeneratePatchesResponseItem {
                uid: item.uid.clone(),
                patch_type: PatchType::JsonPatch,
                patch,
            }),
            Err(message) => return failed_generation(message),
        }
    }
    response
}

fn failed_generation(message: String) -> GeneratePatchesResponse {
    GeneratePatchesResponse {
        api_version: HOOKS_API_VERSION.to_owned(),
        kind: "GeneratePatchesResponse".to_owned(),
        status: ResponseStatus::Failure,
        message,
        items: Vec::new(),
    }
}

/// Success unless `http-proxy` is set and a KubeadmControlPlaneTemplate lacks its drop-in.
pub fn validate_topology(request: &ValidateTopologyRequest) -> ValidateTopologyResponse {
    let global = to_map(&request.variables);
    let problem = request.items.iter().find_map(|item| {
        let variables = merged(&global, &item.variables);
        validate_item(&item.object, &item.holder_reference, &variables).err()
    });
    ValidateTopologyResponse {
        api_version: HOOKS_API_VERSION.to_owned(),
        kind: "ValidateTopologyResponse".to_owned(),
        status: if problem.is_some() {
            ResponseStatus::Failure
        } else {
            ResponseStatus::Success
        },
        message: problem.unwrap_or_default(),
    }
}

/// The definitions of the variables the patches read: `http-proxy` as an object, so that it
/// conflicts with an inline string definition of the same name.
pub fn discover_variables(_request: &DiscoverVariablesRequest) -> DiscoverVariablesResponse {
    let definitions = json!([
        {"name": LB_IMAGE_REPOSITORY, "required": false, "schema": {"openAPIV3Schema": {
            "type": "string", "default": "kindest",
            "description": "lbImageRepository is the image repository of the load balancer."}}},
        {"name": HTTP_PROXY, "required": false, "schema": {"openAPIV3Schema": {
            "type": "object", "description": "proxy for http calls.",
            "example": {"host": "proxy.example.com", "port": 3128},
            "required": ["host"],
            "properties": {
                "host": {"type": "string", "minLength": 1},
                "port": {"type": "integer", "minimum": 1, "maximum": 65535, "default": 3128}}}}}
    ]);
    let (status, message, variables) = match serde_json::from_value::<Vec<ClusterClassVariable>>(definitions)
    {
        Ok(variables) => (ResponseStatus::Success, String::new(), variables),
        Err(error) => (ResponseStatus::Failure, error.to_string(), Vec::new()),
    };
    DiscoverVariablesResponse {
        api_version: HOOKS_API_VERSION.to_owned(),
        kind: "DiscoverVariablesResponse".to_owned(),
        status,
        message,
        variables,
    }
}

fn patch_docker_cluster_template(template: &mut Value, variables: &Variables) -> Result<(), String> {
    let Some(repository) = variables.get(LB_IMAGE_REPOSITORY) else {
        return Ok(());
    };
    if !repository.is_string() {
        return Err(format!(
            "variable {LB_IMAGE_REPOSITORY:?}: not a string: {repository}"
        ));
    }
    set(
        template,
        &["spec", "template", "spec", "loadBalancer", "imageRepository"],
        repository.clone(),
    )
}

/// Replaces any drop-in at [`PROXY_DROP_IN`] with one for the proxy, after the other files.
fn patch_kubeadm_control_plane_template(template: &mut Value, variables: &Variables) -> Result<(), String> {
    let Some(proxy) = proxy(variables)? else {
        return Ok(());
    };
    let path = ["spec", "template", "spec", "kubeadmConfigSpec", "files"];
    let mut files: Vec<Value> = match get(template, &path) {
        Some(Value::Array(files)) => files
            .iter()
            .filter(|file| file["path"] != PROXY_DROP_IN)
            .cloned()
            .collect(),
        Some(other) => return Err(format!("{} is not a list: {other}", path.join("."))),
        None => Vec::new(),
    };
    files.push(json!({
        "path": PROXY_DROP_IN,
        "owner": "root:root",
        "permissions": "0644",
        "content": proxy.drop_in(),
    }));
    set(template, &path, Value::Array(files))
}

fn validate_item(template: &Value, holder: &HolderReference, variables: &Variables) -> Result<(), String> {
    if template["kind"] != "KubeadmControlPlaneTemplate" {
        return Ok(());
    }
    let Some(proxy) = proxy(variables)? else {
        return Ok(());
    };
    let content = proxy.drop_in();
    let files = get(
        template,
        &["spec", "template", "spec", "kubeadmConfigSpec", "files"],
    );
    let present = files.and_then(Value::as_array).is_some_and(|files| {
        files
            .iter()
            .any(|file| file["path"] == PROXY_DROP_IN && file["content"] == content.as_str())
    });
    if present {
        Ok(())
    } else {
        Err(format!(
            "KubeadmControlPlaneTemplate {} of {} {}: http-proxy is set but {PROXY_DROP_IN} is missing or stale",
            template["metadata"]["name"].as_str().unwrap_or_default(),
            holder.kind,
            holder.name
        ))
    }
}

/// The `http-proxy` variable's value.
struct HttpProxy {
    host: String,
    port: u64,
}

impl HttpProxy {
    /// The systemd drop-in that points containerd at the proxy.
    fn drop_in(&self) -> String {
        format!(
            "[Service]\nEnvironment=\"HTTP_PROXY=http://{}:{}\"\n",
            self.host, self.port
        )
    }
}

/// The `http-proxy` variable, if set: a host, and a port that defaults to 3128.
fn proxy(variables: &Variables) -> Result<Option<HttpProxy>, String> {
    let Some(value) = variables.get(HTTP_PROXY) else {
        return Ok(None);
    };
    let failed = |reason: &str| format!("variable {HTTP_PROXY:?}: {reason}");
    let host = match &value["host"] {
        Value::String(host) if !host.is_empty() => host.clone(),
        Value::Null | Value::String(_) => return Err(failed("host must be set")),
        other => return Err(failed(&format!("host is not a string: {other}"))),
    };
    let port = match &value["port"] {
        Value::Null => 3128,
        port => match port.as_u64() {
            Some(0) => 3128,
            Some(port) => port,
            None => return Err(failed(&format!("port is not a number: {port}"))),
        },
    };
    Ok(Some(HttpProxy { host, port }))
}

/// Variable values by name.
fn to_map(variables: &[Variable]) -> Variables {
    variables
        .iter()
        .map(|v| (v.name.clone(), v.value.clone()))
        .collect()
}

/// The request's variables with a template's own over them; the builtins are merged field by
/// field (a template adds its MachineDeployment's to the Cluster's).
fn merged(global: &Variables, own: &[Variable]) -> Variables {
    let mut variables = global.clone();
    for variable in own {
        match (variables.get_mut(&variable.name), &variable.value) {
            (Some(Value::Object(base)), Value::Object(extra)) if variable.name == BUILTIN => {
                base.extend(extra.iter().map(|(k, v)| (k.clone(), v.clone())));
            }
            _ => {
                variables.insert(variable.name.clone(), variable.value.clone());
            }
        }
    }
    variables
}

/// `Kind.group` of an object.
fn group_kind(object: &Value) -> String {
    let api_version = object["apiVersion"].as_str().unwrap_or_default();
    let group = api_version.rsplit_once('/').map_or("", |(group, _)| group);
    format!("{}.{group}", object["kind"].as_str().unwrap_or_default())
}

fn get<'a>(object: &'a Value, path: &[&str]) -> Option<&'a Value> {
    path.iter().try_fold(object, |value, key| value.get(key))
}

/// Sets the field at `path`, making the objects on the way.
fn set(object: &mut Value, path: &[&str], value: Value) -> Result<(), String> {
    let Some((last, parents)) = path.split_last() else {
        return Ok(());
    };
    let mut current = object;
    for (depth, key) in parents.iter().enumerate() {
        let Value::Object(fields) = current else {
            return Err(format!("{} is not an object", path[..depth].join(".")));
        };
        current = fields.entry(*key).or_insert_with(|| json!({}));
    }
    match current {
        Value::Object(fields) => {
            fields.insert((*last).to_owned(), value);
            Ok(())
        }
        _ => Err(format!("{} is not an object", parents.join("."))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use capi_topology::api::runtime::GeneratePatchesRequestItem;

    fn template(api_version: &str, kind: &str, spec: Value) -> Value {
        json!({"apiVersion": api_version, "kind": kind, "metadata": {"name": "t"},
               "spec": {"template": {"spec": spec}}})
    }

    fn variable(name: &str, value: Value) -> Variable {
        Variable {
            name: name.to_owned(),
            value,
        }
    }

    fn request(variables: Vec<Variable>, objects: Vec<Value>) -> GeneratePatchesRequest {
        GeneratePatchesRequest {
            variables,
            items: objects
                .into_iter()
                .enumerate()
                .map(|(n, object)| GeneratePatchesRequestItem {
                    uid: n.to_string(),
                    holder_reference: HolderReference::default(),
                    object,
                    variables: Vec::new(),
                })
                .collect(),
            ..GeneratePatchesRequest::default()
        }
    }

    fn patched(request: &GeneratePatchesRequest) -> Vec<Value> {
        let response = generate_patches(request);
        assert_eq!(response.status, ResponseStatus::Success, "{}", response.message);
        request
            .items
            .iter()
            .zip(&response.items)
            .map(|(item, answer)| {
                assert_eq!(answer.uid, item.uid);
                let patch: json_patch::Patch = serde_json::from_slice(&answer.patch).unwrap();
                let mut object = item.object.clone();
                json_patch::patch(&mut object, &patch).unwrap();
                object
            })
            .collect()
    }

    fn kcp(files: Value) -> Value {
        template(
            "controlplane.cluster.x-k8s.io/v1beta1",
            "KubeadmControlPlaneTemplate",
            json!({"kubeadmConfigSpec": {"files": files}}),
        )
    }

    #[test]
    fn the_templates_it_knows_are_patched_from_the_variables() {
        let docker = template(
            "infrastructure.cluster.x-k8s.io/v1beta1",
            "DockerClusterTemplate",
            json!({}),
        );
        let other = template(
            "infrastructure.cluster.x-k8s.io/v1beta1",
            "DockerMachineTemplate",
            json!({}),
        );
        let request = request(
            vec![
                variable(LB_IMAGE_REPOSITORY, json!("registry.example.com")),
                variable(HTTP_PROXY, json!({"host": "proxy.example.com"})),
            ],
            vec![
                docker,
                kcp(
                    json!([{"path": "/etc/extra", "content": "x"}, {"path": PROXY_DROP_IN, "content": "old"}]),
                ),
                other.clone(),
            ],
        );
        let objects = patched(&request);
        assert_eq!(
            objects[0]["spec"]["template"]["spec"]["loadBalancer"]["imageRepository"],
            "registry.example.com"
        );
        let files = &objects[1]["spec"]["template"]["spec"]["kubeadmConfigSpec"]["files"];
        assert_eq!(files.as_array().unwrap().len(), 2, "{files}");
        assert_eq!(files[0]["path"], "/etc/extra");
        assert_eq!(
            files[1]["content"],
            "[Service]\nEnvironment=\"HTTP_PROXY=http://proxy.example.com:3128\"\n"
        );
        assert_eq!(objects[2], other, "unknown kinds are left alone");
    }

    #[test]
    fn a_template_variable_overrides_the_request_one_and_builtins_merge() {
        let global = to_map(&[
            variable(LB_IMAGE_REPOSITORY, json!("a")),
            variable(BUILTIN, json!({"cluster": {"name": "c1"}})),
        ]);
        let own = [
            variable(LB_IMAGE_REPOSITORY, json!("b")),
            variable(BUILTIN, json!({"machineDeployment": {"name": "md"}})),
        ];
        let variables = merged(&global, &own);
        assert_eq!(variables[LB_IMAGE_REPOSITORY], "b");
        assert_eq!(
            variables[BUILTIN],
            json!({"cluster": {"name": "c1"}, "machineDeployment": {"name": "md"}})
        );
    }

    #[test]
    fn a_bad_variable_fails_the_call_naming_it() {
        let request = request(
            vec![variable(HTTP_PROXY, json!({"port": 80}))],
            vec![kcp(json!([]))],
        );
        let response = generate_patches(&request);
        assert_eq!(response.status, ResponseStatus::Failure);
        assert_eq!(response.message, "variable \"http-proxy\": host must be set");
    }

    #[test]
    fn validation_fails_when_the_proxy_drop_in_is_missing() {
        let proxy = variable(HTTP_PROXY, json!({"host": "p", "port": 1}));
        let request = |object: Value| ValidateTopologyRequest {
            variables: vec![proxy.clone()],
            items: vec![capi_topology::api::runtime::ValidateTopologyRequestItem {
                holder_reference: HolderReference {
                    kind: "Cluster".into(),
                    name: "c1".into(),
                    ..HolderReference::default()
                },
                object,
                variables: Vec::new(),
            }],
            ..ValidateTopologyRequest::default()
        };
        let refused = validate_topology(&request(kcp(json!([]))));
        assert_eq!(refused.status, ResponseStatus::Failure);
        assert_eq!(
            refused.message,
            format!("KubeadmControlPlaneTemplate t of Cluster c1: http-proxy is set but {PROXY_DROP_IN} is missing or stale")
        );
        let content = "[Service]\nEnvironment=\"HTTP_PROXY=http://p:1\"\n";
        let accepted = validate_topology(&request(kcp(
            json!([{"path": PROXY_DROP_IN, "content": content}]),
        )));
        assert_eq!(accepted.status, ResponseStatus::Success, "{}", accepted.message);
    }

    #[test]
    fn the_variables_are_declared_with_an_object_proxy() {
        let response = discover_variables(&DiscoverVariablesRequest::default());
        assert_eq!(response.status, ResponseStatus::Success, "{}", response.message);
        let names: Vec<&str> = response.variables.iter().map(|v| v.name.as_str()).collect();
        assert_eq!(names, [LB_IMAGE_REPOSITORY, HTTP_PROXY]);
        let schema = serde_json::to_value(&response.variables[1].schema.open_api_v3_schema).unwrap();
        assert_eq!(schema["type"], "object");
        assert_eq!(schema["required"], json!(["host"]));
    }
}
