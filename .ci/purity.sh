#!/usr/bin/env bash
# Fails when an engine module reaches for I/O, the clock, the environment or async runtimes:
# the engine must stay pure so the server, the CLI and the controllers run the same decisions.
set -euo pipefail
cd "$(dirname "$0")/.."
engine=(src/api src/contract src/field.rs src/decode.rs src/go_format.rs src/managed_fields.rs src/variables src/patches src/topology src/addons src/rollout src/admission)
pattern='\b(tokio|axum|hyper|reqwest)::|kube::(Api|Client|runtime)\b|std::(fs|env|process)\b|std::net::(Tcp|Udp|ToSocketAddrs)|\b(SystemTime|Instant)::now|\brand::'
if hits=$(grep -rnE "$pattern" "${engine[@]}" 2>/dev/null); then
  echo "purity: engine modules must not do I/O or read the clock/environment:" >&2
  echo "$hits" >&2
  exit 1
fi
echo "purity: engine modules are pure"
