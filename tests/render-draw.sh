#!/usr/bin/env bash
# `dtsim draw -o FILE.html` in headless Chromium: renders without console messages with its text inside its pictures
# (render-report.sh --page), and its steps advance: played (#play), the page ends showing its last round.
# usage: render-draw.sh CHROMIUM DTSIM OUT_DIR
set -euo pipefail
chromium=$1 dtsim=$2 out=$3
mkdir -p "$out"
here=$(dirname "$0")
"$dtsim" draw --algorithm pipelined-tree --ranks 7 --bytes 4B --values 7,5,6,1,2,3,4 -o "$out/tree.html"
"$dtsim" draw --algorithm ring --ranks 6 -o "$out/ring.html"
for page in tree ring; do
  bash "$here/render-report.sh" "$chromium" --page "$out/$page.html" "$out"
  rounds=$(grep -c 'class="step' "$out/$page.html")
  profile=$(mktemp -d)
  timeout 120 "$chromium" --headless=new --no-sandbox --disable-gpu --no-first-run --user-data-dir="$profile" \
    --proxy-server=127.0.0.1:9 --virtual-time-budget=60000 --dump-dom "file://$(realpath "$out/$page.html")#play" \
    > "$out/$page.played.html" 2>/dev/null
  rm -rf "$profile"
  shown=$(grep -o 'data-shown="[0-9]*"' "$out/$page.played.html" || true)
  if [[ $shown != "data-shown=\"$((rounds - 1))\"" ]]; then
    echo "render-draw: $page.html played to ${shown:-nothing}, expected its last round ($((rounds - 1)))"
    exit 1
  fi
  echo "render-draw: $page.html played through its $((rounds - 1)) rounds"
done
