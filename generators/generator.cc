#include "generators/generator.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <set>

#include "generators/gen_builder.h"
#include "generators/gen_patterns.h"
#include "generators/gen_quant.h"
#include "generators/gen_spellings.h"

namespace fusefuzz {
namespace {

// One emitted pattern instance, remembered so that "repeat" can stamp out an identical copy.
struct Instance {
  std::string input, output;
  size_t first_node = 0, end_node = 0;
};

// Copies the instance's nodes onto `x` (same ops, attrs and params; fresh names). Values from
// outside the instance (extra graph inputs, skip operands) are shared with the original.
std::string RepeatInstance(gen::Builder& b, const Instance& inst, const std::string& x) {
  std::map<std::string, std::string> rename = {{inst.input, x}};
  std::string out = x;
  for (size_t i = inst.first_node; i < inst.end_node; ++i) {
    Node n = b.graph().nodes[i];  // copy: AddNode may reallocate the vector
    std::vector<std::string> ins;
    for (const auto& in : n.inputs) {
      auto it = rename.find(in);
      ins.push_back(it == rename.end() ? in : it->second);
    }
    std::string v = b.AddNode(n.op, std::move(ins), n.attrs, n.params, n.epilogue);
    rename[n.output] = v;
    if (n.output == inst.output) out = v;
  }
  return out;
}

Shape PickInputShape(ChoiceSource& src, const GenLimits& l, const GenProbabilities& p) {
  int64_t n = src.Bool(p.batch_one) ? 1 : src.Int(std::min<int64_t>(2, l.max_batch), l.max_batch);
  const double kCw[] = {1, 2, 3, 2, 1};  // 1, 2..3, 4, 5..8, 9..max
  int64_t c;
  switch (src.Pick(kCw)) {
    case 0:
      c = 1;
      break;
    case 1:
      c = src.Int(2, 3);
      break;
    case 2:
      c = 4;
      break;
    case 3:
      c = src.Int(5, 8);
      break;
    default:
      c = src.Int(9, std::max<int64_t>(9, l.max_channels));
  }
  c = std::min(c, l.max_channels);
  int64_t h = src.Bool(p.tiny_spatial)
                  ? src.Int(1, 2)
                  : src.Int(std::min<int64_t>(3, l.max_spatial), l.max_spatial);
  int64_t w = src.Bool(p.square_input) ? h : src.Int(1, l.max_spatial);
  return {n, c, h, w};
}

}  // namespace

GeneratedCase Generate(ChoiceSource& source, const GenConfig& cfg) {
  ValidateConfig(cfg);
  if (cfg.quant.enabled) {
    GeneratedCase q = gen::GenerateQuantized(source, cfg);
    gen::DrawSpellings(source, cfg, q.graph);
    return q;
  }
  gen::Builder b(source, cfg);
  const GenLimits& lim = cfg.limits;
  std::string current = b.AddInput(PickInputShape(source, lim, cfg.probabilities));
  const int64_t target = source.Int(lim.min_nodes, lim.max_nodes);

  std::vector<Pattern> patterns;
  std::vector<bool> eligible;
  for (Pattern p : AllPatterns()) {
    patterns.push_back(p);
    eligible.push_back(p == Pattern::kRepeat || gen::PatternEligible(b, p));
  }
  std::optional<Instance> last;
  while (b.node_count() < target) {
    const int64_t budget = target - b.node_count();
    // The input of this step: usually the newest value (a chain), sometimes an older one, which
    // gives that value a second consumer.
    std::string x = current;
    if (source.Bool(cfg.probabilities.reuse_value)) {
      const auto& vals = b.values();
      x = vals[static_cast<size_t>(source.Int(0, int64_t(vals.size()) - 1))];
    } else if (last && last->end_node - last->first_node >= 2 &&
               source.Bool(cfg.probabilities.reuse_intermediate)) {
      // An inner value of the previous instance (conv output, activation, add...) gets a second
      // consumer: the fan-out variant of every pair inside every pattern.
      const int64_t inner = int64_t(last->end_node - last->first_node) - 1;
      const size_t k = last->first_node + static_cast<size_t>(source.Int(0, inner - 1));
      x = b.graph().nodes[k].output;
    }
    std::vector<double> w;
    for (size_t i = 0; i < patterns.size(); ++i) {
      Pattern p = patterns[i];
      double wt = eligible[i] ? cfg.pattern_weights.at(p) : 0.0;
      if (p == Pattern::kRepeat) {
        bool ok = last && int64_t(last->end_node - last->first_node) <= budget &&
                  b.ShapeOf(last->output) == b.ShapeOf(last->input);
        if (!ok) wt = 0;
      } else if (p != Pattern::kSingle && PatternMinBudget(p) > budget) {
        wt = 0;
      }
      w.push_back(wt);
    }
    bool any = false;
    for (double v : w) any |= v > 0;
    if (!any) w[static_cast<size_t>(Pattern::kSingle)] = 1;  // single always fits
    Pattern p = patterns[source.Pick(w)];
    Instance inst;
    inst.first_node = static_cast<size_t>(b.node_count());
    if (p == Pattern::kRepeat) {
      inst.input = last->output;
      inst.output = RepeatInstance(b, *last, last->output);
    } else {
      inst.input = x;
      inst.output = gen::EmitPattern(b, p, x, budget);
    }
    inst.end_node = static_cast<size_t>(b.node_count());
    current = inst.output;
    last = inst;
  }

  // Outputs: the newest value, then values nobody consumes (so that branches are observable),
  // then sometimes an intermediate that also has consumers (the "used as a graph output" case).
  Graph& g = b.graph();
  std::vector<std::string> outs = {current};
  auto add_out = [&](const std::string& v) {
    if (int64_t(outs.size()) < lim.max_outputs &&
        std::find(outs.begin(), outs.end(), v) == outs.end()) {
      outs.push_back(v);
    }
  };
  for (const auto& n : g.nodes) {
    if (g.Consumers(n.output).empty()) add_out(n.output);
  }
  if (source.Bool(cfg.probabilities.intermediate_output) && g.nodes.size() > 1) {
    add_out(g.nodes[static_cast<size_t>(source.Int(0, int64_t(g.nodes.size()) - 2))].output);
  }
  // The head is drawn last, so that a graph without one is exactly the graph of a generator
  // without heads (same seed, same body). It replaces the newest value as the first output.
  // Within max_nodes: a head needs at least 2 nodes (flatten and matrix op).
  const int64_t head_budget = lim.max_nodes - b.node_count();
  if (b.HeadAllowed() && head_budget >= 2 && source.Bool(cfg.probabilities.classifier_head)) {
    outs[0] = b.EmitHead(Op::Identity, current, head_budget);
  }
  g.outputs = outs;
  gen::DrawSpellings(source, cfg, g);
  GeneratedCase c;
  c.graph = std::move(g);
  c.inputs = std::move(b.inputs());
  return c;
}

TensorMap GenerateInputs(const Graph& g, ChoiceSource& source, const GenConfig& cfg) {
  gen::Builder b(source, cfg);
  TensorMap out;
  for (const auto& in : g.inputs) out[in.name] = b.InputTensor(in.shape, gen::InputKind::kGeneral);
  return out;
}

GeneratedCase GenerateFromSeed(uint64_t seed, const GenConfig& cfg) {
  SeededSource src(seed);
  return Generate(src, cfg);
}

nlohmann::json GenerationProvenance(uint64_t seed, const GenConfig& cfg) {
  nlohmann::json j;
  j["generator"] = "fusefuzz-gen";
  j["version"] = FUSEFUZZ_VERSION;
  j["seed"] = seed;
  j["config"] = ConfigToJson(cfg);
  return j;
}

}  // namespace fusefuzz
