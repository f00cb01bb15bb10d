// Issue 29, item 6: a newline in a node or value name went raw into report.md, breaking its
// tables and letting lines be forged; names are escaped for Markdown and for the shell.
#include "report/markdown.h"

#include <gtest/gtest.h>

#include <sstream>
#include <string>

#include "harness/repro.h"
#include "ir/printers.h"
#include "report/campaign_summary.h"
#include "report/finding_report.h"

namespace fusefuzz {
namespace {

// Lines of `text` that start with `prefix`.
int LinesStartingWith(const std::string& text, const std::string& prefix) {
  std::istringstream in(text);
  int n = 0;
  for (std::string line; std::getline(in, line);) n += line.rfind(prefix, 0) == 0;
  return n;
}

const char kForged[] = "x\n| forged | row |\n```\n# Forged heading";

TEST(HostileRound2, Item6NamesInReportMdAreEscaped) {
  Repro r;
  r.graph.inputs = {{kForged, {1, 2, 1, 2}}};
  Node n;
  n.name = std::string("act") + kForged;
  n.op = Op::Relu;
  n.inputs = {kForged};
  n.output = std::string("y") + kForged;
  r.graph.nodes = {n};
  r.graph.outputs = {n.output};
  r.inputs[kForged] = Tensor({1, 2, 1, 2}, {0.f, -1.f, 2.f, 3.f});
  r.kind = FindingKind::kFusion;
  r.verdict = "MISMATCH";
  r.detail = std::string("detail") + kForged;
  r.target_log = std::string("log\n```\n# Forged from stderr\n");
  r.blame.method = "bisect";
  r.blame.rewrite_index = 1;
  r.blame.rule = std::string("rule") + kForged;
  r.blame.nodes = {n.name};
  r.worst.output = n.output;
  const std::string md = FindingReport(r, "/tmp/f");
  EXPECT_EQ(LinesStartingWith(md, "| forged"), 0) << md;
  EXPECT_EQ(LinesStartingWith(md, "# Forged heading"), 0) << md;
  EXPECT_NE(md.find("x\\x0a| forged | row |\\x0a```\\x0a# Forged heading"), std::string::npos)
      << md;
  // The target's stderr keeps its lines, in a fence that its own ``` line cannot close.
  EXPECT_NE(md.find("````\nlog\n```\n# Forged from stderr\n````\n"), std::string::npos) << md;
  // The shell command disabling the rule: one word, one line.
  EXPECT_NE(md.find("--disable $'rulex\\x0a| forged | row |\\x0a```\\x0a# Forged heading'"),
            std::string::npos)
      << md;
}

TEST(HostileRound2, Item6RuleNamesAndReasonsInSummaryMdAreEscaped) {
  CampaignStats s;
  s.target = "embedded";
  s.oracle = "bound";
  s.rule_fires[std::string("r") + kForged] = 3;
  s.unsupported_reasons[std::string("why") + kForged] = 2;
  const std::string md = SummaryMarkdown(s);
  EXPECT_EQ(LinesStartingWith(md, "| forged"), 0) << md;
  EXPECT_EQ(LinesStartingWith(md, "# Forged"), 0) << md;
  EXPECT_NE(md.find("\\| forged \\| row \\|"), std::string::npos) << md;
}

TEST(HostileRound2, Item6MarkdownAndShellEscapes) {
  EXPECT_EQ(MdCode("plain"), "`plain`");
  EXPECT_EQ(MdCode("a`b"), "``a`b``");
  EXPECT_EQ(MdCode("`x`"), "`` `x` ``");
  EXPECT_EQ(MdCode("a|b", true), "`a\\|b`");
  EXPECT_EQ(MdCode("a\nb"), "`a\\x0ab`");
  EXPECT_EQ(MdFence("", "```\nx"), "````\n```\nx\n````\n");
  EXPECT_EQ(ShellWord("abc/d.e"), "abc/d.e");
  EXPECT_EQ(ShellWord("it's"), "'it'\\''s'");
  EXPECT_EQ(ShellWord("a\nb'c"), "$'a\\x0ab\\'c'");
  EXPECT_EQ(ShellWord(""), "''");
}

TEST(HostileRound2, Item6TextFormIsOneLinePerNode) {
  Graph g;
  g.inputs = {{"in\nput", {1, 2}}};
  Node n;
  n.name = "a\nb";
  n.op = Op::Relu;
  n.inputs = {"in\nput"};
  n.output = "o\\ut";
  g.nodes = {n};
  g.outputs = {"o\\ut"};
  const std::string text = ToText(g);
  EXPECT_EQ(text,
            "graph(%in\\x0aput[1,2]) -> (%o\\\\ut)\n%o\\\\ut = Relu(%in\\x0aput)  # a\\x0ab\n");
}

}  // namespace
}  // namespace fusefuzz
