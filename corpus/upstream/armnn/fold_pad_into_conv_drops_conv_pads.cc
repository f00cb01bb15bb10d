// Arm NN 20.08 (Debian libarmnn-dev 20.08-12), CpuRef: FoldPadIntoConvolution2d, applied by
// armnn::Optimize to a Pad feeding a Convolution2d, REPLACES the convolution's own padding by the
// Pad's instead of adding the two, so a padded convolution after a Pad loses its padding (and the
// output has the wrong values). Standalone: no fusefuzz. Exits 1 while the bug is there, 0 when
// the optimized network computes what the same network computes with the fold withheld.
//
// Network (NCHW): x[1,1,3,3] = 1..9 -> Pad(H 1+1, W 0+0, value V) -> Conv 3x3, all weights 1,
// pads P on every side -> y. The fold is withheld by a same-shape Reshape between Pad and Conv
// (its pattern needs a direct connection); that network is the expected result.
#include <armnn/ArmNN.hpp>
#include <cmath>
#include <cstdio>
#include <vector>

namespace {

armnn::TensorInfo Info(std::vector<unsigned int> d) {
  return armnn::TensorInfo(armnn::TensorShape(static_cast<unsigned int>(d.size()), d.data()),
                           armnn::DataType::Float32);
}

std::vector<float> Run(armnn::IRuntime& rt, bool withhold, std::vector<float>& weights,
                       float pad_value, unsigned conv_pad) {
  armnn::INetworkPtr net = armnn::INetwork::Create();
  armnn::IConnectableLayer* in = net->AddInputLayer(0, "x");
  in->GetOutputSlot(0).SetTensorInfo(Info({1, 1, 3, 3}));
  armnn::PadDescriptor pd({{0, 0}, {0, 0}, {1, 1}, {0, 0}}, pad_value);
  armnn::IConnectableLayer* pad = net->AddPadLayer(pd, "pad");
  pad->GetOutputSlot(0).SetTensorInfo(Info({1, 1, 5, 3}));
  in->GetOutputSlot(0).Connect(pad->GetInputSlot(0));
  armnn::Convolution2dDescriptor cd;
  cd.m_PadLeft = cd.m_PadRight = cd.m_PadTop = cd.m_PadBottom = conv_pad;
  cd.m_StrideX = cd.m_StrideY = 1;
  cd.m_BiasEnabled = false;
  cd.m_DataLayout = armnn::DataLayout::NCHW;
  armnn::ConstTensor w(Info({1, 1, 3, 3}), weights.data());
  armnn::IConnectableLayer* conv =
      net->AddConvolution2dLayer(cd, w, armnn::EmptyOptional(), "conv");
  conv->GetOutputSlot(0).SetTensorInfo(Info({1, 1, 3 + 2 * conv_pad, 1 + 2 * conv_pad}));
  armnn::IOutputSlot* feed = &pad->GetOutputSlot(0);
  if (withhold) {
    armnn::IConnectableLayer* keep =
        net->AddReshapeLayer(armnn::ReshapeDescriptor(Info({1, 1, 5, 3}).GetShape()), "keep");
    keep->GetOutputSlot(0).SetTensorInfo(Info({1, 1, 5, 3}));
    feed->Connect(keep->GetInputSlot(0));
    feed = &keep->GetOutputSlot(0);
  }
  feed->Connect(conv->GetInputSlot(0));
  armnn::IConnectableLayer* out = net->AddOutputLayer(0, "y");
  conv->GetOutputSlot(0).Connect(out->GetInputSlot(0));
  armnn::IOptimizedNetworkPtr opt =
      armnn::Optimize(*net, {armnn::Compute::CpuRef}, rt.GetDeviceSpec());
  if (!opt) {
    std::fprintf(stderr,
                 "armnn::Optimize returned no network (is the CpuRef backend installed?)\n");
    std::exit(2);
  }
  armnn::NetworkId id = 0;
  std::string err;
  if (rt.LoadNetwork(id, std::move(opt), err) != armnn::Status::Success) {
    std::fprintf(stderr, "LoadNetwork: %s\n", err.c_str());
    std::exit(2);
  }
  std::vector<float> x = {1, 2, 3, 4, 5, 6, 7, 8, 9};
  std::vector<float> y((3 + 2 * conv_pad) * (1 + 2 * conv_pad), -1.0f);
  armnn::InputTensors inputs{{0, armnn::ConstTensor(rt.GetInputTensorInfo(id, 0), x.data())}};
  armnn::OutputTensors outputs{{0, armnn::Tensor(rt.GetOutputTensorInfo(id, 0), y.data())}};
  if (rt.EnqueueWorkload(id, inputs, outputs) != armnn::Status::Success) std::exit(2);
  rt.UnloadNetwork(id);
  return y;
}

}  // namespace

// Case 1 (pad_value 0, conv pads 1): Optimize throws, the folded convolution's inferred shape
// no longer matching its output. Case 2 (pad_value 1.5, conv pads 0): the fold ignores the Pad's
// fill value and pads with zeros, so the border outputs are wrong.
int Case(armnn::IRuntime& rt, float pad_value, unsigned conv_pad) {
  std::vector<float> weights(9, 1.0f);
  const std::vector<float> kept = Run(rt, true, weights, pad_value, conv_pad);
  std::vector<float> folded;
  try {
    folded = Run(rt, false, weights, pad_value, conv_pad);
  } catch (const armnn::Exception& e) {
    std::printf("BUG (Pad value %g, conv pads %u): armnn::Optimize throws on a valid network: %s\n",
                pad_value, conv_pad, e.what());
    return 1;
  }
  int wrong = 0;
  for (size_t i = 0; i < kept.size(); ++i) {
    std::printf("y[%zu]: Pad kept %g, Pad folded %g\n", i, kept[i], folded[i]);
    if (std::fabs(kept[i] - folded[i]) > 1e-4f) ++wrong;
  }
  if (wrong) {
    std::printf(
        "BUG (Pad value %g, conv pads %u): FoldPadIntoConvolution2d changed %d of %zu "
        "outputs\n",
        pad_value, conv_pad, wrong, kept.size());
    return 1;
  }
  return 0;
}

int main() {
  armnn::ConfigureLogging(false, false, armnn::LogSeverity::Fatal);
  armnn::IRuntimePtr rt = armnn::IRuntime::Create(armnn::IRuntime::CreationOptions());
  const int bugs = Case(*rt, 0.0f, 1) + Case(*rt, 1.5f, 0);
  if (bugs == 0) std::printf("fixed: the fold keeps the convolution's pads and the fill value\n");
  return bugs ? 1 : 0;
}
