// Signatures name finding folders: whatever a target calls its rules, and whatever a graph
// file calls its nodes, a signature is one safe path component.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "harness/repro.h"

namespace fusefuzz {
namespace {

bool SafeComponent(const std::string& s) {
  return !s.empty() && s[0] != '.' && s.size() <= 89 &&
         s.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") ==
             std::string::npos;
}

// Issue 11 §2.1/§2.3: `<finding>/../../../ESCAPED` as a rule name made fusefuzz write outside
// --out; `/`, spaces and newlines in rule names lost findings.
TEST(Signature, HostileRuleAndNodeNamesGiveSafeDistinctFolderNames) {
  std::set<std::string> seen;
  for (const std::string& rule :
       {std::string("<finding>/../../../ESCAPED"), std::string("evil/../x"), std::string("a b"),
        std::string("a\nb"), std::string(".."), std::string("/"), std::string("\xff\xfe"),
        std::string(500, 'r'), std::string("conv-bn-fold")}) {
    Repro r;
    r.kind = FindingKind::kFusion;
    r.blame.rule = rule;
    r.blame.nodes = {"../node/x", "n\n2"};  // not in the graph: the names themselves are used
    std::string sig = Signature(r);
    EXPECT_TRUE(SafeComponent(sig)) << sig;
    EXPECT_TRUE(seen.insert(sig).second) << "collision: " << sig;
  }
  Repro plain;
  plain.kind = FindingKind::kFusion;
  plain.blame.rule = "conv-bn-fold";
  EXPECT_EQ(Signature(plain).rfind("fusion-conv-bn-fold-", 0), 0u) << Signature(plain);
}

// Issue 14: unblamed target errors were keyed by the whole graph, so one refused option became one
// "unique" finding per graph. The class of the message is the key: same failure, one folder;
// another failure, another folder.
// A quantized graph's boundary (a Q of a graph input, a DQ ending the graph) is not part of
// what signs it: ONNX Runtime's bias-scale bug minimized to DQ -> Conv -> Q with and without
// them, one cause in 4 folders. The interior still separates.
TEST(Signature, TheQuantizedBoundaryDoesNotSplitACause) {
  auto conv_case = [](bool q_in, bool dq_out, Op middle) {
    QuantParams p;
    p.type = QuantType::kUint8;
    p.scale = {0.5};
    p.zero_point = {0};
    Graph g;
    g.inputs.push_back({"x", {1, 1, 2, 2}});
    std::string v = "x";
    auto add = [&](Op op, const std::string& out, const std::string& role) {
      Node n;
      n.name = "n_" + out;
      n.op = op;
      n.inputs = {v};
      n.output = out;
      if (!role.empty()) n.quant[role] = p;
      g.nodes.push_back(n);
      v = out;
    };
    if (q_in) add(Op::QuantizeLinear, "xq", "y");
    add(Op::DequantizeLinear, "xf", "x");
    add(middle, "c", "");
    add(Op::QuantizeLinear, "cq", "y");
    if (dq_out) add(Op::DequantizeLinear, "y", "x");
    g.outputs = {v};
    Repro r;
    r.target = "exec:ort";
    r.kind = FindingKind::kFusion;
    r.blame.rule = "QDQSelectorActionTransformer";
    r.graph = g;
    return Signature(r);
  };
  const std::string plain = conv_case(false, false, Op::Relu);
  EXPECT_EQ(
      plain.rfind("fusion-QDQSelectorActionTransformer-DequantizeLinear.Relu.QuantizeLinear-", 0),
      0u)
      << plain;
  EXPECT_EQ(conv_case(true, false, Op::Relu), plain);
  EXPECT_EQ(conv_case(false, true, Op::Relu), plain);
  EXPECT_EQ(conv_case(true, true, Op::Relu), plain);
  EXPECT_NE(conv_case(true, true, Op::Sigmoid), plain);
}

// What an ONNX engine runs: fusefuzz exports a QLinearAdd as DQ, DQ -> Add -> Q, so the two
// forms of ONNX Runtime's MLAS QLinearAdd bug are one folder; a different op in the middle is not.
TEST(Signature, AQLinearOpSignsAsTheQdqNodesThatDefineIt) {
  QuantParams p;
  p.type = QuantType::kUint8;
  p.scale = {0.5};
  p.zero_point = {3};
  auto sig = [](const Graph& g) {
    Repro r;
    r.target = "onnxruntime:all";
    r.kind = FindingKind::kFusion;
    r.blame.rule = "QDQSelectorActionTransformer";
    r.graph = g;
    return Signature(r);
  };
  auto node = [](Op op, std::vector<std::string> in, const std::string& out) {
    Node n;
    n.name = "n_" + out;
    n.op = op;
    n.inputs = std::move(in);
    n.output = out;
    return n;
  };
  Graph fused;
  fused.inputs = {{"a", {1, 1, 1, 4}}, {"b", {1, 1, 1, 4}}};
  Node add = node(Op::QLinearAdd, {"a", "b"}, "y");
  add.quant = {{"a", p}, {"b", p}, {"y", p}};
  fused.nodes = {add};
  fused.outputs = {"y"};
  Graph qdq = fused;
  qdq.nodes = {node(Op::DequantizeLinear, {"a"}, "af"), node(Op::DequantizeLinear, {"b"}, "bf"),
               node(Op::Add, {"af", "bf"}, "s"), node(Op::QuantizeLinear, {"s"}, "y")};
  qdq.nodes[0].quant["x"] = qdq.nodes[1].quant["x"] = qdq.nodes[3].quant["y"] = p;
  const std::string plain = sig(qdq);
  // Named as the fused op the pattern forms, not its QDQ spelling (issue 45, item 5).
  EXPECT_EQ(plain.rfind("fusion-QDQSelectorActionTransformer-QLinearAdd-", 0), 0u) << plain;
  EXPECT_EQ(sig(fused), plain);
  Graph mul = qdq;
  mul.nodes[2].op = Op::Mul;
  EXPECT_NE(sig(mul), plain);
  // With its Relu, a QLinearAdd is the QDQ chain with the Relu.
  Graph relu = qdq;
  relu.nodes.insert(relu.nodes.begin() + 3, node(Op::Relu, {"s"}, "r"));
  relu.nodes[4].inputs = {"r"};
  add.attrs["activation"] = std::string("relu");
  fused.nodes = {add};
  EXPECT_EQ(sig(fused), sig(relu));
  EXPECT_NE(sig(fused), plain);
  EXPECT_EQ(sig(relu).rfind("fusion-QDQSelectorActionTransformer-QLinearAdd.Relu-", 0), 0u)
      << sig(relu);
}

TEST(Signature, UnblamedTargetErrorsAreKeyedByTheirMessageClass) {
  auto sig = [](FindingKind kind, const std::string& detail, const std::string& input) {
    Repro r;
    r.kind = kind;
    r.detail = detail;
    r.graph.inputs.push_back(ValueInfo{input, {1, 2, 3, 3}});
    return Signature(r);
  };
  const std::string a = sig(FindingKind::kTargetError,
                            "target error: node 'n7': unknown rule 'Pad_Fusion' (case 12)", "x");
  const std::string b = sig(FindingKind::kTargetError,
                            "target error: node \"c2\": unknown rule 'Pad_Fusion' (case 3)", "y");
  const std::string c = sig(FindingKind::kTargetError, "target error: out of memory", "x");
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  EXPECT_NE(a, sig(FindingKind::kCrash, "target error: node 'n7': unknown rule 'x' (case 1)", "x"));
  EXPECT_EQ(ErrorClass("shape [1,3,1,1], expected [1,3,2,2]\nmore"), "shape [#], expected [#]");
}

// Issue 28 item 3: every TorchScript error's first line is "The following operation failed in
// the TorchScript interpreter.", so all of them shared one class; the cause is on the last line.
TEST(ErrorClass, TracebacksAreKeyedByTheExceptionOnTheirLastLine) {
  auto torchscript = [](const std::string& cause, int line) {
    return "target error: RuntimeError: The following operation failed in the TorchScript "
           "interpreter.\nTraceback of TorchScript (most recent call last):\n  File "
           "\"code/__torch__.py\", line " +
           std::to_string(line) + ", in forward\n    _0 = torch.add(x, y)\n" + cause;
  };
  const std::string a = torchscript(
      "RuntimeError: The size of tensor a (10) must match the size of tensor b (8) at "
      "non-singleton dimension 1",
      12);
  const std::string b = torchscript(
      "RuntimeError: The size of tensor a (4) must match the size of tensor b (16) at "
      "non-singleton dimension 3",
      40);
  const std::string c = torchscript(
      "RuntimeError: Given groups=1, weight of size [4, 3, 3, 3], expected input[1, 8, 5, 5] to "
      "have 3 channels, but got 8 channels instead",
      12);
  EXPECT_EQ(ErrorClass(a), ErrorClass(b));
  EXPECT_NE(ErrorClass(a), ErrorClass(c));
  EXPECT_EQ(ErrorClass(a),
            "target error: RuntimeError: The size of tensor a (#) must match the size of tensor b "
            "(#) at non-singleton dimension #");
  EXPECT_EQ(ErrorClass(c),
            "target error: RuntimeError: Given groups=#, weight of size [#], expected input[#] to "
            "have # channels, but got # channels instead");
  // A one-line Python error is its own cause; the type stays part of the class.
  EXPECT_NE(ErrorClass("target error: ValueError: bad pads [1, 2]"),
            ErrorClass("target error: KeyError: bad pads [1, 2]"));
}

TEST(ErrorClass, NamesInParenthesesAreOneName) {
  // ONNX Runtime's duplicate-name error gave two folders for one bug: (n2) and (n3/conv).
  const std::string dup =
      "target error: This is an invalid model. Error: two nodes with same node name ";
  EXPECT_EQ(ErrorClass(dup + "(n2)."), ErrorClass(dup + "(n3/conv)."));
  // An op type in parentheses still tells two failures apart.
  EXPECT_NE(ErrorClass("Node (n5) Op (QLinearAdd) failed"),
            ErrorClass("Node (n5) Op (QLinearConv) failed"));
  EXPECT_EQ(ErrorClass("Node (n5) Op (QLinearAdd) failed"), "Node (*) Op (QLinearAdd) failed");
}

TEST(ErrorClass, NumbersOfAnyFormAndShapesOfAnyRankAreRemoved) {
  // ONNX Runtime: source line numbers, node names, counts.
  auto ort = [](const std::string& node, int src_line, int pad) {
    return "target error: Non-zero status code returned while running MaxPool node. Name:'" + node +
           "' Status Message: /onnxruntime_src/core/providers/cpu/nn/pool_attributes.h:" +
           std::to_string(src_line) + " Pad should be smaller than kernel. Got pad " +
           std::to_string(pad) + ", kernel 1x1";
  };
  EXPECT_EQ(ErrorClass(ort("n3", 101, 1)), ErrorClass(ort("fused_n17_MaxPool", 99, 12)));
  EXPECT_EQ(ErrorClass("expected [1, 3, 2, 2], got [1, 3]"),
            ErrorClass("expected [8], got [2, 2]"));
  EXPECT_EQ(ErrorClass("object at 0x7ffd1234abcd, eps 1e-05, scale -0.5"),
            ErrorClass("object at 0x55aa, eps 1.5e+3, scale 2"));
  EXPECT_NE(ErrorClass("out of memory"), ErrorClass("out of range"));
}

}  // namespace
}  // namespace fusefuzz
