#!/usr/bin/env bash
# Benchmark (not a test): NCCL on rail-optimised DGX A100 clusters (scenarios/clusters/dgx-a100.json with
# "rails": true), two dtsim builds side by side, alternating, twice each. usage:
#   scripts/bench-rails.sh OLD_DTSIM NEW_DTSIM
# Prints a Markdown table of wall seconds and peak RSS (/usr/bin/time) and the simulated times of both builds; a run
# stopped at 150 s shows 150 and no simulated time.
set -euo pipefail
(($# == 2)) || { echo "usage: scripts/bench-rails.sh OLD_DTSIM NEW_DTSIM" >&2; exit 2; }
old=$(realpath "$1") new=$(realpath "$2")
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
python3 - "$tmp/dgx-a100-rails.json" <<'PY'
import json, sys
d = json.load(open("scenarios/clusters/dgx-a100.json"))
d["cluster"]["name"] = "dgx-a100-rails"
d["cluster"]["fabric"]["rails"] = True
json.dump(d, open(sys.argv[1], "w"), indent=2)
PY
c="$tmp/dgx-a100-rails.json"
runs=(
  "collective --cluster $c --nodes 100 --algorithm ring --bytes 25MB --library nccl --protocol simple --json"
  "collective --cluster $c --nodes 128 --algorithm ring --bytes 25MB --library nccl --protocol simple --json"
  "predict scenarios/training/bert-large-dgx-a100.json --cluster $c --library nccl --algorithm ring --accelerators 1024 --json"
)
echo "| ARGS (C: dgx-a100.json with rails) | before (s) | after (s) | peak RSS before / after (MB) | simulated before / after |"
echo "|---|---|---|---|---|"
for args in "${runs[@]}"; do
  declare -a t_old=() t_new=()
  for _ in 1 2; do
    for which in old new; do
      bin=$old; [[ $which == new ]] && bin=$new
      # shellcheck disable=SC2086
      /usr/bin/time -f "%e %M" -o "$tmp/time" timeout 150 "$bin" $args >"$tmp/$which.json" || echo '{}' >"$tmp/$which.json"
      # (a run that exits non-zero, e.g. stopped by timeout, has a line before the figures)
      read -r wall rss < <(tail -n 1 "$tmp/time")
      if [[ $which == old ]]; then t_old+=("$wall") rss_old=$rss; else t_new+=("$wall") rss_new=$rss; fi
    done
  done
  sim=$(python3 - "$tmp/old.json" "$tmp/new.json" <<'PY'
import json, sys
def t(path):
    try:
        d = json.load(open(path))
    except Exception:
        return "-"
    if "time_s" in d:
        return f"{d['time_s'] * 1e3:.4f} ms"
    r = (d.get("results") or [{}])[-1]
    return f"{r.get('step_time_s', float('nan')) * 1e3:.4f} ms a step" if r else "-"
print(f"{t(sys.argv[1])} / {t(sys.argv[2])}")
PY
)
  shown=${args//$c/C}
  echo "| \`dtsim ${shown% --json}\` | ${t_old[0]}, ${t_old[1]} | ${t_new[0]}, ${t_new[1]} | $((rss_old / 1024)) / $((rss_new / 1024)) | $sim |"
done
