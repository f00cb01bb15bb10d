// What the float (network_builder.cc) and quantized (quant_layers.cc) convolutions of
// fusefuzz-armnn-target share: the descriptor from a node's attributes, and Arm NN's depthwise
// weight layout.
#pragma once

#include <armnn/ArmNN.hpp>
#include <cstdint>
#include <vector>

#include "ir/graph.h"

namespace fusefuzz::armnn_conv {

// A Convolution2dDescriptor or DepthwiseConvolution2dDescriptor (the same fields) in NCHW.
template <typename Descriptor>
Descriptor ConvDescriptor(const ConvAttrs& a, bool bias) {
  Descriptor d;
  d.m_PadLeft = unsigned(a.pad_left), d.m_PadRight = unsigned(a.pad_right);
  d.m_PadTop = unsigned(a.pad_top), d.m_PadBottom = unsigned(a.pad_bottom);
  d.m_StrideX = unsigned(a.stride_w), d.m_StrideY = unsigned(a.stride_h);
  d.m_DilationX = unsigned(a.dilation_w), d.m_DilationY = unsigned(a.dilation_h);
  d.m_BiasEnabled = bias;
  d.m_DataLayout = armnn::DataLayout::NCHW;
  return d;
}

// Depthwise weights: ours [C * mult, 1, kH, kW] (output channel ch * mult + k reads input channel
// ch), Arm NN's [mult, C, kH, kW]. `ksize` = kH * kW.
template <typename T, typename From>
std::vector<T> DepthwiseWeights(const std::vector<From>& w, int64_t c, int64_t mult,
                                int64_t ksize) {
  std::vector<T> out(w.size());
  for (int64_t ch = 0; ch < c; ++ch)
    for (int64_t k = 0; k < mult; ++k)
      for (int64_t i = 0; i < ksize; ++i)
        out[static_cast<size_t>((k * c + ch) * ksize + i)] =
            static_cast<T>(w[static_cast<size_t>((ch * mult + k) * ksize + i)]);
  return out;
}

}  // namespace fusefuzz::armnn_conv
