#!/usr/bin/env bash
# Prints scripts/release-only-tests.txt as one CTest regular expression: ^(line1|line2|...), comments left out.
# usage: release-only-tests.sh [--check BUILD_DIR]   (--check: fails when a line names no test of that build, so that
#                                                      a renamed test cannot drop out of both CI passes unnoticed)
set -euo pipefail
list="$(dirname "$0")/release-only-tests.txt"
mapfile -t lines < <(sed -e 's/[[:space:]]*#.*$//' -e '/^[[:space:]]*$/d' "$list")
((${#lines[@]} > 0)) || { echo "release-only-tests: $list names no test" >&2; exit 1; }
if [[ ${1:-} == --check ]]; then
  for pattern in "${lines[@]}"; do
    listed=$(ctest --test-dir "$2" -N -R "^($pattern)")
    if ! grep -q '^ *Test *#' <<< "$listed"; then
      echo "release-only-tests: '$pattern' ($list) names no test in $2" >&2
      exit 1
    fi
  done
fi
(IFS='|'; echo "^(${lines[*]})")
