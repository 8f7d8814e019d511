//! Whether a ClusterClass patch may read the builtins that name generated template clones
//! (`builtin.controlPlane.machineTemplate.infrastructureRef.name`,
//! `builtin.machineDeployment.infrastructureRef.name`, `builtin.machineDeployment.bootstrap.configRef.name`).
//! Those names are derived from the patched templates, so a plan computes them only for classes
//! whose patches may read them. The answer is conservative: any use of `builtin` that is not a
//! plain field chain away from those names counts as a read.

use crate::api::ClusterClassPatch;

/// True when `patch` may read a generated template name: an inline patch whose `enabledIf`,
/// `valueFrom.variable` or `valueFrom.template` may reach one. An external patch does not count:
/// its extension is called once per topology (the hook's contract) with the names of the clones
/// that exist, as Cluster API calls it with the names it has before patching.
pub fn reads_generated_names(patch: &ClusterClassPatch) -> bool {
    if patch.external.is_some() {
        return false;
    }
    if template_reads(&patch.enabled_if) {
        return true;
    }
    patch
        .definitions
        .iter()
        .flat_map(|definition| &definition.json_patches)
        .filter_map(|json_patch| json_patch.value_from.as_ref())
        .any(|from| {
            (!from.variable.is_empty() && variable_reads(&from.variable))
                || (!from.template.is_empty() && template_reads(&from.template))
        })
}

/// A `valueFrom.variable` path (`builtin.machineDeployment.infrastructureRef.name`, with optional
/// `[i]` indexes) that is, contains or lies below a generated name.
fn variable_reads(path: &str) -> bool {
    let segments: Vec<&str> = path
        .split('.')
        .map(|segment| segment.split('[').next().unwrap_or_default())
        .collect();
    chain_reads(&segments)
}

/// Whether a field chain starting at `builtin` may reach a generated name: `builtin` itself, a
/// scope holding one (`builtin.controlPlane`, `builtin.machineDeployment`) or a field on the way.
fn chain_reads(segments: &[&str]) -> bool {
    match segments {
        ["builtin"] => true,
        ["builtin", scope] => matches!(*scope, "controlPlane" | "machineDeployment"),
        ["builtin", "controlPlane", field, ..] => *field == "machineTemplate",
        ["builtin", "machineDeployment", field, ..] => matches!(*field, "infrastructureRef" | "bootstrap"),
        _ => false,
    }
}

/// A Go template source in which some mention of `builtin` may reach a generated name: every
/// mention must be a field chain (`.builtin.cluster.name`) away from them to count as no read.
/// One pass over the source: each mention is found once and its chain read in place.
fn template_reads(source: &str) -> bool {
    const WORD: &str = "builtin";
    let bytes = source.as_bytes();
    let mut chain_end = 0;
    for (start, _) in source.match_indices(WORD) {
        if start < chain_end {
            // Inside the chain just read (`.builtin.x.builtin`): part of that chain.
            continue;
        }
        if start == 0 || bytes.get(start - 1) != Some(&b'.') {
            // `index . "builtin"`, `$builtin`, a longer word: not a plain field chain.
            return true;
        }
        let end = start + WORD.len();
        chain_end = bytes
            .get(end..)
            .unwrap_or_default()
            .iter()
            .position(|&c| !(c.is_ascii_alphanumeric() || c == b'_' || c == b'.'))
            .map_or(source.len(), |offset| end + offset);
        let chain = source.get(start..chain_end).unwrap_or_default();
        let mut segments = [""; 4];
        let mut count = 0;
        let mut malformed = false;
        for (i, segment) in chain.split('.').enumerate() {
            malformed |= i > 0 && segment.is_empty();
            if let Some(slot) = segments.get_mut(i) {
                *slot = segment;
                count = i + 1;
            }
        }
        let prefix = segments.get(..count).unwrap_or_default();
        if malformed || (chain_reads(prefix) && !sole_if_condition(source, start - 1, chain_end)) {
            return true;
        }
    }
    false
}

/// Whether the text between `start` and `end` is the whole condition of an `if` action
/// (`{{ if .builtin.machineDeployment }}`): only its truth is read, and generated names (real or
/// placeholders) and the maps holding them are never empty.
fn sole_if_condition(source: &str, start: usize, end: usize) -> bool {
    let before = source.get(..start).unwrap_or_default().trim_end();
    let after = source.get(end..).unwrap_or_default().trim_start();
    let opens_if = before
        .strip_suffix("if")
        .is_some_and(|rest| rest.ends_with(|c: char| c.is_whitespace() || c == '{'));
    opens_if && (after.starts_with("}}") || after.starts_with("-}}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn patch(yaml: &str) -> ClusterClassPatch {
        serde_yaml_ng::from_str(yaml).unwrap()
    }

    #[test]
    fn field_chains_away_from_the_names_are_no_reads() {
        for source in [
            "{{ .builtin.cluster.name }}-{{ .builtin.controlPlane.version }}",
            "{{ index .builtin.machineDeployment.metadata.labels \"a\" }}",
            "{{ $.builtin.machinePool.infrastructureRef.name }}",
            "{{ if .builtin.machineDeployment\n  }}{{ .builtin.machineDeployment.topologyName }}{{ end }}",
            "{{- else if .builtin.controlPlane -}}",
            "{{ .builtin.cluster.builtinName }}{{ .builtin.cluster.metadata.builtin }}",
            "no variables at all",
        ] {
            assert!(!template_reads(source), "{source}");
        }
    }

    #[test]
    fn the_names_their_scopes_and_indirect_uses_are_reads() {
        for source in [
            "{{ .builtin.machineDeployment.infrastructureRef.name }}",
            "{{ .builtin.controlPlane.machineTemplate.infrastructureRef.name }}",
            "{{ with .builtin.machineDeployment }}{{ .bootstrap.configRef.name }}{{ end }}",
            "{{ toJson .builtin }}",
            "{{ index . \"builtin\" }}",
            "{{ $b := .builtin.cluster }}{{ $builtin }}",
            "{{ .builtin..x }}",
            "{{ if .builtin.machineDeployment.infrastructureRef.name | len }}",
            "{{ notif .builtin.machineDeployment }}",
            "{{ .builtin.cluster.name }}-{{ .builtin.machineDeployment.bootstrap.configRef.name }}",
            "{{ .builtin.cluster.name }}{{ builtin }}",
        ] {
            assert!(template_reads(source), "{source}");
        }
    }

    #[test]
    fn variable_paths_read_the_names_they_contain_or_lie_below() {
        assert!(variable_reads(
            "builtin.machineDeployment.bootstrap.configRef.name"
        ));
        assert!(variable_reads("builtin.controlPlane"));
        assert!(variable_reads("builtin"));
        assert!(!variable_reads("builtin.controlPlane.version"));
        assert!(!variable_reads("builtin.machinePool.infrastructureRef.name"));
        assert!(!variable_reads("region"));
        assert!(!variable_reads("items[0].builtin"));
    }

    #[test]
    fn inline_patches_read_through_any_of_their_sources_external_ones_never() {
        let quiet = patch(
            "{name: p, enabledIf: '{{ .flag }}', definitions: [{selector: {apiVersion: v, kind: K, matchResources: {controlPlane: true}},
              jsonPatches: [{op: add, path: /spec/a, valueFrom: {variable: builtin.cluster.name}}]}]}",
        );
        assert!(!reads_generated_names(&quiet));
        let by_enabled_if =
            patch("{name: p, enabledIf: '{{ toYaml .builtin.controlPlane }}', definitions: []}");
        assert!(reads_generated_names(&by_enabled_if));
        let by_template = patch(
            "{name: p, definitions: [{selector: {apiVersion: v, kind: K, matchResources: {controlPlane: true}},
              jsonPatches: [{op: add, path: /spec/a, valueFrom: {template: '{{ .builtin.machineDeployment.infrastructureRef.name }}'}}]}]}",
        );
        assert!(reads_generated_names(&by_template));
        // Called once per topology with the names of the clones that exist.
        let external = patch("{name: p, external: {generateExtension: gen.ext}}");
        assert!(!reads_generated_names(&external));
    }
}
