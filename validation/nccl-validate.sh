#!/usr/bin/env bash
# NCCL validation harness for a machine with two or more GPUs: runs dtsim's schedules over NCCL point-to-point and
# ncclAllReduce (build/dtsim-nccl-run, built when CMake finds CUDA and NCCL), then predicts every case with dtsim
# validate --measured and writes reports/validation-measured.md and .json, the same error table as the MPI runs.
# usage: validation/nccl-validate.sh [GPUS] [LABEL]     (default: every GPU nvidia-smi lists)
set -euo pipefail
cd "$(dirname "$0")/.."
gpus=${1:-$(nvidia-smi --list-gpus | wc -l)}
label=${2:-"$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1) x $gpus"}
[[ -x build/dtsim-nccl-run ]] || { echo "build/dtsim-nccl-run was not built (no CUDA or NCCL found by CMake)" >&2; exit 2; }
out=$(mktemp)
trap 'rm -f "$out"' EXIT
timeout 1800 build/dtsim-nccl-run "$gpus" 5 ring,tree,butterfly,rabenseifner,ps,dbtree,nccl \
  65536 262144 1048576 4194304 16777216 67108864 268435456 | tee "$out"
build/dtsim validate --measured "$out" --ranks "$gpus" --label "$label" --out-dir reports --max-median-error 1e9
