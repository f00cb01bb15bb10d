// Running fusefuzz against a hostile world (issue 29): with a deadline (a hang is a failure, not
// a hung test), optionally a file-size limit (a full disk) and SIGINT ignored (a background job
// of a script).
#pragma once

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace fusefuzz::testing {

struct RunResult {
  int status = -1;         // exit status, 128 + signal, or -1 when it outlived the deadline
  bool timed_out = false;  // killed at the deadline
  std::string out;         // stdout + stderr
};

struct RunOptions {
  double deadline_seconds = 60;
  rlim_t file_size_limit = 0;  // > 0: RLIMIT_FSIZE (writes fail with EFBIG, as on a full disk)
  bool ignore_sigint = false;
  std::string cwd;
};

inline RunOptions Deadline(double seconds) {
  RunOptions o;
  o.deadline_seconds = seconds;
  return o;
}
inline RunOptions FileSizeLimit(rlim_t bytes) {
  RunOptions o;
  o.file_size_limit = bytes;
  return o;
}
inline RunOptions IgnoringSigint() {
  RunOptions o;
  o.ignore_sigint = true;
  return o;
}

// The binary under test: FUSEFUZZ_TEST_BINARY (to check that a test fails on another build,
// e.g. the one before a fix) or the one this test was built with.
inline std::string TestBinary() {
  const char* b = std::getenv("FUSEFUZZ_TEST_BINARY");
  return b && *b ? b : FUSEFUZZ_BINARY;
}

// Starts fusefuzz with exactly these arguments (no shell); returns its pid, *out_fd its output.
inline pid_t Start(const std::vector<std::string>& args, const RunOptions& o, int* out_fd) {
  int fds[2];
  if (::pipe(fds) != 0) return -1;
  pid_t pid = ::fork();
  if (pid == 0) {
    ::close(fds[0]);
    ::dup2(fds[1], 1);
    ::dup2(fds[1], 2);
    ::close(fds[1]);
    int devnull = ::open("/dev/null", O_RDONLY);
    ::dup2(devnull, 0);
    ::setpgid(0, 0);  // killed as a group at the deadline
    if (!o.cwd.empty() && ::chdir(o.cwd.c_str()) != 0) ::_exit(126);
    if (o.file_size_limit > 0) {
      ::signal(SIGXFSZ, SIG_IGN);
      rlimit lim{o.file_size_limit, o.file_size_limit};
      ::setrlimit(RLIMIT_FSIZE, &lim);
    }
    if (o.ignore_sigint) ::signal(SIGINT, SIG_IGN);
    std::string bin = TestBinary();
    std::vector<std::string> copy = args;
    std::vector<char*> argv{bin.data()};
    for (auto& a : copy) argv.push_back(a.data());
    argv.push_back(nullptr);
    ::execv(bin.c_str(), argv.data());
    ::_exit(127);
  }
  ::close(fds[1]);
  *out_fd = fds[0];
  return pid;
}

// Reads the output until EOF or the deadline; kills the group at the deadline; waits.
inline RunResult Finish(pid_t pid, int fd, double deadline_seconds) {
  RunResult r;
  const auto end = std::chrono::steady_clock::now() +
                   std::chrono::milliseconds(static_cast<int64_t>(deadline_seconds * 1000));
  char buf[4096];
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                    end - std::chrono::steady_clock::now())
                    .count();
    if (left <= 0) {
      r.timed_out = true;
      ::kill(-pid, SIGKILL);
      ::kill(pid, SIGKILL);
      break;
    }
    pollfd p{fd, POLLIN, 0};
    int n = ::poll(&p, 1, static_cast<int>(std::min<int64_t>(left, 200)));
    if (n <= 0) continue;
    ssize_t got = ::read(fd, buf, sizeof buf);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) break;
    if (r.out.size() < (size_t{1} << 20)) r.out.append(buf, static_cast<size_t>(got));
  }
  ::close(fd);
  int st = 0;
  ::waitpid(pid, &st, 0);
  r.status = r.timed_out ? -1 : WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
  return r;
}

inline RunResult Fusefuzz(const std::vector<std::string>& args, const RunOptions& o = {}) {
  int fd = -1;
  pid_t pid = Start(args, o, &fd);
  if (pid < 0) return {};
  return Finish(pid, fd, o.deadline_seconds);
}

inline std::string Slurp(const std::filesystem::path& p) {
  std::ostringstream s;
  s << std::ifstream(p, std::ios::binary).rdbuf();
  return s.str();
}

inline void Spit(const std::filesystem::path& p, const std::string& text) {
  std::ofstream(p, std::ios::binary) << text;
}

// A sparse file of `bytes` zero bytes (no disk used).
inline void Sparse(const std::filesystem::path& p, off_t bytes) {
  int fd = ::open(p.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd >= 0) {
    if (::ftruncate(fd, bytes) != 0) {
    }
    ::close(fd);
  }
}

inline std::string Seed(const std::string& name) {
  return std::string(FUSEFUZZ_SOURCE_DIR) + "/corpus/seeds/" + name;
}

// A new empty folder for one test: temp/fusefuzz-<round>-<name>-<pid>.
inline std::filesystem::path FreshDir(const std::string& round, const std::string& name) {
  std::filesystem::path p = std::filesystem::temp_directory_path() /
                            ("fusefuzz-" + round + "-" + name + "-" + std::to_string(::getpid()));
  std::filesystem::remove_all(p);
  std::filesystem::create_directories(p);
  return p;
}

inline bool Has(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

}  // namespace fusefuzz::testing
