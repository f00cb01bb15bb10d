#include "report/markdown_html.h"

#include <gtest/gtest.h>

#include "report/finding_report.h"
#include "report/markdown.h"

namespace fusefuzz {
namespace {

TEST(MarkdownToHtml, RendersTheSubsetReportsUse) {
  const std::string md =
      "# Finding: fusion in `conv-bn-fold`\n\n- verdict: **MISMATCH**\n- target: `embedded`\n"
      "  - W = [1]\n\nSome text\ncontinued.\n\n| value | shape | x |\n|---|---|---:|\n"
      "| `a\\|b` | [1] | 2 |\n\n```json\n{\"a\": 1}\n```\n## Commands\n";
  const std::string h = MarkdownToHtml(md, 2);
  EXPECT_NE(h.find("<h3>Finding: fusion in <code>conv-bn-fold</code></h3>"), std::string::npos)
      << h;
  EXPECT_NE(h.find("<ul><li>verdict: <b>MISMATCH</b></li><li>target: <code>embedded</code>\n"
                   "<ul><li>W = [1]</li></ul>\n</li></ul>"),
            std::string::npos)
      << h;
  EXPECT_NE(h.find("<p>Some text continued.</p>"), std::string::npos) << h;
  EXPECT_NE(h.find("<tr><th>value</th><th>shape</th><th>x</th></tr>"), std::string::npos) << h;
  EXPECT_NE(h.find("<tr><td><code>a|b</code></td><td>[1]</td><td class=\"num\">2</td></tr>"),
            std::string::npos)
      << h;
  EXPECT_NE(h.find("<pre>{&quot;a&quot;: 1}\n</pre>"), std::string::npos) << h;
  EXPECT_NE(h.find("<h4>Commands</h4>"), std::string::npos) << h;
}

TEST(MarkdownToHtml, EscapesEverythingATargetCouldSay) {
  // Names and messages are a target's: as text, in code spans, in fences, in table cells.
  const std::string evil = "<script>alert('x')</script>&\"";
  const std::string md = "- detail: " + MdText(evil) + " " + MdCode(evil) + "\n\n| a |\n|---|\n| " +
                         MdCode(evil + "|", true) + " |\n\n" + MdFence("", evil + "\n```x");
  const std::string h = MarkdownToHtml(md);
  EXPECT_EQ(h.find("<script"), std::string::npos) << h;
  EXPECT_EQ(h.find("'x')</"), std::string::npos) << h;
  EXPECT_NE(h.find("&lt;script&gt;"), std::string::npos) << h;
  // An unclosed backtick or bold stays text / is closed: no markup leaks out of the line.
  const std::string h2 = MarkdownToHtml("a `b **c\n");
  EXPECT_EQ(h2, "<p>a `b <b>c</b></p>\n");
}

TEST(MarkdownToHtml, RendersARealReport) {
  Repro r;
  r.graph.inputs = {{"x", {1, 1, 1, 2}}};
  Node n;
  n.name = "act";
  n.op = Op::Relu;
  n.inputs = {"x"};
  n.output = "y";
  r.graph.nodes = {n};
  r.graph.outputs = {"y"};
  r.inputs["x"] = Tensor({1, 1, 1, 2}, {-1.f, 2.f});
  r.kind = FindingKind::kFusion;
  r.verdict = "MISMATCH";
  const std::string h = MarkdownToHtml(FindingReport(r), 2);
  EXPECT_EQ(h.find("```"), std::string::npos) << h;  // every fence rendered
  EXPECT_EQ(h.find("## "), std::string::npos) << h;  // every heading rendered
  EXPECT_NE(h.find("<h4>Commands</h4>"), std::string::npos) << h;
  EXPECT_NE(h.find("<pre>"), std::string::npos) << h;
}

}  // namespace
}  // namespace fusefuzz
