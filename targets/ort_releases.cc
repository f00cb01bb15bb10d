#include "targets/ort_releases.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>

#include "ir/error.h"
#include "targets/builtin_targets.h"

namespace fusefuzz {

namespace {

// One part of x.y.z: 1 to 4 digits, no leading zero.
std::optional<int> Part(std::string_view s) {
  if (s.empty() || s.size() > 4 || (s.size() > 1 && s[0] == '0')) return std::nullopt;
  int v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return std::nullopt;
    v = v * 10 + (c - '0');
  }
  return v;
}

std::string AbsoluteEnv(const char* name) {
  const char* v = std::getenv(name);
  return v && v[0] == '/' ? std::string(v) : std::string();
}

}  // namespace

std::string OrtVersion::Text() const {
  return std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch);
}

std::optional<OrtVersion> ParseOrtVersion(std::string_view text) {
  const size_t a = text.find('.');
  if (a == std::string_view::npos) return std::nullopt;
  const size_t b = text.find('.', a + 1);
  if (b == std::string_view::npos) return std::nullopt;
  const auto x = Part(text.substr(0, a));
  const auto y = Part(text.substr(a + 1, b - a - 1));
  const auto z = Part(text.substr(b + 1));
  if (!x || !y || !z) return std::nullopt;
  return OrtVersion{*x, *y, *z};
}

bool OrtVersionRange::Contains(const OrtVersion& v) const {
  return (!from || *from <= v) && (!to || v <= *to);
}

OrtVersionRange ParseOrtVersionRange(std::string_view text, const std::string& where) {
  const std::string shown(text);
  const auto bad = [&](const std::string& why) {
    return InputError(where, "bad release range '" + shown + "': " + why +
                                 " (expected onnxruntime@A..B[:LEVEL], e.g. "
                                 "onnxruntime@1.17.0..1.31.1:all)");
  };
  constexpr std::string_view kPrefix = "onnxruntime@";
  if (text.substr(0, kPrefix.size()) != kPrefix) throw bad("it does not start with onnxruntime@");
  text.remove_prefix(kPrefix.size());
  OrtVersionRange r;
  if (const size_t colon = text.find(':'); colon != std::string_view::npos) {
    r.level = std::string(text.substr(colon + 1));
    text = text.substr(0, colon);
    const auto ort = std::find_if(BuiltinTargets().begin(), BuiltinTargets().end(),
                                  [](const BuiltinTarget& t) { return t.engine == "onnxruntime"; });
    const std::vector<std::string>& levels = ort->modes;
    if (std::find(levels.begin(), levels.end(), r.level) == levels.end()) {
      throw bad("unknown level '" + r.level + "' (one of: all, extended, basic, disabled)");
    }
  }
  const size_t dots = text.find("..");
  if (dots == std::string_view::npos) throw bad("no '..' between the two releases");
  const std::string_view a = text.substr(0, dots), b = text.substr(dots + 2);
  if (!a.empty() && !(r.from = ParseOrtVersion(a))) {
    throw bad("'" + std::string(a) + "' is not a release x.y.z");
  }
  if (!b.empty() && !(r.to = ParseOrtVersion(b))) {
    throw bad("'" + std::string(b) + "' is not a release x.y.z");
  }
  if (r.from && r.to && *r.to < *r.from) throw bad("the first release is newer than the second");
  return r;
}

std::string OrtReleasesDir() {
  std::string base = AbsoluteEnv("FUSEFUZZ_CACHE");
  if (base.empty()) {
    const std::string xdg = AbsoluteEnv("XDG_CACHE_HOME");
    const std::string home = AbsoluteEnv("HOME");
    if (!xdg.empty()) {
      base = xdg + "/fusefuzz";
    } else if (!home.empty()) {
      base = home + "/.cache/fusefuzz";
    }
  }
  return base.empty() ? "" : base + "/onnxruntime";
}

std::optional<std::string> OrtReleaseModuleDir(const OrtVersion& v) {
  const std::string root = OrtReleasesDir();
  if (root.empty()) return std::nullopt;
  const std::string dir = root + "/" + v.Text() + "/node_modules/onnxruntime-node";
  std::error_code ec;
  if (!std::filesystem::is_regular_file(dir + "/package.json", ec)) return std::nullopt;
  return dir;
}

std::vector<OrtVersion> InstalledOrtReleases() {
  std::vector<OrtVersion> out;
  const std::string root = OrtReleasesDir();
  std::error_code ec;
  if (root.empty() || !std::filesystem::is_directory(root, ec)) return out;
  for (auto it = std::filesystem::directory_iterator(root, ec);
       !ec && it != std::filesystem::directory_iterator(); it.increment(ec)) {
    // Only folders named as a release: the installer's temporary folders start with a dot.
    const std::optional<OrtVersion> v = ParseOrtVersion(it->path().filename().string());
    if (v && OrtReleaseModuleDir(*v)) out.push_back(*v);
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::string OrtInstallCommand(const OrtVersion& v) {
  return TargetsDir() + "/onnxruntime/install-release.sh " + v.Text();
}

}  // namespace fusefuzz
