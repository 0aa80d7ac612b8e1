#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# plot_trace_test.sh PVLOCK PLOT_TRACE_PY SCENARIO OUT_DIR: a PV over-commit run's trace
# yields pv_wait_early chains (each naming a predecessor) and a vCPU chart (a PNG).
# Exit 77 = skipped (no matplotlib).
set -eu
pv=$1 tool=$2 scenario=$3 out=$4
. "$(dirname "$0")/common.sh"
require_matplotlib
rm -rf "$out"
mkdir -p "$out"
"$pv" run "$scenario" --trace "$out/t.json" --trace-window 0.01:0.014 > /dev/null 2> "$out/run.err"
python3 "$tool" cascades "$out/t.json" vm0 > "$out/cascades.txt"
if ! grep -Eq '<- prev vm0/vcpu[0-9]+ \((halted|preempted|running)\)' "$out/cascades.txt"; then
  echo "FAIL: no pv_wait_early chain in $out/cascades.txt"
  exit 1
fi
python3 "$tool" vcpus "$out/t.json" vm0 10000 14000 "$out/vcpus.png" 8 > /dev/null
check_png "$out/vcpus.png"
echo "OK: $(grep -c '<- prev' "$out/cascades.txt") pv_wait_early links, vcpus.png"
