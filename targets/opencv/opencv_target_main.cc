// fusefuzz-opencv-target: OpenCV DNN 4.6 behind fusefuzz's protocol (targets/opencv/README.md).
// Each request's graph goes to OpenCV as the ONNX model fusefuzz exports for every ONNX engine
// (opencv_net.h); the unoptimized run is the same Net with Net::enableFusion(false). OpenCV has
// no switch for single fusions, so the pack declares neither `disable` nor `bisect_limit`: blame
// is fusion on against fusion off, and the rewrites name what fused into what.
#include <CLI/CLI.hpp>
#include <cstdio>

#include "targets/native_server.h"
#include "targets/opencv/engine.h"
#include "targets/opencv/opencv_net.h"
#include "targets/opencv/repro_writer.h"

namespace fusefuzz {
namespace {

int Main(int argc, char** argv) {
  std::string mode = "fp32";
  CLI::App app{"OpenCV DNN behind fusefuzz's target protocol (targets/opencv/README.md)",
               "fusefuzz-opencv-target"};
  app.add_option("--mode", mode, "fp32 | int8")->check(CLI::IsMember({"fp32", "int8"}));
  std::vector<std::string> crash_on;
  app.add_option("--crash-on", crash_on, "abort() on a graph with this op (a test switch)")
      ->delimiter(',');
  bool no_refusals = false;
  app.add_flag("--no-refusals", no_refusals,
               "run what faithful.cc refuses, to see OpenCV's values for it (a test switch)");
  CLI11_PARSE(app, argc, argv);
  std::set<Op> crash;
  try {
    crash = OpsFromNames(crash_on);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 2;
  }
  const bool int8 = mode == "int8";
  const nlohmann::json hello = opencv::Hello(int8);
  const NativeBackend run = [int8, no_refusals](const NativeRequest& r) {
    return opencv::Run(r, int8, !no_refusals);
  };
  return ServeNative(hello, run, crash, [int8](const NativeRequest& r, const ReproducerCase& c) {
    return opencv::WriteReproducer(r, c, int8);
  });
}

}  // namespace
}  // namespace fusefuzz

int main(int argc, char** argv) { return fusefuzz::Main(argc, argv); }
