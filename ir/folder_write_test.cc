// WriteFileInFolder and ReadRegularFile (issue 29, items 1 and 4): inside an output folder a
// planted link is replaced or refused, never followed; a reader never blocks on a FIFO.
#include "ir/folder_write.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>

#include "ir/error.h"
#include "ir/read_file.h"

namespace fusefuzz {
namespace {

namespace fs = std::filesystem;

fs::path Fresh(const std::string& name) {
  fs::path p = fs::temp_directory_path() /
               ("fusefuzz-folder-write-" + name + "-" + std::to_string(::getpid()));
  fs::remove_all(p);
  fs::create_directories(p);
  return p;
}

std::string Slurp(const fs::path& p) {
  std::ostringstream s;
  s << std::ifstream(p).rdbuf();
  return s.str();
}

std::string ErrorOf(const std::function<void()>& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(HostileRound2, Item4FolderWritesReplaceLinksAndRefuseFolderLinks) {
  fs::path d = Fresh("links");
  fs::path out = d / "out";
  fs::create_directories(out / "sub");
  std::ofstream(d / "victim") << "VICTIM";
  fs::create_symlink("../victim", out / "file");
  WriteFileInFolder(out.string(), "file", "new");
  EXPECT_EQ(Slurp(d / "victim"), "VICTIM");
  EXPECT_TRUE(fs::is_regular_file(fs::symlink_status(out / "file")));
  EXPECT_EQ(Slurp(out / "file"), "new");
  // A FIFO is replaced, not opened (which would block without a reader).
  ASSERT_EQ(::mkfifo((out / "sub" / "fifo").c_str(), 0644), 0);
  WriteFileInFolder(out.string(), "sub/fifo", "x");
  EXPECT_EQ(Slurp(out / "sub" / "fifo"), "x");
  // A folder link inside: refused, its target untouched.
  fs::create_directories(d / "elsewhere");
  fs::create_symlink(d / "elsewhere", out / "linked");
  EXPECT_NE(ErrorOf([&] { WriteFileInFolder(out.string(), "linked/f", "x"); }).find("symlink"),
            std::string::npos);
  EXPECT_NE(ErrorOf([&] { MakeFolderIn(out.string(), "linked/deeper"); }).find("symlink"),
            std::string::npos);
  EXPECT_TRUE(fs::is_empty(d / "elsewhere"));
  EXPECT_FALSE(IsFolderIn(out.string(), "linked"));
  EXPECT_TRUE(IsFolderIn(out.string(), "sub"));
  // A folder where the file goes: refused.
  EXPECT_NE(ErrorOf([&] { WriteFileInFolder(out.string(), "sub", "x"); }).find("is a folder"),
            std::string::npos);
  // The root itself is the user's: a link to it is followed.
  fs::create_symlink(out, d / "root-link");
  WriteFileInFolder((d / "root-link").string(), "via-root", "ok");
  EXPECT_EQ(Slurp(out / "via-root"), "ok");
  // RemoveIn removes a link, not what it names.
  EXPECT_TRUE(RemoveIn(out.string(), "file"));
  EXPECT_TRUE(RemoveIn(out.string(), "linked"));
  EXPECT_TRUE(fs::exists(d / "elsewhere"));
  // No temp file is left anywhere.
  for (const auto& e : fs::recursive_directory_iterator(out)) {
    EXPECT_EQ(e.path().filename().string().find(".tmp"), std::string::npos) << e.path();
  }
  fs::remove_all(d);
}

TEST(HostileRound2, Item1ReadersRefuseFifosAndDevicesWithoutBlocking) {
  fs::path d = Fresh("read");
  ASSERT_EQ(::mkfifo((d / "fifo").c_str(), 0644), 0);
  EXPECT_NE(ErrorOf([&] { ReadRegularFile((d / "fifo").string()); }).find("FIFO"),
            std::string::npos);
  EXPECT_NE(ErrorOf([&] { ReadRegularFile("/dev/zero"); }).find("character device"),
            std::string::npos);
  EXPECT_NE(ErrorOf([&] { ReadRegularFile(d.string()); }).find("is a directory"),
            std::string::npos);
  std::ofstream(d / "f") << "0123456789";
  ReadFileOptions o;
  o.max_bytes = 4;
  EXPECT_NE(ErrorOf([&] { ReadRegularFile((d / "f").string(), o); }).find("larger than the limit"),
            std::string::npos);
  fs::create_symlink("f", d / "link");
  EXPECT_EQ(ReadRegularFile((d / "link").string()), "0123456789");
  o = {};
  o.follow_links = false;
  EXPECT_NE(ErrorOf([&] { ReadRegularFile((d / "link").string(), o); }).find("symlink"),
            std::string::npos);
  fs::remove_all(d);
}

}  // namespace
}  // namespace fusefuzz
