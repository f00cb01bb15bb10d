#include "campaign/known_signatures.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "ir/error.h"

namespace fusefuzz {
namespace {

std::string Sig(int64_t i) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "fusion-conv-bn-fold-%016llx",
                static_cast<unsigned long long>(i * 0x9E3779B97F4A7C15ull));
  return buf;
}

class KnownFile : public ::testing::Test {
 protected:
  void SetUp() override {
    char d[] = "/tmp/fusefuzz-known-XXXXXX";
    ASSERT_NE(::mkdtemp(d), nullptr);
    dir_ = d;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string Write(const std::string& name, const std::string& text) {
    const std::string p = dir_ + "/" + name;
    std::ofstream(p, std::ios::binary) << text;
    return p;
  }
  std::string ErrorOf(const std::string& path) {
    try {
      ReadKnownSignatures(path);
    } catch (const InputError& e) {
      return e.what();
    }
    return "";
  }
  std::string dir_;
};

TEST(KnownSignatures, HoldsExactlyWhatItWasGiven) {
  const KnownSignatures none;
  EXPECT_TRUE(none.empty());
  EXPECT_FALSE(none.contains("a"));
  const KnownSignatures k({"b", "a", "b", "fusion-x", "a"});
  EXPECT_EQ(k.size(), 3u);  // repeats count once
  for (const char* s : {"a", "b", "fusion-x"}) EXPECT_TRUE(k.contains(s)) << s;
  for (const char* s : {"", "c", "fusion-", "fusion-xx", "A", "ab"})
    EXPECT_FALSE(k.contains(s)) << s;
  // Copies share the table; the copy outlives the original.
  KnownSignatures copy;
  {
    const KnownSignatures tmp({"kept"});
    copy = tmp;
  }
  EXPECT_TRUE(copy.contains("kept"));
}

// 500k (the size that took 25 s): every member is found, no near-miss is.
TEST(KnownSignatures, LargeSetsHaveNoFalseAnswers) {
  std::vector<std::string> sigs;
  for (int64_t i = 0; i < 500000; ++i) sigs.push_back(Sig(i));
  const KnownSignatures k(sigs);
  EXPECT_EQ(k.size(), sigs.size());
  for (const std::string& s : sigs) ASSERT_TRUE(k.contains(s)) << s;
  for (int64_t i = 500000; i < 600000; ++i) ASSERT_FALSE(k.contains(Sig(i))) << Sig(i);
  for (int64_t i = 0; i < 1000; ++i) {
    std::string s = Sig(i);
    s.back() = s.back() == 'z' ? 'y' : 'z';
    ASSERT_FALSE(k.contains(s)) << s;
    ASSERT_FALSE(k.contains(Sig(i) + "0"));
    ASSERT_FALSE(k.contains(Sig(i).substr(1)));
  }
}

TEST_F(KnownFile, TextListsWithCommentsBlanksAndByteOrderMark) {
  std::string text = "\xEF\xBB\xBF# filed upstream\n\n  fusion-a  \r\nkernel-b # a comment\n\t\n";
  for (int64_t i = 0; i < 500000; ++i) text += Sig(i) + "\n";
  const KnownSignatures k = ReadKnownSignatures(Write("known.txt", text));
  EXPECT_EQ(k.size(), 500002u);
  EXPECT_TRUE(k.contains("fusion-a"));
  EXPECT_TRUE(k.contains("kernel-b"));
  EXPECT_FALSE(k.contains("#"));
  EXPECT_FALSE(k.contains("filed"));
  for (int64_t i = 0; i < 500000; i += 997) EXPECT_TRUE(k.contains(Sig(i)));
  EXPECT_FALSE(k.contains(Sig(500000)));
  EXPECT_EQ(ErrorOf(Write("bad.txt", "fusion-a\nnot a/sig\n")),
            dir_ +
                "/bad.txt:2: --known: not a signature (letters, digits, '.', '_', '-'; no "
                "leading dot; at most 100 characters)");
  EXPECT_NE(ErrorOf(Write("dot.txt", ".hidden\n")).find("dot.txt:1: --known: not a signature"),
            std::string::npos);
}

TEST_F(KnownFile, SummariesAndCampaignFolders) {
  std::string text = "\xEF\xBB\xBF{\"format\": \"fusefuzz-summary\", \"unique_findings\": [";
  for (int64_t i = 0; i < 20000; ++i) {
    text += std::string(i ? "," : "") + "{\"signature\": \"" + Sig(i) +
            "\", \"kind\": \"fusion\", \"cases\": 2, \"folder\": \"findings/" + Sig(i) + "\"}\n";
  }
  text += "]}";
  std::filesystem::create_directory(dir_ + "/campaign");
  Write("campaign/summary.json", text);
  for (const std::string& p : {dir_ + "/campaign", dir_ + "/campaign/summary.json"}) {
    const KnownSignatures k = ReadKnownSignatures(p);
    EXPECT_EQ(k.size(), 20000u);
    EXPECT_TRUE(k.contains(Sig(0)));
    EXPECT_TRUE(k.contains(Sig(19999)));
    EXPECT_FALSE(k.contains(Sig(20000)));
  }
  EXPECT_EQ(ErrorOf(Write("s.json",
                          R"({"format": "fusefuzz-summary", "unique_findings": [{"signature": "a"},
                              {"signature": "b/c"}]})")),
            dir_ + "/s.json: /unique_findings/1/signature: not a signature");
  EXPECT_EQ(ErrorOf(Write("n.json", R"({"format": "fusefuzz-summary", "unique_findings": [3]})")),
            dir_ + "/n.json: /unique_findings/0/signature: not a signature");
  EXPECT_EQ(ErrorOf(Write("o.json", R"({"format": "other", "unique_findings": []})")),
            dir_ + "/o.json: --known: not a fusefuzz-summary file with unique_findings");
  EXPECT_NE(ErrorOf(Write("d.json", R"({"format": "fusefuzz-summary", "format": "x"})"))
                .find("duplicate key"),
            std::string::npos);
}

// Issue 44 item 2: the 4,096-byte line limit of signature lists was applied to summaries, so a
// compact (one-line) summary of ~45 signatures or one whose command_line holds a long exec:
// target was refused. A summary is bounded by the file size and the JSON limits instead.
TEST_F(KnownFile, CompactSummariesAndLongCommandLines) {
  std::string text =
      R"({"format":"fusefuzz-summary","command_line":"fusefuzz fuzz --target 'exec:)" +
      std::string(10000, 'x') + R"('","unique_findings":[)";
  for (int64_t i = 0; i < 100; ++i) {
    text += std::string(i ? "," : "") + R"({"signature":")" + Sig(i) + R"(","kind":"fusion"})";
  }
  text += "]}";
  const KnownSignatures k = ReadKnownSignatures(Write("compact.json", text));
  EXPECT_EQ(k.size(), 100u);
  EXPECT_TRUE(k.contains(Sig(99)));
  // A list keeps its line limit, and a summary its refusal of control characters.
  EXPECT_NE(ErrorOf(Write("long.txt", std::string(5000, 'a'))).find("line longer than 4096"),
            std::string::npos);
  EXPECT_NE(
      ErrorOf(Write("nul.json", std::string("{\"format\": \0}", 14))).find("control character"),
      std::string::npos);
}

}  // namespace
}  // namespace fusefuzz
