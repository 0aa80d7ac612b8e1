#!/usr/bin/env bash
# README command (1): install what is missing, build, and run the main job.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
cmake --preset release >/dev/null
cmake --build --preset release -j"$(nproc)"
# Until `pvlock reproduce` lands, the main job is a torture run of every lock.
for lock in $(build/pvlock locks --names); do
  [ "$lock" = busted ] && continue
  build/pvlock torture --lock "$lock" --threads 8 --duration 1
done
