//! The Runtime Extension down for [`DOWN`] in the middle of a chained upgrade (#34): while
//! BeforeClusterUpgrade holds, the test extension is killed (SIGKILL) and started again
//! [`DOWN`] later on the same address and certificate. While it is down every call of the hook
//! fails, so the upgrade must not go ahead: no Machine, MachineDeployment or KubeadmControlPlane
//! spec changes, and the Cluster's TopologyReconciled condition says the hook failed. Once it is
//! back the hook is called again and the upgrade finishes
//! ([`crate::beside_cluster_api_upgrade::chained`] checks the rest). Run by
//! `crate::faults_leader::upgrade_with_the_extension_down_while_a_hook_holds` (ignored, slow).

use std::time::{Duration, Instant};

use crate::controllers::{condition, CONVERGED};
use crate::faults_pause::moving_parts;
use crate::kubectl::Kubectl;
use crate::lifecycle_hooks::{count, CONFIG};
use crate::process::poll;
use crate::runtime_extensions::expect;
use crate::runtime_extensions::extension::Extension;

/// How long the extension stays down.
pub(crate) const DOWN: Duration = Duration::from_secs(60);

/// Kills the extension while `hook` holds Cluster `default/cluster`, checks every second for
/// [`DOWN`] that nothing moves and that the condition says the hook failed, starts it again and
/// waits until `hook` is called again; returns when it was back.
pub fn extension_down_while_held(
    kubectl: &Kubectl,
    extension: &Extension,
    cluster: &str,
    hook: &str,
) -> Result<Instant, String> {
    let key = format!("default/{cluster}");
    let held = condition(&kubectl.get_json("cluster", "default", cluster)?);
    let (calls, parts) = (
        count(&extension.calls(), hook, &key),
        moving_parts(kubectl, cluster)?,
    );
    let down = Instant::now();
    extension.kill();
    let mut failed: Option<(Duration, serde_json::Value)> = None;
    while down.elapsed() < DOWN {
        std::thread::sleep(Duration::from_secs(1));
        let now = moving_parts(kubectl, cluster)?;
        expect(
            now == parts,
            format!("nothing moves while the extension is down: {parts} then {now}"),
        )?;
        let said = condition(&kubectl.get_json("cluster", "default", cluster)?);
        let names_failure = said["status"] == "False"
            && said["message"].as_str().is_some_and(|m| m.contains(hook))
            && said["message"] != held["message"];
        if failed.is_none() && names_failure {
            failed = Some((down.elapsed(), said));
        }
    }
    let (said_after, said) = failed.ok_or_else(|| {
        format!("the condition to say {hook} failed while the extension was down; it said {held} before")
    })?;
    expect(
        count(&extension.calls(), hook, &key) == calls,
        "no call of the hook recorded while the extension was down (another process answered?)".to_owned(),
    )?;
    let back = Instant::now();
    expect(
        extension.start_again(),
        "the extension started again on its address".to_owned(),
    )?;
    poll(&format!("{hook} called again"), CONVERGED, || {
        let n = count(&extension.calls(), hook, &key);
        (n > calls).then_some(()).ok_or(format!("{n} calls"))
    })?;
    let rewritten = rediscovery_rewrites(kubectl)?;
    eprintln!(
        "faults: extension down {DOWN:?} while {hook} held: the condition said {} {:?} after \
         {said_after:?}; nothing moved; {hook} called again {:?} after it was back; a \
         rediscovery of the restarted extension wrote its ExtensionConfig: {rewritten}",
        said["reason"],
        said["message"],
        back.elapsed()
    );
    expect(
        !rewritten,
        "the restarted extension's rediscovery writes nothing".to_owned(),
    )?;
    Ok(back)
}

/// Has the restarted extension discovered again (a change of its ExtensionConfig's metadata
/// makes the controller discover it) and says whether the ExtensionConfig was written in the 5 s
/// after: its answer lists the same handlers, perhaps in another order (Cluster API's
/// Runtime SDK lists them from a Go map), which is no change to write.
fn rediscovery_rewrites(kubectl: &Kubectl) -> Result<bool, String> {
    let version = |text: &str| text.trim().parse::<u64>().map_err(|e| format!("{text:?}: {e}"));
    let touched = kubectl.ok(&[
        "annotate",
        "extensionconfig",
        CONFIG,
        "--overwrite",
        "e2e.capi-topology.dev/touched=after-restart",
        "-o",
        "jsonpath={.metadata.resourceVersion}",
    ])?;
    std::thread::sleep(Duration::from_secs(5));
    let now = kubectl.ok(&[
        "get",
        "extensionconfig",
        CONFIG,
        "-o",
        "jsonpath={.metadata.resourceVersion}",
    ])?;
    Ok(version(&now)? != version(&touched)?)
}
