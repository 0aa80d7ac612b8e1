#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""mu*-sigma charts of a `pvlock sensitivity --json` screening (python3-matplotlib, Agg).

  plot_sensitivity.py RESULT.json OUTDIR   one PNG per effect: every screened constant at
                                           (mu*, sigma), labelled, with the seeds' noise floor
                                           shaded; an LHS screening plots |corr| per constant

Prints the PNG paths it wrote, one per line.
"""
import json
import os
import re
import sys

from pvlock_plotting import pyplot

plt = pyplot("plot_sensitivity.py")


def slug(s):
    return re.sub(r"[^A-Za-z0-9]+", "-", s).strip("-").lower()


def plot_effect(result, effect, outdir):
    fig, ax = plt.subplots(figsize=(7.5, 5.5))
    title = f"{result['experiment']}: {effect['name']}"
    lo, hi = effect["range"]["low"], effect["range"]["high"]
    pub = effect["published"]
    sub = f"ratio over the box {lo:.3g} .. {hi:.3g}" if lo is not None else "no finite ratio"
    if pub is not None:
        sub += f"; published {pub:.3g}, band [{effect['band']['low']:.3g}, " \
               f"{effect['band']['high']:.3g}]: {'reached' if effect['reached'] else 'not reached'}"
    if result["method"] == "morris":
        pts = [r for r in effect["ranking"] if r["mu_star"] is not None]
        xs = [r["mu_star"] for r in pts]
        ys = [r["sigma"] for r in pts]
        ax.scatter(xs, ys, color="tab:blue", zorder=3)
        for r in pts[:12]:
            ax.annotate(r["id"], (r["mu_star"], r["sigma"]), fontsize=7,
                        xytext=(3, 3), textcoords="offset points")
        floor = effect["noise"]["ee_floor"]
        if floor is not None:
            ax.axvspan(0, floor, color="0.85", zorder=1, label="seeds' noise floor")
            ax.legend(loc="upper left", fontsize=8)
        top = max(xs + ys + [floor or 0, 1e-9])
        ax.plot([0, top], [0, top], color="0.6", linestyle=":", linewidth=1)
        ax.set_xlim(left=0)
        ax.set_ylim(bottom=0)
        ax.set_xlabel("mu* (mean |elementary effect| on the ratio, per full range)")
        ax.set_ylabel("sigma (spread of the elementary effects)")
    else:
        ranking = [r for r in effect["ranking"] if r["corr"] is not None]
        names = [r["id"] for r in ranking][::-1]
        vals = [r["corr"] for r in ranking][::-1]
        ax.barh(names, vals, color=["tab:red" if v < 0 else "tab:blue" for v in vals])
        ax.set_xlabel("correlation of the ratio with the constant (LHS)")
        ax.tick_params(axis="y", labelsize=7)
    ax.set_title(title + "\n" + sub, fontsize=9)
    fig.tight_layout()
    path = os.path.join(outdir, f"{slug(result['experiment'])}-{slug(effect['name'])}.png")
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def main(argv):
    if len(argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    with open(argv[1]) as f:
        result = json.load(f)
    os.makedirs(argv[2], exist_ok=True)
    for effect in result["effects"]:
        print(plot_effect(result, effect, argv[2]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
