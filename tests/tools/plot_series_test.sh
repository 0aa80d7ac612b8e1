#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# plot_series_test.sh PVLOCK PLOT_PY SCENARIO OUT_DIR: a `run --series --json` result of an
# over-committed PV run becomes a PNG chart. Exit 77 = skipped (no matplotlib).
set -eu
pv=$1 plot=$2 scenario=$3 out=$4
. "$(dirname "$0")/common.sh"
require_matplotlib
rm -rf "$out"
mkdir -p "$out"
"$pv" run "$scenario" --series 1 --json > "$out/run.json"
python3 "$plot" series "$out/run.json" "$out" > "$out/list"
png=$(cat "$out/list")
check_png "$png"
# A run without a series is refused with a message, not a traceback.
"$pv" run "$scenario" --json > "$out/plain.json"
if python3 "$plot" series "$out/plain.json" "$out/x" > "$out/err" 2>&1 ||
  ! grep -q "has no 'series'" "$out/err"; then
  echo "FAIL: a run without --series was not refused clearly:"
  cat "$out/err"
  exit 1
fi
echo "OK: $png"
