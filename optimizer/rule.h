// The rule interface of the embedded optimizer (model: ONNX Runtime RewriteRule, MLIR
// RewritePattern). A rule is a pure, cheap `Match` at one anchor node that returns either a typed
// match or the reason it does not apply, and an `Apply` that ALWAYS changes the graph: anything
// that could make the rewrite impossible (shapes, single consumers, finiteness of folded values)
// is decided in Match, which may also precompute what Apply installs (folded weights). Every
// mutation in Apply goes through the Rewriter, which tells a listener.
//
// Faults (optimizer/faults/) are Rules too: deliberately wrong variants, registered separately
// (see optimizer/registry.h) and only run when injected.
#pragma once

#include <any>
#include <bitset>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ir/graph.h"
#include "ir/ops.h"
#include "ir/verifier.h"

namespace fusefuzz {

class Rewriter;

// A successful match. `nodes` are indices into Graph::nodes in the rule's pattern order (the
// producer first, e.g. {conv, bn}); their names are what the rewrite log and the blame report
// show. `data` holds whatever the rule computed for Apply (a struct of its own choosing).
struct RuleMatch {
  std::vector<int> nodes;
  std::any data;
};

// Either a RuleMatch or the reason the rule does not apply at this anchor ("conv output has 2
// consumers"). Reasons are for humans (tests, `explain` output); they are not parsed.
class MatchResult {
 public:
  MatchResult(RuleMatch m) : match_(std::move(m)) {}  // NOLINT: implicit by design
  static MatchResult NoMatch(std::string reason) {
    MatchResult r;
    r.reason_ = std::move(reason);
    return r;
  }
  bool ok() const { return match_.has_value(); }
  explicit operator bool() const { return ok(); }
  const RuleMatch& match() const { return *match_; }
  RuleMatch& match() { return *match_; }
  RuleMatch take() { return std::move(*match_); }
  const std::string& reason() const { return reason_; }

 private:
  MatchResult() = default;
  std::optional<RuleMatch> match_;
  std::string reason_;
};

inline MatchResult NoMatch(std::string reason) { return MatchResult::NoMatch(std::move(reason)); }

// Convenience for typed match data: MakeMatch({conv, bn}, FoldData{...}) and, in Apply,
// MatchData<FoldData>(m).
template <typename T>
RuleMatch MakeMatch(std::vector<int> nodes, T data) {
  return RuleMatch{std::move(nodes), std::any(std::move(data))};
}
template <typename T>
T& MatchData(RuleMatch& m) {
  return std::any_cast<T&>(m.data);
}

// The ops a rule's pattern can be rooted at. The driver only calls Match at nodes of these ops,
// so a Match never needs an "anchor is not a ..." check of its own.
class RootOps {
 public:
  static RootOps Of(std::initializer_list<Op> ops) {
    RootOps r;
    for (Op op : ops) r.bits_.set(static_cast<size_t>(op));
    return r;
  }
  static RootOps Family(OpFamily family) {
    RootOps r;
    for (Op op : AllOps())
      if (FamilyOf(op) == family) r.bits_.set(static_cast<size_t>(op));
    return r;
  }
  static RootOps Any() {
    RootOps r;
    r.bits_.set();
    return r;
  }
  bool Has(Op op) const { return bits_.test(static_cast<size_t>(op)); }

 private:
  static constexpr size_t kMaxOps = 64;
  std::bitset<kMaxOps> bits_;
};

// What Match sees: the (verified) graph and facts about it computed at most once per graph
// state. The driver makes a new context after each applied rewrite, so cached facts never go
// stale; Match is pure, so they cannot go stale within a sweep either.
class MatchContext {
 public:
  explicit MatchContext(const Graph& g) : g_(g) {}
  const Graph& graph() const { return g_; }
  // Shape of every value (VerifyGraph), computed on first use.
  const ShapeMap& shapes() const {
    if (!shapes_) shapes_ = VerifyGraph(g_);
    return *shapes_;
  }

 private:
  const Graph& g_;
  mutable std::optional<ShapeMap> shapes_;
};

class Rule {
 public:
  virtual ~Rule() = default;
  // Kebab-case, unique across rules and faults ("conv-bn-fold").
  virtual std::string_view name() const = 0;
  // One line: pattern => result, and the legality conditions.
  virtual std::string_view summary() const = 0;
  // The ops the pattern's root node can have (see RootOps).
  virtual RootOps roots() const = 0;
  // Pure: decides whether the rule applies with `anchor` as its root node (by convention the
  // LAST node of the pattern, whose output the rest of the graph sees). Only called for anchors
  // whose op is in roots(); the graph is verified.
  virtual MatchResult Match(const MatchContext& ctx, int anchor) const = 0;
  // Performs the rewrite of a match that Match just returned on the same graph. Must change the
  // graph (at least one Rewriter mutation) and leave it valid; must not fail.
  virtual void Apply(RuleMatch match, Rewriter& rewriter) const = 0;
};

}  // namespace fusefuzz
