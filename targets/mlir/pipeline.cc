// The pass pipeline and the child processes of fusefuzz-mlir-target (pipeline.h).
#include "targets/mlir/pipeline.h"

#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <stdexcept>

#include "targets/native_server.h"
#include "targets/subprocess.h"

namespace fusefuzz::mlir {

const std::vector<OptionalPass>& OptionalPasses() {
  static const std::vector<OptionalPass> kPasses = {
      {"tosa-optional-decompositions", Stage::kTosa},
      {"tosa-layerwise-constant-fold", Stage::kTosa},
      {"linalg-fuse-elementwise-ops", Stage::kTensors},
      {"linalg-fold-unit-extent-dims", Stage::kTensors},
      {"canonicalize", Stage::kTensors},
      {"cse", Stage::kTensors},
      {"affine-loop-fusion", Stage::kLoops},
      {"affine-scalrep", Stage::kLoops},
      {"affine-loop-invariant-code-motion", Stage::kLoops},
  };
  return kPasses;
}

std::string PassPipeline(const std::vector<std::string>& enabled) {
  auto at = [&](Stage s) {
    std::string list;
    for (const OptionalPass& p : OptionalPasses()) {
      if (p.stage != s || std::find(enabled.begin(), enabled.end(), p.name) == enabled.end()) {
        continue;
      }
      list += std::string(p.name) + ",";
    }
    return list;
  };
  std::string loops = at(Stage::kLoops);
  if (!loops.empty()) loops = "," + loops.substr(0, loops.size() - 1);
  // Stage 1 decides TOSA's semantics (tosa-to-arith lowers tosa.apply_scale of rescales too);
  // elementwise fusion works on linalg on tensors, so the tensor passes come before
  // bufferization; affine loops so that affine-loop-fusion has something to fuse.
  return "builtin.module(func.func(" + at(Stage::kTosa) +
         "tosa-to-linalg-named,tosa-to-linalg,tosa-to-arith{include-apply-rescale=true},"
         "tosa-to-tensor,convert-elementwise-to-linalg)," +
         at(Stage::kTensors) +
         "one-shot-bufferize{bufferize-function-boundaries},"
         "func.func(convert-linalg-to-affine-loops" +
         loops +
         // expand-strided-metadata makes affine.apply ops: lower-affine comes after it.
         "),expand-strided-metadata,lower-affine,convert-scf-to-cf,convert-math-to-libm,"
         "convert-to-llvm,reconcile-unrealized-casts)";
}

Tools FindTools() {
  const char* env = std::getenv("FUSEFUZZ_MLIR_DIR");
  const std::string root = env && *env ? env : "/usr/lib/llvm-22";
  return {
      root + "/bin/mlir-opt", root + "/bin/mlir-runner",
      root + "/lib/libmlir_runner_utils.so.22.1," + root + "/lib/libmlir_c_runner_utils.so.22.1"};
}

std::string MissingTools(const Tools& t) {
  std::string missing;
  std::stringstream libs(t.runner_libs);
  std::vector<std::string> files = {t.opt, t.runner};
  for (std::string lib; std::getline(libs, lib, ',');) files.push_back(lib);
  for (const std::string& f : files) {
    if (access(f.c_str(), R_OK) != 0) missing += (missing.empty() ? "" : ", ") + f;
  }
  return missing;
}

TempDir::TempDir() {
  const char* tmp = std::getenv("TMPDIR");
  std::string tmpl = std::string(tmp && *tmp ? tmp : "/tmp") + "/fusefuzz-mlir-XXXXXX";
  if (!mkdtemp(tmpl.data())) throw std::runtime_error("cannot make a temporary folder " + tmpl);
  path_ = tmpl;
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

namespace {

std::string Join(const std::vector<std::string>& v, const std::string& sep) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) s += (i ? sep : "") + v[i];
  return s;
}

// Runs `command` to its end; returns its stdout. Throws std::runtime_error naming `what` when it
// cannot start, times out or exits other than with status 0.
std::string RunToEnd(const std::string& command, double timeout_seconds, const std::string& what,
                     const std::string& stderr_file = "") {
  std::string error;
  std::unique_ptr<Subprocess> p = Subprocess::Start(command, &error);
  if (!p) throw std::runtime_error(what + " did not start: " + error);
  const Deadline deadline =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(int64_t(timeout_seconds * 1000));
  std::string out, line;
  for (;;) {
    const Subprocess::Io io = p->ReadLine(&line, deadline, size_t{256} << 20);
    if (io == Subprocess::Io::kOk) {
      out += line + "\n";
      continue;
    }
    if (io == Subprocess::Io::kEof) {
      out += line;
      break;
    }
    p->Kill();
    throw std::runtime_error(
        what + (io == Subprocess::Io::kTimeout ? " timed out" : " wrote a line too long"));
  }
  const std::string status = p->WaitForExit(10);
  if (status == "exited with status 0") return out;
  std::string tail = p->StderrTail();
  if (!stderr_file.empty()) {
    // Its diagnostics among the IR dumps: the lines that say error and the one after each.
    std::ifstream f(stderr_file);
    std::string l;
    tail.clear();
    for (int keep = 0; std::getline(f, l) && tail.size() < 4000;) {
      if (l.find("error:") != std::string::npos) keep = 2;
      if (keep > 0) {
        tail += l + "\n";
        --keep;
      }
    }
  }
  throw std::runtime_error(what + " " + status + (tail.empty() ? "" : ": " + tail));
}

}  // namespace

std::string OptCommand(const Tools& t, const std::vector<std::string>& enabled,
                       const std::string& in, const std::string& out, const std::string& dump) {
  std::string c = ShellQuote(t.opt) + " " + ShellQuote(in) + " " +
                  ShellQuote("--pass-pipeline=" + PassPipeline(enabled));
  if (!dump.empty() && !enabled.empty()) {
    c += " " + ShellQuote("-mlir-print-ir-after=" + Join(enabled, ",")) +
         " -mlir-print-ir-after-change";
  }
  c += " -o " + ShellQuote(out);
  if (!dump.empty()) c += " 2>" + ShellQuote(dump);
  return c;
}

std::string RunnerCommand(const Tools& t, const std::string& lowered) {
  return ShellQuote(t.runner) + " " + ShellQuote(lowered) + " -e main -entry-point-result=void " +
         ShellQuote("-shared-libs=" + t.runner_libs);
}

std::vector<std::string> Lower(const Tools& t, const std::string& dir,
                               const std::vector<std::string>& enabled, double timeout_seconds) {
  const std::string dump = dir + "/passes.log";
  std::string failure;
  try {
    RunToEnd("exec " + OptCommand(t, enabled, dir + "/graph.mlir", dir + "/lowered.mlir", dump),
             timeout_seconds, "mlir-opt", dump);
  } catch (const std::runtime_error& e) {
    failure = e.what();
  }
  // "// -----// IR Dump After CSE (cse) //----- //": the pass changed the IR.
  std::set<std::string> changed_names;
  std::ifstream f(dump);
  const std::string mark = "// -----// IR Dump After ";
  for (std::string l; std::getline(f, l);) {
    if (l.rfind(mark, 0) != 0) continue;
    const size_t open = l.find(" (", mark.size()), close = l.find(')', open);
    if (open != std::string::npos && close != std::string::npos) {
      changed_names.insert(l.substr(open + 2, close - open - 2));
    }
  }
  std::vector<std::string> changed;
  for (const OptionalPass& p : OptionalPasses()) {
    if (changed_names.count(p.name) &&
        std::find(enabled.begin(), enabled.end(), p.name) != enabled.end()) {
      changed.push_back(p.name);
    }
  }
  if (!failure.empty()) {
    std::vector<Rewrite> rw;
    for (size_t i = 0; i < changed.size(); ++i) rw.push_back({int(i) + 1, changed[i], {}});
    throw FailureAfterRewrites(failure, rw);
  }
  return changed;
}

std::string RunLowered(const Tools& t, const std::string& dir, double timeout_seconds) {
  return RunToEnd("exec " + RunnerCommand(t, dir + "/lowered.mlir"), timeout_seconds,
                  "mlir-runner");
}

}  // namespace fusefuzz::mlir
