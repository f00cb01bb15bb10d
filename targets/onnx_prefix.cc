#include "targets/onnx_prefix.h"

#include <cstdlib>
#include <filesystem>
#include <system_error>

#include "ir/error.h"
#include "ir/json_io.h"
#include "onnx/export.h"
#include "onnx/import.h"
#include "onnx/tensor_proto.h"
#include "targets/builtin_targets.h"
#include "targets/subprocess.h"

namespace fusefuzz {
namespace {

namespace fs = std::filesystem;

// A folder of our own under the system's temporary directory, removed when it goes out of scope.
class TempFolder {
 public:
  TempFolder() {
    std::error_code ec;
    std::string pattern = (fs::temp_directory_path(ec) / "fusefuzz-prefix-XXXXXX").string();
    if (ec || !mkdtemp(pattern.data())) {
      throw OutputError("temporary folder", "cannot create " + pattern);
    }
    path_ = pattern;
  }
  ~TempFolder() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  TempFolder(const TempFolder&) = delete;
  TempFolder& operator=(const TempFolder&) = delete;
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

}  // namespace

TensorMap OnnxRuntimeValues(std::string_view model_bytes, const std::string& source,
                            const std::vector<ValueInfo>& model_inputs, const TensorMap& inputs,
                            const std::vector<ValueInfo>& values, double timeout_seconds) {
  TempFolder dir;
  WriteFileAtomic((dir.path() / "model.onnx").string(),
                  OnnxModelWithOutputs(model_bytes, source, values));
  const fs::path set = dir.path() / "test_data_set_0";
  fs::create_directories(set);
  for (size_t i = 0; i < model_inputs.size(); ++i) {
    auto it = inputs.find(model_inputs[i].name);
    if (it == inputs.end())
      throw InputError(source, "no value for input '" + model_inputs[i].name + "'");
    WriteFileAtomic((set / ("input_" + std::to_string(i) + ".pb")).string(),
                    EncodeTensorProto(model_inputs[i].name, it->second));
  }
  // The command holds only our own paths: the adapters' folder and the temporary folder.
  const std::string command = "node " + ShellQuote(TargetsDir() + "/onnxruntime/run-model.js") +
                              " --level disabled " + ShellQuote(dir.path().string());
  std::string error;
  std::unique_ptr<Subprocess> proc = Subprocess::Start(command, &error);
  if (!proc) throw InputError(source, "cannot run ONNX Runtime: " + error);
  const Deadline deadline = std::chrono::steady_clock::now() +
                            std::chrono::milliseconds(static_cast<int64_t>(timeout_seconds * 1000));
  std::string line;
  Subprocess::Io io;
  while ((io = proc->ReadLine(&line, deadline, 1 << 20)) == Subprocess::Io::kOk) {
  }
  if (io == Subprocess::Io::kTimeout) {
    proc->Kill();
    throw InputError(source, "ONNX Runtime gave no result within " +
                                 std::to_string(static_cast<int64_t>(timeout_seconds)) + " s");
  }
  const std::string how = proc->WaitForExit(5.0);
  if (how != "exited with status 0") {
    throw InputError(source, "ONNX Runtime could not run the model's prefix (run-model.js " + how +
                                 "): " + proc->StderrTail());
  }
  std::vector<std::string> names;
  for (const ValueInfo& v : values) names.push_back(v.name);
  return ReadBackendTestData((set / "ort_disabled").string(), names, "output");
}

}  // namespace fusefuzz
