// Spellings as a generator dimension (issue 51, docs/generator.md "Spellings"): after the whole
// graph is drawn, each node that can take one of the target's spellings gets one with
// cfg.spelling_rate (a spelling of its own op 4 times as likely as one of any op). Drawn last, from
// the same source: the graph is the one the same seed gives without spellings, and a config without
// spellings (the embedded target) draws nothing more.
#include "generators/gen_spellings.h"

#include <vector>

#include "ir/spelling.h"
#include "ir/verifier.h"

namespace fusefuzz::gen {

void DrawSpellings(ChoiceSource& source, const GenConfig& cfg, Graph& g) {
  if (cfg.spellings.empty() || cfg.spelling_rate <= 0) return;
  std::vector<Spelling> offered;  // registry order: deterministic whatever the set's order
  for (const SpellingInfo& i : AllSpellings()) {
    if (cfg.spellings.count(std::string(i.name))) offered.push_back(i.spelling);
  }
  const ShapeMap shapes = VerifyGraph(g);
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    std::vector<Spelling> fit;
    std::vector<double> weights;
    for (Spelling s : offered) {
      if (!SpellingProblem(s, g, shapes, i).empty()) continue;
      fit.push_back(s);
      // A spelling of any op ("*": a no-op node after it) fits every node; one of this op's
      // own fits few, so it weighs more, or the few would hardly ever be drawn.
      weights.push_back(InfoOf(s).ops == "*" ? 1.0 : 4.0);
    }
    if (fit.empty() || !source.Bool(cfg.spelling_rate)) continue;
    const Spelling s = fit[source.Pick(weights)];
    g.nodes[i].spelling = std::string(InfoOf(s).name);
  }
}

}  // namespace fusefuzz::gen
