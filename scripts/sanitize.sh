#!/usr/bin/env bash
# The sanitizer job: builds dtsim, its tests and one libFuzzer target per loader with AddressSanitizer and
# UndefinedBehaviorSanitizer under clang (build-asan/), runs the Catch2 tests there (any sanitizer report is fatal),
# then fuzzes each loader for SECONDS (default 30) from the shipped files and the kept crashers.
# Fails on any crash, sanitizer report, leak, hang (an input over 10 s) or an allocation over 2 GB.
# usage: scripts/sanitize.sh [SECONDS]     (scripts/test.sh runs it with the default)
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-30}
if ! [[ $seconds =~ ^[1-9][0-9]*$ ]]; then
  echo "sanitize: SECONDS must be a whole number of seconds >= 1 (got '$seconds')" >&2
  exit 2
fi
# -O1 and line tables (what sanitizer reports need) build about a fifth faster than RelWithDebInfo's -O2 -g
CC=clang CXX=clang++ cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -gline-tables-only -DNDEBUG" -DDTSIM_SANITIZE=ON -DDTSIM_FUZZ=ON \
  -DDTSIM_BUILD_TESTS=ON -DDTSIM_CUDA=OFF > /dev/null
# What the job runs, not every target (tests/fuzz/CMakeLists.txt): the CLI and the tests, and a libFuzzer binary per
# loader (its run below starts by replaying the shipped files and kept crashers, so the fuzz-replay:* tests run in the
# release build only); not the replay binaries or the bench/ programs.
cmake --build build-asan -j"$(nproc)" --target sanitizer-job
echo "sanitize: build took $SECONDS s"
# Sanitizer reports go to files, not into the outputs the tests parse: SimGrid switches stacks (its raw contexts),
# which ASan notes once per process with a warning. Any report is fatal (abort_on_error, halt_on_error) and the logs
# are searched afterwards as well. Leaks are not checked here: OpenMPI's plugins leak and are unloaded before
# LeakSanitizer looks, so their reports cannot be told apart; the fuzz runs below check leaks in every loader.
logs=$PWD/build-asan/sanitizer-logs
rm -rf "$logs"; mkdir -p "$logs"
export ASAN_OPTIONS=detect_leaks=0:abort_on_error=1:strict_string_checks=1:log_path=$logs/asan
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1:log_path=$logs/ubsan
# the Catch2 tests and the fuzz replays, but for those scripts/release-only-tests.txt leaves to the release build
release_only=$(bash scripts/release-only-tests.sh)
ctest --test-dir build-asan --output-on-failure -j"$(nproc)" -E "$release_only"
echo "sanitize: build and tests took $SECONDS s"
if grep -l -E 'ERROR: (Address|LeakSanitizer|UndefinedBehavior)|runtime error:' "$logs"/* 2> /dev/null; then
  echo "sanitize: the reports above (in $logs) came from runs whose exit status did not show them" >&2
  exit 1
fi
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:strict_string_checks=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
# each loader, from the shipped files and kept crashers; new inputs go to a work corpus that is thrown away
status=0
for target in build-asan/fuzz/fuzz_*; do
  [[ -x $target ]] || continue
  loader=${target##*/fuzz_}
  corpus=build-asan/fuzz/corpus-$loader artifacts=build-asan/fuzz/artifacts-$loader
  rm -rf "$corpus" "$artifacts"; mkdir -p "$corpus" "$artifacts"
  mapfile -t seeds < "build-asan/fuzz/$loader.seeds"
  for s in "${seeds[@]}"; do
    if [[ -d $s ]]; then cp -r "$s"/. "$corpus"/; else cp "$s" "$corpus"/; fi
  done
  if "$target" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=2048 \
       -artifact_prefix="$artifacts/" -print_final_stats=1 "$corpus" > "build-asan/fuzz/$loader.log" 2>&1; then
    runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "build-asan/fuzz/$loader.log" | grep -o '[0-9]*$' || echo '?')
    echo "fuzz $loader: ${seconds} s, $runs inputs, no crash"
  else
    status=1
    echo "fuzz $loader: FAILED; the input is in $artifacts (keep it in tests/fuzz/crashers/$loader once fixed):"
    tail -40 "build-asan/fuzz/$loader.log"
  fi
done
exit "$status"
