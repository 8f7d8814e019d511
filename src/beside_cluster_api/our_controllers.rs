//! Which controllers capi-topology's controller Deployment runs, read from `serve`'s command line
//! as clap reads it (`--controllers=a,b` or `--controllers a,b`, repeated occurrences adding up,
//! none meaning the standalone set), and the edit that adds or removes some: one
//! `--controllers=` in the place of the first, in the order the controllers are declared.

use clap::ValueEnum;
use serde_json::Value;

use super::manager_flags::string_list;
use crate::controller::ControllerKind;

/// The label selector of capi-topology's controller Deployment (manifests/base/deployment.yaml).
pub const OUR_CONTROLLER_SELECTOR: &str =
    "app.kubernetes.io/name=capi-topology,app.kubernetes.io/component=controller";

/// The controllers a take-over starts, as the beside-cluster-api overlay runs them; the first
/// two are the counterparts of what Cluster API's `ClusterTopology` gate runs.
pub const TAKE_OVER_CONTROLLERS: [ControllerKind; 3] = [
    ControllerKind::Topology,
    ControllerKind::ClusterClass,
    ControllerKind::ExtensionConfig,
];

/// The controllers a give-back stops: the topology ones, the switch that would turn Cluster
/// API's webhooks off again, and the class rollouts (Cluster API's topology controller computes
/// every Cluster from its class, whatever revision a rollout held it on).
pub const GIVE_BACK_CONTROLLERS: [ControllerKind; 4] = [
    ControllerKind::Topology,
    ControllerKind::ClusterClass,
    ControllerKind::ClusterApiWebhooks,
    ControllerKind::ClassRollout,
];

/// The name of a controller on the command line.
pub fn controller_name(kind: ControllerKind) -> String {
    kind.to_possible_value()
        .map(|value| value.get_name().to_owned())
        .unwrap_or_default()
}

/// One flag's occurrences: (index of the flag arg, index of the value arg, the value).
fn occurrences(args: &[String], flag: &str) -> Vec<(usize, usize, String)> {
    let long = format!("--{flag}");
    let inline = format!("--{flag}=");
    let mut found = Vec::new();
    let mut index = 0;
    while index < args.len() {
        let arg = &args[index];
        if arg == "--" {
            break;
        }
        if let Some(value) = arg.strip_prefix(&inline) {
            found.push((index, index, value.to_owned()));
        } else if *arg == long {
            if let Some(value) = args.get(index + 1) {
                found.push((index, index + 1, value.clone()));
                index += 1;
            }
        }
        index += 1;
    }
    found
}

fn parse_list(args: &[String], flag: &str) -> Vec<String> {
    occurrences(args, flag)
        .into_iter()
        .flat_map(|(_, _, value)| value.split(',').map(str::to_owned).collect::<Vec<_>>())
        .collect()
}

/// The controllers `serve` runs with `args` (the container's args after the program): none when
/// its components leave the controllers out.
pub fn running_controllers(args: &[String]) -> Result<Vec<ControllerKind>, String> {
    let components = parse_list(args, "components");
    if !components.is_empty() && !components.iter().any(|c| c == "controllers") {
        return Ok(Vec::new());
    }
    let names = parse_list(args, "controllers");
    if names.is_empty() {
        return Ok(ControllerKind::STANDALONE.to_vec());
    }
    names
        .iter()
        .map(|name| {
            ControllerKind::from_str(name, false)
                .map_err(|_| format!("invalid value '{name}' for '--controllers <CONTROLLER>'"))
        })
        .collect()
}

/// `args` with `add` added to and `remove` taken from the controllers run, as one
/// `--controllers=` (in the place of the first occurrence, else at the end); `None` when that
/// changes nothing.
pub fn with_controllers(
    args: &[String],
    add: &[ControllerKind],
    remove: &[ControllerKind],
) -> Result<Option<Vec<String>>, String> {
    let mut kinds = running_controllers(args)?;
    kinds.extend_from_slice(add);
    kinds.retain(|kind| !remove.contains(kind));
    kinds.sort();
    kinds.dedup();
    if kinds.is_empty() {
        // `serve` needs one; it runs none of the topology controllers.
        kinds.push(ControllerKind::ExtensionConfig);
    }
    let names: Vec<String> = kinds.into_iter().map(controller_name).collect();
    let flag = format!("--controllers={}", names.join(","));
    let found = occurrences(args, "controllers");
    let mut edited = Vec::with_capacity(args.len() + 1);
    for (index, arg) in args.iter().enumerate() {
        match found
            .iter()
            .find(|(at, value_at, _)| (*at..=*value_at).contains(&index))
        {
            Some((at, _, _)) if *at == found[0].0 && index == *at => edited.push(flag.clone()),
            Some(_) => {}
            None => edited.push(arg.clone()),
        }
    }
    if found.is_empty() {
        edited.push(flag);
    }
    Ok((edited != args).then_some(edited))
}

/// The first container's args of a Deployment (as JSON).
pub fn container_args(deployment: &Value) -> Vec<String> {
    string_list(&deployment["spec"]["template"]["spec"]["containers"][0]["args"])
}

/// Whether the Deployment (as JSON) runs capi-topology's topology controller: some replicas,
/// and `topology` among the controllers its args run.
pub fn runs_our_topology(deployment: &Value) -> Result<bool, String> {
    let replicas = deployment["spec"]["replicas"].as_i64().unwrap_or(1);
    Ok(replicas > 0 && running_controllers(&container_args(deployment))?.contains(&ControllerKind::Topology))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(args: &[&str]) -> Vec<String> {
        args.iter().map(|a| (*a).to_owned()).collect()
    }

    #[test]
    fn the_controllers_run_are_read_as_clap_reads_them() {
        use ControllerKind::*;
        assert_eq!(
            running_controllers(&args(&["serve", "--components=controllers"])),
            Ok(ControllerKind::STANDALONE.to_vec())
        );
        assert_eq!(
            running_controllers(&args(&["serve", "--components=webhooks"])),
            Ok(vec![])
        );
        assert_eq!(
            running_controllers(&args(&[
                "serve",
                "--controllers",
                "topology",
                "--controllers=extension-config"
            ])),
            Ok(vec![Topology, ExtensionConfig])
        );
        assert!(running_controllers(&args(&["--controllers=nonsense"])).is_err());
    }

    #[test]
    fn a_take_over_adds_the_topology_controllers_in_one_flag() {
        let standby = args(&[
            "serve",
            "--components=controllers",
            "--controllers=extension-config",
            "--log-format=json",
        ]);
        let owning = with_controllers(&standby, &TAKE_OVER_CONTROLLERS, &[])
            .unwrap()
            .unwrap();
        assert_eq!(
            owning,
            args(&[
                "serve",
                "--components=controllers",
                "--controllers=topology,cluster-class,extension-config",
                "--log-format=json"
            ])
        );
        assert_eq!(with_controllers(&owning, &TAKE_OVER_CONTROLLERS, &[]), Ok(None));
        let given_back = with_controllers(&owning, &[], &GIVE_BACK_CONTROLLERS)
            .unwrap()
            .unwrap();
        assert_eq!(given_back, standby);
    }

    #[test]
    fn repeated_and_two_arg_forms_become_one_flag() {
        let split = args(&[
            "serve",
            "--controllers",
            "cluster-api-webhooks",
            "--x",
            "--controllers=extension-config",
        ]);
        assert_eq!(
            with_controllers(&split, &TAKE_OVER_CONTROLLERS, &[])
                .unwrap()
                .unwrap(),
            args(&[
                "serve",
                "--controllers=topology,cluster-class,extension-config,cluster-api-webhooks",
                "--x"
            ])
        );
        let overlay = args(&[
            "serve",
            "--controllers=topology,cluster-class,extension-config,cluster-api-webhooks",
        ]);
        assert_eq!(
            with_controllers(&overlay, &[], &GIVE_BACK_CONTROLLERS)
                .unwrap()
                .unwrap(),
            args(&["serve", "--controllers=extension-config"])
        );
        // No flag runs the standalone set: the edit writes what remains explicitly.
        assert_eq!(
            with_controllers(&args(&["serve"]), &[], &GIVE_BACK_CONTROLLERS)
                .unwrap()
                .unwrap(),
            args(&[
                "serve",
                "--controllers=cluster-infrastructure,cluster-resource-set,extension-config"
            ])
        );
    }

    #[test]
    fn our_topology_runs_only_with_replicas() {
        let deployment = |replicas: i64, flag: &str| serde_json::json!({"spec": {"replicas": replicas, "template": {"spec": {"containers": [{"args": ["serve", flag]}]}}}});
        assert_eq!(
            runs_our_topology(&deployment(1, "--controllers=topology")),
            Ok(true)
        );
        assert_eq!(
            runs_our_topology(&deployment(0, "--controllers=topology")),
            Ok(false)
        );
        assert_eq!(
            runs_our_topology(&deployment(2, "--controllers=extension-config")),
            Ok(false)
        );
    }
}
