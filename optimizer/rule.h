// The rule interface of the embedded optimizer (model: ONNX Runtime RewriteRule, MLIR
// RewritePattern). A rule (a TypedRule<Data>) is a pure, cheap `Match` at one anchor node that
// returns either a typed match, whose Data type the compiler checks against Apply's, or the
// reason it does not apply, and an `Apply` that ALWAYS changes the graph: anything
// that could make the rewrite impossible (shapes, single consumers, finiteness of folded values)
// is decided in Match, which may also precompute what Apply installs (folded weights). Every
// mutation in Apply goes through the Rewriter, which tells a listener.
//
// Faults (optimizer/faults/) are Rules too: deliberately wrong variants, registered separately
// (see optimizer/registry.h) and only run when injected.
#pragma once

#include <bitset>
#include <initializer_list>
#include <memory>
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
class Rule;

// A rule's match data behind a type-erased handle, as the driver carries it from Match to Apply.
// Only the TypedRule that made it can open it (it calls that rule's typed Apply), so no cast, and
// no std::any, stands between a rule's Match and its Apply.
class MatchPayload {
 public:
  virtual ~MatchPayload() = default;
  // The rule whose Match made this payload; only that rule may apply it.
  virtual const Rule& maker() const = 0;
  // Runs the maker's typed Apply on `nodes` and this payload's data (moved out: call once).
  virtual void ApplyTo(std::vector<int> nodes, Rewriter& rewriter) = 0;
};

// A successful match as the driver sees it. `nodes` are indices into Graph::nodes in the rule's
// pattern order (the producer first, e.g. {conv, bn}); their names are what the rewrite log and
// the blame report show. `payload` holds the rule's typed data for Apply.
struct RuleMatch {
  std::vector<int> nodes;
  std::unique_ptr<MatchPayload> payload;
};

// The reason a rule does not apply at an anchor ("conv output has 2 consumers"). Reasons are for
// humans (tests, `explain` output); they are not parsed. Converts to every match result type.
struct NoMatchReason {
  std::string reason;
};
inline NoMatchReason NoMatch(std::string reason) { return NoMatchReason{std::move(reason)}; }

// Either a RuleMatch or the reason the rule does not apply (the driver's, type-erased form).
class MatchResult {
 public:
  MatchResult(RuleMatch m) : match_(std::move(m)) {}              // NOLINT: implicit by design
  MatchResult(NoMatchReason r) : reason_(std::move(r.reason)) {}  // NOLINT: implicit by design
  bool ok() const { return match_.has_value(); }
  explicit operator bool() const { return ok(); }
  const RuleMatch& match() const { return *match_; }
  RuleMatch& match() { return *match_; }
  RuleMatch take() { return std::move(*match_); }
  const std::string& reason() const { return reason_; }

 private:
  std::optional<RuleMatch> match_;
  std::string reason_;
};

// The data of a rule whose Apply needs only the matched nodes.
struct NoData {};

// A successful match with the rule's own data type: what a TypedRule<Data>'s Match returns and
// its Apply receives.
template <typename Data>
struct Matched {
  std::vector<int> nodes;
  Data data;
};

// MakeMatch({conv, bn}, FoldData{...}) for a TypedRule<FoldData>; MakeMatch({p, anchor}) for a
// TypedRule<NoData>. A Matched<T> converts only to MatchResultOf<T>: returning another type's
// data from Match does not compile.
template <typename Data = NoData>
Matched<Data> MakeMatch(std::vector<int> nodes, Data data = {}) {
  return Matched<Data>{std::move(nodes), std::move(data)};
}

// Either a Matched<Data> or the reason the rule does not apply.
template <typename Data>
class MatchResultOf {
 public:
  MatchResultOf(Matched<Data> m) : match_(std::move(m)) {}          // NOLINT: implicit
  MatchResultOf(NoMatchReason r) : reason_(std::move(r.reason)) {}  // NOLINT: implicit
  bool ok() const { return match_.has_value(); }
  explicit operator bool() const { return ok(); }
  const Matched<Data>& match() const { return *match_; }
  Matched<Data> take() { return std::move(*match_); }
  const std::string& reason() const { return reason_; }

 private:
  std::optional<Matched<Data>> match_;
  std::string reason_;
};

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

[[noreturn]] void MatchFromAnotherRule(const Rule& applier);  // aborts, naming the rule

// The interface the driver, the pipeline and the registry see. Rules do not implement it
// directly: every rule is a TypedRule<Data> (the constructor is private to it), which implements
// the type-erased entry points once.
class Rule {
 public:
  virtual ~Rule() = default;
  // Kebab-case, unique across rules and faults ("conv-bn-fold").
  virtual std::string_view name() const = 0;
  // One line: pattern => result, and the legality conditions.
  virtual std::string_view summary() const = 0;
  // The ops the pattern's root node can have (see RootOps).
  virtual RootOps roots() const = 0;
  // The driver's entry points: TypedRule::Match and TypedRule::Apply behind the erased match.
  virtual MatchResult MatchErased(const MatchContext& ctx, int anchor) const = 0;
  virtual void ApplyErased(RuleMatch match, Rewriter& rewriter) const = 0;

 private:
  Rule() = default;
  template <typename Data>
  friend class TypedRule;
};

// A rule whose match data is `Data` (NoData when Apply needs only the nodes): Match computes it,
// Apply receives it, and the compiler checks that they agree.
template <typename Data>
class TypedRule : public Rule {
 public:
  using Result = MatchResultOf<Data>;
  using Found = Matched<Data>;

  // Pure: decides whether the rule applies with `anchor` as its root node (by convention the
  // LAST node of the pattern, whose output the rest of the graph sees). Only called for anchors
  // whose op is in roots(); the graph is verified.
  virtual Result Match(const MatchContext& ctx, int anchor) const = 0;
  // Performs the rewrite of a match that Match just returned on the same graph. Must change the
  // graph (at least one Rewriter mutation) and leave it valid; must not fail. Takes the match by
  // value, so it may move the data (folded tensors) into the graph.
  virtual void Apply(Found match, Rewriter& rewriter) const = 0;

  MatchResult MatchErased(const MatchContext& ctx, int anchor) const final {
    Result r = Match(ctx, anchor);
    if (!r.ok()) return NoMatch(r.reason());
    Found m = r.take();
    return RuleMatch{std::move(m.nodes), std::make_unique<Payload>(*this, std::move(m.data))};
  }
  void ApplyErased(RuleMatch match, Rewriter& rewriter) const final {
    if (!match.payload || &match.payload->maker() != this) MatchFromAnotherRule(*this);
    match.payload->ApplyTo(std::move(match.nodes), rewriter);
  }

 private:
  class Payload final : public MatchPayload {
   public:
    Payload(const TypedRule& rule, Data data) : rule_(rule), data_(std::move(data)) {}
    const Rule& maker() const override { return rule_; }
    void ApplyTo(std::vector<int> nodes, Rewriter& rewriter) override {
      rule_.Apply(Found{std::move(nodes), std::move(data_)}, rewriter);
    }

   private:
    const TypedRule& rule_;
    Data data_;
  };
};

}  // namespace fusefuzz
