#!/usr/bin/env bash
# Load benchmark of the webhook server: `serve --objects examples/quickstart/` over TLS, driven by
# wrk (Debian package `wrk`) at concurrency 1, 4, 16 and 64 with the mutating Cluster webhook
# (CREATE of a Cluster with 7 variables, defaulted), first over keep-alive connections, then with a
# fresh connection (and TLS handshake) per request (`Connection: close`), as an API server that does
# not reuse its connections sends them. Prints p50/p99 latency, requests/s and the server's peak RSS
# per run. The runs are benches/load/servers.sh's, shared with benches/compare-tls.sh.
#   usage: bash benches/load.sh [seconds per run, default 15]
set -euo pipefail
cd "$(dirname "$0")/.."
duration="${1:-15}"
source benches/load/servers.sh
load_setup ours

echo "| connections | count | requests/s | p50 | p99 | peak RSS | non-200 / socket errors |"
echo "|---|---|---|---|---|---|---|"
for mode in keep-alive fresh; do
  for connections in 1 4 16 64; do
    measure ours "$mode" "$connections"
    read -r rps p50 p99 rss errors < "$work/result"
    printf '| %-10s | %3d | %6s | %8s | %8s | %6s MiB | %s |\n' "$mode" "$connections" "$rps" "$p50" "$p99" "$rss" "$errors"
  done
done
