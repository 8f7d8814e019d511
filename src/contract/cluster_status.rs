//! What a Cluster takes from the objects its `spec.infrastructureRef` and `spec.controlPlaneRef`
//! name (seed 001 and Cluster API v1.10's Cluster controller): ownership of those objects, their
//! readiness, the control plane endpoint, failure domains, terminal failures, and the phase.

use serde_json::{json, Map, Value};

use super::external::{adoption, external_failures, mirrored_condition, Adoption, Referenced};
use crate::topology::reconcile::with_condition;

/// The Cluster's condition that mirrors its InfraCluster.
pub const INFRASTRUCTURE_READY: &str = "InfrastructureReady";
/// The Cluster's condition that mirrors its control plane.
pub const CONTROL_PLANE_READY: &str = "ControlPlaneReady";
/// Set once the control plane provider reports `status.initialized`.
pub const CONTROL_PLANE_INITIALIZED: &str = "ControlPlaneInitialized";

/// What the referenced objects were found to be.
#[derive(Debug, Clone, Copy)]
pub struct Observed<'a> {
    /// The Cluster.
    pub cluster: &'a Value,
    /// What `spec.infrastructureRef` names; `None` without one.
    pub infrastructure: Option<Referenced<'a>>,
    /// What `spec.controlPlaneRef` names; `None` without one.
    pub control_plane: Option<Referenced<'a>>,
    /// The time conditions that change are stamped with.
    pub now: &'a str,
}

/// An event to record on the Cluster.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClusterEvent {
    /// Warning rather than Normal.
    pub warning: bool,
    /// `InfrastructureReady`, `Provisioned`, `Failed`, ...
    pub reason: String,
    /// The note.
    pub message: String,
}

/// The writes that bring the Cluster and its referenced objects in line.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ClusterUpdate {
    /// Server-side apply bodies setting the Cluster as controller owner and the cluster-name label
    /// on referenced objects that lack them.
    pub adopt: Vec<Value>,
    /// A merge patch of the Cluster's `spec` (the control plane endpoint), when it changes.
    pub spec: Option<Value>,
    /// A merge patch of the Cluster's `status`, when it changes.
    pub status: Option<Value>,
    /// Events for what changed.
    pub events: Vec<ClusterEvent>,
}

/// The Cluster's status as the referenced objects make it, and the writes to get there.
pub fn reconcile_cluster_status(observed: &Observed<'_>) -> ClusterUpdate {
    let cluster = observed.cluster;
    let status = cluster.get("status").cloned().unwrap_or_else(|| json!({}));
    let mut next = Next {
        status: status.as_object().cloned().unwrap_or_default(),
        endpoint: cluster.pointer("/spec/controlPlaneEndpoint").cloned(),
        update: ClusterUpdate::default(),
        now: observed.now,
    };
    let deleting = cluster.pointer("/metadata/deletionTimestamp").is_some();
    next.infrastructure(cluster, observed.infrastructure, deleting);
    next.control_plane(cluster, observed.control_plane, deleting);
    next.phase(cluster, deleting);

    let mut update = next.update;
    if next.endpoint.as_ref() != cluster.pointer("/spec/controlPlaneEndpoint") {
        update.spec = next
            .endpoint
            .map(|endpoint| json!({ "controlPlaneEndpoint": endpoint }));
    }
    let old = status.as_object().cloned().unwrap_or_default();
    let changed: Map<String, Value> = next
        .status
        .into_iter()
        .filter(|(key, value)| old.get(key) != Some(value))
        .collect();
    if !changed.is_empty() {
        update.status = Some(Value::Object(changed));
    }
    update
}

/// The status being built.
struct Next<'a> {
    status: Map<String, Value>,
    endpoint: Option<Value>,
    update: ClusterUpdate,
    now: &'a str,
}

impl Next<'_> {
    fn flag(&self, key: &str) -> bool {
        self.status.get(key).and_then(Value::as_bool).unwrap_or(false)
    }

    fn set_condition(&mut self, condition: Value) {
        if let Some(conditions) = with_condition(self.status.get("conditions"), condition) {
            self.status
                .insert("conditions".to_owned(), Value::Array(conditions));
        }
    }

    fn condition(&self, kind: &str, status: bool, reason: &str, severity: &str, message: &str) -> Value {
        let mut condition = json!({"type": kind, "status": if status { "True" } else { "False" },
            "lastTransitionTime": self.now});
        if !status {
            condition["reason"] = json!(reason);
            condition["severity"] = json!(severity);
            if !message.is_empty() {
                condition["message"] = json!(message);
            }
        }
        condition
    }

    fn event(&mut self, warning: bool, reason: &str, message: String) {
        self.update.events.push(ClusterEvent {
            warning,
            reason: reason.to_owned(),
            message,
        });
    }

    fn endpoint_is_valid(&self) -> bool {
        self.endpoint.as_ref().is_some_and(endpoint_is_valid)
    }

    /// Takes the referenced object's endpoint when the Cluster has none.
    fn take_endpoint(&mut self, object: &Value) {
        if self.endpoint_is_valid() {
            return;
        }
        if let Some(endpoint) = object
            .pointer("/spec/controlPlaneEndpoint")
            .filter(|e| endpoint_is_valid(e))
        {
            self.endpoint = Some(endpoint.clone());
        }
    }

    /// Adoption, failures, and the object's own `status.ready` as a mirrored condition.
    fn external(
        &mut self,
        cluster: &Value,
        object: &Value,
        condition: &str,
        waiting: &str,
        deleting: bool,
    ) -> bool {
        match adoption(cluster, object) {
            Adoption::Done => {}
            Adoption::Needed(body) => self.update.adopt.push(body),
            Adoption::Refused(message) => {
                let condition =
                    self.condition(condition, false, "ControlledByAnotherOwner", "Error", &message);
                self.set_condition(condition);
                return false;
            }
        }
        let (reason, message) = external_failures(object);
        if let Some(reason) = reason {
            self.status.insert("failureReason".to_owned(), json!(reason));
        }
        if let Some(message) = message {
            self.status.insert("failureMessage".to_owned(), json!(message));
        }
        let ready = object
            .pointer("/status/ready")
            .and_then(Value::as_bool)
            .unwrap_or(false);
        let mirrored = if deleting {
            self.condition(condition, false, "Deleting", "Info", "")
        } else {
            mirrored_condition(object, condition, self.now)
                .unwrap_or_else(|| self.condition(condition, ready, waiting, "Info", ""))
        };
        self.set_condition(mirrored);
        ready
    }

    fn missing(&mut self, condition: &str, ready_key: &str, reference: &Value, why: &str, deleting: bool) {
        let kind = reference["kind"].as_str().unwrap_or_default();
        if deleting {
            let condition = self.condition(condition, false, "Deleted", "Info", "");
            self.set_condition(condition);
            return;
        }
        let message = if self.flag(ready_key) {
            format!(
                "{kind} {} has been deleted after being ready",
                ref_name(reference)
            )
        } else {
            why.to_owned()
        };
        let reason = format!("{kind}Missing");
        let condition = self.condition(condition, false, &reason, "Warning", &message);
        self.set_condition(condition);
    }

    fn infrastructure(&mut self, cluster: &Value, referenced: Option<Referenced<'_>>, deleting: bool) {
        let reference = cluster
            .pointer("/spec/infrastructureRef")
            .cloned()
            .unwrap_or(Value::Null);
        let object = match referenced {
            None => {
                if !deleting {
                    self.status.insert("infrastructureReady".to_owned(), json!(true));
                    let condition = self.condition(INFRASTRUCTURE_READY, true, "", "", "");
                    self.set_condition(condition);
                }
                return;
            }
            Some(Referenced::Missing(why)) => {
                self.missing(
                    INFRASTRUCTURE_READY,
                    "infrastructureReady",
                    &reference,
                    why,
                    deleting,
                );
                return;
            }
            Some(Referenced::Found(object)) => object,
        };
        let ready = self.external(
            cluster,
            object,
            INFRASTRUCTURE_READY,
            "WaitingForInfrastructure",
            deleting,
        );
        let was_ready = self.flag("infrastructureReady");
        if object.pointer("/metadata/deletionTimestamp").is_some() || (!ready && !was_ready) {
            return;
        }
        self.take_endpoint(object);
        match object
            .pointer("/status/failureDomains")
            .filter(|d| d.as_object().is_some_and(|m| !m.is_empty()))
        {
            Some(domains) => {
                self.status.insert("failureDomains".to_owned(), domains.clone());
            }
            None => {
                self.status.remove("failureDomains");
            }
        }
        self.mark_ready(cluster, "infrastructureReady", INFRASTRUCTURE_READY);
    }

    fn control_plane(&mut self, cluster: &Value, referenced: Option<Referenced<'_>>, deleting: bool) {
        let reference = cluster
            .pointer("/spec/controlPlaneRef")
            .cloned()
            .unwrap_or(Value::Null);
        let object = match referenced {
            None => return,
            Some(Referenced::Missing(why)) => {
                self.missing(
                    CONTROL_PLANE_READY,
                    "controlPlaneReady",
                    &reference,
                    why,
                    deleting,
                );
                return;
            }
            Some(Referenced::Found(object)) => object,
        };
        let ready = self.external(
            cluster,
            object,
            CONTROL_PLANE_READY,
            "WaitingForControlPlane",
            deleting,
        );
        if object.pointer("/metadata/deletionTimestamp").is_some() {
            return;
        }
        let initialized_already = self
            .status
            .get("conditions")
            .and_then(Value::as_array)
            .is_some_and(|list| {
                list.iter()
                    .any(|c| c["type"] == CONTROL_PLANE_INITIALIZED && c["status"] == "True")
            });
        if !initialized_already {
            let initialized = object
                .pointer("/status/initialized")
                .and_then(Value::as_bool)
                .unwrap_or(false);
            let condition = self.condition(
                CONTROL_PLANE_INITIALIZED,
                initialized,
                "WaitingForControlPlaneProviderInitialized",
                "Info",
                "Waiting for control plane provider to indicate the control plane has been initialized",
            );
            self.set_condition(condition);
        }
        let was_ready = self.flag("controlPlaneReady");
        if !ready && !was_ready {
            return;
        }
        self.take_endpoint(object);
        self.mark_ready(cluster, "controlPlaneReady", CONTROL_PLANE_READY);
    }

    /// Sets the status flag `key` (it never goes back to false), with an event named after
    /// `condition` the first time.
    fn mark_ready(&mut self, cluster: &Value, key: &str, condition: &str) {
        if !self.flag(key) {
            let name = cluster
                .pointer("/metadata/name")
                .and_then(Value::as_str)
                .unwrap_or_default();
            self.event(
                false,
                condition,
                format!("Cluster {name} {condition} is now True"),
            );
        }
        self.status.insert(key.to_owned(), json!(true));
    }

    /// Pending, Provisioning, Provisioned, Failed, Deleting: the later that applies wins.
    fn phase(&mut self, cluster: &Value, deleting: bool) {
        let before = self
            .status
            .get("phase")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        let spec = |key: &str| {
            cluster
                .pointer(&format!("/spec/{key}"))
                .is_some_and(|v| !v.is_null())
        };
        let mut phase = if before.is_empty() {
            "Pending"
        } else {
            before.as_str()
        };
        if spec("infrastructureRef") || spec("controlPlaneRef") {
            phase = "Provisioning";
        }
        if self.flag("infrastructureReady") && self.endpoint_is_valid() {
            phase = "Provisioned";
        }
        if self.status.contains_key("failureReason") || self.status.contains_key("failureMessage") {
            phase = "Failed";
        }
        if deleting {
            phase = "Deleting";
        }
        let phase = phase.to_owned();
        if phase != before {
            let name = cluster
                .pointer("/metadata/name")
                .and_then(Value::as_str)
                .unwrap_or_default();
            match phase.as_str() {
                "Failed" => {
                    let why = self
                        .status
                        .get("failureMessage")
                        .and_then(Value::as_str)
                        .unwrap_or("unknown");
                    let message = format!("Cluster {name} is Failed: {why}");
                    self.event(true, "Failed", message);
                }
                _ => self.event(false, &phase, format!("Cluster {name} is {phase}")),
            }
            self.status.insert("phase".to_owned(), json!(phase));
        }
    }
}

/// A control plane endpoint with a host and a non-zero port.
fn endpoint_is_valid(endpoint: &Value) -> bool {
    endpoint
        .get("host")
        .and_then(Value::as_str)
        .is_some_and(|h| !h.is_empty())
        && endpoint
            .get("port")
            .and_then(Value::as_i64)
            .is_some_and(|p| p != 0)
}

fn ref_name(reference: &Value) -> String {
    let text = |key: &str| reference.get(key).and_then(Value::as_str).unwrap_or_default();
    format!("{}/{}", text("namespace"), text("name"))
}
