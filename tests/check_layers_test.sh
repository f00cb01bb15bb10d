#!/bin/sh
# ci/check-layers on small planted trees (docs/architecture.md): a new violation, a stale
# allow-list row and a report/ that links more must each fail, with a message naming them.
# Usage: check_layers_test.sh SOURCE_DIR WORK_DIR
set -eu
src=$1
work=$2
rm -rf "$work"
plant() {  # a tree with the real script and doc, and nothing else
  rm -rf "$work/t"
  mkdir -p "$work/t/ci" "$work/t/docs" "$work/t/cmake" "$work/t/ir" "$work/t/harness" "$work/t/report"
  cp "$src/ci/check-layers" "$work/t/ci/"
  cp "$src/docs/architecture.md" "$work/t/docs/"
  : > "$work/t/CMakeLists.txt"
  echo '// empty' > "$work/t/harness/check.h"
}
expect() {  # expect STATUS TEXT ARGS...: the check exits STATUS and prints TEXT
  status=$1 text=$2
  shift 2
  set +e
  out=$("$work/t/ci/check-layers" "$@" 2>&1)
  got=$?
  set -e
  if [ "$got" -ne "$status" ] || ! printf '%s\n' "$out" | grep -q "$text"; then
    printf 'expected exit %s and "%s", got exit %s:\n%s\n' "$status" "$text" "$got" "$out"
    exit 1
  fi
}
# (The real tree passing is ctest layers/check and layers/report-links.)
# ir/ including harness/: a new violation. The real allow-list is stale in a planted tree.
plant
echo '#include "harness/check.h"' > "$work/t/ir/graph.h"
expect 1 'NEW VIOLATION: ir/ (rank 1) depends on harness/ (rank 6)'
expect 1 'STALE ALLOW-LIST ENTRY: report -> optimizer'
# report/ using campaign/, a higher rank.
plant
mkdir -p "$work/t/campaign"
echo '// empty' > "$work/t/campaign/campaign.h"
echo '#include "campaign/campaign.h"' > "$work/t/report/summary.cc"
expect 1 'NEW VIOLATION: report/ (rank 7) depends on campaign/ (rank 8)'
# A CMake link breaks the table as an include does.
plant
echo 'target_link_libraries(fusefuzz_optimizer PUBLIC fusefuzz_targets)' > "$work/t/CMakeLists.txt"
expect 1 'fusefuzz_optimizer links fusefuzz_targets'
# report/'s link closure: one more library fails, one fewer fails too (tighten the pin).
cp "$src/CMakeLists.txt" "$work/t/CMakeLists.txt"
cp "$src/cmake/"*.cmake "$work/t/cmake/"
echo 'target_link_libraries(fusefuzz_report PUBLIC fusefuzz_campaign)' >> "$work/t/CMakeLists.txt"
expect 1 'LINKS MORE: fusefuzz_report now reaches fusefuzz_campaign' --report-links
cp "$src/CMakeLists.txt" "$work/t/CMakeLists.txt"
sed -i 's/PUBLIC fusefuzz_targets fusefuzz_reduce/PUBLIC fusefuzz_targets/' "$work/t/CMakeLists.txt"
expect 1 'LINKS LESS: fusefuzz_report no longer reaches fusefuzz_reduce' --report-links
echo "check_layers_test: passed"
