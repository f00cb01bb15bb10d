// `fusefuzz check`'s text and JSON: per sample one verdict, per output its judgement, and the
// whole check's result (PASS, NOT JUDGED, a finding, NOT CHECKED); docs/check.md.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <sstream>

#include "campaign/model_check.h"
#include "report/finding_report.h"
#include "report/layerwise_report.h"

namespace fusefuzz {

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

namespace {

Shape ShapeOf(const TensorMap& m, const std::string& name) {
  auto it = m.find(name);
  return it == m.end() ? Shape{} : it->second.shape;
}

// A run's verdict as `check` says it: MISTRUSTED (the oracle's word) is NOT JUDGED here, and a
// run whose numbers pass but left promised nodes in float form says so (issue 45, item 7).
std::string RunWord(const CaseOutcome& c) {
  if (c.kind == FindingKind::kUnquantized) return "UNQUANTIZED (its numbers pass)";
  if (c.verdict == Verdict::kMistrusted) return "NOT JUDGED";
  return std::string(VerdictName(c.verdict));
}

// The rewrites a run reported, by rule in order of first use: "qdq-conv-fuse x3, relu-fuse".
std::string RewriteNames(const std::vector<Rewrite>& rewrites) {
  std::vector<std::pair<std::string, int>> counts;
  for (const Rewrite& rw : rewrites) {
    auto it = std::find_if(counts.begin(), counts.end(),
                           [&](const auto& p) { return p.first == rw.rule; });
    if (it == counts.end()) {
      counts.push_back({rw.rule, 1});
    } else {
      ++it->second;
    }
  }
  std::string s;
  for (const auto& [rule, n] : counts) {
    s += (s.empty() ? "" : ", ") + rule + (n > 1 ? " x" + std::to_string(n) : "");
  }
  return s;
}

std::string Plural(int64_t n, const char* one, const char* many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

// The classifier outputs' agreement over every sample (null when the model has none): how many
// samples and rows it rests on, so one agreeing row is not read as a rate.
nlohmann::json ClassifierAgreementJson(const ModelCheckResult& r) {
  int64_t rows = 0, top1 = 0, top5 = 0;
  double logit_max = 0;
  bool steps = false;
  for (const SampleCheck& sc : r.samples) {
    for (const OutputCheck& c : sc.outputs) {
      if (c.rows == 0) continue;
      rows += c.rows, top1 += c.top1_agree, top5 += c.top5_agree;
      logit_max = std::max(logit_max, c.logit_max_abs);
      steps |= c.grid.compared > 0;
    }
  }
  if (rows == 0) return nullptr;
  return {{"samples", r.samples.size()},
          {"rows", rows},
          {"top1_agree", top1},
          {"top5_agree", top5},
          {"largest_logit_error", logit_max},
          {"logit_error_unit", steps ? "steps" : "output units"},
          {"a_rate", rows > 1}};
}

}  // namespace

nlohmann::json ModelCheckJson(const ModelCheckResult& r, const std::string& target,
                              const OracleOptions& oracle) {
  using nlohmann::json;
  auto num = [](double v) { return std::isfinite(v) ? json(v) : json(std::to_string(v)); };
  json samples = json::array();
  for (const SampleCheck& sc : r.samples) {
    json outs = json::array();
    for (const OutputCheck& c : sc.outputs) {
      json o = {{"output", c.output},
                {"verdict", c.not_judged.is ? "NOT JUDGED" : VerdictName(c.verdict)},
                {"worst",
                 {{"index", c.worst.index},
                  {"reference", num(c.worst.reference)},
                  {"target", num(c.worst.candidate)},
                  {"ratio", num(c.worst.ratio)}}}};
      if (c.not_judged.is) {
        o["not_judged"] = {{"elements", c.not_judged.elements},
                           {"informative", c.not_judged.informative},
                           {"cause", c.not_judged.cause},
                           {"advice", c.not_judged.advice}};
      }
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
      if (c.rows > 0) {
        o["top1"] = {c.top1_agree, c.rows}, o["top5"] = {c.top5_agree, c.rows};
        o["logit_error"] = {{"max_abs", num(c.logit_max_abs)}, {"mean_abs", num(c.logit_mean_abs)}};
      }
      outs.push_back(std::move(o));
    }
    json rules = json::array();
    for (const Rewrite& rw : sc.optimized.run.rewrites) rules.push_back(rw.rule);
    samples.push_back({{"seed", sc.seed},
                       {"verdict", SampleVerdictName(VerdictOfSample(sc))},
                       {"unoptimized", VerdictName(sc.plain.verdict)},
                       {"optimized", VerdictName(sc.optimized.verdict)},
                       {"rewrites", sc.optimized.run.rewrites.size()},
                       {"rewrite_rules", std::move(rules)},
                       {"outputs", std::move(outs)}});
    if (sc.layers) samples.back()["layers"] = LayerwiseJson(*sc.layers);
  }
  json j = {{"target", target},
            {"oracle", OracleDescription(oracle)},
            {"samples", std::move(samples)},
            {"seconds", r.seconds}};
  j["result"] = !r.unsupported.empty()         ? "unsupported"
                : r.finding || r.layer_finding ? "finding"
                : r.not_judged                 ? "not_judged"
                                               : "pass";
  if (!r.unsupported.empty()) j["unsupported"] = r.unsupported;
  if (auto agreement = ClassifierAgreementJson(r); !agreement.is_null()) {
    j["classifier_agreement"] = std::move(agreement);
  }
  if (r.not_judged) {
    int64_t n = 0;
    for (const SampleCheck& sc : r.samples) n += VerdictOfSample(sc) == SampleVerdict::kNotJudged;
    j["not_judged"] = {{"samples", n}, {"of", r.samples.size()}};
  }
  if (!r.finding && r.layer_finding) {
    for (const SampleCheck& sc : r.samples) {
      if (!sc.layers || sc.layers->first_departing < 0) continue;
      j["finding"] = {{"kind", "layer"},
                      {"seed", sc.seed},
                      {"first_departing", sc.layers->layers[sc.layers->first_departing].value}};
      break;
    }
  }
  if (r.finding) {
    j["finding"] = {{"kind", r.kind},
                    {"blamed_rule", r.blamed_rule},
                    {"folder", r.signature.empty() ? "" : "findings/" + r.signature},
                    {"nodes_before", r.nodes_before},
                    {"nodes_after", r.nodes_after},
                    {"minimize_seconds", r.minimize_seconds}};
    if (!r.cut_layer.empty()) {
      j["finding"]["minimized_from"] = {
          {"layer", r.cut_layer}, {"nodes", r.cut_nodes}, {"widen", r.cut_widen}};
    } else if (!r.cut_note.empty()) {
      j["finding"]["minimized_from"] = {{"nodes", r.nodes_before}, {"why_not_a_block", r.cut_note}};
    }
  }
  return j;
}

std::string ModelCheckText(const ModelCheckResult& r, const std::string& out_dir) {
  std::ostringstream s;
  char buf[512];
  for (const SampleCheck& sc : r.samples) {
    s << "sample seed " << sc.seed << ": " << SampleVerdictName(VerdictOfSample(sc))
      << ": unoptimized " << RunWord(sc.plain) << ", optimized " << RunWord(sc.optimized);
    if (sc.optimized.run.status != RunStatus::kOk) s << " (" << sc.optimized.run.message << ")";
    const size_t n_rw = sc.optimized.run.rewrites.size();
    s << ", " << Plural(static_cast<int64_t>(n_rw), "rewrite", "rewrites");
    if (n_rw > 0) s << ": " << RewriteNames(sc.optimized.run.rewrites);
    s << "\n";
    if (sc.optimized.kind == FindingKind::kUnquantized) {
      std::string nodes;
      for (const std::string& n : LeftUnquantized(sc.optimized.run)) {
        nodes += (nodes.empty() ? "'" : ", '") + n + "' (" +
                 std::string(NodeFormName(sc.optimized.run.node_forms.at(n))) + ")";
      }
      s << "  left unquantized: " << nodes
        << ": the backend's configuration promises them in int8, they ran in float or "
           "reference form\n";
    }
    for (const OutputCheck& c : sc.outputs) {
      if (c.not_judged.is) {
        // The cause's name here; the whole cause and what to do once, at the end.
        s << "  " << c.output << ": NOT JUDGED, " << c.not_judged.informative << " of "
          << Plural(c.not_judged.elements, "element", "elements") << " informative ("
          << c.not_judged.cause.substr(0, c.not_judged.cause.find(':')) << ")";
      } else {
        std::snprintf(buf, sizeof buf, "  %s: %s, worst element %s reference %.9g target %.9g",
                      c.output.c_str(), std::string(VerdictName(c.verdict)).c_str(),
                      Coordinates(c.worst.index, ShapeOf(sc.reference, c.output)).c_str(),
                      c.worst.reference, c.worst.candidate);
        s << buf;
        if (!c.worst.on_grid) {
          std::snprintf(buf, sizeof buf, " ratio %.3g", c.worst.ratio);
          s << buf;
        }
      }
      if (c.rows > 0) {
        s << ", top-1 " << c.top1_agree << "/" << c.rows << ", top-5 " << c.top5_agree << "/"
          << c.rows;
        std::snprintf(buf, sizeof buf, ", logit error max %.4g mean %.4g%s", c.logit_max_abs,
                      c.logit_mean_abs, c.grid.compared > 0 ? " steps" : "");
        s << buf;
      }
      s << "\n";
      if (c.stats.n > 0) {
        std::snprintf(buf, sizeof buf,
                      "    error over %s, in tolerance units (fails above %.3g): max "
                      "%.3g, mean %.3g, median %.3g, p99 %.3g",
                      Plural(c.stats.n, "element", "elements").c_str(), c.stats.limit, c.stats.max,
                      c.stats.mean, c.stats.median, c.stats.p99);
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
        // "informative" is defined where it is counted: a failing element with a wider E still
        // fails, so "0 informative, 796 fail" read as a contradiction (issue 45, item 15).
        s << "    integer grid: " << Plural(c.grid.compared, "element", "elements") << " ("
          << c.grid.informative << " informative: E <= 1 step; " << c.grid.saturated
          << " saturated)";
        if (c.grid.failed > 0) s << ", " << c.grid.failed << " fail";
        // The worst element's excess is a figure only where something was judged.
        if (!c.not_judged.is) {
          std::snprintf(buf, sizeof buf,
                        "; worst excess %.4g steps (t %.6g, admitted E %.4g steps)", c.grid.excess,
                        c.grid.t, c.grid.e);
          s << buf;
        }
        s << "\n";
      }
    }
    if (sc.layers) s << LayerwiseText(*sc.layers, "  ");
  }
  int64_t rows = 0, top1 = 0, top5 = 0;
  double logit_max = 0;
  bool logit_steps = false;
  for (const SampleCheck& sc : r.samples) {
    for (const OutputCheck& c : sc.outputs) {
      if (c.rows > 0) logit_max = std::max(logit_max, c.logit_max_abs);
      logit_steps |= c.rows > 0 && c.grid.compared > 0;
      rows += c.rows;
      top1 += c.top1_agree;
      top5 += c.top5_agree;
    }
  }
  if (rows > 0) {
    s << "classifier agreement over "
      << Plural(static_cast<int64_t>(r.samples.size()), "sample", "samples") << ": top-1 " << top1
      << "/" << rows << ", top-5 " << top5 << "/" << rows;
    std::snprintf(buf, sizeof buf, ", largest logit error %.4g%s", logit_max,
                  logit_steps ? " steps" : "");
    s << buf;
    // One row agreeing says nothing about a rate (issue 43): it is what was seen, not a pass.
    if (rows == 1) s << " (one row: an observation, not an agreement rate; --samples N for one)";
    s << "\n";
  }
  if (top1 < rows) {
    s << "note: the target's top-1 differs from the reference's on " << rows - top1 << " of "
      << rows << " rows\n";
  }
  if (!r.unsupported.empty()) {
    s << "check: NOT CHECKED: UNSUPPORTED (" << r.unsupported << ")\n";
    return s.str();
  }
  if (r.not_judged) {
    // The samples not judged, the outputs with nothing informative (their counts summed), and
    // each distinct cause with what to do, once.
    int64_t samples = 0;
    std::map<std::string, std::pair<int64_t, int64_t>> outputs;  // informative, elements
    std::vector<const NotJudged*> causes;
    for (const SampleCheck& sc : r.samples) {
      if (VerdictOfSample(sc) != SampleVerdict::kNotJudged) continue;
      ++samples;
      for (const OutputCheck& c : sc.outputs) {
        if (!c.not_judged.is) continue;
        outputs[c.output].first += c.not_judged.informative;
        outputs[c.output].second += c.not_judged.elements;
        const std::string head = c.not_judged.cause.substr(0, c.not_judged.cause.find(':'));
        if (std::none_of(causes.begin(), causes.end(), [&](const NotJudged* n) {
              return n->cause.substr(0, n->cause.find(':')) == head;
            })) {
          causes.push_back(&c.not_judged);
        }
      }
    }
    s << "check: NOT JUDGED: " << samples << " of "
      << Plural(static_cast<int64_t>(r.samples.size()), "sample", "samples")
      << " could not be judged";
    std::string list;
    for (const auto& [name, counts] : outputs) {
      list += (list.empty() ? "" : ", ") + std::string("'") + name + "' " +
              std::to_string(counts.first) + " of " + Plural(counts.second, "element", "elements") +
              " informative";
    }
    if (!list.empty()) s << " (" << list << ")";
    std::snprintf(buf, sizeof buf, "; nothing failed, nothing passed (%.1f s)\n", r.seconds);
    s << buf;
    for (const NotJudged* n : causes) {
      s << "  cause: " << n->cause << "\n  what to do: " << n->advice << "\n";
    }
    if (causes.empty()) {
      s << "  cause: a run's outputs could not be judged (the oracle answered MISTRUSTED)\n";
    }
    return s.str();
  }
  if (!r.finding && r.layer_finding) {
    for (const SampleCheck& sc : r.samples) {
      if (!sc.layers || sc.layers->first_departing < 0) continue;
      const LayerCheck& l = sc.layers->layers[static_cast<size_t>(sc.layers->first_departing)];
      std::snprintf(buf, sizeof buf,
                    "check: FINDING: layer '%s' (%s '%s') departs on sample seed %llu, judged "
                    "teacher-forced: %lld of %lld elements fail, worst excess %.4g (%.1f s)\n",
                    l.value.c_str(), l.op.c_str(), l.node.c_str(),
                    static_cast<unsigned long long>(sc.seed), static_cast<long long>(l.failed),
                    static_cast<long long>(l.elements), l.worst_excess, r.seconds);
      s << buf;
      break;
    }
    return s.str();
  }
  if (!r.finding) {
    // Said where the outputs alone could not tell and the layer table judged the sample.
    const bool by_layers =
        std::any_of(r.samples.begin(), r.samples.end(), [](const SampleCheck& sc) {
          const bool outputs_untold =
              sc.optimized.verdict == Verdict::kMistrusted ||
              std::any_of(sc.outputs.begin(), sc.outputs.end(),
                          [](const OutputCheck& c) { return c.not_judged.is; });
          return outputs_untold && JudgedByLayers(sc);
        });
    std::snprintf(buf, sizeof buf, "check: PASS%s (%.1f s)\n",
                  by_layers ? " (judged layer by layer, teacher-forced)" : "", r.seconds);
    s << buf;
    return s.str();
  }
  s << "check: " << r.kind << " finding";
  if (!r.blamed_rule.empty()) s << ", blamed on '" << r.blamed_rule << "'";
  s << "; culprit " << r.nodes_after << " of " << r.nodes_before << " nodes";
  std::snprintf(buf, sizeof buf, " (%.1f s)\n", r.seconds);
  s << buf;
  if (!r.cut_layer.empty()) {
    std::snprintf(buf, sizeof buf,
                  "  minimized from the block around the first departing layer '%s' (%lld of "
                  "%lld nodes, its inputs the engine's integers there; widened %d) in %.1f s\n",
                  r.cut_layer.c_str(), static_cast<long long>(r.cut_nodes),
                  static_cast<long long>(r.nodes_before), r.cut_widen, r.minimize_seconds);
    s << buf;
  } else if (!r.cut_note.empty()) {
    s << "  minimized from the whole model (" << r.cut_note << ")\n";
  }
  if (!r.signature.empty()) {
    s << "finding: " << out_dir << "/findings/" << r.signature << "/\n";
  }
  return s.str();
}

}  // namespace fusefuzz
