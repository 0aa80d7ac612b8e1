#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Fuzz the scenario loader with libFuzzer for SECONDS (default 60):
#   scripts/fuzz-scenario.sh [SECONDS] [--save]
# Builds tests/fuzz/ with clang in build-fuzz/ (separate from the gcc build), runs over the
# saved corpus tests/fuzz/corpus/ (new inputs go to build-fuzz/corpus/; --save merges the
# ones that add coverage back into tests/fuzz/corpus/). A crash, hang or abort leaves its
# input in build-fuzz/artifacts/ and makes the script exit non-zero: turn it into a test in
# tests/scenario/ (regression_test.cpp).
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
save=${2:-}
if ! [[ $seconds =~ ^[0-9]+$ ]] || [[ $seconds -eq 0 ]]; then
  echo "usage: $0 SECONDS [--save]" >&2
  exit 2
fi
if [[ -n $save && $save != --save ]]; then
  echo "usage: $0 SECONDS [--save]" >&2
  exit 2
fi
cxx=$(command -v clang++-14 || command -v clang++ || true)
if [[ -z $cxx ]]; then
  echo "$0: clang++ not found (apt-get install clang-14 libclang-rt-14-dev)" >&2
  exit 2
fi
cmake -S tests/fuzz -B build-fuzz -DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build-fuzz -j2
mkdir -p build-fuzz/corpus build-fuzz/artifacts tests/fuzz/corpus
build-fuzz/scenario_fuzz build-fuzz/corpus tests/fuzz/corpus \
  -dict=tests/fuzz/scenario.dict -max_total_time="$seconds" -timeout=5 -rss_limit_mb=2048 \
  -max_len=4096 -artifact_prefix=build-fuzz/artifacts/ -print_final_stats=1
if [[ $save == --save ]]; then
  build-fuzz/scenario_fuzz -merge=1 tests/fuzz/corpus build-fuzz/corpus -max_len=4096
fi
