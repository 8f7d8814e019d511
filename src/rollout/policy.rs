//! The rules a ClusterClassRollout must meet, with field paths as the API server names them.
//! The CRD's schema and CEL rules check the shape; these check what they cannot (a label
//! selector's syntax, a duration's value, a wave no Cluster can reach). The webhook refuses a
//! policy that breaks them; the controller reports one that got past it (written while the
//! webhook was away) as `InvalidPolicy` and moves nothing. One set of rules for both.

use jiff::SignedDuration;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

use crate::api::class_rollout::{
    ClusterClassRolloutSpec, HealthGate, MaintenanceWindow, RolloutWave, ON_CHANGE_QUEUE,
    ON_CHANGE_SUPERSEDE, ON_HALT_HOLD, ON_HALT_ROLLBACK, REMAINING_WAVE,
};
use crate::api::convert::parse_go_duration_nanos;
use crate::api::names::dns1123_label_problems;
use crate::api::selector::Selector;
use crate::field::{FieldError, FieldErrors, FieldPath};

/// Most waves a policy may have (the CRD's `maxItems`).
pub const MAX_WAVES: usize = 20;
/// Most maintenance windows a policy may have (the CRD's `maxItems`).
pub const MAX_WINDOWS: usize = 20;
/// Most days a maintenance window may name (the CRD's `maxItems`).
pub const MAX_DAYS: usize = 7;
/// Longest maintenance window: a week.
pub const MAX_WINDOW: SignedDuration = SignedDuration::from_hours(7 * 24);

/// What the rules found: errors refuse the policy, warnings are told to the writer.
#[derive(Debug, Default)]
pub struct PolicyReview {
    /// Fields that break a rule.
    pub errors: FieldErrors,
    /// Fields that are valid but likely not what the writer meant.
    pub warnings: Vec<String>,
}

/// How many Clusters of a wave may roll at once, as written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Limit {
    /// At most this many (at least 1).
    Count(usize),
    /// At most this percentage of the wave (1-100), rounded down, at least 1.
    Percent(usize),
}

/// Reads a wave's `maxRolling`: a number of Clusters (at least 1) or a percentage from 1% to
/// 100%; `None` for anything else.
pub fn limit_of(value: &IntOrString) -> Option<Limit> {
    match value {
        IntOrString::Int(n) => usize::try_from(*n).ok().filter(|n| *n >= 1).map(Limit::Count),
        IntOrString::String(text) => text
            .strip_suffix('%')
            .filter(|p| !p.starts_with('+'))
            .and_then(|p| p.parse::<usize>().ok())
            .filter(|p| (1..=100).contains(p))
            .map(Limit::Percent),
    }
}

/// Reads a health gate's duration (`10m`, `1h30m`); `None` for a malformed or negative one.
pub fn gate_duration(text: &str) -> Option<SignedDuration> {
    parse_go_duration_nanos(text)
        .filter(|n| *n >= 0)
        .map(SignedDuration::from_nanos)
}

/// Reads a maintenance window's length: more than nothing, at most a week.
pub fn window_length(text: &str) -> Option<SignedDuration> {
    parse_go_duration_nanos(text)
        .map(SignedDuration::from_nanos)
        .filter(|d| d.is_positive() && *d <= MAX_WINDOW)
}

/// Checks a policy being created (`old` None) or updated from `old`.
pub fn review_policy(spec: &ClusterClassRolloutSpec, old: Option<&ClusterClassRolloutSpec>) -> PolicyReview {
    let root = FieldPath::new("spec");
    let mut review = PolicyReview::default();
    let class = root.child("classRef").child("name");
    if spec.class_ref.name.is_empty() {
        review.errors.push(FieldError::required(&class, ""));
    }
    if let Some(old) = old.filter(|old| old.class_ref != spec.class_ref) {
        let detail = format!("field is immutable (was {:?})", old.class_ref.name);
        review
            .errors
            .push(FieldError::invalid(&class, spec.class_ref.name.as_str(), detail));
    }
    check_waves(&spec.waves, &root.child("waves"), &mut review);
    if let Some(gate) = &spec.health_gate {
        review.errors.extend(check_gate(gate, &root.child("healthGate")));
    }
    review.errors.extend(check_windows(
        &spec.maintenance_windows,
        &root.child("maintenanceWindows"),
    ));
    let choices = [
        (
            "onHalt",
            spec.on_halt.as_deref(),
            [ON_HALT_ROLLBACK, ON_HALT_HOLD],
        ),
        (
            "onClassChange",
            spec.on_class_change.as_deref(),
            [ON_CHANGE_QUEUE, ON_CHANGE_SUPERSEDE],
        ),
    ];
    for (field, value, supported) in choices {
        if let Some(value) = value.filter(|v| !supported.contains(v)) {
            review
                .errors
                .push(FieldError::not_supported(&root.child(field), value, &supported));
        }
    }
    review
}

fn check_waves(waves: &[RolloutWave], path: &FieldPath, review: &mut PolicyReview) {
    if waves.len() > MAX_WAVES {
        review
            .errors
            .push(FieldError::too_many(path, waves.len(), MAX_WAVES));
        return;
    }
    let mut catch_all: Option<&str> = None;
    for (index, wave) in waves.iter().enumerate() {
        let item = path.index(index);
        let name = item.child("name");
        let problems = dns1123_label_problems(&wave.name);
        if !problems.is_empty() {
            review.errors.push(FieldError::invalid(
                &name,
                wave.name.as_str(),
                problems.join("; "),
            ));
        } else if wave.name == REMAINING_WAVE {
            let detail = format!("{REMAINING_WAVE:?} names the implicit last wave");
            review
                .errors
                .push(FieldError::invalid(&name, wave.name.as_str(), detail));
        } else if waves[..index].iter().any(|w| w.name == wave.name) {
            review
                .errors
                .push(FieldError::duplicate(&name, wave.name.as_str()));
        }
        match Selector::parse(&wave.selector) {
            Err(err) => {
                let value = serde_json::to_value(&wave.selector).unwrap_or_default();
                review.errors.push(FieldError::invalid(
                    &item.child("selector"),
                    value,
                    err.to_string(),
                ));
            }
            Ok(selector) => {
                if let Some(earlier) = catch_all {
                    review.warnings.push(format!(
                        "{item}: wave {:?} can hold no Cluster: wave {earlier:?} before it has an empty selector, which takes every Cluster left",
                        wave.name
                    ));
                } else if selector.is_empty() {
                    catch_all = Some(&wave.name);
                }
            }
        }
        if let Some(value) = wave.max_rolling.as_ref().filter(|v| limit_of(v).is_none()) {
            let shown = match value {
                IntOrString::Int(n) => serde_json::Value::from(*n),
                IntOrString::String(text) => serde_json::Value::from(text.as_str()),
            };
            review.errors.push(FieldError::invalid(
                &item.child("maxRolling"),
                shown,
                "a number of Clusters (at least 1) or a percentage from 1% to 100%",
            ));
        }
    }
}

fn check_gate(gate: &HealthGate, path: &FieldPath) -> FieldErrors {
    let mut errors = FieldErrors::new();
    for (field, value) in [("soak", &gate.soak), ("deadline", &gate.deadline)] {
        if let Some(text) = value.as_deref().filter(|t| gate_duration(t).is_none()) {
            errors.push(FieldError::invalid(
                &path.child(field),
                text,
                "a duration such as 10m or 1h30m",
            ));
        }
    }
    if gate.deadline.as_deref().and_then(gate_duration) == Some(SignedDuration::ZERO) {
        errors.push(FieldError::invalid(
            &path.child("deadline"),
            gate.deadline.as_deref().unwrap_or_default(),
            "must be more than 0: a wave needs time to become healthy",
        ));
    }
    errors
}

fn check_windows(windows: &[MaintenanceWindow], path: &FieldPath) -> FieldErrors {
    let mut errors = FieldErrors::new();
    if windows.len() > MAX_WINDOWS {
        errors.push(FieldError::too_many(path, windows.len(), MAX_WINDOWS));
        return errors;
    }
    for (index, window) in windows.iter().enumerate() {
        let item = path.index(index);
        if window.start.parse::<jiff::civil::Time>().is_err() || window.start.len() != 5 {
            errors.push(FieldError::invalid(
                &item.child("start"),
                window.start.as_str(),
                "a time of day in UTC, HH:MM",
            ));
        }
        if window_length(&window.duration).is_none() {
            errors.push(FieldError::invalid(
                &item.child("duration"),
                window.duration.as_str(),
                "a duration of more than 0 and at most 168h (a week)",
            ));
        }
        let days = item.child("days");
        if window.days.len() > MAX_DAYS {
            // The CRD's `maxItems`; checked first so a longer list is never scanned for repeats.
            errors.push(FieldError::too_many(&days, window.days.len(), MAX_DAYS));
            continue;
        }
        for (day_index, day) in window.days.iter().enumerate() {
            if window.days[..day_index].contains(day) {
                let shown = serde_json::to_value(day).unwrap_or_default();
                errors.push(FieldError::duplicate(&days.index(day_index), shown));
            }
        }
    }
    errors
}

#[cfg(test)]
#[path = "policy_tests.rs"]
mod tests;
