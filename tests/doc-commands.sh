#!/usr/bin/env bash
# Runs the dtsim commands a markdown file shows, so a doc command that fails or names a missing file fails the test.
# usage: doc-commands.sh DTSIM SOURCE_DIR FILE.md...       (FILE relative to SOURCE_DIR, or absolute)
#
# What is checked, per file, read at test time:
# - Every line of a fenced code block that runs build/dtsim (it starts with build/dtsim or ./build/dtsim, or with
#   time, /usr/bin/time, timeout, env, sudo, mpirun or VAR=value and runs build/dtsim later) is run with bash (pipefail,
#   stdin from /dev/null) and must exit 0; lines ending in \ continue. Other lines (output, bash scripts/...) are not.
#   The commands of one file run in order in one fresh temporary directory that holds a copy of SOURCE_DIR (2 MB;
#   hidden entries and build/ left out) and build -> the directory of DTSIM, so scenarios/... and build/dtsim resolve
#   as from the repository root while outputs (report.html, predict.json, even an overwritten reports/validation.md)
#   land in the temporary directory, removed at the end.
# - Paths into the repository (a word starting with one of SOURCE_DIR's top-level directories, such as
#   scenarios/training/x.json) must exist, in every fenced command, run or not, and in every inline `build/dtsim ...`
#   span of the prose (those record runs, often long or with placeholders like N, and are not run). Words after
#   output flags (-o, --out, --out-dir, --trace, --xml, --csv, --resume) or > are outputs and not checked.
# - Relative links [text](path#anchor) outside code: the path must exist and the anchor name a heading of the file
#   (GitHub's anchors: lower case, punctuation dropped, spaces to hyphens, -1, -2 for repeats).
# - Never run, whatever the doc says: mpirun or mpiexec (processes over MPI), dtsim validate without --measured or
#   --repredict (real MPI on network namespaces, as root, up to 30 minutes). Such a command needs a marker.
#
# Markers: an HTML comment on a line of its own, outside code, invisible on the rendered page; each applies to the
# next fenced block and names one of its commands exactly (its trailing # comment and repeated spaces left out):
#   <!-- doc-test: skip `COMMAND` WHY -->            not run (its repository paths are still checked)
#   <!-- doc-test: short `COMMAND` as `SHORTER` -->  SHORTER is run in its place (a slow command's documented short form)
#   <!-- doc-test: exit N `COMMAND` -->              the doc says COMMAND fails: it must exit N
# A marker whose command is not in the next block fails the test, so markers cannot outlive their commands.
# Each failure is printed as FILE:LINE: what, with the command and the end of its output; the exit status is 1 when
# anything failed. A command is stopped after 300 s (a hang guard, not a speed check; slow commands get a short form).
set -uo pipefail

if (($# < 3)); then
  echo "usage: doc-commands.sh DTSIM SOURCE_DIR FILE.md..." >&2
  exit 2
fi
dtsim=$(realpath "$1")
source_dir=$(realpath "$2")
shift 2
[[ -x $dtsim ]] || { echo "doc-commands: $dtsim is not an executable" >&2; exit 2; }
bin_dir=$(dirname "$dtsim")
command_timeout_s=300

root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT
failures=0

# FILE:LINE: message, and what follows it (indented) on stdin when $3 is "-"
fail() {
  echo "$1: $2"
  if [[ ${3:-} == - ]]; then sed 's/^/    | /'; fi
  failures=$((failures + 1))
}

# Records of a markdown file, one a line, tab-separated, the text last:
#   M LINE TEXT   a doc-test marker outside code       O LINE       a fence opens
#   C LINE TEXT   a logical line inside a fence         E LINE       the fence closes
#   I LINE TEXT   an inline code span outside fences    L LINE TARGET  a link target outside code
#   H LINE TEXT   a heading
# Continuation lines (ending in \) are joined; an inline span may run over lines of a paragraph.
scan_markdown() {
  awk '
    function flush_inline() { if (in_span) { in_span = 0; span = "" } }
    BEGIN { fence = "" ; in_span = 0 }
    {
      line = $0
      sub(/\r$/, "", line)
      trimmed = line
      sub(/^[ \t]+/, "", trimmed)
      if (fence == "" && match(trimmed, /^(```+|~~~+)/)) {
        fence = substr(trimmed, 1, RLENGTH); flush_inline(); pending = ""
        print "O\t" NR; next
      }
      if (fence != "") {
        if (index(trimmed, fence) == 1 && trimmed ~ /^(`+|~+)[ \t]*$/) {
          if (pending != "") { print "C\t" pending_line "\t" pending; pending = "" }
          fence = ""; print "E\t" NR; next
        }
        if (pending == "") pending_line = NR
        if (line ~ /\\$/) { pending = pending substr(line, 1, length(line) - 1); next }
        pending = pending line
        print "C\t" pending_line "\t" pending; pending = ""
        next
      }
      if (trimmed ~ /^<!--[ \t]*doc-test/) { flush_inline(); print "M\t" NR "\t" trimmed; next }
      if (trimmed == "") { flush_inline(); next }
      if (trimmed ~ /^#+[ \t]/) { h = trimmed; sub(/^#+[ \t]+/, "", h); sub(/[ \t]+#*[ \t]*$/, "", h); print "H\t" NR "\t" h }
      # inline spans and links, character by character
      n = length(line)
      for (i = 1; i <= n; i++) {
        c = substr(line, i, 1)
        if (c == "`") {
          if (in_span) { print "I\t" span_line "\t" span; in_span = 0; span = "" }
          else { in_span = 1; span = ""; span_line = NR }
          continue
        }
        if (in_span) { span = span c; continue }
        if (c == "]" && substr(line, i + 1, 1) == "(") {
          rest = substr(line, i + 2)
          j = index(rest, ")")
          if (j > 0) { print "L\t" NR "\t" substr(rest, 1, j - 1); i += j + 1 }
        }
      }
      if (in_span) span = span " "
    }
    END { if (fence != "" && pending != "") print "C\t" pending_line "\t" pending }
  ' "$1"
}

# GitHub anchors of a markdown file's headings, one a line
anchors_of() {
  scan_markdown "$1" | awk -F'\t' '$1 == "H" {
    s = tolower($3)
    gsub(/[^a-z0-9 _-]/, "", s)
    gsub(/ /, "-", s)
    if (s in seen) { seen[s]++; s = s "-" seen[s] } else seen[s] = 0
    print s
  }'
}

# The command without its trailing # comment, spaces collapsed (what markers name)
normalize() {
  local text=${1%%[[:space:]]#*}
  local -a words
  read -ra words <<< "$text"
  printf '%s' "${words[*]}"
}

dtsim_re='(^|[[:space:]])(\./)?build/dtsim([[:space:]]|$)'
command_re='^(((sudo|time|/usr/bin/time|timeout|env|mpirun|mpiexec)[[:space:]]|[A-Za-z_][A-Za-z0-9_]*=[^[:space:]]*[[:space:]]).*)?(^|[[:space:]])(\./)?build/dtsim([[:space:]]|$)'
is_command() {
  local text
  text=$(normalize "$1")
  [[ $text =~ $command_re ]]
}

# Paths into the repository that do not exist, one a line
missing_paths() {
  local -a words
  read -ra words <<< "$(normalize "$1")"
  local skip_next=0 w top
  for w in "${words[@]}"; do
    if ((skip_next)); then skip_next=0; continue; fi
    case $w in
      -o | --out | --out-dir | --trace | --xml | --csv | --resume | '>' | '>>' | '2>' | '&>') skip_next=1; continue ;;
      --out=* | --out-dir=* | --trace=* | --xml=* | --csv=* | --resume=* | '>'* | '2>'*) continue ;;
      --*=*) w=${w#*=} ;;
    esac
    w=${w#[\"\']}
    w=${w%[\"\']}
    w=${w%[,;:.)]}
    [[ $w == */* ]] || continue
    top=${w%%/*}
    [[ -n $top && $top != . && $top != .. && $top != build && -d $source_dir/$top ]] || continue
    if [[ $w == *[*?]* ]]; then
      compgen -G "$source_dir/$w" > /dev/null || echo "$w"
    elif [[ ! -e $source_dir/$w ]]; then
      echo "$w"
    fi
  done
}

# Why a command must not be run, or nothing
refusal() {
  local text
  text=$(normalize "$1")
  local mpi_re='(^|[[:space:];&|(])(mpirun|mpiexec)[[:space:]]'
  local validate_re='build/dtsim[[:space:]]+validate([[:space:]]|$)'
  local offline_re='[[:space:]]--(measured|repredict|published)([[:space:]=]|$)'
  if [[ $text =~ $mpi_re ]]; then
    echo "runs MPI processes (mpirun)"
  elif [[ $text =~ $validate_re && ! $text =~ $offline_re ]]; then
    echo "dtsim validate without --measured, --repredict or --published runs real MPI on network namespaces (root, up to 30 min)"
  fi
}

check_file() {
  local file=$1 shown=$1
  [[ $file == /* ]] || file=$source_dir/$file
  if [[ ! -f $file ]]; then
    fail "$shown" "no such file"
    return
  fi
  local work
  work=$(mktemp -d -p "$root" work.XXXXXX)
  mkdir -p "$root/logs"
  local entry
  for entry in "$source_dir"/*; do
    [[ $(basename "$entry") == build ]] || cp -r "$entry" "$work/"
  done
  ln -s "$bin_dir" "$work/build"

  local -a marker_line=() marker_kind=() marker_command=() marker_arg=() marker_used=()
  local in_block=0 ran=0 skipped=0 shortened=0
  local kind line text
  local skip_re='^<!--[[:space:]]*doc-test:[[:space:]]+skip[[:space:]]+`([^`]+)`[[:space:]]+(.*[^[:space:]])[[:space:]]*-->$'
  local short_re='^<!--[[:space:]]*doc-test:[[:space:]]+short[[:space:]]+`([^`]+)`[[:space:]]+as[[:space:]]+`([^`]+)`[[:space:]]*-->$'
  local exit_re='^<!--[[:space:]]*doc-test:[[:space:]]+exit[[:space:]]+([0-9]+)[[:space:]]+`([^`]+)`[[:space:]]*-->$'
  local records
  records=$(scan_markdown "$file")
  while IFS=$'\t' read -r kind line text; do
    case $kind in
      M)
        local pending=${#marker_line[@]}
        if [[ $text =~ $skip_re ]]; then
          marker_kind[pending]=skip; marker_command[pending]=$(normalize "${BASH_REMATCH[1]}"); marker_arg[pending]=${BASH_REMATCH[2]}
        elif [[ $text =~ $short_re ]]; then
          marker_kind[pending]=short; marker_command[pending]=$(normalize "${BASH_REMATCH[1]}"); marker_arg[pending]=${BASH_REMATCH[2]}
        elif [[ $text =~ $exit_re ]]; then
          marker_kind[pending]=exit; marker_command[pending]=$(normalize "${BASH_REMATCH[2]}"); marker_arg[pending]=${BASH_REMATCH[1]}
        else
          fail "$shown:$line" "unreadable doc-test marker: $text (accepted: <!-- doc-test: skip \`COMMAND\` WHY -->, <!-- doc-test: short \`COMMAND\` as \`SHORTER\` -->, <!-- doc-test: exit N \`COMMAND\` -->)"
          continue
        fi
        marker_line[pending]=$line
        marker_used[pending]=0
        ;;
      O) in_block=1 ;;
      E)
        in_block=0
        local m
        for m in "${!marker_line[@]}"; do
          ((marker_used[m])) || fail "$shown:${marker_line[m]}" "doc-test marker names \`${marker_command[m]}\`, which is not a command of the code block after it"
        done
        marker_line=() marker_kind=() marker_command=() marker_arg=() marker_used=()
        ;;
      C)
        is_command "$text" || continue
        local command
        command=$(normalize "$text")
        local missing
        missing=$(missing_paths "$text")
        if [[ -n $missing ]]; then
          fail "$shown:$line" "names ${missing//$'\n'/, }, not in the repository: $command"
        fi
        local run=$text expect=0 how="" m
        for m in "${!marker_line[@]}"; do
          [[ ${marker_command[m]} == "$command" ]] || continue
          marker_used[m]=1
          case ${marker_kind[m]} in
            skip) run="" how="skipped: ${marker_arg[m]}" ;;
            short) run=${marker_arg[m]} how="short form: ${marker_arg[m]}" ;;
            exit) expect=${marker_arg[m]} ;;
          esac
        done
        if [[ -z $run ]]; then
          echo "$shown:$line: $command  ($how)"
          skipped=$((skipped + 1))
          continue
        fi
        local why
        why=$(refusal "$run")
        if [[ -n $why ]]; then
          fail "$shown:$line" "not run: $why; give it a marker (<!-- doc-test: short \`COMMAND\` as \`SHORTER\` --> or skip) before its code block: $(normalize "$run")"
          continue
        fi
        [[ -n $how ]] && shortened=$((shortened + 1))
        local log=$root/logs/$ran.log rc started=$EPOCHREALTIME
        (cd "$work" && timeout --kill-after=10 "$command_timeout_s" bash -o pipefail -c "$run") < /dev/null > "$log" 2>&1
        rc=$?
        ran=$((ran + 1))
        local took
        took=$(awk -v a="$started" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }')
        local slow=""
        [[ ${took%.*} -ge 60 && -z $how ]] && slow="; slow: a doc-test short form would keep this test quick"
        echo "$shown:$line: $command  (exit $rc, ${took} s${how:+; $how}$slow)"
        # 141: a writer stopped by SIGPIPE because a reader (head, grep -q) had all it wanted
        if ((rc == 124 || rc == 137)) && ((expect != rc)); then
          fail "$shown:$line" "still running after ${command_timeout_s} s, stopped: $(normalize "$run")" - < <(tail -n 15 "$log")
        elif ((rc != expect)) && ! ((expect == 0 && rc == 141)); then
          fail "$shown:$line" "exit $rc, expected $expect: $(normalize "$run") (run in a temporary copy of the repository root)" - < <(tail -n 15 "$log")
        fi
        ;;
      I)
        ((in_block)) && continue
        [[ $text =~ $dtsim_re ]] || continue
        local missing
        missing=$(missing_paths "$text")
        if [[ -n $missing ]]; then
          fail "$shown:$line" "names ${missing//$'\n'/, }, not in the repository: \`$(normalize "$text")\`"
        fi
        ;;
      L)
        local target=${text%% *} path anchor
        [[ $target =~ ^[a-zA-Z][a-zA-Z0-9+.-]*: ]] && continue # http:, https:, mailto:
        path=${target%%#*}
        anchor=""
        [[ $target == *#* ]] && anchor=${target#*#}
        local resolved=$file
        if [[ -n $path ]]; then
          resolved=$(dirname "$file")/$path
          if [[ ! -e $resolved ]]; then
            fail "$shown:$line" "link to $target: $path does not exist"
            continue
          fi
        fi
        if [[ -n $anchor && $resolved == *.md ]] && ! anchors_of "$resolved" | grep -qxF -- "$anchor"; then
          fail "$shown:$line" "link to $target: no heading of $(realpath --relative-to="$source_dir" "$resolved") has the anchor #$anchor"
        fi
        ;;
    esac
  done <<< "$records"
  for m in "${!marker_line[@]}"; do
    fail "$shown:${marker_line[m]}" "doc-test marker with no code block after it"
  done
  echo "doc-commands: $shown: $ran commands run ($shortened in a short form), $skipped skipped"
}

for f in "$@"; do
  check_file "$f"
done
if ((failures > 0)); then
  echo "doc-commands: FAILED: $failures problems (above, as FILE:LINE)"
  exit 1
fi
echo "doc-commands: passed"
