#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# expect_exit.sh CODE REGEX -- CMD...: runs CMD, passes iff it exits with CODE and its
# combined output matches the extended regex REGEX.
set -u
want=$1 regex=$2
shift 3
out=$("$@" 2>&1)
got=$?
if [ "$got" -ne "$want" ]; then
  printf 'expected exit %s, got %s from: %s\n%s\n' "$want" "$got" "$*" "$out"
  exit 1
fi
if ! grep -Eq -- "$regex" <<<"$out"; then
  printf 'output of %s does not match /%s/:\n%s\n' "$*" "$regex" "$out"
  exit 1
fi
exit 0
