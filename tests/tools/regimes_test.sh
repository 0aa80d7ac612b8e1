#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# regimes_test.sh PVLOCK REGIMES_PY SCENARIO OUT_DIR: tools/regimes.py on a real
# `run --series --json` result: one row per VM and one for all, shares that add up to 100,
# thresholds that put every interval in one class, and clear refusals of bad input.
set -eu
pv=$1 regimes=$2 scenario=$3 out=$4
rm -rf "$out"
mkdir -p "$out"
"$pv" run "$scenario" --series 5 --json > "$out/run.json"
fail() {
  echo "FAIL: $1"
  cat "$out/out"
  exit 1
}
# Every interval is above a threshold of -1 ops/s: all fast, nothing collapsed.
python3 "$regimes" --unit ops/s --fast -1 --slow -1 "$out/run.json" "$out/run.json" > "$out/out"
[ "$(grep -c 'run.json vm' "$out/out")" -eq 4 ] || fail "not one row per VM of each run"
grep -q '^all ' "$out/out" || fail "no 'all' row"
awk 'NR > 1 && ($(NF-7) != "100.0" || $(NF-5) != "0.0") { exit 1 }' "$out/out" ||
  fail "every interval should be fast"
# ... and below a threshold of 1e12: all collapsed.
python3 "$regimes" --unit ops/s --fast 2e12 --slow 1e12 "$out/run.json" > "$out/out"
awk 'NR > 1 && $(NF-5) != "100.0" { exit 1 }' "$out/out" || fail "every interval should be collapsed"
# Between the two, the three shares of each row add up to 100, to within the rounding of
# three figures printed to 0.1 (each off by up to 0.05: 83.3 + 8.3 + 8.3 for 10/1/1 of 12).
python3 "$regimes" "$out/run.json" --unit ops/s --fast 400000 --slow 200000 > "$out/out"
awk 'NR > 1 { s = $(NF-7) + $(NF-6) + $(NF-5); if (s < 99.8 || s > 100.2) exit 1 }' "$out/out" ||
  fail "shares do not add up to 100"
# A run without a series and inverted thresholds are refused with a message.
"$pv" run "$scenario" --json > "$out/plain.json"
if python3 "$regimes" "$out/plain.json" > "$out/out" 2>&1 ||
  ! grep -q "has no 'series'" "$out/out"; then
  fail "a run without --series was not refused clearly"
fi
if python3 "$regimes" --fast 1 --slow 2 "$out/run.json" > "$out/out" 2>&1 ||
  ! grep -q "must not exceed" "$out/out"; then
  fail "--slow above --fast was not refused clearly"
fi
# The default thresholds are ebizzy's records/s: a lock loop's ops/s are refused, not
# classified against them.
if python3 "$regimes" "$out/run.json" > "$out/out" 2>&1 ||
  ! grep -q "scores in ops/s, the thresholds (--fast 15000, --slow 8000) are in records/s" "$out/out"; then
  fail "records/s thresholds on an ops/s run were not refused clearly"
fi
echo "OK"
