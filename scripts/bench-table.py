#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""The simulator benchmark's figures as a Markdown table, from `bench/sim_scenarios.py
--json-out` files.

  scripts/bench-table.py RUN.json [RUN.json ...] [--brief] [--doc FILE --marker NAME [--check]]

One table per file: per scenario A's CPU seconds, its events, simulated seconds and
vCPU-seconds per CPU second, its peak RSS, and -- when the run had a B -- B's CPU seconds,
the pairwise B/A ratios of CPU and wall time, and whether the results were the same.
--brief: A's figures only, for the 3-VM runs and `reproduce --quick` (the README's). With
--doc the tables go into FILE between "<!-- BEGIN NAME ... -->" and "<!-- END NAME -->";
--check exits 1 with a diff if what is there is stale. Exits 2 naming the file on
unreadable input. Python 3 standard library only.
"""

import argparse
import sys

from doc_block import die, load_json, read_lines, replace_block, write_or_check


def load(path):
    doc = load_json(path, "a bench/sim_scenarios.py --json-out file")
    if not isinstance(doc, dict) or not isinstance(doc.get("rows"), list):
        die(f"{path}: not a bench/sim_scenarios.py --json-out file (no 'rows' list)")
    for i, r in enumerate(doc["rows"]):
        for key in ("scenario", "cpu_s", "wall_s", "peak_rss_mib"):
            if key not in r:
                die(f"{path}: rows[{i}]: no '{key}'")
    return doc


def num(x, digits):
    return "-" if x is None else f"{x:.{digits}f}"


def table(doc):
    has_b = doc.get("b") is not None
    out = [f"A = {doc['a']}" + (f", B = {doc['b']}" if has_b else "") +
           (f"; medians of {doc['runs']} runs" if doc['runs'] > 1 else "; one run each") +
           (" (B on its own tree's scenario files)" if doc.get("b_own_tree") else "") + ":", ""]
    # A row measured fewer (or more) times than the rest says so in its name.
    def name(r):
        n = r.get("runs", doc["runs"])
        return r["scenario"] if n == doc["runs"] else f"{r['scenario']} ({n} run{'s' if n > 1 else ''})"

    head = ["scenario", "CPU s", "Mevents/CPU-s", "sim-s/CPU-s", "vCPU-s/CPU-s", "peak MiB"]
    if has_b:
        head += ["B CPU s", "B/A CPU", "B/A wall", "same"]
    out.append("| " + " | ".join(head) + " |")
    sep = ["---"] + ["---:"] * (len(head) - 1)
    if has_b:
        sep[-1] = "---"  # same
    out.append("| " + " | ".join(sep) + " |")
    for r in doc["rows"]:
        ev = r.get("events_per_cpu_s")
        cells = [name(r), num(r["cpu_s"], 2), num(ev / 1e6 if ev else None, 2),
                 num(r.get("sim_s_per_cpu_s"), 3), num(r.get("vcpu_s_per_cpu_s"), 1),
                 num(r["peak_rss_mib"], 0)]
        if has_b:
            same = r.get("same_results")
            cells += [num(r.get("b_cpu_s"), 2), num(r.get("ratio_cpu"), 2),
                      num(r.get("ratio_wall"), 2),
                      "n/a" if same is None else "yes" if same else "**no**"]
        out.append("| " + " | ".join(cells) + " |")
    return "\n".join(out) + "\n"


def brief(doc):
    out = ["| run | CPU s | Mevents/CPU-s | vCPU-s/CPU-s | peak MiB |",
           "| --- | ---: | ---: | ---: | ---: |"]
    for r in doc["rows"]:
        if "3 VMs" not in r["scenario"] and not r["scenario"].startswith("reproduce"):
            continue
        ev = r.get("events_per_cpu_s")
        out.append(f"| {r['scenario']} | {num(r['cpu_s'], 2)} | {num(ev / 1e6 if ev else None, 2)}"
                   f" | {num(r.get('vcpu_s_per_cpu_s'), 1)} | {num(r['peak_rss_mib'], 0)} |")
    return "\n".join(out) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("runs", nargs="+")
    ap.add_argument("--doc")
    ap.add_argument("--marker")
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--brief", action="store_true")
    a = ap.parse_args()
    if (a.doc is None) != (a.marker is None) or (a.check and a.doc is None):
        die("--doc and --marker go together, and --check needs them")
    text = "\n".join((brief if a.brief else table)(load(p)) for p in a.runs)
    if a.doc is None:
        sys.stdout.write(text)
        return 0
    lines = read_lines(a.doc)
    new = replace_block(lines, a.marker, text.rstrip("\n").split("\n"), a.doc)
    return write_or_check(a.doc, lines, new, a.check, "scripts/bench-table.py")


if __name__ == "__main__":
    sys.exit(main())
