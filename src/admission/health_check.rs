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
            // Cluster API shows the *metav1.Duration as Go prints it.
            Some(seconds) => errors.push(FieldError::invalid(
                &path.child("nodeStartupTimeout"),
                format!("&Duration{{Duration:{},}}", go_duration(seconds)),
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

/// A duration of `seconds` as Go's `time.Duration.String` prints it (`10s`, `1m30s`, `1h0m0s`,
/// `1.5s`, `500ms`), rounded to whole nanoseconds.
fn go_duration(seconds: f64) -> String {
    let nanos = (seconds * 1e9).round();
    let sign = if nanos < 0.0 { "-" } else { "" };
    // At most about 292 years fit in Go's int64 nanoseconds; the cast saturates beyond.
    let total = nanos.abs() as u64;
    if total == 0 {
        return "0s".to_owned();
    }
    if total < 1_000_000_000 {
        let (scale, unit) = match total {
            0..1_000 => (1, "ns"),
            1_000..1_000_000 => (1_000, "µs"),
            _ => (1_000_000, "ms"),
        };
        return format!("{sign}{}{unit}", decimal(total, scale));
    }
    let (hours, rest) = (total / 3_600_000_000_000, total % 3_600_000_000_000);
    let (minutes, rest) = (rest / 60_000_000_000, rest % 60_000_000_000);
    let seconds = decimal(rest, 1_000_000_000);
    match (hours, minutes) {
        (0, 0) => format!("{sign}{seconds}s"),
        (0, m) => format!("{sign}{m}m{seconds}s"),
        (h, m) => format!("{sign}{h}h{m}m{seconds}s"),
    }
}

/// `value / scale` with its fraction, trailing zeros dropped (`1500, 1000` is `1.5`).
fn decimal(value: u64, scale: u64) -> String {
    let (whole, fraction) = (value / scale, value % scale);
    if fraction == 0 {
        return whole.to_string();
    }
    let width = scale.ilog10() as usize;
    let digits = format!("{fraction:0width$}");
    format!("{whole}.{}", digits.trim_end_matches('0'))
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
    fn durations_print_like_go() {
        let cases = [
            (10.0, "10s"),
            (90.0, "1m30s"),
            (3600.0, "1h0m0s"),
            (5400.5, "1h30m0.5s"),
            (1.5, "1.5s"),
            (0.5, "500ms"),
            (0.0015, "1.5ms"),
            (0.000_002, "2µs"),
            (-20.0, "-20s"),
            (0.0, "0s"),
        ];
        for (seconds, printed) in cases {
            assert_eq!(go_duration(seconds), printed, "{seconds}");
        }
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
            r#"mhc.nodeStartupTimeout: Invalid value: "&Duration{Duration:10s,}": must be at least 30s"#
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
