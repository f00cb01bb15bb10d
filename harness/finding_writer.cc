#include "harness/finding_writer.h"

#include <sys/stat.h>
#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <set>
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
  WriteFileAtomic(dir + "/report.md", FindingReport(r));
  std::set<std::string> blamed(r.blame.nodes.begin(), r.blame.nodes.end());
  DotOptions before;
  before.highlight = blamed;
  before.title = "before: " + std::string(FindingKindName(r.kind)) + " " + r.blame.rule;
  WriteFileAtomic(dir + "/before.dot", ToDot(r.graph, before));
  Graph after;
  bool has_after = AfterGraph(r, &after);
  if (has_after) {
    DotOptions a;
    for (const auto& n : after.nodes)
      if (blamed.count(n.name)) a.highlight.insert(n.name);
    a.title = "after rewrite (" + std::to_string(r.blame.rewrite_index) + ") " + r.blame.rule;
    WriteFileAtomic(dir + "/after.dot", ToDot(after, a));
  }
  if (HaveDot()) {
    DotToSvg(dir + "/before.dot", dir + "/before.svg");
    if (has_after) DotToSvg(dir + "/after.dot", dir + "/after.svg");
  }
}

}  // namespace fusefuzz
