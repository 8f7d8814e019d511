//! The feature gates of Cluster API's core manager, read from its container's command line as
//! the manager reads them, and set as `clusterctl` sets them. The manager (v1.14.0
//! `core/main.go`) parses with spf13/pflag: `--name=value` or `--name value` (the next arg is
//! the value, whatever it looks like), `_` and `-` alike in names, flags after other args too,
//! `--` ends the flags, and a single dash starts shorthands, of which the manager has only `v`:
//! `-feature-gates=...` makes it exit (`unknown shorthand flag: 'f'`). Each `--feature-gates`
//! is handed to component-base's feature-gate parser, which merges it into the gates set so
//! far: per gate the last value wins, values as Go's `strconv.ParseBool` reads them, and a
//! malformed entry makes the manager exit.

use serde_json::Value;

/// The feature gate of Cluster API's topology controller.
pub const CLUSTER_TOPOLOGY: &str = "ClusterTopology";

/// The manager's boolean flags (v1.14.0 `core/main.go`, `util/flags`, component-base's logs
/// flags): the only ones that do not take the next arg as their value.
const BOOLEAN_FLAGS: [&str; 5] = [
    "leader-elect",
    "contention-profiling",
    "insecure-diagnostics",
    "log-json-split-stream",
    "log-text-split-stream",
];

/// Where a `--feature-gates` value sits in the argument list.
#[derive(Debug, Clone, PartialEq, Eq)]
struct GatesArg {
    /// Index of the arg holding the value.
    index: usize,
    /// The text before the value in that arg (`--feature-gates=`, or empty for a separate value).
    prefix: String,
    /// The value.
    value: String,
}

/// The arguments the manager's process is started with after the program: a container's
/// `command` (without the program) then its `args`; only `args` when there is no `command` (the
/// image's entrypoint is the program).
pub fn manager_argv(container: &Value) -> Vec<String> {
    let command = string_list(&container["command"]);
    let args = string_list(&container["args"]);
    command.into_iter().skip(1).chain(args).collect()
}

/// The strings of a JSON list (a container's `command` or `args`); nothing for a non-list.
pub fn string_list(list: &Value) -> Vec<String> {
    list.as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .map(str::to_owned)
        .collect()
}

fn normalized(name: &str) -> String {
    name.replace('_', "-")
}

/// Every `--feature-gates` value in `argv`, in order; an error (as the manager would exit) for a
/// single-dash flag other than `-v`, or a `--feature-gates` without a value.
fn gates_args(argv: &[String]) -> Result<Vec<GatesArg>, String> {
    let mut found = Vec::new();
    let mut index = 0;
    while index < argv.len() {
        let arg = &argv[index];
        if arg == "--" {
            break;
        }
        if let Some(long) = arg.strip_prefix("--") {
            let (name, inline) = match long.split_once('=') {
                Some((name, value)) => (normalized(name), Some(value)),
                None => (normalized(long), None),
            };
            let takes_value = !BOOLEAN_FLAGS.contains(&name.as_str());
            match inline {
                Some(value) if name == "feature-gates" => found.push(GatesArg {
                    index,
                    prefix: arg[..arg.len() - value.len()].to_owned(),
                    value: value.to_owned(),
                }),
                None if takes_value => {
                    let Some(value) = argv.get(index + 1) else {
                        return Err(format!("flag needs an argument: --{name}"));
                    };
                    if name == "feature-gates" {
                        found.push(GatesArg {
                            index: index + 1,
                            prefix: String::new(),
                            value: value.clone(),
                        });
                    }
                    index += 1;
                }
                _ => {}
            }
        } else if let Some(short) = arg.strip_prefix('-').filter(|s| !s.is_empty()) {
            if !short.starts_with('v') {
                let first = short.chars().next().unwrap_or_default();
                return Err(format!(
                    "unknown shorthand flag: '{first}' in {arg} (the manager exits; write --{})",
                    short.split('=').next().unwrap_or_default()
                ));
            }
            if short == "v" {
                index += 1;
            }
        }
        index += 1;
    }
    Ok(found)
}

/// Go's `strconv.ParseBool`.
fn parse_bool(text: &str) -> Option<bool> {
    match text {
        "1" | "t" | "T" | "TRUE" | "true" | "True" => Some(true),
        "0" | "f" | "F" | "FALSE" | "false" | "False" => Some(false),
        _ => None,
    }
}

/// The gates one `--feature-gates` value sets, in order, as component-base reads them.
fn parse_gates(value: &str) -> Result<Vec<(String, bool)>, String> {
    let mut gates = Vec::new();
    for entry in value.split(',').filter(|entry| !entry.is_empty()) {
        let Some((name, setting)) = entry.split_once('=') else {
            return Err(format!("missing bool value for {}", entry.trim()));
        };
        let (name, setting) = (name.trim(), setting.trim());
        let on = parse_bool(setting).ok_or_else(|| {
            format!("invalid value of {name}={setting}, err: strconv.ParseBool: parsing {setting:?}: invalid syntax")
        })?;
        gates.push((name.to_owned(), on));
    }
    Ok(gates)
}

/// The value of `gate` the manager runs with: the last one set by any `--feature-gates`, else
/// its default (off, for `ClusterTopology` in v1.14.0). An error when the manager would refuse
/// its command line (it then does not run at all).
pub fn feature_gate(argv: &[String], gate: &str) -> Result<bool, String> {
    let mut on = false;
    for found in gates_args(argv)? {
        for (name, value) in parse_gates(&found.value)? {
            if name == gate {
                on = value;
            }
        }
    }
    Ok(on)
}

/// `argv` with `gate` set to `on` as the manager then reads it, every other gate kept: each
/// entry of `gate` in every `--feature-gates` rewritten, and the gate added to the last
/// `--feature-gates` (or a new `--feature-gates=` at the end) when none names it. `None` when
/// it reads so already and no entry says otherwise.
pub fn with_feature_gate(argv: &[String], gate: &str, on: bool) -> Result<Option<Vec<String>>, String> {
    let found = gates_args(argv)?;
    let mut edited = argv.to_vec();
    let mut named = false;
    for arg in &found {
        let entries: Vec<String> = arg
            .value
            .split(',')
            .map(|entry| match entry.split_once('=') {
                Some((name, _)) if name.trim() == gate => {
                    named = true;
                    format!("{gate}={on}")
                }
                _ => entry.to_owned(),
            })
            .collect();
        edited[arg.index] = format!("{}{}", arg.prefix, entries.join(","));
    }
    if !named {
        match found.last() {
            Some(last) => {
                let value = &edited[last.index][last.prefix.len()..];
                let separator = if value.is_empty() || value.ends_with(',') {
                    ""
                } else {
                    ","
                };
                edited[last.index] = format!("{}{value}{separator}{gate}={on}", last.prefix);
            }
            None => edited.push(format!("--feature-gates={gate}={on}")),
        }
    }
    feature_gate(&edited, gate)?;
    Ok((edited != argv).then_some(edited))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(args: &[&str]) -> Vec<String> {
        args.iter().map(|a| (*a).to_owned()).collect()
    }

    fn topology(args: &[&str]) -> Result<bool, String> {
        feature_gate(&argv(args), CLUSTER_TOPOLOGY)
    }

    #[test]
    fn every_form_go_reads_turns_the_gate_on() {
        assert_eq!(topology(&["--feature-gates=ClusterTopology=true"]), Ok(true));
        assert_eq!(topology(&["--feature-gates", "ClusterTopology=true"]), Ok(true));
        assert_eq!(topology(&["--feature_gates=ClusterTopology=true"]), Ok(true));
        assert_eq!(
            topology(&["--feature-gates=ClusterTopology=false,ClusterTopology=true"]),
            Ok(true)
        );
        assert_eq!(
            topology(&[
                "--feature-gates=ClusterTopology=false",
                "--feature-gates=MachinePool=true,ClusterTopology=T"
            ]),
            Ok(true)
        );
        assert_eq!(topology(&["--feature-gates= ClusterTopology = 1 "]), Ok(true));
        // Flags after other args are read too (pflag is interspersed).
        assert_eq!(
            topology(&["stray", "--feature-gates=ClusterTopology=TRUE"]),
            Ok(true)
        );
    }

    #[test]
    fn the_last_setting_wins_and_other_gates_merge() {
        assert_eq!(
            topology(&[
                "--feature-gates=ClusterTopology=true",
                "--feature-gates",
                "MachinePool=true"
            ]),
            Ok(true)
        );
        assert_eq!(
            topology(&[
                "--feature-gates=ClusterTopology=true",
                "--feature-gates=ClusterTopology=false"
            ]),
            Ok(false)
        );
        assert_eq!(topology(&["--feature-gates="]), Ok(false));
        assert_eq!(topology(&["--leader-elect"]), Ok(false));
    }

    #[test]
    fn values_of_other_flags_and_flags_after_the_end_are_not_gates() {
        // `--namespace` takes the next arg as its value, whatever it looks like.
        assert_eq!(
            topology(&["--namespace", "--feature-gates=ClusterTopology=true"]),
            Ok(false)
        );
        assert_eq!(
            topology(&["--", "--feature-gates=ClusterTopology=true"]),
            Ok(false)
        );
        assert_eq!(
            topology(&["--leader-elect", "--feature-gates=ClusterTopology=true"]),
            Ok(true)
        );
        assert_eq!(
            topology(&["-v", "5", "--feature-gates=ClusterTopology=true"]),
            Ok(true)
        );
    }

    #[test]
    fn command_lines_the_manager_refuses_are_errors() {
        let single_dash = topology(&["-feature-gates=ClusterTopology=true"]).unwrap_err();
        assert!(
            single_dash.contains("unknown shorthand flag: 'f'"),
            "{single_dash}"
        );
        assert_eq!(
            topology(&["--feature-gates=ClusterTopology=yes"]),
            Err("invalid value of ClusterTopology=yes, err: strconv.ParseBool: parsing \"yes\": invalid syntax".to_owned())
        );
        assert_eq!(
            topology(&["--feature-gates=ClusterTopology"]),
            Err("missing bool value for ClusterTopology".to_owned())
        );
        assert_eq!(
            topology(&["--feature-gates"]),
            Err("flag needs an argument: --feature-gates".to_owned())
        );
    }

    #[test]
    fn command_and_args_make_the_command_line() {
        let container = serde_json::json!({"command": ["/manager", "--feature-gates=ClusterTopology=true"],
                                           "args": ["--feature-gates=MachinePool=true"]});
        let argv = manager_argv(&container);
        assert_eq!(feature_gate(&argv, CLUSTER_TOPOLOGY), Ok(true));
        let only_args = serde_json::json!({"args": ["--feature-gates=ClusterTopology=true"]});
        assert_eq!(manager_argv(&only_args).len(), 1);
    }

    #[test]
    fn setting_the_gate_keeps_the_others_and_rewrites_every_entry() {
        let set = |args: &[&str], on| with_feature_gate(&argv(args), CLUSTER_TOPOLOGY, on).unwrap();
        assert_eq!(
            set(
                &[
                    "--leader-elect",
                    "--feature-gates=MachinePool=true,ClusterTopology=true,RuntimeSDK=true"
                ],
                false
            ),
            Some(argv(&[
                "--leader-elect",
                "--feature-gates=MachinePool=true,ClusterTopology=false,RuntimeSDK=true"
            ]))
        );
        assert_eq!(
            set(
                &["--feature-gates=ClusterTopology=false,ClusterTopology=true"],
                false
            ),
            Some(argv(&[
                "--feature-gates=ClusterTopology=false,ClusterTopology=false"
            ]))
        );
        assert_eq!(
            set(&["--feature-gates", "MachinePool=true"], true),
            Some(argv(&[
                "--feature-gates",
                "MachinePool=true,ClusterTopology=true"
            ]))
        );
        assert_eq!(
            set(&["--feature-gates=A=true", "--feature-gates="], true),
            Some(argv(&[
                "--feature-gates=A=true",
                "--feature-gates=ClusterTopology=true"
            ]))
        );
        assert_eq!(
            set(&["--leader-elect"], false),
            Some(argv(&["--leader-elect", "--feature-gates=ClusterTopology=false"]))
        );
        assert_eq!(set(&["--feature-gates=ClusterTopology=false"], false), None);
        assert!(with_feature_gate(
            &argv(&["-feature-gates=ClusterTopology=true"]),
            CLUSTER_TOPOLOGY,
            false
        )
        .is_err());
    }
}
