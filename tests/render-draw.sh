#!/usr/bin/env bash
# `dtsim draw -o FILE.html` and `dtsim lesson` in headless Chromium: each renders without console messages with its
# text inside its pictures (render-report.sh --page), and its steps advance: a drawing played (#play) ends showing its
# last round, the lesson stepped with its next button (#last) its last section.
# usage: render-draw.sh CHROMIUM DTSIM OUT_DIR
set -euo pipefail
chromium=$1 dtsim=$2 out=$3
mkdir -p "$out"
here=$(dirname "$0")

# advances PAGE (in OUT_DIR, without .html) by opening it at #HASH for BUDGET ms of virtual time; it must end showing
# panel LAST (its body's data-shown)
advances() {
  local page=$1 hash=$2 budget=$3 last=$4 profile shown
  bash "$here/render-report.sh" "$chromium" --page "$out/$page.html" "$out"
  profile=$(mktemp -d)
  timeout 120 "$chromium" --headless=new --no-sandbox --disable-gpu --no-first-run --user-data-dir="$profile" \
    --proxy-server=127.0.0.1:9 --virtual-time-budget="$budget" --dump-dom "file://$(realpath "$out/$page.html")#$hash" \
    > "$out/$page.$hash.html" 2>/dev/null
  rm -rf "$profile"
  shown=$(grep -o 'data-shown="[0-9]*"' "$out/$page.$hash.html" || true)
  if [[ $shown != "data-shown=\"$last\"" ]]; then
    echo "render-draw: $page.html (#$hash) ended at ${shown:-nothing}, expected its last panel ($last)"
    exit 1
  fi
  echo "render-draw: $page.html (#$hash) went through its panels to the last ($last)"
}

"$dtsim" draw --algorithm pipelined-tree --ranks 7 --bytes 4B --values 7,5,6,1,2,3,4 -o "$out/tree.html"
"$dtsim" draw --algorithm ring --ranks 6 -o "$out/ring.html"
for page in tree ring; do
  advances "$page" play 60000 $(($(grep -c 'class="step' "$out/$page.html") - 1))
done
"$dtsim" lesson --quick -o "$out/lesson.html"
advances lesson last 5000 $(($(grep -c '<section' "$out/lesson.html") - 1))
