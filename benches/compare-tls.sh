#!/usr/bin/env bash
# capi-topology and Cluster API v1.14.0 side by side over TLS: `capi-topology serve --objects
# examples/quickstart/` (release build) and the reference's own Cluster and ClusterClass webhooks
# served by benches/reference/cmd/serve from the same manifests, each driven by wrk with the same
# review (benches/load/review.py of the quickstart's dev Cluster, a CREATE through the mutating
# Cluster webhook) at 1, 4 and 16 connections, over keep-alive connections and then with a fresh
# connection and TLS handshake per request (`Connection: close`). Each run starts its server
# afresh; the two servers alternate run by run so both see the same background load. Prints one
# table: requests/s, p50, p99, the server's peak RSS, non-200 answers / socket errors, and the
# ratio of requests/s. Then the TLS handshake alone (`openssl s_time -new`: connect, full TLS 1.3
# handshake, close, no request), which bounds what a fresh connection per request can reach.
# Run by hand (benches/compare.sh calls it), never by CI.
#   usage: bash benches/compare-tls.sh [seconds per run, default 5]
set -euo pipefail
cd "$(dirname "$0")/.."
duration="${1:-5}"
for tool in go curl python3 openssl; do
  command -v "$tool" >/dev/null || { echo "$tool is required" >&2; exit 1; }
done
source benches/load/servers.sh
load_setup ours reference

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
for name, path in zip(("capi-topology", "Cluster API v1.14.0"), sys.argv[1:]):
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

echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "| connections | count | capi-topology requests/s | p50 | p99 | peak RSS | non-200 / socket errors | Cluster API v1.14.0 requests/s | p50 | p99 | peak RSS | non-200 / socket errors | requests/s, ours / reference |"
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

# Handshakes per second without any request: each run starts its server afresh, alternating.
handshakes() {
  start "$1"
  local began ended count
  began=$(date +%s.%N)
  count=$(openssl s_time -connect "localhost:$port" -CAfile "$work/certs/ca.crt" -new -time "$duration" 2>/dev/null |
    awk '/real seconds/ { print $1 }')
  ended=$(date +%s.%N)
  stop
  awk -v n="${count:-0}" -v a="$began" -v b="$ended" 'BEGIN { printf "%.0f\n", n / (b - a) }' > "$work/handshakes-$1"
}
handshakes ours
handshakes reference
ours_hs=$(cat "$work/handshakes-ours")
reference_hs=$(cat "$work/handshakes-reference")
echo
echo "| TLS handshakes only (openssl s_time -new, 1 client) | capi-topology /s | Cluster API v1.14.0 /s | ours / reference |"
echo "| --- | --- | --- | --- |"
printf '| full handshake, no request | %s | %s | %sx |\n' "$ours_hs" "$reference_hs" \
  "$(awk -v a="$ours_hs" -v b="$reference_hs" 'BEGIN { printf "%.1f", (b > 0 ? a / b : 0) }')"

echo
echo "load after:  $(cut -d' ' -f1-3 /proc/loadavg)"
