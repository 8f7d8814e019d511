//! Who wrote what, from the API server's audit log (`ControlPlane::start_audited`): the writes
//! of [`WRITES_POLICY`] counted by writer (the `capi-topology` user, every other client by the
//! program name of its User-Agent) and by `verb resource[/subresource]`, those refused with 409
//! Conflict apart.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::Value;

/// An audit policy recording every write's metadata except leader Lease renewals and Events.
pub const WRITES_POLICY: &str = r#"apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
- level: None
  resources:
  - group: coordination.k8s.io
    resources: [leases]
  - group: ""
    resources: [events]
  - group: events.k8s.io
    resources: [events]
- level: Metadata
  verbs: [create, update, patch, delete, deletecollection]
- level: None
"#;

/// Writes counted per writer, then per `verb resource[/subresource]`.
pub type Writes = BTreeMap<String, BTreeMap<String, u64>>;

/// The completed writes of the audit log at `path` from its line `from` on, and the number of
/// lines read (where the next count starts). A missing log has none.
pub fn writes_since(path: &Path, from: usize) -> (Writes, usize) {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let mut writes = Writes::new();
    let mut lines = 0;
    for line in text.lines() {
        lines += 1;
        if lines <= from {
            continue;
        }
        if let Some((writer, key)) = write_of(line) {
            *writes.entry(writer).or_default().entry(key).or_default() += 1;
        }
    }
    (writes, lines)
}

/// The completed writes of `writer` in the audit log at `path` from its line `from` on, counted
/// per group of the objects' names: the first of `groups` (Cluster names) that an object's name
/// is or starts with followed by `-` (Cluster API's generated names), else `(other)`.
pub fn writes_per_group(path: &Path, from: usize, writer: &str, groups: &[&str]) -> Writes {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let mut writes = Writes::new();
    for line in text.lines().skip(from) {
        let Some((who, key)) = write_of(line) else {
            continue;
        };
        if who != writer {
            continue;
        }
        let event: Value = serde_json::from_str(line).unwrap_or_default();
        let name = event["objectRef"]["name"].as_str().unwrap_or_default();
        let group = groups
            .iter()
            .find(|group| name == **group || name.starts_with(&format!("{group}-")))
            .map_or("(other)", |group| *group);
        *writes
            .entry(group.to_owned())
            .or_default()
            .entry(key)
            .or_default() += 1;
    }
    writes
}

/// The writer and `verb resource[/subresource]` of one audit event line, when it is a
/// completed write.
fn write_of(line: &str) -> Option<(String, String)> {
    let event: Value = serde_json::from_str(line).ok()?;
    if event["stage"] != "ResponseComplete" {
        return None;
    }
    let user = event["user"]["username"].as_str().unwrap_or_default();
    let writer = if user == "capi-topology" {
        user.to_owned()
    } else {
        let agent = event["userAgent"].as_str().unwrap_or_default();
        agent.split('/').next().unwrap_or_default().to_owned()
    };
    let object = &event["objectRef"];
    let mut resource = object["resource"].as_str().unwrap_or_default().to_owned();
    if let Some(sub) = object["subresource"].as_str() {
        resource = format!("{resource}/{sub}");
    }
    let mut key = format!("{} {resource}", event["verb"].as_str()?);
    // A write refused as based on an older copy costs nearly as much, and says who raced whom.
    if event["responseStatus"]["code"] == 409 {
        key.push_str(" (409 Conflict)");
    }
    Some((writer, key))
}

/// All writes of `writer`.
pub fn total(writes: &Writes, writer: &str) -> u64 {
    writes.get(writer).map_or(0, |w| w.values().sum())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_are_told_apart_by_user_then_user_agent() {
        let dir = std::env::temp_dir().join(format!("audit-log-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("audit.log");
        let ours = r#"{"stage":"ResponseComplete","verb":"patch","user":{"username":"capi-topology"},"objectRef":{"resource":"clusters","subresource":"status"}}"#;
        let core = r#"{"stage":"ResponseComplete","verb":"create","user":{"username":"e2e-admin"},"userAgent":"capi-manager/v0.0.0 (linux/amd64)","objectRef":{"resource":"machines"}}"#;
        let started = r#"{"stage":"ResponseStarted","verb":"create","user":{"username":"e2e-admin"},"userAgent":"kubectl/v1.34","objectRef":{"resource":"clusters"}}"#;
        let refused = r#"{"stage":"ResponseComplete","verb":"patch","user":{"username":"capi-topology"},"objectRef":{"resource":"clusters","subresource":"status"},"responseStatus":{"code":409}}"#;
        std::fs::write(&path, [ours, core, started, "not json", ours, refused].join("\n")).unwrap();

        let (writes, lines) = writes_since(&path, 0);
        assert_eq!(lines, 6);
        assert_eq!(writes["capi-topology"]["patch clusters/status"], 2);
        assert_eq!(writes["capi-topology"]["patch clusters/status (409 Conflict)"], 1);
        assert_eq!(total(&writes, "capi-topology"), 3);
        assert_eq!(total(&writes, "capi-manager"), 1);
        assert_eq!(total(&writes, "kubectl"), 0);
        let grouped = writes_per_group(&path, 0, "capi-topology", &["mem"]);
        assert_eq!(grouped["(other)"]["patch clusters/status"], 2);
        let (later, _) = writes_since(&path, 2);
        assert_eq!(total(&later, "capi-topology"), 2);
        assert_eq!(total(&later, "capi-manager"), 0);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
