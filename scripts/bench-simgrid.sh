#!/usr/bin/env bash
# Benchmark (not a test): wall time and peak memory of the SimGrid executor for ring allreduce of 100 MB, side by
# side with plain s4u code doing the same ring (bench/plain_s4u_ring.cpp), in one run on one machine.
# usage: scripts/bench-simgrid.sh [RANKS...]   (default 64 256 1024 4096); prints a Markdown table.
set -euo pipefail
cd "$(dirname "$0")/.."
ranks=("$@")
((${#ranks[@]})) || ranks=(64 256 1024 4096)
[[ -x build/dtsim && -x build/bench/plain_s4u_ring ]] || bash scripts/build.sh >/dev/null
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

echo "| ranks | dtsim wall (s) | dtsim sim-only wall (s) | dtsim peak RSS (MB) | plain s4u wall (s) | plain peak RSS (MB) | dtsim / plain | simulated time (s) |"
echo "|---:|---:|---:|---:|---:|---:|---:|---:|"
for p in "${ranks[@]}"; do
  /usr/bin/time -f "%e %M" -o "$tmp/dtsim.time" ./build/dtsim collective --algorithm ring --ranks "$p" --bytes 100MB --json >"$tmp/dtsim.json"
  /usr/bin/time -f "%e %M" -o "$tmp/plain.time" ./build/bench/plain_s4u_ring "$p" 1e8 reduce >"$tmp/plain.out"
  read -r d_wall d_rss <"$tmp/dtsim.time"
  read -r p_wall p_rss <"$tmp/plain.time"
  python3 - "$p" "$d_wall" "$d_rss" "$p_wall" "$p_rss" "$tmp/dtsim.json" <<'PY'
import json, sys
p, d_wall, d_rss, p_wall, p_rss, path = sys.argv[1:]
j = json.load(open(path))
child_mb = j["sim_peak_rss_bytes"] / 1e6
rss_mb = max(int(d_rss) / 1e3, child_mb)
print(f"| {p} | {float(d_wall):.2f} | {j['sim_wall_s']:.2f} | {rss_mb:.0f} | {float(p_wall):.2f} | {int(p_rss)/1e3:.0f} | "
      f"{float(d_wall)/float(p_wall):.2f} | {j['time_s']:.6f} |")
PY
done
