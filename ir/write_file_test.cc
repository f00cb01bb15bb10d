// WriteFileAtomic on what `-o` may name: symlinks, devices, FIFOs, folders, a full file system.
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>

#include "ir/error.h"
#include "ir/json_io.h"

namespace fusefuzz {
namespace {

namespace fs = std::filesystem;

fs::path FreshDir(const std::string& name) {
  fs::path p =
      fs::temp_directory_path() / ("fusefuzz-write-" + name + "-" + std::to_string(::getpid()));
  fs::remove_all(p);
  fs::create_directories(p);
  return p;
}

std::string Slurp(const fs::path& p) {
  std::ostringstream s;
  s << std::ifstream(p).rdbuf();
  return s.str();
}

// The message of the OutputError `f` throws, or "" when it throws none.
template <typename F>
std::string OutputErrorOf(F f) {
  try {
    f();
  } catch (const OutputError& e) {
    return e.what();
  }
  return "";
}

TEST(WriteFile, SymlinkIsFollowedNotReplaced) {
  fs::path d = FreshDir("link");
  std::ofstream(d / "real.json") << "old";
  fs::create_symlink("real.json", d / "link.json");
  WriteFileAtomic((d / "link.json").string(), "new");
  EXPECT_TRUE(fs::is_symlink(d / "link.json"));
  EXPECT_EQ(Slurp(d / "real.json"), "new");
  // A chain of links, and a dangling one (its target is created).
  fs::create_symlink("link.json", d / "link2.json");
  WriteFileAtomic((d / "link2.json").string(), "newer");
  EXPECT_EQ(Slurp(d / "real.json"), "newer");
  fs::create_symlink("missing.json", d / "dangling.json");
  WriteFileAtomic((d / "dangling.json").string(), "created");
  EXPECT_TRUE(fs::is_symlink(d / "dangling.json"));
  EXPECT_EQ(Slurp(d / "missing.json"), "created");
  fs::remove_all(d);
}

// Private copies of /dev/full and /dev/null (the real ones must never be at stake: a regression
// here would replace them for the whole machine). Needs CAP_MKNOD and a file system without
// nodev; false when not permitted.
bool MakeCharDevice(const fs::path& p, unsigned major, unsigned minor) {
  return ::mknod(p.c_str(), S_IFCHR | 0666, makedev(major, minor)) == 0;
}

TEST(WriteFile, DevFullIsAWriteErrorAndTheDeviceStays) {
  fs::path d = FreshDir("dev");
  if (!MakeCharDevice(d / "full", 1, 7) || !MakeCharDevice(d / "null", 1, 3)) {
    fs::remove_all(d);
    GTEST_SKIP() << "cannot create device nodes here (not root, or nodev)";
  }
  std::string full = (d / "full").string(), null = (d / "null").string();
  std::string msg = OutputErrorOf([&] { WriteFileAtomic(full, "x"); });
  EXPECT_NE(msg.find(full), std::string::npos) << msg;
  EXPECT_NE(msg.find(std::strerror(ENOSPC)), std::string::npos) << msg;
  EXPECT_TRUE(fs::is_character_file(full));
  EXPECT_EQ(OutputErrorOf([&] { WriteFileAtomic(null, "x"); }), "");
  EXPECT_TRUE(fs::is_character_file(null));
  // A FIFO is written directly too (here with a reader on the other end).
  ASSERT_EQ(::mkfifo((d / "fifo").c_str(), 0644), 0);
  pid_t reader = ::fork();
  if (reader == 0) {
    std::ifstream in(d / "fifo");
    std::string got((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    _exit(got == "through the fifo" ? 0 : 1);
  }
  WriteFileAtomic((d / "fifo").string(), "through the fifo");
  EXPECT_TRUE(fs::is_fifo(d / "fifo"));
  if (!fs::is_fifo(d / "fifo")) ::kill(reader, SIGKILL);  // replaced: it would wait forever
  int status = 0;
  ::waitpid(reader, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  fs::remove_all(d);
}

TEST(WriteFile, FoldersAndSocketsAreRefused) {
  fs::path d = FreshDir("special");
  fs::create_directories(d / "sub");
  EXPECT_NE(OutputErrorOf([&] { WriteFileAtomic((d / "sub").string(), "x"); }).find("folder"),
            std::string::npos);
  int s = ::socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::string sock = (d / "sock").string();
  ASSERT_LT(sock.size(), sizeof addr.sun_path);
  std::strcpy(addr.sun_path, sock.c_str());
  ASSERT_EQ(::bind(s, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  EXPECT_NE(OutputErrorOf([&] { WriteFileAtomic(sock, "x"); }).find("not a regular file"),
            std::string::npos);
  EXPECT_TRUE(fs::is_socket(sock));
  ::close(s);
  EXPECT_EQ(std::distance(fs::directory_iterator(d), fs::directory_iterator()), 2);
  fs::remove_all(d);
}

TEST(WriteFile, FileSizeLimitIsAnErrorAndLeavesNoTempFile) {
  // RLIMIT_FSIZE stands in for a full disk (write fails with EFBIG once SIGXFSZ is ignored);
  // in a child, as the limit is per process.
  fs::path d = FreshDir("efbig");
  std::ofstream(d / "out.json") << "previous";
  pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    std::signal(SIGXFSZ, SIG_IGN);
    rlimit lim{100, 100};
    ::setrlimit(RLIMIT_FSIZE, &lim);
    std::string msg =
        OutputErrorOf([&] { WriteFileAtomic((d / "out.json").string(), std::string(1000, 'x')); });
    _exit(msg.find(std::strerror(EFBIG)) != std::string::npos ? 0 : 1);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  EXPECT_EQ(Slurp(d / "out.json"), "previous");
  EXPECT_EQ(std::distance(fs::directory_iterator(d), fs::directory_iterator()), 1);
  fs::remove_all(d);
}

}  // namespace
}  // namespace fusefuzz
