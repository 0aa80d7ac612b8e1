#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# ctest sweep.shards_merge_equal_unsharded: 4 shards run with GNU parallel, merged, equal the
# unsharded sweep point for point outside "perf"; a second run adds no lines.
#   shards.sh PVLOCK_BINARY
set -euo pipefail
pv=$1
here=$(cd "$(dirname "$0")" && pwd)
scn=$here/data/small.toml
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
vary=(--vary 'vm[0].guest.lock=tas,mcs' --vary 'vm[0].count=1,2' --seeds 2 --quiet)

"$pv" sweep "$scn" "${vary[@]}" --jobs 2 --out "$tmp/whole.jsonl"
parallel --will-cite -q -j 2 "$pv" sweep "$scn" "${vary[@]}" --shard '{}/4' \
  --out "$tmp/shard-{}.jsonl" ::: 0 1 2 3
"$pv" merge "$tmp"/shard-*.jsonl --out "$tmp/merged.jsonl" 2>/dev/null
"$pv" merge "$tmp/whole.jsonl" --out "$tmp/whole-sorted.jsonl" 2>/dev/null

lines=$(wc -l < "$tmp/merged.jsonl")
if [[ $lines -ne 8 ]]; then
  echo "FAIL: merged shards have $lines lines, expected 8" >&2
  exit 1
fi
strip() { jq -c 'del(.result.perf)' "$1"; }
if ! diff <(strip "$tmp/whole-sorted.jsonl") <(strip "$tmp/merged.jsonl") >&2; then
  echo "FAIL: merged shards differ from the unsharded sweep (outside perf)" >&2
  exit 1
fi
# Resuming adds nothing.
"$pv" sweep "$scn" "${vary[@]}" --jobs 2 --out "$tmp/whole.jsonl"
if [[ $(wc -l < "$tmp/whole.jsonl") -ne 8 ]]; then
  echo "FAIL: a second run added lines" >&2
  exit 1
fi
"$pv" summarize "$tmp/merged.jsonl"
echo "PASS: 4 shards merged == unsharded (8 points)"
