#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Run the workload examples at 1x, 1.5x and 2x over-commit with the lock family, and
write the tables of docs/workloads/results.md (and its plot) from the runs' JSON.

Every run is `pvlock run examples/<workload>.toml --json` with `--set` overrides: the
examples put VMs of 8 vCPUs on 16 pCPUs, so 2, 3 and 4 VMs are 1x, 1.5x and 2x; the guest
spinlock is each lock of LOCKS; the wake-up benchmark also runs in both wake-placement eras.
What each run's JSON says (per VM: score, unit, the wake-up section's percentiles) is saved
in docs/workloads/data/results.json; the tables are made from that file only.

  scripts/workload-results.py --run PVLOCK     run everything (~2 min), save, rewrite tables
  scripts/workload-results.py                  rewrite the tables from the saved JSON
  scripts/workload-results.py --check          exit 1 (with a diff) if the tables are stale
  scripts/workload-results.py --fresh PVLOCK   exit 1 if the saved JSON differs from what
                                               PVLOCK computes now
  scripts/workload-results.py --plot           also draw docs/workloads/results.png
                                               (matplotlib, via tools/pvlock_plotting.py)

Option: --root DIR (the repository; default: this script's parent folder).
"""

import argparse
import difflib
import json
import os
import subprocess
import sys

GENERATOR = "scripts/workload-results.py"
JSON_PATH = os.path.join("docs", "workloads", "data", "results.json")
DOC_PATH = os.path.join("docs", "workloads", "results.md")
PLOT_PATH = os.path.join("docs", "workloads", "results.png")

WORKLOADS = ["kbuild", "shell", "schbench"]
# Runs of an example at the end of one of its estimates' ranges: name -> (example, sets).
# kbuild-dlock: every header lookup under the hot dentry's d_lock, held 500 ns (the upper
# ends of kbuild.md's "one in ten" and "50-500 ns"), the lookup's time kept at ~1 us.
VARIANTS = {
    "kbuild-dlock": ("kbuild", ["vm[0].workload.group[2].program[2].loop=1400",
                                "vm[0].workload.group[2].program[3].kernel=500",
                                "vm[0].workload.group[2].program[5].kernel=500"]),
}
# VMs of 8 vCPUs on 16 pCPUs.
OVERCOMMIT = [("1x", 2), ("1.5x", 3), ("2x", 4)]
# The guest spinlock, by row label: the lock and the knobs ([vm.guest] keys) that make it.
# The PV qspinlock of today and of the 4.5-4.7 and 4.2 guest profiles (the knobs those
# profiles set, without the profiles' other switches), the paravirt ticket lock of
# 3.12-3.19, native qspinlock (a FIFO queue with no PV hooks), the pre-4.2 ticket lock and
# virt_spin_lock()'s test-and-set fallback.
LOCK_SETS = {
    "pvqspinlock": ("pvqspinlock", []),
    "pvqspinlock 4.5": ("pvqspinlock", ["hybrid_stealing=false"]),
    "pvqspinlock 4.2": ("pvqspinlock", ["lock_stealing=false", "hybrid_stealing=false",
                                        "wait_early=never", "kick_at_unlock=false"]),
    "pvticket": ("pvticket", []),
    "qspinlock": ("qspinlock", []),
    "ticket": ("ticket", []),
    "tas": ("tas", []),
}
LOCKS = list(LOCK_SETS)
# The wake-up benchmark in both eras of select_idle_sibling()'s idle test.
PLACEMENTS = {"schbench": ["available_idle_cpu", "idle_cpu"]}


def points():
    runs = [(w, w, []) for w in WORKLOADS] + [(v, e, x) for v, (e, x) in VARIANTS.items()]
    for w, example, extra in runs:
        for placement in PLACEMENTS.get(w, [None]):
            for lock in LOCKS:
                name, knobs = LOCK_SETS[lock]
                for label, count in OVERCOMMIT:
                    sets = [f"vm[0].count={count}", f"vm[0].guest.lock={name}"]
                    sets += [f"vm[0].guest.{k}" for k in knobs] + extra
                    if placement:
                        sets.append(f"vm[0].guest.wake_placement={placement}")
                    yield {"workload": w, "example": example, "lock": lock,
                           "placement": placement, "overcommit": label, "sets": sets}


def summarise(run):
    """What the tables need from one run's JSON: each VM's score, and its sections."""
    vms = []
    for vm in run["vms"]:
        e = {"name": vm["name"], "score": vm["score"], "unit": vm["unit"]}
        if "sections" in vm:
            e["sections"] = vm["sections"]
        vms.append(e)
    return vms


def run_all(root, pvlock):
    out = []
    for p in points():
        cmd = [pvlock, "run", os.path.join(root, "examples", p["example"] + ".toml"), "--json"]
        for s in p["sets"]:
            cmd += ["--set", s]
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0:
            sys.exit(f"{GENERATOR}: {' '.join(cmd)} failed ({r.returncode}):\n{r.stderr}")
        out.append(dict(p, vms=summarise(json.loads(r.stdout))))
    return out


def mean(xs):
    return sum(xs) / len(xs)


def fmt(x):
    return f"{x:.0f}" if abs(x) >= 100 else f"{x:.3g}"


def find(data, **key):
    for d in data:
        if all(d[k] == v for k, v in key.items()):
            return d
    sys.exit(f"{GENERATOR}: no run {key} in {JSON_PATH}: run with --run PVLOCK")


def score_table(data, workload, placement=None):
    first = find(data, workload=workload, placement=placement)
    unit = first["vms"][0]["unit"]
    head = "| guest lock | " + " | ".join(f"{o} ({unit})" for o, _ in OVERCOMMIT) + " |"
    rows = [head, "|---|" + "---:|" * len(OVERCOMMIT)]
    for lock in LOCKS:
        cells = []
        for label, _ in OVERCOMMIT:
            d = find(data, workload=workload, lock=lock, placement=placement, overcommit=label)
            s = [v["score"] for v in d["vms"]]
            cells.append(f"{fmt(mean(s))} ({fmt(min(s))}..{fmt(max(s))})")
        rows.append(f"| {lock} | " + " | ".join(cells) + " |")
    return rows


def latency_table(data, workload, section):
    rows = ["| guest lock | wake placement | " +
            " | ".join(f"{o} p50 / p99 / p99.9 (us)" for o, _ in OVERCOMMIT) + " |",
            "|---|---|" + "---:|" * len(OVERCOMMIT)]
    for placement in PLACEMENTS[workload]:
        for lock in LOCKS:
            cells = []
            for label, _ in OVERCOMMIT:
                d = find(data, workload=workload, lock=lock, placement=placement,
                         overcommit=label)
                p = [mean([v["sections"][section][k] for v in d["vms"]])
                     for k in ("p50_us", "p99_us", "p99.9_us")]
                cells.append(" / ".join(fmt(x) for x in p))
            rows.append(f"| {lock} | {placement} | " + " | ".join(cells) + " |")
    return rows


def tables(data):
    note = ("Each cell: the mean over the VMs of each VM's score, and (in brackets) the "
            "lowest and highest VM.")
    return {
        "kbuild": [note, ""] + score_table(data, "kbuild"),
        "kbuild-dlock": [note, ""] + score_table(data, "kbuild-dlock"),
        "shell": [note, ""] + score_table(data, "shell"),
        "schbench": [note + " Wake placement `available_idle_cpu`:", ""] +
        score_table(data, "schbench", "available_idle_cpu") +
        ["", "Wake placement `idle_cpu` (before 247f2f6f3c70):", ""] +
        score_table(data, "schbench", "idle_cpu"),
        "schbench-percentiles": ["The wake-up section's percentiles, mean over the VMs:", ""] +
        latency_table(data, "schbench", "wakeup"),
    }


def render(text, name, body):
    begin = f"<!-- BEGIN {name}: generated by {GENERATOR} from {JSON_PATH}; do not edit -->"
    end = f"<!-- END {name} -->"
    lines = text.split("\n")
    try:
        b, e = lines.index(begin), lines.index(end)
    except ValueError:
        sys.exit(f"{GENERATOR}: {DOC_PATH} lacks the marker lines of table '{name}':\n"
                 f"{begin}\n{end}")
    return "\n".join(lines[:b + 1] + body + lines[e:])


def plot(root, data):
    sys.path.insert(0, os.path.join(root, "tools"))
    import pvlock_plotting  # noqa: E402  (after the path is set)
    plt = pvlock_plotting.pyplot(GENERATOR)
    panels = WORKLOADS + list(VARIANTS)
    fig, axes = plt.subplots(1, len(panels), figsize=(4.3 * len(panels), 4))
    x = list(range(len(OVERCOMMIT)))
    for ax, w in zip(axes, panels):
        placement = PLACEMENTS.get(w, [None])[0]
        unit = find(data, workload=w)["vms"][0]["unit"]
        for lock in LOCKS:
            y = [mean([v["score"] for v in find(data, workload=w, lock=lock,
                                                   placement=placement, overcommit=o)["vms"]])
                 for o, _ in OVERCOMMIT]
            ax.plot(x, y, marker="o", label=lock)
        ax.set_xticks(x, [o for o, _ in OVERCOMMIT])
        ax.set_xlabel("over-commit (vCPUs / pCPUs)")
        ax.set_ylabel(unit)
        ax.set_title(w + (f" ({placement})" if placement else ""))
        ax.grid(alpha=0.3)
    axes[0].legend()
    fig.tight_layout()
    fig.savefig(os.path.join(root, PLOT_PATH), dpi=90)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--root", default=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    ap.add_argument("--run", metavar="PVLOCK")
    ap.add_argument("--fresh", metavar="PVLOCK")
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--plot", action="store_true")
    a = ap.parse_args()
    jpath = os.path.join(a.root, JSON_PATH)
    if a.run:
        os.makedirs(os.path.dirname(jpath), exist_ok=True)
        with open(jpath, "w") as f:
            json.dump(run_all(a.root, a.run), f, indent=1)
            f.write("\n")
    with open(jpath) as f:
        data = json.load(f)
    if a.fresh:
        now = run_all(a.root, a.fresh)
        if now != data:
            for d, n in zip(data, now):
                if d != n:
                    print(f"stale: {d['workload']} {' '.join(d['sets'])}:\n saved {d['vms']}\n"
                          f" now   {n['vms']}")
                    break
            print(f"{JSON_PATH} is stale: run {GENERATOR} --run build/pvlock --plot")
            return 1
        print(f"{JSON_PATH} is current")
        return 0
    dpath = os.path.join(a.root, DOC_PATH)
    with open(dpath) as f:
        old = f.read()
    new = old
    for name, body in tables(data).items():
        new = render(new, name, body)
    if a.check:
        if new != old:
            sys.stdout.writelines(difflib.unified_diff(
                old.splitlines(True), new.splitlines(True), DOC_PATH, DOC_PATH + " (generated)"))
            print(f"{DOC_PATH} is stale: run {GENERATOR}")
            return 1
        print(f"{DOC_PATH} is current")
        return 0
    if new != old:
        with open(dpath, "w") as f:
            f.write(new)
    if a.plot:
        plot(a.root, data)
    return 0


if __name__ == "__main__":
    sys.exit(main())
