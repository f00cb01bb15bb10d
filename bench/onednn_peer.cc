#include "bench/onednn_peer.h"

#include <algorithm>
#include <cstdint>
#include <unordered_map>
#include <utility>
#include <vector>

#ifdef FUSEFUZZ_HAVE_DNNL
#include <oneapi/dnnl/dnnl.hpp>
#endif
#ifdef FUSEFUZZ_HAVE_OMP
#include <omp.h>
#endif

namespace fusefuzz {

void SetDnnlThreads(int threads) {
#ifdef FUSEFUZZ_HAVE_OMP
  omp_set_num_threads(threads);
#else
  (void)threads;
#endif
}

#ifndef FUSEFUZZ_HAVE_DNNL

std::unique_ptr<DnnlPlan> MakeDnnlPlan(const PatternCase&, bool) { return nullptr; }
std::unique_ptr<DnnlPlan> MakeDnnlInt8Plan(const QLayer&, QPattern) { return nullptr; }
std::string DnnlVersion() { return ""; }

#else

namespace {

using dnnl::algorithm;
using dnnl::memory;
using dt = memory::data_type;
using tag = memory::format_tag;

struct Eltwise {
  algorithm alg;
  float alpha = 0, beta = 0;
};

// The activation as oneDNN eltwise steps; empty when oneDNN 2.6 has no eltwise for it (PRelu
// needs the prelu post-op with its own weights argument, not wired here).
std::vector<Eltwise> EltwiseOf(const PatternCase& pc) {
  switch (pc.act) {
    case Op::Relu:
      return {{algorithm::eltwise_relu}};
    case Op::Relu6:
      return {{algorithm::eltwise_clip, 0.0f, 6.0f}};
    case Op::Clip:
      return {{algorithm::eltwise_clip, -1.0f, 1.0f}};
    case Op::LeakyRelu:
      return {{algorithm::eltwise_relu, 0.01f}};
    case Op::Elu:
      return {{algorithm::eltwise_elu, 1.0f}};
    case Op::Sigmoid:
      return {{algorithm::eltwise_logistic}};
    case Op::HardSigmoid:  // no hardsigmoid before oneDNN 2.7: linear then clip
      return {{algorithm::eltwise_linear, 0.2f, 0.5f}, {algorithm::eltwise_clip, 0.0f, 1.0f}};
    case Op::Tanh:
      return {{algorithm::eltwise_tanh}};
    case Op::Silu:
      return {{algorithm::eltwise_swish, 1.0f}};
    case Op::HardSwish:
      return {{algorithm::eltwise_hardswish}};
    case Op::Gelu:
      return {{pc.gelu_tanh ? algorithm::eltwise_gelu_tanh : algorithm::eltwise_gelu_erf}};
    default:
      return {};
  }
}

class Plan : public DnnlPlan {
 public:
  void Run() override {
    for (auto& [prim, args] : steps_) prim.execute(strm_, args);
    strm_.wait();
  }

  // A memory of `md` filled with values in [offset - scale, offset + scale).
  memory New(const memory::desc& md, uint32_t seed, float scale = 1.0f, float offset = 0.0f) {
    memory m(md, eng_);
    const int64_t n = static_cast<int64_t>(md.get_size() / sizeof(float));
    const Tensor t = Filled({n}, seed, scale);
    float* p = static_cast<float*>(m.get_data_handle());
    for (int64_t i = 0; i < n; ++i) p[i] = t.data[static_cast<size_t>(i)] + offset;
    return m;
  }
  memory Vec(int64_t n, uint32_t seed, float scale = 1.0f, float offset = 0.0f) {
    return New(memory::desc({n}, dt::f32, tag::x), seed, scale, offset);
  }

  // Convolution with `elt` post-ops and, when `residual`, a sum post-op first.
  memory Conv(const Layer& l, const std::vector<Eltwise>& elt, bool residual) {
    const int64_t oh = (l.h + 2 * (l.k / 2) - l.k) / l.stride + 1;
    const memory::dims src{l.n, l.c, l.h, l.h}, dst{l.n, l.m, oh, oh}, bias{l.m};
    const memory::dims wts = l.group > 1
                                 ? memory::dims{l.group, l.m / l.group, l.c / l.group, l.k, l.k}
                                 : memory::dims{l.m, l.c, l.k, l.k};
    const memory::dims strides{l.stride, l.stride}, pad{l.k / 2, l.k / 2};
    const dnnl::convolution_forward::desc d(
        dnnl::prop_kind::forward_inference, algorithm::convolution_direct,
        memory::desc(src, dt::f32, tag::any), memory::desc(wts, dt::f32, tag::any),
        memory::desc(bias, dt::f32, tag::x), memory::desc(dst, dt::f32, tag::any), strides, pad,
        pad);
    // The residual goes in through oneDNN's sum post-op, its ResNet residual fusion: dst holds
    // the residual and is accumulated into (as in a network run in place; the benchmark does not
    // refill it). A binary-add post-op took the reference path in oneDNN 2.6 here (~50x slower).
    dnnl::post_ops po;
    if (residual) po.append_sum(1.0f);
    for (const Eltwise& e : elt) po.append_eltwise(1.0f, e.alg, e.alpha, e.beta);
    dnnl::primitive_attr attr;
    attr.set_post_ops(po);
    const dnnl::convolution_forward::primitive_desc pd(d, attr, eng_);
    std::unordered_map<int, memory> args{{DNNL_ARG_SRC, New(pd.src_desc(), 1)},
                                         {DNNL_ARG_WEIGHTS, New(pd.weights_desc(), 2, 0.1f)},
                                         {DNNL_ARG_BIAS, Vec(l.m, 3, 0.1f)},
                                         {DNNL_ARG_DST, New(pd.dst_desc(), 4)}};
    memory out = args[DNNL_ARG_DST];
    steps_.emplace_back(dnnl::convolution_forward(pd), std::move(args));
    return out;
  }

  memory BatchNorm(const memory& src) {
    const memory::desc md = src.get_desc();
    const int64_t c = md.dims()[1];
    const dnnl::batch_normalization_forward::desc d(dnnl::prop_kind::forward_inference, md, 1e-5f,
                                                    dnnl::normalization_flags::use_global_stats |
                                                        dnnl::normalization_flags::use_scale |
                                                        dnnl::normalization_flags::use_shift);
    const dnnl::batch_normalization_forward::primitive_desc pd(d, eng_);
    std::unordered_map<int, memory> args{{DNNL_ARG_SRC, src},
                                         {DNNL_ARG_MEAN, Vec(c, 5, 0.1f)},
                                         {DNNL_ARG_VARIANCE, Vec(c, 6, 0.25f, 0.5f)},
                                         {DNNL_ARG_SCALE, Vec(c, 7, 0.5f, 1.0f)},
                                         {DNNL_ARG_SHIFT, Vec(c, 8, 0.1f)},
                                         {DNNL_ARG_DST, memory(pd.dst_desc(), eng_)}};
    memory out = args[DNNL_ARG_DST];
    steps_.emplace_back(dnnl::batch_normalization_forward(pd), std::move(args));
    return out;
  }

  memory Elementwise(const memory& src, const Eltwise& e) {
    const dnnl::eltwise_forward::desc d(dnnl::prop_kind::forward_inference, e.alg, src.get_desc(),
                                        e.alpha, e.beta);
    const dnnl::eltwise_forward::primitive_desc pd(d, eng_);
    memory out(pd.dst_desc(), eng_);
    steps_.emplace_back(dnnl::eltwise_forward(pd),
                        std::unordered_map<int, memory>{{DNNL_ARG_SRC, src}, {DNNL_ARG_DST, out}});
    return out;
  }

  // src0 (op) src1, src1 of `src1_md` (the same layout, or a [1,C,1,1] broadcast).
  memory Binary(const memory& src, algorithm alg, const memory::desc& src1_md, uint32_t seed) {
    const dnnl::binary::desc d(alg, src.get_desc(), src1_md, src.get_desc());
    const dnnl::binary::primitive_desc pd(d, eng_);
    memory out(pd.dst_desc(), eng_);
    steps_.emplace_back(
        dnnl::binary(pd),
        std::unordered_map<int, memory>{
            {DNNL_ARG_SRC_0, src}, {DNNL_ARG_SRC_1, New(src1_md, seed)}, {DNNL_ARG_DST, out}});
    return out;
  }

 private:
  dnnl::engine eng_{dnnl::engine::kind::cpu, 0};
  dnnl::stream strm_{eng_};
  std::vector<std::pair<dnnl::primitive, std::unordered_map<int, memory> > > steps_;
};

}  // namespace

std::unique_ptr<DnnlPlan> MakeDnnlPlan(const PatternCase& pc, bool fused) {
  const Layer& l = pc.layer;
  auto p = std::make_unique<Plan>();
  const std::vector<Eltwise> relu = {{algorithm::eltwise_relu}};
  switch (pc.kind) {
    case PatternKind::kConvBn: {
      // Fused: BN folded into the weights and bias, as conv-bn-fold does.
      memory y = p->Conv(l, {}, false);
      if (!fused) p->BatchNorm(y);
      break;
    }
    case PatternKind::kConvBnAct: {
      const std::vector<Eltwise> elt = EltwiseOf(pc);
      if (fused) {
        p->Conv(l, elt, false);
      } else {
        memory y = p->BatchNorm(p->Conv(l, {}, false));
        for (const Eltwise& e : elt) y = p->Elementwise(y, e);
      }
      break;
    }
    case PatternKind::kConvAddRelu:
      if (fused) {
        p->Conv(l, relu, true);
      } else {
        memory y = p->Conv(l, {}, false);
        y = p->Binary(y, algorithm::binary_add, y.get_desc(), 11);
        p->Elementwise(y, relu[0]);
      }
      break;
    case PatternKind::kConvScaleShift: {
      memory y = p->Conv(l, {}, false);
      if (!fused) {
        const memory::desc per_channel({1, l.m, 1, 1}, dt::f32, tag::nchw);
        y = p->Binary(y, algorithm::binary_mul, per_channel, 12);
        p->Binary(y, algorithm::binary_add, per_channel, 13);
      }
      break;
    }
    case PatternKind::kBnBn: {
      const memory::desc md({l.n, l.c, l.h, l.h}, dt::f32, tag::nchw);
      memory y = p->BatchNorm(p->New(md, 14));
      if (!fused) p->BatchNorm(y);
      break;
    }
    case PatternKind::kPadConv:
      if (!fused) return nullptr;  // no pad primitive in oneDNN 2.6
      p->Conv(l, {}, false);
      break;
    case PatternKind::kConvAct: {
      const std::vector<Eltwise> elt = EltwiseOf(pc);
      if (elt.empty()) return nullptr;
      if (fused) {
        p->Conv(l, elt, false);
      } else {
        memory y = p->Conv(l, {}, false);
        for (const Eltwise& e : elt) y = p->Elementwise(y, e);
      }
      break;
    }
  }
  return p;
}

namespace {

class Int8Plan : public DnnlPlan {
 public:
  Int8Plan(const QLayer& l, QPattern pattern) {
    const int64_t pad = l.k / 2;
    const memory::dims src{1, l.c, l.h, l.h}, dst{1, l.m, l.h, l.h}, bias{l.m};
    const memory::dims wts = l.group > 1
                                 ? memory::dims{l.group, l.m / l.group, l.c / l.group, l.k, l.k}
                                 : memory::dims{l.m, l.c, l.k, l.k};
    const dnnl::convolution_forward::desc d(
        dnnl::prop_kind::forward_inference, algorithm::convolution_direct,
        memory::desc(src, dt::u8, tag::any), memory::desc(wts, dt::s8, tag::any),
        memory::desc(bias, dt::s32, tag::x), memory::desc(dst, dt::u8, tag::any), {1, 1},
        {pad, pad}, {pad, pad});
    dnnl::primitive_attr attr;
    std::vector<float> scales(static_cast<size_t>(l.m));
    for (size_t i = 0; i < scales.size(); ++i) {
      scales[i] = (1.0f + 0.01f * static_cast<float>(i % 7)) /
                  (512.0f * static_cast<float>(l.c / l.group * l.k * l.k));
    }
    attr.set_output_scales(1 << 1, scales);  // per output channel
    dnnl::post_ops po;
    switch (pattern) {
      case QPattern::kConvRequant:
        break;
      case QPattern::kConvBnReluRequant:
        po.append_eltwise(1.0f, algorithm::eltwise_relu, 0.0f, 0.0f);
        break;
      case QPattern::kConvAddReluRequant:
        po.append_sum(0.5f);
        po.append_eltwise(1.0f, algorithm::eltwise_relu, 0.0f, 0.0f);
        break;
      case QPattern::kDwRelu6Requant:
        po.append_eltwise(1.0f, algorithm::eltwise_clip, 0.0f, 200.0f);
        break;
    }
    attr.set_post_ops(po);
    const dnnl::convolution_forward::primitive_desc pd(d, attr, eng_);
    args_ = {{DNNL_ARG_SRC, Bytes(pd.src_desc(), 1)},
             {DNNL_ARG_WEIGHTS, Bytes(pd.weights_desc(), 2)},
             {DNNL_ARG_BIAS, Bytes(memory::desc(bias, dt::s32, tag::x), 3)},
             {DNNL_ARG_DST, Bytes(pd.dst_desc(), 4)}};
    conv_ = dnnl::convolution_forward(pd);
  }
  void Run() override {
    conv_.execute(strm_, args_);
    strm_.wait();
  }

 private:
  // A memory of `md` filled with deterministic bytes (bias words kept small).
  memory Bytes(const memory::desc& md, uint32_t seed) {
    memory m(md, eng_);
    auto* p = static_cast<uint8_t*>(m.get_data_handle());
    for (size_t i = 0; i < md.get_size(); ++i) {
      seed = seed * 1664525u + 1013904223u;
      p[i] = static_cast<uint8_t>(seed >> 24);
    }
    if (md.data_type() == dt::s32) {
      auto* w = static_cast<int32_t*>(m.get_data_handle());
      for (size_t i = 0; i < md.get_size() / 4; ++i) w[i] %= 4096;
    }
    return m;
  }

  dnnl::engine eng_{dnnl::engine::kind::cpu, 0};
  dnnl::stream strm_{eng_};
  dnnl::convolution_forward conv_;
  std::unordered_map<int, memory> args_;
};

}  // namespace

std::unique_ptr<DnnlPlan> MakeDnnlInt8Plan(const QLayer& l, QPattern pattern) {
  return std::make_unique<Int8Plan>(l, pattern);
}

std::string DnnlVersion() {
  const dnnl_version_t* v = dnnl_version();
  return std::to_string(v->major) + "." + std::to_string(v->minor) + "." + std::to_string(v->patch);
}

#endif  // FUSEFUZZ_HAVE_DNNL

}  // namespace fusefuzz
