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
    /// The control planes and worker pools whose Machines would roll or be created, with why
    /// (the upgrade's own steps apart): the switch waits for these.
    pub rolls: Vec<String>,
    /// The control planes and worker pools whose Machines roll for the version alone: a step of
    /// the upgrade the Cluster declares, which Cluster API's controller takes too.
    pub upgrade_rolls: Vec<String>,
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
        let named = |verdict: Verdict| -> Vec<&str> {
            self.clusters
                .iter()
                .filter(|c| Verdict::of(c) == verdict)
                .map(|c| c.cluster.as_str())
                .collect()
        };
        let upgrading = named(Verdict::Upgrading);
        let rolling = named(Verdict::Rolling);
        text.push_str(&format!(
            "{} topology-managed Clusters: {} without changes, {} with changes that roll no Machine, \
             {} upgrading{}, {} rolling Machines{}{}\n",
            self.clusters.len(),
            named(Verdict::Unchanged).len(),
            named(Verdict::Changed).len(),
            upgrading.len(),
            list(
                " (",
                &upgrading,
                ": Machines roll for the declared version, as under either controller)"
            ),
            rolling.len(),
            list(" (", &rolling, ")"),
            list(", not planned: ", &named(Verdict::Unplanned), ""),
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

/// Where one Cluster's plan puts it in the summary.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Verdict {
    Unchanged,
    Changed,
    Upgrading,
    Rolling,
    Unplanned,
}

impl Verdict {
    fn of(plan: &ClusterPlan) -> Verdict {
        if plan.outcome.is_err() {
            Verdict::Unplanned
        } else if !plan.rolls.is_empty() {
            Verdict::Rolling
        } else if !plan.upgrade_rolls.is_empty() {
            Verdict::Upgrading
        } else if plan.changes {
            Verdict::Changed
        } else {
            Verdict::Unchanged
        }
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
            upgrade_rolls: Vec::new(),
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
        assert!(text.contains("1 topology-managed Clusters: 1 without changes, 0 with changes that roll no Machine, 0 upgrading, 0 rolling Machines\n"), "{text}");
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
                    upgrade_rolls: Vec::new(),
                    changes: false,
                },
            ],
        };
        let text = dry_run.text(Direction::GiveBack);
        assert!(
            text.contains("Cluster ns/c:\n  cannot plan: ClusterClass ns/gone not found\n"),
            "{text}"
        );
        assert!(text.contains("3 topology-managed Clusters: 0 without changes, 1 with changes that roll no Machine, 0 upgrading, 1 rolling Machines (ns/b), not planned: ns/c\n"), "{text}");
        let refusal = dry_run.refusal(Direction::GiveBack).unwrap_or_default();
        assert!(
            refusal.starts_with("give-back refused: Cluster ns/b, ns/c would roll"),
            "{refusal}"
        );
        assert!(refusal.contains("give-back --apply --force"), "{refusal}");
    }

    #[test]
    fn the_declared_upgrade_going_on_does_not_refuse_the_switch() {
        let mut upgrading = plan(
            "ns/a",
            "Cluster ns/a:\n  * MachineDeployment ns/a-md-0 (md-0): Machines roll (version v1.31.2 -> v1.32.0)\n",
            &[],
        );
        upgrading.upgrade_rolls =
            vec!["MachineDeployment ns/a-md-0 (md-0): version v1.31.2 -> v1.32.0".to_owned()];
        let mut rotating = upgrading.clone();
        rotating.cluster = "ns/b".to_owned();
        let dry_run = DryRun {
            clusters: vec![upgrading.clone()],
        };
        assert_eq!(dry_run.refusal(Direction::TakeOver), None);
        let text = dry_run.text(Direction::TakeOver);
        assert!(text.contains("1 topology-managed Clusters: 0 without changes, 0 with changes that roll no Machine, 1 upgrading (ns/a: Machines roll for the declared version, as under either controller), 0 rolling Machines\n"), "{text}");
        rotating.rolls = vec!["KubeadmControlPlane ns/b-cp: machine template a -> b".to_owned()];
        let dry_run = DryRun {
            clusters: vec![upgrading, rotating],
        };
        assert_eq!(
            dry_run.blocking(),
            ["ns/b"],
            "a rotation beside the upgrade still refuses"
        );
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
