// fusefuzz-mlir-target: MLIR 22's TOSA -> linalg -> LLVM pipeline behind fusefuzz's protocol
// (targets/mlir/README.md). Each request's graph becomes a TOSA module (tosa_writer.h), lowered
// by mlir-opt and run by mlir-runner (pipeline.h). The unoptimized run leaves out every optional
// pass; the optimized run keeps those the request allows, and the passes that changed the IR
// are its rewrites, so that blame names one pass.
#include <sys/resource.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <tuple>

#include "targets/mlir/pipeline.h"
#include "targets/mlir/repro_writer.h"
#include "targets/mlir/tosa_writer.h"
#include "targets/native_server.h"

namespace fusefuzz {
namespace {

using mlir::OptionalPass;
using mlir::OptionalPasses;

// Per child process: a small module lowers and runs in a fraction of a second.
constexpr double kStageTimeoutSeconds = 60;

const std::vector<Op> kOps = {
    Op::Conv,        Op::FusedConv,  Op::BatchNorm,     Op::Relu,      Op::Relu6,
    Op::Clip,        Op::LeakyRelu,  Op::PRelu,         Op::Elu,       Op::Sigmoid,
    Op::HardSigmoid, Op::Tanh,       Op::Silu,          Op::HardSwish, Op::Gelu,
    Op::Add,         Op::Sub,        Op::Mul,           Op::Div,       Op::Pad,
    Op::MaxPool,     Op::AvgPool,    Op::GlobalAvgPool, Op::Concat,    Op::Identity,
    Op::Flatten,     Op::Reshape,    Op::Gemm,          Op::MatMul,    Op::ReduceMean,
    Op::Pow,         Op::Reciprocal, Op::Exp,           Op::Log,       Op::Erf};

void WriteFile(const std::string& path, const std::string& text) {
  std::ofstream f(path, std::ios::binary);
  f << text;
  if (!f.flush()) throw std::runtime_error("cannot write " + path);
}

// The optional passes of this request's run, in pipeline order. Under bisect_limit N the passes
// after the one that made the N-th change are left out: a dry lowering with every allowed pass
// finds it (a pass's effect depends only on the passes before it).
std::vector<std::string> EnabledPasses(const NativeRequest& r, const mlir::Tools& tools,
                                       const std::string& dir) {
  std::vector<std::string> enabled;
  if (!r.optimize) return enabled;
  for (const OptionalPass& p : OptionalPasses()) {
    if (RewriteAllowed(r, p.name, -1)) enabled.push_back(p.name);
  }
  if (r.bisect_limit < 0) return enabled;
  std::vector<std::string> changed;
  try {
    changed = Lower(tools, dir, enabled, kStageTimeoutSeconds);
  } catch (const FailureAfterRewrites& e) {
    // mlir-opt fails with every allowed pass: the passes that changed the IR before it count.
    for (const Rewrite& w : e.rewrites) changed.push_back(w.rule);
  }
  if (size_t(r.bisect_limit) >= changed.size()) return enabled;
  if (r.bisect_limit == 0) return {};
  const auto last = std::find(enabled.begin(), enabled.end(), changed[size_t(r.bisect_limit) - 1]);
  enabled.erase(last + 1, enabled.end());
  return enabled;
}

// FUSEFUZZ_MLIR_TIMINGS=FILE: one line per request appended to FILE, the cost of each stage
// (wall ms, and the CPU ms of this process or of its children): translate, mlir-opt, runner.
class StageClock {
 public:
  StageClock()
      : path_(std::getenv("FUSEFUZZ_MLIR_TIMINGS") ? std::getenv("FUSEFUZZ_MLIR_TIMINGS") : "") {
    Mark();
  }
  void Lap(const char* stage) {
    if (path_.empty()) return;
    const auto [wall, self, children] = Now();
    char buf[128];
    std::snprintf(buf, sizeof buf, "%s %.2f %.2f ", stage, wall - wall_,
                  (self - self_) + (children - children_));
    line_ += buf;
    Mark();
  }
  // The module's convolutions on integers and in float32, and its RESCALEs (mlir:int8's share
  // of integer arithmetic, README "Campaigns and figures").
  void Count(const std::string& module) {
    if (path_.empty()) return;
    auto count = [&](const std::string& what) {
      size_t k = 0;
      for (size_t at = module.find(what); at != std::string::npos; at = module.find(what, at + 1)) {
        ++k;
      }
      return k;
    };
    line_ += "int_convs " + std::to_string(count("acc_type = i32")) + " float_convs " +
             std::to_string(count("acc_type = f32, dilation")) + " rescales " +
             std::to_string(count("\"tosa.rescale\"")) + " ";
  }
  ~StageClock() {
    if (!path_.empty()) std::ofstream(path_, std::ios::app) << line_ << "\n";
  }

 private:
  static double Ms(const timeval& t) { return t.tv_sec * 1e3 + t.tv_usec / 1e3; }
  std::tuple<double, double, double> Now() const {
    rusage self{}, kids{};
    getrusage(RUSAGE_SELF, &self);
    getrusage(RUSAGE_CHILDREN, &kids);
    const double wall = std::chrono::duration<double, std::milli>(
                            std::chrono::steady_clock::now().time_since_epoch())
                            .count();
    return {wall, Ms(self.ru_utime) + Ms(self.ru_stime), Ms(kids.ru_utime) + Ms(kids.ru_stime)};
  }
  void Mark() { std::tie(wall_, self_, children_) = Now(); }
  std::string path_, line_;
  double wall_ = 0, self_ = 0, children_ = 0;
};

NativeAnswer Run(const NativeRequest& r, const mlir::Tools& tools, bool int8) {
  StageClock clock;
  if (!r.pipeline.empty()) throw Unsupported("the MLIR pipeline's pass order is fixed");
  if (!r.inject.empty()) throw Unsupported("no faults to inject into MLIR");
  if (r.bench_runs > 0) throw Unsupported("no timing requests");
  const std::string module = mlir::WriteTosaModule(r, int8);
  mlir::TempDir dir;
  WriteFile(dir.path() + "/graph.mlir", module);
  clock.Lap(r.optimize ? "optimized translate" : "unoptimized translate");
  clock.Count(module);
  const std::vector<std::string> enabled = EnabledPasses(r, tools, dir.path());
  const std::vector<std::string> changed =
      mlir::Lower(tools, dir.path(), enabled, kStageTimeoutSeconds);
  clock.Lap("mlir-opt");
  NativeAnswer a;
  for (size_t i = 0; i < changed.size(); ++i) a.rewrites.push_back({int(i) + 1, changed[i], {}});
  std::string printed;
  try {
    printed = mlir::RunLowered(tools, dir.path(), kStageTimeoutSeconds);
  } catch (const std::runtime_error& e) {
    throw FailureAfterRewrites(e.what(), a.rewrites);
  }
  clock.Lap("runner");
  a.outputs = mlir::ParsePrintedOutputs(r, printed);
  return a;
}

int Main(int argc, char** argv) {
  std::string mode = "fp32";
  CLI::App app{"MLIR 22's TOSA pipeline behind fusefuzz's protocol (targets/mlir/README.md)",
               "fusefuzz-mlir-target"};
  app.add_option("--mode", mode, "fp32 | int8")->check(CLI::IsMember({"fp32", "int8"}));
  std::vector<std::string> crash_on;
  app.add_option("--crash-on", crash_on, "abort() on a graph with this op (a test switch)")
      ->delimiter(',');
  CLI11_PARSE(app, argc, argv);
  std::set<Op> crash;
  try {
    crash = OpsFromNames(crash_on);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 2;
  }
  const mlir::Tools tools = mlir::FindTools();
  if (const std::string missing = mlir::MissingTools(tools); !missing.empty()) {
    std::fprintf(stderr,
                 "fusefuzz-mlir-target: missing %s (Debian packages mlir-22-tools and libmlir-22; "
                 "ci/setup installs them)\n",
                 missing.c_str());
    return 1;
  }
  const bool int8 = mode == "int8";
  nlohmann::json ops = nlohmann::json::array();
  for (Op op : kOps) ops.push_back(std::string(OpName(op)));
  if (int8) {
    ops.push_back(std::string(OpName(Op::QuantizeLinear)));
    ops.push_back(std::string(OpName(Op::DequantizeLinear)));
    ops.push_back(std::string(OpName(Op::QLinearConv)));
    ops.push_back(std::string(OpName(Op::QLinearAdd)));
  }
  nlohmann::json rules = nlohmann::json::array();
  for (const OptionalPass& p : OptionalPasses()) rules.push_back(p.name);
  nlohmann::json hello = {
      {"protocol", "fusefuzz-target"},
      {"version", 1},
      {"name", "mlir:" + mode},
      {"engine", "MLIR " FUSEFUZZ_MLIR_VERSION
                 " (Debian mlir-22-tools): TOSA -> linalg -> LLVM, mlir-opt + mlir-runner"},
      {"ops", ops},
      {"precision", "float32"},
      {"rules", rules},
      {"capabilities", {"rewrites", "disable", "bisect_limit", "repro"}}};
  // QuantizeLinear multiplies by the float32 reciprocal of the scale (TOSA has no float
  // division), then CAST rounds half to even (tosa_quant.cc).
  if (int8) hello["quantize_rounding"] = "reciprocal_multiply";
  const NativeBackend run = [&tools, int8](const NativeRequest& r) { return Run(r, tools, int8); };
  return ServeNative(
      hello, run, crash, [&tools, int8](const NativeRequest& r, const ReproducerCase& c) {
        mlir::TempDir dir;
        WriteFile(dir.path() + "/graph.mlir", mlir::WriteTosaModule(r, int8));
        return mlir::WriteReproducer(r, c, EnabledPasses(r, tools, dir.path()), int8);
      });
}

}  // namespace
}  // namespace fusefuzz

int main(int argc, char** argv) { return fusefuzz::Main(argc, argv); }
