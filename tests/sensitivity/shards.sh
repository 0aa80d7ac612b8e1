#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# ctest sensitivity.shards_merge_equal_one_run: a tiny screening of seed 004 run in one go and
# as 3 shards merged with `pvlock merge` gives the same JSON; resuming runs nothing new.
#   shards.sh PVLOCK_BINARY SOURCE_DIR
set -euo pipefail
pv=$1 src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
args=("$src/experiments/seed004" --params costs.vcpu_switch_ns,fio.hold_ns --trajectories 2
      --seeds 2 --quiet --json)
"$pv" sensitivity "${args[@]}" --jobs 2 > "$tmp/one.json"
for i in 0 1 2; do
  "$pv" sensitivity "${args[@]}" --shard "$i/3" --out "$tmp/shard-$i.jsonl" > /dev/null
done
"$pv" merge "$tmp"/shard-*.jsonl --out "$tmp/merged.jsonl" 2>/dev/null
"$pv" sensitivity "${args[@]}" --out "$tmp/merged.jsonl" > "$tmp/merged.json" 2> "$tmp/err"
if ! diff "$tmp/one.json" "$tmp/merged.json" >&2; then
  echo "FAIL: the merged shards' screening differs from the one run's" >&2
  exit 1
fi
lines=$(wc -l < "$tmp/merged.jsonl")
"$pv" sensitivity "${args[@]}" --out "$tmp/merged.jsonl" > /dev/null
if [[ $(wc -l < "$tmp/merged.jsonl") -ne $lines ]]; then
  echo "FAIL: resuming a complete results file ran points again" >&2
  exit 1
fi
grep -q '"ranking"' "$tmp/one.json"
echo "PASS: 3 shards merged == one run ($lines runs)"
