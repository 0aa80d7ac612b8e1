#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Turn `pvlock twin --json` output into the Markdown tables of docs/twin.md.

    build/pvlock twin --json --out docs/data/twin.json > /dev/null
    tools/twin_table.py docs/data/twin.json

Prints: the machine line, the cells table (measured, predicted, ratio, steal), the rank
correlation, and the collapse-factor table.
"""
import json
import sys


def fmt(v, spec="{:.3g}"):
    return "-" if v is None else spec.format(v)


def per_cpu_s(cell, settings):
    """Operations per CPU-second the native threads used (spinning included): how fast the
    loop runs while it has a CPU, whatever other processes take."""
    if not cell.get("measured_cpu_s"):
        return None
    return cell["measured_ops_s"] * settings["native_s"] / cell["measured_cpu_s"]


def main(argv):
    if len(argv) != 2:
        print("usage: twin_table.py TWIN.json", file=sys.stderr)
        return 2
    with open(argv[1]) as f:
        doc = json.load(f)
    if not isinstance(doc, dict) or "cells" not in doc or "summary" not in doc:
        print(f"twin_table.py: {argv[1]}: not `pvlock twin --json` output", file=sys.stderr)
        return 2
    cal, st, summ = doc["calibration"], doc["settings"], doc["summary"]
    cpus = len(cal["topology"]["cpus"])
    print(f"Machine: {cpus} CPUs ({cal['topology']['sockets']} socket(s) x "
          f"{cal['topology']['cores_per_socket']} core(s) x "
          f"{cal['topology']['threads_per_core']} thread(s)), kernel "
          f"{cal['kernel']['release']} ({cal['kernel']['scheduler']}); "
          f"critical section {st['cs_ns']} ns, outside {st['outside_ns']} ns; "
          f"native {st['native_s']} s and simulated {st['sim_duration_ms']} ms per cell; "
          f"steal during calibration {100 * cal['steal_fraction']:.1f}%, "
          f"mean over the native cells {summ['mean_steal_pct']:.1f}%; other processes' "
          f"runnable threads before the native cells: {summ['mean_background_runnable']:.1f} "
          f"on average"
          f"{' (simulated as host stress threads)' if st['background_as_stress'] else ''}.")
    print()
    print("| calibration | median | IQR | min | max | samples |")
    print("|---|---:|---:|---:|---:|---:|")
    for key, v in cal["measured_ns"].items():
        if v is None:
            print(f"| {key} (ns) | absent on this machine | | | | |")
            continue
        print(f"| {key} (ns) | {v['median']:.4g} | {v['p25']:.4g}-{v['p75']:.4g} | "
              f"{v['min']:.4g} | {v['max']:.4g} | {v['reps']} |")
    print()
    print("| lock | twin | threads | measured ops/s | predicted ops/s | predicted/measured "
          "| measured ops/CPU-s | steal % | other runnable | simulated stress "
          "| involuntary switches/s | predicted preemptions/s |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for c in doc["cells"]:
        print(f"| {c['lock']} | {c['sim_lock']} | {c['threads']} | {c['measured_ops_s']:.3g} | "
              f"{c['predicted_ops_s']:.3g} | {fmt(c['ratio'], '{:.2f}')} | "
              f"{fmt(per_cpu_s(c, st))} | {c['steal_pct']:.1f} | "
              f"{c['background_runnable']:.1f} | {c['stress_threads']} | "
              f"{fmt(c.get('measured_involuntary_switches_s'), '{:.3g}')} | "
              f"{fmt(c.get('predicted_preemptions_s'), '{:.3g}')} |")
    print()
    print(f"Rank correlation (Spearman) over {summ['cells']} cells: "
          f"**{fmt(summ['rank_correlation'], '{:.3f}')}**.")
    print()
    col = summ["collapse"]
    if col:
        print(f"Collapse factor = ops/s at {col[0]['over_threads']} threads / ops/s at "
              f"{col[0]['per_core_threads']} threads. Within x/÷2: "
              f"**{summ['collapse_within_2x']} of {len(col)}**.")
        print()
    print("| lock | measured | predicted | predicted/measured | within x/÷2 |")
    print("|---|---:|---:|---:|:---:|")
    for k in col:
        print(f"| {k['lock']} | {fmt(k['measured'])} | {fmt(k['predicted'])} | "
              f"{fmt(k['ratio'], '{:.2f}')} | {'yes' if k['within_2x'] else 'no'} |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
