// The MLIR 22 pass pipeline of fusefuzz-mlir-target (targets/mlir/README.md): TOSA -> linalg on
// tensors -> bufferized -> affine loops -> LLVM, run by mlir-opt and then mlir-runner (JIT), each
// a child process on files of a private temporary folder. The optional passes are the target's
// rules: the unoptimized run leaves them all out, the optimized run keeps those the request
// allows, and the ones that changed the IR are its rewrites.
#pragma once

#include <string>
#include <vector>

namespace fusefuzz::mlir {

// Where in the lowering an optional pass runs.
enum class Stage {
  kTosa,     // on the TOSA ops, before stage 1 (func.func)
  kTensors,  // on linalg on tensors, after stage 1 (module)
  kLoops,    // on the affine loops of the bufferized program (func.func)
};
struct OptionalPass {
  const char* name;  // as mlir-opt spells it
  Stage stage;
};
// In pipeline order; their names are the hello's `rules`.
const std::vector<OptionalPass>& OptionalPasses();

// The --pass-pipeline text with the optional passes named in `enabled` (pipeline order kept).
std::string PassPipeline(const std::vector<std::string>& enabled);

// The tools: FUSEFUZZ_MLIR_DIR (default /usr/lib/llvm-22) holds bin/mlir-opt, bin/mlir-runner
// and lib/libmlir_runner_utils.so.22.1, lib/libmlir_c_runner_utils.so.22.1.
struct Tools {
  std::string opt, runner, runner_libs;  // runner_libs: comma-separated, for -shared-libs
};
Tools FindTools();
// Empty when every tool is there, else what is missing.
std::string MissingTools(const Tools& t);

// A private temporary folder (mkdtemp), removed with everything in it on destruction.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// The command lines, with fixed arguments only (paths are shell-quoted): mlir-opt lowering
// `in` into `out` (with `dump` non-empty: the IR after each optional pass that changed it, to
// that file), and mlir-runner running `lowered`.
std::string OptCommand(const Tools& t, const std::vector<std::string>& enabled,
                       const std::string& in, const std::string& out, const std::string& dump);
std::string RunnerCommand(const Tools& t, const std::string& lowered);

// Lowers `dir`/graph.mlir into `dir`/lowered.mlir with the optional passes `enabled` and
// returns the optional passes that changed the IR, in pipeline order. A failure throws
// FailureAfterRewrites (naming the passes that had changed the IR before it).
std::vector<std::string> Lower(const Tools& t, const std::string& dir,
                               const std::vector<std::string>& enabled, double timeout_seconds);
// Runs `dir`/lowered.mlir and returns what it printed. Throws std::runtime_error on failure.
std::string RunLowered(const Tools& t, const std::string& dir, double timeout_seconds);

}  // namespace fusefuzz::mlir
