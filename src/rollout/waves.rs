//! The waves a rollout policy makes of a class's Clusters: each Cluster in the first wave whose
//! selector matches its labels, the Clusters no wave selects in a last wave, `remaining`; and how
//! many of a wave may roll at once.

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

use super::policy::{limit_of, Limit};
use crate::api::class_rollout::{ClusterClassRolloutSpec, RolloutWave, REMAINING_WAVE};
use crate::api::selector::Selector;

/// One Cluster of the class, as the waves see it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Member {
    /// The Cluster's namespace.
    pub namespace: String,
    /// The Cluster's name.
    pub name: String,
    /// The Cluster's labels.
    pub labels: BTreeMap<String, String>,
}

/// One wave of Clusters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Wave {
    /// The wave's name.
    pub name: String,
    /// Its Clusters, as (namespace, name), in that order.
    pub members: Vec<(String, String)>,
    /// How many of them may roll at once (at least 1).
    pub max_rolling: usize,
}

/// The waves of `clusters` under `spec`, in order; the implicit `remaining` wave last when some
/// Cluster is in no wave (with the last wave's limit). A wave may be empty.
pub fn plan_waves(spec: &ClusterClassRolloutSpec, clusters: &[Member]) -> Result<Vec<Wave>, String> {
    let selectors = spec
        .waves
        .iter()
        .map(|wave| {
            Selector::parse(&wave.selector).map_err(|e| format!("spec.waves[{}].selector: {e}", wave.name))
        })
        .collect::<Result<Vec<_>, _>>()?;
    let mut members: Vec<Vec<(String, String)>> = vec![Vec::new(); spec.waves.len() + 1];
    let mut sorted: Vec<&Member> = clusters.iter().collect();
    sorted.sort_by(|a, b| (&a.namespace, &a.name).cmp(&(&b.namespace, &b.name)));
    for cluster in sorted {
        let index = selectors
            .iter()
            .position(|selector| selector.is_empty() || selector.matches(&cluster.labels))
            .unwrap_or(spec.waves.len());
        members[index].push((cluster.namespace.clone(), cluster.name.clone()));
    }
    let remaining = members.pop().unwrap_or_default();
    let mut waves: Vec<Wave> = spec
        .waves
        .iter()
        .zip(members)
        .map(|(wave, members)| {
            let max_rolling = max_rolling(wave, members.len())?;
            Ok(Wave {
                name: wave.name.clone(),
                members,
                max_rolling,
            })
        })
        .collect::<Result<_, String>>()?;
    if !remaining.is_empty() || waves.is_empty() {
        let max_rolling = match spec.waves.last() {
            Some(last) => max_rolling(last, remaining.len())?,
            None => 1,
        };
        waves.push(Wave {
            name: REMAINING_WAVE.to_owned(),
            members: remaining,
            max_rolling,
        });
    }
    Ok(waves)
}

/// How many Clusters of a wave of `size` may roll at once: the number given, or the percentage
/// of the wave rounded down; at least 1. A value the policy's rules refuse (`0`, `150%`, `x%`)
/// is refused here too, with its field path.
fn max_rolling(wave: &RolloutWave, size: usize) -> Result<usize, String> {
    let Some(value) = &wave.max_rolling else {
        return Ok(1);
    };
    let limit = limit_of(value).ok_or_else(|| {
        let shown = match value {
            IntOrString::Int(n) => n.to_string(),
            IntOrString::String(text) => format!("{text:?}"),
        };
        format!(
            "spec.waves[{}].maxRolling: Invalid value: {shown}: a number of Clusters (at least 1) or a percentage from 1% to 100%",
            wave.name
        )
    })?;
    let count = match limit {
        Limit::Count(n) => n,
        Limit::Percent(percent) => size.saturating_mul(percent) / 100,
    };
    Ok(count.max(1))
}

#[cfg(test)]
mod tests {
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;

    use super::*;

    fn member(name: &str, wave: Option<&str>) -> Member {
        let labels = wave
            .map(|w| [("wave".to_owned(), w.to_owned())].into())
            .unwrap_or_default();
        Member {
            namespace: "default".into(),
            name: name.into(),
            labels,
        }
    }

    fn wave(name: &str, selects: Option<&str>, max: Option<IntOrString>) -> RolloutWave {
        let selector = LabelSelector {
            match_labels: selects.map(|w| [("wave".to_owned(), w.to_owned())].into()),
            ..Default::default()
        };
        RolloutWave {
            name: name.into(),
            selector,
            max_rolling: max,
        }
    }

    #[test]
    fn each_cluster_joins_the_first_wave_that_selects_it_and_the_rest_come_last() {
        let spec = ClusterClassRolloutSpec {
            waves: vec![
                wave("canary", Some("canary"), None),
                wave("prod", Some("prod"), Some(IntOrString::Int(2))),
            ],
            ..Default::default()
        };
        let clusters = [
            member("e", Some("prod")),
            member("a", Some("canary")),
            member("c", None),
            member("b", Some("prod")),
        ];
        let waves = plan_waves(&spec, &clusters).unwrap();
        let names: Vec<_> = waves
            .iter()
            .map(|w| (w.name.as_str(), w.members.len(), w.max_rolling))
            .collect();
        assert_eq!(names, [("canary", 1, 1), ("prod", 2, 2), ("remaining", 1, 2)]);
        assert_eq!(waves[1].members[0].1, "b", "members in name order");
    }

    #[test]
    fn percentages_round_down_to_at_least_one() {
        let spec = |max: &str| ClusterClassRolloutSpec {
            waves: vec![wave("all", None, Some(IntOrString::String(max.into())))],
            ..Default::default()
        };
        let clusters: Vec<_> = (0..7).map(|i| member(&format!("c{i}"), None)).collect();
        assert_eq!(plan_waves(&spec("50%"), &clusters).unwrap()[0].max_rolling, 3);
        assert_eq!(plan_waves(&spec("10%"), &clusters).unwrap()[0].max_rolling, 1);
        assert_eq!(plan_waves(&spec("100%"), &clusters).unwrap()[0].max_rolling, 7);
        assert_eq!(
            plan_waves(&spec("50%"), &clusters).unwrap().len(),
            1,
            "an empty selector takes every Cluster"
        );
    }

    #[test]
    fn no_waves_make_one_wave_of_every_cluster_one_at_a_time() {
        let waves = plan_waves(&ClusterClassRolloutSpec::default(), &[member("a", None)]).unwrap();
        assert_eq!(
            waves,
            [Wave {
                name: "remaining".into(),
                members: vec![("default".into(), "a".into())],
                max_rolling: 1
            }]
        );
    }

    #[test]
    fn a_limit_past_the_crds_rules_is_refused() {
        for bad in [
            IntOrString::Int(0),
            IntOrString::String("150%".into()),
            IntOrString::String("x%".into()),
        ] {
            let spec = ClusterClassRolloutSpec {
                waves: vec![wave("all", None, Some(bad))],
                ..Default::default()
            };
            let error = plan_waves(&spec, &[]).unwrap_err();
            assert!(
                error.starts_with("spec.waves[all].maxRolling: Invalid value: "),
                "{error}"
            );
        }
    }

    #[test]
    fn a_bad_selector_names_its_wave() {
        let mut bad = wave("canary", None, None);
        bad.selector.match_labels = Some([("no spaces allowed".to_owned(), "x".to_owned())].into());
        let spec = ClusterClassRolloutSpec {
            waves: vec![bad],
            ..Default::default()
        };
        let error = plan_waves(&spec, &[]).unwrap_err();
        assert!(error.starts_with("spec.waves[canary].selector: "), "{error}");
    }
}
