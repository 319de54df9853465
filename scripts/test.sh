#!/usr/bin/env bash
# Installs what is missing, builds with warnings as errors, and runs every test through CTest.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
bash scripts/build.sh -DDTSIM_WERROR=ON -DDTSIM_BUILD_TESTS=ON
ctest --test-dir build --output-on-failure -j"$(nproc)"
