#!/usr/bin/env bash
# Memory benchmark of the webhook server: its peak RSS (VmHWM) when 64 clients each send a body of
# the maximum size (7 MiB: a Cluster UPDATE whose object and oldObject are 3.5 MiB each) at once, and when 5,000 clients open TLS connections and leave them
# idle. `serve --objects examples/quickstart/`, release build, default limits.
#   usage: bash benches/memory.sh
set -euo pipefail
cd "$(dirname "$0")/.."
command -v curl >/dev/null || { echo "curl is required" >&2; exit 1; }

cargo build --release --quiet
work=$(mktemp -d)
server_pid=""
cleanup() { [[ -n "$server_pid" ]] && kill "$server_pid" 2>/dev/null; wait 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT
ulimit -n 16384 2>/dev/null || true

target/release/capi-topology certs --out "$work/certs" --dns localhost --ip 127.0.0.1 >/dev/null
port=$((20000 + RANDOM % 20000)); metrics=$((port + 1))

start() {
  target/release/capi-topology serve --objects examples/quickstart/ --cert-dir "$work/certs" \
    --bind-address "127.0.0.1:$port" --metrics-addr "127.0.0.1:$metrics" --log-level error &
  server_pid=$!
  for _ in $(seq 50); do curl -sf "http://127.0.0.1:$metrics/readyz" >/dev/null && break; sleep 0.1; done
}
stop() { kill "$server_pid"; wait "$server_pid" 2>/dev/null || true; server_pid=""; }
peak() { awk '/VmHWM/ {printf "%.1f MiB", $2 / 1024}' "/proc/$server_pid/status"; }
rejected() { curl -s "http://127.0.0.1:$metrics/metrics" | awk -v r="$1" '$0 ~ "rejections_total\\{reason=\""r"\"\\}" {print $2}'; }

# A review just under 7 MiB: a Cluster UPDATE whose object and oldObject carry 3.5 MiB of
# managedFields each (what grows a real object; no webhook rule reads it).
python3 - "$work/big.json" <<'PY'
import json, sys
def entry(i):
    return {"manager": f"manager-{i}", "operation": "Update", "apiVersion": "cluster.x-k8s.io/v1beta1",
            "fieldsType": "FieldsV1", "fieldsV1": {"f:metadata": {"f:annotations": {"f:example.com/" + "k" * 1000: {}}}}}
size = len(json.dumps(entry(0)))
cluster = {"apiVersion": "cluster.x-k8s.io/v1beta1", "kind": "Cluster",
           "metadata": {"name": "big", "namespace": "default",
                        "managedFields": [entry(i) for i in range((7 * 1024 * 1024 - 8192) // 2 // (size + 2))]},
           "spec": {"topology": {"class": "quick-start", "version": "v1.31.2"}}}
review = {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": {
    "uid": "big", "operation": "UPDATE", "namespace": "default", "name": "big",
    "kind": {"group": "cluster.x-k8s.io", "version": "v1beta1", "kind": "Cluster"},
    "resource": {"group": "cluster.x-k8s.io", "version": "v1beta1", "resource": "clusters"},
    "object": cluster, "oldObject": cluster}}
open(sys.argv[1], "w").write(json.dumps(review))
PY

start
idle=$(peak)
for _ in $(seq 64); do
  curl -s -o /dev/null -w '%{http_code}\n' --cacert "$work/certs/ca.crt" -H 'Content-Type: application/json' \
    --data-binary @"$work/big.json" "https://localhost:$port/validate-cluster-x-k8s-io-v1beta1-cluster" >> "$work/codes" &
done
wait $(jobs -p | grep -v "^$server_pid$") 2>/dev/null || true
echo "| at rest | $idle |"
echo "| 64 concurrent 7 MiB reviews | $(peak) | answers: $(sort "$work/codes" | uniq -c | awk '{printf "%s x %s  ", $1, $2}')|"
stop

start
python3 - "$port" 5000 <<'PY'
import asyncio, ssl, sys
port, count = int(sys.argv[1]), int(sys.argv[2])
async def main():
    context = ssl.create_default_context(); context.check_hostname = False; context.verify_mode = ssl.CERT_NONE
    async def one():
        try:
            return await asyncio.wait_for(asyncio.open_connection("127.0.0.1", port, ssl=context), 10)
        except Exception:
            return None
    opened = [c for c in await asyncio.gather(*(one() for _ in range(count))) if c]
    await asyncio.sleep(3)
    print(f"opened {len(opened)} of {count}", file=sys.stderr)
asyncio.run(main())
PY
echo "| 5,000 idle TLS connections (cap 512) | $(peak) | refused at the cap: $(rejected connection_limit) |"
stop
