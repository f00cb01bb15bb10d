// `fusefuzz fuzz --shard I/N` and `fusefuzz merge` (issue 47): N shards merge to exactly the
// folders and counts of one campaign of the same cases; shards that do not add up are refused.
// FUSEFUZZ_SHARD_GRAPHS sets the campaign's size (the `long` ctest runs 4 x 20,000 vs 80,000).
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/cli_util.h"

namespace {

namespace fs = std::filesystem;
using fusefuzz::testing::CmdResult;
using fusefuzz::testing::Fusefuzz;
using fusefuzz::testing::TempDir;
using nlohmann::json;

// Planted faults of four rules: five signatures to merge. -j 1: which of a signature's first
// cases writes its folder is then the lowest, in one campaign as in each shard.
const std::string kCampaign =
    "fuzz --seed 7 -j 1 -q --inject "
    "through-activation,relu6-unbounded,pad-mode-ignored,sub-const-side";

std::string ReadText(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
}

json ReadJson(const fs::path& p) { return json::parse(ReadText(p)); }

void WriteText(const fs::path& p, const std::string& s) { std::ofstream(p, std::ios::binary) << s; }

// What must be the same in one campaign's summary and the merge of its shards: everything but
// times, the command line, progress and the shard/merge records.
json Comparable(json s) {
  for (const char* k : {"seconds", "graphs_per_second", "command_line", "progress", "shard",
                        "merge", "fusefuzz_version"})
    s.erase(k);
  if (s.contains("first_finding")) s["first_finding"].erase("seconds");
  if (s.contains("first_finding_by_kind"))
    for (auto& [kind, f] : s["first_finding_by_kind"].items()) f.erase("seconds");
  return s;
}

// Every file of DIR/findings, relative path -> content with DIR written as OUT.
std::map<std::string, std::string> Folders(const fs::path& dir) {
  std::map<std::string, std::string> files;
  for (const auto& e : fs::recursive_directory_iterator(dir / "findings")) {
    if (!e.is_regular_file()) continue;
    std::string text = ReadText(e.path());
    const std::string from = dir.string();
    for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + 3))
      text.replace(at, from.size(), "OUT");
    files[fs::relative(e.path(), dir).string()] = text;
  }
  return files;
}

int64_t Graphs() {
  const char* env = std::getenv("FUSEFUZZ_SHARD_GRAPHS");
  return env ? std::atoll(env) : 480;
}

std::string Shards(const fs::path& root, int n) {
  std::string dirs;
  for (int i = 0; i < n; ++i) dirs += " " + (root / ("s" + std::to_string(i))).string();
  return dirs;
}

TEST(ShardMerge, FourShardsAreOneCampaign) {
  const fs::path root = TempDir("shard-merge");
  const std::string graphs = " --graphs " + std::to_string(Graphs());
  CmdResult full = Fusefuzz(kCampaign + graphs + " --out " + (root / "full").string());
  ASSERT_EQ(full.status, 1) << full.out;
  for (int i = 0; i < 4; ++i) {
    const std::string dir = (root / ("s" + std::to_string(i))).string();
    const std::string shard = " --shard " + std::to_string(i) + "/4 --out " + dir;
    if (i == 1) {
      // One shard stopped and resumed with the whole --graphs: the same shard as one run.
      CmdResult half = Fusefuzz(kCampaign + " --graphs " + std::to_string(Graphs() / 2) + shard);
      ASSERT_LE(half.status, 1) << half.out;
      CmdResult other = Fusefuzz(kCampaign + graphs + " --shard 2/4 --resume --out " + dir);
      EXPECT_EQ(other.status, 2) << other.out;
      EXPECT_NE(other.out.find("it was made with --shard 1/4, this run has --shard 2/4"),
                std::string::npos)
          << other.out;
      CmdResult rest = Fusefuzz(kCampaign + graphs + shard + " --resume");
      ASSERT_LE(rest.status, 1) << rest.out;
    } else {
      CmdResult r = Fusefuzz(kCampaign + graphs + shard);
      ASSERT_LE(r.status, 1) << r.out;
    }
    const json s = ReadJson(fs::path(dir) / "summary.json");
    EXPECT_EQ(s["shard"]["index"], i);
    EXPECT_EQ(s["shard"]["count"], 4);
    EXPECT_EQ(s["graphs"], (Graphs() - i + 3) / 4);
  }
  CmdResult merged = Fusefuzz("merge " + (root / "merged").string() + Shards(root, 4));
  ASSERT_EQ(merged.status, 1) << merged.out;
  EXPECT_NE(merged.out.find("every case of the campaign"), std::string::npos) << merged.out;
  const json a = ReadJson(root / "full" / "summary.json");
  const json b = ReadJson(root / "merged" / "summary.json");
  EXPECT_GE(a["unique_findings"].size(), 4u);
  EXPECT_EQ(Comparable(a).dump(1), Comparable(b).dump(1));
  EXPECT_EQ(b["merge"]["partial"], false);
  // Byte for byte, the folder's own path aside (each names where it is).
  const auto fa = Folders(root / "full"), fb = Folders(root / "merged");
  ASSERT_EQ(fa.size(), fb.size());
  for (const auto& [path, text] : fa) {
    ASSERT_TRUE(fb.count(path)) << path;
    EXPECT_TRUE(fb.at(path) == text) << path;
  }
  // The commands in a merged folder name the merged folder.
  const json u = b["unique_findings"][0];
  const fs::path repro = root / "merged" / u["folder"].get<std::string>() / "repro.json";
  EXPECT_EQ(ReadJson(repro)["command"], "fusefuzz replay " + repro.string() + " --expect fail");

  // --known of the merge: that signature is counted as known and gets no folder.
  const std::string sig = u["signature"];
  WriteText(root / "known.txt", sig + "\n");
  CmdResult k = Fusefuzz("merge --known " + (root / "known.txt").string() + " " +
                         (root / "known").string() + Shards(root, 4));
  ASSERT_LE(k.status, 1) << k.out;
  const json ks = ReadJson(root / "known" / "summary.json");
  EXPECT_EQ(ks["known"], u["count"]);
  EXPECT_EQ(ks["findings"].get<int64_t>(),
            b["findings"].get<int64_t>() - u["count"].get<int64_t>());
  EXPECT_FALSE(fs::exists(root / "known" / "findings" / sig));
  fs::remove_all(root);
}

TEST(ShardMerge, BadShardIsRefused) {
  const fs::path root = TempDir("shard-bad");
  for (const char* bad : {"4/4", "0/0", "x", "1/", "-1/4", "1/4/2", "3/70000"}) {
    CmdResult r = Fusefuzz("fuzz --graphs 10 -q --shard " + std::string(bad) + " --out " +
                           (root / "x").string());
    EXPECT_EQ(r.status, 2) << bad << ": " << r.out;
    EXPECT_NE(r.out.find("--shard"), std::string::npos) << r.out;
    EXPECT_FALSE(fs::exists(root / "x" / "summary.json")) << bad;
  }
  CmdResult few = Fusefuzz("fuzz --graphs 3 -q --shard 3/4 --out " + (root / "x").string());
  EXPECT_EQ(few.status, 2) << few.out;
  EXPECT_NE(few.out.find("has no cases among --graphs 3"), std::string::npos) << few.out;
  fs::remove_all(root);
}

// Small shards (no faults: quick) for the refusals and the hostile summaries below.
// Seed 3 by default; the campaigns with a planted fault use seed 4, whose 40 graphs give both
// shards a finding (after the generator's vocabulary grew, seed 3's shard 1 had none).
fs::path CleanShards(const std::string& name, int n, const std::string& extra = "", int seed = 3) {
  const fs::path root = TempDir(name);
  for (int i = 0; i < n; ++i) {
    CmdResult r = Fusefuzz("fuzz --graphs 40 --seed " + std::to_string(seed) + " -q --shard " +
                           std::to_string(i) + "/" + std::to_string(n) + extra + " --out " +
                           (root / ("s" + std::to_string(i))).string());
    EXPECT_LE(r.status, extra.empty() ? 0 : 1) << r.out;
  }
  return root;
}

TEST(ShardMerge, ShardsOfDifferentCampaignsAreRefused) {
  const fs::path root = CleanShards("shard-refuse", 2);
  const std::string out = " " + (root / "m").string();
  auto refused = [&](const std::string& args, const std::string& says) {
    CmdResult r = Fusefuzz("merge" + out + args);
    EXPECT_EQ(r.status, 2) << args << ": " << r.out;
    EXPECT_NE(r.out.find(says), std::string::npos) << args << ": " << r.out;
    EXPECT_FALSE(fs::exists(root / "m" / "summary.json")) << args;
  };
  refused(Shards(root, 1), "shard 1/2 missing");
  refused(Shards(root, 2) + " " + (root / "s1").string(), "are both shard 1/2");
  // Another seed, another option, another shard count: each named.
  ASSERT_EQ(
      Fusefuzz("fuzz --graphs 40 --seed 4 -q --shard 1/2 --out " + (root / "seed").string()).status,
      0);
  refused(" " + (root / "s0").string() + " " + (root / "seed").string(), "--seed 4 there, 3 here");
  ASSERT_EQ(Fusefuzz("fuzz --graphs 40 --seed 3 -q --minimize-budget 3 --shard 1/2 --out " +
                     (root / "budget").string())
                .status,
            0);
  refused(" " + (root / "s0").string() + " " + (root / "budget").string(),
          "option --minimize-budget");
  ASSERT_EQ(Fusefuzz("fuzz --graphs 40 --seed 3 -q --shard 1/3 --out " + (root / "three").string())
                .status,
            0);
  refused(" " + (root / "s0").string() + " " + (root / "three").string(), "shard count");
  // A campaign run without --shard: which cases it holds is not recorded.
  ASSERT_EQ(Fusefuzz("fuzz --graphs 40 --seed 3 -q --out " + (root / "plain").string()).status, 0);
  refused(" " + (root / "plain").string(), "/shard: missing");
  // OUT must be new (or --force) and not a shard.
  fs::create_directories(root / "m");
  WriteText(root / "m" / "mine.txt", "x");
  refused(Shards(root, 2), "is not empty");
  CmdResult forced = Fusefuzz("merge --force" + out + Shards(root, 2));
  EXPECT_EQ(forced.status, 0) << forced.out;
  EXPECT_TRUE(fs::exists(root / "m" / "mine.txt"));
  EXPECT_EQ(ReadJson(root / "m" / "summary.json")["graphs"], 40);
  CmdResult self = Fusefuzz("merge " + (root / "s0").string() + Shards(root, 2));
  EXPECT_EQ(self.status, 2) << self.out;
  fs::remove_all(root);
}

TEST(ShardMerge, HostileSummaryIsRefusedNamingTheField) {
  const fs::path root = CleanShards("shard-hostile", 2, " --inject through-activation", 4);
  const fs::path summary = root / "s1" / "summary.json";
  const json good = ReadJson(summary);
  auto refused = [&](const json& edited, const std::string& says) {
    WriteText(summary, edited.dump());
    CmdResult r = Fusefuzz("merge " + (root / "m").string() + Shards(root, 2));
    EXPECT_EQ(r.status, 2) << says << ": " << r.out;
    EXPECT_NE(r.out.find(summary.string()), std::string::npos) << r.out;
    EXPECT_NE(r.out.find(says), std::string::npos) << r.out;
    fs::remove_all(root / "m");
  };
  json j = good;
  ASSERT_FALSE(j["unique_findings"].empty());
  j["unique_findings"][0]["signature"] = "../../etc";
  refused(j, "/unique_findings/0/signature: \"../../etc\" is not a signature");
  j = good;
  j["unique_findings"][0]["signature"] = "a\"b";
  refused(j, "/unique_findings/0/signature");
  j = good;
  j["graphs"] = "ten";
  refused(j, "/graphs: must be an integer >= 0, not \"ten\"");
  j = good;
  j["verdicts"]["PASS"] = j["verdicts"]["PASS"].get<int64_t>() + 1;
  refused(j, "/verdicts: adds up to");
  j = good;
  j["buckets"]["a/../b"] = j["buckets"].begin().value();
  refused(j, "/buckets/a~1..~1b: the key is not a bucket key");
  j = good;
  j["shard"].erase("options");
  refused(j, "/shard/options: missing");
  WriteText(summary, "{\"format\": ");
  CmdResult r = Fusefuzz("merge " + (root / "m").string() + Shards(root, 2));
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find(summary.string()), std::string::npos) << r.out;
  fs::remove_all(root);
}

// An interrupted shard is merged and the merge says it is partial; a folder a killed shard wrote
// after its last checkpoint is kept (not counted).
TEST(ShardMerge, PartialShardsAreMergedAndSaySo) {
  const fs::path root = CleanShards("shard-partial", 2, " --inject through-activation", 4);
  json s = ReadJson(root / "s1" / "summary.json");
  s["interrupted"] = true;
  WriteText(root / "s1" / "summary.json", s.dump());
  // The finding of shard 1 copied under a name no summary lists.
  ASSERT_FALSE(s["unique_findings"].empty());
  const std::string sig = s["unique_findings"][0]["signature"];
  fs::copy(root / "s1" / "findings" / sig, root / "s1" / "findings" / "fusion-late-0123abcd",
           fs::copy_options::recursive);
  CmdResult r = Fusefuzz("merge " + (root / "m").string() + Shards(root, 2));
  EXPECT_EQ(r.status, 1) << r.out;
  EXPECT_NE(r.out.find("merge: partial: '" + (root / "s1").string() +
                       "' (shard 1/2) was interrupted after"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("fusion-late-0123abcd"), std::string::npos) << r.out;
  const json m = ReadJson(root / "m" / "summary.json");
  EXPECT_EQ(m["merge"]["partial"], true);
  EXPECT_EQ(m["interrupted"], true);
  EXPECT_EQ(m["merge"]["uncounted_folders"][0], "fusion-late-0123abcd");
  EXPECT_TRUE(fs::exists(root / "m" / "findings" / "fusion-late-0123abcd" / "repro.json"));
  EXPECT_NE(ReadText(root / "m" / "summary.md").find("**partial**"), std::string::npos);
  fs::remove_all(root);
}

// Each bucket's cases are signed as one campaign signs them: its first minimized cases over all
// shards keep their signatures, every other case takes the first one's (in its shard it took
// that shard's first case's). Two shards edited to hold one bucket signed differently.
TEST(ShardMerge, BucketsAreSignedAsOneCampaign) {
  const fs::path root = CleanShards("shard-buckets", 2);
  const std::string x = "fusion-r-Conv.Clip-11111111", y = "fusion-r-FusedConv.Clip-22222222";
  auto plant = [&](int shard, const std::string& sig, int64_t slot_case, int64_t others,
                   int64_t others_first) {
    const fs::path p = root / ("s" + std::to_string(shard)) / "summary.json";
    json s = ReadJson(p);
    const int64_t n = 1 + others;
    s["verdicts"]["PASS"] = s["verdicts"]["PASS"].get<int64_t>() - n;
    s["verdicts"]["MISMATCH"] = n;
    s["findings"] = n;
    s["findings_by_kind"] = {{"fusion", {{"cases", n}, {"known", 0}}}};
    s["unique_findings"] = {{{"signature", sig},
                             {"kind", "fusion"},
                             {"count", n},
                             {"first_case", slot_case},
                             {"bucket", "fusion-r-Clip-0"}}};
    s["buckets"] = {{"fusion-r-Clip-0",
                     {{"slots",
                       {{{"case", slot_case},
                         {"signature", sig},
                         {"kind", "fusion"},
                         {"known", false},
                         {"pattern", "Conv\u2192Clip"}}}},
                      {"others", others},
                      {"others_first", others_first},
                      {"others_kind", "fusion"}}}};
    WriteText(p, s.dump());
  };
  plant(0, x, 4, 5, 10);  // shard 0: case 4 signed x, its 5 later cases took x
  plant(1, y, 1, 3, 7);   // shard 1: case 1 signed y, its 3 later cases took y
  CmdResult r = Fusefuzz("merge " + (root / "m").string() + Shards(root, 2));
  EXPECT_EQ(r.status, 1) << r.out;
  const json m = ReadJson(root / "m" / "summary.json");
  // One campaign: cases 1 and 4 are the bucket's first two (each signs itself), the other 8
  // take case 1's signature.
  std::map<std::string, std::pair<int64_t, int64_t>> got;
  for (const json& u : m["unique_findings"]) got[u["signature"]] = {u["count"], u["first_case"]};
  EXPECT_EQ(got[y], std::make_pair(int64_t{9}, int64_t{1}));
  EXPECT_EQ(got[x], std::make_pair(int64_t{1}, int64_t{4}));
  EXPECT_EQ(m["findings"], 10);
  EXPECT_EQ(m["first_finding_by_kind"]["fusion"]["case"], 1);
  fs::remove_all(root);
}

// An exec target (the example target, a separate program) shards the same way.
TEST(ShardMerge, ExecTargetShards) {
  const fs::path root = TempDir("shard-exec");
  const std::string c = std::string("fuzz --graphs 60 --seed 5 -j 1 -q --target 'exec:") +
                        FUSEFUZZ_EXAMPLE_TARGET + " --inject eps-dropped'";
  CmdResult full = Fusefuzz(c + " --out " + (root / "full").string());
  ASSERT_LE(full.status, 1) << full.out;
  for (int i = 0; i < 2; ++i) {
    CmdResult r = Fusefuzz(c + " --shard " + std::to_string(i) + "/2 --out " +
                           (root / ("s" + std::to_string(i))).string());
    ASSERT_LE(r.status, 1) << r.out;
  }
  CmdResult m = Fusefuzz("merge " + (root / "m").string() + Shards(root, 2));
  EXPECT_EQ(m.status, full.status) << m.out;
  EXPECT_EQ(Comparable(ReadJson(root / "full" / "summary.json")).dump(1),
            Comparable(ReadJson(root / "m" / "summary.json")).dump(1));
  fs::remove_all(root);
}

}  // namespace
