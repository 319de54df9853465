#!/usr/bin/env bash
# Renders a dtsim HTML report in headless Chromium and fails on any console message (the page has no scripts, so a
# message means an SVG attribute Chromium could not parse, or a resource it tried to load) or a failed render. The
# screenshot is kept as the test's artifact in OUT_DIR.
# usage: render-report.sh CHROMIUM DTSIM SOURCE_DIR OUT_DIR      (makes a report from predict, compare, validation and published)
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
  "$dtsim" validate --published --split all --json --max-median-error 100 > "$out/published.json"
  "$dtsim" report "$out/predict.json" "$out/compare.json" "$source_dir/reports/validation.json" \
    "$out/published.json" -o "$out/report.html"
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
# Text laid out by the browser's own fonts must lie inside its chart (an SVG clips what falls outside its box): a copy
# of the page with a script that measures every SVG text element, dumped as Chromium sees it after running it.
measure="$out/$(basename "$page" .html).measure.html"
check='<script>(function(){var n=0,bad=[];document.querySelectorAll("svg").forEach(function(svg){'
check+='var s=svg.getBoundingClientRect();svg.querySelectorAll("text").forEach(function(t){n++;'
check+='var r=t.getBoundingClientRect();if(r.left<s.left-0.5||r.right>s.right+0.5||r.top<s.top-0.5||'
check+='r.bottom>s.bottom+0.5)bad.push(t.textContent);});});document.body.setAttribute("data-text-check",'
check+='bad.length?"clipped: "+bad.join(" | "):"ok "+n);})();</script>'
awk -v check="$check" '{ i = index($0, "</body>"); if (i) $0 = substr($0, 1, i - 1) check substr($0, i); print }' \
  "$page" > "$measure"
dom="$out/$(basename "$page" .html).dom.html"
timeout 120 "$chromium" --headless=new --no-sandbox --disable-gpu --no-first-run --user-data-dir="$profile" \
  --proxy-server=127.0.0.1:9 --window-size=1500,5000 --dump-dom "file://$(realpath "$measure")" > "$dom" 2>> "$log" \
  || { cat "$log"; echo "render-report: chromium failed measuring the text"; exit 1; }
verdict=$(grep -o 'data-text-check="[^"]*"' "$dom" || true)
if [[ $verdict != 'data-text-check="ok '[1-9]* ]]; then
  echo "render-report: text outside its chart in $page: ${verdict:-the measuring script did not run}"
  exit 1
fi
echo "render-report: $page rendered without console messages, its text inside its charts (${verdict#*=}); screenshot $shot"
