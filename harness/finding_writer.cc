#include "harness/finding_writer.h"

#include <sys/stat.h>
#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <sstream>

#include "harness/finding_report.h"
#include "ir/json_io.h"
#include "ir/printers.h"

namespace fusefuzz {
namespace {

bool HaveDot() { return std::system("command -v dot >/dev/null 2>&1") == 0; }

void DotToSvg(const std::string& dot_path, const std::string& svg_path) {
  std::string tmp = svg_path + ".tmp";
  std::string cmd = "dot -Tsvg '" + dot_path + "' -o '" + tmp + "' 2>/dev/null";
  if (std::system(cmd.c_str()) == 0) std::rename(tmp.c_str(), svg_path.c_str());
}

}  // namespace

void WriteFindingFolder(const std::string& dir, const Repro& r) {
  ::mkdir(dir.c_str(), 0755);
  WriteFileAtomic(dir + "/repro.json", WriteRepro(r, dir + "/repro.json"));
  WriteFileAtomic(dir + "/report.md", FindingReport(r, dir));
  const FindingDots dots = MakeFindingDots(r);
  WriteFileAtomic(dir + "/before.dot", dots.before);
  const bool has_after = !dots.after.empty();
  if (has_after) WriteFileAtomic(dir + "/after.dot", dots.after);
  if (HaveDot()) {
    DotToSvg(dir + "/before.dot", dir + "/before.svg");
    if (has_after) DotToSvg(dir + "/after.dot", dir + "/after.svg");
  }
}

}  // namespace fusefuzz
