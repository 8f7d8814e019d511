//! The switch of `cluster-api take-over --apply` and `give-back --apply`, step by step, each
//! printed as it happens and idempotent (a step already done says so), in an order where two
//! topology controllers never run at once and Cluster writes are always admitted:
//! take-over: admission to capi-topology (ours on, then Cluster API's off), Cluster API's
//! topology controller stopped (`ClusterTopology=false`, rolled out, no old Pod left), ours
//! started; give-back: ours stopped, Cluster API's started, admission back to Cluster API.

use std::time::{Duration, Instant};

use anyhow::{anyhow, bail, Context, Result};
use k8s_openapi::api::admissionregistration::v1::{
    MutatingWebhookConfiguration, ValidatingWebhookConfiguration,
};
use kube::api::{Api, DynamicObject, PostParams};
use kube::core::{ApiResource, GroupVersionKind};
use kube::Client;
use serde_json::{json, Value};

use super::cluster_api_deployments::{find_one, patch, replace_list, wait_rolled_out, Found};
use super::terminal::print_text;
use crate::beside_cluster_api::{
    container_args, controller_name, manager_argv, running_controllers, string_list, with_controllers,
    with_feature_gate, Direction, Switch, CLUSTER_API_PROVIDER_SELECTOR, CLUSTER_TOPOLOGY,
    GIVE_BACK_CONTROLLERS, OUR_CONTROLLER_SELECTOR, TAKE_OVER_CONTROLLERS,
};
use crate::controller::cluster_api_webhooks::{switch_all, switch_named};
use crate::controller::ControllerKind;

/// The name of capi-topology's own webhook configurations (manifests/base/webhooks.yaml).
pub const OWN_CONFIGURATION: &str = "capi-topology";
/// The labels of capi-topology's webhook Deployment (manifests/base/deployment.yaml).
const OUR_WEBHOOK_SELECTOR: &str = "app.kubernetes.io/name=capi-topology,app.kubernetes.io/component=webhook";
/// How long the API server may take to use a changed webhook configuration.
const CONFIGURATION_EFFECTIVE: Duration = Duration::from_secs(3);

/// Runs the switch `direction`, printing each step.
pub async fn switch(client: &Client, direction: Direction, timeout: Duration) -> Result<()> {
    let steps: [&str; 3] = match direction {
        Direction::TakeOver => [
            "admission: capi-topology's webhooks on, then Cluster API's off",
            "Cluster API's topology controller stopped",
            "capi-topology's topology controllers started",
        ],
        Direction::GiveBack => [
            "capi-topology's topology controllers stopped",
            "Cluster API's topology controller started",
            "admission: Cluster API's webhooks on, then capi-topology's off",
        ],
    };
    for (index, title) in steps.iter().enumerate() {
        say(&format!("step {} of 3: {title}\n", index + 1))?;
        let done = match (direction, index) {
            (Direction::TakeOver, 0) => admission(client, Switch::Off, timeout).await,
            (Direction::TakeOver, 1) | (Direction::GiveBack, 1) => {
                core_manager(client, direction == Direction::GiveBack, timeout).await
            }
            (Direction::TakeOver, _) | (Direction::GiveBack, 0) => {
                our_controllers(client, direction == Direction::TakeOver, timeout).await
            }
            (Direction::GiveBack, _) => admission(client, Switch::On, timeout).await,
        };
        done.map_err(|error| {
            anyhow!(
                "step {} of 3 ({title}) failed: {error:#}\nThe steps before it are done and nothing after it \
                 was changed. Fix the cause, then run `capi-topology cluster-api {} --apply` again: it \
                 carries on from here (steps already done are skipped).",
                index + 1,
                direction.command()
            )
        })?;
    }
    say(match direction {
        Direction::TakeOver => "take-over done: capi-topology's topology controller owns the fleet\n",
        Direction::GiveBack => "give-back done: Cluster API's topology controller owns the fleet\n",
    })?;
    Ok(())
}

fn say(text: &str) -> Result<()> {
    print_text(text).context("cannot write to stdout")
}

/// Cluster API's webhook entries switched `capi` (Off: take-over, On: give-back), the other
/// side first switched the other way and seen answering, so no write goes unadmitted.
async fn admission(client: &Client, capi: Switch, timeout: Duration) -> Result<()> {
    let ours = if capi == Switch::Off {
        Switch::On
    } else {
        Switch::Off
    };
    let switched_on = if capi == Switch::Off {
        if let Some(webhook) = find_one(client, OUR_WEBHOOK_SELECTOR).await? {
            say(&format!(
                "  Deployment {}: waiting until it is rolled out\n",
                webhook.id()
            ))?;
            wait_rolled_out(client, &webhook, timeout).await?;
        }
        switch_ours(client, ours).await?
    } else {
        switch_capi(client, capi).await?
    };
    tokio::time::sleep(CONFIGURATION_EFFECTIVE).await;
    if let Err(error) = probe(client, timeout).await {
        // The side just switched on does not answer: off again, so admission stays as found (a
        // side that was on before is left on: the other may be off already).
        if !switched_on {
            return Err(error);
        }
        if capi == Switch::Off {
            switch_ours(client, Switch::Off).await?;
        } else {
            switch_capi(client, Switch::Off).await?;
        }
        return Err(error);
    }
    say("  admission answers (a dry-run Cluster create was admitted or refused by the webhooks)\n")?;
    if capi == Switch::Off {
        switch_capi(client, capi).await?;
    } else {
        switch_ours(client, ours).await?;
    }
    tokio::time::sleep(CONFIGURATION_EFFECTIVE).await;
    Ok(())
}

fn word(switch: Switch) -> &'static str {
    if switch == Switch::Off {
        "off"
    } else {
        "on"
    }
}

/// Switches capi-topology's entries; whether any changed.
async fn switch_ours(client: &Client, switch: Switch) -> Result<bool> {
    let mut any = false;
    for (kind, changed) in [
        (
            "ValidatingWebhookConfiguration",
            switch_named::<ValidatingWebhookConfiguration>(client, OWN_CONFIGURATION, switch).await?,
        ),
        (
            "MutatingWebhookConfiguration",
            switch_named::<MutatingWebhookConfiguration>(client, OWN_CONFIGURATION, switch).await?,
        ),
    ] {
        let state = match changed {
            None if switch == Switch::On => bail!(
                "{kind} {OWN_CONFIGURATION} not found: install capi-topology first (docs/beside-cluster-api.md)"
            ),
            None => "not installed".to_owned(),
            Some(true) => {
                any = true;
                format!("switched {}", word(switch))
            }
            Some(false) => format!("already {}", word(switch)),
        };
        say(&format!(
            "  {kind} {OWN_CONFIGURATION} (clusters, clusterclasses, extensionconfigs): {state}\n"
        ))?;
    }
    Ok(any)
}

/// Switches Cluster API's core provider's entries; whether any changed.
async fn switch_capi(client: &Client, switch: Switch) -> Result<bool> {
    let mut changed = switch_all::<ValidatingWebhookConfiguration>(client, switch).await?;
    changed.extend(switch_all::<MutatingWebhookConfiguration>(client, switch).await?);
    if changed.is_empty() {
        say(&format!(
            "  Cluster API's webhooks for clusters, clusterclasses and extensionconfigs: already {}\n",
            word(switch)
        ))?;
    }
    for name in &changed {
        say(&format!("  {name}: switched {}\n", word(switch)))?;
    }
    Ok(!changed.is_empty())
}

/// Waits until a server-side dry-run create of a Cluster gets an answer from the admission
/// webhooks (admitted, or refused by a rule), not a failure to call one.
async fn probe(client: &Client, timeout: Duration) -> Result<()> {
    let gvk = GroupVersionKind::gvk("cluster.x-k8s.io", "v1beta2", "Cluster");
    let resource = ApiResource::from_gvk_with_plural(&gvk, "clusters");
    let api: Api<DynamicObject> = Api::namespaced_with(client.clone(), "default", &resource);
    let cluster: DynamicObject = serde_json::from_value(json!({
        "apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "Cluster",
        "metadata": {"name": "capi-topology-admission-probe", "namespace": "default"},
        "spec": {"topology": {"classRef": {"name": "capi-topology-admission-probe"}, "version": "v1.34.0"}}
    }))?;
    let params = PostParams {
        dry_run: true,
        ..PostParams::default()
    };
    let started = Instant::now();
    loop {
        let message = match api.create(&params, &cluster).await {
            Ok(_) => return Ok(()),
            Err(kube::Error::Api(status)) if status.code == 404 => bail!(
                "the dry-run create of a Cluster in namespace default was refused before admission: {}",
                status.message
            ),
            Err(kube::Error::Api(status)) if !status.message.contains("failed calling webhook") => {
                return Ok(())
            }
            Err(kube::Error::Api(status)) => status.message,
            Err(other) => return Err(other).context("dry-run create of a Cluster"),
        };
        if started.elapsed() >= timeout {
            bail!("the admission webhooks do not answer within {timeout:?}: {message}");
        }
        tokio::time::sleep(Duration::from_secs(2)).await;
    }
}

/// Waits for the Deployment's rollout, saying so.
async fn rolled_out(client: &Client, found: &Found, timeout: Duration) -> Result<()> {
    say(&format!(
        "  Deployment {}: waiting until it is rolled out with no old Pod left\n",
        found.id()
    ))?;
    wait_rolled_out(client, found, timeout).await?;
    say(&format!("  Deployment {}: rolled out\n", found.id()))
}

/// Cluster API's core manager with `ClusterTopology` set `on`, rolled out with no old Pod left.
async fn core_manager(client: &Client, on: bool, timeout: Duration) -> Result<()> {
    let core = find_one(client, CLUSTER_API_PROVIDER_SELECTOR)
        .await?
        .context("no Deployment labelled cluster.x-k8s.io/provider=cluster-api: Cluster API's core manager was not found")?;
    let containers = core.object["spec"]["template"]["spec"]["containers"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let index = containers
        .iter()
        .position(|c| c["name"] == "manager")
        .with_context(|| format!("Deployment {} has no container named manager", core.id()))?;
    let container = &containers[index];
    let argv = manager_argv(container);
    let edited = with_feature_gate(&argv, CLUSTER_TOPOLOGY, on)
        .map_err(|error| anyhow!("Deployment {}: its manager would not start: {error}", core.id()))?;
    match edited {
        Some(edited) => {
            let ops = gate_ops(&core, index, container, &edited);
            patch(client, &core, ops).await?;
            say(&format!(
                "  Deployment {}: --feature-gates ClusterTopology={on} set\n",
                core.id()
            ))?;
        }
        None => say(&format!(
            "  Deployment {}: already ClusterTopology={on}\n",
            core.id()
        ))?,
    }
    rolled_out(client, &core, timeout).await
}

/// The ops writing `edited` (the manager's arguments after the program) back into the container's
/// command (its entries after the program) and args.
fn gate_ops(core: &Found, index: usize, container: &Value, edited: &[String]) -> Vec<Value> {
    let base = format!("/spec/template/spec/containers/{index}");
    let command = string_list(&container["command"]);
    let in_command = command.len().saturating_sub(1);
    let mut ops = Vec::new();
    if in_command > 0 {
        let mut new_command = command[..1].to_vec();
        new_command.extend_from_slice(&edited[..in_command]);
        if new_command != command {
            ops.extend(replace_list(
                &core.object,
                &format!("{base}/command"),
                &new_command,
            ));
        }
    }
    ops.extend(replace_list(
        &core.object,
        &format!("{base}/args"),
        &edited[in_command..],
    ));
    ops
}

/// capi-topology's controller Deployment running the topology controllers (`owning`) or not,
/// rolled out with no old Pod left.
async fn our_controllers(client: &Client, owning: bool, timeout: Duration) -> Result<()> {
    let Some(ours) = find_one(client, OUR_CONTROLLER_SELECTOR).await? else {
        if owning {
            bail!("no Deployment labelled {OUR_CONTROLLER_SELECTOR}: install capi-topology first (docs/beside-cluster-api.md)");
        }
        return say("  capi-topology's controller Deployment is not installed: nothing to stop\n");
    };
    let path = "/spec/template/spec/containers/0/args";
    let args = container_args(&ours.object);
    let edited = if owning {
        with_controllers(&args, &TAKE_OVER_CONTROLLERS, &[])
    } else {
        with_controllers(&args, &[], &GIVE_BACK_CONTROLLERS)
    }
    .map_err(|error| anyhow!("Deployment {}: {error}", ours.id()))?;
    let remaining = running_controllers(edited.as_deref().unwrap_or(&args)).map_err(|e| anyhow!(e))?;
    let replicas = ours.object["spec"]["replicas"].as_i64().unwrap_or(1);
    let wanted = match owning {
        true if replicas == 0 => 1,
        false
            if remaining
                .iter()
                .all(|kind| *kind == ControllerKind::ExtensionConfig) =>
        {
            0
        }
        _ => replicas,
    };
    let mut ops = Vec::new();
    if let Some(edited) = &edited {
        ops.extend(replace_list(&ours.object, path, edited));
    }
    if wanted != replicas {
        ops.push(json!({"op": "replace", "path": "/spec/replicas", "value": wanted}));
    }
    let names: Vec<String> = remaining.iter().map(|k| controller_name(*k)).collect();
    if ops.is_empty() {
        say(&format!(
            "  Deployment {}: already --controllers={} with {replicas} replicas\n",
            ours.id(),
            names.join(",")
        ))?;
    } else {
        patch(client, &ours, ops).await?;
        say(&format!(
            "  Deployment {}: --controllers={}, {wanted} replicas\n",
            ours.id(),
            names.join(",")
        ))?;
    }
    rolled_out(client, &ours, timeout).await
}
