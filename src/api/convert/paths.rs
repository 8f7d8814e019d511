//! Field paths of the hub (v1beta2) written as the spoke (v1beta1) names the same field, for
//! denials answered to a client that sent v1beta1: `spec.topology.classRef.name` is
//! `spec.topology.class`, `spec.controlPlane.templateRef` is `spec.controlPlane.ref`, and so on.
//!
//! Table-driven: each rule rewrites a run of field names, either anywhere in a path or only
//! after a fixed context from the path's start; list keys and indexes (`[md-0]`, `[2]`) are kept
//! on the fields they follow. A path with no v1beta1 equivalent (`spec.kubernetesVersions`,
//! `...taints[0].key`) comes back unchanged. Paths that Cluster API already writes with a
//! v1beta1 name (`spec.topology.class`, `spec.infrastructure.ref.kind`) are unchanged too.

use std::borrow::Cow;

/// One rewrite: `context` (names from the start of the path; `None` = anywhere), then `from`
/// (dotted names) becomes `to`.
struct Rule {
    context: Option<&'static [&'static str]>,
    from: &'static [&'static str],
    to: &'static [&'static str],
}

const fn anywhere(from: &'static [&'static str], to: &'static [&'static str]) -> Rule {
    Rule {
        context: None,
        from,
        to,
    }
}

const fn after(
    context: &'static [&'static str],
    from: &'static [&'static str],
    to: &'static [&'static str],
) -> Rule {
    Rule {
        context: Some(context),
        from,
        to,
    }
}

const CLASS_MDS: &[&str] = &["spec", "workers", "machineDeployments"];
const CLASS_MPS: &[&str] = &["spec", "workers", "machinePools"];

/// The rules, tried in order at each position (longer `from` before its prefixes).
const RULES: &[Rule] = &[
    // Cluster.
    after(&["spec", "topology"], &["classRef", "name"], &["class"]),
    after(
        &["spec", "topology"],
        &["classRef", "namespace"],
        &["classNamespace"],
    ),
    after(&["spec", "topology"], &["classRef"], &["class"]),
    after(&["spec", "controlPlaneRef"], &["apiGroup"], &["apiVersion"]),
    after(&["spec", "infrastructureRef"], &["apiGroup"], &["apiVersion"]),
    // Health checks, in a topology or a class.
    anywhere(
        &["healthCheck", "checks", "nodeStartupTimeoutSeconds"],
        &["machineHealthCheck", "nodeStartupTimeout"],
    ),
    anywhere(
        &["healthCheck", "checks", "unhealthyNodeConditions"],
        &["machineHealthCheck", "unhealthyConditions"],
    ),
    anywhere(
        &[
            "healthCheck",
            "remediation",
            "triggerIf",
            "unhealthyLessThanOrEqualTo",
        ],
        &["machineHealthCheck", "maxUnhealthy"],
    ),
    anywhere(
        &["healthCheck", "remediation", "triggerIf", "unhealthyInRange"],
        &["machineHealthCheck", "unhealthyRange"],
    ),
    anywhere(
        &["healthCheck", "remediation", "templateRef"],
        &["machineHealthCheck", "remediationTemplate"],
    ),
    anywhere(
        &["healthCheck", "remediation", "maxInFlight"],
        &["strategy", "remediation", "maxInFlight"],
    ),
    anywhere(&["healthCheck", "enabled"], &["machineHealthCheck", "enable"]),
    anywhere(&["healthCheck"], &["machineHealthCheck"]),
    // Rollout and deletion of machines.
    anywhere(&["rollout", "strategy"], &["strategy"]),
    anywhere(
        &["deletion", "order"],
        &["strategy", "rollingUpdate", "deletePolicy"],
    ),
    anywhere(&["deletion", "nodeDrainTimeoutSeconds"], &["nodeDrainTimeout"]),
    anywhere(
        &["deletion", "nodeVolumeDetachTimeoutSeconds"],
        &["nodeVolumeDetachTimeout"],
    ),
    anywhere(
        &["deletion", "nodeDeletionTimeoutSeconds"],
        &["nodeDeletionTimeout"],
    ),
    // ClusterClass templates and naming.
    after(&["spec", "infrastructure"], &["templateRef"], &["ref"]),
    after(
        &["spec", "infrastructure"],
        &["naming"],
        &["..", "infrastructureNamingStrategy"],
    ),
    after(&["spec", "controlPlane"], &["templateRef"], &["ref"]),
    after(&["spec", "controlPlane"], &["naming"], &["namingStrategy"]),
    after(
        &["spec", "controlPlane", "machineInfrastructure"],
        &["templateRef"],
        &["ref"],
    ),
    after(
        CLASS_MDS,
        &["bootstrap", "templateRef"],
        &["template", "bootstrap", "ref"],
    ),
    after(
        CLASS_MDS,
        &["infrastructure", "templateRef"],
        &["template", "infrastructure", "ref"],
    ),
    after(CLASS_MDS, &["metadata"], &["template", "metadata"]),
    after(CLASS_MDS, &["naming"], &["namingStrategy"]),
    after(
        CLASS_MPS,
        &["bootstrap", "templateRef"],
        &["template", "bootstrap", "ref"],
    ),
    after(
        CLASS_MPS,
        &["infrastructure", "templateRef"],
        &["template", "infrastructure", "ref"],
    ),
    after(CLASS_MPS, &["metadata"], &["template", "metadata"]),
    after(CLASS_MPS, &["naming"], &["namingStrategy"]),
    // Variables and patches.
    after(
        &["spec", "variables"],
        &["deprecatedV1Beta1Metadata"],
        &["metadata"],
    ),
    anywhere(
        &["external", "generatePatchesExtension"],
        &["external", "generateExtension"],
    ),
    anywhere(
        &["external", "validateTopologyExtension"],
        &["external", "validateExtension"],
    ),
];

/// One field of a path: its name and the keys or indexes right after it (`machineDeployments`,
/// `[md-0]`).
#[derive(Debug, Clone, PartialEq)]
struct Segment<'a> {
    name: Cow<'a, str>,
    brackets: &'a str,
}

/// Splits `a.b[k].c` into segments; keys may hold dots (`[cluster.x-k8s.io/x]`).
fn segments(path: &str) -> Vec<Segment<'_>> {
    let mut out = Vec::new();
    let mut rest = path;
    while !rest.is_empty() {
        let name_end = rest.find(['.', '[']).unwrap_or(rest.len());
        let name = &rest[..name_end];
        let mut brackets_end = name_end;
        while rest[brackets_end..].starts_with('[') {
            match rest[brackets_end..].find(']') {
                Some(close) => brackets_end += close + 1,
                None => brackets_end = rest.len(),
            }
        }
        out.push(Segment {
            name: Cow::Borrowed(name),
            brackets: &rest[name_end..brackets_end],
        });
        rest = rest[brackets_end..]
            .strip_prefix('.')
            .unwrap_or(&rest[brackets_end..]);
    }
    out
}

fn names_match(segments: &[Segment<'_>], names: &[&str]) -> bool {
    segments.len() == names.len() && segments.iter().zip(names).all(|(s, n)| s.name == *n)
}

/// `path` (a hub field path) as the v1beta1 object names the field; unchanged when no rule applies.
pub fn to_v1beta1(path: &str) -> Cow<'_, str> {
    let segments = segments(path);
    let mut out: Vec<Segment<'_>> = Vec::with_capacity(segments.len() + 2);
    let mut changed = false;
    let mut i = 0;
    while i < segments.len() {
        let rule = RULES.iter().find(|rule| {
            let end = i + rule.from.len();
            end <= segments.len()
                && names_match(&segments[i..end], rule.from)
                && rule
                    .context
                    .is_none_or(|c| i == c.len() && names_match(&segments[..i], c))
        });
        let Some(rule) = rule else {
            out.push(segments[i].clone());
            i += 1;
            continue;
        };
        changed = true;
        let brackets = segments[i + rule.from.len() - 1].brackets;
        for (j, name) in rule.to.iter().enumerate() {
            if *name == ".." {
                // Replaces the context's last field instead of following it.
                out.pop();
                continue;
            }
            let last = j + 1 == rule.to.len();
            out.push(Segment {
                name: Cow::Borrowed(name),
                brackets: if last { brackets } else { "" },
            });
        }
        i += rule.from.len();
    }
    if !changed {
        return Cow::Borrowed(path);
    }
    let mut text = String::with_capacity(path.len() + 16);
    for segment in &out {
        if !text.is_empty() {
            text.push('.');
        }
        text.push_str(&segment.name);
        text.push_str(segment.brackets);
    }
    Cow::Owned(text)
}

/// `text` with every hub field path in it (a run starting with `spec.`) written as v1beta1 names it.
pub fn text_to_v1beta1(text: &str) -> Cow<'_, str> {
    if !text.contains("spec.") {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    let mut changed = false;
    while let Some(start) = rest.find("spec.") {
        let boundary = rest[..start]
            .chars()
            .next_back()
            .is_none_or(|c| !(c.is_ascii_alphanumeric() || c == '.'));
        let end = rest[start..]
            .find(|c: char| c.is_whitespace() || matches!(c, '"' | ',' | ';' | ':' | '(' | ')'))
            .map_or(rest.len(), |e| start + e);
        out.push_str(&rest[..start]);
        let path = &rest[start..end];
        let translated = if boundary {
            to_v1beta1(path)
        } else {
            Cow::Borrowed(path)
        };
        changed |= matches!(translated, Cow::Owned(_));
        out.push_str(&translated);
        rest = &rest[end..];
    }
    out.push_str(rest);
    if changed {
        Cow::Owned(out)
    } else {
        Cow::Borrowed(text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cluster_paths() {
        let cases = [
            ("spec.topology.classRef.name", "spec.topology.class"),
            ("spec.topology.classRef.namespace", "spec.topology.classNamespace"),
            (
                "spec.topology.controlPlane.healthCheck.checks.nodeStartupTimeoutSeconds",
                "spec.topology.controlPlane.machineHealthCheck.nodeStartupTimeout",
            ),
            (
                "spec.topology.workers.machineDeployments[md-0].healthCheck.remediation.maxInFlight",
                "spec.topology.workers.machineDeployments[md-0].strategy.remediation.maxInFlight",
            ),
            (
                "spec.topology.workers.machineDeployments[md.0].rollout.strategy.rollingUpdate.maxSurge",
                "spec.topology.workers.machineDeployments[md.0].strategy.rollingUpdate.maxSurge",
            ),
            (
                "spec.topology.controlPlane.healthCheck.enable",
                "spec.topology.controlPlane.machineHealthCheck.enable",
            ),
            ("spec.controlPlaneRef.apiGroup", "spec.controlPlaneRef.apiVersion"),
            (
                "spec.topology.variables[cpu].value",
                "spec.topology.variables[cpu].value",
            ),
            (
                "spec.topology.controlPlane.taints[0].key",
                "spec.topology.controlPlane.taints[0].key",
            ),
            ("spec", "spec"),
            ("", ""),
        ];
        for (hub, spoke) in cases {
            assert_eq!(to_v1beta1(hub), spoke, "{hub}");
        }
    }

    #[test]
    fn cluster_class_paths() {
        let cases = [
            ("spec.controlPlane.templateRef", "spec.controlPlane.ref"),
            ("spec.controlPlane.templateRef.kind", "spec.controlPlane.ref.kind"),
            (
                "spec.infrastructure.templateRef.apiVersion",
                "spec.infrastructure.ref.apiVersion",
            ),
            (
                "spec.infrastructure.naming.template",
                "spec.infrastructureNamingStrategy.template",
            ),
            (
                "spec.controlPlane.machineInfrastructure.templateRef.kind",
                "spec.controlPlane.machineInfrastructure.ref.kind",
            ),
            (
                "spec.workers.machineDeployments[2].infrastructure.templateRef",
                "spec.workers.machineDeployments[2].template.infrastructure.ref",
            ),
            (
                "spec.workers.machinePools[0].bootstrap.templateRef.kind",
                "spec.workers.machinePools[0].template.bootstrap.ref.kind",
            ),
            (
                "spec.workers.machineDeployments[w].naming.template",
                "spec.workers.machineDeployments[w].namingStrategy.template",
            ),
            (
                "spec.controlPlane.healthCheck",
                "spec.controlPlane.machineHealthCheck",
            ),
            (
                "spec.variables[v].deprecatedV1Beta1Metadata.labels",
                "spec.variables[v].metadata.labels",
            ),
            ("spec.patches[0].external", "spec.patches[0].external"),
            ("spec.infrastructure.ref.kind", "spec.infrastructure.ref.kind"),
            ("spec.kubernetesVersion[1]", "spec.kubernetesVersion[1]"),
        ];
        for (hub, spoke) in cases {
            assert_eq!(to_v1beta1(hub), spoke, "{hub}");
        }
    }

    #[test]
    fn paths_in_text() {
        assert_eq!(
            text_to_v1beta1("can be only set if spec.controlPlane.healthCheck is set"),
            "can be only set if spec.controlPlane.machineHealthCheck is set"
        );
        assert!(matches!(text_to_v1beta1("nothing here"), Cow::Borrowed(_)));
        assert!(matches!(
            text_to_v1beta1("in spec.topology.version"),
            Cow::Borrowed(_)
        ));
        assert_eq!(
            text_to_v1beta1("Cluster.spec.topology.version"),
            "Cluster.spec.topology.version"
        );
    }
}
