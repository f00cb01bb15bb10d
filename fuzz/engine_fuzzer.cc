#include "fuzz/engine_fuzzer.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>

#include "campaign/campaign.h"
#include "campaign/campaign_constraints.h"
#include "fuzz/finding_abort.h"
#include "fuzz/fuzz_inputs.h"
#include "fuzz/seed_bytes.h"
#include "harness/blame.h"
#include "harness/case_repro.h"
#include "ir/error.h"
#include "ir/json_io.h"
#include "ir/verifier.h"
#include "targets/hello_declarations.h"

namespace fusefuzz::fuzz {
namespace {

class InProcessTarget : public Target {
 public:
  explicit InProcessTarget(std::unique_ptr<FuzzEngine> engine) : engine_(std::move(engine)) {
    if (std::string e = ParseHello(engine_->Hello().dump(), &caps_); !e.empty()) {
      throw InputError("the engine's Hello()", e);
    }
  }
  const TargetCaps& caps() const override { return caps_; }
  std::string spec() const override { return caps_.name; }

  TargetResult Run(const Graph& g, const TensorMap& inputs, const RunRequest& req) override {
    NativeRequest r;
    r.graph = g;
    r.shapes = VerifyGraph(g);
    r.inputs = inputs;
    r.optimize = req.optimize;
    r.pipeline = req.opt.pipeline;
    r.disable = req.opt.disable;
    r.only = req.opt.only;
    r.inject = req.opt.inject;
    r.bisect_limit = req.opt.bisect_limit;
    r.threads = req.threads;
    r.bench_warmup = req.bench_warmup;
    r.bench_runs = req.bench_runs;
    TargetResult out;
    // Worded as the exec client words a program's answers (targets/exec_target.cc), so that
    // error classes, and with them signatures, are a campaign's.
    try {
      NativeAnswer a = engine_->Run(r);
      for (const std::string& name : g.outputs) {
        auto it = a.outputs.find(name);
        if (it == a.outputs.end()) {
          return Failed(RunStatus::kError, "target error: backend lost output '" + name + "'");
        }
        if (it->second.shape != r.shapes.at(name)) {
          return Failed(RunStatus::kError, "target wrote a bad response: output '" + name +
                                               "' has shape " + ShapeToString(it->second.shape) +
                                               ", expected " + ShapeToString(r.shapes.at(name)));
        }
        out.outputs[name] = std::move(it->second);
      }
      out.rewrites = std::move(a.rewrites);
      out.timings = a.timings;
    } catch (const FailureAfterRewrites& e) {
      out = Failed(RunStatus::kError, std::string("target error: ") + e.what());
      out.rewrites = e.rewrites;
    } catch (const Unsupported& e) {
      out = Failed(RunStatus::kUnsupported, std::string("target: unsupported: ") + e.what());
    } catch (const std::exception& e) {
      out = Failed(RunStatus::kError, std::string("target error: ") + e.what());
    }
    return out;
  }

 private:
  static TargetResult Failed(RunStatus s, std::string message) {
    TargetResult r;
    r.status = s;
    r.message = std::move(message);
    return r;
  }

  std::unique_ptr<FuzzEngine> engine_;
  TargetCaps caps_;
};

bool IsErrorKind(FindingKind k) {
  return k == FindingKind::kTargetError || k == FindingKind::kCrash || k == FindingKind::kTimeout;
}

uint32_t Fnv1a(const std::string& s) {
  uint32_t h = 2166136261u;
  for (unsigned char c : s) h = (h ^ c) * 16777619u;
  return h;
}

// The folder of the running binary (known-signature files live beside it).
std::string ExecutableDir() {
  std::error_code ec;
  auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::string(".") : exe.parent_path().string();
}

}  // namespace

std::unique_ptr<Target> MakeInProcessTarget(std::unique_ptr<FuzzEngine> engine) {
  return std::make_unique<InProcessTarget>(std::move(engine));
}

int EngineBucket(const TargetCaps& caps, const Repro& r) {
  if (IsErrorKind(r.kind)) {
    return static_cast<int>(Fnv1a(ErrorClass(r.detail)) % (kFindingBuckets - 1));
  }
  if (r.blame.rule.empty()) return kFindingBuckets - 1;
  auto it = std::find(caps.rules.begin(), caps.rules.end(), r.blame.rule);
  const auto index = it - caps.rules.begin();
  if (it != caps.rules.end() && index < kFindingBuckets - 1) return static_cast<int>(index);
  // A rule the hello does not list (Arm NN declares none): its name, hashed.
  return static_cast<int>(Fnv1a(r.blame.rule) % (kFindingBuckets - 1));
}

EngineFuzzer::EngineFuzzer(std::unique_ptr<FuzzEngine> engine, const EngineFuzzerOptions& o)
    : target_(MakeInProcessTarget(std::move(engine))) {
  const TargetCaps& caps = target_->caps();
  // A campaign's generator settings for this target (campaign/campaign.cc): its ops, its
  // constraints, its spellings; graphs of at most o.max_nodes nodes.
  gen_.quant.enabled = o.quant;
  gen_.limits.max_nodes = o.max_nodes;
  gen_.limits.min_nodes = std::min(gen_.limits.min_nodes, o.max_nodes);
  std::set<Op> allowed;
  for (Op op : gen_.allowed_ops)
    if (caps.ops.count(op)) allowed.insert(op);
  if (allowed.empty()) throw InputError("engine " + caps.name, "supports none of the ops");
  gen_.allowed_ops = allowed;
  ApplyTargetConstraints(caps.constraints, &gen_);
  gen_.spellings = TargetSpellings(caps);
  ValidateConfig(gen_, "engine fuzzer " + caps.name);

  std::string known = o.known_file;
  if (const char* env = std::getenv("FUSEFUZZ_KNOWN")) {
    known = env;
    if (known == "none") known.clear();
  } else if (!known.empty() && known.front() != '/') {
    known = ExecutableDir() + "/" + known;
    if (!std::filesystem::exists(known)) known.clear();  // shipped without a list
  }
  if (!known.empty()) known_ = ReadKnownSignatures(known);
  known_source_ = known;
}

std::optional<EngineFinding> EngineFuzzer::Run(const uint8_t* data, size_t size,
                                               const std::string& input_name) {
  BytesSource source(data, size);
  EngineFinding f;
  f.c = Generate(source, gen_);
  f.ref = RunReference(f.c.graph, f.c.inputs);
  f.out = CheckCase(*target_, f.c.graph, f.c.inputs, f.ref, check_);
  if (!f.out.finding()) return std::nullopt;
  // The reproducer as a campaign builds it (campaign/campaign_worker.cc, MakeRepro), without
  // minimization (fuzz/triage_crashes.sh minimizes one per signature).
  Repro& r = f.repro;
  r = ReproOfCheck(f.c.graph, f.c.inputs, target_->spec(), check_);
  SetOutcome(f.out, &r);
  if (IsErrorKind(f.out.kind) && check_.kernel_check) {
    r.failing_run = f.out.optimized ? "optimized" : "unoptimized";
  }
  if (f.out.kind == FindingKind::kFusion || f.out.kind == FindingKind::kUnquantized ||
      IsOptimizedRunFailure(f.out, check_)) {
    r.blame = BlameFusion(*target_, f.c.graph, f.c.inputs, f.ref, check_, f.out);
  }
  r.generator = {{"generator", "engine_fuzzer"}, {"source", "libFuzzer bytes (BytesSource)"},
                 {"input", input_name},          {"input_sha1", Sha1Hex(data, size)},
                 {"input_size", size},           {"config", ConfigToJson(gen_)}};
  f.signature = Signature(r);
  f.known = known_.contains(f.signature);
  return f;
}

int EngineFuzzer::TestOneInput(const uint8_t* data, size_t size) {
  const std::string sha1 = Sha1Hex(data, size);
  auto f = Run(data, size, "crash-" + sha1);
  if (!f) return 0;
  if (f->known) {
    // A known upstream bug: passed over, named once per run.
    if (std::find(known_seen_.begin(), known_seen_.end(), f->signature) == known_seen_.end()) {
      known_seen_.push_back(f->signature);
      std::fprintf(stderr, "fusefuzz: known finding %s (listed in %s), going on\n",
                   f->signature.c_str(), known_source_.c_str());
    }
    return 0;
  }
  const char* dir = std::getenv("FUSEFUZZ_REPRO_DIR");
  const std::string path =
      std::string(dir && *dir ? dir : ".") + "/" + f->signature + "." + sha1 + ".repro.json";
  try {
    WriteFileAtomic(path, WriteRepro(f->repro, path));
    std::fprintf(stderr, "fusefuzz: reproducer %s\n", path.c_str());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fusefuzz: cannot write the reproducer: %s\n", e.what());
  }
  std::fprintf(stderr, "fusefuzz: signature %s\n", f->signature.c_str());
  const std::string kind(FindingKindName(f->out.kind));
  const std::string rule = f->repro.blame.rule.empty() ? "(no rule blamed)" : f->repro.blame.rule;
  AbortInBucket(f->out.kind, EngineBucket(target_->caps(), f->repro),
                {kind.c_str(), rule.c_str(), f->repro.detail.c_str()});
}

int EngineFuzzer::Tool(int argc, char** argv) {
  const std::string mode = argc >= 2 ? argv[1] : "";
  try {
    if (mode == "--write-repro") {
      if (argc != 4) {
        std::fprintf(stderr, "usage: %s --write-repro OUT.json CRASHFILE\n", argv[0]);
        return 2;
      }
      const std::string out = argv[2], input = argv[3];
      std::vector<uint8_t> bytes;
      if (!ReadBytes(input, bytes)) {
        std::fprintf(stderr, "cannot read %s\n", input.c_str());
        return 2;
      }
      auto f = Run(bytes.data(), bytes.size(), input);
      if (!f) {
        std::fprintf(stderr, "%s: no finding\n", input.c_str());
        return 1;
      }
      WriteFileAtomic(out, WriteRepro(f->repro, out));
      std::printf("%s: %s %s%s -> %s\n", input.c_str(),
                  std::string(FindingKindName(f->out.kind)).c_str(),
                  f->repro.blame.rule.empty() ? "(no rule blamed)" : f->repro.blame.rule.c_str(),
                  f->known ? " (known)" : "", out.c_str());
      std::printf("signature %s\n", f->signature.c_str());
      return 0;
    }
    if (mode == "--seed-corpus") {
      if (argc != 4 && argc != 5) {
        std::fprintf(stderr, "usage: %s --seed-corpus DIR N [SEED]\n", argv[0]);
        return 2;
      }
      const std::string dir = argv[2];
      const int64_t n = std::stoll(argv[3]);
      const uint64_t seed = argc == 5 ? std::stoull(argv[4]) : 1;
      for (int64_t i = 0; i < n; ++i) {
        const std::vector<uint8_t> b = BytesOfSeededCase(CaseSeed(seed, i), gen_);
        WriteFileAtomic(dir + "/" + Sha1Hex(b.data(), b.size()), std::string(b.begin(), b.end()));
      }
      std::fprintf(stderr, "%s: wrote %lld campaign cases (seed %llu) to %s\n", argv[0],
                   static_cast<long long>(n), static_cast<unsigned long long>(seed), dir.c_str());
      return 0;
    }
    if (mode == "--stats") {
      // What the inputs exercise: verdicts of the cases, the fusions that fired in passing
      // cases, and the findings by signature.
      InputOptions o;
      std::string error;
      if (!ParseInputOptions(argc, argv, 2, o, error)) {
        std::fprintf(stderr, "%s\n", error.c_str());
        return 2;
      }
      std::map<std::string, int64_t> verdicts, fired, findings;
      int64_t nodes = 0, max_nodes = 0, seen = 0, new_findings = 0;
      // Printed every 10,000 inputs too, so that a run cut short by a time limit says what it ran.
      auto print = [&] {
        std::printf("%lld inputs, %.1f nodes per graph (at most %lld)\n",
                    static_cast<long long>(seen),
                    seen ? static_cast<double>(nodes) / static_cast<double>(seen) : 0.0,
                    static_cast<long long>(max_nodes));
        for (const auto& [v, count] : verdicts)
          std::printf("  %s %lld\n", v.c_str(), static_cast<long long>(count));
        for (const auto& [s, count] : findings)
          std::printf("  finding %s: %lld\n", s.c_str(), static_cast<long long>(count));
        for (const auto& [r, count] : fired)
          std::printf("  fired %s: %lld\n", r.c_str(), static_cast<long long>(count));
        std::fflush(stdout);
      };
      int64_t n = ForEachInput(o, [&](const std::string&, const std::vector<uint8_t>& b) {
        BytesSource source(b.data(), b.size());
        const GeneratedCase c = Generate(source, gen_);
        nodes += static_cast<int64_t>(c.graph.nodes.size());
        max_nodes = std::max(max_nodes, static_cast<int64_t>(c.graph.nodes.size()));
        const CaseOutcome out =
            CheckCase(*target_, c.graph, c.inputs, RunReference(c.graph, c.inputs), check_);
        ++verdicts[std::string(VerdictName(out.verdict))];
        if (out.finding()) {
          if (auto f = Run(b.data(), b.size())) {
            ++findings[f->signature + (f->known ? " (known)" : "")];
            new_findings += f->known ? 0 : 1;
          }
        }
        if (out.verdict == Verdict::kPass) {
          for (const Rewrite& w : out.run.rewrites) ++fired[w.rule];
        }
        if (++seen % 10000 == 0) print();
      });
      if (n < 0) return 2;
      print();
      return new_findings > 0 ? 1 : 0;  // a finding not in the known list fails the run
    }
    if (mode == "--find") {
      InputOptions o;
      std::string error;
      if (!ParseInputOptions(argc, argv, 2, o, error)) {
        std::fprintf(stderr, "%s\n", error.c_str());
        return 2;
      }
      bool found = false;
      int64_t n = ForEachInput(o, [&](const std::string& name, const std::vector<uint8_t>& b) {
        if (found) return;
        auto f = Run(b.data(), b.size(), name);
        if (f && !f->known) {
          found = true;
          std::printf(
              "%s: %s %s\n  %s\nsignature %s\n", name.c_str(),
              std::string(FindingKindName(f->out.kind)).c_str(),
              f->repro.blame.rule.empty() ? "(no rule blamed)" : f->repro.blame.rule.c_str(),
              f->repro.detail.c_str(), f->signature.c_str());
        }
      });
      if (n < 0) return 2;
      if (!found) std::printf("no new finding in %lld inputs\n", static_cast<long long>(n));
      return found ? 0 : 1;
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: %s\n", argv[0], e.what());
    return 2;
  }
  return -1;
}

EngineFuzzer& MakeEngineFuzzerOrExit(const std::function<std::unique_ptr<FuzzEngine>()>& make,
                                     const EngineFuzzerOptions& o) {
  try {
    return *new EngineFuzzer(make(), o);  // lives for the process (fuzz targets are C entries)
  } catch (const std::exception& e) {
    std::fprintf(stderr, "engine fuzzer: %s\n", e.what());
    std::exit(2);
  }
}

}  // namespace fusefuzz::fuzz
