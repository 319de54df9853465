#!/usr/bin/env bash
# validation/stale-cleanup.sh removes the namespaces and work folders of emulated-run.sh scripts that are gone, and
# keeps those of running ones. Needs root for network namespaces (CI has it); exits 77 (skipped) without.
set -uo pipefail
script="$1/validation/stale-cleanup.sh"
if [[ $(id -u) -ne 0 ]] || ! command -v ip > /dev/null; then echo "skipped: needs root and ip"; exit 77; fi
sleep 0 & dead=$!; wait "$dead"  # a PID that no longer runs
live=$$
tmp=$(mktemp -d); export TMPDIR=$tmp
ip netns add "dt${dead}sw"; ip netns add "dt${live}sw"
mkdir "$tmp/dtsim-validate-${dead}-a" "$tmp/dtsim-validate-${live}-b"
bash "$script" 1
fail=0
ip netns list | grep -q "^dt${dead}sw" && { echo "FAIL: dt${dead}sw (gone script) was kept"; fail=1; }
ip netns list | grep -q "^dt${live}sw" || { echo "FAIL: dt${live}sw (running script) was removed"; fail=1; }
[[ -d $tmp/dtsim-validate-${dead}-a ]] && { echo "FAIL: the gone script's folder was kept"; fail=1; }
[[ -d $tmp/dtsim-validate-${live}-b ]] || { echo "FAIL: the running script's folder was removed"; fail=1; }
ip netns del "dt${live}sw" 2> /dev/null; ip netns del "dt${dead}sw" 2> /dev/null
rm -rf "$tmp"
[[ $fail -eq 0 ]] && echo "stale namespaces and folders removed, running ones kept"
exit $fail
