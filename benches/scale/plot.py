#!/usr/bin/env python3
"""Draws benches/scale/results.csv (written by the scale benchmark, tests/e2e/scale.rs) as SVG:

- converge.svg: time until every Cluster is reconciled, a full resync and a ClusterClass change,
  against the Cluster count, with the 2-minute goal;
- rss.svg: peak RSS of capi-topology, kube-apiserver and etcd against the Cluster count, with
  the 256 MiB goal for capi-topology;

and prints the CSV as the Markdown table of BENCHMARKS.md.

Standard library only; the SVG is written by hand. Usage:

    python3 benches/scale/plot.py [results.csv] [output dir]
"""

import csv
import os
import sys

WIDTH, HEIGHT = 640, 400
LEFT, RIGHT, TOP, BOTTOM = 70, 170, 40, 60
COLOURS = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd"]


def number(text):
    """A CSV cell as a float, None when empty."""
    text = (text or "").strip()
    return float(text) if text else None


def nice_max(value):
    """A round axis maximum at or above value."""
    if value <= 0:
        return 1.0
    step = 10 ** (len(str(int(value))) - 1)
    for factor in (1, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10):
        if value <= factor * step:
            return factor * step
    return 10 * step


def escape(text):
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def chart(title, x_label, y_label, xs, series, goal=None):
    """An SVG line chart: series is [(name, [y or None per x])]; goal is (label, y) or None."""
    x_max = nice_max(max(xs))
    ys = [y for _, values in series for y in values if y is not None]
    if goal:
        ys.append(goal[1])
    y_max = nice_max(max(ys) * 1.05 if ys else 1)
    plot_w, plot_h = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM

    def px(x):
        return LEFT + plot_w * x / x_max

    def py(y):
        return TOP + plot_h * (1 - y / y_max)

    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" '
        f'viewBox="0 0 {WIDTH} {HEIGHT}" font-family="sans-serif" font-size="12">',
        f'<rect width="{WIDTH}" height="{HEIGHT}" fill="white"/>',
        f'<text x="{WIDTH / 2}" y="22" text-anchor="middle" font-size="15">{escape(title)}</text>',
    ]
    for i in range(6):
        y = y_max * i / 5
        out.append(f'<line x1="{LEFT}" y1="{py(y):.1f}" x2="{LEFT + plot_w}" y2="{py(y):.1f}" stroke="#ddd"/>')
        out.append(f'<text x="{LEFT - 6}" y="{py(y) + 4:.1f}" text-anchor="end">{y:g}</text>')
    for x in xs:
        out.append(f'<line x1="{px(x):.1f}" y1="{TOP + plot_h}" x2="{px(x):.1f}" y2="{TOP + plot_h + 5}" stroke="black"/>')
        out.append(f'<text x="{px(x):.1f}" y="{TOP + plot_h + 18}" text-anchor="middle">{x:g}</text>')
    out.append(f'<rect x="{LEFT}" y="{TOP}" width="{plot_w}" height="{plot_h}" fill="none" stroke="black"/>')
    out.append(f'<text x="{LEFT + plot_w / 2}" y="{HEIGHT - 15}" text-anchor="middle">{escape(x_label)}</text>')
    out.append(
        f'<text x="18" y="{TOP + plot_h / 2}" text-anchor="middle" '
        f'transform="rotate(-90 18 {TOP + plot_h / 2})">{escape(y_label)}</text>'
    )
    if goal:
        label, y = goal
        out.append(
            f'<line x1="{LEFT}" y1="{py(y):.1f}" x2="{LEFT + plot_w}" y2="{py(y):.1f}" '
            'stroke="#ff7f0e" stroke-dasharray="6 4"/>'
        )
        out.append(f'<text x="{LEFT + plot_w + 8}" y="{py(y) + 4:.1f}" fill="#ff7f0e">{escape(label)}</text>')
    for index, (name, values) in enumerate(series):
        colour = COLOURS[index % len(COLOURS)]
        points = [(px(x), py(y)) for x, y in zip(xs, values) if y is not None]
        if len(points) > 1:
            path = " ".join(f"{x:.1f},{y:.1f}" for x, y in points)
            out.append(f'<polyline points="{path}" fill="none" stroke="{colour}" stroke-width="2"/>')
        for x, y in points:
            out.append(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="3.5" fill="{colour}"/>')
        legend_y = TOP + 16 + 18 * index
        out.append(f'<rect x="{LEFT + plot_w + 8}" y="{legend_y - 9}" width="12" height="12" fill="{colour}"/>')
        out.append(f'<text x="{LEFT + plot_w + 25}" y="{legend_y + 1}">{escape(name)}</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


def table(rows):
    """The rows as a Markdown table (empty cells: not reached)."""
    def cell(row, name):
        return row[name] or "-"

    out = [
        "| Clusters | created (s) | all reconciled (s) | writes / Cluster | CPU s: capi-topology / API server / etcd "
        "| peak RSS MiB: capi-topology / API server / etcd | resync (s) | resync writes | class change (s) "
        "| class change writes / Cluster | load avg |",
        "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for r in rows:
        converge = cell(r, "converge_s")
        if converge == "-":
            converge = f"not reached ({r['reconciled']} of {r['clusters']})"
        out.append(
            f"| {r['clusters']} | {cell(r, 'create_s')} | {converge} | {cell(r, 'writes_per_cluster')} "
            f"| {r['controller_cpu_s']} / {r['apiserver_cpu_s']} / {r['etcd_cpu_s']} "
            f"| {r['controller_rss_mib']} / {r['apiserver_rss_mib']} / {r['etcd_rss_mib']} "
            f"| {cell(r, 'resync_s')} | {cell(r, 'resync_writes')} | {cell(r, 'class_change_s')} "
            f"| {cell(r, 'class_change_writes_per_cluster')} | {r['load_before']} |"
        )
    return "\n".join(out)


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    source = sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "results.csv")
    target = sys.argv[2] if len(sys.argv) > 2 else here
    with open(source, newline="") as f:
        rows = sorted(csv.DictReader(f), key=lambda r: int(r["clusters"]))
    if not rows:
        sys.exit(f"{source}: no rows")
    xs = [int(r["clusters"]) for r in rows]
    column = lambda name: [number(r[name]) for r in rows]  # noqa: E731
    converge = chart(
        "Time to converge vs Clusters (3 worker pools each)",
        "Clusters",
        "seconds",
        xs,
        [
            ("converge", column("converge_s")),
            ("full resync", column("resync_s")),
            ("class change", column("class_change_s")),
        ],
        goal=("goal 120 s", 120.0),
    )
    rss = chart(
        "Peak RSS vs Clusters",
        "Clusters",
        "MiB (VmHWM)",
        xs,
        [
            ("capi-topology", column("controller_rss_mib")),
            ("kube-apiserver", column("apiserver_rss_mib")),
            ("etcd", column("etcd_rss_mib")),
        ],
        goal=("goal 256 MiB", 256.0),
    )
    for name, svg in (("converge.svg", converge), ("rss.svg", rss)):
        path = os.path.join(target, name)
        with open(path, "w") as f:
            f.write(svg)
        print(f"wrote {path}", file=sys.stderr)
    print(table(rows))


if __name__ == "__main__":
    main()
