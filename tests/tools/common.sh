# SPDX-License-Identifier: GPL-2.0-only
# Sourced by the tools tests: skip without matplotlib, check that a file is a PNG.

# Exits 77 (ctest's "skipped") with a message when python3-matplotlib is missing: from the
# python3 on PATH and from the one the tools fall back to (tools/pvlock_plotting.py).
require_matplotlib() {
  if ! python3 -c 'import matplotlib' 2>/dev/null &&
    ! "${PVLOCK_PYTHON:-/usr/bin/python3}" -c 'import matplotlib' 2>/dev/null; then
    echo "SKIPPED: python3-matplotlib is not installed (apt-get install python3-matplotlib)"
    exit 77
  fi
}

# Fails the test unless $1 starts with the PNG signature.
check_png() {
  magic=$(head -c 8 "$1" | od -An -tx1 | tr -d ' \n')
  if [ "$magic" != "89504e470d0a1a0a" ]; then
    echo "FAIL: $1 is not a PNG (magic $magic)"
    exit 1
  fi
}
