#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# bad_inputs.sh PVLOCK SRC_DIR WORK_DIR [TABLE]: runs every bad input of TABLE (default
# bad_inputs.tsv next to this script) and checks what a user would see.
#
# A line of the table is EXIT<TAB>REGEX<TAB>COMMAND. COMMAND is a bash command line in which
# @PV@ is the pvlock binary, @SRC@ the source tree, @SCN@ a small scenario, @TMP@ a scratch
# folder holding the fixture files made below and @OUT@ a path no other line uses. A line
# passes iff the command exits with EXIT within 20 s and its stderr matches the extended
# regex REGEX; an exit of 0 is only listed for a legitimate input that must warn, so its
# REGEX names the warning. Nothing may crash: a message of the C++ runtime ("terminate
# called", "filesystem error", "basic_filebuf") fails the line whatever its exit code.
set -u
pv=$1 src=$2 work=$3
table=${4:-$(dirname "$0")/bad_inputs.tsv}
tmp=$work/tmp
rm -rf "$work" && mkdir -p "$tmp" || exit 1
scn=$src/tests/sweep/data/small.toml

# Fixtures: files that are not what the command wants.
: >"$tmp/empty.toml"
printf '# nothing but a comment\n\n' >"$tmp/comment.toml"
printf '[run\nduration_ms = 3\n' >"$tmp/broken.toml"
printf '\001\002\003binary' >"$tmp/binary.toml"
printf '{"run": {"duration_ms": 3}}\n' >"$tmp/json.toml"
printf '[run]\nduration_ms = 3\nduration_ms = 4\n' >"$tmp/dupkey.toml"
printf '[run]\nduration_ms = "3"\n[workload]\ntype = "lockloop"\n' >"$tmp/strdur.toml"
printf '[workload]\ntype = "lockloop"\nhold = 3\n' >"$tmp/wlkey.toml"
printf '[[vm]]\nvcpus = 2\n[vm.workload]\ntype = "lockloop"\n' >"$tmp/vm_no_host.toml"
printf '[host]\n[[vm]]\nname = "a"\nvcpus = 2\n[vm.workload]\ntype = "lockloop"\n[[vm]]\nname = "a"\nvcpus = 2\n[vm.workload]\ntype = "lockloop"\n' >"$tmp/dupname.toml"
printf '[host]\n[[vm]]\nvcpus = 2\n[vm.workload]\ntype = "lockloop"\n[[vm]]\nvcpus = 2\n[vm.workload]\ntype = "nope"\n' >"$tmp/badtype.toml"
printf '[workload]\ntype = "lockloop"\n[faults]\npreempt_queue_head = 0.1\n' >"$tmp/bare_preempt.toml"
printf 'duration_ms = 3\n[workload]\ntype = "lockloop"\n' >"$tmp/stray.toml"
: >"$tmp/empty.jsonl"
printf '\n\n' >"$tmp/blank.jsonl"
printf 'not json\n' >"$tmp/notjson.jsonl"
printf '[1, 2]\n' >"$tmp/array.jsonl"
printf '{"point": {}, "seed": 1}\n' >"$tmp/noresult.jsonl"
: >"$tmp/file"  # a file where a folder is wanted: unwritable even for root
mkdir -p "$tmp/dir" "$tmp/no-experiments" "$tmp/broken-experiments/x"
: >"$tmp/broken-experiments/x/experiment.toml"
"$pv" run "$scn" --json >"$tmp/run.json" || exit 1
"$pv" sweep "$scn" --vary vm[0].count=1,2 --out "$tmp/grid.jsonl" --quiet || exit 1

fails=0 n=0
while IFS=$'\t' read -r want regex cmd; do
  [[ -z "$want" || "$want" == \#* ]] && continue
  n=$((n + 1))
  cmd=${cmd//@PV@/$pv}
  cmd=${cmd//@SRC@/$src}
  cmd=${cmd//@SCN@/$scn}
  cmd=${cmd//@TMP@/$tmp}
  cmd=${cmd//@OUT@/$tmp/out$n}
  err=$(cd "$tmp/dir" && eval "timeout 20 $cmd" 2>&1 >/dev/null)
  got=$?
  why=""
  if [ "$got" -eq 124 ]; then
    why="timed out (a hang, or a bad input run instead of refused)"
  elif [ "$got" -ne "$want" ]; then
    why="expected exit $want, got $got"
  elif ! grep -Eq -- "$regex" <<<"$err"; then
    why="stderr does not match /$regex/"
  elif grep -Eq 'terminate called|filesystem error|basic_filebuf' <<<"$err"; then
    why="a runtime error leaked to the user"
  fi
  if [ -n "$why" ]; then
    fails=$((fails + 1))
    printf 'FAIL %s\n  %s\n  stderr: %s\n' "$cmd" "$why" "$(head -c 600 <<<"$err")"
  fi
done <"$table"
printf '%d bad inputs, %d failed\n' "$n" "$fails"
[ "$n" -ge 90 ] || { echo "the table lost inputs: $n < 90"; exit 1; }
[ "$fails" -eq 0 ]
