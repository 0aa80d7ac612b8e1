#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Compare two `pvlock reproduce --json` results of the same experiments: every effect with
its published value and band, the simulated ratio before and after, both verdicts, and
whether it moved: "yes" by more than twice the combined standard error or in its verdict,
"within 2 se" when it changed by less, "no" when it is the same.

  scripts/results-diff.py BEFORE.json AFTER.json [--label-before X] [--label-after Y]
                          [--moved-only] [--doc FILE --marker NAME [--check]]

Prints a Markdown table; with --doc, writes it into FILE between the lines
"<!-- BEGIN NAME ... -->" and "<!-- END NAME -->" instead, and with --check exits 1 (with a
diff) if what is there is stale. Exits 2 with a message naming the file on unreadable
input. An effect only one side holds is listed as such.
Python 3 standard library only.
"""

import argparse
import math
import sys

from doc_block import die, load_json, read_lines, replace_block, write_or_check


def load(path):
    j = load_json(path, "a reproduce --json result")
    if not isinstance(j, dict) or "experiments" not in j:
        die(f"{path}: not a reproduce --json result (no 'experiments' key)")
    out = {}
    for e in j["experiments"]:
        for eff in e.get("effects", []):
            out[(e["id"], eff["name"])] = eff
    return out


def fmt(x):
    if x is None:
        return "-"
    a = abs(x)
    return f"{x:.3f}" if a < 100 else f"{x:.0f}"


def band(eff):
    lo, hi = eff.get("low"), eff.get("high")
    if hi is None or hi >= 1e8:
        return f"> {fmt(lo)}"
    if lo is None or lo <= 0:
        return f"< {fmt(hi)}"
    return f"[{fmt(lo)}, {fmt(hi)}]"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("before")
    ap.add_argument("after")
    ap.add_argument("--label-before", default="before")
    ap.add_argument("--label-after", default="after")
    ap.add_argument("--moved-only", action="store_true", help="leave out the effects that did not change")
    ap.add_argument("--doc")
    ap.add_argument("--marker")
    ap.add_argument("--check", action="store_true")
    a = ap.parse_args()
    if (a.doc is None) != (a.marker is None) or (a.check and a.doc is None):
        die("--doc and --marker go together, and --check needs them")
    rows = []
    print = lambda line="", **kw: rows.append(line)
    b, c = load(a.before), load(a.after)
    print(f"| experiment | effect | published | band | {a.label_before} | {a.label_after} | "
          f"agrees ({a.label_before} -> {a.label_after}) | moved |")
    print("|---|---|---|---|---|---|---|---|")
    n_moved = 0
    # Effects only one side has (a cell added or dropped since) are listed as such.
    keys = list(b) + [k for k in c if k not in b]
    for key in keys:
        if key not in b or key not in c:
            x = b.get(key) or c[key]
            side = a.label_after if key in c else a.label_before
            print(f"| {key[0]} | {key[1]} | {fmt(x['published'])} | {band(x)} | "
                  f"{fmt(x['simulated']) if key in b else '-'} | {fmt(x['simulated']) if key in c else '-'} | "
                  f"only {side} | - |")
            continue
        x, y = b[key], c[key]
        se = math.hypot(x.get("se") or 0.0, y.get("se") or 0.0)
        d = y["simulated"] - x["simulated"]
        verdict_changed = x["agrees"] != y["agrees"]
        if verdict_changed or (abs(d) > 2 * se if se > 0 else abs(d) > 1e-12):
            moved = "**yes**"
            n_moved += 1
        elif abs(d) > 1e-12:
            moved = "within 2 se"
        else:
            moved = "no"
        if a.moved_only and moved == "no":
            continue
        yes = lambda v: "yes" if v else "**no**"
        print(f"| {key[0]} | {key[1]} | {fmt(x['published'])} | {band(x)} | {fmt(x['simulated'])} | "
              f"{fmt(y['simulated'])} | {yes(x['agrees'])} -> {yes(y['agrees'])} | "
              f"{moved} |")
    agree_b = sum(v["agrees"] for v in b.values())  # each side over its own effects
    agree_c = sum(v["agrees"] for v in c.values())
    print()
    print(f"{agree_b} of {len(b)} effects agree {a.label_before}, {agree_c} of {len(c)} {a.label_after}; "
          f"{n_moved} moved (by more than twice the combined standard error, or in verdict).")
    if a.doc is None:
        sys.stdout.write("\n".join(rows) + "\n")
        return 0
    lines = read_lines(a.doc)
    new = replace_block(lines, a.marker, rows, a.doc)
    return write_or_check(a.doc, lines, new, a.check, f"scripts/results-diff.py ({a.marker})")


if __name__ == "__main__":
    sys.exit(main())
