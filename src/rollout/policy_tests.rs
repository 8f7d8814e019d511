use super::*;

fn spec(yaml: &str) -> ClusterClassRolloutSpec {
    serde_yaml_ng::from_str(yaml).expect("spec decodes")
}

fn messages(review: &PolicyReview) -> Vec<String> {
    review.errors.iter().map(ToString::to_string).collect()
}

#[test]
fn a_good_policy_passes_without_warnings() {
    let good = spec(
        r#"
classRef: {name: quick-start}
waves:
- {name: canary, selector: {matchLabels: {ring: canary}}}
- name: fleet
  selector: {matchExpressions: [{key: ring, operator: In, values: [a, b]}]}
  maxRolling: 25%
- {name: rest, maxRolling: 3}
healthGate: {soak: 10m, deadline: 1h30m}
maintenanceWindows: [{days: [Sat, Sun], start: "22:00", duration: 4h}]
onHalt: Hold
onClassChange: Supersede
"#,
    );
    let review = review_policy(&good, Some(&good));
    assert!(review.errors.is_empty(), "{:?}", messages(&review));
    assert!(review.warnings.is_empty(), "{:?}", review.warnings);
}

#[test]
fn every_bad_field_is_named_by_its_path() {
    let bad = spec(
        r#"
classRef: {name: ""}
waves:
- {name: canary, selector: {matchLabels: {"no spaces": x}}}
- name: canary
  selector: {matchExpressions: [{key: ring, operator: Exists, values: [a]}]}
  maxRolling: 0
- {name: remaining}
- {name: Fleet, maxRolling: 150%}
healthGate: {soak: soon, deadline: 0s}
maintenanceWindows: [{days: [Sat, Sat], start: "24:00", duration: 200h}]
onHalt: Panic
onClassChange: Merge
"#,
    );
    let found = messages(&review_policy(&bad, None));
    let paths: Vec<&str> = found
        .iter()
        .map(|m| m.split(": ").next().unwrap_or_default())
        .collect();
    assert_eq!(
        paths,
        [
            "spec.classRef.name",
            "spec.waves[0].selector",
            "spec.waves[1].name",
            "spec.waves[1].selector",
            "spec.waves[1].maxRolling",
            "spec.waves[2].name",
            "spec.waves[3].name",
            "spec.waves[3].maxRolling",
            "spec.healthGate.soak",
            "spec.healthGate.deadline",
            "spec.maintenanceWindows[0].start",
            "spec.maintenanceWindows[0].duration",
            "spec.maintenanceWindows[0].days[1]",
            "spec.onHalt",
            "spec.onClassChange",
        ],
        "{found:#?}"
    );
    assert!(found[2].contains("Duplicate value: \"canary\""), "{}", found[2]);
    assert!(
        found[3].contains("values set must be empty for exists and does not exist"),
        "{}",
        found[3]
    );
    assert!(found[5].contains("names the implicit last wave"), "{}", found[5]);
    assert!(
        found[13].ends_with(r#"Unsupported value: "Panic": supported values: "Rollback", "Hold""#),
        "{}",
        found[13]
    );
}

#[test]
fn the_class_of_a_policy_cannot_change() {
    let old = spec("classRef: {name: quick-start}");
    let new = spec("classRef: {name: other}");
    let found = messages(&review_policy(&new, Some(&old)));
    assert_eq!(
        found,
        [r#"spec.classRef.name: Invalid value: "other": field is immutable (was "quick-start")"#]
    );
}

#[test]
fn a_wave_after_an_empty_selector_is_warned_about() {
    let shadowed = spec(
        r#"
classRef: {name: quick-start}
waves:
- {name: all}
- {name: late, selector: {matchLabels: {ring: late}}}
"#,
    );
    let review = review_policy(&shadowed, None);
    assert!(review.errors.is_empty());
    assert_eq!(review.warnings.len(), 1);
    assert!(
        review.warnings[0].starts_with(r#"spec.waves[1]: wave "late" can hold no Cluster: wave "all""#),
        "{}",
        review.warnings[0]
    );
}

#[test]
fn limits_read_as_the_crd_allows() {
    assert_eq!(limit_of(&IntOrString::Int(3)), Some(Limit::Count(3)));
    assert_eq!(
        limit_of(&IntOrString::String("100%".into())),
        Some(Limit::Percent(100))
    );
    for bad in ["0%", "101%", "+5%", "5", "%"] {
        assert_eq!(limit_of(&IntOrString::String(bad.into())), None, "{bad}");
    }
    assert_eq!(limit_of(&IntOrString::Int(-1)), None);
}

#[test]
fn too_many_waves_are_refused_without_reading_each() {
    let waves: Vec<RolloutWave> = (0..MAX_WAVES + 1)
        .map(|i| RolloutWave {
            name: format!("w{i}"),
            ..Default::default()
        })
        .collect();
    let policy = ClusterClassRolloutSpec {
        class_ref: crate::api::class_rollout::ClassRolloutClassRef { name: "c".into() },
        waves,
        ..Default::default()
    };
    let found = messages(&review_policy(&policy, None));
    assert_eq!(found, ["spec.waves: Too many: 21: must have at most 20 items"]);
}

#[test]
fn a_window_naming_more_days_than_a_week_is_refused_without_scanning_them() {
    let days = vec![crate::api::class_rollout::Weekday::Mon; 100_000];
    let policy = ClusterClassRolloutSpec {
        class_ref: crate::api::class_rollout::ClassRolloutClassRef { name: "c".into() },
        maintenance_windows: vec![MaintenanceWindow {
            days,
            start: "01:00".into(),
            duration: "1h".into(),
        }],
        ..Default::default()
    };
    let found = messages(&review_policy(&policy, None));
    assert_eq!(
        found,
        ["spec.maintenanceWindows[0].days: Too many: 100000: must have at most 7 items"]
    );
}
