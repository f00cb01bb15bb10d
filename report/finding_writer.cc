#include "report/finding_writer.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <sstream>

#include "ir/error.h"
#include "ir/folder_write.h"
#include "ir/json_io.h"
#include "ir/printers.h"
#include "kernels/reference/reference.h"
#include "onnx/export.h"
#include "report/finding_report.h"
#include "report/torch_script.h"

extern char** environ;

namespace fusefuzz {
namespace {

// A path as one argv element that a program cannot mistake for an option.
std::string NotAnOption(const std::string& path) {
  return !path.empty() && path[0] == '-' ? "./" + path : path;
}

// Graphviz `dot -Tsvg`, started directly (posix_spawnp searches PATH; no shell ever sees the
// paths, which contain the --out folder and a signature). Its SVG comes back on a pipe and is
// written by WriteFileInFolder, so dot never opens an output path in the folder (where a planted
// link could send it elsewhere). SVGs are a convenience: without Graphviz there are none; a
// failing `dot` is reported on stderr and leaves no file behind. Returns false when `dot` is not
// installed.
bool DotToSvg(const std::string& dir, const std::string& dot_name, const std::string& svg_name) {
  const std::string dot_path = dir + "/" + dot_name;
  std::string prog = "dot", format = "-Tsvg", in = NotAnOption(dot_path);
  char* argv[] = {prog.data(), format.data(), in.data(), nullptr};
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    std::fprintf(stderr, "fusefuzz: warning: no SVG for %s: pipe: %s\n", dot_path.c_str(),
                 std::strerror(errno));
    return true;
  }
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
  posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
  pid_t pid = -1;
  int rc = posix_spawnp(&pid, "dot", &fa, nullptr, argv, environ);
  posix_spawn_file_actions_destroy(&fa);
  ::close(fds[1]);
  if (rc == ENOENT) {
    ::close(fds[0]);
    return false;
  }
  std::string why, svg;
  if (rc != 0) {
    why = std::string("cannot start: ") + std::strerror(rc);
  } else {
    // An SVG of a graph of at most 10000 nodes is far below this; more is not a drawing.
    constexpr size_t kMaxSvg = size_t{64} << 20;
    char buf[65536];
    for (;;) {
      ssize_t n = ::read(fds[0], buf, sizeof buf);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      if (svg.size() < kMaxSvg) svg.append(buf, static_cast<size_t>(n));
    }
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      why = WIFEXITED(status) ? "exit status " + std::to_string(WEXITSTATUS(status))
                              : "killed by signal " + std::to_string(WTERMSIG(status));
    } else if (svg.empty()) {
      why = "it wrote no SVG";
    } else if (svg.size() >= kMaxSvg) {
      why = "its SVG is larger than 64 MiB";
    }
  }
  ::close(fds[0]);
  if (why.empty()) {
    WriteFileInFolder(dir, svg_name, svg);
  } else {
    std::fprintf(stderr, "fusefuzz: warning: Graphviz dot failed on %s (%s); no SVG\n",
                 dot_path.c_str(), why.c_str());
  }
  return true;
}

// model.onnx and test_data_set_0/ (the folder is then in ONNX's backend-test layout) (inputs and
// reference outputs as TensorProto files): the case for any ONNX tool, without fusefuzz
// (docs/onnx.md). The graph was verified when it was found, so an export failure is fusefuzz's own
// gap (an op without an ONNX form): warned, not fatal.
void WriteOnnxRepro(const std::string& dir, const Repro& r) {
  OnnxModel m;
  TensorMap outputs;
  try {
    OnnxExportOptions opts;
    opts.doc = "fusefuzz finding: " + std::string(FindingKindName(r.kind)) + " " + r.blame.rule;
    m = ExportOnnx(r.graph, opts);
    for (auto& [name, t] : RunReference(r.graph, r.inputs)) outputs[name] = ToFloatTensor(t);
  } catch (const InputError& e) {
    std::fprintf(stderr, "fusefuzz: warning: %s: no model.onnx: %s\n", dir.c_str(), e.what());
    return;
  } catch (const std::exception& e) {
    // A defect of the export itself: the finding (repro.json, report.md) is kept, the campaign
    // goes on, and the message says whose bug it is.
    std::fprintf(stderr,
                 "fusefuzz: warning: %s: no model.onnx: internal error of fusefuzz's ONNX export "
                 "(%s); please report it with this folder's repro.json\n",
                 dir.c_str(), e.what());
    return;
  }
  WriteFileInFolder(dir, "model.onnx", m.bytes);
  WriteBackendTestData(dir, r.graph, r.inputs, outputs);
}

}  // namespace

void WriteFindingFolder(const std::string& dir, const Repro& r, const std::string& final_dir,
                        const TargetAnswer* answer) {
  if (::mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST) {
    throw OutputError(dir, std::string("cannot create the folder: ") + std::strerror(errno));
  }
  const std::string where = final_dir.empty() ? dir : final_dir;
  // The folder may be one someone else made (minimize --folder): every file in it is created
  // or replaced, never written through a link planted there.
  WriteFileInFolder(dir, "repro.json", WriteRepro(r, where + "/repro.json"));
  WriteFileInFolder(dir, "report.md", FindingReport(r, where, answer));
  const FindingDots dots = MakeFindingDots(r, answer);
  WriteFileInFolder(dir, "before.dot", dots.before);
  const bool has_after = !dots.after.empty();
  if (has_after) WriteFileInFolder(dir, "after.dot", dots.after);
  if (DotToSvg(dir, "before.dot", "before.svg") && has_after) {
    DotToSvg(dir, "after.dot", "after.svg");
  }
  if (!dots.neighbourhood.empty()) {
    WriteFileInFolder(dir, "neighbourhood.dot", dots.neighbourhood);
    DotToSvg(dir, "neighbourhood.dot", "neighbourhood.svg");
  }
  WriteOnnxRepro(dir, r);
  // PyTorch findings: the engine alone reproduces them (the graph written as an nn.Module).
  const std::string script = TorchReproScript(r);
  if (!script.empty()) WriteFileInFolder(dir, "reproduce.py", script);
  // The target's own reproducer (capability repro; its build line is in the file's head):
  // names and size checked when it answered (targets/reproducer.cc), written like every other
  // file, never run.
  if (answer) {
    for (const ReproducerFile& f : answer->reproducer.files) WriteFileInFolder(dir, f.path, f.text);
  }
}

}  // namespace fusefuzz
