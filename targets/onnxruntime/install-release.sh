#!/usr/bin/env bash
# Installs one onnxruntime-node release for the target onnxruntime@VERSION:LEVEL (docs/onnx.md,
# "Testing another release"), outside the repository:
#   targets/onnxruntime/install-release.sh 1.20.1
# into ${FUSEFUZZ_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/fusefuzz}/onnxruntime/VERSION, pinned
# exactly, with npm's --ignore-scripts (the package's install script downloads GPU libraries from
# outside the npm registry; the CPU library ships inside the package). The folder appears only
# once npm succeeded (installed beside it, then renamed), so a half install is never used.
# Exit 2 for a VERSION that is not x.y.z; npm's status when npm fails.
set -euo pipefail
if [ $# -ne 1 ] || ! [[ "$1" =~ ^(0|[1-9][0-9]{0,3})\.(0|[1-9][0-9]{0,3})\.(0|[1-9][0-9]{0,3})$ ]]; then
  echo "usage: install-release.sh VERSION (an onnxruntime-node release x.y.z, e.g. 1.20.1;" \
       "npm view onnxruntime-node versions lists them)" >&2
  exit 2
fi
version=$1
cache=${FUSEFUZZ_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/fusefuzz}
case "$cache" in
  /*) ;;
  *) echo "install-release.sh: the cache folder '$cache' must be an absolute path" >&2; exit 2 ;;
esac
dest=$cache/onnxruntime/$version
if [ -f "$dest/node_modules/onnxruntime-node/package.json" ]; then
  echo "onnxruntime-node $version already installed in $dest" >&2
  exit 0
fi
mkdir -p "$cache/onnxruntime"
work=$(mktemp -d "$cache/onnxruntime/.install-$version.XXXXXX")
trap 'rm -rf "$work"' EXIT
printf '{"name":"fusefuzz-ort-%s","version":"0.0.0","private":true,"license":"UNLICENSED"}\n' \
  "$version" >"$work/package.json"
echo "install-release.sh: npm install onnxruntime-node@$version into $dest (about 200-250 MB)" >&2
(cd "$work" && npm install --ignore-scripts --no-audit --no-fund --save-exact \
  "onnxruntime-node@$version" >&2)
if [ ! -f "$work/node_modules/onnxruntime-node/package.json" ]; then
  echo "install-release.sh: npm left no onnxruntime-node in $work" >&2
  exit 1
fi
rm -rf "$dest"
mv "$work" "$dest"
trap - EXIT
echo "onnxruntime-node $version installed in $dest" >&2
