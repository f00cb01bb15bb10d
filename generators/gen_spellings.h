// Spellings drawn for a generated graph (generators/gen_spellings.cc).
#pragma once

#include "generators/choice_source.h"
#include "generators/gen_config.h"
#include "ir/graph.h"

namespace fusefuzz::gen {

// Gives nodes of `g` spellings from cfg.spellings (each applicable, at cfg.spelling_rate).
void DrawSpellings(ChoiceSource& source, const GenConfig& cfg, Graph& g);

}  // namespace fusefuzz::gen
