#include "targets/target_spec.h"

#include <algorithm>
#include <exception>

#include "ir/error.h"
#include "targets/builtin_targets.h"
#include "targets/ort_releases.h"

namespace fusefuzz {

namespace {
constexpr std::string_view kEmbedded = "embedded";
constexpr std::string_view kExecPrefix = "exec:";
// The one engine whose release can be chosen: `onnxruntime@1.20.1:all`.
constexpr std::string_view kVersionedEngine = "onnxruntime";
}  // namespace

std::string EmbeddedSpecText() { return std::string(kEmbedded); }

TargetSpec TargetSpec::Embedded() {
  TargetSpec s;
  s.text_ = kEmbedded;
  return s;
}

std::optional<TargetSpec> TargetSpec::TryParse(std::string_view text) {
  if (text == kEmbedded) return Embedded();
  TargetSpec s;
  s.text_ = text;
  if (text.substr(0, kExecPrefix.size()) == kExecPrefix) {
    if (text.size() == kExecPrefix.size()) return std::nullopt;  // no command
    s.kind_ = TargetKind::kExec;
    s.command_ = text.substr(kExecPrefix.size());
    return s;
  }
  const size_t colon = text.find(':');
  std::string engine(text.substr(0, colon));
  if (const size_t at = engine.find('@'); at != std::string::npos) {
    if (engine.substr(0, at) != kVersionedEngine) {
      if (std::any_of(BuiltinTargets().begin(), BuiltinTargets().end(),
                      [&](const BuiltinTarget& t) { return t.engine == engine.substr(0, at); })) {
        throw InputError("--target", "the " + engine.substr(0, at) +
                                         " target has no releases to choose from (only "
                                         "onnxruntime@X.Y.Z:LEVEL has)");
      }
      return std::nullopt;
    }
    const std::string version = engine.substr(at + 1);
    if (!ParseOrtVersion(version)) {
      throw InputError("--target", "bad onnxruntime release '" + version +
                                       "' (expected x.y.z, e.g. onnxruntime@1.20.1:all)");
    }
    s.version_ = version;
    engine.resize(at);
  }
  for (const BuiltinTarget& t : BuiltinTargets()) {
    if (t.engine != engine) continue;
    std::string mode =
        colon == std::string_view::npos ? t.modes.front() : std::string(text.substr(colon + 1));
    if (std::find(t.modes.begin(), t.modes.end(), mode) == t.modes.end()) {
      std::string all;
      for (const auto& m : t.modes) all += (all.empty() ? "" : ", ") + m;
      throw InputError("--target",
                       "unknown " + engine + " mode '" + mode + "' (one of: " + all + ")");
    }
    s.kind_ = TargetKind::kBuiltin;
    s.engine_ = engine;
    s.mode_ = std::move(mode);
    return s;
  }
  return std::nullopt;
}

std::optional<TargetSpec> TargetSpec::Of(std::string_view text) noexcept {
  try {
    return TryParse(text);
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

bool IsEmbeddedSpec(std::string_view text) { return text == kEmbedded; }

bool IsExecSpec(std::string_view text) {
  const std::optional<TargetSpec> s = TargetSpec::Of(text);
  return s && s->exec();
}

TargetSpec TargetSpec::Parse(std::string_view text) {
  if (std::optional<TargetSpec> s = TryParse(text)) return *std::move(s);
  std::string engines;
  for (const BuiltinTarget& t : BuiltinTargets()) engines += ", " + t.engine + "[:MODE]";
  throw InputError("--target", "unknown target '" + std::string(text) + "' (expected embedded" +
                                   engines + " or exec:CMD; fusefuzz list targets)");
}

}  // namespace fusefuzz
