#include "targets/ort_releases.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>

#include "ir/error.h"
#include "targets/builtin_targets.h"
#include "targets/target_spec.h"

namespace fusefuzz {
namespace {

TEST(OrtReleases, ParsesReleaseNumbersOnly) {
  EXPECT_EQ(ParseOrtVersion("1.20.1"), (OrtVersion{1, 20, 1}));
  EXPECT_EQ(ParseOrtVersion("0.0.0"), (OrtVersion{0, 0, 0}));
  for (const char* bad :
       {"", "1", "1.2", "1.2.3.4", "1.22.0-rev", "01.2.3", "1.02.3", "1..3", "1.2.", ".1.2",
        "-1.2.3", "1.2.+3", " 1.2.3", "1.2.3 ", "12345.0.0", "1.2.3/../..", "a.b.c"}) {
    EXPECT_FALSE(ParseOrtVersion(bad)) << bad;
  }
  EXPECT_LT(*ParseOrtVersion("1.9.0"), *ParseOrtVersion("1.10.0"));  // numbers, not text
  EXPECT_EQ(ParseOrtVersion("1.16.3")->Text(), "1.16.3");
}

TEST(OrtReleases, ParsesRanges) {
  OrtVersionRange r = ParseOrtVersionRange("onnxruntime@1.16.0..1.21.0:basic", "--versions");
  EXPECT_EQ(r.from, (OrtVersion{1, 16, 0}));
  EXPECT_EQ(r.to, (OrtVersion{1, 21, 0}));
  EXPECT_EQ(r.level, "basic");
  EXPECT_TRUE(r.Contains({1, 16, 0}));
  EXPECT_TRUE(r.Contains({1, 21, 0}));
  EXPECT_FALSE(r.Contains({1, 21, 1}));
  EXPECT_FALSE(r.Contains({1, 15, 1}));
  // Open ends and the default level.
  r = ParseOrtVersionRange("onnxruntime@..1.17.0", "--versions");
  EXPECT_FALSE(r.from);
  EXPECT_EQ(r.level, "");  // the finding's own
  EXPECT_TRUE(r.Contains({1, 10, 0}));
  EXPECT_TRUE(ParseOrtVersionRange("onnxruntime@1.17.0..", "--versions").Contains({9, 0, 0}));
}

TEST(OrtReleases, RefusesBadRangesNamingTheProblem) {
  const auto problem = [](const char* text) {
    try {
      ParseOrtVersionRange(text, "--versions");
    } catch (const InputError& e) {
      EXPECT_EQ(e.where(), "--versions");
      return e.problem();
    }
    return std::string("accepted");
  };
  EXPECT_NE(problem("pytorch@1.0.0..2.0.0").find("onnxruntime@"), std::string::npos);
  EXPECT_NE(problem("onnxruntime@1.20.1").find("no '..'"), std::string::npos);
  EXPECT_NE(problem("onnxruntime@1.21.0..1.20.1").find("newer"), std::string::npos);
  EXPECT_NE(problem("onnxruntime@1.2..1.3.0").find("'1.2' is not a release"), std::string::npos);
  EXPECT_NE(problem("onnxruntime@1.20.0..1.21.0:fast").find("unknown level 'fast'"),
            std::string::npos);
  EXPECT_NE(problem("onnxruntime@1.20.0..$(reboot)").find("not a release"), std::string::npos);
}

TEST(OrtReleases, TargetSpecTakesAReleaseOfOnnxRuntimeOnly) {
  const TargetSpec s = TargetSpec::Parse("onnxruntime@1.20.1:basic");
  EXPECT_TRUE(s.builtin("onnxruntime"));
  EXPECT_EQ(s.version(), "1.20.1");
  EXPECT_EQ(s.mode(), "basic");
  EXPECT_EQ(s.text(), "onnxruntime@1.20.1:basic");
  EXPECT_EQ(TargetSpec::Parse("onnxruntime@1.20.1").mode(), "all");
  EXPECT_EQ(TargetSpec::Parse("onnxruntime:all").version(), "");
  EXPECT_THROW(TargetSpec::Parse("onnxruntime@1.20:all"), InputError);
  EXPECT_THROW(TargetSpec::Parse("onnxruntime@1.20.1;rm:all"), InputError);
  EXPECT_THROW(TargetSpec::Parse("onnxruntime@1.20.1:fast"), InputError);
  EXPECT_THROW(TargetSpec::Parse("pytorch@1.13.0:fx"), InputError);
  EXPECT_FALSE(TargetSpec::TryParse("tvm@1.0.0:llvm"));
}

// A cache folder of the test's own, with two releases "installed" (their package.json only) and
// the installer's temporary folder, which is not a release.
class OrtCache : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("fusefuzz-ort-cache-" + std::to_string(::getpid()));
    for (const char* v : {"1.21.0", "1.9.0", ".install-1.17.0.abc"}) {
      const auto pkg = dir_ / "onnxruntime" / v / "node_modules" / "onnxruntime-node";
      std::filesystem::create_directories(pkg);
      std::ofstream(pkg / "package.json") << "{}";
    }
    std::filesystem::create_directories(dir_ / "onnxruntime" / "1.16.0");  // npm failed
    const char* old = std::getenv("FUSEFUZZ_CACHE");
    had_ = old != nullptr;
    if (had_) old_ = old;
    ::setenv("FUSEFUZZ_CACHE", dir_.c_str(), 1);
  }
  void TearDown() override {
    if (had_) {
      ::setenv("FUSEFUZZ_CACHE", old_.c_str(), 1);
    } else {
      ::unsetenv("FUSEFUZZ_CACHE");
    }
    std::filesystem::remove_all(dir_);
  }
  std::filesystem::path dir_;
  bool had_ = false;
  std::string old_;
};

TEST_F(OrtCache, ListsInstalledReleasesInVersionOrder) {
  EXPECT_EQ(OrtReleasesDir(), (dir_ / "onnxruntime").string());
  const std::vector<OrtVersion> got = InstalledOrtReleases();
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].Text(), "1.9.0");
  EXPECT_EQ(got[1].Text(), "1.21.0");
  EXPECT_FALSE(OrtReleaseModuleDir({1, 16, 0}));
}

TEST_F(OrtCache, AReleaseNotInstalledIsRefusedWithTheInstallCommand) {
  try {
    BuiltinTargetCommand(TargetSpec::Parse("onnxruntime@1.16.0:all"));
    FAIL() << "accepted";
  } catch (const InputError& e) {
    EXPECT_NE(e.problem().find("onnxruntime-node 1.16.0 is not installed"), std::string::npos);
    EXPECT_NE(e.problem().find("/onnxruntime/install-release.sh 1.16.0"), std::string::npos);
  }
  const std::string command = BuiltinTargetCommand(TargetSpec::Parse("onnxruntime@1.21.0:basic"));
  EXPECT_NE(command.find("--level basic --ort-module '" + (dir_ / "onnxruntime").string() +
                         "/1.21.0/node_modules/onnxruntime-node'"),
            std::string::npos)
      << command;
  // The pinned release's command is as before.
  EXPECT_EQ(BuiltinTargetCommand(TargetSpec::Parse("onnxruntime:all")).find("--ort-module"),
            std::string::npos);
}

}  // namespace
}  // namespace fusefuzz
