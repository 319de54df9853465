#!/usr/bin/env bash
# Renders a dtsim HTML report in headless Chromium and fails on any console message (the page has no scripts, so a
# message means an SVG attribute Chromium could not parse, or a resource it tried to load) or a failed render. The
# screenshot is kept as the test's artifact in OUT_DIR.
# usage: render-report.sh CHROMIUM DTSIM SOURCE_DIR OUT_DIR      (makes a report from predict, compare and validation)
#        render-report.sh CHROMIUM --page HTML OUT_DIR           (renders a given page)
set -euo pipefail
chromium=$1
if [[ $2 == --page ]]; then
  page=$(realpath "$3"); out=$4; mkdir -p "$out"
else
  dtsim=$2; source_dir=$3; out=$4; mkdir -p "$out"
  "$dtsim" predict --accelerators 1,4,8,16 --algorithm ring,tree,ps --json > "$out/predict.json"
  "$dtsim" compare --algorithms ring,tree,butterfly,rabenseifner --ranks 8,64 --bytes 1KB,64KB,1MB,100MB \
    --backend analytical --json > "$out/compare.json"
  "$dtsim" report "$out/predict.json" "$out/compare.json" "$source_dir/reports/validation.json" -o "$out/report.html"
  page=$(realpath "$out/report.html")
fi
shot="$out/$(basename "$page" .html).png"
log="$out/$(basename "$page" .html).chromium.log"
rm -f "$shot"
# a fresh profile each time; no network is needed (the page is self-contained), so none is offered
profile=$(mktemp -d)
trap 'rm -rf "$profile"' EXIT
timeout 120 "$chromium" --headless=new --no-sandbox --disable-gpu --no-first-run --user-data-dir="$profile" \
  --proxy-server=127.0.0.1:9 --enable-logging=stderr --v=0 --window-size=1500,5000 --screenshot="$shot" \
  "file://$page" > "$log" 2>&1 || { cat "$log"; echo "render-report: chromium failed"; exit 1; }
if grep -E "CONSOLE|Uncaught|Failed to load|net::ERR_" "$log"; then
  echo "render-report: console messages while rendering $page (above)"
  exit 1
fi
[[ -s $shot ]] || { cat "$log"; echo "render-report: no screenshot"; exit 1; }
echo "render-report: $page rendered without console messages; screenshot $shot"
