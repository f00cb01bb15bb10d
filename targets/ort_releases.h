// ONNX Runtime releases other than the pinned one (docs/onnx.md, "Testing another release"):
// the target `onnxruntime@VERSION:LEVEL` runs the adapter against onnxruntime-node VERSION,
// installed by targets/onnxruntime/install-release.sh into
// ${FUSEFUZZ_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/fusefuzz}/onnxruntime/VERSION, and
// `replay --versions onnxruntime@A..B:LEVEL` replays a finding on every installed release from
// A to B.
#pragma once

#include <compare>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace fusefuzz {

// A release number x.y.z (npm's onnxruntime-node releases; no pre-release tags).
struct OrtVersion {
  int major = 0, minor = 0, patch = 0;
  auto operator<=>(const OrtVersion&) const = default;
  std::string Text() const;
};

// "1.20.1" -> {1, 20, 1}; nullopt for anything else (a leading zero, a fourth part, a tag such
// as "1.22.0-rev", more than four digits in a part, signs, spaces).
std::optional<OrtVersion> ParseOrtVersion(std::string_view text);

// `onnxruntime@A..B:LEVEL` (A or B may be left out: from the oldest, to the newest installed).
struct OrtVersionRange {
  std::optional<OrtVersion> from, to;
  std::string level;  // "" when not given: the finding's own level (all when it has none)
  bool Contains(const OrtVersion& v) const;
};
// Throws InputError(where, ...) naming what is wrong.
OrtVersionRange ParseOrtVersionRange(std::string_view text, const std::string& where);

// The folder installed releases live in: $FUSEFUZZ_CACHE, else $XDG_CACHE_HOME/fusefuzz, else
// $HOME/.cache/fusefuzz; then /onnxruntime. "" when none of them is set to an absolute path.
std::string OrtReleasesDir();
// The onnxruntime-node package folder of an installed release, or nullopt when not installed.
std::optional<std::string> OrtReleaseModuleDir(const OrtVersion& v);
// Every installed release, oldest first.
std::vector<OrtVersion> InstalledOrtReleases();
// The command that installs a release, for messages.
std::string OrtInstallCommand(const OrtVersion& v);

}  // namespace fusefuzz
