#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# Measures, on this machine, the host costs the kernel-build and shell workloads
# (examples/kbuild.toml, examples/shell.toml) take their figures from: forks, page faults,
# context switches and per-job times of a `make -jN` of tiny C files, and fork, fork+exec
# and fork+exec+exit rates from sh. Prints `key value` lines; docs/workloads/*.md quote them.
# Usage: scripts/measure-workload-costs.sh [JOBS [FILES [LOOPS]]]
set -eu
jobs=${1:-$(nproc)}
files=${2:-200}
loops=${3:-2000}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

procs() { awk '/^processes/ { print $2 }' /proc/stat; }

# A project of tiny translation units, each including a few system headers as real kernel
# files do (so the compiler opens and looks up files).
i=0
while [ "$i" -lt "$files" ]; do
  printf '#include <stdio.h>\n#include <stdlib.h>\n#include <string.h>\nint f%d(int x) { char b[32]; snprintf(b, sizeof b, "%%d", x); return (int)strlen(b) + atoi(b); }\n' "$i" > "$tmp/f$i.c"
  i=$((i + 1))
done
cat > "$tmp/Makefile" <<'MK'
SRCS := $(wildcard f*.c)
OBJS := $(SRCS:.c=.o)
all: $(OBJS)
%.o: %.c
	$(TIMED) gcc -O2 -c $< -o $@
MK

echo "cpus $(nproc)"
echo "loadavg_before $(cut -d' ' -f1 /proc/loadavg)"
echo "make_jobs $jobs"
echo "make_files $files"
# /proc/stat counts every fork on the machine: sample the background rate first.
p0=$(procs); sleep 5; p1=$(procs)
echo "background_forks_per_s $(( (p1 - p0) / 5 ))"
# The plain build (make execs gcc directly): forks, page faults, context switches, wall.
p0=$(procs)
/usr/bin/time -v -o "$tmp/make.time" make -s -C "$tmp" -j"$jobs" TIMED= >/dev/null
p1=$(procs)
echo "make_forks_total $((p1 - p0))"
awk -F': ' '
  /Elapsed \(wall clock\)/ { n = split($2, t, ":"); s = 0; for (i = 1; i <= n; i++) s = s * 60 + t[i]; print "make_wall_s", s }
  /User time/ { print "make_user_s", $2 }
  /System time/ { print "make_sys_s", $2 }
  /Minor \(reclaiming a frame\) page faults/ { print "make_minor_faults", $2 }
  /Major \(requiring I\/O\) page faults/ { print "make_major_faults", $2 }
  /Voluntary context switches/ { print "make_voluntary_cs", $2 }
  /Involuntary context switches/ { print "make_involuntary_cs", $2 }
' "$tmp/make.time"
# Per-job figures, a second build: /usr/bin/time around each gcc (elapsed s, user s, sys s,
# minor faults, voluntary and involuntary context switches; gcc's children included).
rm -f "$tmp"/*.o
make -s -C "$tmp" -j"$jobs" \
  TIMED="/usr/bin/time -a -o $tmp/jobs.time -f '%e %U %S %R %w %c'" >/dev/null
grep -v '^Command' "$tmp/jobs.time" | sort -n | awk '
  { e[NR] = $1; u += $2; s += $3; f += $4; w += $5; c += $6 }
  END {
    print "job_count", NR
    print "job_wall_ms_p10", e[int(NR * 0.1) + 1] * 1000
    print "job_wall_ms_p50", e[int(NR * 0.5) + 1] * 1000
    print "job_wall_ms_p90", e[int(NR * 0.9) + 1] * 1000
    print "job_cpu_ms_mean", (u + s) / NR * 1000
    print "job_user_ms_mean", u / NR * 1000
    print "job_sys_ms_mean", s / NR * 1000
    print "job_minor_faults_mean", f / NR
    print "job_voluntary_cs_mean", w / NR
    print "job_involuntary_cs_mean", c / NR
  }'

# Rates from sh: fork only (a subshell running a builtin), fork+exec+exit (/bin/true),
# and the same timed for CPU by /usr/bin/time.
now_ns() { date +%s%N; }
t0=$(now_ns); p0=$(procs)
i=0; while [ "$i" -lt "$loops" ]; do ( : ); i=$((i + 1)); done
t1=$(now_ns); p1=$(procs)
/usr/bin/time -f '%e %U %S %R %w %c' -o "$tmp/sub.time" sh -c \
  "i=0; while [ \$i -lt $loops ]; do ( : ); i=\$((i + 1)); done"
awk -v n="$loops" '{ print "subshell_loop_cpu_us_per_iter", ($2 + $3) / n * 1e6;
  print "subshell_loop_minor_faults_per_iter", $4 / n }' "$tmp/sub.time"
echo "fork_exit_loops $loops"
echo "fork_exit_us_per_iter $(( (t1 - t0) / loops / 1000 ))"
echo "fork_exit_forks_per_iter_x100 $(( (p1 - p0) * 100 / loops ))"
t0=$(now_ns); p0=$(procs)
i=0; while [ "$i" -lt "$loops" ]; do /bin/true; i=$((i + 1)); done
t1=$(now_ns); p1=$(procs)
echo "fork_exec_exit_us_per_iter $(( (t1 - t0) / loops / 1000 ))"
echo "fork_exec_exit_forks_per_iter_x100 $(( (p1 - p0) * 100 / loops ))"
/usr/bin/time -f '%e %U %S %R %w %c' -o "$tmp/true.time" sh -c \
  "i=0; while [ \$i -lt $loops ]; do /bin/true; i=\$((i + 1)); done"
awk -v n="$loops" '{ print "true_loop_cpu_us_per_iter", ($2 + $3) / n * 1e6;
  print "true_loop_minor_faults_per_iter", $4 / n;
  print "true_loop_voluntary_cs_per_iter", $5 / n }' "$tmp/true.time"
# A shell script in the style of UnixBench's "shell scripts" test (sort, od, grep, tee, wc
# and rm over a small text file), run `scripts` times: forks and CPU per script.
scripts=${4:-50}
seq 1 400 | awk '{ printf "line %d the quick brown fox %d\n", ($1 * 7919) % 400, $1 }' > "$tmp/sort.src"
cat > "$tmp/work.sh" <<'SH'
cd "$1"
sort > sort.$$ < sort.src
od sort.$$ | sort -n -k 1 > od.$$
grep the sort.$$ | tee grep.$$ | wc > wc.$$
rm sort.$$ grep.$$ od.$$ wc.$$
SH
p0=$(procs)
/usr/bin/time -f '%e %U %S %R %w %c' -o "$tmp/script.time" sh -c \
  "i=0; while [ \$i -lt $scripts ]; do sh $tmp/work.sh $tmp; i=\$((i + 1)); done"
p1=$(procs)
echo "script_runs $scripts"
echo "script_forks_per_run_x100 $(( (p1 - p0) * 100 / scripts ))"
awk -v n="$scripts" '{ print "script_wall_ms_per_run", $1 / n * 1000;
  print "script_cpu_ms_per_run", ($2 + $3) / n * 1000;
  print "script_sys_ms_per_run", $3 / n * 1000;
  print "script_minor_faults_per_run", $4 / n }' "$tmp/script.time"
# How processes are created (strace, when installed): a clone with CLONE_VM (vfork,
# posix_spawn) copies no mm; one without (fork) runs dup_mmap. Per compile job of the build
# above, and per run of the shell script; plus the file-name system calls of one compile.
if command -v strace >/dev/null 2>&1; then
  kinds() {
    grep -E '^[0-9]+ +(clone3?|vfork|fork)\(' "$1" | awk -v tag="$2" -v n="$3" '
      /vfork\(|CLONE_VM/ { vm++; next } { fk++ }
      END { print tag "_spawns_per_run", vm / n; print tag "_forks_per_run", fk / n }'
  }
  rm -f "$tmp"/*.o
  strace -f -qq -e trace=clone,clone3,fork,vfork -o "$tmp/make.st" make -s -C "$tmp" -j"$jobs" TIMED= >/dev/null
  kinds "$tmp/make.st" job "$files"
  strace -f -qq -e trace=clone,clone3,fork,vfork -o "$tmp/script.st" sh "$tmp/work.sh" "$tmp"
  kinds "$tmp/script.st" script 1
  strace -f -qq -c -o "$tmp/files.st" -e trace=%file gcc -O2 -c "$tmp/f0.c" -o "$tmp/f0.o"
  awk '$NF == "total" { print "job_file_syscalls", $(NF-2); print "job_file_syscalls_failed", $(NF-1) }' "$tmp/files.st"
fi
# CPU time by perf stat (task-clock, children included; exact, where /usr/bin/time's user
# and system times are sampled at clock ticks and undercount 20 ms jobs): one compile job
# at a time, and the two sh loops.
if command -v perf >/dev/null 2>&1 && perf stat -e task-clock true >/dev/null 2>&1; then
  i=0
  while [ "$i" -lt 40 ]; do
    perf stat -x, -e task-clock,page-faults,context-switches -o "$tmp/ps.$i" \
      gcc -O2 -c "$tmp/f$i.c" -o "$tmp/f$i.o"
    awk -F, '/task-clock/ { t = $1 } /page-faults/ { f = $1 } /context-switches/ { c = $1 }
      END { print t, f, c }' "$tmp/ps.$i" >> "$tmp/ps.all"
    i=$((i + 1))
  done
  sort -n "$tmp/ps.all" | awk '{ t[NR] = $1; s += $1; f += $2; c += $3 } END {
    print "perf_job_cpu_ms_mean", s / NR
    print "perf_job_cpu_ms_p10", t[int(NR * 0.1) + 1]
    print "perf_job_cpu_ms_p50", t[int(NR * 0.5) + 1]
    print "perf_job_cpu_ms_p90", t[int(NR * 0.9) + 1]
    print "perf_job_faults_mean", f / NR
    print "perf_job_cs_mean", c / NR }'
  perf stat -x, -e task-clock -o "$tmp/pt.true" sh -c \
    "i=0; while [ \$i -lt $loops ]; do /bin/true; i=\$((i + 1)); done"
  awk -F, -v n="$loops" '/task-clock/ { print "perf_true_loop_cpu_us_per_iter", $1 * 1000 / n }' "$tmp/pt.true"
  perf stat -x, -e task-clock -o "$tmp/pt.sub" sh -c \
    "i=0; while [ \$i -lt $loops ]; do ( : ); i=\$((i + 1)); done"
  awk -F, -v n="$loops" '/task-clock/ { print "perf_subshell_loop_cpu_us_per_iter", $1 * 1000 / n }' "$tmp/pt.sub"
  perf stat -x, -e task-clock,page-faults -o "$tmp/pt.script" sh -c \
    "i=0; while [ \$i -lt $scripts ]; do sh $tmp/work.sh $tmp; i=\$((i + 1)); done"
  awk -F, -v n="$scripts" '/task-clock/ { print "perf_script_cpu_ms_per_run", $1 / n }
    /page-faults/ { print "perf_script_faults_per_run", $1 / n }' "$tmp/pt.script"
fi
echo "loadavg_after $(cut -d' ' -f1 /proc/loadavg)"
