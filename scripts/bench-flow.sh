#!/usr/bin/env bash
# Benchmark (not a test): the flow executor against the SimGrid executor, side by side in one run, on the same ring
# allreduce of 100 MB over a star (10 Gb/s, 1 us), and on DGX A100 fat-trees. SimGrid runs only up to SIMGRID_MAX
# ranks (default 1024; at 4096 it takes minutes). usage: scripts/bench-flow.sh [RANKS...] (default 64 128 256; the flow executor does not yet scale: see docs/benchmarks.md).
# Prints a Markdown table: wall seconds and peak resident memory of each, and their simulated times.
set -euo pipefail
cd "$(dirname "$0")/.."
ranks=("$@")
((${#ranks[@]})) || ranks=(64 128 256)
simgrid_max=${SIMGRID_MAX:-1024}
[[ -x build/dtsim ]] || bash scripts/build.sh >/dev/null
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

echo "| network | ranks | flow wall (s) | flow peak RSS (MB) | SimGrid wall (s) | SimGrid peak RSS (MB) | SimGrid / flow wall | flow simulated (s) | SimGrid simulated (s) |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|"
for p in "${ranks[@]}"; do
  for net in star dgx-a100; do
    if [[ $net == star ]]; then
      args=(--ranks "$p")
    else
      (( p % 8 == 0 )) || continue
      args=(--cluster scenarios/clusters/dgx-a100.json --nodes "$((p / 8))")
    fi
    ./build/dtsim collective "${args[@]}" --bytes 100MB --backend flow --json >"$tmp/flow.json"
    if (( p <= simgrid_max )); then
      ./build/dtsim collective "${args[@]}" --bytes 100MB --backend simgrid --json >"$tmp/sg.json"
    else
      echo '{}' >"$tmp/sg.json"
    fi
    python3 - "$net" "$p" "$tmp" <<'PY'
import json, sys
net, p, tmp = sys.argv[1:]
f = json.load(open(f"{tmp}/flow.json"))
s = json.load(open(f"{tmp}/sg.json"))
if s:
    print(f"| {net} | {p} | {f['sim_wall_s']:.3f} | {f['sim_peak_rss_bytes']/1e6:.0f} | {s['sim_wall_s']:.2f} | "
          f"{s['sim_peak_rss_bytes']/1e6:.0f} | {s['sim_wall_s']/f['sim_wall_s']:.1f} | {f['time_s']:.6f} | {s['time_s']:.6f} |")
else:
    print(f"| {net} | {p} | {f['sim_wall_s']:.3f} | {f['sim_peak_rss_bytes']/1e6:.0f} | (not run) | | | {f['time_s']:.6f} | |")
PY
  done
done
