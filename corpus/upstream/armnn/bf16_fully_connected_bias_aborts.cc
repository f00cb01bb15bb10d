// Arm NN 20.08 (Debian libarmnn-dev 20.08-12), CpuRef: armnn::Optimize with
// OptimizerOptions::m_ReduceFp32ToBf16 aborts on a FullyConnected layer with a bias. The
// reduction turns the weights into BFloat16 while the bias stays Float32, and the reference
// backend's layer support check asserts: "GetBiasTypeFromWeightsType(): Unsupported data
// type." (src/backends/backendsCommon/LayerSupportRules.hpp:33). Standalone: no fusefuzz. The
// optimization runs in a child process; exits 1 while the child dies of SIGABRT (the bug), 0
// when the network optimizes, 2 for anything else.
#include <sys/wait.h>
#include <unistd.h>

#include <armnn/ArmNN.hpp>
#include <csignal>
#include <cstdio>
#include <vector>

namespace {

armnn::TensorInfo Info(std::vector<unsigned int> d) {
  return armnn::TensorInfo(armnn::TensorShape(static_cast<unsigned int>(d.size()), d.data()),
                           armnn::DataType::Float32);
}

// x[1,4] -> FullyConnected(W[4,3], bias[3]) -> y[1,3], optimized for CpuRef in bf16.
int OptimizeInBf16() {
  armnn::ConfigureLogging(false, false, armnn::LogSeverity::Fatal);
  armnn::IRuntimePtr rt = armnn::IRuntime::Create(armnn::IRuntime::CreationOptions());
  armnn::INetworkPtr net = armnn::INetwork::Create();
  armnn::IConnectableLayer* in = net->AddInputLayer(0, "x");
  in->GetOutputSlot(0).SetTensorInfo(Info({1, 4}));
  std::vector<float> w(12, 0.5f), b(3, 0.25f);
  armnn::FullyConnectedDescriptor d;
  d.m_BiasEnabled = true;
  armnn::ConstTensor weights(Info({4, 3}), w.data());
  armnn::Optional<armnn::ConstTensor> bias(armnn::ConstTensor(Info({3}), b.data()));
  armnn::IConnectableLayer* fc = net->AddFullyConnectedLayer(d, weights, bias, "fc");
  fc->GetOutputSlot(0).SetTensorInfo(Info({1, 3}));
  in->GetOutputSlot(0).Connect(fc->GetInputSlot(0));
  armnn::IConnectableLayer* out = net->AddOutputLayer(0, "y");
  fc->GetOutputSlot(0).Connect(out->GetInputSlot(0));
  armnn::OptimizerOptions o;
  o.m_ReduceFp32ToBf16 = true;
  armnn::IOptimizedNetworkPtr opt =
      armnn::Optimize(*net, {armnn::Compute::CpuRef}, rt->GetDeviceSpec(), o);
  if (!opt) {
    std::fprintf(stderr, "armnn::Optimize returned no network (CpuRef backend installed?)\n");
    return 2;
  }
  return 0;
}

}  // namespace

int main() {
  const pid_t pid = fork();
  if (pid == 0) _exit(OptimizeInBf16());
  int status = 0;
  if (pid < 0 || waitpid(pid, &status, 0) != pid) return 2;
  if (WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT) {
    std::printf(
        "BUG: armnn::Optimize with m_ReduceFp32ToBf16 aborted on a FullyConnected layer "
        "with a bias\n");
    return 1;
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
    std::printf("fixed: the bf16 network optimizes\n");
    return 0;
  }
  return 2;
}
