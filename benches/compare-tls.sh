#!/usr/bin/env bash
# capi-topology and Cluster API v1.10.10 side by side over TLS: `capi-topology serve --objects
# examples/quickstart/` (release build) and the reference's own Cluster and ClusterClass webhooks
# served by benches/reference/cmd/serve from the same manifests, each driven by wrk with the same
# review (benches/load/review.py of the quickstart's dev Cluster, a CREATE through the mutating
# Cluster webhook) at 1, 4 and 16 connections, over keep-alive connections and then with a fresh
# connection and TLS handshake per request (`Connection: close`). Each run starts its server
# afresh; the two servers alternate run by run so both see the same background load. Prints one
# table: requests/s, p50, p99, the server's peak RSS, non-200 answers / socket errors, and the
# ratio of requests/s. Run by hand (benches/compare.sh calls it), never by CI.
#   usage: bash benches/compare-tls.sh [seconds per run, default 5]
set -euo pipefail
cd "$(dirname "$0")/.."
duration="${1:-5}"
for tool in wrk go curl python3; do
  command -v "$tool" >/dev/null || { echo "$tool is required (wrk: apt-get install wrk)" >&2; exit 1; }
done
cache="${CAPI_TOPOLOGY_E2E_CACHE:-$HOME/.cache/capi-topology-e2e}"
export GOFLAGS=-trimpath GOCACHE="$cache/gocache" GOMODCACHE="$cache/gomodcache" GOTOOLCHAIN=local

work=$(mktemp -d)
server_pid=""
cleanup() {
  if [[ -n "$server_pid" ]]; then kill "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

cargo build --release --quiet
ours_bin="${CARGO_TARGET_DIR:-target}/release/capi-topology"
(cd benches/reference && go build -o "$work/reference-serve" ./cmd/serve)
"$ours_bin" certs --out "$work/certs" --dns localhost --ip 127.0.0.1 >/dev/null 2>&1
python3 benches/load/review.py examples/quickstart/10-cluster-dev.yaml > "$work/review.json"
webhook=/mutate-cluster-x-k8s-io-v1beta1-cluster
port=$((20000 + RANDOM % 20000)); metrics=$((port + 1))

# Starts one implementation's server in the background and waits until it answers over TLS.
start() {
  case "$1" in
    ours) "$ours_bin" serve --objects examples/quickstart/ --cert-dir "$work/certs" \
            --bind-address "127.0.0.1:$port" --metrics-addr "127.0.0.1:$metrics" --log-level warn & ;;
    reference) "$work/reference-serve" --objects examples/quickstart/ --cert-dir "$work/certs" \
                 --host 127.0.0.1 --port "$port" 2>"$work/reference.log" & ;;
  esac
  server_pid=$!
  for _ in $(seq 100); do
    kill -0 "$server_pid" 2>/dev/null ||
      { echo "the $1 server exited at start-up" >&2; [[ $1 == reference ]] && cat "$work/reference.log" >&2; exit 1; }
    [[ $(curl -s --max-time 2 -o /dev/null -w '%{http_code}' --cacert "$work/certs/ca.crt" "https://localhost:$port/") != 000 ]] && return
    sleep 0.1
  done
  echo "the $1 server did not come up on 127.0.0.1:$port" >&2; exit 1
}

stop() { kill "$server_pid"; wait "$server_pid" 2>/dev/null || true; server_pid=""; }

# Posts the review once (certificate verified) and saves the answer as $work/answer-<name>.json.
answer() {
  start "$1"
  curl -s --fail-with-body --cacert "$work/certs/ca.crt" -H "Content-Type: application/json" \
    --data-binary "@$work/review.json" "https://localhost:$port$webhook" > "$work/answer-$1.json" ||
    { echo "the $1 server did not answer 200: $(cat "$work/answer-$1.json")" >&2; exit 1; }
  stop
}

answer ours
answer reference
# Both must admit the Cluster with a JSONPatch; the patches' lengths and paths are compared.
python3 - "$work/answer-ours.json" "$work/answer-reference.json" <<'PY'
import base64, json, sys

patches = {}
for name, path in zip(("capi-topology", "Cluster API v1.10.10"), sys.argv[1:]):
    response = json.load(open(path)).get("response") or {}
    if response.get("allowed") is not True or not response.get("patch"):
        sys.exit(f"{name} did not admit the review with a patch: {json.dumps(response)[:500]}")
    raw = base64.b64decode(response["patch"])
    patches[name] = (len(raw), {op["path"] for op in json.loads(raw)})
    print(f"{name}: 200, allowed, JSONPatch of {len(raw)} bytes, {len(patches[name][1])} operations")
(ours, our_paths), (theirs, their_paths) = patches.values()
if ours != theirs:
    print(f"the reference's patch differs in length from ours ({theirs} bytes against {ours})")
    for who, paths in (("only the reference", their_paths - our_paths), ("only ours", our_paths - their_paths)):
        if paths:
            print(f"  paths {who} writes: {', '.join(sorted(paths))}")
PY

# One wrk run against one freshly started server: writes `requests/s p50 p99 RSS errors` to
# $work/result.
measure() {
  local impl=$1 mode=$2 connections=$3
  local close=()
  [[ "$mode" == fresh ]] && close=(-H "Connection: close")
  start "$impl"
  REVIEW="$work/review.json" wrk -t"$(( connections < 2 ? 1 : 2 ))" -c"$connections" -d"${duration}s" \
    --latency "${close[@]}" -s benches/load/post.lua "https://localhost:$port$webhook" > "$work/wrk.txt"
  local rss_kib
  rss_kib=$(awk '/VmHWM/ { print $2 }' "/proc/$server_pid/status")
  stop
  awk -v rss="$rss_kib" '
    $1 == "50%" { p50 = $2 } $1 == "99%" { p99 = $2 } /^Requests\/sec/ { rps = $2 }
    /^non-200 answers/ { status = $3 }
    /Socket errors/ { gsub(/,/, ""); socket = $4 + $6 + $8 + $10 }
    END { if (rps == "") { print "wrk printed no figures" > "/dev/stderr"; exit 1 }
          printf "%.0f %s %s %.1f %d/%d\n", rps, p50, p99, rss / 1024, status, socket }' "$work/wrk.txt" > "$work/result"
}

echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "| connections | count | capi-topology requests/s | p50 | p99 | peak RSS | non-200 / socket errors | Cluster API v1.10.10 requests/s | p50 | p99 | peak RSS | non-200 / socket errors | requests/s, ours / reference |"
echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"
for mode in keep-alive fresh; do
  for connections in 1 4 16; do
    measure ours "$mode" "$connections"
    read -r a_rps a_p50 a_p99 a_rss a_err < "$work/result"
    measure reference "$mode" "$connections"
    read -r b_rps b_p50 b_p99 b_rss b_err < "$work/result"
    printf '| %s | %d | %s | %s | %s | %s MiB | %s | %s | %s | %s | %s MiB | %s | %sx |\n' \
      "$mode" "$connections" "$a_rps" "$a_p50" "$a_p99" "$a_rss" "$a_err" \
      "$b_rps" "$b_p50" "$b_p99" "$b_rss" "$b_err" \
      "$(awk -v a="$a_rps" -v b="$b_rps" 'BEGIN { printf "%.1f", (b > 0 ? a / b : 0) }')"
  done
done
echo
echo "load after:  $(cut -d' ' -f1-3 /proc/loadavg)"
