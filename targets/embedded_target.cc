// The default target: the embedded optimizer followed by the fast kernels, in process.
#include <algorithm>
#include <chrono>
#include <exception>
#include <optional>
#include <stdexcept>

#include "ir/error.h"
#include "ir/verifier.h"
#include "kernels/fast/executor.h"
#include "optimizer/registry.h"
#include "targets/builtin_targets.h"
#include "targets/rule_names.h"
#include "targets/target.h"
#include "targets/target_spec.h"

namespace fusefuzz {
namespace {

class EmbeddedTarget : public Target {
 public:
  EmbeddedTarget() {
    caps_.name = EmbeddedSpecText();
    caps_.ops = std::set<Op>(AllOps().begin(), AllOps().end());
    caps_.bisect_limit = caps_.disable = caps_.inject = caps_.reports_rewrites = true;
    caps_.bench = true;
    caps_.rules = AcceptedRuleNames(caps_);  // fusefuzz's rules and faults
    // Its fusions are the rules alone: a fault is a planted bug, not a fusion a campaign should
    // list as "never fired" (an injected one shows among the undeclared that fired).
    for (const Rule* r : AllRules()) caps_.fusions.emplace_back(r->name());
  }
  const TargetCaps& caps() const override { return caps_; }
  std::string spec() const override { return EmbeddedSpecText(); }

  // Option names are validated by the caller (BuildPipeline) before any case runs, so every
  // exception here is the target's own failure.
  TargetResult Run(const Graph& g, const TensorMap& inputs, const RunRequest& req) override {
    TargetResult r;
    try {
      OptimizeResult o;
      if (req.optimize) {
        o = Optimize(g, req.opt);
        r.rewrites = std::move(o.rewrites);
      }
      const Graph& run = req.optimize ? o.graph : g;
      if (req.bench_runs > 0) {
        // The optimization and the verification are the preparation, outside the timed runs
        // (as a session's are).
        const ShapeMap shapes = VerifyGraph(run);
        r.timings = TimeRuns(req.bench_warmup, req.bench_runs, [&] {
          r.outputs = RunFastVerified(run, shapes, inputs, FastOptions{req.threads});
        });
      } else {
        r.outputs = RunFast(run, inputs, FastOptions{req.threads});
      }
    } catch (const std::exception& e) {
      r.status = RunStatus::kError;
      r.message = e.what();
    }
    return r;
  }

 private:
  TargetCaps caps_;
};

}  // namespace

std::string_view RunStatusName(RunStatus s) {
  switch (s) {
    case RunStatus::kOk:
      return "ok";
    case RunStatus::kUnsupported:
      return "unsupported";
    case RunStatus::kError:
      return "error";
    case RunStatus::kCrash:
      return "crash";
    case RunStatus::kTimeout:
      return "timeout";
  }
  return "?";
}

BenchTimings TimeRuns(int warmup, int runs, const std::function<void()>& run) {
  using Clock = std::chrono::steady_clock;
  for (int i = 0; i < warmup; ++i) run();
  std::vector<double> ns;
  for (int i = 0; i < runs; ++i) {
    const Clock::time_point t0 = Clock::now();
    run();
    ns.push_back(std::chrono::duration<double, std::nano>(Clock::now() - t0).count());
  }
  BenchTimings t;
  t.runs = runs;
  if (ns.empty()) return t;
  std::sort(ns.begin(), ns.end());
  const size_t n = ns.size();
  t.median_ns = n % 2 ? ns[n / 2] : (ns[n / 2 - 1] + ns[n / 2]) / 2;
  t.min_ns = ns.front();
  return t;
}

std::unique_ptr<Target> MakeEmbeddedTarget() { return std::make_unique<EmbeddedTarget>(); }

namespace {

// A built-in engine's adapter under its name: spec() says "pytorch:fx", not the command.
class NamedTarget final : public Target {
 public:
  NamedTarget(std::unique_ptr<Target> inner, std::string spec)
      : inner_(std::move(inner)), spec_(std::move(spec)) {}
  const TargetCaps& caps() const override { return inner_->caps(); }
  std::string spec() const override { return spec_; }
  TargetResult Run(const Graph& g, const TensorMap& inputs, const RunRequest& req) override {
    return inner_->Run(g, inputs, req);
  }
  Reproducer AskReproducer(const Graph& g, const TensorMap& inputs, const RunRequest& req,
                           const ReproducerCase& c) override {
    return inner_->AskReproducer(g, inputs, req, c);
  }

 private:
  std::unique_ptr<Target> inner_;
  std::string spec_;
};

}  // namespace

std::unique_ptr<Target> MakeTarget(const std::string& spec, const TargetSettings& settings) {
  return MakeTarget(TargetSpec::Parse(spec), settings);
}

std::unique_ptr<Target> MakeTarget(const TargetSpec& spec, const TargetSettings& settings) {
  switch (spec.kind()) {
    case TargetKind::kEmbedded:
      return MakeEmbeddedTarget();
    case TargetKind::kExec:
      return MakeExecTarget(spec.command(), settings);
    case TargetKind::kBuiltin:
      return std::make_unique<NamedTarget>(MakeExecTarget(BuiltinTargetCommand(spec), settings),
                                           spec.text());
  }
  throw std::logic_error("unknown TargetKind");
}

}  // namespace fusefuzz
