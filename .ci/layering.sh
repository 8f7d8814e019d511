#!/usr/bin/env bash
# Fails when a module imports one above it. The layers, lowest first (docs/ARCHITECTURE.md):
#
#   0 base      field, decode, go_format, metrics,  helpers every layer may use; they
#               managed_fields                      import nothing of the crate
#   1 api       wire types, selectors, conditions
#   2 contract  the provider contract as data (api only)
#   3 variables schemas, values, CEL
#   4 patches   the inline patch engine, Go templates
#   5 store     the ObjectSource trait the engine is handed, and its implementations
#   6 topology  the engine: blueprint + Cluster + current state -> desired objects
#   7 addons    ClusterResourceSet rules; rollout: ClusterClass rollouts in waves
#   8 admission the webhooks' rules
#   9 adapters  runtime, server, controller, offline, beside_cluster_api, clock, shutdown,
#               telemetry, kube_credentials: they may use each other and everything below
#  10 cli       the subcommands, on top of everything
#
# A module may import its own layer and the layers below; a module missing from the list fails
# the check until it is given a layer here. Checked: every `crate::<module>` path in src/
# outside comments. Not checked: test files (`tests.rs`, `*_tests.rs`, `tests_*.rs`), which may
# drive a module through a higher one to build their fixtures, and relative paths (`super::`),
# which stay inside a module. Grouped imports across modules (`crate::{a::x, b::y}`) are refused:
# write one `use crate::<module>::...` per module.
set -euo pipefail
cd "$(dirname "$0")/.."

declare -A layer=(
  [field]=0 [decode]=0 [go_format]=0 [metrics]=0 [metrics_rollout]=0 [managed_fields]=0
  [api]=1
  [contract]=2
  [variables]=3
  [patches]=4
  [store]=5
  [topology]=6
  [addons]=7 [rollout]=7
  [admission]=8
  [runtime]=9 [server]=9 [controller]=9 [offline]=9 [beside_cluster_api]=9
  [clock]=9 [shutdown]=9 [telemetry]=9 [kube_credentials]=9
  [cli]=10
)

failures=()
while IFS=: read -r file line target; do
  rel=${file#src/}
  module=${rel%%/*}
  module=${module%.rs}
  [[ $module == lib || $module == main ]] && continue
  if [[ -z ${layer[$module]+set} ]]; then
    failures+=("$file: module \`$module\` has no layer in .ci/layering.sh")
  elif [[ $target == '{' ]]; then
    failures+=("$file:$line: grouped \`crate::{...}\` import: write one \`use crate::<module>::...\` per module")
  elif [[ $target == "$module" ]]; then
    continue
  elif [[ -z ${layer[$target]+set} ]]; then
    failures+=("$file:$line: \`crate::$target\` has no layer in .ci/layering.sh")
  elif ((layer[$target] > layer[$module])); then
    failures+=("$file:$line: \`$module\` (layer ${layer[$module]}) imports \`crate::$target\` (layer ${layer[$target]})")
  fi
done < <(
  # Every `crate::<module>` (or `crate::{`) in code, as file:line:module; line comments (doc
  # comments included) are dropped first; test files are skipped.
  find src -name '*.rs' ! -name tests.rs ! -name '*_tests.rs' ! -name 'tests_*.rs' -print0 | sort -z |
    xargs -0 awk '{
      sub(/\/\/.*$/, "")
      line = $0
      while (match(line, /crate::([a-z_][a-z0-9_]*|\{)/)) {
        print FILENAME ":" FNR ":" substr(line, RSTART + 7, RLENGTH - 7)
        line = substr(line, RSTART + RLENGTH)
      }
    }' | sort -u
)

if ((${#failures[@]})); then
  echo "layering: a module imports a higher layer (lowest first: base, api, contract, variables, patches, store, topology, addons, admission, adapters, cli):" >&2
  printf '%s\n' "${failures[@]}" >&2
  exit 1
fi
echo "layering: no module imports a higher layer"
