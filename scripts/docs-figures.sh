#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# Regenerates the figures and numbers of docs/seeds/ from the built tool:
#   scripts/docs-figures.sh [BUILD_DIR]        (default: build)
# Writes docs/seeds/fig/seedNNN.png (published vs simulated, tools/plot.py),
# docs/seeds/fig/seed000-cascade.png and seed001-kick-boost.png (vCPU timelines,
# tools/plot_trace.py), seed000-series-{plain,boosted}.png (run --series, tools/plot.py)
# and docs/seeds/data/ (the JSON the docs quote). Needs
# python3-matplotlib. Takes a few minutes on two cores.
set -eu
cd "$(dirname "$0")/.."
pv=${1:-build}/pvlock
fig=docs/seeds/fig
data=docs/seeds/data
mkdir -p "$fig" "$data"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Every experiment, quick variant (the same cells as `pvlock reproduce --quick`).
"$pv" reproduce --quick --json --plot "$tmp/plots" > "$data/reproduce-quick.json"
cp "$tmp"/plots/seed00*.png "$fig/"

# Seed 000: the plain host with the upstream (2017) wait-early rule; a 20 ms trace window
# in the measured steady state (300-600 ms; the first ~100-150 ms after the simultaneous
# start are a collapse of their own).
seed000="experiments/seed000/ebizzy-3vm.toml --set vm[0].guest.wait_early=prev_halted_or_preempted"
# shellcheck disable=SC2086
"$pv" run $seed000 --json --trace "$tmp/seed000.json" --trace-window 0.40:0.42 \
  > "$data/seed000-upstream-plain.json"
tools/plot_trace.py cascades "$tmp/seed000.json" vm0 > "$data/seed000-cascades.txt"
# The first burst of vm0 with at least 10 vCPUs, with 100 us before and 150 us after it.
range=$(awk '!r && $4 + 0 >= 10 { split($1, t, "-"); r = (t[1] - 100) " " (t[2] + 150) }
             END { print r }' "$data/seed000-cascades.txt")
if [ -z "$range" ]; then
  echo "docs-figures: no wait-early burst of 10 or more vCPUs in seed000's trace window;" \
    "move the window (--trace-window above)" >&2
  exit 1
fi
# shellcheck disable=SC2086
tools/plot_trace.py vcpus "$tmp/seed000.json" vm0 $range "$fig/seed000-cascade.png" 24
# The same guest with the reverted rule, for the counters.
"$pv" run experiments/seed000/ebizzy-3vm.toml --json > "$data/seed000-revert-plain.json"

# Seed 000 over time (run --series): the 2017 guest on the plain and on the boosted host,
# per 10 ms from the start; the charts and the series alone (not the whole run) as data.
for host in plain boosted; do
  boosts=""
  [ "$host" = boosted ] && boosts="--set host.kvm.irq_boost=true --set host.kvm.kick_boost=true"
  # shellcheck disable=SC2086
  "$pv" run $seed000 $boosts --series 10 --json > "$tmp/series-$host.json"
  tools/plot.py series "$tmp/series-$host.json" "$tmp/series-$host" > /dev/null
  cp "$tmp/series-$host/series.png" "$fig/seed000-series-$host.png"
  python3 -c '
import json, sys
run = json.load(open(sys.argv[1]))
json.dump({"scenario": run["scenario"], "seed": run["seed"], "series": run["series"]}, sys.stdout)
print()' "$tmp/series-$host.json" > "$data/seed000-series-$host.json"
done

# Seed 001: 2 VMs with and without the kick boost (irq_boost on, as in the experiment).
seed001="experiments/seed001/ebizzy.toml --set vm[0].count=2"
# shellcheck disable=SC2086
"$pv" run $seed001 --set host.kvm.kick_boost=true --json --trace "$tmp/seed001.json" \
  --trace-window 0.13:0.135 > "$data/seed001-2vm-boost.json"
# shellcheck disable=SC2086
"$pv" run $seed001 --set host.kvm.kick_boost=false --json > "$data/seed001-2vm-vanilla.json"
# 400 us around the first burst of vm0 with at least 10 vCPUs waiting early (100 us before
# it), so the window follows the run when the model changes.
tools/plot_trace.py cascades "$tmp/seed001.json" vm0 > "$tmp/seed001-cascades.txt"
range=$(awk '!r && $4 + 0 >= 10 { split($1, t, "-"); r = int(t[1] - 100) " " int(t[1] + 300) }
             END { print r }' "$tmp/seed001-cascades.txt")
if [ -z "$range" ]; then
  echo "docs-figures: no wait-early burst of 10 or more vCPUs in seed001's trace window;" \
    "move the window (--trace-window above)" >&2
  exit 1
fi
echo "seed001 kick-boost figure: $range us" > "$data/seed001-kick-boost-window.txt"
# shellcheck disable=SC2086
tools/plot_trace.py vcpus "$tmp/seed001.json" vm0 $range "$fig/seed001-kick-boost.png" 16

# Seeds 002-004: the cells' runs with lock_stat and profile (the experiments' quick windows;
# seed004 has none: its scenario's 60 ms).
for v in true false; do
  "$pv" run experiments/seed002/lock2-pinned.toml --set vm[0].guest.lock=qspinlock \
    --set vm[0].guest.virt_spin_lock=$v --set run.duration_ms=4 --set run.warmup_ms=1 \
    --json > "$data/seed002-virt_spin_lock-$v.json"
  # 8000 pipe mutexes at -g 400: keep the non-pipe locks and the ten busiest pipes.
  # (seed003 has no quick window: its scenario's 200 ms, as in reproduce --quick.)
  "$pv" run experiments/seed003/messaging.toml --set vm[0].guest.break_on_prev_preempted=$v \
    --json | python3 -c '
import json, sys
run = json.load(sys.stdin)
for vm, rows in run["lockstat"].items():
    pipes = sorted((r for r in rows if r["name"].startswith("messaging.pipe_mutex")),
                   key=lambda r: -r["acquisitions"])
    run["lockstat"][vm] = [r for r in rows if not r["name"].startswith("messaging.pipe_mutex")] + pipes[:10]
json.dump(run, sys.stdout, indent=2)
print()' > "$data/seed003-break-$v.json"
done
for ns in 30 8; do
  "$pv" run experiments/seed004/fio.toml --set vm[0].guest.vcpu_is_preempted_ns=$ns \
    --json > "$data/seed004-vip-$ns.json"
done
echo "figures in $fig, data in $data"
