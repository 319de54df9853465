#!/usr/bin/env bash
# Installs what is missing, builds, and runs the main job: dtsim predict on its built-in default scenario (ResNet-50
# on 4x V100 NVLink nodes over 100 Gb/s, 1 to 64 GPUs, ring, tree, butterfly and parameter server).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
bash scripts/build.sh -DDTSIM_BUILD_TESTS=OFF
./build/dtsim predict "$@"
