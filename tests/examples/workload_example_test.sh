#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# workload_example_test.sh PVLOCK SCENARIO OUT_DIR [--set k=v ...]: `pvlock run SCENARIO
# --json` exits 0 and every VM's entry has a positive, finite score with its unit; a
# latency-scored run also has its section's p50, p99 and p99.9 in order, and a wall-scored
# run the job it timed. A second run gives the same JSON outside `perf` (determinism).
set -eu
pv=$1 scenario=$2 out=$3
shift 3
rm -rf "$out"
mkdir -p "$out"
"$pv" run "$scenario" --json "$@" > "$out/a.json"
"$pv" run "$scenario" --json "$@" > "$out/b.json"
python3 - "$out/a.json" "$out/b.json" <<'PY'
import json, math, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
def fail(msg):
    print("FAIL:", msg)
    sys.exit(1)
vms = a.get("vms") or fail("no 'vms' in the JSON")
for vm in vms:
    name = vm.get("name", "?")
    score, unit = vm.get("score"), vm.get("unit")
    if not isinstance(score, (int, float)) or not math.isfinite(score) or score <= 0:
        fail(f"{name}: score {score!r} is not a positive number")
    if not unit:
        fail(f"{name}: no unit")
    if unit.startswith("us (p"):
        sections = vm.get("sections") or fail(f"{name}: a latency score without sections")
        for s, v in sections.items():
            p = [v.get(k) for k in ("p50_us", "p99_us", "p99.9_us")]
            if any(not isinstance(x, (int, float)) for x in p) or not p[0] <= p[1] <= p[2]:
                fail(f"{name}: section {s} percentiles {p} missing or out of order")
            if v.get("samples", 0) < 100:
                fail(f"{name}: section {s} has {v.get('samples')} samples, fewer than 100")
    if unit == "ms":
        job = vm.get("job") or fail(f"{name}: a wall-time score without its job")
        if job.get("done_ms", 0) <= 0:
            fail(f"{name}: the job was not done")
    print(f"{name}: {score:.6g} {unit}")
for j in (a, b):
    j.pop("perf", None)
if a != b:
    fail("two runs of the same scenario and seed differ outside 'perf'")
print("OK")
PY
