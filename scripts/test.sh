#!/usr/bin/env bash
# Installs what is missing, builds with warnings as errors, runs every test through CTest, then dtsim validate --quick.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh --test
bash scripts/build.sh -DDTSIM_WERROR=ON -DDTSIM_BUILD_TESTS=ON -DDTSIM_REQUIRE_CHROMIUM=ON
ctest --test-dir build --output-on-failure -j"$(nproc)"
# Real MPI runs on an emulated cluster against the predictions (needs root for network namespaces; CI has it).
# Fails when the median absolute error over sizes >= 1 MB exceeds 10%; results land in build/, not reports/.
./build/dtsim validate --quick --out-dir build --max-median-error 0.10
