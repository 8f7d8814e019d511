//! The two sides of the comparison: Cluster API v1.14.0's desired state from the Go harness in
//! `benches/reference/desiredstate` (built and run once for every fixture), and ours from
//! `capi-topology plan -o json`.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

/// One Cluster's desired objects, or why there are none.
pub type Outcome = Result<Vec<Value>, String>;

/// Cluster API v1.14.0's desired state for each fixture (the files of each, comma-separated),
/// by fixture, then by Cluster (`namespace/name`). Runs the Go harness with the e2e cache's Go
/// environment (benches/compare.sh): modules come from the Go module proxy into that cache.
pub fn reference(fixtures: &[Vec<PathBuf>]) -> Vec<Result<Vec<(String, Outcome)>, String>> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let cache = std::env::var_os("CAPI_TOPOLOGY_E2E_CACHE").map_or_else(
        || PathBuf::from(std::env::var_os("HOME").unwrap_or_default()).join(".cache/capi-topology-e2e"),
        PathBuf::from,
    );
    let arguments = fixtures.iter().map(|files| {
        files
            .iter()
            .map(|file| root.join(file).display().to_string())
            .collect::<Vec<_>>()
            .join(",")
    });
    let output = Command::new("go")
        .current_dir(root.join("benches/reference"))
        .env("GOFLAGS", "-trimpath")
        .env("GOCACHE", cache.join("gocache"))
        .env("GOMODCACHE", cache.join("gomodcache"))
        .env("GOTOOLCHAIN", "local")
        .args(["run", "./desiredstate"])
        .args(arguments)
        .output()
        .expect("run `go` (Go 1.26 or later is needed for the fidelity harness, as for the e2e binaries)");
    assert!(
        output.status.success(),
        "the Go harness failed:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let answer: Value = serde_json::from_slice(&output.stdout).expect("the harness prints JSON");
    answer["fixtures"]
        .as_array()
        .expect("fixtures")
        .iter()
        .map(|fixture| match fixture["error"].as_str() {
            Some(error) => Err(error.to_owned()),
            None => Ok(fixture["clusters"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|cluster| {
                    let name = cluster["name"].as_str().unwrap_or_default().to_owned();
                    let outcome = match cluster["error"].as_str() {
                        Some(error) => Err(error.to_owned()),
                        None => Ok(cluster["items"].as_array().cloned().unwrap_or_default()),
                    };
                    (name, outcome)
                })
                .collect()),
        })
        .collect()
}

/// Our desired state for one fixture: each `List` of `plan -o json`, by Cluster; an error when
/// `plan` fails.
pub fn ours(files: &[PathBuf]) -> Result<Vec<(String, Outcome)>, String> {
    let output = Command::new(env!("CARGO_BIN_EXE_capi-topology"))
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args(["plan", "-o", "json", "-f"])
        .args(files)
        .output()
        .expect("run capi-topology");
    if !output.status.success() {
        return Err(String::from_utf8_lossy(&output.stderr).trim().to_owned());
    }
    let text = String::from_utf8_lossy(&output.stdout);
    serde_json::Deserializer::from_str(&text)
        .into_iter::<Value>()
        .map(|list| {
            let list = list.map_err(|err| err.to_string())?;
            let items = list["items"].as_array().cloned().unwrap_or_default();
            let cluster = &items.first().ok_or("an empty List")?["metadata"];
            let name = format!(
                "{}/{}",
                cluster["namespace"].as_str().unwrap_or("default"),
                cluster["name"].as_str().unwrap_or_default()
            );
            Ok((name, Ok(items)))
        })
        .collect()
}
