//! Chained upgrades: the versions the control plane steps through on its way to
//! `spec.topology.version` (one per minor, or what the class lists, or what a GenerateUpgradePlan
//! extension answers), and the fewer steps the workers take (at most three minors apart, as the
//! Kubernetes version-skew policy allows), defaulted and validated as Cluster API v1.14 does.
//! Pure: the extension's answer is passed in.

use std::collections::{BTreeMap, BTreeSet};

use semver::Version;

/// How far (in minors) workers may trail the control plane: they move at least every this many.
const WORKERS_MAX_MINOR_SKEW: u64 = 3;

/// The upgrade still ahead of a Cluster: the control plane's steps and the workers' steps, each
/// list in order and ending with the target (empty when that part is already there).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct UpgradeSteps {
    /// The versions the control plane still goes through.
    pub control_plane: Vec<String>,
    /// The versions the workers still go through.
    pub workers: Vec<String>,
}

impl UpgradeSteps {
    /// True when neither the control plane nor the workers have a step ahead.
    pub fn is_empty(&self) -> bool {
        self.control_plane.is_empty() && self.workers.is_empty()
    }
}

/// Parses a version as Cluster API does (an optional leading `v`, a missing patch taken as 0).
pub fn parse(version: &str) -> Option<Version> {
    let trimmed = version.trim();
    let trimmed = trimmed.strip_prefix('v').unwrap_or(trimmed);
    Version::parse(trimmed).ok().or_else(|| {
        let dots = trimmed.bytes().filter(|b| *b == b'.').count();
        (dots == 1 && !trimmed.contains(['+', '-']))
            .then(|| Version::parse(&format!("{trimmed}.0")).ok())
            .flatten()
    })
}

fn parsed(version: &str, what: &str) -> Result<Version, String> {
    parse(version).ok_or_else(|| format!("failed to parse {what} version {version}"))
}

fn display(version: &Version) -> String {
    format!("v{version}")
}

/// The lowest version the workers run, `v`-prefixed (`None` without a versioned worker). As
/// Cluster API, a version equal in precedence to another but with other build metadata counts as
/// lower unless it is the control plane's.
pub fn min_workers_version<'a>(
    control_plane: &str,
    workers: impl IntoIterator<Item = &'a str>,
) -> Result<Option<String>, String> {
    let control_plane = parsed(control_plane, "control plane")?;
    let mut lowest: Option<Version> = None;
    for text in workers.into_iter().filter(|v| !v.is_empty()) {
        let version = parsed(text, "worker")?;
        let lower = lowest
            .as_ref()
            .is_none_or(|min| match version.cmp_precedence(min) {
                std::cmp::Ordering::Less => true,
                std::cmp::Ordering::Equal => version.build != min.build && version != control_plane,
                std::cmp::Ordering::Greater => false,
            });
        if lower {
            lowest = Some(version);
        }
    }
    Ok(lowest.as_ref().map(display))
}

/// The control plane's steps without a plan source: the target itself, at most one minor ahead.
pub fn one_minor(desired: &str, control_plane: &str) -> Result<Vec<String>, String> {
    let target = parsed(desired, "desired")?;
    let current = parsed(control_plane, "current control plane")?;
    if target == current {
        return Ok(Vec::new());
    }
    if target.minor > current.minor.saturating_add(1) {
        return Err(format!(
            "cannot compute an upgrade plan from {control_plane} to {desired}"
        ));
    }
    Ok(vec![desired.to_owned()])
}

/// The control plane's steps from the class's `kubernetesVersions`: of the listed versions above
/// the control plane's and up to the target, the last of each minor (or the first one when the
/// upgrade stays within a minor).
pub fn from_class_versions(
    versions: &[String],
    desired: &str,
    control_plane: &str,
) -> Result<Vec<String>, String> {
    let target = parsed(desired, "desired")?;
    let current = parsed(control_plane, "current control plane")?;
    if target == current {
        return Ok(Vec::new());
    }
    let mut ahead: Vec<(&String, Version)> = Vec::new();
    for text in versions {
        let version = parsed(text, "listed")?;
        if version.cmp_precedence(&current).is_le() {
            continue;
        }
        if version > target {
            break;
        }
        let reached = version == target;
        ahead.push((text, version));
        if reached {
            break;
        }
    }
    let mut steps: Vec<String> = Vec::new();
    let mut minor = current.minor;
    if let (true, Some((first, _))) = (minor == target.minor, ahead.first()) {
        steps.push((*first).clone());
    }
    for (text, version) in &ahead {
        if version.minor > minor {
            steps.push((*text).clone());
        } else if version.minor == minor {
            if let Some(last) = steps.last_mut() {
                last.clone_from(text);
            }
        }
        minor = version.minor;
    }
    Ok(steps)
}

/// Checks the control plane's steps and defaults then checks the workers' (Cluster API v1.14's
/// rules): each control plane step above the one before and at most one minor further, the last
/// the target; worker steps among the control plane's versions, in order, at most three minors
/// apart, the last the target; without worker steps, one every three minors and the target.
pub fn default_and_validate(
    desired: &str,
    control_plane: &str,
    min_workers: Option<&str>,
    control_plane_steps: Vec<String>,
    workers_steps: Vec<String>,
) -> Result<UpgradeSteps, String> {
    let target = parsed(desired, "Cluster")?;
    let cp = parsed(control_plane, "ControlPlane")?;
    let min_workers = min_workers.map(|v| parsed(v, "min workers")).transpose()?;
    let mut minors: BTreeMap<u64, String> = BTreeMap::from([(cp.minor, control_plane.to_owned())]);
    if cp != target {
        let mut current = cp.clone();
        for (i, text) in control_plane_steps.iter().enumerate() {
            let invalid = |detail: String| format!("invalid ControlPlane upgrade plan: item {i}; {detail}");
            let version = parse(text).ok_or_else(|| invalid(format!("failed to parse version {text}")))?;
            if version <= current {
                return Err(invalid(format!(
                    "version {text} must be greater than {}",
                    display(&current)
                )));
            }
            if version.minor != current.minor && version.minor != current.minor + 1 {
                return Err(invalid(format!(
                    "expecting a version with minor {} or {}, found version {text}",
                    current.minor,
                    current.minor + 1
                )));
            }
            minors.insert(version.minor, text.clone());
            current = version;
        }
        if current != target {
            return Err(format!(
                "invalid ControlPlane upgrade plan: control plane upgrade plan must end with version {desired}, ends with {} instead",
                display(&current)
            ));
        }
    } else if !control_plane_steps.is_empty() {
        return Err(
            "invalid ControlPlane upgrade plan: control plane is already at the desired version".into(),
        );
    }
    let workers = match min_workers {
        Some(min) if min != target => validate_workers(
            desired,
            control_plane,
            &target,
            &min,
            &minors,
            &control_plane_steps,
            workers_steps,
        )?,
        _ if !workers_steps.is_empty() => return Err(
            "invalid workers upgrade plan: there are no workers or workers already at the desired version"
                .into(),
        ),
        _ => Vec::new(),
    };
    Ok(UpgradeSteps {
        control_plane: control_plane_steps,
        workers,
    })
}

fn validate_workers(
    desired: &str,
    control_plane: &str,
    target: &Version,
    min: &Version,
    minors: &BTreeMap<u64, String>,
    control_plane_steps: &[String],
    mut steps: Vec<String>,
) -> Result<Vec<String>, String> {
    if !control_plane_steps.is_empty() {
        let known: BTreeSet<&str> = control_plane_steps
            .iter()
            .map(String::as_str)
            .chain([control_plane])
            .collect();
        let unknown: Vec<&str> = steps
            .iter()
            .map(String::as_str)
            .filter(|v| !known.contains(v))
            .collect();
        if !unknown.is_empty() {
            return Err(format!(
                "invalid workers upgrade plan: versions {} match neither a version of the control plane upgrade plan nor the control plane version",
                unknown.join(",")
            ));
        }
    }
    if steps.is_empty() {
        let span = target.minor.saturating_sub(min.minor);
        for i in (WORKERS_MAX_MINOR_SKEW..span).step_by(WORKERS_MAX_MINOR_SKEW as usize) {
            let minor = min.minor + i;
            let version = minors.get(&minor).ok_or_else(|| {
                format!("invalid upgrade plan: unable to identify a version for minor {minor}")
            })?;
            steps.push(version.clone());
        }
        if steps.last().is_none_or(|last| last != desired) {
            steps.push(desired.to_owned());
        }
    }
    let mut current = min.clone();
    for (i, text) in steps.iter().enumerate() {
        let invalid = |detail: String| format!("invalid workers upgrade plan: item {i}; {detail}");
        let version = parse(text).ok_or_else(|| invalid(format!("failed to parse version {text}")))?;
        if version <= current {
            return Err(invalid(format!(
                "version {text} must be greater than {}",
                display(&current)
            )));
        }
        if version.minor.saturating_sub(current.minor) > WORKERS_MAX_MINOR_SKEW {
            return Err(invalid(format!(
                "workers cannot go from minor {} ({}) to minor {} ({text}): an intermediate step is required by the Kubernetes version skew policy",
                current.minor,
                display(&current),
                version.minor
            )));
        }
        current = version;
    }
    if current != *target {
        return Err(format!(
            "invalid workers upgrade plan: workers upgrade plan must end with version {desired}, ends with {} instead",
            display(&current)
        ));
    }
    Ok(steps)
}

#[cfg(test)]
#[path = "upgrade_steps_tests.rs"]
mod tests;
