// A child process behind three pipes, for external targets (targets/exec_target.cc).
//
// `/bin/sh -c COMMAND` runs in its own process group, so a hung program is killed together with
// anything it started. That group dies with fusefuzz whatever ends it, SIGKILL included: the
// shell gets PR_SET_PDEATHSIG, and since the program it starts (or a wrapper script's children)
// does not, a guard process per target holds a lifeline pipe from us and kills the whole group
// when the pipe closes without an all-clear. A program that exits while
// something it started keeps its stdout open is seen to exit (its status is polled while we
// wait), not taken for a hang. All I/O is non-blocking and multiplexed with poll(): while a request
// is written, stdout is buffered and stderr drained, so a chatty child can never deadlock us, and
// stderr is kept as a bounded tail for crash reports.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

#include "targets/target.h"

namespace fusefuzz {

using Deadline = std::chrono::steady_clock::time_point;

// One shell word for Subprocess::Start's command: single quotes, with ' as '\''. Used for paths
// of our own or of the user's environment; text read from a file never forms a command.
std::string ShellQuote(const std::string& s);

class Subprocess {
 public:
  enum class Io { kOk, kEof, kTimeout, kTooLong };

  // Starts `/bin/sh -c command` with stdin/stdout/stderr on pipes; other descriptors are not
  // inherited. Returns null and sets *error when the shell cannot be started. A command that
  // does not exist is not detected here: the shell starts, says so on stderr and exits 127.
  static std::unique_ptr<Subprocess> Start(const std::string& command, std::string* error);

  // Closes stdin, gives the program a moment to exit on its own, then kills its group.
  ~Subprocess();
  Subprocess(const Subprocess&) = delete;
  Subprocess& operator=(const Subprocess&) = delete;

  // Writes all of `data` to the child's stdin. kEof: the child closed its stdin (or died).
  Io Write(std::string_view data, Deadline deadline);
  // Reads one line (without the '\n'). kTooLong once `max_bytes` arrive without a newline.
  Io ReadLine(std::string* line, Deadline deadline, size_t max_bytes);

  // Kills the whole process group (SIGKILL) and reaps the child. Idempotent.
  void Kill();
  // After stdout reached EOF: waits up to `grace_seconds` for the child to exit (then kills it)
  // and describes how it ended: "exited with status 3", "killed by signal 6 (Aborted)".
  std::string WaitForExit(double grace_seconds);

  // The last ~`kStderrTail` bytes the child wrote to stderr (drained first without blocking).
  std::string StderrTail();
  static constexpr size_t kStderrTail = 2048;

  pid_t pid() const { return pid_; }

 private:
  Subprocess() = default;
  // One poll() round over the open pipes; false when the deadline passed.
  bool Pump(bool want_write, Deadline deadline);
  void DrainStderr();
  // Reads what stdout holds now without blocking; true when anything arrived.
  bool DrainStdout();
  void AppendStderr(const char* data, size_t n);
  // The guard process (see the top of this file); StopGuard gives it the all-clear and reaps it.
  void StartGuard();
  void StopGuard();
  // Non-blocking check whether the child has exited, leaving it unreaped (a zombie keeps its
  // process group alive, so a later kill(-pgid) cannot hit a recycled id).
  bool HasExited();
  void Reap();
  static std::string Describe(int wait_status);

  pid_t pid_ = -1;
  bool reaped_ = false;
  int wait_status_ = 0;
  int in_fd_ = -1, out_fd_ = -1, err_fd_ = -1;
  pid_t guard_pid_ = -1;
  int guard_fd_ = -1;                   // the lifeline's write end
  std::string out_buf_;                 // bytes read from stdout, not yet returned as lines
  size_t out_scanned_ = 0;              // prefix of out_buf_ known to contain no '\n'
  size_t out_cap_ = size_t{256} << 20;  // stdout is not read beyond this (the line cap)
  std::string err_buf_;  // stderr tail (trimmed to kStderrTail when it grows past twice that)
};

// MakeExecTarget with a different cap on the length of one response line (the default is
// kMaxResponseLineBytes); for tests of the cap.
inline constexpr size_t kMaxResponseLineBytes = size_t{256} << 20;
std::unique_ptr<Target> MakeExecTargetWithLineCap(const std::string& command,
                                                  const TargetSettings& settings,
                                                  size_t max_line_bytes);

}  // namespace fusefuzz
