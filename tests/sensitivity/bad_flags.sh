#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# ctest sensitivity.bad_flags_exit_2: every bad flag or value exits 2 naming it, before any
# run.   bad_flags.sh PVLOCK_BINARY SOURCE_DIR
set -uo pipefail
pv=$1 src=$2
ex=$src/experiments/seed004
fail=0
expect() {  # MESSAGE_REGEX ARGS...
  local want=$1
  shift
  local out rc
  out=$("$pv" sensitivity "$@" 2>&1 >/dev/null)
  rc=$?
  if [[ $rc -ne 2 ]] || ! grep -qE -- "$want" <<< "$out"; then
    echo "FAIL: pvlock sensitivity $* -> exit $rc, stderr: $out (wanted 2 and /$want/)" >&2
    fail=1
  fi
}
expect "--method lol: expected morris or lhs" "$ex" --method lol
expect "--trajectories: must be between 1 and 1000" "$ex" --trajectories 0
expect "--samples: must be between 2" "$ex" --method lhs --samples 1
expect "--params: no constant 'costs.nope'" "$ex" --params costs.nope
expect "--params: costs.atomic_local_ns has no range" "$ex" --params costs.atomic_local_ns
expect "--shard 3/3: need 0 <= I < N" "$ex" --shard 3/3 --out /tmp/x.jsonl
expect "--shard needs --out" "$ex" --shard 0/2
expect "no experiment.toml" /nonexistent
expect "--jobs: must be between 1 and 256, got 0" "$ex" --params fio.hold_ns --jobs 0
[[ $fail -eq 0 ]] && echo "PASS: bad flags exit 2"
exit $fail
