#include "bench/int8_cases.h"

#include <emmintrin.h>

#include <algorithm>
#include <utility>

#include "bench/fusion_patterns.h"
#include "kernels/fast/fast_ops.h"

namespace fusefuzz {
namespace {

// Deterministic bytes (an LCG: the bench needs no statistical quality).
template <class T>
void FillBytes(std::vector<T>& v, uint32_t seed) {
  for (T& b : v) {
    seed = seed * 1664525u + 1013904223u;
    b = static_cast<T>(seed >> 24);
  }
}

constexpr int32_t kRelu6Max = 200;  // q(6.0) at the output scale chosen here

}  // namespace

const char* QPatternName(QPattern p) {
  switch (p) {
    case QPattern::kConvRequant:
      return "conv_requant";
    case QPattern::kConvBnReluRequant:
      return "conv_bn_relu_requant";
    case QPattern::kConvAddReluRequant:
      return "conv_add_relu_requant";
    case QPattern::kDwRelu6Requant:
      return "dw_relu6_requant";
  }
  return "?";
}

std::string QShapeName(const QLayer& l) {
  std::string s =
      "N1_C" + std::to_string(l.c) + "_H" + std::to_string(l.h) + "_K" + std::to_string(l.k);
  if (l.m != l.c) s += "_M" + std::to_string(l.m);
  if (l.group != 1) s += "_G" + std::to_string(l.group);
  return s;
}

QCase::QCase(const QLayer& l, QPattern pattern) : l_(l), pattern_(pattern) {
  const int64_t cg = l.c / l.group, taps = cg * l.k * l.k, out = l.m * l.h * l.h;
  x_.resize(static_cast<size_t>(l.c * l.h * l.h));
  w_.resize(static_cast<size_t>(l.m * taps));
  bias_.resize(static_cast<size_t>(l.m));
  mult_.resize(static_cast<size_t>(l.m));
  y_.resize(static_cast<size_t>(out));
  t_.resize(static_cast<size_t>(out));
  acc_.resize(static_cast<size_t>(out));
  FillBytes(x_, 1);
  FillBytes(w_, 2);
  FillBytes(bias_, 3);
  for (size_t i = 0; i < mult_.size(); ++i) {
    // About 1 / (typical |acc|): outputs spread over the byte range.
    mult_[i] = (1.0f + 0.01f * static_cast<float>(i % 7)) / (512.0f * static_cast<float>(taps));
  }
  for (int32_t& b : bias_) b %= 4096;
  if (pattern == QPattern::kConvAddReluRequant) {
    residual_.resize(static_cast<size_t>(out));
    FillBytes(residual_, 4);
  }
  // The float32 layer: FusedConv with the pattern's epilogue.
  node_.name = "conv";
  node_.op = Op::FusedConv;
  const int64_t pad = l.k / 2;
  node_.attrs["pads"] = std::vector<int64_t>{pad, pad, pad, pad};
  node_.attrs["group"] = l.group;
  node_.params["W"] = Filled({l.m, cg, l.k, l.k}, 5, 0.1f);
  node_.params["B"] = Filled({l.m}, 6, 0.1f);
  EpilogueStep relu;
  relu.kind = EpilogueKind::kActivation;
  relu.act = Op::Relu;
  switch (pattern) {
    case QPattern::kConvRequant:
      break;
    case QPattern::kConvBnReluRequant:
      node_.epilogue = {relu};
      break;
    case QPattern::kConvAddReluRequant: {
      EpilogueStep add;
      add.kind = EpilogueKind::kAdd;
      add.input = 1;
      node_.epilogue = {add, relu};
      break;
    }
    case QPattern::kDwRelu6Requant: {
      EpilogueStep clip;
      clip.kind = EpilogueKind::kClamp;
      clip.attrs["min"] = 0.0f;
      clip.attrs["max"] = 6.0f;
      node_.epilogue = {clip};
      break;
    }
  }
  fx_ = Filled({1, l.c, l.h, l.h}, 7);
  fresidual_ = Filled({1, l.m, l.h, l.h}, 8);
  fy_ = Tensor(Shape{1, l.m, l.h, l.h});
}

double QLayerOps(const QLayer& l) {
  return 2.0 * static_cast<double>(l.m * l.h * l.h * (l.c / l.group) * l.k * l.k);
}

std::vector<Int8BenchCase> Int8BenchCases() {
  const QLayer r2{"resnet18_conv2_x", 64, 56, 64, 3, 1}, r3{"resnet18_conv3_x", 128, 28, 128, 3, 1};
  const QLayer r4{"resnet18_conv4_x", 256, 14, 256, 3, 1},
      r5{"resnet18_conv5_x", 512, 7, 512, 3, 1};
  const QLayer expand{"mobilenetv2_expand", 24, 56, 144, 1, 1};
  const QLayer project{"mobilenetv2_project", 192, 28, 32, 1, 1};
  const QLayer dw56{"mobilenetv2_dw", 144, 56, 144, 3, 144},
      dw28{"mobilenetv2_dw", 192, 28, 192, 3, 192};
  const QLayer dw14{"mobilenetv2_dw", 576, 14, 576, 3, 576},
      dw7{"mobilenetv2_dw", 960, 7, 960, 3, 960};
  const std::pair<QPattern, std::vector<QLayer>> groups[] = {
      {QPattern::kConvRequant, {r2, r3, r4, r5, expand, project}},
      {QPattern::kConvBnReluRequant, {r2, r3, r4, r5, expand}},
      {QPattern::kConvAddReluRequant, {r2, r3, r4, r5, project}},
      {QPattern::kDwRelu6Requant, {dw56, dw28, dw14, dw7}},
  };
  std::vector<Int8BenchCase> cases;
  for (const auto& [pattern, layers] : groups) {
    for (const QLayer& l : layers) cases.push_back({pattern, l});
  }
  return cases;
}

double QCase::Ops() const { return QLayerOps(l_); }

int8::QConvProblem QCase::Problem() const {
  int8::QConvProblem p;
  p.c = l_.c, p.h = l_.h, p.w = l_.h, p.m = l_.m, p.kh = l_.k, p.kw = l_.k;
  p.oh = l_.h, p.ow = l_.h, p.pad_top = l_.k / 2, p.pad_left = l_.k / 2, p.group = l_.group;
  p.x = x_.data();
  p.weights = w_.data();
  p.bias = bias_.data();
  p.multiplier = mult_.data();
  p.y = const_cast<uint8_t*>(y_.data());
  p.y_zero_point = 0;
  p.y_min = 0;
  p.y_max = 255;
  switch (pattern_) {
    case QPattern::kConvRequant:
    case QPattern::kConvBnReluRequant:  // ReLU on u8 with zero point 0: the clamp at 0
      break;
    case QPattern::kConvAddReluRequant:
      p.residual = residual_.data();
      p.residual_multiplier = 0.5f;
      break;
    case QPattern::kDwRelu6Requant:
      p.y_max = kRelu6Max;
      break;
  }
  return p;
}

void QCase::Prepare(FastIsa isa) {
  isa_ = isa;
  plan_ = std::make_unique<int8::QConvPlan>(Problem(), isa);
}

void QCase::RunFused(int threads) const { plan_->Run(Problem(), threads); }

void QCase::RunUnfused(int threads) {
  int8::QConvProblem p = Problem();
  p.y_int32 = acc_.data();
  plan_->Run(p, threads);  // conv to int32
  // Requantize: the conv's own scale, full range, into t (zero point 128 when an Add follows,
  // so that negative conv outputs survive until the Add).
  int8::QConvProblem rq = Problem();
  rq.residual = nullptr;
  rq.y_min = 0;
  rq.y_max = 255;
  const bool add = pattern_ == QPattern::kConvAddReluRequant;
  rq.y_zero_point = add ? 128 : 0;
  rq.y = pattern_ == QPattern::kConvRequant ? y_.data() : t_.data();
  int8::QRequantize(rq, acc_.data(), threads, isa_);
  if (pattern_ == QPattern::kConvRequant) return;  // no activation, no Add
  const uint8_t* in = t_.data();
  if (add) {
    int8::QAddProblem a;
    a.count = static_cast<int64_t>(t_.size());
    a.a = t_.data();
    a.a_zero_point = 128;
    a.b = residual_.data();
    a.b_multiplier = 0.5f;
    a.y = y_.data();
    a.y_min = 0;
    a.y_max = 255;
    int8::QAdd(a, threads, isa_);
    in = y_.data();
  }
  // The activation's clamp pass, 16 bytes at a time (pmaxub/pminub: SSE2, so the baseline
  // build has it; the compiler left the plain loop scalar).
  const uint8_t lo = 0, hi = pattern_ == QPattern::kDwRelu6Requant ? kRelu6Max : 255;
  uint8_t* y = y_.data();
  const size_t n = y_.size();
  const __m128i vlo = _mm_set1_epi8(static_cast<char>(lo)),
                vhi = _mm_set1_epi8(static_cast<char>(hi));
  size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in + i));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(y + i), _mm_min_epu8(_mm_max_epu8(v, vlo), vhi));
  }
  for (; i < n; ++i) y[i] = std::min(std::max(in[i], lo), hi);
}

void QCase::RunFloat(int threads) {
  std::vector<const Tensor*> inputs{&fx_};
  if (pattern_ == QPattern::kConvAddReluRequant) inputs.push_back(&fresidual_);
  fast::KernelsFor(FastIsa::kAuto).conv(node_, inputs, threads, fy_);
}

}  // namespace fusefuzz
