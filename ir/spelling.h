// The spellings registry (ir/spellings.def): how a node is written to an engine, not what it
// computes (docs/graph-format.md, "Spellings"; issue 51).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ir/graph.h"
#include "ir/verifier.h"

namespace fusefuzz {

enum class Spelling {
#define FF_SPELLING(e, name, ops, family, doc) k##e,
#include "ir/spellings.def"
#undef FF_SPELLING
};

// Who writes a spelling: the PyTorch adapter or fusefuzz's ONNX export.
enum class SpellingFamily { kTorch, kOnnx };

struct SpellingInfo {
  Spelling spelling;
  std::string_view name;
  std::string_view ops;  // '|'-separated op names, or "*" (any float op)
  SpellingFamily family;
  std::string_view doc;
};

const std::vector<SpellingInfo>& AllSpellings();
const SpellingInfo& InfoOf(Spelling s);
std::optional<Spelling> SpellingFromName(std::string_view name);
std::string_view SpellingFamilyName(SpellingFamily f);  // "torch" / "onnx"

// Empty when node `index` of `g` (shapes: VerifyGraph's) can take `s`; else why not (its op, or
// the conditions of ir/spelling.cc: a spelling writes exactly the node's math or not at all).
std::string SpellingProblem(Spelling s, const Graph& g, const ShapeMap& shapes, size_t index);

// Throws InputError naming node, spelling and op when a node's spelling is unknown or does not
// apply (called by VerifyGraph once every shape is known).
void VerifySpellings(const Graph& g, const ShapeMap& shapes);

// Clears every spelling that no longer applies (after a reduction changed the node).
void DropInapplicableSpellings(Graph& g);

}  // namespace fusefuzz
