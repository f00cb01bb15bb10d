#include "targets/opencv/opencv_net.h"

#include <map>
#include <opencv2/core/utils/logger.hpp>
#include <opencv2/dnn/all_layers.hpp>
#include <set>

#include "ir/error.h"
#include "onnx/export.h"
#include "targets/opencv/faithful.h"
#include "targets/opencv/int8_check.h"

namespace fusefuzz::opencv {
namespace {

// The layer pairs fuseLayers merges on the CPU with the ops the pack declares, host first, as
// `fusefuzz coverage --target opencv:MODE` saw them fire (targets/opencv/README.md), plus the few
// its code also accepts that no campaign has fired yet (listed as never fired, not hidden).
const std::vector<std::pair<std::string, std::vector<std::string>>> kFusions = {
    {"Convolution",
     {"BatchNorm", "Scale", "Identity", "ReLU", "ELU", "Sigmoid", "TanH", "HardSwish", "Power",
      "PReLU"}},
    {"InnerProduct",
     {"BatchNorm", "ReLU", "ELU", "Sigmoid", "TanH", "HardSwish", "Power", "PReLU"}},
    {"Eltwise", {"BatchNorm", "ReLU", "ELU", "Sigmoid", "TanH", "HardSwish", "Power", "PReLU"}},
    {"BatchNorm", {"BatchNorm", "Scale", "ReLU", "ELU", "Sigmoid", "TanH", "HardSwish", "Power"}},
    {"Pooling", {"BatchNorm", "ReLU"}},
    {"Scale", {"ReLU"}},
    {"Concat", {"BatchNorm", "Identity", "ReLU"}},
    {"Power", {"BatchNorm", "Power"}},
};
constexpr char kLayerPrefix[] = "onnx_node!";

cv::Mat InputMat(const Tensor& t) {
  std::vector<int> dims(t.shape.begin(), t.shape.end());
  if (dims.size() < 2) dims.insert(dims.begin(), 2 - dims.size(), 1);
  // OpenCV reads the data in place during setInput (it copies into its own blob).
  return cv::Mat(static_cast<int>(dims.size()), dims.data(), CV_32F,
                 const_cast<float*>(t.data.data()));
}

}  // namespace

// OpenCV's output as a tensor: the graph's shape when OpenCV's has the same extents apart from
// ones (it keeps rank 4 where ONNX drops unit axes), else its own shape, judged as a mismatch.
Tensor OutputTensor(const cv::Mat& m, const Shape& expected) {
  cv::Mat f;
  m.convertTo(f, CV_32F);
  if (!f.isContinuous()) f = f.clone();
  Shape got;
  for (int i = 0; i < f.dims; ++i) got.push_back(f.size[i]);
  auto squeeze = [](const Shape& s) {
    Shape out;
    for (int64_t d : s) {
      if (d != 1) out.push_back(d);
    }
    return out;
  };
  const Shape shape = squeeze(got) == squeeze(expected) ? expected : got;
  const float* p = f.ptr<float>();
  return Tensor(shape, std::vector<float>(p, p + f.total()));
}

namespace {

struct Cluster {
  std::vector<std::pair<std::string, std::string>> layers;  // (name, type), host first
};

// The boxes of Net::dump() that hold more than one layer: `label="{name\nType\n... | ...}"`.
std::vector<Cluster> DumpClusters(const std::string& dot) {
  std::vector<Cluster> out;
  const std::string open = "[label=\"{";
  for (size_t at = dot.find(open); at != std::string::npos; at = dot.find(open, at + 1)) {
    const size_t begin = at + open.size();
    const size_t end = dot.find("}\"", begin);
    if (end == std::string::npos) break;
    const std::string label = dot.substr(begin, end - begin);
    Cluster c;
    size_t part = 0;
    while (part <= label.size()) {
      size_t next = label.find(" | ", part);
      if (next == std::string::npos) next = label.size();
      const std::string p = label.substr(part, next - part);
      const size_t nl1 = p.find("\\n");
      const size_t nl2 = nl1 == std::string::npos ? nl1 : p.find("\\n", nl1 + 2);
      if (nl2 != std::string::npos)
        c.layers.push_back({p.substr(0, nl1), p.substr(nl1 + 2, nl2 - nl1 - 2)});
      part = next + 3;
    }
    if (c.layers.size() > 1) out.push_back(std::move(c));
  }
  return out;
}

}  // namespace

std::vector<std::string> DeclaredFusions(bool int8) {
  std::vector<std::string> out;
  // Net::quantize replaces each layer with its int8 version ("ConvolutionInt8"); Power has none.
  auto type = [int8](const std::string& t) { return int8 && t != "Power" ? t + "Int8" : t; };
  for (const auto& [host, merged] : kFusions) {
    for (const std::string& m : merged) {
      if (!(int8 && m == "HardSwish")) out.push_back(type(host) + "+" + type(m));
    }
  }
  out.push_back(type("Concat") + " (in place)");
  return out;
}

std::string NodeOfLayer(const std::string& layer) {
  std::string n =
      layer.rfind(kLayerPrefix, 0) == 0 ? layer.substr(sizeof(kLayerPrefix) - 1) : layer;
  // A decomposition's nodes are "<node>/<step>" (onnx/export.h).
  if (const size_t slash = n.find('/'); slash != std::string::npos) n = n.substr(0, slash);
  return n;
}

std::string ModelBytes(const Graph& g) {
  OnnxExportOptions o;
  o.record_nodes = false;  // OpenCV ignores metadata; keep the model small
  try {
    return ExportOnnx(g, o).bytes;
  } catch (const InputError& e) {
    throw Unsupported(std::string("fusefuzz's ONNX export refuses the graph: ") + e.what());
  }
}

cv::dnn::Net ImportNet(const std::string& onnx) {
  try {
    cv::dnn::Net net = cv::dnn::readNetFromONNX(onnx.data(), onnx.size());
    net.setPreferableBackend(cv::dnn::DNN_BACKEND_OPENCV);
    net.setPreferableTarget(cv::dnn::DNN_TARGET_CPU);
    return net;
  } catch (const cv::Exception& e) {
    throw Unsupported(std::string("OpenCV's ONNX importer refuses the model: ") + e.what());
  }
}

cv::dnn::Net QuantizedNet(cv::dnn::Net& net, const NativeRequest& r) {
  net.enableFusion(false);
  std::vector<cv::Mat> calibration;
  for (const ValueInfo& in : r.graph.inputs) calibration.push_back(InputMat(r.inputs.at(in.name)));
  try {
    cv::dnn::Net q = calibration.size() == 1 ? net.quantize(calibration[0], CV_32F, CV_32F)
                                             : net.quantize(calibration, CV_32F, CV_32F);
    q.setPreferableBackend(cv::dnn::DNN_BACKEND_OPENCV);
    q.setPreferableTarget(cv::dnn::DNN_TARGET_CPU);
    return q;
  } catch (const cv::Exception& e) {
    throw Unsupported(std::string("OpenCV's Net::quantize refuses the net: ") + e.what());
  }
}

std::vector<Rewrite> ObservedFusions(cv::dnn::Net& net) {
  const std::vector<std::string> names = net.getLayerNames();
  std::vector<double> times;
  net.getPerfProfile(times);
  std::map<std::string, std::pair<std::string, std::string>> host_of;  // layer -> (host, host type)
  for (const Cluster& c : DumpClusters(net.dump())) {
    for (size_t i = 1; i < c.layers.size(); ++i) host_of[c.layers[i].first] = c.layers[0];
  }
  std::vector<Rewrite> out;
  for (size_t i = 0; i < names.size() && i < times.size(); ++i) {
    if (times[i] != 0) continue;  // ran: not skipped by fuseLayers
    const cv::Ptr<cv::dnn::Layer> layer = net.getLayer(names[i]);
    const std::string type = layer->type;
    Rewrite rw;
    rw.index = static_cast<int>(out.size()) + 1;
    if (type == "Concat" || type == "ConcatInt8") {
      // Dump() draws a Concat done in place inside its input's box; it fused nothing into it.
      rw.rule = type + " (in place)";
      rw.nodes = {NodeOfLayer(names[i])};
    } else if (auto h = host_of.find(names[i]); h != host_of.end()) {
      rw.rule = h->second.second + "+" + type;
      rw.nodes = {NodeOfLayer(h->second.first), NodeOfLayer(names[i])};
    } else {
      continue;  // not a fusion (a layer OpenCV skips for another reason)
    }
    out.push_back(std::move(rw));
  }
  return out;
}

Forwarded Forward(const NativeRequest& r, const std::string& onnx, bool int8, bool fuse,
                  bool bench) {
  cv::dnn::Net net = ImportNet(onnx);
  if (int8) net = QuantizedNet(net, r);
  net.enableFusion(fuse);
  for (const ValueInfo& in : r.graph.inputs) net.setInput(InputMat(r.inputs.at(in.name)), in.name);
  std::vector<cv::String> outs(r.graph.outputs.begin(), r.graph.outputs.end());
  Forwarded f;
  auto run = [&] { net.forward(f.outs, outs); };
  if (bench) {
    f.timings = TimeRuns(r.bench_warmup, r.bench_runs, run);
  } else {
    run();
  }
  if (fuse) f.rewrites = ObservedFusions(net);
  return f;
}

NativeAnswer Run(const NativeRequest& r, bool int8, bool refuse) {
  if (!r.pipeline.empty()) throw Unsupported("OpenCV's fuseLayers has no pipeline to reorder");
  if (!r.inject.empty()) throw Unsupported("no faults to inject into OpenCV");
  if (refuse) RefuseUnfaithful(r);
  cv::utils::logging::setLogLevel(cv::utils::logging::LOG_LEVEL_SILENT);
  cv::setNumThreads(r.threads);
  const std::string onnx = ModelBytes(r.graph);
  if (int8) return RunInt8(r, onnx);
  Forwarded f;
  try {
    f = Forward(r, onnx, false, r.optimize, r.bench_runs > 0);
  } catch (const cv::Exception& e) {
    // OpenCV checks shapes and parameters when it first allocates the layers: a net it refuses
    // without fusion is a refusal; one that fails only with fusion is the fusion's failure.
    if (!r.optimize) throw Unsupported(std::string("OpenCV refuses to run the net: ") + e.what());
    try {
      Forward(r, onnx, false, false, false);
    } catch (const cv::Exception& plain) {
      throw Unsupported(std::string("OpenCV refuses to run the net: ") + plain.what());
    }
    throw std::runtime_error(std::string("OpenCV fails with fusion on only: ") + e.what());
  }
  NativeAnswer a;
  a.rewrites = std::move(f.rewrites);
  a.timings = f.timings;
  for (size_t i = 0; i < r.graph.outputs.size() && i < f.outs.size(); ++i) {
    const std::string& o = r.graph.outputs[i];
    a.outputs[o] = OutputTensor(f.outs[i], r.shapes.at(o));
  }
  return a;
}

}  // namespace fusefuzz::opencv
