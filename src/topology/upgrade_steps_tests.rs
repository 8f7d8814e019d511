use super::*;

fn strings(versions: &[&str]) -> Vec<String> {
    versions.iter().map(|v| (*v).to_owned()).collect()
}

#[test]
fn one_minor_allows_only_the_next_minor() {
    assert_eq!(one_minor("v1.31.2", "v1.31.2").unwrap(), Vec::<String>::new());
    assert_eq!(one_minor("v1.32.0", "v1.31.2").unwrap(), strings(&["v1.32.0"]));
    let error = one_minor("v1.33.0", "v1.31.2").unwrap_err();
    assert_eq!(error, "cannot compute an upgrade plan from v1.31.2 to v1.33.0");
}

#[test]
fn class_versions_keep_the_last_patch_of_each_minor_up_to_the_target() {
    let listed = strings(&[
        "v1.30.0", "v1.31.0", "v1.31.4", "v1.32.1", "v1.32.3", "v1.33.0", "v1.33.5", "v1.34.0",
    ]);
    let steps = from_class_versions(&listed, "v1.33.5", "v1.30.0").unwrap();
    assert_eq!(steps, strings(&["v1.31.4", "v1.32.3", "v1.33.5"]));
    // Within one minor: one step, straight to the target.
    let steps = from_class_versions(&listed, "v1.31.4", "v1.31.0").unwrap();
    assert_eq!(steps, strings(&["v1.31.4"]));
    assert!(from_class_versions(&listed, "v1.30.0", "v1.30.0")
        .unwrap()
        .is_empty());
}

#[test]
fn workers_default_to_one_step_every_three_minors() {
    let cp = strings(&["v1.31.0", "v1.32.0", "v1.33.0", "v1.34.0", "v1.35.0"]);
    let steps = default_and_validate("v1.35.0", "v1.30.0", Some("v1.30.0"), cp.clone(), Vec::new()).unwrap();
    assert_eq!(steps.control_plane, cp);
    assert_eq!(steps.workers, strings(&["v1.33.0", "v1.35.0"]));
    // Two minors: the workers move once, at the end.
    let cp = strings(&["v1.34.0", "v1.35.0"]);
    let steps = default_and_validate("v1.35.0", "v1.33.0", Some("v1.33.0"), cp, Vec::new()).unwrap();
    assert_eq!(steps.workers, strings(&["v1.35.0"]));
    // No workers, or workers already there: no worker step.
    let steps = default_and_validate("v1.35.0", "v1.34.0", None, strings(&["v1.35.0"]), Vec::new()).unwrap();
    assert!(steps.workers.is_empty());
}

#[test]
fn control_plane_steps_are_checked() {
    let check = |cp: &[&str]| default_and_validate("v1.33.0", "v1.31.0", None, strings(cp), Vec::new());
    assert_eq!(
        check(&["v1.33.0"]).unwrap_err(),
        "invalid ControlPlane upgrade plan: item 0; expecting a version with minor 31 or 32, found version v1.33.0"
    );
    assert_eq!(
        check(&["v1.32.0", "v1.32.0"]).unwrap_err(),
        "invalid ControlPlane upgrade plan: item 1; version v1.32.0 must be greater than v1.32.0"
    );
    assert_eq!(
        check(&["v1.32.0"]).unwrap_err(),
        "invalid ControlPlane upgrade plan: control plane upgrade plan must end with version v1.33.0, ends with v1.32.0 instead"
    );
    let at_target = default_and_validate("v1.31.0", "v1.31.0", None, strings(&["v1.31.0"]), Vec::new());
    assert!(at_target.unwrap_err().contains("already at the desired version"));
}

#[test]
fn worker_steps_are_checked() {
    let cp = strings(&["v1.31.0", "v1.32.0", "v1.33.0", "v1.34.0", "v1.35.0"]);
    let check = |workers: &[&str]| {
        default_and_validate(
            "v1.35.0",
            "v1.30.0",
            Some("v1.30.0"),
            cp.clone(),
            strings(workers),
        )
    };
    assert!(check(&["v1.35.0"])
        .unwrap_err()
        .contains("workers cannot go from minor 30 (v1.30.0) to minor 35"));
    assert!(check(&["v1.36.0"])
        .unwrap_err()
        .contains("versions v1.36.0 match neither"));
    assert!(check(&["v1.32.0"])
        .unwrap_err()
        .contains("must end with version v1.35.0"));
    assert_eq!(
        check(&["v1.32.0", "v1.35.0"]).unwrap().workers,
        strings(&["v1.32.0", "v1.35.0"])
    );
    let none = default_and_validate(
        "v1.31.0",
        "v1.30.0",
        None,
        strings(&["v1.31.0"]),
        strings(&["v1.31.0"]),
    );
    assert!(none.unwrap_err().contains("there are no workers"));
}

#[test]
fn the_lowest_worker_version_is_found() {
    let min = min_workers_version("v1.33.0", ["v1.33.0", "", "v1.31.2", "v1.32.0"]).unwrap();
    assert_eq!(min.as_deref(), Some("v1.31.2"));
    assert_eq!(min_workers_version("v1.33.0", []).unwrap(), None);
    assert!(min_workers_version("v1.33.0", ["banana"]).is_err());
    assert_eq!(parse("1.31").map(|v| v.to_string()).as_deref(), Some("1.31.0"));
}
