#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# stalls_test.sh PVLOCK PLOT_TRACE_PY SCENARIO OUT_DIR: `plot_trace.py stalls` on a real
# trace of a PV over-commit run: the VM's vCPU time by state adds up to 100 %, N vCPU rows
# ranked by time preempted, directed yields counted, and clear refusals of bad input.
set -eu
pv=$1 tool=$2 scenario=$3 out=$4
rm -rf "$out"
mkdir -p "$out"
"$pv" run "$scenario" --trace "$out/t.json" --trace-window 0.01:0.014 > /dev/null 2> "$out/run.err"
fail() {
  echo "FAIL: $1"
  cat "$out/out"
  exit 1
}
python3 "$tool" stalls "$out/t.json" vm0 10000 14000 4 > "$out/out"
head -1 "$out/out" | grep -q '^vm0, 10000.0-14000.0 us, 16 vCPUs: preempted ' ||
  fail "no summary line for vm0's 16 vCPUs over the window"
# The shares of the summary line add up to 100 (every vCPU is in some state all the time).
head -1 "$out/out" | tr ',' '\n' | sed -n 's/.* \([0-9.]*\) %.*/\1/p' |
  awk '{ s += $1 } END { if (s < 99.5 || s > 100.5) exit 1 }' || fail "shares do not add up to 100"
[ "$(grep -c '^  vm0/vcpu' "$out/out")" -eq 4 ] || fail "not 4 vCPU rows"
# Rows are ranked by time preempted, longest first.
grep '^  vm0/vcpu' "$out/out" | awk '{ print $3 }' | sort -rn -c 2> /dev/null ||
  fail "rows not ranked by time preempted"
# An over-committed PV guest is preempted and yielded to.
awk '/^  vm0/ && $NF > 0 { found = 1 } END { exit !found }' "$out/out" ||
  fail "no directed yield aimed at any listed vCPU"
# The whole trace by default; bad input refused with a message.
python3 "$tool" stalls "$out/t.json" vm1 > "$out/out"
[ "$(grep -c '^  vm1/vcpu' "$out/out")" -eq 8 ] || fail "default N is not 8"
if python3 "$tool" stalls "$out/t.json" vm9 > "$out/out" 2>&1 ||
  ! grep -q "no VM 'vm9'" "$out/out"; then
  fail "an unknown VM was not refused clearly"
fi
if python3 "$tool" stalls "$out/t.json" vm0 14000 10000 > "$out/out" 2>&1 ||
  ! grep -q "must be before END" "$out/out"; then
  fail "START after END was not refused clearly"
fi
if python3 "$tool" stalls "$out/t.json" vm0 x 10000 > "$out/out" 2>&1 ||
  ! grep -q "plot_trace.py stalls:" "$out/out"; then
  fail "a non-numeric START was not refused clearly"
fi
echo "OK"
