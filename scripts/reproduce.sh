#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# README command (1): install what is missing, build, and run the main job: every seed's
# experiment in the simulator, published figures beside simulated ones.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
cmake --preset release >/dev/null
cmake --build --preset release -j"$(nproc)"
build/pvlock reproduce --quick "$@"
