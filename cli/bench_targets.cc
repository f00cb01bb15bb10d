// `fusefuzz bench --target T [--target T2 ...]`: the fusion benchmark's pattern x layer-shape
// cases (bench/fusion_patterns; with --quant the int8 patterns as QDQ graphs,
// bench/quant_patterns) timed by each engine itself through the protocol capability `bench`
// (docs/target-protocol.md#timing-requests), unoptimized and optimized, and judged by the oracle
// (the integer-grid oracle on quantized outputs) against the reference on the very outputs of
// the timed runs.
#include "cli/bench_targets.h"

#include <stdlib.h>
#include <unistd.h>

#include <chrono>
#include <ctime>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <regex>
#include <thread>

#include "bench/fusion_patterns.h"
#include "bench/onednn_peer.h"
#include "bench/quant_patterns.h"
#include "cli/bench_table.h"
#include "ir/error.h"
#include "kernels/reference/reference.h"
#include "oracles/oracle.h"
#include "targets/target.h"

namespace fusefuzz {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// The target broke the protocol or died: the benchmark stops (exit 2) after saving the table.
struct Abort {
  std::string message;
};

struct Engine {
  BenchEngine info;
  std::unique_ptr<Target> target;  // null for the in-process oneDNN peer
};

// --tiny: the same patterns on layers 16x narrower and 4x smaller (for smoke tests).
Layer Tiny(Layer l) {
  const bool depthwise = l.group == l.c && l.c > 1;
  l.c = std::max<int64_t>(2, l.c / 16);
  l.m = depthwise ? l.c : std::max<int64_t>(2, l.m / 16);
  l.group = depthwise ? l.c : 1;
  l.h = std::max<int64_t>(4, l.h / 4);
  return l;
}

QLayer Tiny(QLayer l) {
  const bool depthwise = l.group == l.c && l.c > 1;
  l.c = std::max<int64_t>(2, l.c / 16);
  l.m = depthwise ? l.c : std::max<int64_t>(2, l.m / 16);
  l.group = depthwise ? l.c : 1;
  l.h = std::max<int64_t>(4, l.h / 4);
  return l;
}

// One row to measure: a float pattern case, or an int8 one (--quant).
struct CaseSpec {
  std::string name;
  std::optional<PatternCase> fp;
  std::optional<Int8BenchCase> q;
};

// Name part: letters, digits and ._+- only (labels come from the target's hello).
std::string Label(const std::string& name, const std::vector<Engine>& taken) {
  std::string s;
  for (char c : name)
    s += std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '+' || c == '-'
             ? c
             : '_';
  if (s.empty()) s = "target";
  std::string label = s;
  for (int n = 2;; ++n) {
    bool clash = false;
    for (const Engine& e : taken) clash = clash || e.info.label == label;
    if (!clash) return label;
    label = s + "-" + std::to_string(n);
  }
}

json Context() {
  json ctx;
  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
  const std::time_t now = std::time(nullptr);
  char date[64];
  std::strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%S%z", std::localtime(&now));
  double load[3] = {0, 0, 0};
  ::getloadavg(load, 3);
  ctx["date"] = date;
  ctx["host_name"] = host;
  ctx["executable"] = "fusefuzz bench --target";
  ctx["num_cpus"] = std::thread::hardware_concurrency();
  ctx["load_avg"] = {load[0], load[1], load[2]};
  ctx["library_build_type"] = "fusefuzz";
  const std::string dnnl = DnnlVersion();
  ctx["onednn"] = dnnl.empty() ? "not built" : dnnl;
  return ctx;
}

// "rule, rule x2, other" in the order applied; "none" for no rewrites.
std::string RewriteList(const std::vector<Rewrite>& rewrites) {
  std::vector<std::pair<std::string, int>> runs;
  for (const Rewrite& r : rewrites) {
    if (!runs.empty() && runs.back().first == r.rule) {
      ++runs.back().second;
    } else {
      runs.push_back({r.rule, 1});
    }
  }
  std::string s;
  for (const auto& [rule, n] : runs) {
    if (!s.empty()) s += ", ";
    s += rule;
    if (n > 1) s += " x" + std::to_string(n);
  }
  return s.empty() ? "none" : s;
}

// The oracle's verdict on one timed run's outputs, and its one-line detail when that is not a
// pass (the worst element: what a reader of the table needs to tell a bug from noise).
// Judged for the arithmetic the target declares (an fp16 engine against fp16's bound).
std::string Judge(const Graph& g, const RefTensorMap& ref, const TargetResult& r, Precision p,
                  std::string* detail) {
  OracleOptions o;
  o.precision = p;
  const OracleResult res = Compare(g, ref, r.outputs, o);
  if (res.verdict != Verdict::kPass) *detail = res.detail;
  return std::string(VerdictName(res.verdict));
}

class Runner {
 public:
  Runner(const TargetBenchArgs& a, std::vector<Engine> engines)
      : a_(a), engines_(std::move(engines)) {}

  // One row: every engine, `repetitions` times each variant (alternating, so that a burst of
  // machine load hits both variants alike).
  BenchRow Measure(const CaseSpec& cs) {
    const BuiltCase bc = cs.q ? BuildQuantCase(*cs.q, a_.quant_activations) : BuildCase(*cs.fp);
    BenchRow row;
    row.name = cs.name;
    row.pattern = cs.q ? QPatternName(cs.q->pattern) : cs.fp->pattern;
    row.layer = cs.q ? cs.q->layer.model : cs.fp->layer.model;
    row.shape = row.name.substr(row.name.rfind('/') + 1);
    if (cs.q) row.ops = QLayerOps(cs.q->layer);
    const RefTensorMap ref = RunReference(bc.graph, bc.inputs);
    for (Engine& e : engines_) row.cells.push_back(Cell(e, cs, bc, ref, row.name));
    return row;
  }

 private:
  BenchCell Cell(Engine& e, const CaseSpec& cs, const BuiltCase& bc, const RefTensorMap& ref,
                 const std::string& name) {
    BenchCell c;
    if (!e.target) return cs.q ? DnnlInt8Cell(*cs.q) : DnnlCell(*cs.fp);
    // An op the hello does not declare is not sent (the generator keeps to the declared ops
    // too): a float-only mode given the int8 rows answers each of them so.
    for (const Node& n : bc.graph.nodes) {
      if (!e.target->caps().ops.count(n.op)) {
        c.verdict = "UNSUPPORTED";
        c.note =
            "the target does not declare " + std::string(OpName(n.op)) + " (node '" + n.name + "')";
        return c;
      }
    }
    std::string unfused_verdict = "PASS", fused_verdict = "PASS";
    for (int rep = 0; rep < a_.repetitions; ++rep) {
      for (bool optimize : {false, true}) {
        RunRequest req;
        req.optimize = optimize;
        req.threads = a_.threads;
        req.bench_warmup = a_.warmup;
        req.bench_runs = a_.runs;
        const TargetResult r = e.target->Run(bc.graph, bc.inputs, req);
        const char* variant = optimize ? "fused" : "unfused";
        if (r.bad_response || r.status == RunStatus::kCrash || r.status == RunStatus::kTimeout) {
          std::string msg =
              "target " + e.info.spec + " on " + name + " (" + variant + "): " + r.message;
          if (!r.log.empty()) msg += "; its stderr ends: " + r.log;
          throw Abort{msg};
        }
        if (r.status != RunStatus::kOk) {
          c.verdict = r.status == RunStatus::kUnsupported ? "UNSUPPORTED" : "TARGET_ERROR";
          c.note = r.message;
          c.rewrites.clear(), c.unfused_ns.clear(), c.fused_ns.clear(), c.unfused_min_ns.clear(),
              c.fused_min_ns.clear();
          return c;
        }
        // Exec targets always carry validated timings here; the embedded one measures itself.
        (optimize ? c.fused_ns : c.unfused_ns).push_back(r.timings->median_ns);
        (optimize ? c.fused_min_ns : c.unfused_min_ns).push_back(r.timings->min_ns);
        if (optimize && c.rewrites.empty()) c.rewrites = RewriteList(r.rewrites);
        std::string& v = optimize ? fused_verdict : unfused_verdict;
        if (v == "PASS") {
          // The target's declared quantize rounding: its own reference (docs/oracle.md).
          const QuantizeRounding q = e.target->caps().quantize_rounding;
          std::string detail;
          v = Judge(
              bc.graph,
              q == QuantizeRounding::kHalfEven ? ref : RunReference(bc.graph, bc.inputs, false, q),
              r, e.target->caps().precision, &detail);
          if (!detail.empty() && c.note.empty()) {
            c.note = std::string(optimize ? "fused" : "unfused") + " run: " + detail;
          }
        }
      }
    }
    c.verdict = unfused_verdict != "PASS" ? "kernel: " + unfused_verdict : fused_verdict;
    return c;
  }

  // oneDNN: the same pattern as separate primitives vs one primitive with post-ops, in process.
  // Its plans produce no fusefuzz tensors, so it has timings but no verdict.
  BenchCell DnnlCell(const PatternCase& pc) {
    BenchCell c;
    std::unique_ptr<DnnlPlan> plans[2];
    try {
      plans[0] = MakeDnnlPlan(pc, false);
      plans[1] = MakeDnnlPlan(pc, true);
    } catch (const std::exception& ex) {
      c.verdict = "TARGET_ERROR";
      c.note = std::string("oneDNN: ") + ex.what();
      return c;
    }
    if (!plans[0] || !plans[1]) {
      c.verdict = "UNSUPPORTED";
      c.note = "no oneDNN equivalent of this pattern";
      return c;
    }
    for (int rep = 0; rep < a_.repetitions; ++rep) {
      for (int fused : {0, 1}) {
        const BenchTimings t = TimeRuns(a_.warmup, a_.runs, [&] { plans[fused]->Run(); });
        (fused ? c.fused_ns : c.unfused_ns).push_back(t.median_ns);
        (fused ? c.fused_min_ns : c.unfused_min_ns).push_back(t.min_ns);
      }
    }
    c.verdict = "not checked";
    return c;
  }

  // oneDNN int8: the layer as one u8s8 convolution with the pattern's post-ops (the kernel rows'
  // peer, bench/onednn_peer.h), fused only: there is no unfused oneDNN int8 sequence to time.
  BenchCell DnnlInt8Cell(const Int8BenchCase& q) {
    BenchCell c;
    std::unique_ptr<DnnlPlan> plan;
    try {
      plan = MakeDnnlInt8Plan(q.layer, q.pattern);
    } catch (const std::exception& ex) {
      c.verdict = "TARGET_ERROR";
      c.note = std::string("oneDNN: ") + ex.what();
      return c;
    }
    if (!plan) {
      c.verdict = "UNSUPPORTED";
      c.note = "no oneDNN int8 equivalent of this pattern";
      return c;
    }
    for (int rep = 0; rep < a_.repetitions; ++rep) {
      const BenchTimings t = TimeRuns(a_.warmup, a_.runs, [&] { plan->Run(); });
      c.fused_ns.push_back(t.median_ns);
      c.fused_min_ns.push_back(t.min_ns);
    }
    c.verdict = "not checked";
    return c;
  }

  const TargetBenchArgs& a_;
  std::vector<Engine> engines_;
};

std::vector<Engine> StartEngines(const TargetBenchArgs& a) {
  std::vector<Engine> engines;
  TargetSettings settings;
  settings.timeout_seconds = a.timeout;
  for (const std::string& spec : a.targets) {
    Engine e;
    e.info.spec = spec;
    if (spec == "onednn") {
      if (DnnlVersion().empty()) {
        throw InputError("--target onednn", "this fusefuzz was built without oneDNN");
      }
      SetDnnlThreads(a.threads);
      e.info.label = Label("onednn-" + DnnlVersion(), engines);
      e.info.about =
          a.quant ? "in process: one u8s8 convolution with the pattern's post-ops (fused only: no "
                    "unfused int8 sequence); no verdict (its own buffers, not the case's tensors)"
                  : "in process: separate primitives vs one convolution with post-ops; no verdict "
                    "(its primitives run on their own buffers, not the case's tensors)";
      engines.push_back(std::move(e));
      continue;
    }
    e.target = MakeTarget(spec, settings);
    if (!e.target->caps().bench) {
      throw InputError("--target " + spec,
                       "target '" + e.target->caps().name +
                           "' does not declare the capability bench (docs/target-protocol.md)");
    }
    e.info.label = Label(e.target->caps().name, engines);
    engines.push_back(std::move(e));
  }
  return engines;
}

}  // namespace

int BenchTargets(const TargetBenchArgs& a) {
  std::regex filter;
  try {
    filter = std::regex(a.filter.empty() ? "." : a.filter);
  } catch (const std::regex_error& e) {
    throw InputError("--filter", std::string("not a regular expression: ") + e.what());
  }
  std::vector<CaseSpec> cases;
  std::map<std::string, bool> seen;
  auto add = [&](CaseSpec cs) {
    if (std::regex_search(cs.name, filter) && !seen[cs.name]) cases.push_back(cs);
    seen[cs.name] = true;
  };
  if (a.quant) {
    for (Int8BenchCase q : Int8BenchCases()) {
      if (a.tiny) q.layer = Tiny(q.layer);
      add({QuantCaseName(q, a.quant_activations), std::nullopt, q});
    }
  } else {
    for (PatternCase pc : AllCases()) {
      if (a.tiny) pc.layer = Tiny(pc.layer);
      add({CaseName(pc), pc, std::nullopt});
    }
  }
  if (cases.empty()) {
    throw InputError("--filter",
                     "'" + a.filter + "' matches no case " +
                         (a.quant ? "of --quant (names: BM_FusionInt8/<pattern>/<layer>/<shape>, "
                                    "e.g. BM_FusionInt8/conv_requant/resnet18_conv3_x/)"
                                  : "(names: BM_Fusion/<pattern>/<layer>/<shape>, e.g. "
                                    "BM_Fusion/conv_bn_relu/resnet18_conv3_x/)"));
  }
  std::error_code ec;
  fs::create_directories(a.out, ec);
  if (ec) throw InputError(a.out, "cannot create output directory: " + ec.message());
  BenchTable table;
  table.repetitions = a.repetitions;
  table.runs = a.runs;
  table.warmup = a.warmup;
  table.threads = a.threads;
  table.command = a.command_line;
  table.context = Context();
  std::vector<Engine> engines = StartEngines(a);
  for (const Engine& e : engines) table.engines.push_back(e.info);
  Runner runner(a, std::move(engines));
  bool wrong = false;
  for (size_t i = 0; i < cases.size(); ++i) {
    // Said before the row's work, which takes tens of seconds on several engines: a silent
    // bench looks hung (issue 45, item 11).
    std::cerr << "[" << i + 1 << "/" << cases.size() << "] " << cases[i].name << ": measuring on "
              << table.engines.size() << " engine" << (table.engines.size() == 1 ? "" : "s")
              << " ...\n";
    try {
      table.rows.push_back(runner.Measure(cases[i]));
    } catch (const Abort& abort) {
      WriteBenchTable(table, a.out);
      std::cerr << "fusefuzz: error: " << abort.message
                << "\nfusefuzz bench: stopped; rows measured before: " << table.rows.size()
                << ", written to " << a.out << "\n";
      return 2;
    }
    // Rewritten after every row: an interrupted run keeps what it measured.
    WriteBenchTable(table, a.out);
    const BenchRow& row = table.rows.back();
    std::cerr << "[" << i + 1 << "/" << cases.size() << "] " << row.name;
    for (size_t e = 0; e < row.cells.size(); ++e) {
      std::cerr << "  " << table.engines[e].label << ": " << row.cells[e].verdict;
      wrong |= WrongNumbers(row.cells[e].verdict);
    }
    std::cerr << "\n";
  }
  std::cout << "wrote " << (fs::path(a.out) / "benchmarks.json").string() << ", benchmarks.md and "
            << "speedup.svg (" << table.rows.size() << " rows x " << table.engines.size()
            << " engines)\n";
  // Wrong numbers are a finding even in a benchmark: exit 1, as `fuzz` and `check` do.
  if (wrong) {
    std::cerr << "fusefuzz bench: a row's numbers are wrong (MISMATCH in benchmarks.md): exit 1\n";
    return 1;
  }
  return 0;
}

}  // namespace fusefuzz
