# Sourced by benches/load.sh and benches/compare-tls.sh (from the repository's root): one wrk run
# against a freshly started webhook server over TLS, ours (`capi-topology serve --objects
# examples/quickstart/`, release build of CARGO_TARGET_DIR or target/) or Cluster API v1.14.0's
# (benches/reference/cmd/serve, same manifests). Both get the same certificates, webhook path and
# review (benches/load/review.py of the quickstart's dev Cluster, a CREATE through the mutating
# Cluster webhook). Servers bind 127.0.0.1 and are killed on exit.

# Builds what `load_setup ours [reference]` names, writes the certificates and the review into a
# temporary directory removed on exit, and picks the ports.
load_setup() {
  command -v wrk >/dev/null || { echo "wrk is required (apt-get install wrk)" >&2; exit 1; }
  work=$(mktemp -d)
  server_pid=""
  trap load_cleanup EXIT
  trap 'exit 130' INT TERM
  # CAPI_TOPOLOGY_BIN: a release binary already built (no cargo build).
  if [[ -n "${CAPI_TOPOLOGY_BIN:-}" ]]; then
    ours_bin=$CAPI_TOPOLOGY_BIN
  else
    cargo build --release --quiet
    ours_bin="${CARGO_TARGET_DIR:-target}/release/capi-topology"
  fi
  if [[ " $* " == *" reference "* ]]; then
    local cache="${CAPI_TOPOLOGY_E2E_CACHE:-$HOME/.cache/capi-topology-e2e}"
    (cd benches/reference && GOFLAGS=-trimpath GOCACHE="$cache/gocache" GOMODCACHE="$cache/gomodcache" \
      GOTOOLCHAIN=local go build -o "$work/reference-serve" ./cmd/serve)
  fi
  "$ours_bin" certs --out "$work/certs" --dns localhost --ip 127.0.0.1 >/dev/null 2>&1
  python3 benches/load/review.py examples/quickstart/10-cluster-dev.yaml > "$work/review.json"
  # The path of the review's version: Cluster API v1.14.0 registers its webhooks at v1beta2 only
  # (the API server converts a v1beta1 write before calling them).
  webhook=/mutate-cluster-x-k8s-io-$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["request"]["kind"]["version"])' "$work/review.json")-cluster
  port=$((20000 + RANDOM % 20000)); metrics=$((port + 1))
}

load_cleanup() {
  if [[ -n "$server_pid" ]]; then kill "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true; fi
  rm -rf "$work"
}

# Starts one implementation's server (`ours` or `reference`) in the background and waits until
# it answers over TLS.
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

# One wrk run of `duration` seconds against one freshly started server:
#   measure <ours|reference> <keep-alive|fresh> <connections>
# writes `requests/s p50 p99 peak-RSS-MiB non-200/socket-errors` to $work/result.
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
