#!/usr/bin/env bash
# Installs what dtsim needs from Debian 12 packages, and only what is missing (idempotent).
# --test: also what only the tests need (Chromium, to render the HTML report headless).
set -euo pipefail

packages=(
  g++ cmake make pkg-config
  libsimgrid-dev          # SimGrid 3.32: the flow-level network simulator behind the simgrid backend
  libboost-graph-dev      # cluster graphs and routes
  nlohmann-json3-dev      # scenario, calibration and result files
  libeigen3-dev           # SGD kernel and least-squares fits
  catch2                  # tests (Catch2 2.13)
  zlib1g-dev              # gzip IDX data files
  dataset-fashion-mnist   # Fashion-MNIST (gzip IDX) for dtsim train
  openmpi-bin libopenmpi-dev  # MPI ping-pong calibration and real MPI validation runs
  iproute2                # ip and tc: the emulated cluster of dtsim validate (network namespaces, tbf shaping)
  clang-format            # the style check among the tests
)
if [[ ${1:-} == --test ]]; then
  packages+=(chromium fonts-dejavu-core)  # the report rendering test (headless Chromium, with a font for its text)
  packages+=(clang libclang-rt-14-dev)     # the sanitizer job: ASan/UBSan build and libFuzzer (scripts/sanitize.sh)
  packages+=(python3-torch python3-torchvision)  # real PyTorch DDP training on the emulated cluster (validate --framework)
elif [[ -n ${1:-} ]]; then
  echo "install-deps: unknown option $1 (accepted: --test)" >&2
  exit 2
fi

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if ((${#missing[@]} == 0)); then
  echo "install-deps: all ${#packages[@]} packages present"
  exit 0
fi

echo "install-deps: installing ${missing[*]}"
sudo_cmd=()
if [[ $(id -u) -ne 0 ]]; then sudo_cmd=(sudo); fi
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -qq
"${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
