// The one door through which rules mutate a graph (model: MLIR PatternRewriter). Every mutation
// is reported to a listener, so the driver can count, log and check rewrites.
//
// Index stability: during one Apply, node indices keep meaning what they meant when Match ran.
// In-place mutations (ReplaceNode, SetInput, SetOutput, SetParam, SetAttr, ReplaceAllUsesWith)
// take effect at once; InsertNodeBefore and EraseNode are recorded and performed by Commit(),
// which the driver calls after Apply. Rules never call Commit.
//
// Conventions that keep graphs valid and graph-output names stable:
// - a fused/replacement node goes at the position of the LAST node of the pattern (all operands
//   of the pattern are defined before it, all uses of its result come after it), and produces
//   that node's output value name;
// - intermediate values of a pattern must have no other consumer and not be graph outputs
//   (checked in Match), so erasing their producers leaves nothing dangling.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ir/graph.h"

namespace fusefuzz {

enum class MutationKind {
  kReplaceNode,
  kInsertNode,
  kEraseNode,
  kSetInput,
  kSetOutput,
  kSetParam,
  kEraseParam,
  kSetAttr,
  kReplaceAllUses,
};
std::string_view MutationKindName(MutationKind k);

struct Mutation {
  MutationKind kind;
  // Name of the node concerned, as it was before the mutation (kReplaceAllUses: the old value).
  std::string node;
  std::string detail;  // human-readable: param name, "x -> y", ...
};

class RewriteListener {
 public:
  virtual ~RewriteListener() = default;
  virtual void OnMutation(const Mutation& m) = 0;
};

class Rewriter {
 public:
  // `rule` names the rule in error messages. `listener` may be null.
  Rewriter(Graph& graph, std::string rule, RewriteListener* listener = nullptr);

  // The graph with in-place mutations applied, pending inserts/erases not yet.
  const Graph& graph() const { return graph_; }
  const Node& node(int index) const;

  // Replaces node `index` by `n` (same position).
  void ReplaceNode(int index, Node n);
  // Inserts `n` before the node that had index `index` when Apply started (num nodes = append).
  void InsertNodeBefore(int index, Node n);
  // Removes node `index` at Commit. Its output must have no remaining uses by then.
  void EraseNode(int index);
  void SetInput(int index, int input, std::string value);
  void SetOutput(int index, std::string value);
  void SetParam(int index, const std::string& name, Tensor value);
  void EraseParam(int index, const std::string& name);
  void SetAttr(int index, const std::string& name, AttrValue value);
  // Every node input reading `from` reads `to` instead. Graph outputs are NOT renamed (their
  // names are part of the graph's interface); rules keep them by the conventions above.
  void ReplaceAllUsesWith(const std::string& from, const std::string& to);

  // Names not used by any node / value of the graph nor handed out before by this rewriter:
  // `base`, else `base_1`, `base_2`, ...
  std::string FreshNodeName(const std::string& base);
  std::string FreshValueName(const std::string& base);

  int64_t mutations() const { return mutations_; }

  // Performs pending erases and inserts. Returns an empty string, or what is wrong (an erased
  // node's output still used, an index out of range): a rule bug, reported by the driver.
  std::string Commit();

 private:
  void Notify(MutationKind kind, std::string node, std::string detail);
  Node& MutableNode(int index);

  Graph& graph_;
  std::string rule_;
  RewriteListener* listener_;
  int64_t mutations_ = 0;
  std::vector<std::pair<int, Node>> inserts_;  // (original index, node), in call order
  std::set<int> erases_;
  std::set<std::string> issued_;
};

}  // namespace fusefuzz
