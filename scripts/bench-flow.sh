#!/usr/bin/env bash
# Benchmark (not a test): the flow executor against the SimGrid executor, side by side in one run, on the same ring
# allreduce of 100 MB over a star (10 Gb/s, 1 us), and on DGX A100 fat-trees. SimGrid runs only up to SIMGRID_MAX
# ranks (default 1024; at 4096 it takes minutes), the DGX A100 rows only up to CLUSTER_MAX (default 65536).
# Then the flow executor alone at 100,000 accelerators (12,500 DGX H100 nodes on a 4-level fat-tree, hierarchical
# allreduce with Rabenseifner between nodes), and predict's sweep of the default scenario from 1 to SWEEP_MAX GPUs
# (default 4096) per algorithm (SWEEP_ALGORITHMS, default ring,tree,butterfly,ps; a slow one is cut at 600 s).
# Then classes of ranks side by side (FlowOptions::lump_ranks): a parameter server with a shard on each of the first
# quarter of the GPUs, and direct, on V100 NVLink nodes, with --rank-classes on and off (off only up to LUMP_OFF_MAX
# GPUs, default 1024), and the whole predict sweep of the default scenario (every algorithm in one command).
# usage: scripts/bench-flow.sh [RANKS...] (default 64 256 1024 4096 16384 65536)
# DTSIM=PATH runs another dtsim binary (an older build, for a side-by-side comparison); default build/dtsim.
# Prints a Markdown table (wall seconds and peak resident memory of each, their simulated times), then how wall time
# and memory grow with ranks: the exponent b of a least-squares fit wall = a * ranks^b over the rows of each network.
set -euo pipefail
cd "$(dirname "$0")/.."
ranks=("$@")
((${#ranks[@]})) || ranks=(64 256 1024 4096 16384 65536)
simgrid_max=${SIMGRID_MAX:-1024}
cluster_max=${CLUSTER_MAX:-65536}
sweep_max=${SWEEP_MAX:-4096}
sweep_algorithms=${SWEEP_ALGORITHMS:-ring,tree,butterfly,ps}
lump_off_max=${LUMP_OFF_MAX:-1024}
dtsim=${DTSIM:-./build/dtsim}
[[ -n ${DTSIM:-} || -x build/dtsim ]] || bash scripts/build.sh >/dev/null
[[ -x $dtsim ]] || { echo "bench-flow.sh: DTSIM=$dtsim is not an executable" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

echo "| network | ranks | flow wall (s) | flow peak RSS (MB) | SimGrid wall (s) | SimGrid peak RSS (MB) | SimGrid / flow wall | flow simulated (s) | SimGrid simulated (s) |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|"
for p in "${ranks[@]}"; do
  for net in star dgx-a100; do
    if [[ $net == star ]]; then
      args=(--ranks "$p")
    else
      (( p % 8 == 0 && p <= cluster_max )) || continue
      args=(--cluster scenarios/clusters/dgx-a100.json --nodes "$((p / 8))")
    fi
    "$dtsim" collective --algorithm ring "${args[@]}" --bytes 100MB --backend flow --json >"$tmp/flow.json"
    if (( p <= simgrid_max )); then
      "$dtsim" collective --algorithm ring "${args[@]}" --bytes 100MB --backend simgrid --json >"$tmp/sg.json"
    else
      echo '{}' >"$tmp/sg.json"
    fi
    python3 - "$net" "$p" "$tmp" <<'PY'
import json, sys
net, p, tmp = sys.argv[1:]
f = json.load(open(f"{tmp}/flow.json"))
s = json.load(open(f"{tmp}/sg.json"))
with open(f"{tmp}/rows", "a") as rows:
    rows.write(f"{net} {p} {f['sim_wall_s']} {f['sim_peak_rss_bytes']}\n")
if s:
    print(f"| {net} | {p} | {f['sim_wall_s']:.3f} | {f['sim_peak_rss_bytes']/1e6:.0f} | {s['sim_wall_s']:.2f} | "
          f"{s['sim_peak_rss_bytes']/1e6:.0f} | {s['sim_wall_s']/f['sim_wall_s']:.1f} | {f['time_s']:.6f} | {s['time_s']:.6f} |")
else:
    print(f"| {net} | {p} | {f['sim_wall_s']:.3f} | {f['sim_peak_rss_bytes']/1e6:.0f} | (not run) | | | {f['time_s']:.6f} | |")
PY
  done
done
echo
echo "| network | ranks | flow wall exponent b (wall ~ ranks^b) | flow peak RSS exponent |"
echo "|---|---|---:|---:|"
python3 - "$tmp/rows" <<'PY'
import math, sys
rows = {}
for line in open(sys.argv[1]):
    net, p, wall, rss = line.split()
    rows.setdefault(net, []).append((int(p), float(wall), float(rss)))
def slope(points):
    xs = [math.log(x) for x, _ in points]
    ys = [math.log(y) for _, y in points]
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)
for net, points in rows.items():
    if len(points) < 2:
        continue
    ranks = f"{points[0][0]}-{points[-1][0]}"
    print(f"| {net} | {ranks} | {slope([(p, w) for p, w, _ in points]):.2f} | {slope([(p, r) for p, _, r in points]):.2f} |")
PY

echo
echo "| 100,000-accelerator run | nodes | GPUs | whole command wall (s) | flow wall (s) | flow peak RSS (MB) | event batches | simulated (s) |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|"
for nodes in 1024 4096 12500; do
  start=$(date +%s.%N)
  "$dtsim" collective --cluster scenarios/clusters/dgx-h100.json --nodes "$nodes" --algorithm hierarchical \
    --inter rabenseifner --ranks-per-node 8 --bytes 100MB --backend flow --json >"$tmp/big.json"
  python3 - "$tmp/big.json" "$nodes" "$start" "$(date +%s.%N)" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
whole = float(sys.argv[4]) - float(sys.argv[3])
print(f"| dgx-h100 hierarchical (rabenseifner), 100 MB | {sys.argv[2]} | {d['ranks']} | {whole:.2f} | {d['sim_wall_s']:.2f} | "
      f"{d['sim_peak_rss_bytes']/1e6:.0f} | {d['sim_event_batches']} | {d['time_s']:.6f} |")
PY
done
echo
echo "classes of ranks on V100 NVLink nodes (25 MB, flow backend), simulating one rank per class and every rank:"
echo
echo "| algorithm | GPUs | classes | wall, classes (s) | peak RSS (MB) | wall, every rank (s) | peak RSS (MB) | every / classes wall | simulated, classes (s) | simulated, every rank (s) |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
for p in 256 1024 4096; do
  for a in ps direct; do
    args=(collective --cluster scenarios/clusters/v100-nvlink-edr.json --nodes "$((p / 4))" --algorithm "$a" --bytes 25MB
          --backend flow --json)
    [[ $a == ps ]] && args+=(--servers "$((p / 4))" --ps-placement colocated)
    "$dtsim" "${args[@]}" >"$tmp/on.json"
    if (( p <= lump_off_max )); then
      "$dtsim" "${args[@]}" --rank-classes off >"$tmp/off.json"
    else
      echo '{}' >"$tmp/off.json"
    fi
    python3 - "$a" "$p" "$tmp" <<'PY'
import json, sys
a, p, tmp = sys.argv[1:]
on = json.load(open(f"{tmp}/on.json"))
off = json.load(open(f"{tmp}/off.json"))
row = f"| {a} | {p} | {on['sim_rank_classes']} | {on['sim_wall_s']:.3f} | {on['sim_peak_rss_bytes']/1e6:.0f} |"
if off:
    row += (f" {off['sim_wall_s']:.2f} | {off['sim_peak_rss_bytes']/1e6:.0f} | {off['sim_wall_s']/on['sim_wall_s']:.1f} |"
            f" {on['time_s']:.9f} | {off['time_s']:.9f} |")
else:
    row += f" (not run) | | | {on['time_s']:.9f} | |"
print(row)
PY
  done
done
echo
counts=1
c=1
while ((c * 2 <= sweep_max)); do
  c=$((c * 2))
  counts+=",$c"
done
echo "predict sweep of the default scenario over $counts GPUs, per algorithm:"
echo
echo "| algorithm | wall (s) | peak RSS (MB) | slowest count | its wall (s) | step at the largest count (s) |"
echo "|---|---:|---:|---:|---:|---:|"
start=$(date +%s.%N)
/usr/bin/time -f "%M" -o "$tmp/rss" "$dtsim" predict --accelerators "$counts" >/dev/null
echo "| every algorithm of the scenario, one command | $(python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.2f}')" "$start" "$(date +%s.%N)") | $(( $(cat "$tmp/rss") / 1000 )) | | | |"
IFS=, read -r -a algorithms <<<"$sweep_algorithms"
for a in "${algorithms[@]}"; do
  start=$(date +%s.%N)
  if /usr/bin/time -f "%M" -o "$tmp/rss" timeout 600 "$dtsim" predict --accelerators "$counts" --algorithm "$a" \
       --json >"$tmp/sweep.json"; then
    python3 - "$tmp/sweep.json" "$a" "$start" "$(date +%s.%N)" "$(cat "$tmp/rss")" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
a, start, end, rss = sys.argv[2], float(sys.argv[3]), float(sys.argv[4]), float(sys.argv[5])
rows = d["results"]
slow = max(rows, key=lambda r: r.get("sim_wall_s", 0))
print(f"| {a} | {end - start:.2f} | {rss/1e3:.0f} | {slow['accelerators']} | {slow.get('sim_wall_s', 0):.2f} | "
      f"{rows[-1]['step_time_s']:.4f} |")
PY
  else
    echo "| $a | > 600 (cut) | | | | |"
  fi
done
