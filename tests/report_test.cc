// A campaign's pages as a user reads them: report.md with numbers and commands that work from
// any folder, pictures that mark the culprit, and summary.html rendered by a real browser
// (Debian's chromium, headless; ci/setup installs it).
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "tests/cli_util.h"

namespace {

namespace fs = std::filesystem;
using fusefuzz::testing::CmdResult;
using fusefuzz::testing::Fusefuzz;
using fusefuzz::testing::TempDir;

std::string Read(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// Runs a shell command (stdout + stderr); returns its exit status.
int Shell(const std::string& cmd, std::string* out) {
  FILE* p = popen((cmd + " 2>&1").c_str(), "r");
  if (!p) return -1;
  char buf[4096];
  size_t n;
  out->clear();
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) out->append(buf, n);
  int st = pclose(p);
  return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

// One campaign shared by the tests below: Glow's bug (BN folded through a ReLU), minimized.
class Report : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new fs::path(TempDir("report"));
    CmdResult r = Fusefuzz("fuzz --graphs 200 --seed 1 -q --inject through-activation --out " +
                           (*dir_ / "camp").string());
    ASSERT_EQ(r.status, 1) << r.out;
    for (const auto& e : fs::directory_iterator(*dir_ / "camp" / "findings")) *finding_ = e.path();
  }
  static void TearDownTestSuite() {
    fs::remove_all(*dir_);
    delete dir_;
  }
  static fs::path* dir_;
  static fs::path* finding_;
};
fs::path* Report::dir_ = nullptr;
fs::path* Report::finding_ = new fs::path;

TEST_F(Report, FindingShowsNumbersCoordinatesAndTheFirstDivergence) {
  const std::string md = Read(*finding_ / "report.md");
  EXPECT_NE(md.find("## Where the values diverge"), std::string::npos) << md;
  EXPECT_NE(md.find("**first divergence**"), std::string::npos) << md;
  EXPECT_NE(md.find("at (0, "), std::string::npos) << md;  // coordinates, not a flat index
  EXPECT_NE(md.find("## Input values"), std::string::npos) << md;
  EXPECT_NE(md.find("## Parameters of the rewritten nodes, after rewrite (1)"), std::string::npos)
      << md;
  EXPECT_NE(md.find("## Minimized graph, unoptimized"), std::string::npos) << md;
  EXPECT_NE(md.find("fusefuzz gen --seed 1 --case "), std::string::npos) << md;
  nlohmann::json repro = nlohmann::json::parse(Read(*finding_ / "repro.json"));
  EXPECT_EQ(repro["provenance"]["campaign_seed"], 1);
  // The before picture marks the blamed nodes, the failing output and its worst element.
  const std::string dot = Read(*finding_ / "before.dot");
  EXPECT_NE(dot.find("fillcolor"), std::string::npos);
  EXPECT_NE(dot.find("(fails)"), std::string::npos);
  EXPECT_NE(dot.find("worst (0, "), std::string::npos);
}

TEST_F(Report, CommandsWorkFromAnotherFolder) {
  const std::string md = Read(*finding_ / "report.md");
  size_t at = md.find("## Commands");
  ASSERT_NE(at, std::string::npos);
  std::istringstream lines(md.substr(at));
  int ran = 0;
  const std::string bin = FUSEFUZZ_BINARY;
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("fusefuzz replay ", 0) != 0 && line.rfind("fusefuzz gen ", 0) != 0) continue;
    std::string out;
    // From an unrelated folder: the commands must not depend on the current directory.
    int st = Shell("cd / && " + bin + line.substr(8) + " > /dev/null", &out);
    EXPECT_EQ(st, 0) << line << "\n" << out;
    ++ran;
  }
  EXPECT_GE(ran, 3) << md;  // replay, confirm without the fault, regenerate
}

TEST_F(Report, HtmlRendersInHeadlessChromium) {
  const fs::path html = *dir_ / "camp" / "summary.html";
  ASSERT_TRUE(fs::exists(html));
  const std::string page = Read(html);
  EXPECT_EQ(page.find("<script"), std::string::npos);
  EXPECT_EQ(page.find("src="), std::string::npos);  // nothing loaded from anywhere
  EXPECT_NE(page.find("<svg"), std::string::npos);  // pictures inlined
  const std::string chromium =
      "/usr/bin/chromium --headless --no-sandbox --disable-gpu --disable-background-networking "
      "--disable-component-update --disable-sync --no-first-run --user-data-dir=" +
      (*dir_ / "profile").string() + " ";
  std::string out;
  ASSERT_EQ(Shell(chromium + "--enable-logging=stderr --v=0 --dump-dom file://" + html.string() +
                      " 2>" + (*dir_ / "console.txt").string(),
                  &out),
            0);
  // The browser's DOM has the findings table with a row per unique finding.
  EXPECT_NE(out.find("<table id=\"findings\">"), std::string::npos) << out.substr(0, 2000);
  EXPECT_NE(out.find("class=\"finding-row\""), std::string::npos);
  // No console messages at all (the page has no scripts; a failed load would log one).
  const std::string console = Read(*dir_ / "console.txt");
  EXPECT_EQ(console.find(":CONSOLE"), std::string::npos) << console;
  const fs::path png = *dir_ / "summary.png";
  ASSERT_EQ(Shell(chromium + "--screenshot=" + png.string() + " --window-size=1200,900 file://" +
                      html.string(),
                  &out),
            0)
      << out;
  ASSERT_TRUE(fs::exists(png));
  // A blank 1200x900 page compresses to a few kB; tables, text and graphs do not.
  EXPECT_GT(fs::file_size(png), 20000u);
  if (const char* keep = std::getenv("FUSEFUZZ_KEEP_SCREENSHOT"))
    fs::copy_file(png, keep, fs::copy_options::overwrite_existing);
}

}  // namespace
