#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Charts for pvlock output (python3-matplotlib from Debian, Agg backend: no display needed).

  plot.py reproduce RESULT.json OUTDIR   one PNG per experiment: published vs simulated cells
                                         (log scale when values span decades) and effect
                                         ratios with their tolerance bands
  plot.py sweep RESULTS.jsonl KEY OUTDIR line chart of every VM score against sweep key KEY,
                                         one line per combination of the other keys
  plot.py series RUN.json OUTDIR         a `pvlock run --series MS --json` result over time:
                                         score per VM, and the event rates that explain it
                                         (PLE exits and yields, kicks, halts, wait-early,
                                         steal, kick-to-run latency), warm-up shaded
"""
import json
import math
import os
import sys
from collections import defaultdict

from pvlock_plotting import pyplot

plt = pyplot("plot.py")


def plot_reproduce(result_path, outdir):
    with open(result_path) as f:
        result = json.load(f)
    os.makedirs(outdir, exist_ok=True)
    written = []
    for ex in result["experiments"]:
        cells = ex["cells"]
        effects = ex["effects"]
        fig, axes = plt.subplots(1, 2, figsize=(13, 4.8), gridspec_kw={"width_ratios": [3, 2]})
        ax = axes[0]
        names = [c["name"] for c in cells]
        pub = [c["published"] if c["published"] is not None else float("nan") for c in cells]
        sim = [c["simulated"] for c in cells]
        x = range(len(cells))
        w = 0.38
        ax.bar([i - w / 2 for i in x], pub, w, label="published", color="#4c72b0")
        ax.bar([i + w / 2 for i in x], sim, w, label="simulated", color="#dd8452")
        finite = [v for v in pub + sim if v and not math.isnan(v) and v > 0]
        if finite and max(finite) / min(finite) > 30:
            ax.set_yscale("log")
        ax.set_xticks(list(x))
        ax.set_xticklabels(names, rotation=25, ha="right", fontsize=8)
        units = sorted({c["unit"] for c in cells})
        ax.set_ylabel(", ".join(units))
        ax.set_title(f'{ex["id"]}: cells')
        ax.legend(fontsize=8)
        ax = axes[1]
        if effects:
            y = range(len(effects))
            for i, e in enumerate(effects):
                hi = e["high"] if e["high"] is not None else max(e["low"] * 4, e["simulated"] * 1.5, 2)
                ax.plot([e["low"], hi], [i, i], color="#999999", linewidth=6, alpha=0.5,
                        solid_capstyle="butt")
                if e["published"] is not None:
                    ax.plot(e["published"], i, "o", color="#4c72b0")
                color = "#55a868" if e["agrees"] else "#c44e52"
                # Two standard errors over seeds (absent in older results).
                se = e.get("se")
                if se is not None and se > 0:
                    lo = max(e["simulated"] - 2 * se, e["simulated"] / 100)
                    ax.plot([lo, e["simulated"] + 2 * se], [i, i], color=color, linewidth=1.2)
                ax.plot(e["simulated"], i, "D", color=color)
            ax.set_yticks(list(y))
            ax.set_yticklabels([e["name"] for e in effects], fontsize=8)
            ax.set_xscale("log")
            ax.set_xlabel("ratio (band grey, published blue, simulated green/red +- 2 se)")
            ax.set_title("effects")
        else:
            ax.axis("off")
        fig.suptitle(ex["title"], fontsize=9)
        fig.tight_layout()
        path = os.path.join(outdir, f'{ex["id"]}.png')
        fig.savefig(path, dpi=110)
        plt.close(fig)
        written.append(path)
    return written


def plot_sweep(results_path, key, outdir):
    os.makedirs(outdir, exist_ok=True)
    series = defaultdict(lambda: defaultdict(list))
    with open(results_path) as f:
        for line in f:
            line = line.strip()
            if not line:
                continue
            rec = json.loads(line)
            point = rec["point"]
            if key not in point:
                raise SystemExit(f"plot.py: sweep key '{key}' not in point {point}")
            others = ", ".join(f"{k}={v}" for k, v in sorted(point.items()) if k != key)
            score = sum(vm["score"] for vm in rec["result"]["vms"]) / len(rec["result"]["vms"])
            series[others or "all"][point[key]].append(score)
    fig, ax = plt.subplots(figsize=(8, 5))
    for label, by_x in sorted(series.items()):
        xs = sorted(by_x)
        means = [sum(by_x[v]) / len(by_x[v]) for v in xs]
        ax.plot([str(v) for v in xs], means, marker="o", label=label)
    ax.set_xlabel(key)
    ax.set_ylabel("mean VM score")
    ax.legend(fontsize=8)
    fig.tight_layout()
    path = os.path.join(outdir, "sweep.png")
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return [path]


def plot_series(run_path, outdir):
    with open(run_path) as f:
        run = json.load(f)
    if "series" not in run:
        raise SystemExit(f"plot.py: {run_path} has no 'series' (run with --series MS --json)")
    series = run["series"]
    names = [c["name"] for c in series["columns"]]
    col = {n: i for i, n in enumerate(names)}
    warmup_ms = (run["simulated_ns"] - run["measured_ns"]) / 1e6
    panels = [
        ("score", ["score"], "score ({unit})"),
        ("vCPU time stolen", ["steal_pct"], "% runnable, not running"),
        ("host: pause-loop exits and directed yields",
         ["ple_exits", "ple_yields", "kick_yields"], "per second"),
        ("guest: halts and wait-early", ["kicks", "halt_blocks", "pv_wait_early"], "per second"),
        ("latency", ["kick_to_run_us", "queued_wake_wait_us"], "us (mean)"),
    ]
    os.makedirs(outdir, exist_ok=True)
    fig, axes = plt.subplots(len(panels), 1, figsize=(10, 2.3 * len(panels)), sharex=True)
    for ax, (title, cols, ylabel) in zip(axes, panels):
        for vm, s in series["vms"].items():
            t = [r[0] for r in s["rows"]]
            for c in cols:
                label = vm if len(cols) == 1 else f"{vm} {c}"
                ax.plot(t, [r[col[c]] for r in s["rows"]], label=label, linewidth=1)
        unit = next(iter(series["vms"].values()))["score_unit"] or "n/a"
        ax.set_title(title, fontsize=9)
        ax.set_ylabel(ylabel.format(unit=unit), fontsize=8)
        if warmup_ms > 0:
            ax.axvspan(0, warmup_ms, color="0.9", zorder=0)
        ax.legend(fontsize=6, ncol=3)
    axes[-1].set_xlabel("simulated time (ms); warm-up shaded")
    fig.suptitle(f"{run['scenario']} seed {run['seed']}", fontsize=10)
    fig.tight_layout()
    path = os.path.join(outdir, "series.png")
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return [path]


def main(argv):
    if len(argv) >= 4 and argv[1] == "reproduce":
        paths = plot_reproduce(argv[2], argv[3])
    elif len(argv) >= 5 and argv[1] == "sweep":
        paths = plot_sweep(argv[2], argv[3], argv[4])
    elif len(argv) >= 4 and argv[1] == "series":
        paths = plot_series(argv[2], argv[3])
    else:
        print(__doc__, file=sys.stderr)
        return 2
    for p in paths:
        print(p)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
