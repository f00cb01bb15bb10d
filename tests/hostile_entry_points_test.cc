// Issue 29, "extend what guards against a third round": every file-reading entry point of the
// CLI is given a FIFO, /dev/zero, a folder and a 3 GB sparse file; symlinks are planted in every
// file name fusefuzz writes into an output folder. docs/security.md lists the same entry points.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "tests/hostile_util.h"

namespace fusefuzz::testing {
namespace {

namespace fs = std::filesystem;

fs::path Fresh(const std::string& name) { return FreshDir("entry", name); }

const char* const kKinds[] = {"fifo", "zero", "dir", "sparse"};

// What each kind must be refused with.
std::string Expected(const std::string& kind) {
  if (kind == "fifo") return "FIFO";
  if (kind == "zero") return "character device";
  if (kind == "dir") return "is a directory";
  return "larger than the limit";
}

// `p` becomes a file of the kind.
void Make(const fs::path& p, const std::string& kind) {
  if (kind == "fifo") ::mkfifo(p.c_str(), 0644);
  if (kind == "zero") fs::create_symlink("/dev/zero", p);
  if (kind == "dir") fs::create_directories(p);
  if (kind == "sparse") Sparse(p, off_t{3} << 30);
}

struct EntryPoint {
  std::string name;
  // Arguments; "@" is the hostile file, "@DIR" a folder whose input_0.pb / output_0.pb is it,
  // "@OUT" an output folder whose summary.json is it.
  std::vector<std::string> args;
  std::string ext = ".json";
};

TEST(HostileEntryPoints, EveryReaderRefusesFifoDevZeroFolderAndHugeSparseFile) {
  fs::path d = Fresh("readers");
  const std::string g = Seed("op-activations.json");
  const std::string repro =
      std::string(FUSEFUZZ_SOURCE_DIR) + "/corpus/faults/bias-not-scaled.repro.json";
  RunResult ex = Fusefuzz({"export", g, "--onnx", (d / "set" / "model.onnx").string(),
                           "--inputs-pb", (d / "set").string()});
  ASSERT_EQ(ex.status, 0) << ex.out;
  const std::string set = (d / "set" / "test_data_set_0").string();
  const std::string o = (d / "o").string();
  const std::vector<EntryPoint> entries = {
      {"run GRAPH", {"run", "@"}},
      {"run --inputs", {"run", g, "--inputs", "@"}},
      {"show GRAPH", {"show", "@"}},
      {"check MODEL.json", {"check", "@", "--out", o}},
      {"check MODEL.onnx", {"check", "@", "--out", o}, ".onnx"},
      {"check --inputs", {"check", g, "--inputs", "@", "--out", o}},
      {"compare INPUT", {"compare", "@", "--outputs", set}},
      {"compare --inputs", {"compare", g, "--inputs", "@", "--outputs", set}},
      {"compare --inputs-pb DIR", {"compare", g, "--inputs-pb", "@DIR", "--outputs", set}},
      {"compare --outputs FILE", {"compare", g, "--inputs-pb", set, "--outputs", "@"}},
      {"compare --outputs DIR", {"compare", g, "--inputs-pb", set, "--outputs", "@DIR"}},
      {"import MODEL", {"import", "@", "-o", o + ".json"}, ".onnx"},
      {"import --cut MODEL", {"import", "@", "--cut", "-o", o + ".json"}, ".onnx"},
      {"quantize MODEL", {"quantize", "@", "-o", o + ".onnx"}, ".onnx"},
      {"replay REPRO", {"replay", "@"}},
      {"minimize REPRO", {"minimize", "@", "-o", o + ".json"}},
      {"export INPUT", {"export", "@", "--onnx", o + ".onnx"}},
      {"export --inputs", {"export", g, "--inputs", "@", "--onnx", o + ".onnx"}},
      {"gen --config", {"gen", "--config", "@"}},
      {"coverage --config", {"coverage", "--graphs", "3", "--config", "@"}},
      {"fuzz --config", {"fuzz", "--graphs", "3", "-q", "--config", "@", "--out", o}},
      {"fuzz --known", {"fuzz", "--graphs", "3", "-q", "--known", "@", "--out", o}},
      {"fuzz --resume (summary.json)",
       {"fuzz", "--graphs", "3", "-q", "--resume", "--out", "@OUT"}},
      {"bench --from-json", {"bench", "--from-json", "@", "--out", o}},
  };
  int n = 0;
  for (const char* kind : kKinds) {
    const fs::path file = d / (std::string(kind) + ".json");
    const fs::path model = d / (std::string(kind) + ".onnx");
    const fs::path pbdir = d / (std::string("pb-") + kind);
    const fs::path outdir = d / (std::string("out-") + kind);
    Make(file, kind);
    Make(model, kind);
    fs::create_directories(pbdir);
    Make(pbdir / "input_0.pb", kind);
    Make(pbdir / "output_0.pb", kind);
    fs::create_directories(outdir);
    Make(outdir / "summary.json", kind);
    for (const EntryPoint& e : entries) {
      // A folder is a valid --known (its summary.json), replay argument (its reproducers) and
      // --outputs (a backend-test folder): there the missing file inside is the refusal.
      const bool dir_is_valid =
          std::string(kind) == "dir" && (e.name == "fuzz --known" || e.name == "replay REPRO" ||
                                         e.name == "compare --outputs FILE");
      std::vector<std::string> args;
      for (const std::string& a : e.args) {
        if (a == "@")
          args.push_back((e.ext == ".onnx" ? model : file).string());
        else if (a == "@DIR")
          args.push_back(pbdir.string());
        else if (a == "@OUT")
          args.push_back(outdir.string());
        else
          args.push_back(a);
      }
      RunResult r = Fusefuzz(args, Deadline(30));
      ++n;
      EXPECT_FALSE(r.timed_out) << e.name << " with " << kind << ": hangs";
      EXPECT_EQ(r.status, 2) << e.name << " with " << kind << ": " << r.out;
      if (!dir_is_valid) {
        EXPECT_TRUE(Has(r.out, Expected(kind))) << e.name << " with " << kind << ": " << r.out;
      }
      fs::remove_all(o);
    }
  }
  EXPECT_EQ(n, 4 * static_cast<int>(entries.size()));
  fs::remove_all(d);
}

// Every regular file under `root`, relative.
std::vector<fs::path> FilesUnder(const fs::path& root) {
  std::vector<fs::path> out;
  for (const auto& e : fs::recursive_directory_iterator(root)) {
    if (fs::is_regular_file(e.symlink_status())) {
      out.push_back(fs::relative(e.path(), root));
    }
  }
  return out;
}

// Replaces every file under `root` but those starting with one of `except` with a symlink to a copy
// of it outside `root` (so that what is read through the link is still valid); returns link ->
// copy.
std::map<fs::path, fs::path> PlantLinks(const fs::path& root, const fs::path& victims,
                                        const std::vector<std::string>& except = {}) {
  std::map<fs::path, fs::path> planted;
  fs::create_directories(victims);
  int i = 0;
  for (const fs::path& rel : FilesUnder(root)) {
    bool skip = false;
    for (const std::string& e : except) skip = skip || rel.string().rfind(e, 0) == 0;
    if (skip) continue;
    const fs::path copy = victims / ("victim-" + std::to_string(i++));
    fs::copy_file(root / rel, copy);
    fs::remove(root / rel);
    fs::create_symlink(copy, root / rel);
    planted[root / rel] = copy;
  }
  return planted;
}

// Nothing was written through the links: each copy is unchanged (compared with `before`).
void ExpectVictimsUntouched(const std::map<fs::path, fs::path>& planted,
                            const std::map<fs::path, std::string>& before, const char* what) {
  for (const auto& [link, copy] : planted) {
    EXPECT_EQ(Slurp(copy), before.at(copy)) << what << ": written through " << link;
  }
}

std::map<fs::path, std::string> Contents(const std::map<fs::path, fs::path>& planted) {
  std::map<fs::path, std::string> c;
  for (const auto& [link, copy] : planted) c[copy] = Slurp(copy);
  return c;
}

TEST(HostileEntryPoints, SymlinksPlantedInEveryWrittenNameAreNotFollowed) {
  fs::path d = Fresh("links");
  // A campaign's folder: summaries, finding folders, bucket slots. The lock file and the
  // findings' claim files (flock only, never written) are refused when they are links
  // (HostileRound2.Item4WritesEscapeOutputFolder tests the lock).
  fs::path c = d / "campaign";
  const std::vector<std::string> campaign = {
      "fuzz",          "--seed", "3",       "-q", "--inject", "bias-not-scaled",
      "--no-minimize", "--out",  c.string()};
  std::vector<std::string> first = campaign, second = campaign;
  first.insert(first.begin() + 1, {"--graphs", "30"});
  second.insert(second.begin() + 1, {"--graphs", "60"});
  second.push_back("--resume");
  RunResult r = Fusefuzz(first);
  ASSERT_EQ(r.status, 1) << r.out;
  auto planted = PlantLinks(c, d / "victims-campaign", {".lock", ".claims/"});
  ASSERT_GT(planted.size(), 5u);
  auto before = Contents(planted);
  r = Fusefuzz(second);
  EXPECT_EQ(r.status, 1) << r.out;
  ExpectVictimsUntouched(planted, before, "fuzz --resume");
  for (const char* name : {"summary.json", "summary.md", "summary.html"}) {
    EXPECT_TRUE(fs::is_regular_file(fs::symlink_status(c / name))) << name << " not replaced";
  }
  // A finding folder rewritten by minimize --folder: every name it writes, test data included.
  fs::path f = d / "folder";
  const std::string repro =
      std::string(FUSEFUZZ_SOURCE_DIR) + "/corpus/faults/bias-not-scaled.repro.json";
  const std::vector<std::string> minimize = {"minimize", repro,         "--folder",
                                             f.string(), "--max-tests", "20"};
  r = Fusefuzz(minimize);
  ASSERT_EQ(r.status, 0) << r.out;
  planted = PlantLinks(f, d / "victims-folder");
  ASSERT_GE(planted.size(), 5u);  // repro.json, report.md, before.dot, model.onnx, .pb files
  before = Contents(planted);
  r = Fusefuzz(minimize);
  EXPECT_EQ(r.status, 0) << r.out;
  ExpectVictimsUntouched(planted, before, "minimize --folder");
  for (const auto& [link, copy] : planted) {
    EXPECT_TRUE(fs::is_regular_file(fs::symlink_status(link))) << link << " not replaced";
  }
  // export --inputs-pb DIR: the .pb files of test_data_set_0/ (--onnx FILE is the user's path).
  fs::path e = d / "export";
  const std::vector<std::string> exp = {"export",      Seed("op-activations.json"),
                                        "--onnx",      (d / "model.onnx").string(),
                                        "--inputs-pb", e.string()};
  r = Fusefuzz(exp);
  ASSERT_EQ(r.status, 0) << r.out;
  planted = PlantLinks(e, d / "victims-export");
  before = Contents(planted);
  r = Fusefuzz(exp);
  EXPECT_EQ(r.status, 0) << r.out;
  ExpectVictimsUntouched(planted, before, "export --inputs-pb");
  // A planted folder link inside an output folder is refused, its target left alone.
  fs::create_directories(d / "elsewhere");
  fs::path c2 = d / "campaign2";
  fs::create_directories(c2);
  fs::create_symlink(d / "elsewhere", c2 / "findings");
  std::vector<std::string> third = campaign;
  third.back() = c2.string();
  third.insert(third.begin() + 1, {"--graphs", "30"});
  third.push_back("--resume");
  r = Fusefuzz(third);
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_TRUE(fs::is_empty(d / "elsewhere")) << "written through a planted folder link";
  fs::remove_all(d);
}

}  // namespace
}  // namespace fusefuzz::testing
