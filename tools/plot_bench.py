#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Plot `pvlock bench --json` output: throughput and fairness against thread count.

    build/pvlock bench --json > bench.json
    tools/plot_bench.py bench.json -o docs/img/bench.png [--title "..."] [--markdown]

--markdown also prints a Markdown table (one line per lock: ops/s and fairness per thread
count) for docs/benchmarks.md.

Left: ops/s (log scale) per lock; middle: ops per CPU-second the workers used (spinning
included); right: fairness (min/max per-thread ops). pvlock's locks
are solid lines, peer locks dashed; the dotted vertical line marks the hardware threads, so
everything to its right is over-subscribed.
"""
import argparse
import json
import sys

from pvlock_plotting import pyplot

plt = pyplot("plot_bench.py")


def load(path):
    with (sys.stdin if path == "-" else open(path)) as f:
        doc = json.load(f)
    if not isinstance(doc, dict) or not isinstance(doc.get("rows"), list):
        sys.exit(f"plot_bench: {path}: not `pvlock bench --json` output (no 'rows' list)")
    return doc


def series(rows):
    """{lock: (origin, [(threads, ops_per_s, fairness, ops_per_cpu_s)])}, first-seen order."""
    out = {}
    for r in rows:
        if r.get("stuck"):
            continue
        origin, points = out.setdefault(r["lock"], (r.get("origin", "pvlock"), []))
        points.append((r["threads"], r["ops_per_s"], r["fairness"], r.get("ops_per_cpu_s", 0.0)))
    for _, points in out.values():
        points.sort()
    return out


def human(x):
    for unit, scale in (("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if x >= scale:
            return f"{x / scale:.3g}{unit}"
    return f"{x:.3g}"


def markdown(data):
    threads = sorted({p[0] for _, pts in data.values() for p in pts})
    head = "| lock | " + " | ".join(f"{t} thr ops/s (fair)" for t in threads) + " |"
    lines = [head, "|" + "---|" * (len(threads) + 1)]
    for lock, (origin, points) in data.items():
        by_t = {p[0]: p for p in points}
        cells = []
        for t in threads:
            p = by_t.get(t)
            cells.append(f"{human(p[1])} ({p[2]:.2f})" if p else "-")
        name = f"`{lock}`" + ("" if origin == "pvlock" else " (peer)")
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("json", help="pvlock bench --json output ('-' for stdin)")
    ap.add_argument("-o", "--output", required=True, help="PNG file to write")
    ap.add_argument("--title", default=None)
    ap.add_argument("--markdown", action="store_true", help="also print a Markdown table")
    args = ap.parse_args()

    doc = load(args.json)
    data = series(doc["rows"])
    if not data:
        sys.exit("plot_bench: no rows to plot")
    hw = doc.get("hardware_threads")
    cfg = doc.get("config", {})

    fig, (ax_ops, ax_cpu, ax_fair) = plt.subplots(1, 3, figsize=(18, 5.4))
    colors = list(plt.get_cmap("tab10").colors) + list(plt.get_cmap("Dark2").colors)
    for i, (lock, (origin, points)) in enumerate(data.items()):
        threads = [p[0] for p in points]
        style = dict(
            color=colors[i % len(colors)],
            linestyle="-" if origin == "pvlock" else "--",
            marker="o" if origin == "pvlock" else "s",
            linewidth=2.2 if origin == "pvlock" else 1.4,
            markersize=5,
            label=f"{lock}" + ("" if origin == "pvlock" else " (peer)"),
        )
        ax_ops.plot(threads, [max(p[1], 1.0) for p in points], **style)
        ax_cpu.plot(threads, [max(p[3], 1.0) for p in points], **style)
        ax_fair.plot(threads, [p[2] for p in points], **style)

    all_threads = sorted({p[0] for _, pts in data.values() for p in pts})
    for ax in (ax_ops, ax_cpu, ax_fair):
        ax.set_xlabel("threads")
        ax.set_xticks(all_threads)
        ax.grid(True, which="both", alpha=0.3)
        if hw:
            ax.axvline(hw, color="grey", linestyle=":", linewidth=1)
    ax_ops.set_yscale("log")
    ax_ops.set_ylabel("lock/unlock operations per second (log)")
    ax_ops.set_title("throughput")
    ax_cpu.set_yscale("log")
    ax_cpu.set_ylabel("operations per CPU-second of the workers (log)")
    ax_cpu.set_title("CPU efficiency (spinning included)")
    ax_fair.set_ylim(-0.02, 1.02)
    ax_fair.set_ylabel("fairness = min / max ops per thread")
    ax_fair.set_title("fairness")
    ax_fair.legend(fontsize=8, loc="center left", bbox_to_anchor=(1.01, 0.5))

    title = args.title or (
        f"pvlock bench: {hw} hardware threads, {cfg.get('duration_s', '?')} s/point, "
        f"cs {cfg.get('cs_lines', '?')} lines + {cfg.get('cs_ns', '?')} ns, "
        f"outside {cfg.get('outside_ns', '?')} ns"
    )
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(args.output, dpi=110)
    print(f"plot_bench: wrote {args.output}", file=sys.stderr)
    if args.markdown:
        print(markdown(data))


if __name__ == "__main__":
    main()
