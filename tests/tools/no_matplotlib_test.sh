#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# The plotting tools run with the first python3 on PATH; when neither it nor the python3 they
# fall back to ($PVLOCK_PYTHON) can import matplotlib they say so and exit non-zero, never
# with a traceback.
#   no_matplotlib_test.sh TOOLS_DIR DATA_DIR OUT_DIR
set -uo pipefail
tools=$1 data=$2 out=$3
rm -rf "$out"
mkdir -p "$out/bin"
# A python3 first on PATH without site-packages: it has the standard library only.
real=$(command -v python3)
printf '#!/bin/sh\nexec %s -S "$@"\n' "$real" > "$out/bin/python3"
chmod +x "$out/bin/python3"
export PATH="$out/bin:$PATH" PVLOCK_PYTHON="$out/bin/python3"
if python3 -c 'import matplotlib' 2> /dev/null; then
  echo "FAIL: the python3 without site-packages still imports matplotlib"
  exit 1
fi
fail=0
check() {
  local name=$1
  shift
  if "$@" > "$out/$name.out" 2>&1; then
    echo "FAIL: $name exited 0 without matplotlib"
    fail=1
  elif ! grep -q "^$name: needs matplotlib, which .* cannot import" "$out/$name.out" ||
    grep -q Traceback "$out/$name.out"; then
    echo "FAIL: $name did not say clearly that matplotlib is missing:"
    cat "$out/$name.out"
    fail=1
  fi
}
check plot.py "$tools/plot.py" reproduce "$data/reproduce.json" "$out/plots"
check plot_bench.py "$tools/plot_bench.py" "$data/reproduce.json" -o "$out/bench.png"
check plot_twin.py "$tools/plot_twin.py" "$data/reproduce.json" "$out/twin"
check plot_sensitivity.py "$tools/plot_sensitivity.py" "$data/reproduce.json" "$out/sens"
[ "$fail" -eq 0 ] && echo "OK"
exit "$fail"
