# SPDX-License-Identifier: GPL-2.0-only
"""The simulator's speed on a fixed set of scenarios, optionally against a second binary.

Every scenario runs `pvlock run FILE --set ... --json`; the run's own "perf" gives the events it
dispatched (every kind, stale ones apart) and the CPU seconds of the simulating thread, and
the deterministic part gives simulated time and vCPUs. Printed per scenario (medians over the
runs): wall and CPU seconds, events per second, simulated seconds and vCPU-seconds per
second -- per wall second and per CPU second of the whole process (user + sys, from wait4,
which also gives the peak RSS). With --vs B the two binaries run in turn (A B A B ...), so a
drifting machine slows both alike, and the ratio column is B's time over A's, pair by pair
(> 1: A is faster); the script also says whether both produced the same results outside
"perf". `--reproduce` adds `pvlock reproduce --quick` as one more row, `--reproduce-full`
the full `pvlock reproduce` (minutes a run, so it runs --full-runs times, default once).
With --vs-root DIR, B runs in DIR (an older checkout) on that tree's own scenario files --
the way to compare against a simulator whose scenario keys or model have since changed (the
runs then do not simulate exactly the same thing, so `same` is "n/a").

--json-out FILE writes the rows with the two binaries' labels (--label-a, --label-b: e.g.
their commits) for scripts/bench-table.py, which puts them in docs/performance.md.

Usage: bench/sim_scenarios.py --pvlock build/pvlock [--vs OTHER [--vs-root DIR]] [--runs 3]
       [--only NAME] [--reproduce] [--reproduce-full [--full-runs N]] [--json]
       [--json-out FILE --label-a X --label-b Y]
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# (name, scenario file, --set overrides): the experiments' cells at their full durations.
SCENARIOS = [
    ("lock2 bare metal", "examples/lock2-baremetal.toml", []),
    ("lockloop 2x16", "examples/overcommit-lockloop.toml", []),
    ("seed000 3 VMs", "experiments/seed000/ebizzy-3vm.toml",
     ["vm[0].guest.wait_early=prev_halted_or_preempted"]),
    ("seed001 1 VM", "experiments/seed001/ebizzy.toml",
     ["vm[0].count=1", "host.kvm.kick_boost=false"]),
    ("seed001 2 VMs", "experiments/seed001/ebizzy.toml",
     ["vm[0].count=2", "host.kvm.kick_boost=false"]),
    ("seed001 3 VMs", "experiments/seed001/ebizzy.toml",
     ["vm[0].count=3", "host.kvm.kick_boost=false"]),
    ("seed003 messaging", "experiments/seed003/messaging.toml",
     ["vm[0].guest.break_on_prev_preempted=false"]),
    ("seed004 fio", "experiments/seed004/fio.toml", ["vm[0].guest.vcpu_is_preempted_ns=30"]),
]


def run_once(cmd, cwd):
    """Runs cmd in cwd; returns (stdout, wall s, user+sys s, peak RSS MiB)."""
    t0 = time.monotonic()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=cwd)
    out = proc.stdout.read()
    err = proc.stderr.read()
    _, status, ru = os.wait4(proc.pid, 0)
    wall = time.monotonic() - t0
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"{' '.join(cmd)}: exit {os.waitstatus_to_exitcode(status)}\n{err.decode()}")
    return out, wall, ru.ru_utime + ru.ru_stime, ru.ru_maxrss / 1024.0


def scenario_cmd(binary, path, sets):
    cmd = [binary, "run", path, "--json"]
    for s in sets:
        cmd += ["--set", s]
    return cmd


def results_of(doc):
    doc = dict(doc)
    doc.pop("perf", None)
    return doc


# The whole-program rows: what `reproduce` runs, without a scenario file.
QUICK, FULL = "reproduce --quick", "reproduce (full)"
REPRODUCE = {QUICK: ["reproduce", "--quick", "--json"], FULL: ["reproduce", "--json"]}


def measure(binary, name, path, sets, cwd=ROOT):
    if path is None:
        out, wall, cpu, rss = run_once([binary] + REPRODUCE[name], cwd)
        return {"wall": wall, "cpu": cpu, "rss": rss, "results": results_of(json.loads(out))}
    out, wall, cpu, rss = run_once(scenario_cmd(binary, path, sets), cwd)
    doc = json.loads(out)
    sim_s = doc["simulated_ns"] * 1e-9
    vcpus = sum(vm["vcpus"] for vm in doc["vms"])
    return {"wall": wall, "cpu": cpu, "rss": rss, "sim_s": sim_s, "vcpus": vcpus,
            "events": doc["perf"].get("events"),
            "all_events": "events_by_kind" in doc["perf"], "results": results_of(doc)}


def med(rows, key):
    return statistics.median(r[key] for r in rows)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pvlock", required=True, help="binary A")
    ap.add_argument("--vs", help="binary B, run in turn with A")
    ap.add_argument("--vs-root", help="B runs in this tree, on its own scenario files")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--only", action="append", help="scenario names containing this (repeatable)")
    ap.add_argument("--reproduce", action="store_true", help="add `reproduce --quick`")
    ap.add_argument("--reproduce-full", action="store_true",
                    help="add the full `reproduce` (minutes per run: see --full-runs)")
    ap.add_argument("--full-runs", type=int, default=1,
                    help="runs of the full `reproduce` row (default 1)")
    ap.add_argument("--json", action="store_true", help="print the rows as JSON")
    ap.add_argument("--json-out", help="write the rows and labels to this file")
    ap.add_argument("--label-a", default="A", help="what binary A is (for --json-out)")
    ap.add_argument("--label-b", default="B", help="what binary B is (for --json-out)")
    a = ap.parse_args()
    if a.runs < 1:
        ap.error("--runs: at least 1")
    if a.full_runs < 1:
        ap.error("--full-runs: at least 1")
    if a.vs_root and not a.vs:
        ap.error("--vs-root: needs --vs")
    if a.vs_root and not os.path.isdir(a.vs_root):
        ap.error(f"--vs-root: {a.vs_root}: not a directory")
    b_root = os.path.abspath(a.vs_root) if a.vs_root else ROOT
    selected = [s for s in SCENARIOS if not a.only or any(o in s[0] for o in a.only)]
    if a.reproduce:
        selected.append((QUICK, None, []))
    if a.reproduce_full:
        selected.append((FULL, None, []))
    rows = []
    hdr = (f"{'scenario':<20} {'wall s':>7} {'CPU s':>7} {'Mev/s':>7} {'sim-s/s':>8} "
           f"{'vCPU-s/s':>9} {'MiB':>6}")
    if a.vs:
        hdr += f" {'B wall':>7} {'B CPU':>7} {'B/A wall':>8} {'B/A CPU':>8} same"
    print(hdr + "\n  (rates per wall second; CPU figures: user + sys of the process)")
    for name, path, sets in selected:
        ra, rb = [], []
        runs = a.full_runs if name == FULL else a.runs
        for _ in range(runs):
            ra.append(measure(a.pvlock, name, path, sets))
            if a.vs:
                rb.append(measure(a.vs, name, path, sets, b_root))
        row = {"scenario": name, "runs": runs, "wall_s": med(ra, "wall"),
               "cpu_s": med(ra, "cpu"), "peak_rss_mib": med(ra, "rss")}
        line = f"{name:<20} {row['wall_s']:>7.2f} {row['cpu_s']:>7.2f}"
        if path is not None:
            ev = ra[0]["events"] if ra[0]["all_events"] else None
            row["events"] = ev
            row["simulated_s"] = ra[0]["sim_s"]
            row["vcpus"] = ra[0]["vcpus"]
            for unit, key in (("wall", "wall"), ("cpu", "cpu")):
                t = row[f"{key}_s"]
                row[f"events_per_{unit}_s"] = ev / t if ev else None
                row[f"sim_s_per_{unit}_s"] = ra[0]["sim_s"] / t
                row[f"vcpu_s_per_{unit}_s"] = ra[0]["sim_s"] * ra[0]["vcpus"] / t
            evs = f"{row['events_per_wall_s'] / 1e6:>7.2f}" if ev else f"{'-':>7}"
            line += (f" {evs} {row['sim_s_per_wall_s']:>8.3f} {row['vcpu_s_per_wall_s']:>9.2f}")
        else:
            line += f" {'-':>7} {'-':>8} {'-':>9}"
        line += f" {row['peak_rss_mib']:>6.0f}"
        if a.vs:
            row["b_wall_s"] = med(rb, "wall")
            row["b_cpu_s"] = med(rb, "cpu")
            row["b_peak_rss_mib"] = med(rb, "rss")
            row["ratio_wall"] = statistics.median(y["wall"] / x["wall"] for x, y in zip(ra, rb))
            row["ratio_cpu"] = statistics.median(y["cpu"] / x["cpu"] for x, y in zip(ra, rb))
            same = None if a.vs_root else all(x["results"] == y["results"] for x, y in zip(ra, rb))
            row["same_results"] = same
            line += (f" {row['b_wall_s']:>7.2f} {row['b_cpu_s']:>7.2f} {row['ratio_wall']:>8.2f}"
                     f" {row['ratio_cpu']:>8.2f}"
                     f" {'n/a' if same is None else 'yes' if same else 'NO'}")
        print(line, flush=True)
        rows.append(row)
    if a.json:
        print(json.dumps(rows, indent=1))
    if a.json_out:
        doc = {"runs": a.runs, "a": a.label_a, "b": a.label_b if a.vs else None,
               "b_own_tree": bool(a.vs_root), "rows": rows}
        with open(a.json_out, "w") as f:
            json.dump(doc, f, indent=1)
            f.write("\n")
    if a.vs and not a.vs_root and not all(r["same_results"] for r in rows):
        sys.exit(1)


if __name__ == "__main__":
    main()
