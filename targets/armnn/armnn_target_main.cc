// fusefuzz-armnn-target: Arm NN 20.08 behind fusefuzz's protocol (targets/armnn/README.md): the
// hello and runs of engine.h, served line by line.
#include <CLI/CLI.hpp>
#include <armnn/ArmNN.hpp>
#include <cstdio>
#include <set>

#include "targets/armnn/engine.h"
#include "targets/native_server.h"

namespace fusefuzz {
namespace {

int Main(int argc, char** argv) {
  std::string mode = "fp32";
  CLI::App app{"Arm NN (CpuRef) behind fusefuzz's target protocol (targets/armnn/README.md)",
               "fusefuzz-armnn-target"};
  app.add_option("--mode", mode, "fp32, fp16, bf16 or int8")
      ->check(CLI::IsMember({"fp32", "fp16", "bf16", "int8"}));
  std::vector<std::string> crash_on;
  app.add_option("--crash-on", crash_on, "abort() on a graph with this op (a test switch)")
      ->delimiter(',');
  CLI11_PARSE(app, argc, argv);
  std::set<Op> crash;
  try {
    crash = OpsFromNames(crash_on);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 2;
  }
  armnn::ConfigureLogging(false, false, armnn::LogSeverity::Fatal);
  armnn_net::Engine server(armnn_net::ModeNamed(mode));
  return ServeNative(
      armnn_net::Hello(armnn_net::ModeNamed(mode)),
      [&](const NativeRequest& r) { return server.Run(r); }, crash,
      [&](const NativeRequest& r, const ReproducerCase& c) { return server.Repro(r, c); });
}

}  // namespace
}  // namespace fusefuzz

int main(int argc, char** argv) { return fusefuzz::Main(argc, argv); }
