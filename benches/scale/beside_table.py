#!/usr/bin/env python3
"""Prints benches/scale/beside-cluster-api.csv (written by tests/e2e/scale_beside_cluster_api.rs)
as the Markdown tables of BENCHMARKS.md, "Scale beside Cluster API": times and writes, then
each process's CPU while provisioning, its CPU share once provisioned, and its peak RSS, with
capi-topology's share of the managers' and of everything's CPU.

Standard library only. Usage:

    python3 benches/scale/beside_table.py [beside-cluster-api.csv]
"""

import csv
import os
import sys

PROCESSES = ["ours", "core", "kcp", "cabpk", "capd", "apiserver", "etcd"]
NAMES = ["capi-topology", "core", "KCP", "CABPK", "CAPD", "kube-apiserver", "etcd"]


def number(text):
    """A CSV cell as a float, None when empty."""
    text = (text or "").strip()
    return float(text) if text else None


def share(part, whole):
    """part / whole as a percentage, '' without a whole."""
    return f"{100 * part / whole:.0f} %" if whole else ""


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    path = sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "beside-cluster-api.csv")
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))

    print("| Clusters (Machines) | created (s) | all TopologyReconciled (s) | all Available (s) "
          "| writes / Cluster: capi-topology / Cluster API | resync (s) | resync writes: capi-topology / Cluster API | load avg |")
    print("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for r in rows:
        available = r["available_s"] or f"{r['available']} of {r['clusters']} in time"
        print(f"| {r['clusters']} ({r['machines']}) | {r['create_s']} | {r['reconciled_s']} | {available} "
              f"| {r['writes_per_cluster_ours']} / {r['writes_per_cluster_capi']} | {r['resync_s']} "
              f"| {r['resync_writes_ours']} / {r['resync_writes_capi']} | {r['load_before']} |")
    print()
    header = " / ".join(NAMES)
    print(f"| Clusters | CPU s while provisioning: {header} | capi-topology's share: of the managers / of all "
          f"| CPU % once provisioned: {header} | peak RSS MiB: {header} |")
    print("| ---: | ---: | ---: | ---: | ---: |")
    for r in rows:
        cpu = [number(r[f"cpu_s_{p}"]) or 0.0 for p in PROCESSES]
        managers = sum(cpu[:5])
        print(f"| {r['clusters']} | {' / '.join(r[f'cpu_s_{p}'] for p in PROCESSES)} "
              f"| {share(cpu[0], managers)} / {share(cpu[0], sum(cpu))} "
              f"| {' / '.join(r[f'steady_cpu_pct_{p}'] for p in PROCESSES)} "
              f"| {' / '.join(r[f'rss_mib_{p}'] for p in PROCESSES)} |")


if __name__ == "__main__":
    main()
