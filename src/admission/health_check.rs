//! Checks shared by ClusterClasses and Cluster topologies: health-check settings and rollout
//! strategies, each an int or a percentage as apimachinery's `intstr` reads them.

use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

use crate::api::{MachineHealthCheckChecks, MachineHealthCheckRemediation, MachineRollingUpdate};
use crate::field::{FieldError, FieldErrors, FieldPath};

/// Shortest node startup timeout, in seconds, unless the check is disabled with 0.
const MIN_NODE_STARTUP_SECONDS: i32 = 30;

/// Errors of a defined health check at `path` (`...healthCheck`): the node startup timeout and
/// the remediation trigger; with `max_in_flight`, also the MachineDeployment's
/// `remediation.maxInFlight`.
pub fn validate(
    checks: &MachineHealthCheckChecks,
    remediation: &MachineHealthCheckRemediation,
    max_in_flight: bool,
    path: &FieldPath,
) -> FieldErrors {
    let mut errors = FieldErrors::new();
    if let Some(seconds) = checks.node_startup_timeout_seconds {
        if seconds != 0 && seconds < MIN_NODE_STARTUP_SECONDS {
            errors.push(FieldError::invalid(
                &path.children(&["checks", "nodeStartupTimeoutSeconds"]),
                seconds,
                "must be at least 30s",
            ));
        }
    }
    let trigger = path.children(&["remediation", "triggerIf", "unhealthyLessThanOrEqualTo"]);
    int_or_percent(
        remediation.trigger_if.unhealthy_less_than_or_equal_to.as_ref(),
        &trigger,
        &mut errors,
    );
    if max_in_flight {
        let at = path.children(&["remediation", "maxInFlight"]);
        int_or_percent(remediation.max_in_flight.as_ref(), &at, &mut errors);
    }
    errors
}

/// Errors of a MachineDeployment rollout strategy's rolling update at `path` (`...rollout.strategy`).
pub fn validate_rolling_update(update: &MachineRollingUpdate, path: &FieldPath) -> FieldErrors {
    let mut errors = FieldErrors::new();
    let rolling = path.child("rollingUpdate");
    int_or_percent(
        update.max_unavailable.as_ref(),
        &rolling.child("maxUnavailable"),
        &mut errors,
    );
    int_or_percent(update.max_surge.as_ref(), &rolling.child("maxSurge"), &mut errors);
    if let (Some(IntOrString::Int(0)), Some(IntOrString::Int(0))) =
        (&update.max_unavailable, &update.max_surge)
    {
        errors.push(FieldError::invalid(
            &rolling,
            "0",
            "maxUnavailable and maxSurge cannot both be 0",
        ));
    }
    errors
}

/// Adds the error of `value` at `path` when it is neither an int nor a percentage.
fn int_or_percent(value: Option<&IntOrString>, path: &FieldPath, errors: &mut FieldErrors) {
    let Some(IntOrString::String(text)) = value else {
        return;
    };
    if let Some(problem) = percent_problem(text) {
        errors.push(FieldError::invalid(
            path,
            text.as_str(),
            format!("must be either an int or a percentage: invalid value for IntOrString: {problem}"),
        ));
    }
}

/// Why a string IntOrString is not a percentage, in apimachinery's words.
fn percent_problem(text: &str) -> Option<String> {
    let Some(number) = text.strip_suffix('%') else {
        return Some("invalid type: string is not a percentage".to_owned());
    };
    match number.parse::<i64>() {
        Ok(_) => None,
        Err(err) => {
            let why = match err.kind() {
                std::num::IntErrorKind::PosOverflow | std::num::IntErrorKind::NegOverflow => {
                    "value out of range"
                }
                _ => "invalid syntax",
            };
            Some(format!(
                "invalid value {text:?}: strconv.Atoi: parsing {number:?}: {why}"
            ))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shown(errors: FieldErrors) -> Vec<String> {
        errors.iter().map(ToString::to_string).collect()
    }

    #[test]
    fn startup_timeout_trigger_and_max_in_flight() {
        let checks: MachineHealthCheckChecks =
            serde_yaml_ng::from_str("{nodeStartupTimeoutSeconds: 10}").unwrap();
        let remediation: MachineHealthCheckRemediation =
            serde_yaml_ng::from_str("{maxInFlight: x%, triggerIf: {unhealthyLessThanOrEqualTo: lots}}")
                .unwrap();
        let errors = shown(validate(&checks, &remediation, true, &FieldPath::new("hc")));
        assert_eq!(
            errors,
            [
                "hc.checks.nodeStartupTimeoutSeconds: Invalid value: 10: must be at least 30s",
                r#"hc.remediation.triggerIf.unhealthyLessThanOrEqualTo: Invalid value: "lots": must be either an int or a percentage: invalid value for IntOrString: invalid type: string is not a percentage"#,
                r#"hc.remediation.maxInFlight: Invalid value: "x%": must be either an int or a percentage: invalid value for IntOrString: invalid value "x%": strconv.Atoi: parsing "x": invalid syntax"#,
            ]
        );
        assert!(validate(&checks, &remediation, false, &FieldPath::new("hc")).len() == 2);
        let ok: MachineHealthCheckChecks = serde_yaml_ng::from_str("{nodeStartupTimeoutSeconds: 0}").unwrap();
        assert!(validate(
            &ok,
            &MachineHealthCheckRemediation::default(),
            true,
            &FieldPath::new("hc")
        )
        .is_empty());
    }

    #[test]
    fn rolling_update_int_or_percent_not_both_zero() {
        let update: MachineRollingUpdate =
            serde_yaml_ng::from_str("{maxUnavailable: 0, maxSurge: 0}").unwrap();
        assert_eq!(
            shown(validate_rolling_update(&update, &FieldPath::new("s"))),
            [r#"s.rollingUpdate: Invalid value: "0": maxUnavailable and maxSurge cannot both be 0"#]
        );
        let percent: MachineRollingUpdate =
            serde_yaml_ng::from_str("{maxUnavailable: 0%, maxSurge: 0}").unwrap();
        assert!(validate_rolling_update(&percent, &FieldPath::new("s")).is_empty());
        let bad: MachineRollingUpdate = serde_yaml_ng::from_str("{maxSurge: abc}").unwrap();
        assert_eq!(
            shown(validate_rolling_update(&bad, &FieldPath::new("s"))),
            [
                r#"s.rollingUpdate.maxSurge: Invalid value: "abc": must be either an int or a percentage: invalid value for IntOrString: invalid type: string is not a percentage"#
            ]
        );
    }
}
