#include "campaign/model_check.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <sstream>

#include "campaign/finding_filing.h"
#include "generators/seeded_inputs.h"
#include "harness/case_repro.h"
#include "harness/minimize.h"
#include "harness/repro.h"
#include "ir/error.h"
#include "ir/folder_write.h"
#include "report/finding_report.h"

namespace fusefuzz {
namespace {

// Classifier outputs: a final output of the model (read by no node: a block's output answered
// beside the logits is not one) of shape [N, K] or [N, K, 1, 1] with K >= 2.
bool IsClassifier(const Graph& g, const std::string& out, const Tensor& t) {
  for (const Node& n : g.nodes) {
    if (std::find(n.inputs.begin(), n.inputs.end(), out) != n.inputs.end()) return false;
  }
  const Shape& s = t.shape;
  if (s.size() == 2) return s[1] >= 2;
  return s.size() == 4 && s[1] >= 2 && s[2] == 1 && s[3] == 1;
}

// Indices of row `row`'s k largest entries (ties: the lower index first).
template <typename Get>
std::vector<int64_t> TopK(int64_t classes, int64_t k, Get get) {
  std::vector<int64_t> idx(static_cast<size_t>(classes));
  for (int64_t i = 0; i < classes; ++i) idx[static_cast<size_t>(i)] = i;
  k = std::min(k, classes);
  std::partial_sort(idx.begin(), idx.begin() + k, idx.end(), [&](int64_t a, int64_t b) {
    return get(a) > get(b) || (get(a) == get(b) && a < b);
  });
  idx.resize(static_cast<size_t>(k));
  return idx;
}

// The admitted spread E (steps) of the integer elements of `t` that are neither saturated nor
// informative, as the grid oracle reads it (grid_es under sigma).
std::vector<double> WideSpreads(const RefTensor& t, bool sigma) {
  const std::vector<double>& e = sigma && !t.grid_es.empty() ? t.grid_es : t.grid_e;
  std::vector<double> wide;
  for (size_t i = 0; i < e.size() && i < t.grid_t.size(); ++i) {
    if (std::isnan(t.grid_t[i]) || !(e[i] > 1)) continue;
    const double reach = 0.5 + e[i];
    if (t.grid_t[i] < double(t.grid_qmin) - reach || t.grid_t[i] > double(t.grid_qmax) + reach) {
      continue;  // saturated: counted apart
    }
    wide.push_back(e[i]);
  }
  return wide;
}

// Why nothing in output `out` was informative, and what would let it be judged (issue 43:
// the note must name the real cause, not advise the oracle already in use).
NotJudged WhyNotJudged(const OracleResult& r, const RefTensor* ref, const OracleOptions& oracle) {
  NotJudged nj;
  nj.is = true;
  nj.elements = r.compared + r.overflowed + r.nonfinite;
  nj.informative = r.informative;
  char buf[400];
  const GridSummary& g = r.grid;
  const int64_t wide = g.compared - g.saturated - g.informative;
  if (g.compared > 0 && ref != nullptr && wide > 0 && wide >= g.saturated) {
    std::vector<double> e = WideSpreads(*ref, oracle.kind == OracleKind::kSigma);
    std::sort(e.begin(), e.end());
    const double median = e.empty() ? 0 : e[e.size() / 2], top = e.empty() ? 0 : e.back();
    std::snprintf(buf, sizeof buf,
                  "the integer grid's carried spread: on %lld of %lld elements the admitted "
                  "spread E exceeds 1 step (median %.3g, largest %.3g steps), so a wrong answer "
                  "there would pass too (E: the float error before each rounding and the "
                  "possible rounding flips of every earlier quantized tensor, carried to this "
                  "output)",
                  static_cast<long long>(wide), static_cast<long long>(g.compared), median, top);
    nj.cause = buf;
    nj.advice = oracle.kind == OracleKind::kSigma
                    ? "judge it layer by layer with --layers (each quantized layer from the "
                      "engine's own integers before it: the spread does not carry), or check a "
                      "shorter part of the model (the spread grows with every quantized layer): "
                      "a sub-model ending at an earlier quantized tensor, e.g. a block's output"
                    : "judge with --oracle sigma (it adds the carried spreads in quadrature, "
                      "a smaller E), or check a shorter part of the model";
  } else if (g.compared > 0 && g.saturated > 0) {
    std::snprintf(buf, sizeof buf,
                  "saturation: %lld of %lld integer elements lie beyond the type's range, "
                  "where any engine must answer the limit",
                  static_cast<long long>(g.saturated), static_cast<long long>(g.compared));
    nj.cause = buf;
    nj.advice = "give inputs in the range the model was calibrated for (--inputs FILE)";
  } else if (r.compared == 0) {
    std::snprintf(buf, sizeof buf,
                  "no finite element to compare (%lld overflowed, %lld non-finite)",
                  static_cast<long long>(r.overflowed), static_cast<long long>(r.nonfinite));
    nj.cause = buf;
    nj.advice = "give inputs that keep the output finite (--inputs FILE)";
  } else if (oracle.kind == OracleKind::kBound) {
    nj.cause =
        "the bound oracle's magnitude term outgrows the outputs (|r| <= 2 x bound on "
        "every element; a deep model's cancellations)";
    nj.advice = "judge with --oracle sigma";
  } else {
    nj.cause =
        "every reference value is within twice its tolerance of 0 (|r| <= 2 x bound), "
        "so a wrong answer of about |r| would still pass";
    nj.advice = oracle.kind == OracleKind::kSigma
                    ? "give inputs whose outputs are not near 0 (--inputs FILE)"
                    : "judge with --oracle sigma, or give inputs whose outputs are not near 0";
  }
  return nj;
}

bool HasQuantize(const Graph& g) {
  return std::any_of(g.nodes.begin(), g.nodes.end(),
                     [](const Node& n) { return n.op == Op::QuantizeLinear; });
}

// `ref` is the reference the runs were judged against (RunAndJudge: the target's precision and
// QuantizeLinear rounding), so an output's verdict agrees with its run's.
OutputCheck CheckOutput(const Graph& g, const std::string& out, const RefTensorMap& ref,
                        const TensorMap& got, const OracleOptions& oracle) {
  OutputCheck c;
  c.output = out;
  Graph one = g;
  one.outputs = {out};
  OracleOptions with_stats = oracle;
  with_stats.element_stats = true;
  OracleResult r = Compare(one, ref, got, with_stats);
  c.verdict = r.verdict;
  c.worst = r.worst;
  if (auto st = r.stats.find(out); st != r.stats.end()) c.stats = st->second;
  c.grid = r.grid;
  if (r.verdict == Verdict::kMistrusted) {
    auto it = ref.find(out);
    c.not_judged = WhyNotJudged(r, it == ref.end() ? nullptr : &it->second, oracle);
  }
  auto cand = got.find(out);
  auto rt = ref.find(out);
  if (cand == got.end() || rt == ref.end() || !IsClassifier(g, out, cand->second) ||
      cand->second.shape != rt->second.shape) {
    return c;
  }
  const int64_t n = cand->second.shape[0], k = cand->second.shape[1];
  for (int64_t row = 0; row < n; ++row) {
    const size_t base = static_cast<size_t>(row * k);
    auto ref_top =
        TopK(k, 1, [&](int64_t i) { return rt->second.value[base + static_cast<size_t>(i)]; });
    auto got_top = TopK(k, 5, [&](int64_t i) {
      return static_cast<double>(cand->second.data[base + static_cast<size_t>(i)]);
    });
    ++c.rows;
    c.top1_agree += got_top[0] == ref_top[0] ? 1 : 0;
    c.top5_agree += std::find(got_top.begin(), got_top.end(), ref_top[0]) != got_top.end();
  }
  double sum = 0;
  for (size_t i = 0; i < cand->second.data.size(); ++i) {
    const double d = std::fabs(static_cast<double>(cand->second.data[i]) - rt->second.value[i]);
    if (!std::isfinite(d)) continue;
    c.logit_max_abs = std::max(c.logit_max_abs, d);
    sum += d;
  }
  c.logit_mean_abs = sum / static_cast<double>(std::max<size_t>(1, cand->second.data.size()));
  return c;
}

}  // namespace

ModelCheckResult CheckModel(Target& target, const Graph& g, const TensorMap& inputs,
                            const ModelCheckOptions& o) {
  const auto start = std::chrono::steady_clock::now();
  // Progress on stderr as it happens: a whole model on an external target takes minutes, and a
  // silent check looks hung (issue 28, item 6).
  auto phase = [&](const std::string& what) {
    if (!o.progress) return;
    const double t =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::fprintf(stderr, "check: [%.1f s] %s\n", t, what.c_str());
    std::fflush(stderr);
  };
  ModelCheckResult result;
  result.oracle_kind = o.check.oracle.kind;
  const int samples = inputs.empty() ? std::max(1, o.samples) : 1;
  Repro first;  // the first finding
  size_t first_sample = 0;
  for (int i = 0; i < samples; ++i) {
    SampleCheck s;
    s.seed = o.seed + static_cast<uint64_t>(i);
    const TensorMap in = inputs.empty() ? InputsFromSeed(g, s.seed) : inputs;
    s.inputs = in;
    const std::string which = "sample " + std::to_string(i + 1) + "/" + std::to_string(samples);
    phase(which + ": reference (double precision)");
    const RefTensorMap ref = RunReference(g, in);
    for (const std::string& out : g.outputs) {
      if (auto it = ref.find(out); it != ref.end()) s.reference[out] = ToFloatTensor(it->second);
    }
    phase(which + ": unoptimized run on " + target.caps().name);
    s.plain = RunAndJudge(target, g, in, ref, o.check, false, o.check.opt);
    phase(which + ": unoptimized " + std::string(VerdictName(s.plain.verdict)) + "; optimized run");
    s.optimized = RunAndJudge(target, g, in, ref, o.check, true, o.check.opt);
    phase(which + ": optimized " + std::string(VerdictName(s.optimized.verdict)));
    if (s.optimized.run.status == RunStatus::kOk) {
      // Judged as RunAndJudge judged the run: the target's arithmetic and QuantizeLinear rule.
      OracleOptions oracle = o.check.oracle;
      oracle.precision = target.caps().precision;
      const QuantizeRounding rounding = target.caps().quantize_rounding;
      const RefTensorMap own_ref = rounding != QuantizeRounding::kHalfEven && HasQuantize(g)
                                       ? RunReference(g, in, false, rounding)
                                       : RefTensorMap{};
      for (const std::string& out : g.outputs) {
        s.outputs.push_back(
            CheckOutput(g, out, own_ref.empty() ? ref : own_ref, s.optimized.run.outputs, oracle));
      }
    }
    if (o.layers && s.optimized.run.status == RunStatus::kOk && !QuantBoundaries(g).empty()) {
      phase(which + ": layers: optimized run with the quantization boundaries exposed");
      s.layers = CheckLayers(target, g, in, o.check, s.optimized.run);
      result.layer_finding |= s.layers->first_departing >= 0;
    }
    // As a campaign judges it: a failing unoptimized run is a kernel (or error) finding, else
    // the optimized run decides.
    const CaseOutcome& decisive = s.plain.finding() ? s.plain : s.optimized;
    if (!result.finding && decisive.finding()) {
      result.finding = true;
      first_sample = result.samples.size();
      first = ReproOfCheck(g, in, target.spec(), o.check);
      first.kernel_check = true;  // both runs are always made
      SetOutcome(decisive, &first);
      first.has_seed = inputs.empty();
      first.seed = s.seed;
      const bool fusion_side =
          decisive.kind == FindingKind::kFusion || decisive.kind == FindingKind::kUnquantized;
      if (fusion_side || IsOptimizedRunFailure(decisive, o.check)) {
        if (!fusion_side) first.failing_run = "optimized";
        phase(which + ": blaming the rewrite (" + std::to_string(decisive.run.rewrites.size()) +
              " reported)");
        first.blame = BlameFusion(target, g, in, ref, o.check, decisive);
      }
    }
    for (const CaseOutcome* c : {&s.plain, &s.optimized}) {
      if (result.unsupported.empty() && c->run.status == RunStatus::kUnsupported) {
        result.unsupported = c->run.message.empty() ? "the target declined it" : c->run.message;
      }
    }
    result.samples.push_back(std::move(s));
  }
  if (result.finding) result.unsupported.clear();
  result.not_judged =
      !result.finding && !result.layer_finding && result.unsupported.empty() &&
      std::any_of(result.samples.begin(), result.samples.end(), [](const SampleCheck& sc) {
        return VerdictOfSample(sc) == SampleVerdict::kNotJudged;
      });
  if (result.finding) {
    result.kind = std::string(FindingKindName(first.kind));
    result.blamed_rule = first.blame.rule;
    result.nodes_before = result.nodes_after = static_cast<int64_t>(g.nodes.size());
    Repro filed = first;
    if (o.minimize && first.kind != FindingKind::kTimeout) {
      const auto minimize_start = std::chrono::steady_clock::now();
      // On an int8 model the minimizer starts from the block around the first departing layer
      // (issue 43): from the whole ResNet-18 it did not get below 125 of 132 nodes in 120 s.
      const Repro start = StartFromDepartingLayer(target, g, result.samples[first_sample], first,
                                                  o.check, phase, &result);
      // The budget covers the cut too (at least a tenth of it is left to the reducer).
      const double spent =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - minimize_start).count();
      MinimizeOptions mo;
      mo.budget_seconds = std::max(o.minimize_budget / 10, o.minimize_budget - spent);
      phase("minimizing the finding from " + std::to_string(start.graph.nodes.size()) +
            " nodes (budget " + std::to_string(static_cast<int>(mo.budget_seconds)) + " s)");
      filed = Minimize(start, target, mo);
      result.nodes_after = static_cast<int64_t>(filed.graph.nodes.size());
      if (!result.cut_layer.empty() && filed.minimization.is_object()) {
        // The reducer's nodes_before is the cut's: say what it was cut from.
        filed.minimization["started_from"] = {{"departing_layer", result.cut_layer},
                                              {"nodes", result.cut_nodes},
                                              {"model_nodes", result.nodes_before}};
      }
      result.minimize_seconds =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - minimize_start).count();
    }
    if (!o.out_dir.empty()) {
      const OutLayout layout(o.out_dir);
      // Real folders, not links someone planted in OUT.
      for (const char* d : {"findings", ".claims", ".tmp"}) MakeFolderIn(o.out_dir, d);
      result.signature = Signature(filed);
      phase("writing findings/" + result.signature);
      const TargetAnswer answer = AskTarget(target, filed);
      PublishFinding(layout, result.signature, filed, &answer);
      std::error_code ec;
      std::filesystem::remove(layout.tmp, ec);  // empty once published: no working files left
    }
  }
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return result;
}

bool JudgedByLayers(const SampleCheck& s) {
  if (!s.layers || !s.layers->ran || s.layers->first_departing >= 0) return false;
  return std::all_of(s.layers->layers.begin(), s.layers->layers.end(),
                     [](const LayerCheck& l) { return l.exposed && l.informative > 0; });
}

SampleVerdict VerdictOfSample(const SampleCheck& s) {
  if (s.plain.finding() || s.optimized.finding()) return SampleVerdict::kFinding;
  if (s.layers && s.layers->first_departing >= 0) return SampleVerdict::kFinding;
  for (const CaseOutcome* c : {&s.plain, &s.optimized}) {
    if (c->run.status == RunStatus::kUnsupported) return SampleVerdict::kUnsupported;
  }
  const bool output_not_judged = std::any_of(s.outputs.begin(), s.outputs.end(),
                                             [](const OutputCheck& c) { return c.not_judged.is; });
  if ((output_not_judged || s.plain.verdict == Verdict::kMistrusted ||
       s.optimized.verdict == Verdict::kMistrusted) &&
      !JudgedByLayers(s)) {
    return SampleVerdict::kNotJudged;
  }
  return SampleVerdict::kPass;
}

std::string_view SampleVerdictName(SampleVerdict v) {
  switch (v) {
    case SampleVerdict::kPass:
      return "PASS";
    case SampleVerdict::kNotJudged:
      return "NOT JUDGED";
    case SampleVerdict::kFinding:
      return "FINDING";
    case SampleVerdict::kUnsupported:
      return "UNSUPPORTED";
  }
  return "?";
}

}  // namespace fusefuzz
