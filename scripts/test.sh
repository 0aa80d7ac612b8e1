#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# README command (2): configure, build (release) and run the whole default test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc)
cmake --preset release >/dev/null
cmake --build --preset release -j"$jobs"
ctest --preset release -j"$jobs" --timeout 600
