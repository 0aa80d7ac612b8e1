#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Installs (with apt, Debian 12) every package pvlock's build, tests, benchmarks and plots
# need, and only those that are missing. Idempotent.
set -euo pipefail

packages=(
  build-essential cmake pkg-config git
  libgtest-dev libgmock-dev libbenchmark-dev
  libboost-context-dev libtomlplusplus-dev libcli11-dev nlohmann-json3-dev libfmt-dev
  libck-dev
  libabsl-dev                # optional peer lock absl_mutex in `pvlock bench`
  clang libclang-rt-14-dev   # libFuzzer target for the scenario parser
  clang-format               # scripts/check-format.sh (CI)
  python3 python3-matplotlib # tools/plot.py
  parallel                   # sharded sweep test
  ccache                     # faster rebuilds of the several build trees (optional)
  linux-source-6.1           # the kernel's kernel/locking sources: the kernel:* locks
  linux-source-6.12          # (6.12, from bookworm-security) the same against a newer tree
  coccinelle                 # spatch: kernel variants given as semantic patches (src/kernel/changes)
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages present"
  exit 0
fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
echo "install-deps: installing ${missing[*]}"
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
