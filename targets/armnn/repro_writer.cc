#include "targets/armnn/repro_writer.h"

#include <armnn/LayerVisitorBase.hpp>
#include <cmath>
#include <cstdio>
#include <map>
#include <sstream>
#include <vector>

#include "targets/repro_program.h"

namespace fusefuzz::armnn_net {
namespace {

constexpr char kFile[] = "reproduce_armnn.cc";
constexpr char kBuild[] =
    "g++ -std=c++17 -O1 reproduce_armnn.cc -o reproduce_armnn -larmnn && ./reproduce_armnn";

std::string F(double v) { return ExactLiteral(v); }
template <typename E>
std::string Enum(const char* type, E e) {
  return std::string("static_cast<armnn::") + type + ">(" + std::to_string(int(e)) + ")";
}
std::string B(bool b) { return b ? "true" : "false"; }

// Writes each visited layer as the INetwork call that adds it (ILayerVisitor: the adapter's
// network read back, so the reproducer builds what the adapter built).
class Writer : public armnn::LayerVisitorBase<armnn::VisitorThrowingPolicy> {
 public:
  std::ostringstream statics, layers;
  std::map<armnn::LayerGuid, std::string> var;  // layer -> its variable
  std::vector<const armnn::IConnectableLayer*> order;
  std::map<std::string, armnn::LayerBindingId> inputs, outputs;  // by layer name

  std::string Shape(const armnn::TensorShape& s) {
    std::string d;
    for (unsigned i = 0; i < s.GetNumDimensions(); ++i) d += (i ? ", " : "") + std::to_string(s[i]);
    return "Shape({" + d + "})";
  }
  std::string Info(const armnn::TensorInfo& t) {
    const std::string type = Enum("DataType", t.GetDataType());
    if (t.HasPerAxisQuantization()) {
      std::string scales;
      for (float s : t.GetQuantizationScales()) scales += (scales.empty() ? "" : ", ") + F(s) + "f";
      return "armnn::TensorInfo(" + Shape(t.GetShape()) + ", " + type + ", std::vector<float>{" +
             scales + "}, " + std::to_string(t.GetQuantizationDim().value()) + ")";
    }
    return "armnn::TensorInfo(" + Shape(t.GetShape()) + ", " + type + ", " +
           F(t.GetQuantizationScale()) + "f, " + std::to_string(t.GetQuantizationOffset()) + ")";
  }
  std::string Const(const armnn::ConstTensor& t) {
    const std::string name = "c" + std::to_string(next_++);
    const auto* b = static_cast<const unsigned char*>(t.GetMemoryArea());
    statics << "alignas(16) static const uint8_t " << name << "[] = {";
    for (unsigned i = 0; i < t.GetNumBytes(); ++i) {
      statics << (i ? (i % 24 ? "," : ",\n    ") : "") << int(b[i]);
    }
    statics << "};\n";
    return "armnn::ConstTensor(" + Info(t.GetInfo()) + ", " + name + ")";
  }
  std::string Bias(const armnn::Optional<armnn::ConstTensor>& b) {
    return b.has_value() ? "armnn::Optional<armnn::ConstTensor>(" + Const(b.value()) + ")"
                         : "armnn::EmptyOptional()";
  }
  template <typename D>
  std::string Conv(const D& d, const char* type) {
    std::ostringstream s;
    s << "    armnn::" << type << " d;\n    d.m_PadLeft = " << d.m_PadLeft
      << "; d.m_PadRight = " << d.m_PadRight << "; d.m_PadTop = " << d.m_PadTop
      << "; d.m_PadBottom = " << d.m_PadBottom << ";\n    d.m_StrideX = " << d.m_StrideX
      << "; d.m_StrideY = " << d.m_StrideY << "; d.m_DilationX = " << d.m_DilationX
      << "; d.m_DilationY = " << d.m_DilationY << ";\n    d.m_BiasEnabled = " << B(d.m_BiasEnabled)
      << "; d.m_DataLayout = " << Enum("DataLayout", d.m_DataLayout) << ";\n";
    return s.str();
  }
  void Add(const armnn::IConnectableLayer* l, const std::string& setup, const std::string& call) {
    const std::string v = "l" + std::to_string(order.size());
    var[l->GetGuid()] = v;
    order.push_back(l);
    layers << "  armnn::IConnectableLayer* " << v << ";\n  {\n"
           << setup << "    " << v << " = net->" << call << ";\n  }\n";
  }
  static std::string Name(const char* n) {
    std::string s = "\"";
    for (const char* p = n ? n : ""; *p; ++p)
      s += (*p == '"' || *p == '\\') ? std::string("\\") + *p : std::string(1, *p);
    return s + "\"";
  }

  void VisitInputLayer(const armnn::IConnectableLayer* l, armnn::LayerBindingId id,
                       const char* name) override {
    inputs[name ? name : ""] = id;
    Add(l, "", "AddInputLayer(" + std::to_string(id) + ", " + Name(name) + ")");
  }
  void VisitOutputLayer(const armnn::IConnectableLayer* l, armnn::LayerBindingId id,
                        const char* name) override {
    outputs[name ? name : ""] = id;
    Add(l, "", "AddOutputLayer(" + std::to_string(id) + ", " + Name(name) + ")");
  }
  void VisitActivationLayer(const armnn::IConnectableLayer* l, const armnn::ActivationDescriptor& d,
                            const char* name) override {
    Add(l,
        "    armnn::ActivationDescriptor d;\n    d.m_Function = " +
            Enum("ActivationFunction", d.m_Function) + "; d.m_A = " + F(d.m_A) +
            "f; d.m_B = " + F(d.m_B) + "f;\n",
        "AddActivationLayer(d, " + Name(name) + ")");
  }
  void VisitAdditionLayer(const armnn::IConnectableLayer* l, const char* name) override {
    Add(l, "", "AddAdditionLayer(" + Name(name) + ")");
  }
  void VisitSubtractionLayer(const armnn::IConnectableLayer* l, const char* name) override {
    Add(l, "", "AddSubtractionLayer(" + Name(name) + ")");
  }
  void VisitMultiplicationLayer(const armnn::IConnectableLayer* l, const char* name) override {
    Add(l, "", "AddMultiplicationLayer(" + Name(name) + ")");
  }
  void VisitDivisionLayer(const armnn::IConnectableLayer* l, const char* name) override {
    Add(l, "", "AddDivisionLayer(" + Name(name) + ")");
  }
  void VisitPreluLayer(const armnn::IConnectableLayer* l, const char* name) override {
    Add(l, "", "AddPreluLayer(" + Name(name) + ")");
  }
  void VisitQuantizeLayer(const armnn::IConnectableLayer* l, const char* name) override {
    Add(l, "", "AddQuantizeLayer(" + Name(name) + ")");
  }
  void VisitDequantizeLayer(const armnn::IConnectableLayer* l, const char* name) override {
    Add(l, "", "AddDequantizeLayer(" + Name(name) + ")");
  }
  void VisitBatchNormalizationLayer(const armnn::IConnectableLayer* l,
                                    const armnn::BatchNormalizationDescriptor& d,
                                    const armnn::ConstTensor& mean, const armnn::ConstTensor& var_,
                                    const armnn::ConstTensor& beta, const armnn::ConstTensor& gamma,
                                    const char* name) override {
    Add(l,
        "    armnn::BatchNormalizationDescriptor d;\n    d.m_Eps = " + F(d.m_Eps) +
            "f; d.m_DataLayout = " + Enum("DataLayout", d.m_DataLayout) + ";\n",
        "AddBatchNormalizationLayer(d, " + Const(mean) + ", " + Const(var_) + ", " + Const(beta) +
            ", " + Const(gamma) + ", " + Name(name) + ")");
  }
  void VisitConstantLayer(const armnn::IConnectableLayer* l, const armnn::ConstTensor& t,
                          const char* name) override {
    Add(l, "", "AddConstantLayer(" + Const(t) + ", " + Name(name) + ")");
  }
  void VisitConvolution2dLayer(const armnn::IConnectableLayer* l,
                               const armnn::Convolution2dDescriptor& d, const armnn::ConstTensor& w,
                               const armnn::Optional<armnn::ConstTensor>& b,
                               const char* name) override {
    Add(l, Conv(d, "Convolution2dDescriptor"),
        "AddConvolution2dLayer(d, " + Const(w) + ", " + Bias(b) + ", " + Name(name) + ")");
  }
  void VisitDepthwiseConvolution2dLayer(const armnn::IConnectableLayer* l,
                                        const armnn::DepthwiseConvolution2dDescriptor& d,
                                        const armnn::ConstTensor& w,
                                        const armnn::Optional<armnn::ConstTensor>& b,
                                        const char* name) override {
    Add(l, Conv(d, "DepthwiseConvolution2dDescriptor"),
        "AddDepthwiseConvolution2dLayer(d, " + Const(w) + ", " + Bias(b) + ", " + Name(name) + ")");
  }
  void VisitFullyConnectedLayer(const armnn::IConnectableLayer* l,
                                const armnn::FullyConnectedDescriptor& d,
                                const armnn::ConstTensor& w,
                                const armnn::Optional<armnn::ConstTensor>& b,
                                const char* name) override {
    Add(l,
        "    armnn::FullyConnectedDescriptor d;\n    d.m_BiasEnabled = " + B(d.m_BiasEnabled) +
            "; d.m_TransposeWeightMatrix = " + B(d.m_TransposeWeightMatrix) + ";\n",
        "AddFullyConnectedLayer(d, " + Const(w) + ", " + Bias(b) + ", " + Name(name) + ")");
  }
  void VisitPadLayer(const armnn::IConnectableLayer* l, const armnn::PadDescriptor& d,
                     const char* name) override {
    std::string pads;
    for (const auto& [a, b] : d.m_PadList) {
      pads += (pads.empty() ? "{" : ", {") + std::to_string(a) + ", " + std::to_string(b) + "}";
    }
    Add(l, "    armnn::PadDescriptor d({" + pads + "}, " + F(d.m_PadValue) + "f);\n",
        "AddPadLayer(d, " + Name(name) + ")");
  }
  void VisitPooling2dLayer(const armnn::IConnectableLayer* l, const armnn::Pooling2dDescriptor& d,
                           const char* name) override {
    std::ostringstream s;
    s << "    armnn::Pooling2dDescriptor d;\n    d.m_PoolType = "
      << Enum("PoolingAlgorithm", d.m_PoolType) << "; d.m_PadLeft = " << d.m_PadLeft
      << "; d.m_PadRight = " << d.m_PadRight << "; d.m_PadTop = " << d.m_PadTop
      << "; d.m_PadBottom = " << d.m_PadBottom << ";\n    d.m_PoolWidth = " << d.m_PoolWidth
      << "; d.m_PoolHeight = " << d.m_PoolHeight << "; d.m_StrideX = " << d.m_StrideX
      << "; d.m_StrideY = " << d.m_StrideY
      << ";\n    d.m_OutputShapeRounding = " << Enum("OutputShapeRounding", d.m_OutputShapeRounding)
      << "; d.m_PaddingMethod = " << Enum("PaddingMethod", d.m_PaddingMethod)
      << "; d.m_DataLayout = " << Enum("DataLayout", d.m_DataLayout) << ";\n";
    Add(l, s.str(), "AddPooling2dLayer(d, " + Name(name) + ")");
  }
  void VisitReshapeLayer(const armnn::IConnectableLayer* l, const armnn::ReshapeDescriptor& d,
                         const char* name) override {
    Add(l, "    armnn::ReshapeDescriptor d(" + Shape(d.m_TargetShape) + ");\n",
        "AddReshapeLayer(d, " + Name(name) + ")");
  }
  void VisitConcatLayer(const armnn::IConnectableLayer* l, const armnn::OriginsDescriptor& d,
                        const char* name) override {
    std::ostringstream s;
    s << "    armnn::OriginsDescriptor d(" << d.GetNumViews() << ", " << d.GetNumDimensions()
      << ");\n    d.SetConcatAxis(" << d.GetConcatAxis() << ");\n";
    for (uint32_t v = 0; v < d.GetNumViews(); ++v) {
      for (uint32_t k = 0; k < d.GetNumDimensions(); ++k) {
        s << "    d.SetViewOriginCoord(" << v << ", " << k << ", " << d.GetViewOrigin(v)[k]
          << ");\n";
      }
    }
    Add(l, s.str(), "AddConcatLayer(d, " + Name(name) + ")");
  }

 private:
  int next_ = 0;
};

const char* ElementType(armnn::DataType t) {
  switch (t) {
    case armnn::DataType::QAsymmU8:
      return "uint8_t";
    case armnn::DataType::QAsymmS8:
      return "int8_t";
    default:
      return "float";
  }
}

}  // namespace

Reproducer WriteReproducer(const NativeRequest& r, const ReproducerCase& c,
                           const armnn::INetwork& net, const std::string& mode,
                           Precision precision) {
  Writer w;
  try {
    net.Accept(w);
  } catch (const armnn::Exception& e) {
    throw Unsupported(std::string("no reproducer for this network: ") + e.what());
  }
  std::ostringstream connect;
  std::map<std::string, armnn::DataType> output_type;  // by output layer name
  for (const armnn::IConnectableLayer* l : w.order) {
    const std::string& v = w.var.at(l->GetGuid());
    for (unsigned i = 0; i < l->GetNumOutputSlots(); ++i) {
      connect << "  " << v << "->GetOutputSlot(" << i << ").SetTensorInfo("
              << w.Info(l->GetOutputSlot(i).GetTensorInfo()) << ");\n";
    }
    for (unsigned i = 0; i < l->GetNumInputSlots(); ++i) {
      const armnn::IOutputSlot* from = l->GetInputSlot(i).GetConnection();
      if (!from) continue;
      connect << "  " << w.var.at(from->GetOwningLayerGuid()) << "->GetOutputSlot("
              << from->CalculateIndexOnOwner() << ").Connect(" << v << "->GetInputSlot(" << i
              << "));\n";
      if (l->GetNumOutputSlots() == 0)
        output_type[l->GetName()] = from->GetTensorInfo().GetDataType();
    }
  }
  // No failing output: the finding is Arm NN failing (an exception or status), which is then
  // what the program reproduces.
  const bool wrong_number = !c.output.empty();
  const std::string output = wrong_number ? c.output : r.graph.outputs.front();
  const std::string failing = "out:" + output;
  if (!w.outputs.count(failing)) throw Unsupported("the failing output has no output layer");
  const Tensor& expected = c.expected.at(output);
  const int fails = wrong_number ? 2 : 1;  // the exit status when Arm NN fails

  std::ostringstream p;
  p << "// fusefuzz finding on Arm NN (armnn:" << mode << "): " << c.title << "\n"
    << "// Written by fusefuzz's Arm NN pack (targets/armnn/repro_writer.cc): the INetwork its\n"
    << "// adapter built for the case, read back layer by layer, with the constants and inputs\n"
    << "// written in; Arm NN alone optimizes it for CpuRef and runs it. Build and run:\n"
    << "//   " << kBuild << "\n"
    << (wrong_number ? "// Exit status: 1 while output '" + c.output + "' element " +
                           std::to_string(c.index) +
                           " (NCHW) is farther from the\n// reference than fusefuzz's oracle "
                           "allows, 0 when it is not, 2 when Arm NN fails.\n"
                     : std::string("// Exit status: 1 while Arm NN fails on it, 0 when it "
                                   "runs.\n"))
    << "#include <armnn/ArmNN.hpp>\n#include <cmath>\n#include <cstdint>\n#include <cstdio>\n"
       "#include <string>\n#include <vector>\n\n"
    << "static armnn::TensorShape Shape(std::vector<unsigned int> d) {\n"
       "  return armnn::TensorShape(static_cast<unsigned int>(d.size()), d.data());\n}\n\n"
    << w.statics.str() << "\n";
  for (const ValueInfo& in : r.graph.inputs) {
    const Tensor& t = r.inputs.at(in.name);
    p << "// graph input '" << in.name << "', NCHW\nstatic std::vector<float> input_"
      << w.inputs.at(in.name) << " = {";
    for (size_t i = 0; i < t.data.size(); ++i)
      p << (i ? (i % 8 ? ", " : ",\n    ") : "") << F(t.data[i]);
    p << "};\n";
  }
  p << "// the reference of output '" << output << "' (fp64, rounded to float32), NCHW\n"
    << "static const float expected[] = {";
  for (size_t i = 0; i < expected.data.size(); ++i) {
    p << (i ? (i % 8 ? ", " : ",\n    ") : "") << F(expected.data[i]);
  }
  p << "};\n\nint main() {\n"
    << "  armnn::ConfigureLogging(false, false, armnn::LogSeverity::Fatal);\n"
    << "  armnn::IRuntimePtr rt = armnn::IRuntime::Create(armnn::IRuntime::CreationOptions());\n"
    << "  armnn::INetworkPtr net = armnn::INetwork::Create();\n"
    << w.layers.str() << connect.str() << "  armnn::OptimizerOptions o;\n  o.m_ReduceFp32ToFp16 = "
    << B(precision == Precision::kFloat16)
    << ";\n  o.m_ReduceFp32ToBf16 = " << B(precision == Precision::kBFloat16) << ";\n"
    << "  armnn::IOptimizedNetworkPtr opt(nullptr, nullptr);\n"
    << "  try {\n    opt = armnn::Optimize(*net, {armnn::Compute::CpuRef}, rt->GetDeviceSpec(), "
       "o);\n  } catch (const armnn::Exception& e) {\n"
    << "    std::printf(\"BUG: armnn::Optimize threw: %s\\n\", e.what());\n    return 1;\n  }\n"
    << "  if (!opt) {\n    std::fprintf(stderr, \"armnn::Optimize returned no network (is the "
       "CpuRef backend installed?)\\n\");\n    return 2;\n  }\n"
    << "  armnn::NetworkId id = 0;\n  std::string err;\n"
    << "  if (rt->LoadNetwork(id, std::move(opt), err) != armnn::Status::Success) {\n"
    << "    std::fprintf(stderr, \"LoadNetwork: %s\\n\", err.c_str());\n    return " << fails
    << ";\n  }\n"
    << "  armnn::InputTensors inputs;\n";
  for (const auto& [name, bind] : w.inputs) {
    p << "  // '" << name << "': quantized inputs are given as their integer values\n"
      << "  std::vector<uint8_t> bytes_" << bind << ";\n"
      << "  const armnn::TensorInfo info_" << bind << " = rt->GetInputTensorInfo(id, " << bind
      << ");\n"
      << "  const void* data_" << bind << " = input_" << bind << ".data();\n"
      << "  if (info_" << bind << ".GetDataType() != armnn::DataType::Float32) {\n"
      << "    for (float v : input_" << bind << ") bytes_" << bind
      << ".push_back(static_cast<uint8_t>(static_cast<int>(v)));\n"
      << "    data_" << bind << " = bytes_" << bind << ".data();\n  }\n"
      << "  inputs.push_back({" << bind << ", armnn::ConstTensor(info_" << bind << ", data_" << bind
      << ")});\n";
  }
  p << "  armnn::OutputTensors outputs;\n";
  for (const auto& [name, bind] : w.outputs) {
    const char* type =
        ElementType(output_type.count(name) ? output_type.at(name) : armnn::DataType::Float32);
    p << "  std::vector<" << type << "> out_" << bind << "(rt->GetOutputTensorInfo(id, " << bind
      << ").GetNumElements());  // '" << name << "'\n"
      << "  outputs.push_back({" << bind << ", armnn::Tensor(rt->GetOutputTensorInfo(id, " << bind
      << "), out_" << bind << ".data())});\n";
  }
  const int bind = w.outputs.at(failing);
  p << "  if (rt->EnqueueWorkload(id, inputs, outputs) != armnn::Status::Success) return " << fails
    << ";\n";
  const std::string buffer = "out_" + std::to_string(bind);
  p << (wrong_number ? VerdictTail("Arm NN", buffer, c.index, expected.data.size(), "NCHW", c)
                     : RanTail("Arm NN", buffer, output));
  return {{{kFile, p.str()}}, kBuild, ""};
}

}  // namespace fusefuzz::armnn_net
