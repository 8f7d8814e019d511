#!/usr/bin/env bash
# Load benchmark of the webhook server: `serve --objects examples/quickstart/` over TLS, driven by
# wrk (Debian package `wrk`) at concurrency 1, 4, 16 and 64 with the mutating Cluster webhook
# (CREATE of a Cluster with 7 variables, defaulted), first over keep-alive connections, then with a
# fresh connection (and TLS handshake) per request (`Connection: close`), as an API server that does
# not reuse its connections sends them. Prints p50/p99 latency, requests/s and the server's peak RSS
# per run.
#   usage: bash benches/load.sh [seconds per run, default 15]
set -euo pipefail
cd "$(dirname "$0")/.."
duration="${1:-15}"
command -v wrk >/dev/null || { echo "wrk is required (apt-get install wrk)" >&2; exit 1; }

cargo build --release --quiet
bin="${CARGO_TARGET_DIR:-target}/release/capi-topology"
work=$(mktemp -d)
server_pid=""
cleanup() { [[ -n "$server_pid" ]] && kill "$server_pid" 2>/dev/null; wait 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT

"$bin" certs --out "$work/certs" --dns localhost --ip 127.0.0.1 2>/dev/null
python3 benches/load/review.py examples/quickstart/10-cluster-dev.yaml > "$work/review.json"
port=$((20000 + RANDOM % 20000)); metrics=$((port + 1))

run() {
  local mode=$1 connections=$2
  local close=()
  [[ "$mode" == fresh ]] && close=(-H "Connection: close")
  "$bin" serve --objects examples/quickstart/ --cert-dir "$work/certs" \
    --bind-address "127.0.0.1:$port" --metrics-addr "127.0.0.1:$metrics" --log-level warn &
  server_pid=$!
  for _ in $(seq 50); do curl -sf "http://127.0.0.1:$metrics/readyz" >/dev/null && break; sleep 0.1; done
  local threads=$(( connections < 2 ? 1 : 2 ))
  REVIEW="$work/review.json" wrk -t"$threads" -c"$connections" -d"${duration}s" --latency "${close[@]}" \
    -s benches/load/post.lua "https://localhost:$port/mutate-cluster-x-k8s-io-v1beta1-cluster" > "$work/wrk.txt"
  local rss_kib
  rss_kib=$(awk '/VmHWM/ {print $2}' "/proc/$server_pid/status")
  kill "$server_pid"; wait "$server_pid" 2>/dev/null || true; server_pid=""
  local p50 p99 rps errors
  p50=$(awk '$1 == "50%" {print $2}' "$work/wrk.txt")
  p99=$(awk '$1 == "99%" {print $2}' "$work/wrk.txt")
  rps=$(awk '/^Requests\/sec/ {print $2}' "$work/wrk.txt")
  errors=$(awk '/^non-200 answers/ {print $3}' "$work/wrk.txt")
  printf '| %-10s | %3d | %10s | %8s | %8s | %6.1f MiB | %s |\n' "$mode" "$connections" "$rps" "$p50" "$p99" \
    "$(echo "$rss_kib / 1024" | bc -l)" "$errors"
}

echo "| connections | count | requests/s | p50 | p99 | peak RSS | non-200 |"
echo "|---|---|---|---|---|---|---|"
for mode in keep-alive fresh; do
  for connections in 1 4 16 64; do run "$mode" "$connections"; done
done
