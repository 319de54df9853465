#!/usr/bin/env bash
# Benchmark (not a test): the Monte Carlo of a data-parallel step (predict --samples, docs/variability.md) on
# scenarios/training/resnet50-jitter.json (ResNet-50 on DGX A100 nodes, ring, 2% normal jitter per step), one size at a
# time, side by side in one run: wall seconds and peak resident memory against the number of samples and of ranks, for
# per-step jitter, per-kernel normal jitter (drawn once per stretch of backward) and per-kernel lognormal jitter (drawn
# layer by layer), and the exact sampler (the whole step simulated again per sample) at small sizes. The first row of
# each size runs no samples (--samples 1: the deterministic step and the buckets' reductions dominate).
# usage: scripts/bench-variability.sh [RANKS...] (default 1024 4096 16384)
set -euo pipefail
cd "$(dirname "$0")/.."
ranks=("$@")
((${#ranks[@]})) || ranks=(1024 4096 16384)
[[ -x build/dtsim ]] || bash scripts/build.sh >/dev/null
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
scenario=scenarios/training/resnet50-jitter.json
jitter_file() {  # $1: per, $2: distribution
  python3 - "$scenario" "$1" "$2" >"$tmp/s.json" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
doc["scenario"]["variability"]["jitter"] = {"distribution": sys.argv[3], "sigma": 0.02, "per": sys.argv[2]}
doc["scenario"]["cluster"] = "dgx-a100"
print(json.dumps(doc))
PY
  echo "$tmp/s.json"
}
run() {  # $1 label, $2 ranks, $3 samples, rest: predict args
  local label=$1 p=$2 n=$3
  shift 3
  /usr/bin/time -f "%e %M" -o "$tmp/time" ./build/dtsim predict "$@" --accelerators "$p" --samples "$n" --json >"$tmp/out.json"
  read -r wall rss <"$tmp/time"
  python3 - "$tmp/out.json" "$label" "$p" "$n" "$wall" "$rss" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
r = doc["results"][-1]
d = r["step_distribution"]
_, label, p, n, wall, rss = sys.argv[1:]
print(f"| {label} | {p} | {n} | {float(wall):.2f} | {int(rss) / 1024:.0f} | {r['step_time_s'] * 1e3:.2f} | "
      f"{d['mean_s'] * 1e3:.2f} | {d['p99_s'] * 1e3:.2f} |")
PY
}
echo "| jitter | ranks | samples | wall (s) | peak RSS (MB) | step without jitter (ms) | mean (ms) | p99 (ms) |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|"
for p in "${ranks[@]}"; do
  for n in 1 100 1000 10000; do
    run "normal 2% per step" "$p" "$n" "$(jitter_file step normal)"
  done
  run "normal 2% per kernel" "$p" 1000 "$(jitter_file kernel normal)"
  run "lognormal 2% per kernel" "$p" 1000 "$(jitter_file kernel lognormal)"
done
for p in 16 64; do
  for sampler in fast exact; do
    run "normal 2% per step, $sampler sampler" "$p" 100 "$(jitter_file step normal)" --sampler "$sampler"
  done
done
