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
import textwrap
from collections import defaultdict

from pvlock_plotting import pyplot

plt = pyplot("plot.py")
from matplotlib.ticker import (  # noqa: E402
    Formatter, FuncFormatter, LogLocator, MaxNLocator, NullFormatter)


def tick(v, _=None):
    """Tick labels people read on a log axis: 12,000 rather than 1.2e+04, 0.05 rather than
    5e-02 (its 1-2-5 ticks never need more than 3 significant digits)."""
    if v == 0:
        return "0"
    if abs(v) >= 100:
        return f"{v:,.0f}"
    return f"{v:.3g}"


class StepFormatter(Formatter):
    """Tick labels on a linear axis with as many decimals as the tick step needs, so that
    1.000, 1.005, 1.010 never print as 1, 1, 1.01; thousands separated."""

    def __call__(self, v, pos=None):
        locs = sorted(self.locs)
        steps = [b - a for a, b in zip(locs, locs[1:]) if b > a]
        step = min(steps) if steps else abs(v) or 1
        decimals = max(0, math.ceil(-math.log10(step) - 1e-9))
        if abs(v) < step / 2:
            return "0"
        return f"{v:,.{decimals}f}"


# A band bound at or beyond this is open (older results wrote 1e9 for "no upper bound").
OPEN_HIGH = 1e8


def unit_panel(ax, cells, unit):
    """Published and simulated values of the cells measured in one unit, side by side."""
    names = [c["name"] for c in cells]
    pub = [c["published"] if c["published"] is not None else float("nan") for c in cells]
    sim = [c["simulated"] for c in cells]
    x = range(len(cells))
    w = 0.38
    ax.bar([i - w / 2 for i in x], pub, w, label="published", color="#4c72b0")
    ax.bar([i + w / 2 for i in x], sim, w, label="simulated", color="#dd8452")
    # Published value missing: say so where its bar would be.
    for i, v in enumerate(pub):
        if math.isnan(v):
            ax.annotate("not\npublished", (i - w / 2, 0), xytext=(0, 3), textcoords="offset points",
                        ha="center", va="bottom", fontsize=6, color="#4c72b0")
    finite = [v for v in pub + sim if v and not math.isnan(v) and v > 0]
    if finite and max(finite) / min(finite) > 30:
        ax.set_yscale("log")
        ax.yaxis.set_major_formatter(FuncFormatter(tick))
        ax.yaxis.set_minor_formatter(NullFormatter())
    else:
        ax.yaxis.set_major_locator(MaxNLocator(6))
        ax.yaxis.set_major_formatter(StepFormatter())
    ax.set_xticks(list(x))
    ax.set_xticklabels([textwrap.fill(n, 16, break_long_words=False) for n in names], fontsize=7)
    ax.set_ylabel(unit, fontsize=8)
    ax.set_title(unit, fontsize=9)
    ax.tick_params(axis="y", labelsize=7)
    ax.legend(fontsize=7)


def effects_panel(ax, effects):
    """Each effect's band (grey), published ratio (blue circle) and simulated ratio (diamond:
    green when it agrees, red when not, with +- 2 standard errors), the verdict at the right.
    An open band runs to the axis edge with an arrow instead of stretching the axis."""
    def finite(v):
        return v is not None and math.isfinite(v) and 0 < v < OPEN_HIGH
    vals = []
    for e in effects:
        vals += [v for v in (e["low"], e["high"], e["published"], e["simulated"]) if finite(v)]
        se = e.get("se")
        if se:
            vals += [v for v in (e["simulated"] - 2 * se, e["simulated"] + 2 * se) if finite(v)]
    lo, hi = min(vals), max(vals)
    log = hi / lo > 10
    if log:
        lo, hi = lo / 1.5, hi * 1.5
    else:
        pad = (hi - lo) * 0.1 or abs(hi) * 0.05 or 0.1
        lo, hi = lo - pad, hi + pad
    n = len(effects)
    for i, e in enumerate(effects):
        y = n - 1 - i
        left = e["low"] if finite(e["low"]) else lo
        right = e["high"] if finite(e["high"]) else hi
        ax.plot([left, right], [y, y], color="#999999", linewidth=7, alpha=0.45,
                solid_capstyle="butt")
        if not finite(e["high"]):
            ax.annotate("", xy=(hi, y), xytext=(max(left, lo), y),
                        arrowprops={"arrowstyle": "->", "color": "#777777"})
        if not finite(e["low"]):
            ax.annotate("", xy=(lo, y), xytext=(min(right, hi), y),
                        arrowprops={"arrowstyle": "->", "color": "#777777"})
        if e["published"] is not None:
            ax.plot(e["published"], y, "o", color="#4c72b0", markersize=7)
        color = "#55a868" if e["agrees"] else "#c44e52"
        se = e.get("se")
        if se:
            a = max(e["simulated"] - 2 * se, lo)
            ax.plot([a, min(e["simulated"] + 2 * se, hi)], [y, y], color=color, linewidth=1.4)
        ax.plot(min(max(e["simulated"], lo), hi), y, "D", color=color, markersize=7)
        verdict = "agrees" if e["agrees"] else "DISAGREES"
        ax.annotate(verdict, (1.01, y), xycoords=("axes fraction", "data"), va="center",
                    fontsize=8, color=color, fontweight="bold")
    ax.set_xlim(lo, hi)
    if log:
        ax.set_xscale("log")
        # 1-2-5 steps: a decade or two get enough labels, none overlapping.
        ax.xaxis.set_major_locator(LogLocator(base=10, subs=(1, 2, 5)))
        ax.xaxis.set_minor_formatter(NullFormatter())
        ax.xaxis.set_major_formatter(FuncFormatter(tick))
    else:
        ax.xaxis.set_major_locator(MaxNLocator(6))
        ax.xaxis.set_major_formatter(StepFormatter())
    ax.tick_params(axis="x", labelsize=8)
    ax.set_ylim(-0.6, n - 0.4)
    ax.set_yticks(range(n))
    ax.set_yticklabels([e["name"] for e in reversed(effects)], fontsize=8)
    ax.set_xlabel("ratio: band grey (arrow: open-ended), published blue, "
                  "simulated green/red with +- 2 se", fontsize=8)
    agree = sum(1 for e in effects if e["agrees"])
    ax.set_title(f"effects: {agree} of {n} agree with their bands", fontsize=9)


def plot_reproduce(result_path, outdir):
    with open(result_path) as f:
        result = json.load(f)
    os.makedirs(outdir, exist_ok=True)
    written = []
    for ex in result["experiments"]:
        cells = ex["cells"]
        effects = ex["effects"]
        # One panel per unit: records/s, MB/s, %, rates never share an axis.
        by_unit = {}
        for c in cells:
            by_unit.setdefault(c["unit"], []).append(c)
        ncols = max(1, len(by_unit))
        rows = 2 if effects else 1
        height = 3.6 + (0.6 + 0.45 * len(effects) if effects else 0)
        # Each cell gets the same width, enough for its wrapped name.
        fig = plt.figure(figsize=(max(8, 1.5 * len(cells) + 1.2 * ncols), height))
        grid = fig.add_gridspec(rows, ncols, height_ratios=[3.6, 0.6 + 0.45 * len(effects)]
                                if effects else [1],
                                width_ratios=[len(g) + 0.6 for g in by_unit.values()])
        for k, (unit, group) in enumerate(by_unit.items()):
            unit_panel(fig.add_subplot(grid[0, k]), group, unit)
        if effects:
            effects_panel(fig.add_subplot(grid[1, :]), effects)
        fig.suptitle(f'{ex["id"]}: {ex["title"]}', fontsize=9)
        fig.tight_layout()
        path = os.path.join(outdir, f'{ex["id"]}.png')
        fig.savefig(path, dpi=110)
        plt.close(fig)
        written.append(path)
    return written


def t975(df):
    """Two-sided 95 % Student t quantile (the table pvlock summarize uses, to df 30)."""
    table = [12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201,
             2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074,
             2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042]
    return table[df - 1] if df <= len(table) else 1.96


def plot_sweep(results_path, key, outdir):
    os.makedirs(outdir, exist_ok=True)
    series = defaultdict(lambda: defaultdict(list))
    units = set()
    scenario = None
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
            vms = rec["result"]["vms"]
            units.update(vm["unit"] for vm in vms)
            scenario = scenario or rec["result"].get("scenario")
            series[others or "all"][point[key]].append(sum(vm["score"] for vm in vms) / len(vms))
    if not series:
        raise SystemExit(f"plot.py: {results_path} holds no results")
    if len(units) > 1:
        raise SystemExit(f"plot.py: {results_path} mixes score units {sorted(units)}; "
                         f"one chart needs one unit")
    unit = units.pop()
    fig, ax = plt.subplots(figsize=(8, 5))
    xs_all = sorted({x for by_x in series.values() for x in by_x}, key=lambda v: (str(type(v)), v))
    pos = {x: i for i, x in enumerate(xs_all)}
    seeds = set()
    for label, by_x in sorted(series.items()):
        xs = sorted(by_x, key=lambda v: pos[v])
        means, errs = [], []
        for v in xs:
            s = by_x[v]
            seeds.add(len(s))
            m = sum(s) / len(s)
            sd = math.sqrt(sum((x - m) ** 2 for x in s) / (len(s) - 1)) if len(s) > 1 else 0.0
            means.append(m)
            errs.append(t975(len(s) - 1) * sd / math.sqrt(len(s)) if len(s) > 1 else 0.0)
        ax.errorbar([pos[v] for v in xs], means, yerr=errs, marker="o", capsize=4, label=label)
    ax.set_xticks(range(len(xs_all)))
    ax.set_xticklabels([str(v) for v in xs_all])
    ax.set_xlabel(key)
    ax.set_ylabel(f"mean score per VM ({unit})")
    ax.yaxis.set_major_formatter(StepFormatter())
    n = "-".join(str(k) for k in sorted(seeds)) if len(seeds) > 1 else str(seeds.pop())
    bars = "error bars: 95 % interval over the seeds" if max(
        len(s) for by_x in series.values() for s in by_x.values()) > 1 else "one seed: no error bars"
    plural = "" if n == "1" else "s"
    ax.set_title(f"{scenario or 'sweep'}: score against {key} ({n} seed{plural} per point; "
                 f"{bars})", fontsize=9)
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
