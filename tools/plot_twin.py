#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Plot `pvlock twin --json` output: one PNG per lock, measured and predicted ops/s against
thread count.

    build/pvlock twin --json --out twin.json
    tools/plot_twin.py twin.json DIR

Writes DIR/twin-<lock>.png. The dotted vertical line marks the CPU count: everything to its
right is oversubscribed.
"""
import json
import os
import sys

from pvlock_plotting import pyplot

plt = pyplot("plot_twin.py")


def main(argv):
    if len(argv) != 3:
        print("usage: plot_twin.py TWIN.json DIR", file=sys.stderr)
        return 2
    with open(argv[1]) as f:
        doc = json.load(f)
    if not isinstance(doc, dict) or not isinstance(doc.get("cells"), list):
        print(f"plot_twin.py: {argv[1]}: not `pvlock twin --json` output (no cells)",
              file=sys.stderr)
        return 2
    cpus = len(doc["calibration"]["topology"]["cpus"])
    locks = []
    for c in doc["cells"]:
        if c["lock"] not in locks:
            locks.append(c["lock"])
    os.makedirs(argv[2], exist_ok=True)
    for lock in locks:
        cells = sorted((c for c in doc["cells"] if c["lock"] == lock), key=lambda c: c["threads"])
        x = [c["threads"] for c in cells]
        fig, ax = plt.subplots(figsize=(6, 4))
        ax.plot(x, [c["measured_ops_s"] for c in cells], "o-", label="measured (native)")
        ax.plot(x, [c["predicted_ops_s"] for c in cells], "s--", label="predicted (simulated)")
        ax.axvline(cpus, linestyle=":", color="grey")
        ax.set_xscale("log", base=2)
        ax.set_xticks(x)
        ax.set_xticklabels([str(v) for v in x])
        ax.set_yscale("log")
        ax.set_xlabel("threads")
        ax.set_ylabel("lock/unlock pairs per second")
        sim = cells[0]["sim_lock"]
        ax.set_title(f"{lock} (twin: {sim}) on {cpus} CPUs")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend()
        fig.tight_layout()
        out = os.path.join(argv[2], f"twin-{lock}.png")
        fig.savefig(out, dpi=100)
        plt.close(fig)
        print(out)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
