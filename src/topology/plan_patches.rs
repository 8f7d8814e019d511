//! A ClusterClass's patches applied to a plan's templates, in the class's order: inline patches
//! by the engine, external ones by their GeneratePatches extension (request built and answer
//! applied here, the call made through [`ExternalPatches`]); then every ValidateTopology extension
//! judges the result.

use super::blueprint::Blueprint;
use super::error::TopologyError;
use crate::api::labels::VARIABLE_DEFINITION_FROM_INLINE;
use crate::api::ClusterClassPatch;
use crate::patches::external::ExternalPatches;
use crate::patches::hook_requests::{
    apply_response, defined_by, generate_request, validate_request, HookInputs,
};
use crate::patches::inline::{ItemCache, PatchItem};
use crate::patches::kept::Unpatched;
use crate::patches::template::ExecOptions;

/// Applies the class's patches to `items` (templates of a Cluster in `namespace`), then validates
/// them with the external patches' ValidateTopology extensions.
pub(super) fn apply_patches(
    blueprint: &Blueprint,
    items: &mut [PatchItem],
    inputs: &HookInputs<'_>,
    namespace: &str,
    external: &dyn ExternalPatches,
) -> Result<(), TopologyError> {
    let class = &blueprint.class;
    let options = ExecOptions::default();
    // What each inline patch reads of an item (kinds, converted variables), computed once: an
    // external patch changes only templates' specs, never their kinds or variables.
    // Every scope's `builtin.cluster` is the same (see `plan::collect_items`): converted once.
    let caches = ItemCache::of_items_sharing(items, "cluster");
    // What Cluster API keeps of a patched template: `spec` after each patch, and in the end
    // only `spec.template.spec` (external answers changing more are refused when applied). Only
    // an inline patch writing elsewhere needs the templates as they were.
    let unpatched: Vec<Unpatched> = if class
        .spec
        .patches
        .iter()
        .any(|patch| writes_outside(patch, "/spec/template/spec/"))
    {
        items.iter().map(|item| Unpatched::of(&item.object)).collect()
    } else {
        Vec::new()
    };
    // The compiled inline patches are the class's inline patches in order: walked alongside.
    let mut compiled_patches = blueprint.patches.iter().peekable();
    for patch in &class.spec.patches {
        let error = |reason: String| TopologyError::External {
            patch: patch.name.clone(),
            reason,
        };
        if let Some(definition) = &patch.external {
            // Cluster API makes a generator of every patch: one with neither definitions nor a
            // generateExtension has none.
            let extension = Some(definition.generate_patches_extension.as_str())
                .filter(|e| !e.is_empty())
                .ok_or_else(|| {
                    error("failed to create patch generator: no generateExtension is set".into())
                })?;
            let defined = defined_by(class.status.as_ref(), &patch.name);
            let request = generate_request(items, inputs, &defined, &definition.settings);
            let response = external.generate(extension, namespace, &request).map_err(error)?;
            apply_response(items, &response).map_err(error)?;
        } else if let Some(compiled) = compiled_patches.next_if(|p| p.name() == patch.name) {
            compiled.apply_cached(items, &caches, &options)?;
            if writes_outside(patch, "/spec/") {
                for (item, unpatched) in items.iter_mut().zip(&unpatched) {
                    unpatched.keep_spec(&mut item.object);
                }
            }
        }
    }
    for (item, unpatched) in items.iter_mut().zip(&unpatched) {
        unpatched.keep_template_spec(&mut item.object);
    }
    validate_patched(blueprint, items, inputs, namespace, external)
}

/// Asks every external patch's ValidateTopology extension to judge the patched `items`.
fn validate_patched(
    blueprint: &Blueprint,
    items: &[PatchItem],
    inputs: &HookInputs<'_>,
    namespace: &str,
    external: &dyn ExternalPatches,
) -> Result<(), TopologyError> {
    let class = &blueprint.class;
    // The validation request carries the variables as the last patch was given them: Cluster
    // API builds it from the GeneratePatches request it filled patch by patch.
    let last_from = class
        .spec
        .patches
        .last()
        .map_or(VARIABLE_DEFINITION_FROM_INLINE, |patch| {
            if patch.external.is_some() {
                &patch.name
            } else {
                VARIABLE_DEFINITION_FROM_INLINE
            }
        });
    let defined = defined_by(class.status.as_ref(), last_from);
    for patch in &class.spec.patches {
        let Some(definition) = &patch.external else {
            continue;
        };
        let Some(extension) = Some(definition.validate_topology_extension.as_str()).filter(|e| !e.is_empty())
        else {
            continue;
        };
        let request = validate_request(items, inputs, &defined, &definition.settings);
        external
            .validate(extension, namespace, &request)
            .map_err(|reason| TopologyError::External {
                patch: patch.name.clone(),
                reason: format!("validation failed: {reason}"),
            })?;
    }
    Ok(())
}

/// Whether an inline patch has an operation whose path is not below `prefix`.
fn writes_outside(patch: &ClusterClassPatch, prefix: &str) -> bool {
    patch.external.is_none()
        && patch
            .definitions
            .iter()
            .flat_map(|definition| &definition.json_patches)
            .any(|op| !op.path.starts_with(prefix))
}
