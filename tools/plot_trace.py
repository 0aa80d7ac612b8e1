#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Charts and summaries of a `pvlock run --trace` file (python3-matplotlib, Agg backend).

  plot_trace.py cascades TRACE.json [VM]            lists bursts of pv_wait_early (>= 3
                                                   vCPUs of one VM within 50 us): the
                                                   seed-000 cascade; each decision with the
                                                   predecessor it looked at and its state
  plot_trace.py stalls TRACE.json VM [START END] [N]
                                                   where VM's vCPU time went between START
                                                   and END (us; default: the whole trace),
                                                   and the N (default 8) vCPUs preempted
                                                   longest, each with the directed yields
                                                   (yield_to) aimed at it: a stalled guest's
                                                   lock holder is the one preempted for long
                                                   without spinning (no matplotlib needed)
  plot_trace.py vcpus TRACE.json VM START END OUT.png [N]
                                                   the vCPU tracks of VM between START and
                                                   END (us of simulated time), the N (default
                                                   16) vCPUs with the most pv_wait_early /
                                                   halt / kick events there, coloured by state
"""
import json
import sys
from collections import defaultdict


def load(path):
    with open(path) as f:
        trace = json.load(f)
    vm_pid = {}
    events = []
    for e in trace["traceEvents"]:
        if e["ph"] == "M":
            if e["name"] == "process_name":
                vm_pid[e["args"]["name"].split(" ")[0]] = e["pid"]
            continue
        events.append(e)
    return vm_pid, events


def cascades(path, vm=None, gap_us=50.0, min_len=3):
    vm_pid, events = load(path)
    names = {pid: name for name, pid in vm_pid.items()}
    early = defaultdict(list)
    for e in events:
        if e["ph"] == "i" and e["name"] == "pv_wait_early":
            if vm is None or names.get(e["pid"]) == vm:
                args = e.get("args", {})
                early[e["pid"]].append((e["ts"], e["tid"] - 1, args.get("prev", "?"),
                                        args.get("detail", "?")))
    rows = []
    for pid, evs in sorted(early.items()):
        evs.sort()
        burst = [evs[0]]
        for ev in evs[1:] + [(float("inf"), -1, "", "")]:
            if ev[0] - burst[-1][0] <= gap_us:
                burst.append(ev)
                continue
            cpus = sorted({b[1] for b in burst})
            if len(cpus) >= min_len:
                rows.append((burst[0][0], burst[-1][0], names[pid], cpus, burst))
            burst = [ev]
    return rows


# What a vCPU track's span says the vCPU was doing, and its colour in charts (the first
# prefix that matches; "" is a task running).
TRACK_STATES = [
    ("halted (pv_wait)", "halted", "#c44e52"),
    ("idle (HLT)", "halted", "#dddddd"),
    ("preempted", "preempted", "#555555"),
    ("woken, waiting for pCPU", "waking", "#8172b2"),
    ("PLE exit", "host", "#937860"),
    ("VM entry", "host", "#937860"),
    ("spin: ", "spinning", "#dd8452"),
    ("", "task", "#55a868"),
]


def track_state(name):
    return next((state, c) for prefix, state, c in TRACK_STATES if name.startswith(prefix))


def stalls(path, vm, start=None, end=None, n=8):
    """VM's vCPU time by state over [start, end] us, and the n vCPUs preempted longest."""
    vm_pid, events = load(path)
    if vm not in vm_pid:
        raise SystemExit(f"plot_trace.py: no VM '{vm}' in {path} (have {sorted(vm_pid)})")
    pid = vm_pid[vm]
    spans = [e for e in events if e["pid"] == pid and e["ph"] == "X"]
    if not spans:
        raise SystemExit(f"plot_trace.py: no vCPU spans of {vm} in {path}")
    if start is None:
        start = min(e["ts"] for e in spans)
        end = max(e["ts"] + e["dur"] for e in spans)
    if not start < end:
        raise SystemExit(f"plot_trace.py: START ({start}) must be before END ({end})")
    per = defaultdict(lambda: defaultdict(float))
    for e in spans:
        a, b = max(e["ts"], start), min(e["ts"] + e["dur"], end)
        if b > a:
            per[e["tid"] - 1][track_state(e["name"])[0]] += b - a
    aimed = defaultdict(int)
    prefix = f"{vm}/vcpu"
    for e in events:
        if e["ph"] == "i" and e["name"] == "yield_to" and start <= e["ts"] <= end:
            to = e.get("args", {}).get("to", "")
            if to.startswith(prefix):
                aimed[int(to[len(prefix):])] += 1
    totals = defaultdict(float)
    for times in per.values():
        for state, t in times.items():
            totals[state] += t
    span = (end - start) * len(per)
    order = ["preempted", "spinning", "halted", "waking", "host", "task"]
    shares = ", ".join(f"{state} {100 * totals[state] / span:.1f} %" for state in order)
    lines = [f"{vm}, {start:.1f}-{end:.1f} us, {len(per)} vCPUs: {shares} of their time",
             f"the {min(n, len(per))} vCPUs preempted longest (a lock holder is preempted long "
             "without spinning), with the directed yields aimed at each:"]
    longest = sorted(per, key=lambda c: (-per[c]["preempted"], c))[:n]
    for c in longest:
        t = per[c]
        lines.append(f"  {prefix}{c:<3d} preempted {t['preempted']:8.1f} us  spinning "
                     f"{t['spinning']:8.1f}  halted {t['halted']:8.1f}  task {t['task']:8.1f}"
                     f"  yields aimed at it {aimed[c]}")
    return lines


def colour(name):
    return track_state(name)[1]


def plot_vcpus(path, vm, start, end, out, n=16):
    from pvlock_plotting import pyplot

    plt = pyplot("plot_trace.py")
    from matplotlib.patches import Patch

    vm_pid, events = load(path)
    if vm not in vm_pid:
        raise SystemExit(f"plot_trace.py: no VM '{vm}' in {path} (have {sorted(vm_pid)})")
    pid = vm_pid[vm]
    mine = [e for e in events if e["pid"] == pid and e["ts"] < end and e["ts"] + e.get("dur", 0) > start]
    activity = defaultdict(int)
    for e in mine:
        if e["ph"] == "i" and e["name"] in ("pv_wait_early", "halt", "pv_kick"):
            activity[e["tid"]] += 1
    tids = sorted(sorted(activity, key=lambda t: -activity[t])[:n])
    if not tids:
        raise SystemExit("plot_trace.py: no pv_wait_early/halt/pv_kick events in that range")
    row = {t: i for i, t in enumerate(tids)}
    fig, ax = plt.subplots(figsize=(13, 0.38 * len(tids) + 1.6))
    for e in mine:
        if e["tid"] not in row:
            continue
        y = row[e["tid"]]
        if e["ph"] == "X":
            a = max(e["ts"], start)
            b = min(e["ts"] + e["dur"], end)
            ax.barh(y, b - a, left=a, height=0.7, color=colour(e["name"]), linewidth=0)
        elif e["name"] == "pv_wait_early":
            ax.plot(e["ts"], y, "v", color="black", markersize=6)
        elif e["name"] == "pv_kick":
            ax.plot(e["ts"], y, "^", color="#1f77b4", markersize=6)
        elif e["name"] == "preempt":
            ax.plot(e["ts"], y, "x", color="black", markersize=6)
    ax.set_yticks(range(len(tids)))
    ax.set_yticklabels([f"{vm}/vcpu{t - 1}" for t in tids], fontsize=7)
    ax.set_xlim(start, end)
    ax.set_xlabel("simulated time (us)")
    ax.invert_yaxis()
    legend = [Patch(color=c, label=(p or "running task").strip(": ")) for p, _, c in TRACK_STATES
              if p not in ("VM entry",)]
    legend += [plt.Line2D([], [], marker=m, color=c, linestyle="", label=l) for m, c, l in
               (("v", "black", "pv_wait_early"), ("^", "#1f77b4", "pv_kick (sender)"),
                ("x", "black", "preempted by host"))]
    ax.legend(handles=legend, fontsize=7, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    ax.set_title(f"{vm}: vCPU states {start:.0f}-{end:.0f} us", fontsize=9)
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    plt.close(fig)
    return [out]


def main(argv):
    if len(argv) >= 3 and argv[1] == "cascades":
        for a, b, vm, cpus, burst in cascades(argv[2], argv[3] if len(argv) > 3 else None):
            print(f"{a:.3f}-{b:.3f} us  {vm}  {len(cpus)} vCPUs wait early: {cpus}")
            for ts, cpu, prev, state in burst:
                print(f"    {ts:.3f}  {vm}/vcpu{cpu} <- prev {prev} ({state})")
        return 0
    if len(argv) in (4, 5, 6, 7) and argv[1] == "stalls":
        try:
            window = (float(argv[4]), float(argv[5])) if len(argv) >= 6 else (None, None)
            n = int(argv[6]) if len(argv) == 7 else int(argv[4]) if len(argv) == 5 else 8
        except ValueError as err:
            raise SystemExit(f"plot_trace.py stalls: {err}") from None
        for line in stalls(argv[2], argv[3], window[0], window[1], n):
            print(line)
        return 0
    if len(argv) >= 7 and argv[1] == "vcpus":
        n = int(argv[7]) if len(argv) > 7 else 16
        for p in plot_vcpus(argv[2], argv[3], float(argv[4]), float(argv[5]), argv[6], n):
            print(p)
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
