#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# interrupted_trace.sh PVLOCK SCENARIO TRACE: Ctrl-C (SIGINT) during a long traced run must
# end it with exit 130 and leave TRACE as complete JSON. Prints "valid trace of N events".
# --foreground: timeout signals only pvlock (without it, also its own process group, which
# would deliver a second SIGINT, the one that ends pvlock at once).
set -u
pv=$1 scn=$2 trace=$3
rm -f "$trace"
timeout --foreground -s INT --preserve-status 3 "$pv" run "$scn" --set run.duration_ms=10000000 \
  --trace "$trace" --trace-window 0:0.005
rc=$?
if [ "$rc" -ne 130 ]; then
  echo "expected exit 130 from the interrupted run, got $rc"
  exit 1
fi
python3 - "$trace" <<'PY'
import json, sys
events = json.load(open(sys.argv[1]))["traceEvents"]
print("valid trace of", len(events), "events")
PY
