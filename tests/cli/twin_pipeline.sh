#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# twin_pipeline.sh PVLOCK DIR: `pvlock calibrate --quick --json` into DIR, then `pvlock twin`
# on that calibration with tiny settings; checks the JSON holds every cell with measured,
# predicted and ratio, plus the summary. No timing assertions.
set -eu
pv=$1 dir=$2
mkdir -p "$dir"
"$pv" calibrate --quick --json --out "$dir/cal.json" 2>"$dir/cal.err"
grep -q '"xfer_socket"\|"xfer_smt"' "$dir/cal.json"
"$pv" calibrate --quick --out "$dir/cal.toml" 2>/dev/null
grep -q '^\[machine\]' "$dir/cal.toml"
grep -q '^\[costs\]' "$dir/cal.toml"
"$pv" twin --calibration "$dir/cal.json" --locks tas,std_mutex --threads 1,2 --native-s 0.02 \
  --sim-ms 2 --json --out "$dir/twin.json" >"$dir/stdout.json" 2>"$dir/twin.err"
python3 - "$dir/twin.json" "$dir/stdout.json" <<'PY'
import json, sys
a = json.load(open(sys.argv[1]))
b = json.load(open(sys.argv[2]))
assert a["cells"] == b["cells"], "--out and stdout differ"
assert len(a["cells"]) == 4, a["cells"]
for c in a["cells"]:
    for k in ("measured_ops_s", "predicted_ops_s", "ratio", "steal_pct"):
        assert k in c, (k, c)
    # A loaded machine may give a 20 ms native cell no CPU at all (measured 0, ratio null):
    # only the deterministic simulation must have run.
    assert c["measured_ops_s"] >= 0 and c["predicted_ops_s"] > 0, c
assert "rank_correlation" in a["summary"] and len(a["summary"]["collapse"]) == 2
PY
python3 "$(dirname "$0")/../../tools/twin_table.py" "$dir/twin.json" | grep -q 'Rank correlation'
