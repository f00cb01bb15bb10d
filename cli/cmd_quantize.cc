// `fusefuzz quantize MODEL.onnx -o OUT.onnx [--calibration-inputs N] [--seed S]
// [--method minmax|percentile]`: static post-training quantization of a float ONNX model into a
// QDQ model, as ONNX Runtime's quantization tool does it (docs/quantization.md).
#include <cstdio>
#include <map>
#include <memory>
#include <string>

#include "cli/cli.h"
#include "ir/error.h"
#include "ir/json_io.h"
#include "onnx/export.h"
#include "onnx/import.h"
#include "onnx/validate.h"
#include "quant_tool/quantize.h"

namespace fusefuzz {
namespace {

struct QuantizeCmdOptions {
  std::string model;
  std::string output;
  QuantizeOptions q;
  CalibrationMethod method = CalibrationMethod::kMinMax;
  std::vector<std::string> calibration_files;  // --calibration-data
};

}  // namespace

void RegisterQuantize(Cli& cli) {
  auto o = std::make_shared<QuantizeCmdOptions>();
  auto* cmd = cli.app.add_subcommand(
      "quantize",
      "Static post-training quantization of a float ONNX model into QDQ form (per-channel int8 "
      "weights, uint8 activations calibrated on seeded inputs, int32 biases)");
  cmd->add_option("model", o->model, "float ONNX model (.onnx)")->required();
  cmd->add_option("-o,--output", o->output, "write the QDQ model here")->required();
  auto* seeded = cmd->add_option("--calibration-inputs", o->q.calibration_inputs,
                                 "calibrate on this many seeded inputs (seeds S, S+1, ...)")
                     ->capture_default_str();
  auto* seed = cmd->add_option("--seed", o->q.seed, "seed of the first calibration input")
                   ->capture_default_str()
                   ->check(kSeed);
  cmd->add_option("--calibration-data", o->calibration_files,
                  "calibrate on real inputs instead: a tensors JSON file with every model input "
                  "(as check --inputs reads); repeat for more samples")
      ->excludes(seeded)
      ->excludes(seed);
  const std::map<std::string, CalibrationMethod> methods = {
      {"minmax", CalibrationMethod::kMinMax}, {"percentile", CalibrationMethod::kPercentile}};
  cmd->add_option("--method", o->method, "activation ranges: minmax or percentile")
      ->transform(CLI::CheckedTransformer(methods, CLI::ignore_case))
      ->capture_default_str();
  const std::map<std::string, QuantizeFlavor> flavors = {
      {"onnxruntime", QuantizeFlavor::kOnnxRuntime}, {"pytorch", QuantizeFlavor::kPyTorch}};
  cmd->add_option("--flavor", o->q.flavor,
                  "whose quantization to imitate: onnxruntime (quantize_static's QDQ placement) "
                  "or pytorch (the points PyTorch's eager/FX flows quantize: also Linear, pools "
                  "and Flatten on their input's grid, per_channel_symmetric weights)")
      ->transform(CLI::CheckedTransformer(flavors, CLI::ignore_case))
      ->default_str("onnxruntime");
  auto* percentile = cmd->add_option("--percentile", o->q.percentile,
                                     "with --method percentile: the range is [P(100 - p), P(p)]")
                         ->capture_default_str();
  cmd->add_flag("--integer-outputs", o->q.integer_outputs,
                "end every graph output with a QuantizeLinear: the model answers uint8 integers, "
                "which check judges on their grid (in steps)");
  cmd->add_flag("--reduce-range", o->q.reduce_range,
                "weights on 7 bits, [-64, 64] (ONNX Runtime's reduce_range): exact on u8s8 kernels "
                "without VNNI, whose int16 pair sums saturate on full-range weights");
  cmd->callback([o, &cli, percentile] {
    o->q.method = o->method;
    // Given and ignored would be a silent change: minmax takes no percentile.
    if (percentile->count() > 0 && o->method != CalibrationMethod::kPercentile) {
      throw InputError("--percentile",
                       "only with --method percentile (the default, minmax, uses "
                       "the whole range)");
    }
    const Graph g = ImportOnnxFile(o->model);
    for (const std::string& file : o->calibration_files) {
      o->q.calibration_data.push_back(ReadTensorsFile(file));
      CheckTensorsForGraph(g, o->q.calibration_data.back(), file);
    }
    QuantizeSummary sum;
    Graph q;
    try {
      q = QuantizeStatic(g, o->q, &sum);
    } catch (const InputError& e) {
      // An option's error names the option; anything else is about this model.
      if (e.where().starts_with("--")) throw;
      throw InputError(e.where().empty() ? o->model : o->model + ": " + e.where(), e.problem());
    }
    OnnxExportOptions opts;
    opts.doc = "quantized by fusefuzz quantize";
    const OnnxModel m = ExportOnnx(q, opts);
    if (std::string why = CheckOnnxModel(m.bytes, !PoolShapesPredateLibonnx(q)); !why.empty()) {
      // Our own output is wrong: not the user's input.
      std::fprintf(stderr, "fusefuzz: error: libonnx rejects the quantized model: %s\n",
                   why.c_str());
      cli.exit_code = 1;
      return;
    }
    MakeParentFolders(o->output);
    WriteFileAtomic(o->output, m.bytes);
    for (const std::string& note : sum.notes) std::fprintf(stderr, "quantize: %s\n", note.c_str());
    std::printf(
        "%s: %lld conv(s)%s with int8 per-channel weights%s, %lld activation(s) quantized to "
        "uint8 (%s on %d input(s), %s), %lld float bias(es)\n",
        o->output.c_str(), static_cast<long long>(sum.convs),
        sum.gemms > 0 ? (" and " + std::to_string(sum.gemms) + " gemm(s)").c_str() : "",
        o->q.reduce_range ? " (7-bit)" : "", static_cast<long long>(sum.activations),
        o->q.method == CalibrationMethod::kMinMax ? "minmax" : "percentile",
        o->q.calibration_data.empty() ? o->q.calibration_inputs
                                      : static_cast<int>(o->q.calibration_data.size()),
        o->q.calibration_data.empty() ? ("seed " + std::to_string(o->q.seed)).c_str()
                                      : "from --calibration-data",
        static_cast<long long>(sum.float_biases));
  });
}

}  // namespace fusefuzz
