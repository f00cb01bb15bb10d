// What `--target` and a reproducer's /target/spec name, parsed once (docs/target-protocol.md):
//   embedded             the project's optimizer + fast kernels
//   exec:CMD             an external program speaking the protocol (CMD: a shell command line)
//   ENGINE[:MODE]        a built-in engine pack (targets/builtin_targets.h), e.g. pytorch:fx
//   onnxruntime@X.Y.Z[:LEVEL]  the ONNX Runtime pack on another onnxruntime-node release
//                        (targets/ort_releases.h), e.g. onnxruntime@1.20.1:all
// The spec string stays the on-disk and on-screen form: text() gives it back exactly as written
// ("pytorch" stays "pytorch", not "pytorch:eager"), so reproducers and reports read as before.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace fusefuzz {

enum class TargetKind { kEmbedded, kExec, kBuiltin };

class TargetSpec {
 public:
  // Throws InputError("--target", ...) for a spec of no known form, and for a built-in engine
  // with an unknown mode.
  static TargetSpec Parse(std::string_view text);
  // nullopt for a spec of no known form (the caller says where it came from); still throws
  // InputError for a built-in engine with an unknown mode.
  static std::optional<TargetSpec> TryParse(std::string_view text);
  // A spec already accepted (a running target's spec(), a validated reproducer): nullopt for
  // a name of no known form (a test's own Target) and a built-in engine with an unknown mode;
  // never throws.
  static std::optional<TargetSpec> Of(std::string_view text) noexcept;
  static TargetSpec Embedded();

  TargetKind kind() const { return kind_; }
  bool embedded() const { return kind_ == TargetKind::kEmbedded; }
  bool exec() const { return kind_ == TargetKind::kExec; }
  // A built-in engine pack, by name ("pytorch", "onnxruntime", "xnnpack", "armnn").
  bool builtin(std::string_view engine) const {
    return kind_ == TargetKind::kBuiltin && engine_ == engine;
  }
  const std::string& text() const { return text_; }
  const std::string& command() const { return command_; }  // exec: the shell command
  const std::string& engine() const { return engine_; }    // built-in: the engine
  const std::string& mode() const { return mode_; }        // built-in: the mode (defaulted)
  // built-in onnxruntime@X.Y.Z: the release "X.Y.Z"; "" for the pinned one (and other engines)
  const std::string& version() const { return version_; }

 private:
  TargetSpec() = default;
  TargetKind kind_ = TargetKind::kEmbedded;
  std::string text_, command_, engine_, mode_, version_;
};

// The text of the default target, for option defaults and help.
std::string EmbeddedSpecText();
// TargetSpec::Of(text) is the embedded target / an exec: command (false for other names).
bool IsEmbeddedSpec(std::string_view text);
bool IsExecSpec(std::string_view text);

}  // namespace fusefuzz
