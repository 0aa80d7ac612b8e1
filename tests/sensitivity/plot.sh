#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# ctest sensitivity.plot_png: --plot writes the screening's JSON and one mu*-sigma PNG per
# effect (checked by their magic bytes). Exit 77 = skipped (no python3-matplotlib).
#   plot.sh PVLOCK_BINARY SOURCE_DIR
set -euo pipefail
pv=$1 src=$2
if ! python3 -c 'import matplotlib' 2>/dev/null &&
  ! "${PVLOCK_PYTHON:-/usr/bin/python3}" -c 'import matplotlib' 2>/dev/null; then
  echo "SKIP: python3-matplotlib is not installed"
  exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$pv" sensitivity "$src/experiments/seed004" --params costs.vcpu_switch_ns,fio.hold_ns \
  --trajectories 1 --seeds 2 --quiet --plot "$tmp/plots" > /dev/null 2> "$tmp/list"
test -s "$tmp/plots/seed004.json"
n=0
for png in $(grep '\.png$' "$tmp/list"); do
  if [[ "$(head -c 4 "$png" | od -An -c | tr -d ' ')" != '211PNG' ]]; then
    echo "FAIL: $png is not a PNG" >&2
    exit 1
  fi
  n=$((n + 1))
done
if [[ $n -ne 1 ]]; then
  echo "FAIL: $n PNG files, expected 1 (seed 004 has one effect)" >&2
  exit 1
fi
echo "PASS: $n PNG"
