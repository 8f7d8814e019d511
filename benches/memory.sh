#!/usr/bin/env bash
# Memory benchmark of the webhook server: its peak RSS (VmHWM) when 64 clients each send a body of
# the maximum size (7 MiB: a Cluster UPDATE whose object and oldObject are 3.5 MiB each) at once;
# at /convert, when 20 clients each send a list of 10,000 small Clusters (3.4 MB) and when 64 send
# 7 MiB of empty arrays (issue #36); and when 5,000 clients open TLS connections and leave them
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
size = len(json.dumps(entry(99999)))  # the longest entry: manager names grow with i
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

# /convert: the legitimate large list (a `kubectl get` of a fleet through v1beta1) from 20 clients
# at once, then the hostile one (hub Clusters of ~2.4 million empty arrays) from 64.
python3 - "$work" <<'PY'
import json, sys
work = sys.argv[1]
def review(uid, objects):
    return {"apiVersion": "apiextensions.k8s.io/v1", "kind": "ConversionReview",
            "request": {"uid": uid, "desiredAPIVersion": "cluster.x-k8s.io/v1beta1", "objects": objects}}
def small(i):
    return {"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "Cluster",
            "metadata": {"name": f"cluster-{i:05}", "namespace": "fleet", "uid": f"0b7e6a4c-1f7e-4a51-9d0e-{i:012}",
                         "resourceVersion": str(100000 + i), "labels": {"env": "dev"}},
            "spec": {"topology": {"classRef": {"name": "quick-start"}, "version": "v1.31.0",
                                  "controlPlane": {"replicas": 3},
                                  "workers": {"machineDeployments": [{"class": "default-worker", "name": "md-0", "replicas": 2}]}}}}
open(f"{work}/fleet.json", "w").write(json.dumps(review("fleet", [small(i) for i in range(10000)])))
head = json.dumps(review("arrays", [{"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "Cluster",
                                      "metadata": {"name": "c", "namespace": "default"}, "spec": {"x": "@"}}]))
before, after = head.split('"@"')
arrays = (7 * 1024 * 1024 - 4096 - len(head)) // 3
open(f"{work}/arrays.json", "w").write(before + "[" + ",".join(["[]"] * arrays) + "]" + after)
PY
convert_at_once() {
  local body=$1 clients=$2 codes="$work/codes-$(basename "$1")"
  for _ in $(seq "$clients"); do
    curl -s -o /dev/null -w '%{http_code}\n' --cacert "$work/certs/ca.crt" -H 'Content-Type: application/json' \
      --data-binary @"$body" "https://localhost:$port/convert" >> "$codes" &
  done
  wait $(jobs -p | grep -v "^$server_pid$") 2>/dev/null || true
  sort "$codes" | uniq -c | awk '{printf "%s x %s  ", $1, $2}'
}
start
answers=$(convert_at_once "$work/fleet.json" 20)
echo "| /convert: 20 concurrent lists of 10,000 Clusters (3.4 MB) | $(peak) | answers: $answers|"
stop
start
answers=$(convert_at_once "$work/arrays.json" 64)
echo "| /convert: 64 concurrent 7 MiB reviews of empty arrays | $(peak) | answers: $answers|"
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
