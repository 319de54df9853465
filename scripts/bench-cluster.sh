#!/usr/bin/env bash
# Benchmark (not a test): building and routing DGX A100 clusters as fat-trees, and ring allreduce of 100 MB on them,
# star of the same size side by side. usage: scripts/bench-cluster.sh [NODES...] (default 8 64 512; 512 nodes =
# 4096 GPUs on a 3-level radix-40 fat-tree). Prints a Markdown table.
set -euo pipefail
cd "$(dirname "$0")/.."
nodes=("$@")
((${#nodes[@]})) || nodes=(8 64 512)
[[ -x build/dtsim ]] || bash scripts/build.sh >/dev/null
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cluster=scenarios/clusters/dgx-a100.json

echo "| nodes | GPUs | graph build (s) | vertices | links | ring: platform + routes (s) | ring: SimGrid wall (s) | ring: peak RSS (MB) | star ring: SimGrid wall (s) | ring simulated time (s) |"
echo "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
for n in "${nodes[@]}"; do
  ./build/dtsim cluster "$cluster" --nodes "$n" --no-bisection --json >"$tmp/cluster.json"
  ./build/dtsim collective --algorithm ring --cluster "$cluster" --nodes "$n" --bytes 100MB --json >"$tmp/ring.json"
  ./build/dtsim collective --algorithm ring --ranks "$((n * 8))" --bytes 100MB --json >"$tmp/star.json"
  python3 - "$n" "$tmp" <<'PY'
import json, sys
n, tmp = sys.argv[1:]
c = json.load(open(f"{tmp}/cluster.json"))
r = json.load(open(f"{tmp}/ring.json"))
s = json.load(open(f"{tmp}/star.json"))
print(f"| {n} | {c['accelerators']} | {c['build_s']:.4f} | {c['vertices']} | {c['links']} | {r['sim_setup_wall_s']:.2f} | "
      f"{r['sim_wall_s']:.1f} | {r['sim_peak_rss_bytes']/1e6:.0f} | {s['sim_wall_s']:.1f} | {r['time_s']:.6f} |")
PY
done
