#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""docs/sensitivity.md's tables, from the screenings' `pvlock sensitivity --json` files.

  scripts/sensitivity-tables.py [--root DIR] [--check]

For every docs/sensitivity/<experiment>.json it writes, between the lines
"<!-- BEGIN sensitivity-<experiment> ... -->" and "<!-- END sensitivity-<experiment> -->"
of docs/sensitivity.md, the screening's size and two tables: per effect the published
ratio, its band, the range the ratio takes over the sampled rows, how many rows land in the
band, and the seeds' noise (the ratio's standard error and the elementary effects' noise
floor); and per effect its five leading constants by mu* (with mu and sigma). --check exits
1 with a diff if the document is stale. Exits 2 naming the file on unreadable input.
Python 3 standard library only.
"""

import argparse
import os
import sys

from doc_block import die, load_json, read_lines, replace_block, write_or_check

DOC = os.path.join("docs", "sensitivity.md")
DATA = os.path.join("docs", "sensitivity")
LEADING = 5


def g(x):
    return f"{x:.3g}"


def load(path):
    doc = load_json(path, "a `pvlock sensitivity --json` result")
    for key in ("experiment", "method", "rows", "seeds", "runs", "constants", "effects"):
        if key not in doc:
            die(f"{path}: not a `pvlock sensitivity --json` result (no '{key}')")
    for i, e in enumerate(doc["effects"]):
        for key in ("name", "published", "band", "range", "ratios", "noise", "ranking"):
            if key not in e:
                die(f"{path}: effects[{i}]: no '{key}'")
    return doc


def tables(doc):
    size = (f"{doc['method'].capitalize()}"
            + (f", {doc['trajectories']} trajectories" if "trajectories" in doc else "")
            + f", {doc['seeds']} seeds{', quick' if doc.get('quick') else ''}:"
            f" {len(doc['constants'])} constants, {doc['rows']} rows, {doc['runs']} runs.")
    out = [size, "",
           "| effect | published | band | simulated over the box | rows in band | ratio se (seeds) "
           "| EE noise floor |",
           "|---|---|---|---|---|---|---|"]
    for e in doc["effects"]:
        lo, hi = e["band"]["low"], e["band"]["high"]
        ratios = [r for r in e["ratios"] if r is not None]
        inside = sum(1 for r in ratios if lo <= r <= hi)
        out.append(f"| {e['name']} | {g(e['published'])} | {g(lo)} - {g(hi)} | "
                   f"{g(e['range']['low'])} - {g(e['range']['high'])} | {inside} of "
                   f"{len(e['ratios'])} | {g(e['noise']['ratio_se'])} | {g(e['noise']['ee_floor'])} |")
    out += ["", "| effect | constants by mu* (mu, sigma) |", "|---|---|"]
    for e in doc["effects"]:
        lead = "; ".join(f"`{c['id']}` {g(c['mu_star'])} ({g(c['mu'])}, {g(c['sigma'])})"
                         for c in e["ranking"][:LEADING])
        out.append(f"| {e['name']} | {lead} |")
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--root", default=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    ap.add_argument("--check", action="store_true")
    a = ap.parse_args()
    doc_path = os.path.join(a.root, DOC)
    lines = read_lines(doc_path)
    new = list(lines)
    data = os.path.join(a.root, DATA)
    names = sorted(n for n in os.listdir(data) if n.endswith(".json"))
    if not names:
        die(f"{data}: no screening results (*.json)")
    for name in names:
        new = replace_block(new, f"sensitivity-{name[:-len('.json')]}",
                            tables(load(os.path.join(data, name))), doc_path)
    return write_or_check(doc_path, lines, new, a.check, "scripts/sensitivity-tables.py")


if __name__ == "__main__":
    sys.exit(main())
