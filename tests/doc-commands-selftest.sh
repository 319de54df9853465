#!/usr/bin/env bash
# Shows that doc-commands.sh catches what it is for: on tests/data/doc-commands/broken.md it must fail and name
# each problem by file and line; on good.md (skip, short and exit markers, a pipeline, an && chain with a >
# redirection, a continued line, repeated headings) it must pass, run the short form, and leave no output behind,
# not even over a file of the repository (overwritten.txt, which good.md overwrites in its copy).
# usage: doc-commands-selftest.sh DTSIM SOURCE_DIR
set -uo pipefail
dtsim=$1
source_dir=$(realpath "$2")
checker=$source_dir/tests/doc-commands.sh
data=tests/data/doc-commands
problems=0

expect() { # what, text to find in output
  if ! grep -qF -- "$2" <<< "$output"; then
    echo "doc-commands-selftest: expected $1, missing: $2"
    problems=$((problems + 1))
  fi
}
line_of() { # the first line of FILE holding TEXT
  grep -nF -- "$2" "$source_dir/$1" | head -n 1 | cut -d: -f1
}

# broken.md
output=$(bash "$checker" "$dtsim" "$source_dir" "$data/broken.md" 2>&1)
rc=$?
echo "$output"
echo "----"
if ((rc != 1)); then
  echo "doc-commands-selftest: broken.md: exit $rc, expected 1"
  problems=$((problems + 1))
fi
b=$data/broken.md
expect "a link to a missing file" "$b:$(line_of "$b" 'no-such-file.md'): link to no-such-file.md: no-such-file.md does not exist"
expect "a link to a missing anchor" "$b:$(line_of "$b" '#no-such-heading'): link to #no-such-heading: no heading of $b has the anchor"
expect "an inline command naming a missing file" "$b:$(line_of "$b" 'over two lines'): names scenarios/training/no-such-inline.json, not in the repository"
expect "a stale marker" "$b:$(line_of "$b" 'collective --ranks 3'): doc-test marker names \`build/dtsim collective --ranks 3\`, which is not a command of the code block after it"
expect "an unreadable marker" "$b:$(line_of "$b" 'doc-test: later'): unreadable doc-test marker"
scenario_line=$(line_of "$b" 'no-such-scenario.json')
expect "a command naming a missing file" "$b:$scenario_line: names scenarios/training/no-such-scenario.json, not in the repository"
expect "that command failing" "$b:$scenario_line: exit 2, expected 0: build/dtsim predict scenarios/training/no-such-scenario.json"
expect "its output" "dtsim predict: scenarios/training/no-such-scenario.json: cannot read the file"
expect "a failing command in a pipeline" "$b:$(line_of "$b" 'ranks 0 | cat'): exit 2, expected 0: build/dtsim collective --ranks 0 | cat"
expect "validate refused" "$b:$(line_of "$b" 'validate --quick'): not run: dtsim validate without --measured"
expect "mpirun refused" "$b:$(line_of "$b" 'mpirun'): not run: runs MPI processes"
expect "a command that should fail and did not" "$b:$(grep -nxF 'build/dtsim collective --ranks 8' "$source_dir/$b" | cut -d: -f1): exit 0, expected 2: build/dtsim collective --ranks 8"
expect "a marker with no block after it" "$b:$(line_of "$b" 'nothing after it'): doc-test marker with no code block after it"
expect "the count" "doc-commands: FAILED: 12 problems"

# good.md
output=$(bash "$checker" "$dtsim" "$source_dir" "$data/good.md" 2>&1)
rc=$?
echo "$output"
echo "----"
if ((rc != 0)); then
  echo "doc-commands-selftest: good.md: exit $rc, expected 0"
  problems=$((problems + 1))
fi
g=$data/good.md
expect "the skip" "$g:$(line_of "$g" '# skipped'): build/dtsim validate  (skipped: real MPI on network namespaces)"
expect "the short form run" "short form: build/dtsim predict --accelerators 1,2 --json > fit.json)"
expect "the expected failure" "$g:$(line_of "$g" '# fails, as the doc says'): build/dtsim collective --ranks 0  (exit 2,"
expect "the continued line joined" "build/dtsim cluster scenarios/clusters/dgx-a100.json --nodes 2  (exit 0,"
expect "the counts" "doc-commands: $g: 7 commands run (1 in a short form), 1 skipped"
if [[ $(cat "$source_dir/$data/overwritten.txt") != unchanged ]]; then
  echo "doc-commands-selftest: a command overwrote $data/overwritten.txt in the repository, not in its copy"
  problems=$((problems + 1))
fi
for left in fit.json doc-test-output.json doc-test-report.html; do
  if [[ -e $source_dir/$left || -e $source_dir/$data/$left || -e $PWD/$left ]]; then
    echo "doc-commands-selftest: $left was written outside the temporary directory"
    problems=$((problems + 1))
  fi
done

if ((problems > 0)); then
  echo "doc-commands-selftest: FAILED: $problems"
  exit 1
fi
echo "doc-commands-selftest: passed"
