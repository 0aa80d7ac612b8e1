#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# plot_test.sh PLOT_PY DATA_DIR OUT_DIR: tools/plot.py turns the reproduce and sweep fixtures
# into PNG files (checked by their magic bytes). Exit 77 = skipped (no matplotlib).
set -eu
plot=$1 data=$2 out=$3
. "$(dirname "$0")/common.sh"
require_matplotlib
rm -rf "$out"
mkdir -p "$out"
python3 "$plot" reproduce "$data/reproduce.json" "$out/reproduce" > "$out/reproduce.list"
python3 "$plot" sweep "$data/sweep.jsonl" vm[0].count "$out/sweep" > "$out/sweep.list"
n=0
for png in $(cat "$out/reproduce.list" "$out/sweep.list"); do
  check_png "$png"
  n=$((n + 1))
done
expected=$(( $(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["experiments"]))' "$data/reproduce.json") + 1 ))
if [ "$n" -ne "$expected" ]; then
  echo "FAIL: $n PNG files, expected $expected"
  exit 1
fi
# A sweep file without results, or mixing score units, is refused with a message: one chart
# has one unit on its axis.
: > "$out/empty.jsonl"
if python3 "$plot" sweep "$out/empty.jsonl" vm[0].count "$out/x" > "$out/err" 2>&1 ||
  ! grep -q "holds no results" "$out/err"; then
  echo "FAIL: an empty sweep file was not refused clearly:"
  cat "$out/err"
  exit 1
fi
head -1 "$data/sweep.jsonl" > "$out/mixed.jsonl"
head -1 "$data/sweep.jsonl" | sed 's#"ops/s"#"records/s"#g' >> "$out/mixed.jsonl"
if python3 "$plot" sweep "$out/mixed.jsonl" vm[0].count "$out/x" > "$out/err" 2>&1 ||
  ! grep -q "mixes score units" "$out/err"; then
  echo "FAIL: a sweep file mixing units was not refused clearly:"
  cat "$out/err"
  exit 1
fi
echo "OK: $n PNG files"
