#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Regenerate the results tables of README.md and experiments/README.md.

Both tables come from one saved `pvlock reproduce --quick --json` result,
docs/seeds/data/reproduce-quick.json, so the documents never quote figures by hand. Each
table sits between a BEGIN and an END marker line; everything outside the markers is left
alone.

  scripts/results-tables.py                 rewrite the tables in place
  scripts/results-tables.py --check         exit 1 (with a diff) if a table is stale
  scripts/results-tables.py --fresh PVLOCK  exit 1 if the saved JSON differs, outside
                                            `perf`, from what PVLOCK reproduce --quick
                                            --json prints now (about 30 s)

Options: --root DIR (the repository; default: this script's parent folder), --json FILE
(default: ROOT/docs/seeds/data/reproduce-quick.json). Python 3 standard library only.
"""

import argparse
import difflib
import json
import math
import os
import subprocess
import sys

JSON_PATH = os.path.join("docs", "seeds", "data", "reproduce-quick.json")
GENERATOR = "scripts/results-tables.py"

# The upstream change each experiment re-derives, by commit id or mail (docs/seeds/).
UPSTREAM = {
    "seed000": '89340d0935c9 Revert "locking/pvqspinlock: Don\'t wait if vCPU is preempted"',
    "seed001": "266e85a5ec9 KVM: X86: Boost queue head vCPU to mitigate lock waiter preemption",
    "seed002": "[PATCH] locking/paravirt: Fix performance regression on core bonded vCPU (2022)",
    "seed003": "[PATCH v3 3/4] locking/osq: Drop the overhead of osq_lock() (2016)",
    "seed004": "[PATCH 1/2] x86/paravirt: Don't make vcpu_is_preempted() a callee-save function (2017)",
}


def fmt(x):
    """A number as the tables print it (three decimals below 10); None or a non-finite value as a dash or 'inf'."""
    if x is None:
        return "—"
    if isinstance(x, float) and math.isinf(x):
        return "inf"
    if isinstance(x, float) and math.isnan(x):
        return "nan"
    if abs(x) >= 1000:
        return f"{x:,.0f}".replace(",", " ")
    if abs(x) >= 100:
        return f"{x:.1f}"
    if abs(x) >= 10:
        return f"{x:.2f}"
    return f"{x:.3f}"


def band(e):
    low, high = e.get("low"), e.get("high")
    if high is None or (isinstance(high, float) and (math.isinf(high) or high >= 1e8)):
        return f"> {fmt(low)}"
    if low is not None and low <= 0:
        return f"< {fmt(high)}"
    return f"[{fmt(low)}, {fmt(high)}]"


def verdict(e):
    if e.get("not_run"):
        return "not run"
    if e.get("simulated") is None:
        return "STUCK"
    text = "yes" if e.get("agrees") else "**no**"
    if e.get("resolved") is False:
        text += " (noise)"
    return text


def two_se(e):
    se = e.get("se")
    return "—" if se is None else fmt(2 * se)


def summary_line(doc):
    s = doc.get("summary", {})
    return (
        f"**{s.get('agree', '?')} of {s.get('effects', '?')} effects agree** with their bands; "
        f"{s.get('noise', '?')} of the verdicts are noise (a ratio within two standard errors "
        "would get the other verdict)."
    )


def readme_table(doc):
    lines = [
        "| experiment | upstream change | effect | published | simulated | agrees |",
        "|---|---|---|---|---|---|",
    ]
    for ex in doc["experiments"]:
        up = UPSTREAM.get(ex["id"], ex.get("title", ""))
        for i, e in enumerate(ex["effects"]):
            lines.append(
                f"| {ex['id'] if i == 0 else ''} | {up if i == 0 else ''} | {e['name']} "
                f"| {fmt(e.get('published'))} | {fmt(e.get('simulated'))} | {verdict(e)} |"
            )
    lines += ["", summary_line(doc)]
    return lines


def experiments_table(doc):
    lines = [
        "Effects (ratios of two cells; 2 se = twice the standard error over the seeds):",
        "",
        "| experiment | effect | published | simulated | 2 se | band | agrees |",
        "|---|---|---|---|---|---|---|",
    ]
    for ex in doc["experiments"]:
        for e in ex["effects"]:
            lines.append(
                f"| {ex['id']} | {e['name']} | {fmt(e.get('published'))} "
                f"| {fmt(e.get('simulated'))} | {two_se(e)} | {band(e)} | {verdict(e)} |"
            )
    lines += [
        "",
        summary_line(doc),
        "",
        "Cells (the mean over the seeds, its standard deviation and the range of the seeds):",
        "",
        "| experiment | cell | unit | published | simulated | sd | seeds | lowest / highest seed |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for ex in doc["experiments"]:
        for c in ex["cells"]:
            per = [x for x in c.get("per_seed", []) if x is not None]
            rng = f"{fmt(min(per))} / {fmt(max(per))}" if per else "—"
            lines.append(
                f"| {ex['id']} | {c['name']} | {c.get('unit', '')} | {fmt(c.get('published'))} "
                f"| {fmt(c.get('simulated'))} | {fmt(c.get('simulated_sd'))} "
                f"| {c.get('seeds', 1)} | {rng} |"
            )
    return lines


TABLES = {
    "README.md": ("results-summary", readme_table),
    os.path.join("experiments", "README.md"): ("results-table", experiments_table),
}


def begin_marker(name):
    return f"<!-- BEGIN {name}: generated by {GENERATOR} from {JSON_PATH}; do not edit -->"


def end_marker(name):
    return f"<!-- END {name} -->"


def render(text, name, body, path):
    lines = text.split("\n")
    b, e = begin_marker(name), end_marker(name)
    if lines.count(b) != 1 or lines.count(e) != 1:
        sys.exit(f"{path}: needs exactly one line '{b}' and one line '{e}'")
    i, j = lines.index(b), lines.index(e)
    if j < i:
        sys.exit(f"{path}: '{e}' comes before '{b}'")
    return "\n".join(lines[: i + 1] + body + lines[j:])


def strip_perf(doc):
    doc = dict(doc)
    doc.pop("perf", None)
    return doc


def check_fresh(root, saved, pvlock):
    cmd = [
        pvlock,
        "reproduce",
        "--quick",
        "--json",
        "--experiments",
        os.path.join(root, "experiments"),
    ]
    run = subprocess.run(cmd, cwd=root, capture_output=True, text=True)
    if run.returncode not in (0, 1):  # 1: some effect disagrees, still a result
        sys.exit(f"{' '.join(cmd)} exited {run.returncode}:\n{run.stderr}")
    try:
        now = json.loads(run.stdout)
    except json.JSONDecodeError as err:
        sys.exit(f"{' '.join(cmd)} printed no JSON: {err}")
    if strip_perf(now) == strip_perf(saved):
        return 0
    a = json.dumps(strip_perf(saved), indent=1, sort_keys=True).split("\n")
    b = json.dumps(strip_perf(now), indent=1, sort_keys=True).split("\n")
    sys.stdout.writelines(
        line + "\n"
        for line in difflib.unified_diff(a, b, JSON_PATH, "reproduce --quick --json", n=2)
    )
    print(
        f"STALE: {JSON_PATH} is not what the built pvlock computes; regenerate it "
        "(scripts/docs-figures.sh) and the tables (" + GENERATOR + ")"
    )
    return 1


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--root", default=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    ap.add_argument("--json", help="reproduce --json result (default: " + JSON_PATH + ")")
    ap.add_argument("--check", action="store_true", help="fail if a table is stale")
    ap.add_argument("--fresh", metavar="PVLOCK", help="fail if the JSON is stale against PVLOCK")
    a = ap.parse_args()
    path = a.json or os.path.join(a.root, JSON_PATH)
    try:
        with open(path) as f:
            doc = json.load(f)
    except (OSError, json.JSONDecodeError) as err:
        sys.exit(f"{path}: {err}")
    if not isinstance(doc, dict) or not isinstance(doc.get("experiments"), list):
        sys.exit(f"{path}: not a `pvlock reproduce --json` result (no 'experiments' list)")
    if a.fresh:
        return check_fresh(a.root, doc, a.fresh)
    stale = 0
    for rel, (name, make) in TABLES.items():
        file = os.path.join(a.root, rel)
        with open(file) as f:
            old = f.read()
        new = render(old, name, make(doc), rel)
        if new == old:
            continue
        if a.check:
            stale = 1
            sys.stdout.writelines(
                difflib.unified_diff(
                    old.splitlines(True), new.splitlines(True), rel, rel + " (generated)"
                )
            )
            print(f"STALE: the {name} table of {rel}; run {GENERATOR}")
        else:
            with open(file, "w") as f:
                f.write(new)
            print(f"updated {rel}")
    return stale


if __name__ == "__main__":
    sys.exit(main())
