//! Fidelity: our desired state (`plan -o json`) equals Cluster API v1.14.0's, field for field,
//! measured with Cluster API's own code (`benches/reference/desiredstate`, its exported
//! `exp/topology/desiredstate` Generator) on v1.14.0's own classes, on the providers' classes of
//! `tests/fixtures/realworld` and on the cases of `tests/fixtures/fidelity`. Every difference is
//! listed, with its reason, in `tests/fixtures/fidelity/differences.yaml`, which is asserted
//! exactly: a new difference fails, and so does a listed one that is gone. docs/fidelity.md.

mod compare;
mod harness;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use serde_json::Value;

const DIFFERENCES: &str = "tests/fixtures/fidelity/differences.yaml";

/// Every fixture compared: its name and its files.
fn fixtures() -> Vec<(String, Vec<PathBuf>)> {
    let mut fixtures = vec![
        (
            "reference/v1beta1".to_owned(),
            vec![
                "tests/fixtures/reference/clusterclass-quick-start.yaml".into(),
                "tests/fixtures/reference/cluster-with-topology.yaml".into(),
            ],
        ),
        (
            "reference/v1.14".to_owned(),
            vec![
                "tests/fixtures/reference/v1.14/clusterclass-quick-start.yaml".into(),
                "tests/fixtures/reference/v1.14/cluster-template-development.yaml".into(),
            ],
        ),
    ];
    for group in ["realworld", "fidelity"] {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures")
            .join(group);
        let mut names: Vec<String> = std::fs::read_dir(&dir)
            .unwrap()
            .filter_map(|entry| entry.ok())
            .filter(|entry| entry.path().is_dir())
            .map(|entry| entry.file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        for name in names {
            let files = ["clusterclass.yaml", "cluster.yaml"]
                .iter()
                .map(|file| PathBuf::from(format!("tests/fixtures/{group}/{name}/{file}")))
                .collect();
            fixtures.push((format!("{group}/{name}"), files));
        }
    }
    fixtures
}

/// One listed difference or fixture not compared, as `differences.yaml` writes it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Listed {
    fixture: String,
    object: String,
    path: String,
}

impl std::fmt::Display for Listed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "- fixture: {}\n  object: {}\n  path: {:?}",
            self.fixture, self.object, self.path
        )
    }
}

/// The listed differences (`differences`) and fixtures not compared (`notCompared`, object
/// `(fixture)`); each entry must give a reason.
fn listed() -> BTreeSet<Listed> {
    let text = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(DIFFERENCES)).unwrap();
    let list: Value = serde_yaml_ng::from_str(&text).unwrap();
    let field = |entry: &Value, key: &str| entry[key].as_str().unwrap_or_default().to_owned();
    let mut all = BTreeSet::new();
    for entry in list["notCompared"].as_array().into_iter().flatten() {
        assert!(
            !field(entry, "reason").is_empty(),
            "{DIFFERENCES}: no reason for {entry}"
        );
        all.insert(Listed {
            fixture: field(entry, "fixture"),
            object: "(fixture)".into(),
            path: String::new(),
        });
    }
    for entry in list["differences"].as_array().into_iter().flatten() {
        assert!(
            !field(entry, "reason").is_empty(),
            "{DIFFERENCES}: no reason for {entry}"
        );
        let listed = Listed {
            fixture: field(entry, "fixture"),
            object: field(entry, "object"),
            path: field(entry, "path"),
        };
        assert!(
            all.insert(listed.clone()),
            "{DIFFERENCES}: listed twice:\n{listed}"
        );
    }
    all
}

/// What differs in one fixture, with the values shown in a failure.
fn found_in(fixture: &str, ours: harness::Outcome, theirs: harness::Outcome) -> Vec<(Listed, String)> {
    let entry = |object: &str, path: &str, detail: String| {
        (
            Listed {
                fixture: fixture.into(),
                object: object.into(),
                path: path.into(),
            },
            detail,
        )
    };
    match (ours, theirs) {
        (Ok(ours), Ok(theirs)) => compare::differences(&ours, &theirs)
            .into_iter()
            .map(|d| {
                entry(
                    &d.object,
                    &d.path,
                    format!("ours {} / v1.14.0 {}", d.ours, d.theirs),
                )
            })
            .collect(),
        (Err(ours), Err(theirs)) => vec![entry(
            "(fixture)",
            "",
            format!("plan: {ours} / v1.14.0: {theirs}"),
        )],
        (Err(ours), Ok(_)) => vec![entry("(plan)", "", format!("plan failed: {ours}"))],
        (Ok(_), Err(theirs)) => vec![entry("(fixture)", "", format!("v1.14.0 failed: {theirs}"))],
    }
}

/// A fixture's Clusters, or the fixture's failure when it fails, or when every Cluster does.
fn whole(
    side: Result<Vec<(String, harness::Outcome)>, String>,
) -> Result<Vec<(String, harness::Outcome)>, String> {
    let clusters = side?;
    let errors: Vec<String> = clusters
        .iter()
        .filter_map(|(_, o)| o.as_ref().err().cloned())
        .collect();
    if !clusters.is_empty() && errors.len() == clusters.len() {
        return Err(errors.join("; "));
    }
    Ok(clusters)
}

/// Whether a listed entry covers a found difference: the same path, the fixture equal or `*`,
/// the object equal, or `*.suffix` for every object whose role ends with `.suffix`.
fn covers(listed: &Listed, found: &Listed) -> bool {
    let object = match listed.object.strip_prefix('*') {
        Some(suffix) => found.object.ends_with(suffix),
        None => found.object == listed.object,
    };
    (listed.fixture == "*" || listed.fixture == found.fixture) && object && listed.path == found.path
}

#[test]
fn desired_state_equals_cluster_api_v1_14_field_for_field() {
    let fixtures = fixtures();
    let files: Vec<Vec<PathBuf>> = fixtures.iter().map(|(_, files)| files.clone()).collect();
    let reference = harness::reference(&files);
    let mut found: Vec<(Listed, String)> = Vec::new();
    let mut compared = 0;
    for ((name, files), theirs) in fixtures.iter().zip(reference) {
        match (whole(harness::ours(files)), whole(theirs)) {
            (Ok(ours), Ok(theirs)) => {
                compared += 1;
                let names: BTreeSet<&String> = ours.iter().chain(&theirs).map(|(name, _)| name).collect();
                for cluster in names {
                    let pick = |side: &[(String, harness::Outcome)]| {
                        side.iter().find(|(name, _)| name == cluster).map_or_else(
                            || Err(format!("no plan for Cluster {cluster}")),
                            |(_, o)| o.clone(),
                        )
                    };
                    found.extend(found_in(name, pick(&ours), pick(&theirs)));
                }
            }
            (ours, theirs) => found.extend(found_in(
                name,
                ours.map(|_| Vec::new()),
                theirs.map(|_| Vec::new()),
            )),
        }
    }
    let listed = listed();
    let new: Vec<String> = found
        .iter()
        .filter(|(key, _)| !listed.iter().any(|entry| covers(entry, key)))
        .map(|(key, detail)| format!("{key}\n  # {detail}"))
        .collect();
    let gone: Vec<String> = listed
        .iter()
        .filter(|entry| !found.iter().any(|(key, _)| covers(entry, key)))
        .map(ToString::to_string)
        .collect();
    assert!(compared >= 8, "only {compared} fixtures compared");
    assert!(
        new.is_empty() && gone.is_empty(),
        "{} new differences (fix them, or list them with a reason in {DIFFERENCES}):\n{}\n\n{} listed but no longer found (remove them):\n{}",
        new.len(),
        new.join("\n"),
        gone.len(),
        gone.join("\n")
    );
}
