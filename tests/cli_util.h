// Running the `fusefuzz` binary from tests.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <string>

namespace fusefuzz::testing {

struct CmdResult {
  int status = -1;
  std::string out;  // stdout + stderr
};

inline CmdResult Fusefuzz(const std::string& args) {
  std::string cmd = std::string(FUSEFUZZ_BINARY) + " " + args + " 2>&1";
  CmdResult r;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return r;
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) r.out.append(buf.data(), n);
  int st = pclose(p);
  r.status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
  return r;
}

// A fresh, empty folder unique to this process.
inline std::filesystem::path TempDir(const std::string& name) {
  auto p = std::filesystem::temp_directory_path() /
           ("fusefuzz-test-" + name + "-" + std::to_string(getpid()));
  std::filesystem::remove_all(p);
  std::filesystem::create_directories(p);
  return p;
}

}  // namespace fusefuzz::testing
