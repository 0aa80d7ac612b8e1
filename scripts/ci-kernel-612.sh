#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# CI: the kernel:* locks built from a second kernel tree (Debian's linux-source-6.12), to show
# the shim (src/kernel/) is not tuned to the default 6.1 tree. Builds only the CLI and the
# kernel suite in build-k612/, checks that the build really took 6.12's files, runs the kernel
# suite and tortures each kernel lock on real threads and in the simulator.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc)
tarball=/usr/src/linux-source-6.12.tar.xz
[ -f "$tarball" ] || { echo "ci-kernel-612: $tarball missing (scripts/install-deps.sh installs it)" >&2; exit 1; }

cmake --preset release -B build-k612 -DPVLOCK_KERNEL_TARBALL="$tarball" >/dev/null
cmake --build build-k612 -j"$jobs" --target pvlock_cli kernel_tests

version=$(build-k612/pvlock locks | grep -o 'built from Linux 6\.12[.0-9]*' | head -1 || true)
if [ -z "$version" ]; then
  echo "ci-kernel-612: 'pvlock locks' of build-k612 does not name a 6.12 kernel:" >&2
  build-k612/pvlock locks | grep kernel: >&2 || true
  exit 1
fi
echo "ci-kernel-612: kernel locks $version"

build-k612/tests/kernel_tests

for lock in kernel:qspinlock kernel:pvqspinlock kernel:osq; do
  build-k612/pvlock torture --lock "$lock" --threads 8 --duration 3
  build-k612/pvlock torture --lock "$lock" --world sim --threads 64 --duration 2
done
