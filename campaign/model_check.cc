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

// Classifier outputs: [N, K] or [N, K, 1, 1] with K >= 2.
bool IsClassifier(const Tensor& t) {
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
  auto cand = got.find(out);
  auto rt = ref.find(out);
  if (cand == got.end() || rt == ref.end() || !IsClassifier(cand->second) ||
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
      for (const std::string& out : g.outputs) {
        s.outputs.push_back(CheckOutput(g, out, ref, s.optimized.run.outputs, o.check.oracle));
      }
    }
    // As a campaign judges it: a failing unoptimized run is a kernel (or error) finding, else
    // the optimized run decides.
    const CaseOutcome& decisive = s.plain.finding() ? s.plain : s.optimized;
    if (!result.finding && decisive.finding()) {
      result.finding = true;
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
  if (result.finding) {
    result.kind = std::string(FindingKindName(first.kind));
    result.blamed_rule = first.blame.rule;
    result.nodes_before = result.nodes_after = static_cast<int64_t>(g.nodes.size());
    Repro filed = first;
    if (o.minimize && first.kind != FindingKind::kTimeout) {
      MinimizeOptions mo;
      mo.budget_seconds = o.minimize_budget;
      phase("minimizing the finding (budget " +
            std::to_string(static_cast<int>(o.minimize_budget)) + " s)");
      filed = Minimize(first, target, mo);
      result.nodes_after = static_cast<int64_t>(filed.graph.nodes.size());
    }
    if (!o.out_dir.empty()) {
      const OutLayout layout(o.out_dir);
      // Real folders, not links someone planted in OUT.
      for (const char* d : {"findings", ".claims", ".tmp"}) MakeFolderIn(o.out_dir, d);
      result.signature = Signature(filed);
      phase("writing findings/" + result.signature);
      const TargetAnswer answer = AskTarget(target, filed);
      PublishFinding(layout, result.signature, filed, &answer);
    }
  }
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return result;
}

std::string PassingTolerance(const RatioStats& st, OracleKind kind) {
  if (st.n == 0 || st.max <= st.limit || !std::isfinite(st.max)) return "";
  char buf[96];
  switch (kind) {
    case OracleKind::kBound:
    case OracleKind::kSigma:
    case OracleKind::kGrid:
      std::snprintf(buf, sizeof buf, "--k %.4g", st.max * 1.0001);
      break;
    case OracleKind::kAllclose:
      std::snprintf(buf, sizeof buf, "--rtol and --atol x %.4g", st.max * 1.0001);
      break;
    case OracleKind::kUlp:
      std::snprintf(buf, sizeof buf, "--max-ulp %.0f", std::ceil(st.max));
      break;
  }
  return buf;
}

nlohmann::json ModelCheckJson(const ModelCheckResult& r, const std::string& target,
                              const OracleOptions& oracle) {
  using nlohmann::json;
  auto num = [](double v) { return std::isfinite(v) ? json(v) : json(std::to_string(v)); };
  json samples = json::array();
  for (const SampleCheck& sc : r.samples) {
    json outs = json::array();
    for (const OutputCheck& c : sc.outputs) {
      json o = {{"output", c.output},
                {"verdict", VerdictName(c.verdict)},
                {"worst",
                 {{"index", c.worst.index},
                  {"reference", num(c.worst.reference)},
                  {"target", num(c.worst.candidate)},
                  {"ratio", num(c.worst.ratio)}}}};
      if (c.stats.n > 0) {
        o["error"] = {{"elements", c.stats.n},         {"limit", num(c.stats.limit)},
                      {"max", num(c.stats.max)},       {"mean", num(c.stats.mean)},
                      {"median", num(c.stats.median)}, {"p99", num(c.stats.p99)}};
        const std::string tol = PassingTolerance(c.stats, oracle.kind);
        if (!tol.empty()) o["error"]["would_pass_with"] = tol;
      }
      if (c.grid.compared > 0) {
        o["grid"] = {{"elements", c.grid.compared},       {"informative", c.grid.informative},
                     {"saturated", c.grid.saturated},     {"failed", c.grid.failed},
                     {"worst_t", num(c.grid.t)},          {"worst_e", num(c.grid.e)},
                     {"excess_steps", num(c.grid.excess)}};
      }
      if (c.rows > 0) o["top1"] = {c.top1_agree, c.rows}, o["top5"] = {c.top5_agree, c.rows};
      outs.push_back(std::move(o));
    }
    samples.push_back({{"seed", sc.seed},
                       {"unoptimized", VerdictName(sc.plain.verdict)},
                       {"optimized", VerdictName(sc.optimized.verdict)},
                       {"rewrites", sc.optimized.run.rewrites.size()},
                       {"outputs", std::move(outs)}});
  }
  json j = {{"target", target},
            {"oracle", OracleDescription(oracle)},
            {"samples", std::move(samples)},
            {"seconds", r.seconds}};
  j["result"] = !r.unsupported.empty() ? "unsupported" : r.finding ? "finding" : "pass";
  if (!r.unsupported.empty()) j["unsupported"] = r.unsupported;
  if (r.finding) {
    j["finding"] = {{"kind", r.kind},
                    {"blamed_rule", r.blamed_rule},
                    {"folder", r.signature.empty() ? "" : "findings/" + r.signature},
                    {"nodes_before", r.nodes_before},
                    {"nodes_after", r.nodes_after}};
  }
  return j;
}

namespace {

Shape ShapeOf(const TensorMap& m, const std::string& name) {
  auto it = m.find(name);
  return it == m.end() ? Shape{} : it->second.shape;
}

}  // namespace

std::string ModelCheckText(const ModelCheckResult& r, const std::string& out_dir) {
  std::ostringstream s;
  char buf[512];
  for (const SampleCheck& sc : r.samples) {
    s << "sample seed " << sc.seed << ": unoptimized " << VerdictName(sc.plain.verdict)
      << ", optimized " << VerdictName(sc.optimized.verdict);
    if (sc.optimized.run.status != RunStatus::kOk) s << " (" << sc.optimized.run.message << ")";
    s << ", " << sc.optimized.run.rewrites.size() << " rewrites\n";
    for (const OutputCheck& c : sc.outputs) {
      std::snprintf(buf, sizeof buf,
                    "  %s: %s, worst element %s reference %.9g target %.9g "
                    "ratio %.3g",
                    c.output.c_str(), std::string(VerdictName(c.verdict)).c_str(),
                    Coordinates(c.worst.index, ShapeOf(sc.reference, c.output)).c_str(),
                    c.worst.reference, c.worst.candidate, c.worst.ratio);
      s << buf;
      if (c.rows > 0) {
        s << ", top-1 " << c.top1_agree << "/" << c.rows << ", top-5 " << c.top5_agree << "/"
          << c.rows;
      }
      s << "\n";
      if (c.stats.n > 0) {
        std::snprintf(buf, sizeof buf,
                      "    error over %lld elements, in tolerance units (fails above %.3g): max "
                      "%.3g, mean %.3g, median %.3g, p99 %.3g",
                      static_cast<long long>(c.stats.n), c.stats.limit, c.stats.max, c.stats.mean,
                      c.stats.median, c.stats.p99);
        s << buf;
        const std::string tol = PassingTolerance(c.stats, r.oracle_kind);
        if (!tol.empty()) {
          s << "; would pass with " << tol;
          // The same limit for this output alone (oracle.h, output_tolerance).
          if (r.oracle_kind != OracleKind::kAllclose) {
            s << " (this output only: --tolerance " << c.output << "="
              << tol.substr(tol.find(' ') + 1) << ")";
          }
        }
        s << "\n";
      }
      if (c.grid.compared > 0) {
        std::snprintf(buf, sizeof buf,
                      "    integer grid: %lld elements (%lld informative, %lld saturated), %lld "
                      "fail; worst excess %.4g steps (t %.6g, admitted E %.4g steps)",
                      static_cast<long long>(c.grid.compared),
                      static_cast<long long>(c.grid.informative),
                      static_cast<long long>(c.grid.saturated),
                      static_cast<long long>(c.grid.failed), c.grid.excess, c.grid.t, c.grid.e);
        s << buf << "\n";
      }
    }
  }
  int64_t rows = 0, top1 = 0, top5 = 0;
  for (const SampleCheck& sc : r.samples) {
    for (const OutputCheck& c : sc.outputs) {
      rows += c.rows;
      top1 += c.top1_agree;
      top5 += c.top5_agree;
    }
  }
  if (rows > 0) {
    s << "classifier agreement over " << r.samples.size() << " samples: top-1 " << top1 << "/"
      << rows << ", top-5 " << top5 << "/" << rows << "\n";
  }
  bool mistrusted = false;
  for (const SampleCheck& sc : r.samples) {
    mistrusted |= sc.optimized.verdict == Verdict::kMistrusted;
  }
  if (mistrusted) {
    s << "note: MISTRUSTED means this oracle cannot judge the outputs (the bound oracle's "
         "magnitude term outgrows a deep model's outputs); judge with --oracle sigma\n";
  }
  if (top1 < rows) {
    s << "note: the target's top-1 differs from the reference's on " << rows - top1 << " of "
      << rows << " rows\n";
  }
  if (!r.unsupported.empty()) {
    s << "check: NOT CHECKED: UNSUPPORTED (" << r.unsupported << ")\n";
    return s.str();
  }
  if (!r.finding) {
    std::snprintf(buf, sizeof buf, "check: PASS (%.1f s)\n", r.seconds);
    s << buf;
    return s.str();
  }
  s << "check: " << r.kind << " finding";
  if (!r.blamed_rule.empty()) s << ", blamed on '" << r.blamed_rule << "'";
  s << "; culprit " << r.nodes_after << " of " << r.nodes_before << " nodes";
  std::snprintf(buf, sizeof buf, " (%.1f s)\n", r.seconds);
  s << buf;
  if (!r.signature.empty()) {
    s << "finding: " << out_dir << "/findings/" << r.signature << "/\n";
  }
  return s.str();
}

}  // namespace fusefuzz
