//! ClusterClassRollout (rollout.capi-topology.io/v1alpha1): how a change of one ClusterClass
//! reaches the Clusters of the class, in waves, and where that rollout stands. Opt-in: a class
//! with no ClusterClassRollout changes every Cluster at once, as Cluster API does.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, LabelSelector, Time};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The API group of ClusterClassRollout and ClusterClassRevision.
pub const ROLLOUT_GROUP: &str = "rollout.capi-topology.io";
/// Their only version.
pub const ROLLOUT_VERSION: &str = "v1alpha1";
/// The kind of a rollout policy.
pub const ROLLOUT_KIND: &str = "ClusterClassRollout";
/// The kind of a revision.
pub const REVISION_KIND: &str = "ClusterClassRevision";
/// Halted Clusters go back to the stable revision (the default).
pub const ON_HALT_ROLLBACK: &str = "Rollback";
/// Halted Clusters stay where they are until an operator acts.
pub const ON_HALT_HOLD: &str = "Hold";
/// A class change arriving mid-rollout waits for the running rollout to end (the default).
pub const ON_CHANGE_QUEUE: &str = "Queue";
/// A class change arriving mid-rollout replaces the running rollout's target.
pub const ON_CHANGE_SUPERSEDE: &str = "Supersede";

/// The implicit last wave: the Clusters no wave selects (a name no wave may take).
pub const REMAINING_WAVE: &str = "remaining";

/// `status.phase`: every Cluster runs the target revision.
pub const PHASE_COMPLETE: &str = "Complete";
/// A rollout runs.
pub const PHASE_PROGRESSING: &str = "Progressing";
/// A rollout runs, but starts no Cluster (`spec.paused`).
pub const PHASE_PAUSED: &str = "Paused";
/// A wave missed its deadline; its Clusters stay (`onHalt: Hold`).
pub const PHASE_HALTED: &str = "Halted";
/// A wave missed its deadline; its Clusters went back to the stable revision.
pub const PHASE_ROLLED_BACK: &str = "RolledBack";
/// The class has no revision yet (not reconciled, a template missing).
pub const PHASE_PENDING: &str = "Pending";
/// The rollout policy of one ClusterClass, and the state of its rollout.
#[derive(CustomResource, Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[kube(
    group = "rollout.capi-topology.io",
    version = "v1alpha1",
    kind = "ClusterClassRollout",
    namespaced,
    status = "ClusterClassRolloutStatus",
    shortname = "ccro",
    printcolumn = r#"{"name":"Class","type":"string","jsonPath":".spec.classRef.name"}"#,
    printcolumn = r#"{"name":"Phase","type":"string","jsonPath":".status.phase"}"#,
    printcolumn = r#"{"name":"Wave","type":"string","jsonPath":".status.wave.name"}"#,
    printcolumn = r#"{"name":"Updated","type":"integer","jsonPath":".status.updatedClusters"}"#,
    printcolumn = r#"{"name":"Clusters","type":"integer","jsonPath":".status.totalClusters"}"#,
    printcolumn = r#"{"name":"Target","type":"string","jsonPath":".status.targetRevision","priority":1}"#,
    printcolumn = r#"{"name":"Age","type":"date","jsonPath":".metadata.creationTimestamp"}"#
)]
#[serde(rename_all = "camelCase")]
pub struct ClusterClassRolloutSpec {
    /// The ClusterClass of this namespace whose changes roll out in waves. Immutable.
    #[schemars(extend("x-kubernetes-validations" = [{"rule": "self == oldSelf", "message": "classRef is immutable"}]))]
    pub class_ref: ClassRolloutClassRef,
    /// The waves, in order; a Cluster belongs to the first wave whose selector matches its
    /// labels. Clusters no wave selects form a last wave, `remaining`. No waves: one wave of
    /// every Cluster.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 20))]
    #[schemars(extend(
        "x-kubernetes-list-type" = "map",
        "x-kubernetes-list-map-keys" = ["name"],
        "x-kubernetes-validations" = [{"rule": "self.all(w, w.name != 'remaining')", "message": "'remaining' names the implicit last wave"}]
    ))]
    pub waves: Vec<RolloutWave>,
    /// What a wave must show before the next one starts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub health_gate: Option<HealthGate>,
    /// When Clusters may start rolling (UTC). None: at any time. A Cluster already rolling
    /// finishes outside a window.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 20))]
    pub maintenance_windows: Vec<MaintenanceWindow>,
    /// Starts no further Cluster while true; Clusters already rolling finish.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub paused: bool,
    /// What a halted rollout does: `Rollback` (the default) takes its Clusters back to the
    /// stable revision; `Hold` leaves them until the class changes again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("enum" = ["Rollback", "Hold"]))]
    pub on_halt: Option<String>,
    /// A class change arriving while a rollout runs: `Queue` (the default) starts after it;
    /// `Supersede` retargets the running rollout from its current wave.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("enum" = ["Queue", "Supersede"]))]
    pub on_class_change: Option<String>,
}

/// The class a rollout policy governs.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ClassRolloutClassRef {
    /// The ClusterClass's name, in the rollout's namespace.
    #[schemars(length(min = 1, max = 253))]
    pub name: String,
}

/// One wave of Clusters.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RolloutWave {
    /// The wave's name, unique in the policy (`canary`, `production`...).
    #[schemars(
        length(min = 1, max = 63),
        regex(pattern = r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
    )]
    pub name: String,
    /// The Clusters of the wave, by label. An empty selector matches every Cluster left.
    #[serde(default)]
    pub selector: LabelSelector,
    /// At most this many Clusters of the wave rolling at once: a number, or a percentage of
    /// the wave's Clusters (rounded down, at least 1). Default 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend(
        "maxLength" = 4,
        "x-kubernetes-validations" = [{"rule": "string(self).matches('^[1-9][0-9]*$|^[1-9][0-9]?%$|^100%$')", "message": "a number of Clusters (at least 1) or a percentage from 1% to 100%"}]
    ))]
    pub max_rolling: Option<IntOrString>,
}

/// What a wave must show before the next one starts. Always required: each Cluster of the wave
/// `Available`, its control plane and MachineDeployments up to date and available at the new
/// revision, no MachineHealthCheck remediation in flight.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct HealthGate {
    /// How long the wave must stay healthy before the next one starts (`10m`). Default none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(regex(pattern = r"^([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h))+$"))]
    pub soak: Option<String>,
    /// How long a wave may take to become healthy before the rollout halts (`30m`, the default).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(regex(pattern = r"^([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h))+$"))]
    pub deadline: Option<String>,
}

/// A weekly window, in UTC, in which Clusters may start rolling.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MaintenanceWindow {
    /// The days the window opens on (`Mon` ... `Sun`); none: every day.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 7))]
    pub days: Vec<Weekday>,
    /// When it opens, `HH:MM` in UTC.
    #[schemars(regex(pattern = r"^([01][0-9]|2[0-3]):[0-5][0-9]$"))]
    pub start: String,
    /// How long it stays open (`4h`), at most a week.
    #[schemars(regex(pattern = r"^([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h))+$"))]
    pub duration: String,
}

/// A day of the week.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum Weekday {
    /// Monday.
    Mon,
    /// Tuesday.
    Tue,
    /// Wednesday.
    Wed,
    /// Thursday.
    Thu,
    /// Friday.
    Fri,
    /// Saturday.
    Sat,
    /// Sunday.
    Sun,
}

/// Where the class's rollout stands.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ClusterClassRolloutStatus {
    /// The generation of the policy this status was computed from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
    /// `Progressing` (a rollout runs), `Halted` (a wave missed its deadline), `Paused`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(extend("x-kubernetes-list-type" = "map", "x-kubernetes-list-map-keys" = ["type"]))]
    pub conditions: Vec<Condition>,
    /// `Complete`, `Progressing`, `Paused`, `Halted` or `RolledBack`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phase: Option<String>,
    /// The revision every Cluster ran before the current rollout (what a rollback returns to).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stable_revision: Option<String>,
    /// The newest revision: the one being rolled out, or the one every Cluster runs. A new
    /// Cluster starts at it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_revision: Option<String>,
    /// A revision of a halted rollout: not rolled out again until the class changes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub halted_revision: Option<String>,
    /// The wave in progress.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wave: Option<WaveStatus>,
    /// The revision each Cluster of the class runs.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub clusters: Vec<ClusterRevisionStatus>,
    /// Clusters at the target revision.
    #[serde(default)]
    pub updated_clusters: i32,
    /// Clusters of the class.
    #[serde(default)]
    pub total_clusters: i32,
}

/// The wave in progress.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct WaveStatus {
    /// Its position in the waves, from 0.
    pub index: i32,
    /// Its name.
    pub name: String,
    /// When its first Cluster started rolling.
    pub started_at: Time,
    /// Since when every Cluster of it is healthy (the soak's start).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub healthy_since: Option<Time>,
}

/// The revision one Cluster runs.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ClusterRevisionStatus {
    /// The Cluster's namespace.
    pub namespace: String,
    /// The Cluster's name.
    pub name: String,
    /// The ClusterClassRevision it runs.
    pub revision: String,
    /// When this rollout moved it to `revision`; unset when it started there.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rolled_at: Option<Time>,
}
