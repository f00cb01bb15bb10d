#!/usr/bin/env bash
# Runs every ```sh block of README.md, so the README cannot drift from the tool.
#   tests/readme_commands.sh BUILD_DIR SOURCE_DIR
# The blocks run in a temporary copy of the repository's tracked files (nothing lands in the
# source tree), with BUILD_DIR reachable as build/release and on PATH. Each command line must
# exit with the status its trailing comment names ("# ... exit 1"), else 0.
# Markers on the line before a block (HTML comments, invisible on GitHub):
#   <!-- doc-test: skip (why) -->               the block is not run (long campaigns, builds)
#   <!-- doc-test: replace "FROM" "TO" -->       run the block with FROM replaced by TO, e.g. a
#                                                shorter --seconds; several may follow each other
set -uo pipefail
build=$(cd "$1" && pwd)
src=$(cd "$2" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$src" && git ls-files -z 2>/dev/null | xargs -0 cp --parents -t "$tmp" 2>/dev/null) ||
  cp -r "$src/README.md" "$src/corpus" "$tmp/"
[ -f "$tmp/README.md" ] || cp "$src/README.md" "$tmp/"
mkdir -p "$tmp/build"
rm -rf "$tmp/build/release"
ln -s "$build" "$tmp/build/release"
export PATH="$build:$PATH"
cd "$tmp"

failures=0 ran=0 skipped=0
in_block=0 skip=0 block_start=0 lineno=0
declare -a from=() to=()
cmd=""
run_line() {
  local line=$1 at=$2 expect=0
  [[ "$line" =~ \#.*exit\ ([0-9]+) ]] && expect=${BASH_REMATCH[1]}
  for i in "${!from[@]}"; do line=${line//"${from[$i]}"/"${to[$i]}"}; done
  local out status
  out=$(bash -c "$line" 2>&1 </dev/null)
  status=$?
  ran=$((ran + 1))
  if [ "$status" -ne "$expect" ]; then
    failures=$((failures + 1))
    echo "README.md:$at: exit $status, expected $expect: $line"
    echo "$out" | tail -n 20 | sed 's/^/    /'
  fi
}
while IFS= read -r raw || [ -n "$raw" ]; do
  lineno=$((lineno + 1))
  if [ $in_block -eq 0 ]; then
    if [[ "$raw" =~ ^\<\!--\ doc-test:\ skip ]]; then skip=1; continue; fi
    if [[ "$raw" =~ ^\<\!--\ doc-test:\ replace\ \"([^\"]*)\"\ \"([^\"]*)\"\ --\>$ ]]; then
      from+=("${BASH_REMATCH[1]}"); to+=("${BASH_REMATCH[2]}"); continue
    fi
    if [[ "$raw" == '```sh' ]]; then in_block=1; block_start=$lineno; cmd=""; continue; fi
    [ -n "$raw" ] && { skip=0; from=(); to=(); }
    continue
  fi
  if [[ "$raw" == '```' ]]; then
    [ $skip -eq 1 ] && skipped=$((skipped + 1))
    in_block=0 skip=0 from=() to=()
    continue
  fi
  [ $skip -eq 1 ] && continue
  # Continuation lines (ending in a backslash) join the next one.
  if [[ "$raw" == *\\ ]]; then cmd+="${raw%\\} "; continue; fi
  cmd+="$raw"
  trimmed="${cmd#"${cmd%%[![:space:]]*}"}"
  if [ -n "$trimmed" ] && [[ "$trimmed" != \#* ]]; then run_line "$cmd" "$lineno"; fi
  cmd=""
done < README.md

echo "readme-commands: $ran commands run, $failures failed, $skipped blocks skipped (marked)"
# A README with no runnable command would pass vacuously.
[ "$ran" -gt 0 ] && [ "$failures" -eq 0 ]
