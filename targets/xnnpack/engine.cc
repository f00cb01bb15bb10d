// XNNPACK runs of fusefuzz's requests (engine.h): each request's NCHW graph becomes an
// xnn_subgraph in NHWC (the target permutes inputs, weights, constants and outputs itself,
// exactly), and runs through xnn_create_runtime, whose xnn_subgraph_optimize fuses a Clamp into
// its producer and a zero constant Pad into a following (depthwise) convolution. A value flagged
// as an external output is never fused through: the unfused run makes every intermediate value
// external, and disable / bisect_limit keep the values of withheld fusions external.
#include "targets/xnnpack/engine.h"

#include <pthreadpool.h>
#include <xnnpack.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <memory>
#include <set>

#include "targets/xnnpack/builder.h"
#include "targets/xnnpack/fusion_rule.h"
#include "targets/xnnpack/nhwc.h"

namespace fusefuzz::xnnpack {
namespace {

// The ops translated (hello "ops"); every other op is left out and refused. xnnpack:int8 adds
// the quantized ones.
const std::vector<Op> kOps = {
    Op::Conv,    Op::Relu,    Op::Relu6,     Op::Clip,    Op::LeakyRelu,     Op::PRelu,
    Op::Elu,     Op::Sigmoid, Op::HardSwish, Op::Add,     Op::Sub,           Op::Mul,
    Op::Div,     Op::Pad,     Op::MaxPool,   Op::AvgPool, Op::GlobalAvgPool, Op::Identity,
    Op::Flatten, Op::Reshape, Op::Gemm,      Op::MatMul};
const std::vector<Op> kQuantOps = {Op::QuantizeLinear, Op::DequantizeLinear, Op::QLinearConv,
                                   Op::QLinearAdd};

// One external buffer: floats, or the bytes of an 8-bit quantized value (XNNPACK may read a few
// bytes past a tensor: XNN_EXTRA_BYTES of slack).
struct Buffer {
  const QuantValue* q = nullptr;
  std::vector<float> f;
  std::vector<char> bytes;
  void* data() { return q ? static_cast<void*>(bytes.data()) : static_cast<void*>(f.data()); }
};

// A graph input of integers into an 8-bit buffer; a non-integer or out-of-range value is bad
// input for a quantized value.
Buffer InputBuffer(const std::string& name, const Tensor& t, const QuantValue* q) {
  Buffer b;
  b.q = q;
  std::vector<float> d = ToNhwc(t);
  if (!q) {
    d.resize(d.size() + XNN_EXTRA_BYTES / sizeof(float));
    b.f = std::move(d);
    return b;
  }
  b.bytes.assign(d.size() + XNN_EXTRA_BYTES, 0);
  const double lo = q->type == QuantType::kInt8 ? -128 : 0,
               hi = q->type == QuantType::kInt8 ? 127 : 255;
  for (size_t i = 0; i < d.size(); ++i) {
    if (!(d[i] == std::nearbyint(d[i]) && d[i] >= lo && d[i] <= hi)) {
      throw std::runtime_error("graph input '" + name + "' feeds a quantized value but element " +
                               std::to_string(i) + " is " + std::to_string(d[i]) + ", not " +
                               std::string(QuantTypeName(q->type)));
    }
    if (q->type == QuantType::kInt8) {
      b.bytes[i] = static_cast<char>(static_cast<int8_t>(d[i]));
    } else {
      b.bytes[i] = static_cast<char>(static_cast<uint8_t>(d[i]));
    }
  }
  return b;
}

std::vector<float> OutputData(const Buffer& b, size_t n) {
  if (!b.q) return std::vector<float>(b.f.begin(), b.f.begin() + static_cast<std::ptrdiff_t>(n));
  std::vector<float> out(n);
  for (size_t i = 0; i < n; ++i) {
    out[i] = b.q->type == QuantType::kInt8 ? static_cast<float>(static_cast<int8_t>(b.bytes[i]))
                                           : static_cast<float>(static_cast<uint8_t>(b.bytes[i]));
  }
  return out;
}

struct SubgraphDeleter {
  void operator()(xnn_subgraph* s) const { xnn_delete_subgraph(s); }
};
struct RuntimeDeleter {
  void operator()(xnn_runtime* r) const { xnn_delete_runtime(r); }
};
struct PoolDeleter {
  void operator()(pthreadpool* p) const { pthreadpool_destroy(p); }
};

}  // namespace

NativeAnswer Run(const NativeRequest& r, bool int8) {
  if (!r.pipeline.empty()) throw Unsupported("XNNPACK's fusion pass has no pipeline to reorder");
  if (!r.inject.empty()) throw Unsupported("no faults to inject into XNNPACK");
  Builder b(r, int8);
  const uint32_t nv = b.num_values();
  std::vector<bool> external(nv, false);
  for (const Node& n : r.graph.nodes) {
    // Unfused: every intermediate value external, so XNNPACK fuses nothing.
    // A dead value (no consumer, not an output) is external too: xnn_subgraph_optimize clears
    // unreferenced internal values, and setting up their producer then fails an assert.
    external[b.Id(n.output)] =
        !r.optimize || r.graph.IsGraphOutput(n.output) || r.graph.Consumers(n.output).empty();
  }
  NativeAnswer a;
  // The adapter's own rewrite first (QDQ chains as quantized convolutions; never unfused), then
  // XNNPACK's fusions, numbered on in application order.
  std::vector<bool> fuse(b.chains().size(), false);
  int64_t applied = 0;
  for (size_t i = 0; i < fuse.size() && r.optimize; ++i) {
    fuse[i] = RewriteAllowed(r, xnnpack::kQdqConvRule, applied + 1);
    if (!fuse[i]) continue;
    const xnnpack::QdqConv& c = b.chains()[i];
    std::vector<std::string> nodes = {c.dq->name, c.conv->name};
    if (c.act) nodes.push_back(c.act->name);
    nodes.push_back(c.q->name);
    a.rewrites.push_back({static_cast<int>(++applied), xnnpack::kQdqConvRule, nodes});
  }
  // A dry definition gives the node list; withheld fusions keep their value external until the
  // predicted fusions are exactly the allowed ones (earlier fusions never depend on later ones).
  std::unique_ptr<xnn_subgraph, SubgraphDeleter> sg;
  std::vector<Fusion> fusions;
  for (;;) {
    xnn_subgraph_t raw = nullptr;
    Check(xnn_create_subgraph(nv, 0, &raw), "create_subgraph");
    sg.reset(raw);
    b.Define(sg.get(), external, fuse);
    fusions = PredictFusions(b.nodes(), nv, external);
    bool changed = false;
    for (size_t i = 0; i < fusions.size(); ++i) {
      if (!RewriteAllowed(r, fusions[i].rule, applied + static_cast<int64_t>(i) + 1)) {
        external[fusions[i].value] = true;
        changed = true;
        break;
      }
    }
    if (!changed) break;
  }
  for (size_t i = 0; i < fusions.size(); ++i) {
    a.rewrites.push_back({static_cast<int>(applied + static_cast<int64_t>(i)) + 1, fusions[i].rule,
                          fusions[i].nodes});
  }
  std::unique_ptr<pthreadpool, PoolDeleter> pool;
  if (r.threads > 1) pool.reset(pthreadpool_create(size_t(r.threads)));
  xnn_runtime_t raw_rt = nullptr;
  Check(xnn_create_runtime_v2(sg.get(), pool.get(), 0, &raw_rt), "create_runtime");
  std::unique_ptr<xnn_runtime, RuntimeDeleter> rt(raw_rt);
  // Inputs in NHWC, one buffer per external value.
  std::map<uint32_t, Buffer> buffers;
  std::vector<xnn_external_value> ext;
  for (const ValueInfo& in : r.graph.inputs) {
    buffers[b.Id(in.name)] = InputBuffer(in.name, r.inputs.at(in.name), b.Quantized(in.name));
  }
  for (const Node& n : r.graph.nodes) {
    const uint32_t id = b.Id(n.output);
    if (!external[id]) continue;
    Buffer& buf = buffers[id];
    buf.q = b.Quantized(n.output);
    const size_t count = size_t(NumElements(r.shapes.at(n.output)));
    if (buf.q) {
      buf.bytes.assign(count + XNN_EXTRA_BYTES, 0);
    } else {
      buf.f.assign(count + XNN_EXTRA_BYTES / sizeof(float), 0.0f);
    }
  }
  for (auto& [id, buf] : buffers) ext.push_back({id, buf.data()});
  Check(xnn_setup_runtime(rt.get(), ext.size(), ext.data()), "setup_runtime");
  auto invoke = [&] { Check(xnn_invoke_runtime(rt.get()), "invoke_runtime"); };
  if (r.bench_runs > 0) {
    a.timings = TimeRuns(r.bench_warmup, r.bench_runs, invoke);
  } else {
    invoke();
  }
  for (const std::string& o : r.graph.outputs) {
    const Shape& s = r.shapes.at(o);
    a.outputs[o] = FromNhwc(s, OutputData(buffers.at(b.Id(o)), size_t(NumElements(s))));
  }
  return a;
}

nlohmann::json Hello(bool int8) {
  nlohmann::json ops = nlohmann::json::array();
  for (Op op : kOps) ops.push_back(std::string(OpName(op)));
  if (int8) {
    for (Op op : kQuantOps) ops.push_back(std::string(OpName(op)));
  }
  nlohmann::json hello = {
      {"protocol", "fusefuzz-target"},
      {"version", 1},
      {"name", std::string(int8 ? "xnnpack:int8" : "xnnpack:fp32")},
      {"engine", "XNNPACK " FUSEFUZZ_XNNPACK_VERSION " (Debian libxnnpack0), subgraph API"},
      {"ops", ops},
      {"precision", "float32"},
      // Its convert multiplies by the float32 reciprocal of the scale, then rounds to even
      // (src/f32-qs8-vcvt: x * (1/s) + magic bias); ONNX divides.
      {"quantize_rounding", "reciprocal_multiply"},
      {"capabilities", {"rewrites", "disable", "bisect_limit", "bench", "repro"}}};
  hello["rules"] = {xnnpack::kClampRule, xnnpack::kPadConvRule, xnnpack::kPadDwRule};
  if (int8) hello["rules"].push_back(xnnpack::kQdqConvRule);
  if (int8) {
    // What it refuses in any graph (docs/target-protocol.md, "constraints"): its quantized
    // values have one scale and zero point (builder_int8.cc), and a scale > 0
    // (xnn_define_quantized_tensor_value).
    hello["constraints"] = {{"per_axis_activations", false}, {"negative_scales", false}};
  }
  return hello;
}

std::string Initialize() {
  if (xnn_status s = xnn_initialize(nullptr); s != xnn_status_success) return StatusName(s);
  return "";
}

}  // namespace fusefuzz::xnnpack
