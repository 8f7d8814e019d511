#!/usr/bin/env bash
# Runs the admission benchmarks of capi-topology (criterion, benches/admission.rs) and the same
# workloads through Cluster API v1.14.0's webhook handlers (Go, benches/reference/), one after
# the other, and prints both medians and their ratio (a Cluster written in v1beta1 is compared
# with the reference converting it as the API server does: ours on its v1beta1 paths, and ours
# through its own /convert then its v1beta2 paths); then how much the v1beta1 rows cost over the
# v1beta2 one; then both servers over TLS under wrk
# (benches/compare-tls.sh). Run by hand, never by CI: it builds the reference (Go 1.26 or later;
# modules from the Go module proxy, cached with the e2e build cache).
#   usage: bash benches/compare.sh [seconds of measurement per benchmark, default 8]
#                                  [seconds per wrk run over TLS, default 5; 0 skips those runs]
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-8}"
tls_seconds="${2:-5}"
cache="${CAPI_TOPOLOGY_E2E_CACHE:-$HOME/.cache/capi-topology-e2e}"
export GOFLAGS=-trimpath GOCACHE="$cache/gocache" GOMODCACHE="$cache/gomodcache" GOTOOLCHAIN=local
command -v go >/dev/null || { echo "go is required for the reference benchmark" >&2; exit 1; }

echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
# Criterion prints `time: [low median high]` after the benchmark's name; medians in ns.
ours=$(cargo bench --bench admission -- --warm-up-time 2 --measurement-time "$seconds" 2>/dev/null |
  awk '/^[a-z0-9_]+/ { name = $1 }
       /time:/ { sub(/.*time: *\[/, ""); split($0, f, " ");
                 scale = f[4] == "ns" ? 1 : f[4] == "ms" ? 1e6 : f[4] == "s" ? 1e9 : 1e3;
                 print name, f[3] * scale }')
theirs=$(cd benches/reference && go test -run '^$' -bench . -benchtime "${seconds}s" -count 1 . |
  awk '/^Benchmark/ { name = $1; sub(/-[0-9]+$/, "", name); print name, $3 }')
echo "load after:  $(cut -d' ' -f1-3 /proc/loadavg)" >&2

median() { awk -v n="$2" '$1 == n { print $2 }' <<<"$1"; }
show() { awk -v ns="$1" 'BEGIN { if (ns >= 1e6) printf "%.2f ms", ns / 1e6; else printf "%.1f µs", ns / 1e3 }'; }
echo "| benchmark | capi-topology | Cluster API v1.14.0 | reference / capi-topology |"
echo "| --- | --- | --- | --- |"
while read -r rust go; do
  a=$(median "$ours" "$rust"); b=$(median "$theirs" "$go")
  [[ -n "$a" && -n "$b" ]] || { echo "missing figure for $rust / $go" >&2; exit 1; }
  printf '| `%s` | %s | %s | %sx |\n' "$rust" "$(show "$a")" "$(show "$b")" \
    "$(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.1f", b / a }')"
done <<'PAIRS'
cluster_create_mutate_validate_20_vars_5_mds BenchmarkClusterCreateMutateValidate20Vars5MDs
cluster_create_mutate_validate_20_vars_5_mds_v1beta1 BenchmarkClusterCreateMutateValidate20Vars5MDsV1beta1
cluster_create_through_conversion_v1beta1 BenchmarkClusterCreateMutateValidate20Vars5MDsV1beta1
clusterclass_update_1000_clusters BenchmarkClusterClassUpdate1000Clusters
PAIRS
hub=$(median "$ours" cluster_create_mutate_validate_20_vars_5_mds)
for spoke in cluster_create_mutate_validate_20_vars_5_mds_v1beta1 cluster_create_through_conversion_v1beta1; do
  printf 'ours, %s / the v1beta2 row: %sx\n' "$spoke" \
    "$(awk -v a="$(median "$ours" "$spoke")" -v b="$hub" 'BEGIN { printf "%.2f", a / b }')"
done
printf 'the reference, its v1beta1 row / its v1beta2 row: %sx\n' \
  "$(awk -v a="$(median "$theirs" BenchmarkClusterCreateMutateValidate20Vars5MDsV1beta1)" \
    -v b="$(median "$theirs" BenchmarkClusterCreateMutateValidate20Vars5MDs)" 'BEGIN { printf "%.2f", a / b }')"

if [[ "$tls_seconds" != 0 ]]; then
  echo
  echo "Over TLS (benches/compare-tls.sh $tls_seconds):"
  bash benches/compare-tls.sh "$tls_seconds"
fi
