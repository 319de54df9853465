#!/usr/bin/env bash
# Removes what runs of emulated-run.sh left behind when they were killed before their trap could run (SIGKILL): the
# network namespaces (dt<PID>...) and work folders (dtsim-validate-<PID>-...) of scripts that are no longer running,
# with any process still inside those namespaces. usage: stale-cleanup.sh [PID to keep]
set -uo pipefail
self=${1:-$$}
# Leftovers of a run that was killed before its trap could run (SIGKILL): namespaces and work folders carry the PID of
# the script that made them; those whose script is gone are removed, with any process still inside them.
for ns in $(ip netns list 2>/dev/null | awk '{print $1}' | grep -E '^dt[0-9]+' || true); do
  pid=${ns#dt}; pid=${pid%%[!0-9]*}
  if [[ $pid != "$self" ]] && ! kill -0 "$pid" 2>/dev/null; then
    for p in $(ip netns pids "$ns" 2>/dev/null); do kill -9 "$p" 2>/dev/null || true; done
    ip netns del "$ns" 2>/dev/null || true
  fi
done
for dir in "${TMPDIR:-/tmp}"/dtsim-validate-*; do
  [[ -d $dir ]] || continue
  pid=${dir##*/dtsim-validate-}; pid=${pid%%-*}
  if [[ $pid =~ ^[0-9]+$ && $pid != "$self" ]] && ! kill -0 "$pid" 2>/dev/null; then rm -rf "$dir"; fi
done
