//! The dry run of a take-over or give-back: every topology-managed Cluster planned against its
//! live state, and the verdict an operator acts on: which Clusters would change, which would
//! roll Machines (the switch is refused for those unless forced), and what beside-Cluster-API
//! operation gives up.

/// Which way the fleet is switched.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    /// From Cluster API's topology controller to capi-topology's.
    TakeOver,
    /// From capi-topology's topology controller back to Cluster API's.
    GiveBack,
}

impl Direction {
    /// The subcommand.
    pub fn command(self) -> &'static str {
        match self {
            Direction::TakeOver => "take-over",
            Direction::GiveBack => "give-back",
        }
    }
}

/// One Cluster's plan against its live state.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClusterPlan {
    /// `namespace/name`.
    pub cluster: String,
    /// The plan's `-o diff` text (`Cluster ns/name:` and its lines), or why it could not be made.
    pub outcome: Result<String, String>,
    /// The control planes and worker pools whose Machines would roll or be created, with why.
    pub rolls: Vec<String>,
    /// Whether the plan changes any object.
    pub changes: bool,
}

/// The dry run of the whole fleet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DryRun {
    /// Each topology-managed Cluster, in namespace/name order.
    pub clusters: Vec<ClusterPlan>,
}

/// What an operator gives up while capi-topology owns the fleet beside Cluster API's managers.
pub const BEFORE_CLUSTER_DELETE_GIVEN_UP: &str = "BeforeClusterDelete cannot hold a deletion while \
    capi-topology owns the fleet: the hook is called, but Cluster API's Cluster controller waits for \
    it only with its own ClusterTopology and RuntimeSDK gates on, so a deleted Cluster's objects \
    are deleted even while an extension holds (docs/beside-cluster-api.md)";

impl DryRun {
    /// The Clusters that would roll Machines or could not be planned: the switch waits for them.
    pub fn blocking(&self) -> Vec<&str> {
        self.clusters
            .iter()
            .filter(|c| c.outcome.is_err() || !c.rolls.is_empty())
            .map(|c| c.cluster.as_str())
            .collect()
    }

    /// The report: each Cluster's plan, then a summary line.
    pub fn text(&self, direction: Direction) -> String {
        let mut text = String::new();
        for plan in &self.clusters {
            match &plan.outcome {
                Ok(report) => text.push_str(report),
                Err(error) => text.push_str(&format!("Cluster {}:\n  cannot plan: {error}\n", plan.cluster)),
            }
        }
        if self.clusters.is_empty() {
            text.push_str("no topology-managed Cluster (none has a spec.topology): nothing would change\n");
            return text;
        }
        let unchanged = self
            .clusters
            .iter()
            .filter(|c| c.outcome.is_ok() && !c.changes)
            .count();
        let rolling: Vec<&str> = self
            .clusters
            .iter()
            .filter(|c| !c.rolls.is_empty())
            .map(|c| c.cluster.as_str())
            .collect();
        let failed: Vec<&str> = self
            .clusters
            .iter()
            .filter(|c| c.outcome.is_err())
            .map(|c| c.cluster.as_str())
            .collect();
        text.push_str(&format!(
            "{} topology-managed Clusters: {unchanged} without changes, {} with changes that roll no Machine, {} rolling Machines{}{}\n",
            self.clusters.len(),
            self.clusters
                .len()
                .saturating_sub(unchanged + rolling.len() + failed.len()),
            rolling.len(),
            list(" (", &rolling, ")"),
            list(", not planned: ", &failed, ""),
        ));
        if direction == Direction::TakeOver {
            text.push_str(&format!("note: {BEFORE_CLUSTER_DELETE_GIVEN_UP}\n"));
        }
        text
    }

    /// Why the switch is refused, or `None` when it may go on.
    pub fn refusal(&self, direction: Direction) -> Option<String> {
        let blocking = self.blocking();
        if blocking.is_empty() {
            return None;
        }
        Some(format!(
            "{} refused: Cluster {} would roll Machines or could not be planned (above); nothing was \
             changed. Make the class or the Cluster agree first, or run `capi-topology cluster-api {} \
             --apply --force` to switch anyway",
            direction.command(),
            blocking.join(", "),
            direction.command()
        ))
    }
}

fn list(before: &str, items: &[&str], after: &str) -> String {
    if items.is_empty() {
        String::new()
    } else {
        format!("{before}{}{after}", items.join(", "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(cluster: &str, report: &str, rolls: &[&str]) -> ClusterPlan {
        ClusterPlan {
            cluster: cluster.to_owned(),
            outcome: Ok(report.to_owned()),
            rolls: rolls.iter().map(|r| (*r).to_owned()).collect(),
            changes: !report.contains("no changes"),
        }
    }

    #[test]
    fn a_fleet_without_changes_may_switch() {
        let dry_run = DryRun {
            clusters: vec![plan("ns/a", "Cluster ns/a:\n  no changes\n", &[])],
        };
        assert_eq!(dry_run.refusal(Direction::TakeOver), None);
        let text = dry_run.text(Direction::TakeOver);
        assert!(text.contains("1 topology-managed Clusters: 1 without changes, 0 with changes that roll no Machine, 0 rolling Machines\n"), "{text}");
        assert!(
            text.contains("BeforeClusterDelete cannot hold a deletion"),
            "{text}"
        );
        assert!(!dry_run.text(Direction::GiveBack).contains("BeforeClusterDelete"));
    }

    #[test]
    fn rolling_or_unplanned_clusters_refuse_the_switch_by_name() {
        let dry_run = DryRun {
            clusters: vec![
                plan("ns/a", "Cluster ns/a:\n  ~ changed x\n", &[]),
                plan(
                    "ns/b",
                    "Cluster ns/b:\n  * KubeadmControlPlane ns/b-x: Machines roll (spec.version)\n",
                    &["KubeadmControlPlane ns/b-x"],
                ),
                ClusterPlan {
                    cluster: "ns/c".to_owned(),
                    outcome: Err("ClusterClass ns/gone not found".to_owned()),
                    rolls: Vec::new(),
                    changes: false,
                },
            ],
        };
        let text = dry_run.text(Direction::GiveBack);
        assert!(
            text.contains("Cluster ns/c:\n  cannot plan: ClusterClass ns/gone not found\n"),
            "{text}"
        );
        assert!(text.contains("3 topology-managed Clusters: 0 without changes, 1 with changes that roll no Machine, 1 rolling Machines (ns/b), not planned: ns/c\n"), "{text}");
        let refusal = dry_run.refusal(Direction::GiveBack).unwrap_or_default();
        assert!(
            refusal.starts_with("give-back refused: Cluster ns/b, ns/c would roll"),
            "{refusal}"
        );
        assert!(refusal.contains("give-back --apply --force"), "{refusal}");
    }

    #[test]
    fn an_empty_fleet_says_so() {
        let text = DryRun { clusters: Vec::new() }.text(Direction::TakeOver);
        assert_eq!(
            text,
            "no topology-managed Cluster (none has a spec.topology): nothing would change\n"
        );
    }
}
