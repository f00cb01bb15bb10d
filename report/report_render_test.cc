// Rendering of what a user reads: report.md, summary.md/json, summary.html, from hand-built
// reproducers and campaign statistics (no campaign run).
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "generators/gen_config.h"
#include "harness/repro.h"
#include "ir/json_io.h"
#include "report/campaign_summary.h"
#include "report/finding_report.h"
#include "report/html_report.h"
#include "report/target_answer.h"

namespace fusefuzz {
namespace {

namespace fs = std::filesystem;

// x[1,2,1,2] -> Relu -> y: a tiny graph with a known output shape.
Repro TinyRepro() {
  Repro r;
  r.graph.inputs = {{"x", {1, 2, 1, 2}}};
  Node n;
  n.name = "act";
  n.op = Op::Relu;
  n.inputs = {"x"};
  n.output = "y";
  r.graph.nodes = {n};
  r.graph.outputs = {"y"};
  r.inputs["x"] = Tensor({1, 2, 1, 2}, {0.f, -1.f, 2.f, 3.f});
  return r;
}

TEST(Coordinates, FlatIndexAsNchw) {
  EXPECT_EQ(Coordinates(0, {1, 2, 3, 4}), "(0, 0, 0, 0)");
  EXPECT_EQ(Coordinates(23, {1, 2, 3, 4}), "(0, 1, 2, 3)");
  EXPECT_EQ(Coordinates(5, {2, 3}), "(1, 2)");
  EXPECT_EQ(Coordinates(7, {}), "[7]");
  EXPECT_EQ(Coordinates(99, {2, 2}), "[99]");
}

TEST(FindingReport, CrashCarriesTheTargetLogThroughTheReproducer) {
  Repro r = TinyRepro();
  r.target = "exec:./my-target --fast";
  r.kind = FindingKind::kCrash;
  r.verdict = "CRASH";
  r.detail = "target exited with signal 11";
  r.target_log = "my-target: segfault in fuse_conv_bn\n";
  r.has_seed = true;
  r.seed = 99;
  r.has_campaign_seed = true;
  r.campaign_seed = 7;
  r.case_index = 12;
  r.working_dir = "/home/me/project";
  Repro back = ReadRepro(ReproToJson(r), "test");
  EXPECT_EQ(back.target_log, r.target_log);
  EXPECT_TRUE(back.has_campaign_seed);
  EXPECT_EQ(back.campaign_seed, 7u);
  EXPECT_EQ(back.working_dir, "/home/me/project");
  const std::string md = FindingReport(back, "/tmp/findings/x");
  EXPECT_NE(md.find("segfault in fuse_conv_bn"), std::string::npos) << md;
  EXPECT_NE(md.find("fusefuzz gen --seed 7 --case 12"), std::string::npos) << md;
  // A relative target program only resolves from where the campaign ran: the report says so.
  EXPECT_NE(md.find("cd /home/me/project"), std::string::npos) << md;
  EXPECT_NE(md.find("fusefuzz replay /tmp/findings/x/repro.json"), std::string::npos) << md;
}

// The regenerate command of a --quant campaign's case must make that case, not an unrelated
// float graph (issue 45, item 6); another config is passed back with --config.
TEST(FindingReport, RegenerateCommandCarriesTheGeneratorOptions) {
  Repro r = TinyRepro();
  r.kind = FindingKind::kFusion;
  r.has_seed = r.has_campaign_seed = true;
  r.campaign_seed = 7;
  r.case_index = 12;
  GenConfig quant;
  quant.quant.enabled = true;
  r.generator = {{"config", ConfigToJson(quant)}};
  std::string md = FindingReport(ReadRepro(ReproToJson(r), "test"));
  EXPECT_NE(md.find("fusefuzz gen --quant --seed 7 --case 12"), std::string::npos) << md;
  GenConfig other = quant;
  other.limits.max_nodes += 3;
  r.generator = {{"config", ConfigToJson(other)}};
  md = FindingReport(r);
  EXPECT_NE(md.find("jq .provenance.generator.config repro.json > gen-config.json\n"
                    "fusefuzz gen --config gen-config.json --seed 7 --case 12"),
            std::string::npos)
      << md;
  CampaignStats s;
  s.seed = 7;
  s.gen_config = ConfigToJson(quant);
  CaseReport c;
  c.verdict = "MISMATCH";
  c.kind = "fusion";
  c.signature = "fusion-x";
  s.AddCase(c);
  EXPECT_NE(SummaryMarkdown(s).find("`fusefuzz gen --quant --seed 7 --case I`"), std::string::npos)
      << SummaryMarkdown(s);
}

// An unquantized finding's numbers are right: the report says what happened in one sentence,
// names every node left in float, and the picture marks them (issue 45, item 7).
TEST(FindingReport, UnquantizedSaysWhatRanInFloatAndDrawsIt) {
  Repro r = TinyRepro();
  r.kind = FindingKind::kUnquantized;
  r.verdict = "MISMATCH";
  std::string long_detail(300, 'x');
  r.detail =
      "unquantized: the backend's configuration quantizes 'act' (float), which ran in "
      "float or reference form; the numbers pass (sigma: 4 elements pass " +
      long_detail + ")";
  const std::string md = FindingReport(r);
  EXPECT_EQ(md.find("failed to produce outputs"), std::string::npos) << md;
  EXPECT_NE(md.find("The numbers are right, but the model that ran is not the int8 model"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("promises `act` (float) in int8 and they ran in float or reference form"),
            std::string::npos)
      << md;
  const FindingDots d = MakeFindingDots(r);
  EXPECT_NE(d.before.find("ran in float form, not int8"), std::string::npos) << d.before;
}

// A campaign given a relative --out writes commands relative to where it ran, not the
// checkout's absolute path (issue 45, item 19).
TEST(FindingReport, RelativeFolderGivesRelativeCommands) {
  Repro r = TinyRepro();
  r.kind = FindingKind::kKernel;
  r.verdict = "MISMATCH";
  const std::string md = FindingReport(r, "out/glow/findings/x");
  EXPECT_NE(md.find("fusefuzz replay out/glow/findings/x/repro.json\n"), std::string::npos) << md;
  EXPECT_NE(md.find("From the folder the campaign ran in"), std::string::npos) << md;
  EXPECT_EQ(md.find(std::filesystem::current_path().string()), std::string::npos) << md;
}

// A pack's own reproducer (capability repro, issue 42): report.md names its files and shows the
// command the pack gave, run in the finding folder; a command that could end the code block or
// carry a control character is not shown.
TEST(FindingReport, NamesThePacksReproducerWithItsCommand) {
  Repro r = TinyRepro();
  r.kind = FindingKind::kFusion;
  r.verdict = "MISMATCH";
  r.target = "exec:./my-engine";
  TargetAnswer a;
  a.reproducer.files = {{"reproduce_mine.cc", "int main() {}"}, {"data.bin", ""}};
  a.reproducer.build = "g++ reproduce_mine.cc -o r && ./r";
  std::string md = FindingReport(r, "out/f", &a);
  EXPECT_NE(md.find("standalone reproducer (`reproduce_mine.cc`, `data.bin`)"), std::string::npos)
      << md;
  EXPECT_NE(md.find("```sh\ncd out/f\ng++ reproduce_mine.cc -o r && ./r\n```"), std::string::npos)
      << md;
  for (const std::string& bad :
       std::vector<std::string>{"ls\n```\nrm -rf ~", "echo `id`", "a\x1b[2Jb"}) {
    a.reproducer.build = bad;
    md = FindingReport(r, "out/f", &a);
    EXPECT_EQ(md.find(bad), std::string::npos) << md;
    EXPECT_NE(md.find("# (the target gave no command to show)"), std::string::npos) << md;
  }
  // No files, no paragraph (and report/ itself names no engine's script).
  a.reproducer = {};
  md = FindingReport(r, "out/f", &a);
  EXPECT_EQ(md.find("standalone reproducer"), std::string::npos) << md;
}

// A blamed rewrite set up by an earlier one: report.md and the diagnosis say so, and repro.json
// keeps it (issue 45, item 4).
TEST(FindingReport, SetUpByAnEarlierRewriteIsSaid) {
  Repro r = TinyRepro();
  r.kind = FindingKind::kFusion;
  r.verdict = "MISMATCH";
  r.blame.method = "bisect";
  r.blame.rule = "conv-bn-fold";
  r.blame.rewrite_index = 2;
  r.blame.nodes = {"act"};
  r.blame.ablation = "pass";
  r.blame.set_up_by = {"(1) shared-weight-folded-twice at c1,bn1"};
  const Repro back = ReadRepro(ReproToJson(r), "test");
  EXPECT_EQ(back.blame.set_up_by, r.blame.set_up_by);
  const std::string md = FindingReport(back);
  EXPECT_NE(md.find("**Set up by** (1) shared-weight-folded-twice at c1,bn1: with that earlier "
                    "rule disabled alone the case passes too"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("(set up by (1) shared-weight-folded-twice at c1,bn1)"), std::string::npos)
      << md;
}

TEST(FindingReport, SmallCaseShowsInputValues) {
  Repro r = TinyRepro();
  r.kind = FindingKind::kKernel;
  r.verdict = "MISMATCH";
  r.worst = {"y", 3, 3.0, 0.0, 1e-6, 1e7};
  const std::string md = FindingReport(r);
  EXPECT_NE(md.find("`x` = [1,2,1,2] [[[[0, -1]], [[2, 3]]]]"), std::string::npos) << md;
  EXPECT_NE(md.find("`y` at (0, 1, 0, 1)"), std::string::npos) << md;
  EXPECT_NE(md.find("## Graph, unoptimized"), std::string::npos) << md;  // not minimized
  // Only the reference-on-both-graphs table needs an after-graph; there is none here.
  EXPECT_EQ(md.find("first divergence"), std::string::npos) << md;
}

TEST(FindingDots, MarkFailingOutputAndLabelTinyValues) {
  Repro r = TinyRepro();
  r.kind = FindingKind::kKernel;
  r.worst = {"y", 3, 3.0, 0.0, 1e-6, 1e7};
  const FindingDots d = MakeFindingDots(r);
  EXPECT_NE(d.before.find("y (fails)"), std::string::npos) << d.before;
  EXPECT_NE(d.before.find("worst (0, 1, 0, 1)"), std::string::npos) << d.before;
  EXPECT_NE(d.before.find("{0, -1, 2, 3}"), std::string::npos) << d.before;  // input values
  EXPECT_TRUE(d.after.empty());
}

CampaignStats HandFilledStats() {
  CampaignStats s;
  s.command_line = "fusefuzz fuzz --graphs 50 --inject eps-dropped --out out/x";
  s.seed = 3;
  s.target = "embedded";
  s.oracle = "bound";
  s.inject = {"eps-dropped"};
  auto add = [&](const std::string& verdict, const std::string& kind, bool duplicate, int64_t index,
                 double seconds) {
    CaseReport c;
    c.verdict = verdict;
    c.kind = kind;
    if (!kind.empty()) c.signature = "fusion-eps-dropped-BatchNorm-00000000";
    c.duplicate = duplicate;
    c.index = index;
    c.seconds = seconds;
    s.AddCase(c);
  };
  add("PASS", "", false, 0, 0.1);
  add("MISTRUSTED", "", false, 1, 0.2);
  add("MISMATCH", "fusion", false, 2, 0.3);
  add("MISMATCH", "fusion", true, 3, 0.4);
  s.seconds = 1.5;
  s.interrupted = true;
  s.worker_errors = 1;
  s.rule_fires = {{"conv-bn-fold", 17}, {"conv-activation-fuse", 4}};
  return s;
}

// The closing line says "fuzz:" once (issue 45, item 15: "fuzz: done. fuzz: ...").
TEST(CampaignSummary, ClosingLineSaysFuzzOnce) {
  CampaignStats s = HandFilledStats();
  const std::string text = s.SummaryText("out/x");
  EXPECT_EQ(text.rfind("fuzz: interrupted: 4 graphs", 0), 0u) << text;
  s.interrupted = false;
  EXPECT_EQ(s.SummaryText("out/x").rfind("fuzz: done: 4 graphs", 0), 0u) << s.SummaryText("out/x");
}

TEST(CampaignSummary, MarkdownSaysWhatItMeans) {
  const std::string md = SummaryMarkdown(HandFilledStats());
  EXPECT_NE(md.find("**Interrupted**"), std::string::npos) << md;
  EXPECT_NE(md.find("| MISTRUSTED | 1 | nothing failed, but the data cannot tell"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("fusefuzz fuzz --graphs 50 --inject eps-dropped --out out/x"),
            std::string::npos);
  EXPECT_NE(md.find("| fusion | 2 | 500.0 | 1 | 0 | 0.3 s | 2 | 3 graphs |"), std::string::npos)
      << md;
  EXPECT_NE(md.find("| `conv-bn-fold` | 17 |"), std::string::npos) << md;
  EXPECT_NE(md.find("Worker errors: 1"), std::string::npos) << md;
}

// Known upstream bugs are counted apart from new findings and listed with their link in the
// terminal text, summary.md and summary.json (issue 45, item 8).
TEST(CampaignSummary, KnownUpstreamBugsListedApartWithTheirLink) {
  CampaignStats s = HandFilledStats();
  const std::string sig = "fusion-R-Conv-12345678";
  s.upstream_links[sig] = "https://example.org/bug/7";
  CaseReport c;
  c.verdict = "MISMATCH";
  c.kind = "fusion";
  c.signature = sig;
  c.known = true;
  c.index = 9;
  s.AddCase(c);
  s.AddCase(c);
  EXPECT_EQ(s.findings, 2);  // the hand-filled new ones only
  EXPECT_EQ(s.known, 2);
  EXPECT_EQ(s.unique.count(sig), 0u);
  EXPECT_NE(s.SummaryText("out/x").find("  known upstream  fusion  x2  out/x/findings/" + sig +
                                        "/  https://example.org/bug/7\n"),
            std::string::npos)
      << s.SummaryText("out/x");
  const std::string md = SummaryMarkdown(s);
  EXPECT_NE(md.find("## Known upstream bugs"), std::string::npos) << md;
  EXPECT_NE(md.find("| fusion | 2 | 9 | [findings/" + sig + "](findings/" + sig +
                    "/report.md) | https://example.org/bug/7 |"),
            std::string::npos)
      << md;
  const fs::path dir = fs::temp_directory_path() / ("fusefuzz-ku-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir / "findings");
  WriteCampaignSummary(dir.string(), s, "");
  const nlohmann::json j = ReadJsonFile((dir / "summary.json").string());
  fs::remove_all(dir);
  ASSERT_EQ(j["known_upstream"].size(), 1u);
  EXPECT_EQ(j["known_upstream"][0]["known_upstream"], "https://example.org/bug/7");
  EXPECT_EQ(j["known_upstream"][0]["count"], 2);
}

TEST(CampaignSummary, FilesCarryRuleFiresAndTheCommand) {
  fs::path dir = fs::temp_directory_path() / ("fusefuzz-summary-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir / "findings");
  CampaignStats stats = HandFilledStats();
  stats.seconds = 12.345678;
  WriteCampaignSummary(dir.string(), stats, "");
  nlohmann::json j = ReadJsonFile((dir / "summary.json").string());
  EXPECT_EQ(j["rule_fires"]["conv-bn-fold"], 17);
  EXPECT_EQ(j["command_line"], "fusefuzz fuzz --graphs 50 --inject eps-dropped --out out/x");
  EXPECT_EQ(j["first_finding_by_kind"]["fusion"]["case"], 2);
  ASSERT_TRUE(fs::exists(dir / "summary.html"));
  std::ifstream in(dir / "summary.html");
  std::string html((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(html.find("id=\"rule-fires\""), std::string::npos);
  // Findings first: the findings (table and sections) above the verdicts and the rule table.
  EXPECT_LT(html.find("<h2>Findings</h2>"), html.find("id=\"verdicts\""));
  EXPECT_LT(html.find("class=\"finding\""), html.find("id=\"rule-fires\""));
  EXPECT_NE(html.find("conv-bn-fold"), std::string::npos);
  // The finding folder does not exist: the page says so instead of failing.
  EXPECT_NE(html.find("Cannot read the reproducer"), std::string::npos);
  EXPECT_EQ(html.find("<script"), std::string::npos);
  // Times rounded as summary.md rounds them (issue 45, item 22).
  EXPECT_NE(html.find("graphs in 12.3 s"), std::string::npos) << html.substr(0, 3000);
  EXPECT_EQ(html.find("12.3457"), std::string::npos);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace fusefuzz
