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
use crate::lifecycle_hooks::count;
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
    eprintln!(
        "faults: extension down {DOWN:?} while {hook} held: the condition said {} {:?} after \
         {said_after:?}; nothing moved; {hook} called again {:?} after it was back",
        said["reason"],
        said["message"],
        back.elapsed()
    );
    Ok(back)
}
