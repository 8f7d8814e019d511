//! Lifecycle hooks: the seam through which the engine asks Runtime Extensions whether a Cluster's
//! creation, upgrade steps and deletion may proceed. The engine decides when a hook is due and
//! builds its request; an implementation only carries the request to every handler registered
//! for the hook and brings their joint answer back (`runtime/` does it over HTTPS, remembering
//! a blocking answer until its `retryAfterSeconds` pass).

use crate::api::runtime::{GenerateUpgradePlanRequest, GenerateUpgradePlanResponse, LifecycleRequest};
use crate::patches::external::unavailable;

/// The lifecycle hooks of Cluster API v1.14's Runtime SDK catalog.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum LifecycleHook {
    /// Before the topology's objects are created (blocking).
    BeforeClusterCreate,
    /// Once the control plane is reachable for the first time (not blocking).
    AfterControlPlaneInitialized,
    /// Before a new `spec.topology.version` reaches the control plane (blocking).
    BeforeClusterUpgrade,
    /// Before each version step reaches the control plane (blocking).
    BeforeControlPlaneUpgrade,
    /// After the control plane reached a step's version (blocking).
    AfterControlPlaneUpgrade,
    /// Before a step's version reaches the workers (blocking).
    BeforeWorkersUpgrade,
    /// After the workers reached a step's version (blocking).
    AfterWorkersUpgrade,
    /// After the whole Cluster reached `spec.topology.version` (blocking: holds the next upgrade).
    AfterClusterUpgrade,
    /// Before the Cluster's objects are deleted (blocking).
    BeforeClusterDelete,
}

impl LifecycleHook {
    /// Every lifecycle hook, in the order of a Cluster's life.
    pub const ALL: [LifecycleHook; 9] = [
        LifecycleHook::BeforeClusterCreate,
        LifecycleHook::AfterControlPlaneInitialized,
        LifecycleHook::BeforeClusterUpgrade,
        LifecycleHook::BeforeControlPlaneUpgrade,
        LifecycleHook::AfterControlPlaneUpgrade,
        LifecycleHook::BeforeWorkersUpgrade,
        LifecycleHook::AfterWorkersUpgrade,
        LifecycleHook::AfterClusterUpgrade,
        LifecycleHook::BeforeClusterDelete,
    ];

    /// The hook's name in the catalog (and in the pending-hooks annotation).
    pub fn name(self) -> &'static str {
        match self {
            LifecycleHook::BeforeClusterCreate => "BeforeClusterCreate",
            LifecycleHook::AfterControlPlaneInitialized => "AfterControlPlaneInitialized",
            LifecycleHook::BeforeClusterUpgrade => "BeforeClusterUpgrade",
            LifecycleHook::BeforeControlPlaneUpgrade => "BeforeControlPlaneUpgrade",
            LifecycleHook::AfterControlPlaneUpgrade => "AfterControlPlaneUpgrade",
            LifecycleHook::BeforeWorkersUpgrade => "BeforeWorkersUpgrade",
            LifecycleHook::AfterWorkersUpgrade => "AfterWorkersUpgrade",
            LifecycleHook::AfterClusterUpgrade => "AfterClusterUpgrade",
            LifecycleHook::BeforeClusterDelete => "BeforeClusterDelete",
        }
    }

    /// The hook named `name` in the catalog.
    pub fn named(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|hook| hook.name() == name)
    }

    /// Whether a non-zero `retryAfterSeconds` holds what the hook guards.
    pub fn blocking(self) -> bool {
        self != LifecycleHook::AfterControlPlaneInitialized
    }
}

/// What the handlers of a hook answered, together.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HookOutcome {
    /// Every handler let the operation proceed (or none is registered).
    Proceed,
    /// At least one handler asked to hold: call again after the lowest non-zero
    /// `retryAfterSeconds`; `message` joins the holding handlers' messages, in a stable order.
    Retry {
        /// Seconds until the hook is to be called again.
        after_seconds: u32,
        /// What the holding handlers said.
        message: String,
    },
}

/// Calls the handlers registered for lifecycle hooks and the GenerateUpgradePlan hook.
pub trait LifecycleHooks {
    /// Whether any handler of `hook` serves Clusters in `namespace`.
    fn registered(&self, hook: LifecycleHook, namespace: &str) -> bool;

    /// Calls every handler of `hook` serving Clusters in `namespace`. `Err` says why a call
    /// failed (a `Failure` answer, or a failed call whose handler's failurePolicy is Fail).
    fn call(
        &self,
        hook: LifecycleHook,
        namespace: &str,
        request: &LifecycleRequest,
    ) -> Result<HookOutcome, String>;

    /// Calls the GenerateUpgradePlan handler `extension` for a Cluster in `namespace`; without a
    /// Runtime Extension client (the default) no plan can be asked for.
    fn generate_upgrade_plan(
        &self,
        extension: &str,
        _namespace: &str,
        _request: &GenerateUpgradePlanRequest,
    ) -> Result<GenerateUpgradePlanResponse, String> {
        Err(unavailable(extension))
    }
}

/// Hooks that never hold an upgrade and have no GenerateUpgradePlan extension:
/// [`ProceedingHooks::NONE`] is no Runtime Extension at all (no hook registered, none called);
/// [`ProceedingHooks::ALL`] is how the offline `plan` sees them, every hook registered and letting
/// the upgrade go on, so the plan lists each call the controller would make.
#[derive(Debug, Clone, Copy)]
pub struct ProceedingHooks {
    registered: bool,
}

impl ProceedingHooks {
    /// No hook registered.
    pub const NONE: ProceedingHooks = ProceedingHooks { registered: false };
    /// Every hook registered, every call answered "proceed".
    pub const ALL: ProceedingHooks = ProceedingHooks { registered: true };
}

impl LifecycleHooks for ProceedingHooks {
    fn registered(&self, _hook: LifecycleHook, _namespace: &str) -> bool {
        self.registered
    }

    fn call(
        &self,
        _hook: LifecycleHook,
        _namespace: &str,
        _request: &LifecycleRequest,
    ) -> Result<HookOutcome, String> {
        Ok(HookOutcome::Proceed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hook_names_round_trip_and_only_the_initialized_hook_does_not_block() {
        for hook in LifecycleHook::ALL {
            assert_eq!(LifecycleHook::named(hook.name()), Some(hook));
            assert_eq!(
                hook.blocking(),
                hook != LifecycleHook::AfterControlPlaneInitialized
            );
        }
        assert_eq!(LifecycleHook::named("GeneratePatches"), None);
    }
}
