// reproduce.py: the graph as a plain nn.Module with its weights (report/torch_module.h), the
// case's inputs and what fusefuzz's oracle admits at the failing output written in as literals,
// and the fixed Python of the mode (report/torch_script_py.h). It runs the optimized run and the
// unoptimized run exactly as the adapter does and exits 1 while the bug is there.
#include "report/torch_script.h"

#include <optional>
#include <sstream>
#include <vector>

#include "ir/error.h"
#include "kernels/reference/reference.h"
#include "report/py_literal.h"
#include "report/torch_module.h"
#include "report/torch_quant.h"
#include "report/torch_script_py.h"

namespace fusefuzz {

std::string PytorchMode(const std::string& target) {
  const std::optional<TargetSpec> spec = TargetSpec::Of(target);
  // A bare "pytorch" (its default mode) has never had a script: kept so.
  if (spec && spec->builtin("pytorch")) return spec->text() == spec->engine() ? "" : spec->mode();
  if (!spec || !spec->exec() || spec->command().find("fusefuzz_torch.py") == std::string::npos) {
    return "";
  }
  std::istringstream words(spec->command());
  std::string w, mode;
  while (words >> w) {
    if (w == "--mode") {
      words >> mode;
    } else if (w.rfind("--mode=", 0) == 0) {
      mode = w.substr(7);
    }
  }
  return mode;
}

namespace {

bool IsFloatMode(const std::string& m) {
  return m == "eager" || m == "fx" || m == "fuse_fx" || m == "fuse_modules" || m == "torchscript";
}
bool IsQuantFxMode(const std::string& m) {
  return m == "ptq_fx" || m == "ptq_fx_qnnpack" || m == "qat_fx";
}
bool IsQuantEagerMode(const std::string& m) {
  return m == "ptq_eager" || m == "ptq_eager_dataflow";
}

std::string PyList(const std::vector<std::string>& items) {
  std::string s = "[";
  for (size_t i = 0; i < items.size(); ++i) s += (i ? ", " : "") + items[i];
  return s + "]";
}

std::string PyParams(const QuantParams& p) {
  return "(" + PyStr(std::string(QuantTypeName(p.type))) + ", " + PyDouble(p.Scale(0)) + ", " +
         std::to_string(p.ZeroPoint(0)) + ")";
}

std::string PyDims(const Shape& s) {
  std::vector<std::string> d;
  for (int64_t v : s) d.push_back(std::to_string(v));
  return PyList(d);
}

// translate.py + fusefuzz_torch.py's declaration_order_groups: consecutive Conv2d, BatchNorm2d,
// ReLU modules in declaration order, whatever the data flow (the fuse_modules mode's lists).
std::vector<std::vector<std::string>> DeclarationOrderGroups(const TorchModule& m) {
  const std::vector<std::vector<std::string>> patterns = {{"Conv2d", "BatchNorm2d", "ReLU"},
                                                          {"Conv2d", "BatchNorm2d"},
                                                          {"Conv2d", "ReLU"},
                                                          {"BatchNorm2d", "ReLU"}};
  std::vector<std::vector<std::string>> groups;
  size_t i = 0;
  while (i < m.modules.size()) {
    bool matched = false;
    for (const auto& p : patterns) {
      if (i + p.size() > m.modules.size()) continue;
      bool all = true;
      for (size_t k = 0; k < p.size(); ++k) all = all && m.modules[i + k].cls == p[k];
      if (!all) continue;
      std::vector<std::string> g;
      for (size_t k = 0; k < p.size(); ++k) g.push_back(m.modules[i + k].attr);
      groups.push_back(g);
      i += p.size();
      matched = true;
      break;
    }
    if (!matched) ++i;
  }
  return groups;
}

// What the mode runs, in words, for the script's header.
std::string ModeWords(const std::string& mode) {
  if (mode == "torchscript") {
    return "torch.jit.optimize_for_inference(torch.jit.freeze(torch.jit.script(model))) vs the "
           "eager model";
  }
  if (mode == "fx") return "torch.fx.experimental.optimization.fuse(model) vs the eager model";
  if (mode == "fuse_fx") return "quantize_fx.fuse_fx(model) vs the eager model";
  if (mode == "fuse_modules") {
    return "fuse_modules(model, lists by declaration order) vs the eager model";
  }
  if (mode == "eager") return "the eager model twice";
  if (IsQuantEagerMode(mode)) {
    return std::string("fuse_modules with lists by declaration order") +
           (mode == "ptq_eager_dataflow" ? " cut to their data-flow chains" : "") +
           ", prepare, one calibration pass, convert on the onednn engine (QuantStub, "
           "FloatFunctional, DeQuantStub), with observers that answer the graph's scales and "
           "zero points, vs the same float model with the graph's quantization simulated by "
           "quantize_per_tensor/dequantize";
  }
  const std::string engine = mode == "ptq_fx_qnnpack" ? "qnnpack" : "onednn";
  const std::string flow = mode == "qat_fx" ? "prepare_qat_fx, 3 train steps at learning rate 0"
                                            : "prepare_fx, one calibration pass";
  return flow + ", convert_fx on the " + engine +
         " engine, with observers that answer the graph's scales and zero points, vs the same "
         "float model with the graph's quantization simulated by quantize_per_tensor/dequantize";
}

}  // namespace

namespace {

std::string Script(const Repro& r, int64_t max_elements) {
  const std::string mode = PytorchMode(r.target);
  const bool quant = IsQuantFxMode(mode) || IsQuantEagerMode(mode);
  if (!quant && !IsFloatMode(mode)) return "";
  const bool mismatch =
      r.kind == FindingKind::kFusion && !r.worst.output.empty() && r.worst.index >= 0;
  const bool error = r.kind == FindingKind::kTargetError && r.failing_run != "unoptimized";
  const bool unquantized = r.kind == FindingKind::kUnquantized && IsQuantFxMode(mode);
  if (!mismatch && !error && !unquantized) return "";
  int64_t total = 0;
  for (const auto& [name, t] : r.inputs) total += t.size();
  for (const auto& n : r.graph.nodes) {
    for (const auto& [k, t] : n.params) total += t.size();
  }
  if (total > max_elements) return "";  // before running the reference on a whole model

  TorchModule m;
  TorchQuantSplit split;
  std::ostringstream data;
  try {
    if (quant) {
      split = SplitQuantGraph(r.graph);
      m = EmitTorchModule(split.float_graph);
      // The flows trace the model: a decomposition class would be traced through, and the
      // calls would no longer be the forward's lines.
      if (m.uses_helpers) return "";
    } else {
      m = EmitTorchModule(r.graph);
    }
  } catch (const std::exception&) {
    return "";  // an op or attribute the script does not translate (the adapter refuses it)
  }

  int failing = -1;
  for (size_t i = 0; i < r.graph.outputs.size(); ++i) {
    if (r.graph.outputs[i] == r.worst.output) failing = static_cast<int>(i);
  }
  std::vector<std::string> reference, lo, hi;
  Shape dims;
  bool grid = false;
  if (mismatch) {
    if (failing < 0) return "";
    try {
      RefTensorMap ref = RunReference(r.graph, r.inputs);
      const RefTensor& t = ref.at(r.worst.output);
      grid = !t.grid_t.empty();
      dims = t.shape;
      total += static_cast<int64_t>(t.value.size());
      if (total > max_elements || r.worst.index >= static_cast<int64_t>(t.value.size())) {
        return "";
      }
      for (size_t i = 0; i < t.value.size(); ++i) {
        if (grid) {
          const auto [l, h] = AdmittedRange(t.grid_t[i], t.grid_e[i], t.grid_qmin, t.grid_qmax);
          reference.push_back(PyDouble(t.grid_t[i]));
          lo.push_back(PyDouble(l));
          hi.push_back(PyDouble(h));
        } else {
          reference.push_back(PyFloat32(static_cast<float>(t.value[i])));
        }
      }
    } catch (const std::exception&) {
      return "";
    }
  }

  std::ostringstream py;
  py << "#!/usr/bin/python3\n"
     << "# PyTorch alone reproduces this fusefuzz finding (written by fusefuzz; no fusefuzz, no "
        "adapter needed):\n#   /usr/bin/python3 reproduce.py\n"
     << "# Target pytorch:" << mode << ": " << ModeWords(mode) << ".\n"
     << "# The graph is the nn.Module Graph below, with its weights and the case's inputs.\n";
  if (mismatch) {
    py << "# Exit 1 while the bug is there: at the failing output's worst element the optimized "
          "run is outside\n# what fusefuzz's "
       << OracleKindName(r.oracle.kind) << " oracle admits and the unoptimized run is not.\n";
  } else if (error) {
    py << "# Exit 1 while the bug is there: the optimized run raises, the unoptimized one does "
          "not.\n";
  } else {
    py << "# Exit 1 while the bug is there: a module the backend config promises to quantize "
          "runs in float or\n# reference form after convert_fx.\n";
  }
  py << "# Exit 0 when it is not, 2 when a run fails otherwise (the script cannot tell).\n"
     << kTorchScriptPrologue << m.source << "\n";

  // The finding's data: literals only.
  std::vector<std::string> inputs, input_names, output_names, node_of, input_vars;
  for (const auto& in : r.graph.inputs) {
    auto it = r.inputs.find(in.name);
    if (it == r.inputs.end()) return "";
    inputs.push_back(PyTensor(it->second));
    input_names.push_back(PyStr(in.name));
  }
  for (const auto& o : r.graph.outputs) output_names.push_back(PyStr(o));
  for (const auto& mod : m.modules) {
    const auto origin = split.origin.find(mod.graph_node);
    node_of.push_back("'" + mod.attr + "': " +
                      PyStr(origin == split.origin.end() ? mod.graph_node : origin->second));
  }
  for (const auto& v : m.input_vars) input_vars.push_back("'" + v + "'");
  py << "MODE = '" << mode << "'\nKIND = '" << FindingKindName(r.kind) << "'\n"
     << "INPUT_NAMES = " << PyList(input_names) << "\n"
     << "OUTPUT_NAMES = " << PyList(output_names) << "\n"
     << "NODE_OF_MODULE = {" <<
      [&] {
        std::string s;
        for (size_t i = 0; i < node_of.size(); ++i) s += (i ? ", " : "") + node_of[i];
        return s;
      }()
     << "}\n"
     << "INPUTS = " << PyList(inputs) << "\n"
     << "INPUT_VARS = " << PyList(input_vars) << "\n";
  if (mismatch) {
    py << "FAILING = " << failing << "\nDIMS = " << PyDims(dims) << "\nWORST = " << r.worst.index
       << "\nBOUND = " << PyDouble(r.worst.bound) << "\nGRID = " << (grid ? "True" : "False")
       << "\nREFERENCE = " << PyList(reference) << "\nLO = " << PyList(lo)
       << "\nHI = " << PyList(hi) << "\n";
  }
  if (!quant) {
    std::vector<std::string> groups;
    if (mode == "fuse_modules") {
      auto g = DeclarationOrderGroups(m);
      if (r.opt.bisect_limit >= 0 && static_cast<size_t>(r.opt.bisect_limit) < g.size()) {
        g.resize(static_cast<size_t>(r.opt.bisect_limit));
      }
      for (const auto& grp : g) {
        std::vector<std::string> names;
        for (const auto& a : grp) names.push_back("'" + a + "'");
        groups.push_back(PyList(names));
      }
    }
    py << "GROUPS = " << PyList(groups) << "\n" << kTorchFloatFlows;
  } else {
    std::vector<std::string> points, commuting, grids, weight_modules, calls;
    auto var = [&](const std::string& value) { return "'" + m.var_of.at(value) + "'"; };
    for (const auto& [v, p] : split.points) points.push_back(var(v) + ": " + PyParams(p));
    for (const auto& [v, next] : split.commuting_successor) {
      commuting.push_back(var(v) + ": " + var(next));
    }
    for (const auto& mod : m.modules) {
      if (mod.cls != "Conv2d" && mod.cls != "Linear") continue;
      weight_modules.push_back("'" + mod.attr + "'");
      auto w = split.weights.find(mod.graph_node);
      if (w == split.weights.end()) continue;
      std::vector<std::string> scales;
      for (double s : w->second.scale) scales.push_back(PyDouble(s));
      grids.push_back("'" + mod.attr + "': (" + PyList(scales) + ", " +
                      (w->second.PerAxis() ? "True" : "False") + ")");
    }
    for (size_t k = 0; k < m.calls.size(); ++k) {
      calls.push_back(m.calls[k].empty() ? "None" : "'t" + std::to_string(k) + "'");
    }
    std::vector<std::string> int_in, int_out, dq_out;
    for (size_t i = 0; i < r.graph.inputs.size(); ++i) {
      auto it = split.int_inputs.find(r.graph.inputs[i].name);
      if (it != split.int_inputs.end())
        int_in.push_back(std::to_string(i) + ": " + PyParams(it->second));
    }
    for (size_t i = 0; i < r.graph.outputs.size(); ++i) {
      auto io = split.int_outputs.find(r.graph.outputs[i]);
      if (io != split.int_outputs.end()) {
        int_out.push_back(std::to_string(i) + ": " + PyParams(io->second.second));
      }
      auto dq = split.dq_outputs.find(r.graph.outputs[i]);
      if (dq != split.dq_outputs.end())
        dq_out.push_back(std::to_string(i) + ": " + PyParams(dq->second));
    }
    auto dict = [](const std::vector<std::string>& items) {
      std::string s = "{";
      for (size_t i = 0; i < items.size(); ++i) s += (i ? ", " : "") + items[i];
      return s + "}";
    };
    if (IsQuantEagerMode(mode)) {
      // quant_eager.py: the declaration-order lists; past LIMIT each is cut to its data-flow
      // chain (ptq_eager_dataflow: all of them).
      std::vector<std::string> groups;
      for (const auto& grp : DeclarationOrderGroups(m)) {
        std::vector<std::string> names;
        for (const auto& a : grp) names.push_back("'" + a + "'");
        groups.push_back(PyList(names));
      }
      py << "GROUPS = " << PyList(groups)
         << "\nLIMIT = " << (mode == "ptq_eager_dataflow" ? 0 : r.opt.bisect_limit) << "\n";
    }
    py << "POINTS = " << dict(points) << "\nCOMMUTING = " << dict(commuting)
       << "\nWEIGHT_GRIDS = " << dict(grids) << "\nWEIGHT_MODULES = " << PyList(weight_modules)
       << "\nCALLS = " << PyList(calls) << "\nINT_INPUTS = " << dict(int_in)
       << "\nINT_OUTPUTS = " << dict(int_out) << "\nDQ_OUTPUTS = " << dict(dq_out) << "\n"
       << kTorchQuantFlows;
  }
  py << kTorchVerdict;
  return py.str();
}

}  // namespace

std::string TorchReproScript(const Repro& r, int64_t max_elements) {
  // A script is a convenience of the finding folder: what the generator cannot write (a value
  // it has no variable for, an attribute of another type) leaves the folder without one.
  try {
    return Script(r, max_elements);
  } catch (const std::exception&) {
    return "";
  }
}

}  // namespace fusefuzz
