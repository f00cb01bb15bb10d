#include "optimizer/rewriter.h"

#include <cstdlib>
#include <iostream>
#include <iterator>

#include "ir/quant.h"

namespace fusefuzz {

namespace {

// A float op's quant entries only declare that a param lies on a grid (ir/quant.h). A fold that
// moves the param off it (conv-bn-fold into a QDQ conv's weight) leaves a false claim, which the
// verifier refuses; the claim is dropped instead, the values (the semantics) stay.
void DropFalseGridDeclarations(Node& n) {
  if (n.op != Op::Conv && n.op != Op::FusedConv && n.op != Op::Gemm) return;
  for (auto it = n.quant.begin(); it != n.quant.end();) {
    auto p = n.params.find(it->first);
    bool holds = p != n.params.end();
    const QuantParams& q = it->second;
    if (holds && q.PerAxis() &&
        (p->second.shape.empty() || p->second.shape[0] != int64_t(q.scale.size()))) {
      holds = false;
    }
    const int64_t per = holds && q.PerAxis() ? p->second.size() / p->second.shape[0] : 1;
    for (int64_t i = 0; holds && i < p->second.size(); ++i) {
      const int64_t c = q.PerAxis() ? i / per : 0;
      holds = OnGrid(p->second.data[size_t(i)], q.Scale(c), q.ZeroPoint(c), q.type);
    }
    it = holds ? std::next(it) : n.quant.erase(it);
  }
}

}  // namespace

std::string_view MutationKindName(MutationKind k) {
  switch (k) {
    case MutationKind::kReplaceNode:
      return "replace-node";
    case MutationKind::kInsertNode:
      return "insert-node";
    case MutationKind::kEraseNode:
      return "erase-node";
    case MutationKind::kSetInput:
      return "set-input";
    case MutationKind::kSetOutput:
      return "set-output";
    case MutationKind::kSetParam:
      return "set-param";
    case MutationKind::kEraseParam:
      return "erase-param";
    case MutationKind::kSetAttr:
      return "set-attr";
    case MutationKind::kReplaceAllUses:
      return "replace-all-uses";
  }
  return "?";
}

Rewriter::Rewriter(Graph& graph, std::string rule, RewriteListener* listener)
    : graph_(graph), rule_(std::move(rule)), listener_(listener) {}

Node& Rewriter::MutableNode(int index) {
  if (index < 0 || static_cast<size_t>(index) >= graph_.nodes.size()) {
    // A rule bug, not bad input: the index came from the rule's own match.
    std::cerr << "fusefuzz: rule '" << rule_ << "' used node index " << index << " of "
              << graph_.nodes.size() << "\n";
    std::abort();
  }
  return graph_.nodes[static_cast<size_t>(index)];
}

const Node& Rewriter::node(int index) const {
  return const_cast<Rewriter*>(this)->MutableNode(index);
}

void Rewriter::Notify(MutationKind kind, std::string node, std::string detail) {
  ++mutations_;
  if (listener_) listener_->OnMutation(Mutation{kind, std::move(node), std::move(detail)});
}

void Rewriter::ReplaceNode(int index, Node n) {
  Node& slot = MutableNode(index);
  std::string old = slot.name;
  std::string detail = old + " -> " + n.name + " (" + std::string(OpName(n.op)) + ")";
  slot = std::move(n);
  Notify(MutationKind::kReplaceNode, std::move(old), std::move(detail));
}

void Rewriter::InsertNodeBefore(int index, Node n) {
  if (index < 0 || static_cast<size_t>(index) > graph_.nodes.size()) MutableNode(index);
  std::string name = n.name;
  inserts_.emplace_back(index, std::move(n));
  Notify(MutationKind::kInsertNode, std::move(name), "before index " + std::to_string(index));
}

void Rewriter::EraseNode(int index) {
  erases_.insert(index);
  Notify(MutationKind::kEraseNode, MutableNode(index).name, "");
}

void Rewriter::SetInput(int index, int input, std::string value) {
  Node& n = MutableNode(index);
  if (input < 0 || static_cast<size_t>(input) >= n.inputs.size()) {
    std::cerr << "fusefuzz: rule '" << rule_ << "' set input " << input << " of node '" << n.name
              << "' which has " << n.inputs.size() << "\n";
    std::abort();
  }
  std::string detail =
      "input " + std::to_string(input) + ": " + n.inputs[size_t(input)] + " -> " + value;
  n.inputs[static_cast<size_t>(input)] = std::move(value);
  Notify(MutationKind::kSetInput, n.name, std::move(detail));
}

void Rewriter::SetOutput(int index, std::string value) {
  Node& n = MutableNode(index);
  std::string detail = n.output + " -> " + value;
  n.output = std::move(value);
  Notify(MutationKind::kSetOutput, n.name, std::move(detail));
}

void Rewriter::SetParam(int index, const std::string& name, Tensor value) {
  Node& n = MutableNode(index);
  n.params[name] = std::move(value);
  Notify(MutationKind::kSetParam, n.name, name);
}

void Rewriter::EraseParam(int index, const std::string& name) {
  Node& n = MutableNode(index);
  n.params.erase(name);
  Notify(MutationKind::kEraseParam, n.name, name);
}

void Rewriter::SetAttr(int index, const std::string& name, AttrValue value) {
  Node& n = MutableNode(index);
  n.attrs[name] = std::move(value);
  Notify(MutationKind::kSetAttr, n.name, name);
}

void Rewriter::ReplaceAllUsesWith(const std::string& from, const std::string& to) {
  for (auto& n : graph_.nodes) {
    for (auto& in : n.inputs) {
      if (in == from) in = to;
    }
  }
  Notify(MutationKind::kReplaceAllUses, from, from + " -> " + to);
}

namespace {
bool NodeNameUsed(const Graph& g, const std::string& s) { return g.NodeIndex(s) >= 0; }
bool ValueNameUsed(const Graph& g, const std::string& s) {
  return g.IsGraphInput(s) || g.ProducerIndex(s) >= 0 || g.IsGraphOutput(s);
}
}  // namespace

std::string Rewriter::FreshNodeName(const std::string& base) {
  for (int i = 0;; ++i) {
    std::string s = i == 0 ? base : base + "_" + std::to_string(i);
    if (!issued_.count(s) && !NodeNameUsed(graph_, s) && !ValueNameUsed(graph_, s)) {
      issued_.insert(s);
      return s;
    }
  }
}

std::string Rewriter::FreshValueName(const std::string& base) { return FreshNodeName(base); }

std::string Rewriter::Commit() {
  const size_t n = graph_.nodes.size();
  // Values still defined, and uses, after the commit (survivors and inserted nodes). An erased
  // node's output may live on when the rule moved it to another node (SetOutput).
  std::set<std::string> defined;
  std::vector<const Node*> survivors;
  for (size_t i = 0; i < n; ++i) {
    if (!erases_.count(static_cast<int>(i))) survivors.push_back(&graph_.nodes[i]);
  }
  for (const auto& ins : inserts_) survivors.push_back(&ins.second);
  for (const Node* s : survivors) defined.insert(s->output);
  for (int e : erases_) {
    const Node& gone = graph_.nodes[static_cast<size_t>(e)];
    if (defined.count(gone.output)) continue;
    if (graph_.IsGraphOutput(gone.output)) {
      return "erased node '" + gone.name + "' produces graph output '" + gone.output + "'";
    }
    for (const Node* s : survivors) {
      for (const auto& in : s->inputs) {
        if (in == gone.output) {
          return "erased node '" + gone.name + "' output '" + gone.output +
                 "' is still used by node '" + s->name + "'";
        }
      }
    }
  }
  std::vector<Node> nodes;
  nodes.reserve(n + inserts_.size());
  for (size_t i = 0; i <= n; ++i) {
    for (auto& [at, node] : inserts_) {
      if (static_cast<size_t>(at) == i) nodes.push_back(std::move(node));
    }
    if (i < n && !erases_.count(static_cast<int>(i))) nodes.push_back(std::move(graph_.nodes[i]));
  }
  for (Node& node : nodes) {
    if (!node.quant.empty()) DropFalseGridDeclarations(node);
  }
  graph_.nodes = std::move(nodes);
  inserts_.clear();
  erases_.clear();
  return "";
}

}  // namespace fusefuzz
