// XNNPACK's fusion rule replayed on the adapter's own node list (targets/xnnpack/README.md):
// the Debian build logs nothing and its subgraph is opaque, so the fusions xnn_create_runtime
// performs are derived from the packaged source (src/subgraph.c, xnn_subgraph_optimize, commit
// ae108ef) rather than read back. Used only by xnnpack_target_main.cc.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace fusefuzz::xnnpack {

// Rule names: XNNPACK's own log messages, without the node numbers.
inline constexpr char kClampRule[] = "fuse Clamp Node into upstream Node";
inline constexpr char kPadConvRule[] = "fuse Constant Pad Node into Convolution 2D Node";
inline constexpr char kPadDwRule[] = "fuse Constant Pad Node into Depthwise Convolution 2D Node";

// The node kinds the fusion rule tells apart (XNNPACK's xnn_node_type, for our nodes).
enum class Kind {
  kConv,
  kDepthwise,
  kFullyConnected,
  kBinary,
  kAvgPool,
  kMaxPool,
  kClamp,
  kPad,
  kOther
};

struct XNode {
  Kind kind = Kind::kOther;
  std::string name;          // the request's node
  std::vector<uint32_t> in;  // value ids of graph values (static values left out)
  uint32_t out = 0;
  bool zero_pad = false;  // kPad: fill value with bits 0 (XNNPACK compares the bits)
};

struct Fusion {
  std::string rule;
  uint32_t value;  // the value that disappears
  std::vector<std::string> nodes;
};

// XNNPACK's fusion pass (src/subgraph.c xnn_subgraph_optimize at the packaged commit): values in
// id order; a value with exactly one consumer (an external output counts as one more) fuses a
// Clamp consumer into a conv, depthwise conv, fully connected, binary, pool or clamp producer,
// and a zero constant Pad producer into a conv or depthwise conv consumer. Fused nodes vanish
// and producers take over outputs, as XNNPACK does, so chains fuse as they do there.
inline std::vector<Fusion> PredictFusions(std::vector<XNode> nodes, uint32_t num_values,
                                          const std::vector<bool>& external) {
  std::vector<int> consumers(num_values, 0), first(num_values, -1), producer(num_values, -1);
  for (size_t n = 0; n < nodes.size(); ++n) {
    for (uint32_t v : nodes[n].in) {
      if (consumers[v]++ == 0) first[v] = static_cast<int>(n);
    }
    producer[nodes[n].out] = static_cast<int>(n);
  }
  for (uint32_t v = 0; v < num_values; ++v) consumers[v] += external[v] ? 1 : 0;
  std::vector<Fusion> out;
  for (uint32_t v = 0; v < num_values; ++v) {
    if (consumers[v] != 1 || producer[v] < 0 || first[v] < 0) continue;
    XNode& p = nodes[producer[v]];
    XNode& c = nodes[first[v]];
    if (c.kind == Kind::kClamp && p.kind != Kind::kOther && p.kind != Kind::kPad) {
      out.push_back({kClampRule, v, {p.name, c.name}});
      producer[c.out] = producer[v];
      p.out = c.out;
      c.kind = Kind::kOther;  // cleared
      continue;
    }
    if (p.kind == Kind::kPad && p.zero_pad &&
        (c.kind == Kind::kConv || c.kind == Kind::kDepthwise)) {
      out.push_back({c.kind == Kind::kConv ? kPadConvRule : kPadDwRule, v, {p.name, c.name}});
      for (uint32_t& i : c.in) i = i == v ? p.in[0] : i;
      if (first[p.in[0]] == producer[v]) first[p.in[0]] = first[v];
      p.kind = Kind::kOther;
    }
  }
  return out;
}

}  // namespace fusefuzz::xnnpack
