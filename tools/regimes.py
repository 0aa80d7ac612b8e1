#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""How long over-committed guests spend in each regime, from `pvlock run --series MS --json`.

  regimes.py [--fast RATE] [--slow RATE] [--after MS] RUN.json...

Each series interval of each VM (after the run's warm-up, or after --after MS) is "fast"
when its score is above --fast, "collapsed" when below --slow, "between" otherwise. Prints,
per VM of each run and over all of them: the share of intervals in each class, the mean
score overall and within each class, and how often the VM escaped a collapse (a collapsed
interval followed, possibly through "between" ones, by a fast one) and fell back into one,
per second of measured time. The mean collapse then lasts collapsed time / escapes. Seeds
000 and 001's ebizzy guests switch between a fast regime and a collapse (docs/
investigations/seed001.md); the defaults are their records/s thresholds. Thresholds are
in --unit (default records/s, the defaults' unit), which must be the unit every VM scores
in: an ops/s lock loop is refused with records/s thresholds rather than classified wrongly.
"""
import argparse
import json
import sys


def classify(score, fast, slow):
    if score > fast:
        return "fast"
    if score < slow:
        return "collapsed"
    return "between"


def vm_regimes(rows, score_col, after_ms, interval_ms, fast, slow):
    kept = [r for r in rows if r[0] > after_ms]
    out = {"n": len(kept), "fast": [], "collapsed": [], "between": [], "escapes": 0, "falls": 0}
    last = None  # the last interval that was fast or collapsed
    for r in kept:
        c = classify(r[score_col], fast, slow)
        out[c].append(r[score_col])
        if c != "between":
            if last == "collapsed" and c == "fast":
                out["escapes"] += 1
            if last == "fast" and c == "collapsed":
                out["falls"] += 1
            last = c
    out["seconds"] = len(kept) * interval_ms / 1000.0
    out["scores"] = [r[score_col] for r in kept]
    return out


def mean(xs):
    return sum(xs) / len(xs) if xs else float("nan")


def line(label, regs):
    n = sum(r["n"] for r in regs)
    secs = sum(r["seconds"] for r in regs)
    share = {c: 100.0 * sum(len(r[c]) for r in regs) / n for c in ("fast", "between", "collapsed")}
    esc = sum(r["escapes"] for r in regs)
    falls = sum(r["falls"] for r in regs)
    scores = [s for r in regs for s in r["scores"]]
    return (
        f"{label:<28} {n:>6} {share['fast']:>6.1f} {share['between']:>8.1f} "
        f"{share['collapsed']:>10.1f} {mean(scores):>9.0f} "
        f"{mean([s for r in regs for s in r['fast']]):>9.0f} "
        f"{mean([s for r in regs for s in r['collapsed']]):>9.0f} "
        f"{esc / secs:>8.1f} {falls / secs:>7.1f}"
    )


def main(argv):
    ap = argparse.ArgumentParser(
        prog="regimes.py", description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--fast", type=float, default=15000,
                    help="an interval above this score is fast (default 15000)")
    ap.add_argument("--slow", type=float, default=8000,
                    help="an interval below this score is collapsed (default 8000)")
    ap.add_argument("--unit", default="records/s",
                    help="the unit of --fast and --slow, which every VM must score in "
                         "(default records/s)")
    ap.add_argument("--after", type=float, default=None,
                    help="only intervals ending after MS (default: the run's warm-up)")
    ap.add_argument("runs", nargs="+", metavar="RUN.json")
    a = ap.parse_args(argv)
    if a.slow > a.fast:
        ap.error(f"--slow ({a.slow:g}) must not exceed --fast ({a.fast:g})")
    rows = []
    everything = []
    for path in a.runs:
        try:
            with open(path) as f:
                run = json.load(f)
        except (OSError, ValueError) as e:
            sys.exit(f"regimes.py: {path}: cannot read a run's JSON: {e}")
        if "series" not in run:
            sys.exit(f"regimes.py: {path} has no 'series' (run it with `pvlock run --series MS "
                     f"--json`)")
        ser = run["series"]
        cols = [c["name"] for c in ser["columns"]]
        interval_ms = ser["interval_ns"] / 1e6
        warmup_ms = (run["simulated_ns"] - run["measured_ns"]) / 1e6
        after = warmup_ms if a.after is None else a.after
        for vm, v in ser["vms"].items():
            unit = v.get("score_unit") or "n/a"
            if unit != a.unit:
                sys.exit(f"regimes.py: {path}: {vm} scores in {unit}, the thresholds (--fast "
                         f"{a.fast:g}, --slow {a.slow:g}) are in {a.unit}; give --fast and "
                         f"--slow in {unit} with --unit {unit}")
            reg = vm_regimes(v["rows"], cols.index("score"), after, interval_ms, a.fast, a.slow)
            if reg["n"] == 0:
                sys.exit(f"regimes.py: {path}: {vm} has no interval after {after:g} ms")
            everything.append(reg)
            rows.append(line(f"{path.rsplit('/', 1)[-1]} {vm}", [reg]))
    print(f"{'run / vm':<28} {'ivals':>6} {'fast%':>6} {'between%':>8} {'collapsed%':>10} "
          f"{'mean':>9} {'fast':>9} {'collapsed':>9} {'esc/s':>8} {'fall/s':>7}")
    print("\n".join(rows))
    if len(everything) > 1:
        print(line("all", everything))


if __name__ == "__main__":
    main(sys.argv[1:])
