// The engines fusefuzz ships adapters for (targets/<engine>/), by name: `--target pytorch:fx`,
// `--target onnxruntime:all`. A name resolves to the exec: command of its adapter, built from a
// fixed list of modes (nothing a user or a file says reaches the shell), and the target keeps
// the name as its spec, so reproducers replay with it and need no --trust-target.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace fusefuzz {

struct BuiltinTarget {
  std::string engine;              // "pytorch", "onnxruntime"
  std::vector<std::string> modes;  // the adapter's modes; the first is the default
  std::string doc;
};

const std::vector<BuiltinTarget>& BuiltinTargets();

// Where the adapters live: $FUSEFUZZ_TARGETS_DIR, else the source tree's targets/.
std::string TargetsDir();

// "pytorch:fx" -> the shell command that starts the adapter in that mode; nullopt when `spec`
// names no built-in engine. Throws InputError for a built-in engine with an unknown mode.
std::optional<std::string> BuiltinTargetCommand(const std::string& spec);
// The command of a parsed built-in spec (kind kBuiltin). Throws InputError when the engine's
// program was not built.
class TargetSpec;
std::string BuiltinTargetCommand(const TargetSpec& spec);

}  // namespace fusefuzz
