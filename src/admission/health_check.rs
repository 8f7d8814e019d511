//! Checks of MachineHealthCheck settings shared by ClusterClasses and Cluster topologies.

use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

use crate::api::MachineHealthCheckClass;
use crate::field::{FieldError, FieldErrors, FieldPath};

/// Shortest node startup timeout, in seconds, unless the check is disabled with 0.
const MIN_NODE_STARTUP_SECONDS: f64 = 30.0;

/// Errors of `check`, whose remediation template must live in `namespace`.
pub fn validate(check: &MachineHealthCheckClass, namespace: &str, path: &FieldPath) -> FieldErrors {
    let mut errors = FieldErrors::new();
    if let Some(timeout) = &check.node_startup_timeout {
        match parse_duration_seconds(timeout) {
            Some(seconds) if seconds == 0.0 || seconds >= MIN_NODE_STARTUP_SECONDS => {}
            Some(_) => errors.push(FieldError::invalid(
                &path.child("nodeStartupTimeout"),
                timeout.as_str(),
                "must be at least 30s",
            )),
            None => errors.push(FieldError::invalid(
                &path.child("nodeStartupTimeout"),
                timeout.as_str(),
                "must be a valid duration",
            )),
        }
    }
    if let Some(IntOrString::String(value)) = &check.max_unhealthy {
        let percent = value.strip_suffix('%').and_then(|n| n.parse::<i64>().ok());
        if percent.is_none() {
            errors.push(FieldError::invalid(
                &path.child("maxUnhealthy"),
                value.as_str(),
                "must be either an int or a percentage: invalid value for IntOrString: invalid type: string is not a percentage",
            ));
        }
    }
    if let Some(template) = &check.remediation_template {
        let template_namespace = template.namespace.as_deref().unwrap_or_default();
        if template_namespace != namespace {
            errors.push(FieldError::invalid(
                &path.children(&["remediationTemplate", "namespace"]),
                template_namespace,
                "must match metadata.namespace",
            ));
        }
    }
    errors
}

/// Seconds of a Go duration (`300s`, `1h30m`, `1.5m`, `0`); None when it does not parse.
pub fn parse_duration_seconds(text: &str) -> Option<f64> {
    if text == "0" {
        return Some(0.0);
    }
    let mut rest = text.strip_prefix('-').unwrap_or(text);
    if rest.is_empty() {
        return None;
    }
    let mut total = 0.0;
    while !rest.is_empty() {
        let number_end = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        let number: f64 = rest[..number_end].parse().ok()?;
        rest = &rest[number_end..];
        let unit_end = rest
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(rest.len());
        let scale = match &rest[..unit_end] {
            "ns" => 1e-9,
            "us" | "µs" => 1e-6,
            "ms" => 1e-3,
            "s" => 1.0,
            "m" => 60.0,
            "h" => 3600.0,
            _ => return None,
        };
        total += number * scale;
        rest = &rest[unit_end..];
    }
    Some(if text.starts_with('-') { -total } else { total })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_parse_like_go() {
        assert_eq!(parse_duration_seconds("300s"), Some(300.0));
        assert_eq!(parse_duration_seconds("1h30m"), Some(5400.0));
        assert_eq!(parse_duration_seconds("0"), Some(0.0));
        assert_eq!(parse_duration_seconds("10"), None);
        assert_eq!(parse_duration_seconds("soon"), None);
    }

    #[test]
    fn startup_timeout_max_unhealthy_and_template_namespace() {
        let check: MachineHealthCheckClass = serde_yaml_ng::from_str(
            "{nodeStartupTimeout: 10s, maxUnhealthy: lots, remediationTemplate: {kind: T, name: t, namespace: other}}",
        )
        .unwrap();
        let errors: Vec<String> = validate(&check, "default", &FieldPath::new("mhc"))
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(errors.len(), 3);
        assert_eq!(
            errors[0],
            r#"mhc.nodeStartupTimeout: Invalid value: "10s": must be at least 30s"#
        );
        assert!(errors[1].starts_with(
            r#"mhc.maxUnhealthy: Invalid value: "lots": must be either an int or a percentage"#
        ));
        assert_eq!(
            errors[2],
            r#"mhc.remediationTemplate.namespace: Invalid value: "other": must match metadata.namespace"#
        );
        let ok: MachineHealthCheckClass =
            serde_yaml_ng::from_str("{nodeStartupTimeout: 0s, maxUnhealthy: 40%}").unwrap();
        assert!(validate(&ok, "default", &FieldPath::new("mhc")).is_empty());
    }
}
