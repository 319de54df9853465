#!/usr/bin/env bash
# `dtsim draw -o FILE.html` and `dtsim lesson` in headless Chromium: each renders without console messages with its
# text inside its pictures (render-report.sh --page), and its steps advance: a drawing played (#play) ends showing its
# last round, the lesson stepped with its next button (#last) its last section.
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
"$dtsim" lesson --quick -o "$out/lesson.html"
bash "$here/render-report.sh" "$chromium" --page "$out/lesson.html" "$out"
sections=$(grep -c '<section' "$out/lesson.html")
profile=$(mktemp -d)
timeout 120 "$chromium" --headless=new --no-sandbox --disable-gpu --no-first-run --user-data-dir="$profile" \
  --proxy-server=127.0.0.1:9 --virtual-time-budget=5000 --dump-dom "file://$(realpath "$out/lesson.html")#last" \
  > "$out/lesson.stepped.html" 2>/dev/null
rm -rf "$profile"
shown=$(grep -o 'data-shown="[0-9]*"' "$out/lesson.stepped.html" || true)
if [[ $shown != "data-shown=\"$((sections - 1))\"" ]]; then
  echo "render-draw: lesson.html stepped to ${shown:-nothing}, expected its last section ($((sections - 1)))"
  exit 1
fi
echo "render-draw: lesson.html stepped through its $sections sections"
