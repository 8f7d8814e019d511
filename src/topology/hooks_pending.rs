//! The lifecycle hooks a Cluster still owes a call, kept in its
//! `runtime.cluster.x-k8s.io/pending-hooks` annotation (a sorted comma list without duplicates,
//! as Cluster API v1.14 keeps it) so that the intent to call an After* hook survives a restart.
//! Pure helpers: the controller writes the annotation the engine computes.

use std::collections::{BTreeMap, BTreeSet};

use super::hooks::LifecycleHook;

/// The annotation listing the hooks a Cluster still owes a call.
pub const PENDING_HOOKS_ANNOTATION: &str = "runtime.cluster.x-k8s.io/pending-hooks";

/// The names in a pending-hooks value (empty items dropped).
fn names(value: &str) -> BTreeSet<&str> {
    value.split(',').filter(|name| !name.is_empty()).collect()
}

/// Whether `hook` is pending according to `annotations`.
pub fn is_pending(annotations: Option<&BTreeMap<String, String>>, hook: LifecycleHook) -> bool {
    annotations
        .and_then(|a| a.get(PENDING_HOOKS_ANNOTATION))
        .is_some_and(|value| names(value).contains(hook.name()))
}

/// The annotation's value with `hooks` added (sorted, deduplicated).
pub fn with_pending(value: &str, hooks: &[LifecycleHook]) -> String {
    let mut set = names(value);
    set.extend(hooks.iter().map(|hook| hook.name()));
    set.into_iter().collect::<Vec<_>>().join(",")
}

/// The annotation's value with `hooks` removed; `None` when nothing is left (the annotation is
/// then removed).
pub fn without_pending(value: &str, hooks: &[LifecycleHook]) -> Option<String> {
    let mut set = names(value);
    for hook in hooks {
        set.remove(hook.name());
    }
    (!set.is_empty()).then(|| set.into_iter().collect::<Vec<_>>().join(","))
}

/// The value the annotation takes after marking `pending` and then `done`; `None` when the
/// annotation is to be absent.
pub fn updated(current: Option<&str>, pending: &[LifecycleHook], done: &[LifecycleHook]) -> Option<String> {
    without_pending(&with_pending(current.unwrap_or_default(), pending), done)
}

#[cfg(test)]
mod tests {
    use super::*;
    use LifecycleHook::*;

    #[test]
    fn hooks_are_added_sorted_and_once() {
        let value = with_pending("", &[AfterControlPlaneUpgrade, AfterClusterUpgrade]);
        assert_eq!(value, "AfterClusterUpgrade,AfterControlPlaneUpgrade");
        assert_eq!(with_pending(&value, &[AfterClusterUpgrade]), value);
        assert_eq!(
            with_pending(",Foo,", &[BeforeWorkersUpgrade]),
            "BeforeWorkersUpgrade,Foo"
        );
    }

    #[test]
    fn removing_the_last_hook_removes_the_annotation() {
        let value = "AfterClusterUpgrade,AfterControlPlaneUpgrade";
        assert_eq!(
            without_pending(value, &[AfterControlPlaneUpgrade]).as_deref(),
            Some("AfterClusterUpgrade")
        );
        assert_eq!(
            without_pending("AfterClusterUpgrade", &[AfterClusterUpgrade]),
            None
        );
        assert_eq!(
            updated(
                Some(value),
                &[AfterWorkersUpgrade],
                &[AfterClusterUpgrade, AfterControlPlaneUpgrade]
            )
            .as_deref(),
            Some("AfterWorkersUpgrade")
        );
    }

    #[test]
    fn pending_is_read_from_the_annotation() {
        let annotations = BTreeMap::from([(
            PENDING_HOOKS_ANNOTATION.to_owned(),
            "AfterClusterUpgrade,BeforeWorkersUpgrade".to_owned(),
        )]);
        assert!(is_pending(Some(&annotations), AfterClusterUpgrade));
        assert!(!is_pending(Some(&annotations), AfterWorkersUpgrade));
        assert!(!is_pending(None, AfterClusterUpgrade));
    }
}
