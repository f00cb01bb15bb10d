// fusefuzz-xnnpack-target: XNNPACK's subgraph API behind fusefuzz's protocol
// (targets/xnnpack/README.md): the hello and runs of engine.h, served line by line.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <set>

#include "targets/native_server.h"
#include "targets/xnnpack/engine.h"
#include "targets/xnnpack/repro_writer.h"

namespace fusefuzz {
namespace {

int Main(int argc, char** argv) {
  std::string mode = "fp32";
  CLI::App app{"XNNPACK behind fusefuzz's target protocol (targets/xnnpack/README.md)",
               "fusefuzz-xnnpack-target"};
  app.add_option("--mode", mode, "fp32 | int8")->check(CLI::IsMember({"fp32", "int8"}));
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
  const bool int8 = mode == "int8";
  const nlohmann::json hello = xnnpack::Hello(int8);
  // Initialised before the hello: a machine XNNPACK refuses says so at once, on stderr.
  if (std::string e = xnnpack::Initialize(); !e.empty()) {
    std::fprintf(stderr, "fusefuzz-xnnpack-target: xnn_initialize: %s\n", e.c_str());
    return 1;
  }
  const NativeBackend run = [int8](const NativeRequest& r) { return xnnpack::Run(r, int8); };
  return ServeNative(hello, run, crash,
                     [int8, &run](const NativeRequest& r, const ReproducerCase& c) {
                       return xnnpack::WriteReproducer(r, c, int8, run);
                     });
}

}  // namespace
}  // namespace fusefuzz

int main(int argc, char** argv) { return fusefuzz::Main(argc, argv); }
