//! Patch definitions of a ClusterClass: names, exactly one of definitions/external, selectors
//! that match a template of the class, JSON patch ops and paths, values, variable references
//! (builtins included) and Go templates that parse.

use std::collections::BTreeSet;

use serde::Serialize;

use crate::api::labels::VARIABLE_DEFINITION_FROM_INLINE;
use crate::api::{
    ClusterClass, ClusterClassPatch, ClusterClassTemplateReference, JSONPatch, JSONPatchValue, PatchSelector,
};
use crate::field::{FieldError, FieldErrors, FieldPath};
use crate::patches::selector::class_matches;
use crate::patches::template::{Template, TemplateError};

/// The ops a patch may use.
const OPS: [&str; 3] = ["add", "remove", "replace"];

/// Every builtin variable path a patch may read.
const BUILTINS: &[&str] = &[
    "builtin",
    "builtin.cluster",
    "builtin.cluster.name",
    "builtin.cluster.namespace",
    "builtin.cluster.uid",
    "builtin.cluster.metadata.labels",
    "builtin.cluster.metadata.annotations",
    "builtin.cluster.topology",
    "builtin.cluster.topology.classRef.name",
    "builtin.cluster.topology.classRef.namespace",
    "builtin.cluster.topology.class",
    "builtin.cluster.topology.classNamespace",
    "builtin.cluster.topology.version",
    "builtin.cluster.network",
    "builtin.cluster.network.serviceDomain",
    "builtin.cluster.network.services",
    "builtin.cluster.network.pods",
    "builtin.controlPlane",
    "builtin.controlPlane.name",
    "builtin.controlPlane.replicas",
    "builtin.controlPlane.version",
    "builtin.controlPlane.metadata.labels",
    "builtin.controlPlane.metadata.annotations",
    "builtin.controlPlane.machineTemplate.infrastructureRef.name",
    "builtin.machineDeployment",
    "builtin.machineDeployment.class",
    "builtin.machineDeployment.name",
    "builtin.machineDeployment.replicas",
    "builtin.machineDeployment.topologyName",
    "builtin.machineDeployment.version",
    "builtin.machineDeployment.metadata.labels",
    "builtin.machineDeployment.metadata.annotations",
    "builtin.machineDeployment.bootstrap.configRef.name",
    "builtin.machineDeployment.infrastructureRef.name",
    "builtin.machinePool",
    "builtin.machinePool.class",
    "builtin.machinePool.name",
    "builtin.machinePool.replicas",
    "builtin.machinePool.topologyName",
    "builtin.machinePool.version",
    "builtin.machinePool.metadata.labels",
    "builtin.machinePool.metadata.annotations",
    "builtin.machinePool.bootstrap.configRef.name",
    "builtin.machinePool.infrastructureRef.name",
];

/// Errors of every patch of the class, at `spec.patches[<index>]...`.
pub fn validate(class: &ClusterClass) -> FieldErrors {
    let mut errors = FieldErrors::new();
    let mut names = BTreeSet::new();
    for (i, patch) in class.spec.patches.iter().enumerate() {
        let path = FieldPath::new("spec").child("patches").index(i);
        validate_name(patch, &mut names, &path, &mut errors);
        validate_definitions(patch, class, &path, &mut errors);
    }
    errors
}

fn validate_name<'a>(
    patch: &'a ClusterClassPatch,
    names: &mut BTreeSet<&'a str>,
    path: &FieldPath,
    errors: &mut FieldErrors,
) {
    let name_path = path.child("name");
    if patch.name.is_empty() {
        errors.push(FieldError::required(&name_path, "patch name must be defined"));
    } else if patch.name == VARIABLE_DEFINITION_FROM_INLINE {
        errors.push(FieldError::required(
            &name_path,
            format!("{VARIABLE_DEFINITION_FROM_INLINE:?} can not be used as the name of a patch"),
        ));
    } else if !names.insert(&patch.name) {
        errors.push(FieldError::invalid(
            &name_path,
            patch.name.as_str(),
            format!(
                "patch names must be unique. Patch with name {:?} is defined more than once",
                patch.name
            ),
        ));
    }
}

fn validate_definitions(
    patch: &ClusterClassPatch,
    class: &ClusterClass,
    path: &FieldPath,
    errors: &mut FieldErrors,
) {
    let enabled_if = &patch.enabled_if;
    if !enabled_if.is_empty() {
        if let Err(err) = Template::parse(enabled_if) {
            errors.push(FieldError::invalid(
                &path.child("enabledIf"),
                enabled_if.as_str(),
                format!("template can not be parsed: {}", go_parse_error("enabledIf", err)),
            ));
        }
    }
    match (patch.definitions.is_empty(), &patch.external) {
        (true, None) => errors.push(FieldError::required(
            path,
            "one of definitions or external must be defined",
        )),
        (false, Some(_)) => errors.push(FieldError::invalid(
            path,
            pretty(patch),
            "only one of definitions or external can be defined",
        )),
        (_, Some(external))
            if external.generate_patches_extension.is_empty()
                && external.validate_topology_extension.is_empty() =>
        {
            errors.push(FieldError::invalid(
                &path.child("external"),
                pretty(external),
                "one of validateTopologyExtension and generatePatchesExtension must be defined",
            ))
        }
        _ => {}
    }
    let variables: BTreeSet<&str> = class.spec.variables.iter().map(|v| v.name.as_str()).collect();
    for (i, definition) in patch.definitions.iter().enumerate() {
        let definition_path = path.child("definitions").index(i);
        validate_selector(
            &definition.selector,
            class,
            &definition_path.child("selector"),
            errors,
        );
        for (j, json_patch) in definition.json_patches.iter().enumerate() {
            validate_json_patch(
                json_patch,
                &variables,
                &definition_path.child("jsonPatches").index(j),
                errors,
            );
        }
    }
}

fn validate_selector(
    selector: &PatchSelector,
    class: &ClusterClass,
    path: &FieldPath,
    errors: &mut FieldErrors,
) {
    let resources = &selector.match_resources;
    let md_names = resources
        .machine_deployment_class
        .as_ref()
        .map(|m| m.names.as_slice())
        .unwrap_or_default();
    let mp_names = resources
        .machine_pool_class
        .as_ref()
        .map(|m| m.names.as_slice())
        .unwrap_or_default();
    let control_plane = resources.control_plane == Some(true);
    let infrastructure_cluster = resources.infrastructure_cluster == Some(true);
    if !control_plane && !infrastructure_cluster && md_names.is_empty() && mp_names.is_empty() {
        errors.push(FieldError::invalid(path, pretty(selector), "no selector enabled"));
        return;
    }
    let matches = |reference: &ClusterClassTemplateReference| selects(selector, reference);
    if infrastructure_cluster && !matches(&class.spec.infrastructure.template_ref) {
        errors.push(FieldError::invalid(
            &path.children(&["matchResources", "infrastructureCluster"]),
            true,
            "selector is enabled but does not match the infrastructure ref",
        ));
    }
    let machine_infrastructure = class.spec.control_plane.machine_infrastructure_ref();
    if control_plane
        && !matches(&class.spec.control_plane.template_ref)
        && !machine_infrastructure.is_some_and(matches)
    {
        errors.push(FieldError::invalid(
            &path.children(&["matchResources", "controlPlane"]),
            true,
            "selector is enabled but matches neither the controlPlane ref nor the controlPlane machineInfrastructure ref",
        ));
    }
    validate_worker_names(selector, class, (md_names, mp_names), path, errors);
}

/// Each MachineDeployment or MachinePool class name of `selector` must be well formed and
/// match a class of that kind whose bootstrap or infrastructure ref the selector selects.
fn validate_worker_names(
    selector: &PatchSelector,
    class: &ClusterClass,
    (md_names, mp_names): (&[String], &[String]),
    path: &FieldPath,
    errors: &mut FieldErrors,
) {
    let matches = |reference: &ClusterClassTemplateReference| selects(selector, reference);
    let deployments = class.spec.workers.machine_deployments.iter().map(|c| {
        (
            c.class.as_str(),
            &c.bootstrap.template_ref,
            &c.infrastructure.template_ref,
        )
    });
    let pools = class.spec.workers.machine_pools.iter().map(|c| {
        (
            c.class.as_str(),
            &c.bootstrap.template_ref,
            &c.infrastructure.template_ref,
        )
    });
    for (field, kind, names, classes) in [
        (
            "machineDeploymentClass",
            "MachineDeployment",
            md_names,
            deployments.collect::<Vec<_>>(),
        ),
        (
            "machinePoolClass",
            "MachinePool",
            mp_names,
            pools.collect::<Vec<_>>(),
        ),
    ] {
        for (i, name) in names.iter().enumerate() {
            let name_path = path.children(&["matchResources", field, "names"]).index(i);
            if let Some(problem) = selector_name_problem(name) {
                errors.push(FieldError::invalid(&name_path, name.as_str(), problem));
                continue;
            }
            let matched = classes.iter().any(|(class_name, bootstrap, infrastructure)| {
                class_matches(name, class_name) && (matches(bootstrap) || matches(infrastructure))
            });
            if !matched {
                errors.push(FieldError::invalid(
                    &name_path,
                    name.as_str(),
                    format!("selector is enabled but matches neither the bootstrap ref nor the infrastructure ref of a {kind} class"),
                ));
            }
        }
    }
}

/// Whether `selector` selects the templates `reference` points to (same apiVersion and kind).
fn selects(selector: &PatchSelector, reference: &ClusterClassTemplateReference) -> bool {
    reference.api_version == selector.api_version && reference.kind == selector.kind
}

fn selector_name_problem(name: &str) -> Option<&'static str> {
    let stars = name.matches('*').count();
    if stars > 1 {
        return Some("selector can at most contain a single \"*\" rune");
    }
    if stars == 1 && !(name.starts_with('*') || name.ends_with('*')) {
        return Some("\"*\" rune can only appear at the beginning, or ending of the selector");
    }
    let plain = name.replace('*', "a");
    let qualified = !plain.is_empty()
        && plain.len() <= 63
        && plain
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
        && plain.bytes().next().is_some_and(|b| b.is_ascii_alphanumeric())
        && plain.bytes().last().is_some_and(|b| b.is_ascii_alphanumeric());
    (!qualified).then_some("selector does not comply with the Kubernetes naming standards")
}

fn validate_json_patch(
    patch: &JSONPatch,
    variables: &BTreeSet<&str>,
    path: &FieldPath,
    errors: &mut FieldErrors,
) {
    validate_op_and_path(patch, path, errors);
    if patch.op != "add" && patch.op != "replace" {
        return;
    }
    match (&patch.value, &patch.value_from) {
        (None, None) => errors.push(FieldError::invalid(
            path,
            pretty(patch),
            "jsonPatch must define one of value or valueFrom",
        )),
        (Some(_), Some(_)) => errors.push(FieldError::invalid(
            path,
            pretty(patch),
            "jsonPatch can not define both value and valueFrom",
        )),
        _ => {}
    }
    if let Some(from) = &patch.value_from {
        validate_value_from(from, variables, &path.child("valueFrom"), errors);
    }
}

/// A supported op, on a path under `/spec` that reaches into arrays only where the op can.
fn validate_op_and_path(patch: &JSONPatch, path: &FieldPath, errors: &mut FieldErrors) {
    if !OPS.contains(&patch.op.as_str()) {
        errors.push(FieldError::not_supported(&path.child("op"), pretty(patch), &OPS));
    }
    if !patch.path.starts_with("/spec") {
        errors.push(FieldError::invalid(
            &path.child("path"),
            pretty(patch),
            "jsonPatch path must start with \"/spec\"",
        ));
    }
    for part in patch.path.split('/') {
        let Ok(index) = part.parse::<i64>() else { continue };
        if patch.op == "add" && index != 0 {
            errors.push(FieldError::invalid(
                &path.child("path"),
                patch.path.as_str(),
                "arrays can only be accessed using \"0\" (prepend) or \"-\" (append)",
            ));
        }
        if patch.op == "replace" || patch.op == "remove" {
            errors.push(FieldError::invalid(
                &path.child("path"),
                patch.path.as_str(),
                format!(
                    "elements in arrays can not be accessed in a {} operation",
                    patch.op
                ),
            ));
        }
    }
}

/// Exactly one of a template that parses and a variable that is defined (a builtin or one of
/// the class's `variables`).
fn validate_value_from(
    from: &JSONPatchValue,
    variables: &BTreeSet<&str>,
    path: &FieldPath,
    errors: &mut FieldErrors,
) {
    let (variable, source) = (&from.variable, &from.template);
    match (variable.is_empty(), source.is_empty()) {
        (true, true) => errors.push(FieldError::invalid(
            path,
            pretty(from),
            "valueFrom must set either template or variable",
        )),
        (false, false) => errors.push(FieldError::invalid(
            path,
            pretty(from),
            "valueFrom can not set both template and variable",
        )),
        _ => {}
    }
    if !source.is_empty() {
        if let Err(err) = Template::parse(source) {
            errors.push(FieldError::invalid(
                &path.child("template"),
                source.as_str(),
                format!(
                    "template can not be parsed: {}",
                    go_parse_error("valueFrom.template", err)
                ),
            ));
        }
    }
    if !variable.is_empty() {
        if variable.starts_with("builtin.") {
            if !BUILTINS.contains(&variable.as_str()) {
                errors.push(FieldError::invalid(
                    &path.child("variable"),
                    variable.as_str(),
                    "not a defined builtin variable",
                ));
            }
        } else {
            let name = variable.split(['.', '[']).next().unwrap_or_default();
            if !variables.contains(name) {
                errors.push(FieldError::invalid(
                    &path.child("variable"),
                    variable.as_str(),
                    format!("variable with name {variable} cannot be found"),
                ));
            }
        }
    }
}

/// A parse error as Go reports it for a template of this name.
fn go_parse_error(name: &str, error: TemplateError) -> String {
    match error {
        TemplateError::Parse { line, message, .. } => format!("template: {name}:{line}: {message}"),
        other => other.to_string(),
    }
}

/// The value Cluster API shows for a whole patch: its JSON, indented.
fn pretty<T: Serialize>(value: &T) -> String {
    serde_json::to_string_pretty(value).unwrap_or_default()
}
