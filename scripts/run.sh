#!/usr/bin/env bash
# Installs what is missing, builds, and runs dtsim's main job on its built-in default.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
bash scripts/build.sh -DDTSIM_BUILD_TESTS=OFF
./build/dtsim collective "$@"
