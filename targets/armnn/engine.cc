// Arm NN runs of fusefuzz's requests (engine.h). Each request's graph becomes an armnn::INetwork
// in NCHW (Arm NN's descriptors take the layout, so no permutation is needed), armnn::Optimize'd
// for the CpuRef backend and run there. Modes fp16 and bf16 turn on
// OptimizerOptions::m_ReduceFp32ToFp16 / m_ReduceFp32ToBf16 for every run and declare that
// precision in the hello, so the oracle holds them to fp16's or bf16's bound. Optimize has no
// switch for single optimizations; the one that fuses, FoldPadIntoConvolution2d (a Pad whose
// output feeds a Convolution2d), is withheld by a same-shape Reshape between the two layers,
// which its connection pattern does not match. Folds are observed, not predicted: the optimized
// network's SerializeToDot names a folded layer "folded-<pad>-into-<conv>".
#include "targets/armnn/engine.h"

#include <armnn/ArmNN.hpp>
#include <armnn/Exceptions.hpp>
#include <cmath>
#include <map>
#include <set>
#include <sstream>

#include "targets/armnn/network_builder.h"
#include "targets/armnn/quant_layers.h"
#include "targets/armnn/repro_writer.h"

namespace fusefuzz::armnn_net {
namespace {

const std::vector<Op> kOps = {
    Op::Conv,      Op::BatchNorm, Op::Relu,    Op::Relu6,         Op::Clip,
    Op::LeakyRelu, Op::PRelu,     Op::Elu,     Op::Sigmoid,       Op::Tanh,
    Op::HardSwish, Op::Add,       Op::Sub,     Op::Mul,           Op::Div,
    Op::Pad,       Op::MaxPool,   Op::AvgPool, Op::GlobalAvgPool, Op::Concat,
    Op::Identity,  Op::Flatten,   Op::Reshape, Op::Gemm,          Op::MatMul};
// armnn:int8 adds the quantized ops (quant_layers.cc).
const std::vector<Op> kQuantOps = {Op::QuantizeLinear, Op::DequantizeLinear, Op::QLinearConv,
                                   Op::QLinearAdd};

}  // namespace

// The former protocol server's state and runs, unchanged.
struct Engine::Impl {
 public:
  explicit Impl(Mode m) : mode_(std::move(m)) {
    runtime_ = armnn::IRuntime::Create(armnn::IRuntime::CreationOptions());
  }

  // armnn::Quantize (TypesUtils.cpp, 20.08) asserts that the value it quantizes is not NaN: a
  // NaN input of a graph with a QuantizeLinear aborts Arm NN. Its API forbids that, so the pack
  // declines it; a NaN made inside the graph still reaches the engine (a crash is a finding).
  static void DeclineNanQuantize(const NativeRequest& r) {
    bool quantizes = false;
    for (const Node& n : r.graph.nodes) quantizes = quantizes || n.op == Op::QuantizeLinear;
    if (!quantizes) return;
    for (const auto& [name, t] : r.inputs) {
      for (float v : t.data) {
        if (std::isnan(v)) {
          throw Unsupported("graph input '" + name +
                            "' holds NaN and the graph quantizes: armnn::Quantize asserts its "
                            "value is not NaN (Arm NN 20.08, TypesUtils.cpp)");
        }
      }
    }
  }

  NativeAnswer Run(const NativeRequest& r) {
    if (!r.pipeline.empty()) throw Unsupported("Arm NN's Optimize has no pipeline to reorder");
    if (!r.inject.empty()) throw Unsupported("no faults to inject into Arm NN");
    if (mode_.name == "int8") DeclineNanQuantize(r);
    armnn::INetworkPtr net = armnn::INetwork::Create();
    Builder b(r, net.get(), mode_.name == "int8");
    const std::set<std::string> barriers = Build(r, b);
    armnn::IOptimizedNetworkPtr opt(nullptr, nullptr);
    std::vector<std::string> messages;
    // An exception from Optimize on a network Arm NN accepted is Optimize's failure (an error:
    // FoldPadIntoConvolution2d throws on padded convolutions, docs/upstream-bugs.md).
    armnn::OptimizerOptions o;
    o.m_ReduceFp32ToFp16 = mode_.precision == Precision::kFloat16;
    o.m_ReduceFp32ToBf16 = mode_.precision == Precision::kBFloat16;
    try {
      opt = armnn::Optimize(*net, {armnn::Compute::CpuRef}, runtime_->GetDeviceSpec(), o,
                            armnn::Optional<std::vector<std::string>&>(messages));
    } catch (const armnn::Exception& e) {
      // The folds Optimize was free to apply: the Pad->Conv pairs without a barrier.
      std::vector<Rewrite> attempted;
      for (const auto& [pad, conv] : b.PadConvPairs()) {
        if (!barriers.count(conv)) {
          attempted.push_back({static_cast<int>(attempted.size()) + 1, kFoldRule, {pad, conv}});
        }
      }
      throw FailureAfterRewrites(std::string("armnn::Optimize threw: ") + e.what(), attempted);
    }
    if (!opt) {
      std::string why;
      for (const std::string& m : messages) why += (why.empty() ? "" : "; ") + m;
      throw Unsupported(
          "armnn::Optimize returned no network (CpuRef backend missing or layers "
          "unsupported): " +
          why);
    }
    NativeAnswer a;
    std::ostringstream dot;
    opt->SerializeToDot(dot);
    int64_t index = 0;
    for (const auto& [pad, conv] : b.PadConvPairs()) {
      if (dot.str().find("folded-" + pad + "-into-" + conv) != std::string::npos) {
        a.rewrites.push_back({static_cast<int>(++index), kFoldRule, {pad, conv}});
      }
    }
    armnn::NetworkId id = 0;
    std::string err;
    if (runtime_->LoadNetwork(id, std::move(opt), err) != armnn::Status::Success) {
      throw std::runtime_error("Arm NN LoadNetwork failed: " + err);
    }
    struct Unload {
      armnn::IRuntime* rt;
      armnn::NetworkId id;
      ~Unload() { rt->UnloadNetwork(id); }
    } unload{runtime_.get(), id};
    armnn::InputTensors inputs;
    armnn::LayerBindingId bind = 0;
    std::map<std::string, std::vector<float>> packed;  // quantized inputs and outputs, as bytes
    for (const ValueInfo& in : r.graph.inputs) {
      const float* data = r.inputs.at(in.name).data.data();
      if (auto q = b.plan().find(in.name); q != b.plan().end()) {
        data =
            (packed[in.name] = armnn_int8::Packed(r.inputs.at(in.name), q->second, in.name)).data();
      }
      inputs.push_back({bind, armnn::ConstTensor(runtime_->GetInputTensorInfo(id, bind), data)});
      ++bind;
    }
    armnn::OutputTensors outputs;
    for (size_t i = 0; i < r.graph.outputs.size(); ++i) {
      const std::string& o = r.graph.outputs[i];
      a.outputs[o] = Tensor(r.shapes.at(o));
      float* data = a.outputs[o].data.data();
      if (b.plan().count(o)) data = (packed["out:" + o] = a.outputs[o].data).data();
      const auto lb = static_cast<armnn::LayerBindingId>(i);
      outputs.push_back({lb, armnn::Tensor(runtime_->GetOutputTensorInfo(id, lb), data)});
    }
    std::vector<std::vector<float>> scratch;
    for (const std::string& v : b.DeadValues()) {
      scratch.emplace_back(static_cast<size_t>(NumElements(r.shapes.at(v))));
      const auto lb = static_cast<armnn::LayerBindingId>(outputs.size());
      outputs.push_back(
          {lb, armnn::Tensor(runtime_->GetOutputTensorInfo(id, lb), scratch.back().data())});
    }
    auto run = [&] {
      if (runtime_->EnqueueWorkload(id, inputs, outputs) != armnn::Status::Success) {
        throw std::runtime_error("Arm NN EnqueueWorkload failed");
      }
    };
    if (r.bench_runs > 0) {
      a.timings = TimeRuns(r.bench_warmup, r.bench_runs, run);
    } else {
      run();
    }
    for (const std::string& o : r.graph.outputs) {
      if (auto q = b.plan().find(o); q != b.plan().end())
        armnn_int8::Unpack(packed.at("out:" + o), q->second, &a.outputs[o]);
    }
    return a;
  }

  // Request "repro": the network of the case as Run builds it, written out by the pack's
  // reproducer writer (repro_writer.h).
  Reproducer Repro(const NativeRequest& r, const ReproducerCase& c) {
    armnn::INetworkPtr net = armnn::INetwork::Create();
    Builder b(r, net.get(), mode_.name == "int8");
    Build(r, b);
    return WriteReproducer(r, c, *net, mode_.name, mode_.precision);
  }

 private:
  // Adds the layers; the folds the request does not allow (in graph order of the pads) get a
  // barrier. Returns the convolutions with a barrier.
  static std::set<std::string> Build(const NativeRequest& r, Builder& b) {
    std::set<std::string> barriers;
    int64_t index = 0;
    for (const auto& [pad, conv] : b.PadConvPairs()) {
      if (!r.optimize || !RewriteAllowed(r, kFoldRule, ++index)) barriers.insert(conv);
    }
    try {
      b.Build(barriers);
    } catch (const armnn::Exception& e) {
      throw Unsupported(std::string("Arm NN refuses the network: ") + e.what());
    }
    return barriers;
  }

  Mode mode_;
  armnn::IRuntimePtr runtime_{nullptr, nullptr};
};

Mode ModeNamed(const std::string& name) {
  const Precision p = name == "fp16"   ? Precision::kFloat16
                      : name == "bf16" ? Precision::kBFloat16
                                       : Precision::kFloat32;
  return {name, p};
}

nlohmann::json Hello(const Mode& m) {
  nlohmann::json ops = nlohmann::json::array();
  for (Op op : kOps) ops.push_back(std::string(OpName(op)));
  if (m.name == "int8") {
    for (Op op : kQuantOps) ops.push_back(std::string(OpName(op)));
  }
  return {
      {"protocol", "fusefuzz-target"},
      {"version", 1},
      {"name", "armnn:" + m.name},
      {"engine", "Arm NN " ARMNN_VERSION " (Debian libarmnn22 " FUSEFUZZ_ARMNN_VERSION "), CpuRef"},
      {"ops", ops},
      {"precision", std::string(PrecisionName(m.precision))},
      // armnn::Quantize is round(x / s) + offset: float32 division, ties away from zero.
      {"quantize_rounding", "half_away"},
      {"capabilities", {"rewrites", "disable", "bisect_limit", "bench", "repro"}},
      // The one rewrite the pack observes and withholds (above): without the list a campaign's
      // engine coverage would count fusefuzz's own rule names as Arm NN's never-fired fusions.
      {"rules", {kFoldRule}},
      {"fusions", {kFoldRule}}};
}

Engine::Engine(Mode m) : impl_(std::make_unique<Impl>(std::move(m))) {}
Engine::~Engine() = default;
NativeAnswer Engine::Run(const NativeRequest& r) { return impl_->Run(r); }
Reproducer Engine::Repro(const NativeRequest& r, const ReproducerCase& c) {
  return impl_->Repro(r, c);
}

}  // namespace fusefuzz::armnn_net
