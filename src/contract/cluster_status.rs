//! What a v1beta2 Cluster takes from the objects its `spec.infrastructureRef` and
//! `spec.controlPlaneRef` name (Cluster API v1.14's Cluster controller): ownership of those
//! objects, `status.initialization`, the control plane endpoint, failure domains, the
//! `InfrastructureReady` and `ControlPlaneInitialized` conditions (and, under
//! `status.deprecated.v1beta1`, the old conditions and failures), and the phase. A provider of the
//! v1beta2 contract is read at `status.initialization.*` and its failure domain list, one of the
//! deprecated v1beta1 contract at `status.ready` / `status.initialized` and its failure domain map.

use serde_json::{json, Map, Value};

use super::external::{
    adoption, external_failures, mirrored_condition, mirrored_meta_condition, Adoption, Referenced,
};
use super::provider_fields::{
    control_plane_initialized, endpoint_is_valid, failure_domains, provisioned, reference_kind,
};
use crate::api::conditions::{is_true, meta_condition, set_condition};

/// The Cluster's condition that mirrors its InfraCluster.
pub const INFRASTRUCTURE_READY: &str = "InfrastructureReady";
/// The Cluster's v1beta1 condition that mirrors its control plane.
pub const CONTROL_PLANE_READY: &str = "ControlPlaneReady";
/// Set once the control plane provider reports its control plane initialized.
pub const CONTROL_PLANE_INITIALIZED: &str = "ControlPlaneInitialized";
/// The message of a condition waiting for the topology to create the referenced object.
const WAITING_FOR_TOPOLOGY: &str = "Waiting for cluster topology to be reconciled";

/// What the referenced objects were found to be.
#[derive(Debug, Clone, Copy)]
pub struct Observed<'a> {
    /// The Cluster (v1beta2).
    pub cluster: &'a Value,
    /// What `spec.infrastructureRef` names; `None` without one.
    pub infrastructure: Option<Referenced<'a>>,
    /// The contract (`v1beta2`, `v1beta1`) the InfraCluster's CRD implements.
    pub infrastructure_contract: &'a str,
    /// What `spec.controlPlaneRef` names; `None` without one.
    pub control_plane: Option<Referenced<'a>>,
    /// The contract the control plane's CRD implements.
    pub control_plane_contract: &'a str,
    /// The time conditions that change are stamped with.
    pub now: &'a str,
}

/// An event to record on the Cluster.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClusterEvent {
    /// Warning rather than Normal.
    pub warning: bool,
    /// `InfrastructureReady`, `Provisioned`, ...
    pub reason: String,
    /// The note.
    pub message: String,
}

/// The writes that bring the Cluster and its referenced objects in line.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ClusterUpdate {
    /// Server-side apply bodies setting the Cluster as owner and the cluster-name label on
    /// referenced objects that lack them.
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
        generation: cluster.pointer("/metadata/generation").cloned(),
        name: cluster
            .pointer("/metadata/name")
            .and_then(Value::as_str)
            .unwrap_or_default(),
        deleting: cluster.pointer("/metadata/deletionTimestamp").is_some(),
        managed: cluster
            .pointer("/spec/topology/classRef/name")
            .and_then(Value::as_str)
            .is_some_and(|n| !n.is_empty()),
    };
    next.infrastructure(cluster, observed.infrastructure, observed.infrastructure_contract);
    next.control_plane(cluster, observed.control_plane, observed.control_plane_contract);
    next.phase(cluster);

    let mut update = next.update;
    if next.endpoint.as_ref() != cluster.pointer("/spec/controlPlaneEndpoint") {
        update.spec = next
            .endpoint
            .map(|endpoint| json!({ "controlPlaneEndpoint": endpoint }));
    }
    let old = status.as_object().cloned().unwrap_or_default();
    let mut changed: Map<String, Value> = next
        .status
        .iter()
        .filter(|(key, value)| old.get(*key) != Some(*value))
        .map(|(key, value)| (key.clone(), value.clone()))
        .collect();
    // A merge patch removes a field by setting it to null.
    for key in old.keys().filter(|key| !next.status.contains_key(*key)) {
        changed.insert(key.clone(), Value::Null);
    }
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
    generation: Option<Value>,
    name: &'a str,
    deleting: bool,
    managed: bool,
}

impl Next<'_> {
    /// `status.initialization.<key>`.
    fn initialized(&self, key: &str) -> bool {
        self.status
            .get("initialization")
            .and_then(|i| i.get(key))
            .and_then(Value::as_bool)
            .unwrap_or(false)
    }

    /// Sets `status.initialization.<key>` to true (it never goes back), with an event the first time.
    fn mark_initialized(&mut self, key: &str, reason: &str, what: &str) {
        if !self.initialized(key) {
            let message = format!("Cluster {} {what} is now True", self.name);
            self.event(false, reason, message);
        }
        let initialization = self.status.entry("initialization").or_insert_with(|| json!({}));
        if !initialization.is_object() {
            *initialization = json!({});
        }
        initialization[key] = json!(true);
    }

    /// Sets a metav1 condition in `status.conditions`, stamped with the Cluster's generation.
    fn set(&mut self, mut condition: Value) {
        if let Some(generation) = &self.generation {
            condition["observedGeneration"] = generation.clone();
        }
        if let Some(list) = set_condition(self.status.get("conditions"), condition, self.now) {
            self.status.insert("conditions".to_owned(), Value::Array(list));
        }
    }

    /// Sets a v1beta1 condition in `status.deprecated.v1beta1.conditions`.
    fn set_v1beta1(&mut self, condition: Value) {
        let old = self.v1beta1().get("conditions").cloned();
        if let Some(list) = set_condition(old.as_ref(), condition, self.now) {
            self.v1beta1()["conditions"] = Value::Array(list);
        }
    }

    /// `status.deprecated.v1beta1`, created when missing.
    fn v1beta1(&mut self) -> &mut Value {
        let deprecated = self.status.entry("deprecated").or_insert_with(|| json!({}));
        if !deprecated.is_object() {
            *deprecated = json!({});
        }
        let v1beta1 = &mut deprecated["v1beta1"];
        if !v1beta1.is_object() {
            *v1beta1 = json!({});
        }
        v1beta1
    }

    fn v1beta1_condition(kind: &str, status: bool, reason: &str, severity: &str, message: &str) -> Value {
        let mut condition = json!({"type": kind, "status": if status { "True" } else { "False" }});
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

    /// Takes the referenced object's endpoint when the Cluster has no valid one.
    fn take_endpoint(&mut self, object: &Value) {
        if self.endpoint.as_ref().is_some_and(endpoint_is_valid) {
            return;
        }
        if let Some(endpoint) = object
            .pointer("/spec/controlPlaneEndpoint")
            .filter(|e| endpoint_is_valid(e))
        {
            self.endpoint = Some(endpoint.clone());
        }
    }

    /// Adoption, failures (into `status.deprecated.v1beta1`) and the object's v1beta1 `Ready`
    /// condition mirrored, with `done` as the fallback. `false` when another controller owns it.
    fn external(
        &mut self,
        cluster: &Value,
        object: &Value,
        contract: &str,
        v1beta1_type: &str,
        waiting: &str,
        done: bool,
    ) -> bool {
        match adoption(cluster, object) {
            Adoption::Done => {}
            Adoption::Needed(body) => self.update.adopt.push(body),
            Adoption::Refused(message) => {
                let refused = Self::v1beta1_condition(
                    v1beta1_type,
                    false,
                    "ControlledByAnotherOwner",
                    "Error",
                    &message,
                );
                self.set_v1beta1(refused);
                return false;
            }
        }
        let (reason, message) = external_failures(object);
        if let Some(reason) = reason {
            self.v1beta1()["failureReason"] = json!(reason);
        }
        if let Some(message) = message {
            self.v1beta1()["failureMessage"] = json!(message);
        }
        let mirrored = if self.deleting {
            Self::v1beta1_condition(v1beta1_type, false, "Deleting", "Info", "")
        } else {
            mirrored_condition(object, contract, v1beta1_type, self.now)
                .unwrap_or_else(|| Self::v1beta1_condition(v1beta1_type, done, waiting, "Info", ""))
        };
        self.set_v1beta1(mirrored);
        true
    }

    fn infrastructure(&mut self, cluster: &Value, referenced: Option<Referenced<'_>>, contract: &str) {
        let kind = reference_kind(cluster, "infrastructureRef");
        let object = match referenced {
            None => {
                if self.managed {
                    let message = if self.deleting { "" } else { WAITING_FOR_TOPOLOGY };
                    self.set(meta_condition(
                        INFRASTRUCTURE_READY,
                        "False",
                        "ObjectDoesNotExist",
                        message,
                    ));
                } else if !self.deleting {
                    self.mark_initialized(
                        "infrastructureProvisioned",
                        "InfrastructureReady",
                        "InfrastructureProvisioned",
                    );
                    self.set_v1beta1(Self::v1beta1_condition(INFRASTRUCTURE_READY, true, "", "", ""));
                }
                return;
            }
            Some(Referenced::Missing(why)) => {
                let provisioned = self.initialized("infrastructureProvisioned");
                let (reason, message) = match (provisioned, self.deleting) {
                    (true, true) => ("ObjectDeleted", format!("{kind} has been deleted")),
                    (true, false) => (
                        "ObjectDeleted",
                        format!("{kind} has been deleted while the cluster still exists"),
                    ),
                    (false, _) => ("ObjectDoesNotExist", why.to_owned()),
                };
                self.set(meta_condition(INFRASTRUCTURE_READY, "False", reason, &message));
                return;
            }
            Some(Referenced::Found(object)) => object,
        };
        let provisioned = provisioned(object, contract);
        if !self.external(
            cluster,
            object,
            contract,
            INFRASTRUCTURE_READY,
            "WaitingForInfrastructure",
            provisioned,
        ) {
            return;
        }
        let was = self.initialized("infrastructureProvisioned");
        if object.pointer("/metadata/deletionTimestamp").is_none() && (provisioned || was) {
            self.take_endpoint(object);
            match failure_domains(object, contract) {
                Some(domains) => self.status.insert("failureDomains".to_owned(), domains),
                None => self.status.remove("failureDomains"),
            };
            self.mark_initialized(
                "infrastructureProvisioned",
                "InfrastructureReady",
                "InfrastructureProvisioned",
            );
        }
        let now_provisioned = self.initialized("infrastructureProvisioned");
        let fallback = meta_condition(
            INFRASTRUCTURE_READY,
            if now_provisioned { "True" } else { "False" },
            if now_provisioned { "Ready" } else { "NotReady" },
            &if now_provisioned {
                String::new()
            } else {
                format!("{kind} status.initialization.provisioned is false")
            },
        );
        self.set(mirrored_meta_condition(object, INFRASTRUCTURE_READY).unwrap_or(fallback));
    }

    fn control_plane(&mut self, cluster: &Value, referenced: Option<Referenced<'_>>, contract: &str) {
        let initialized_already = is_true(self.status.get("conditions"), CONTROL_PLANE_INITIALIZED);
        let object = match referenced {
            None => {
                if self.managed && !initialized_already {
                    let message = if self.deleting { "" } else { WAITING_FOR_TOPOLOGY };
                    self.set(meta_condition(
                        CONTROL_PLANE_INITIALIZED,
                        "Unknown",
                        "ObjectDoesNotExist",
                        message,
                    ));
                }
                return;
            }
            Some(Referenced::Missing(why)) => {
                if !initialized_already {
                    self.set(meta_condition(
                        CONTROL_PLANE_INITIALIZED,
                        "Unknown",
                        "ObjectDoesNotExist",
                        why,
                    ));
                }
                return;
            }
            Some(Referenced::Found(object)) => object,
        };
        let initialized = control_plane_initialized(object, contract);
        if !self.external(
            cluster,
            object,
            contract,
            CONTROL_PLANE_READY,
            "WaitingForControlPlane",
            initialized,
        ) {
            return;
        }
        if !initialized_already {
            let condition = if initialized {
                meta_condition(CONTROL_PLANE_INITIALIZED, "True", "Initialized", "")
            } else {
                meta_condition(
                    CONTROL_PLANE_INITIALIZED,
                    "False",
                    "NotInitialized",
                    "Control plane not yet initialized",
                )
            };
            self.set(condition);
        }
        if object.pointer("/metadata/deletionTimestamp").is_some() {
            return;
        }
        let v1beta1 = self.v1beta1().get("conditions").cloned();
        if !is_true(v1beta1.as_ref(), CONTROL_PLANE_INITIALIZED) {
            self.set_v1beta1(Self::v1beta1_condition(
                CONTROL_PLANE_INITIALIZED,
                initialized,
                "WaitingForControlPlaneProviderInitialized",
                "Info",
                "Waiting for control plane provider to indicate the control plane has been initialized",
            ));
        }
        if !initialized && !self.initialized("controlPlaneInitialized") {
            return;
        }
        self.take_endpoint(object);
        self.mark_initialized(
            "controlPlaneInitialized",
            "ControlPlaneInitialized",
            "ControlPlaneInitialized",
        );
    }

    /// Pending, Provisioning, Provisioned, Deleting: the later that applies wins.
    fn phase(&mut self, cluster: &Value) {
        let before = self
            .status
            .get("phase")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        let defined = |key: &str| !reference_kind(cluster, key).is_empty();
        let mut phase = if before.is_empty() {
            "Pending"
        } else {
            before.as_str()
        };
        if defined("infrastructureRef") || defined("controlPlaneRef") {
            phase = "Provisioning";
        }
        if self.initialized("infrastructureProvisioned")
            && self.endpoint.as_ref().is_some_and(endpoint_is_valid)
        {
            phase = "Provisioned";
        }
        if self.deleting {
            phase = "Deleting";
        }
        let phase = phase.to_owned();
        if phase != before {
            let message = format!("Cluster {} is {phase}", self.name);
            self.event(false, &phase, message);
            self.status.insert("phase".to_owned(), json!(phase));
        }
    }
}
