#include "targets/subprocess.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <thread>

extern char** environ;

namespace fusefuzz {

std::string ShellQuote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

namespace {

void CloseFd(int* fd) {
  if (*fd >= 0) close(*fd);
  *fd = -1;
}

void SetNonBlocking(int fd) { fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK); }

// How often a blocked read or write checks whether the program has exited: a program can exit
// while something it started keeps our pipes open, so EOF alone does not tell.
constexpr auto kExitPoll = std::chrono::milliseconds(50);

std::string Errno(const char* what) { return std::string(what) + ": " + strerror(errno); }

}  // namespace

std::unique_ptr<Subprocess> Subprocess::Start(const std::string& command, std::string* error) {
  int in[2] = {-1, -1}, out[2] = {-1, -1}, err[2] = {-1, -1};
  // O_CLOEXEC: our ends never leak into this or any other child; the child's copies on 0/1/2
  // are made by dup2, which clears the flag.
  if (pipe2(in, O_CLOEXEC) != 0 || pipe2(out, O_CLOEXEC) != 0 || pipe2(err, O_CLOEXEC) != 0) {
    *error = Errno("pipe");
    for (int* fd : {&in[0], &in[1], &out[0], &out[1], &err[0], &err[1]}) CloseFd(fd);
    return nullptr;
  }
  // Everything the child needs is prepared before fork(): between fork and exec it may only make
  // async-signal-safe calls (this process may have threads).
  std::string sh = "sh", dash_c = "-c", cmd = command;
  char* argv[] = {sh.data(), dash_c.data(), cmd.data(), nullptr};
  const pid_t parent = getpid();
  pid_t pid = fork();
  if (pid == 0) {
    // fork rather than posix_spawn for this: the target dies with us (SIGKILL when the thread
    // that started it ends, e.g. a campaign worker killed with its parent); if we died before
    // prctl took effect, getppid() already differs.
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(127);
    setpgid(0, 0);  // own group: a hang is killed with its children
    int fds[3] = {in[0], out[1], err[1]};
    for (int i = 0; i < 3; ++i) {
      if (fds[i] == i) {
        fcntl(i, F_SETFD, 0);  // already in place: only drop close-on-exec
      } else if (dup2(fds[i], i) < 0) {
        _exit(127);
      }
    }
    // Descriptors opened elsewhere without O_CLOEXEC must not reach the target either.
    close_range(3, ~0U, 0);
    // We ignore SIGPIPE; the target gets the usual behaviour and an empty signal mask.
    struct sigaction dfl {};
    dfl.sa_handler = SIG_DFL;
    sigaction(SIGPIPE, &dfl, nullptr);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    execve("/bin/sh", argv, environ);
    _exit(127);
  }
  int fork_errno = errno;
  CloseFd(&in[0]);
  CloseFd(&out[1]);
  CloseFd(&err[1]);
  if (pid < 0) {
    *error = std::string("cannot start /bin/sh: fork: ") + strerror(fork_errno);
    for (int* fd : {&in[1], &out[0], &err[0]}) CloseFd(fd);
    return nullptr;
  }
  // Also in the parent, so that a kill(-pid) right after Start cannot miss the group.
  setpgid(pid, pid);
  std::unique_ptr<Subprocess> p(new Subprocess());
  p->pid_ = pid;
  p->StartGuard();
  p->in_fd_ = in[1];
  p->out_fd_ = out[0];
  p->err_fd_ = err[0];
  for (int fd : {p->in_fd_, p->out_fd_, p->err_fd_}) SetNonBlocking(fd);
  return p;
}

void Subprocess::StartGuard() {
  int life[2];
  if (pipe2(life, O_CLOEXEC) != 0) return;  // the shell's PR_SET_PDEATHSIG still holds
  const pid_t group = pid_;
  pid_t guard = fork();
  if (guard == 0) {
    // Async-signal-safe calls only (see Start). A Ctrl-C reaches our whole process group: the
    // guard must outlive fusefuzz, so it ignores the stop signals; only the lifeline ends it.
    struct sigaction ign {};
    ign.sa_handler = SIG_IGN;
    for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE}) sigaction(sig, &ign, nullptr);
    if (life[0] > 0) close_range(0, static_cast<unsigned>(life[0]) - 1, 0);
    close_range(static_cast<unsigned>(life[0]) + 1, ~0U, 0);
    char c = 0;
    ssize_t n;
    while ((n = read(life[0], &c, 1)) < 0 && errno == EINTR) {
    }
    // EOF without the all-clear: fusefuzz is gone, whatever ended it (even SIGKILL).
    if (n != 1) kill(-group, SIGKILL);
    _exit(0);
  }
  CloseFd(&life[0]);
  if (guard < 0) {
    CloseFd(&life[1]);
    return;
  }
  guard_pid_ = guard;
  guard_fd_ = life[1];
}

void Subprocess::StopGuard() {
  if (guard_pid_ < 0) return;
  // The group is reaped (Kill): its id may be reused, so the guard must not kill it now.
  [[maybe_unused]] ssize_t w = write(guard_fd_, "x", 1);
  CloseFd(&guard_fd_);
  while (waitpid(guard_pid_, nullptr, 0) < 0 && errno == EINTR) {
  }
  guard_pid_ = -1;
}

Subprocess::~Subprocess() {
  CloseFd(&in_fd_);  // a well-behaved target exits on EOF
  for (int waited_ms = 0; !reaped_ && waited_ms < 500 && !HasExited(); waited_ms += 2) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  Kill();  // also stops anything the target left running in its group
  StopGuard();
  CloseFd(&out_fd_);
  CloseFd(&err_fd_);
}

bool Subprocess::Pump(bool want_write, Deadline deadline) {
  auto left = deadline - std::chrono::steady_clock::now();
  if (left <= std::chrono::steady_clock::duration::zero()) return false;
  // Round up so that a sub-millisecond remainder does not spin.
  auto ms = std::chrono::ceil<std::chrono::milliseconds>(left).count();
  pollfd fds[3];
  int n = 0;
  int out_i = -1, err_i = -1;
  if (want_write && in_fd_ >= 0) fds[n++] = {in_fd_, POLLOUT, 0};
  // Past the cap stdout is left in the pipe: a child flooding it while we write cannot make us
  // buffer without bound.
  if (out_fd_ >= 0 && out_buf_.size() <= out_cap_) {
    out_i = n;
    fds[n++] = {out_fd_, POLLIN, 0};
  }
  if (err_fd_ >= 0) {
    err_i = n;
    fds[n++] = {err_fd_, POLLIN, 0};
  }
  int timeout = static_cast<int>(std::min<int64_t>(ms, 1 << 30));
  int rc = poll(fds, static_cast<nfds_t>(n), n == 0 ? std::min(timeout, 10) : timeout);
  if (rc < 0) return errno == EINTR;
  char buf[1 << 16];
  if (out_i >= 0 && fds[out_i].revents != 0) {
    ssize_t got = read(out_fd_, buf, sizeof buf);
    if (got > 0) {
      out_buf_.append(buf, static_cast<size_t>(got));
    } else if (got == 0 || (errno != EAGAIN && errno != EINTR)) {
      CloseFd(&out_fd_);
    }
  }
  if (err_i >= 0 && fds[err_i].revents != 0) {
    ssize_t got = read(err_fd_, buf, sizeof buf);
    if (got > 0) {
      AppendStderr(buf, static_cast<size_t>(got));
    } else if (got == 0 || (errno != EAGAIN && errno != EINTR)) {
      CloseFd(&err_fd_);
    }
  }
  return true;
}

Subprocess::Io Subprocess::Write(std::string_view data, Deadline deadline) {
  size_t off = 0;
  while (off < data.size()) {
    if (in_fd_ < 0) return Io::kEof;
    size_t chunk = std::min<size_t>(data.size() - off, size_t{1} << 20);
    ssize_t n = write(in_fd_, data.data() + off, chunk);
    if (n > 0) {
      off += static_cast<size_t>(n);
    } else if (n < 0 && errno == EAGAIN) {
      if (HasExited()) return Io::kEof;  // its stdin is held open by something it started
      if (std::chrono::steady_clock::now() >= deadline) return Io::kTimeout;
      Pump(true, std::min(deadline, std::chrono::steady_clock::now() + kExitPoll));
    } else if (!(n < 0 && errno == EINTR)) {
      CloseFd(&in_fd_);  // EPIPE: the target closed its stdin or died
      return Io::kEof;
    }
  }
  return Io::kOk;
}

Subprocess::Io Subprocess::ReadLine(std::string* line, Deadline deadline, size_t max_bytes) {
  out_cap_ = max_bytes;
  for (;;) {
    size_t pos = out_buf_.find('\n', out_scanned_);
    if (pos != std::string::npos) {
      size_t end = (pos > 0 && out_buf_[pos - 1] == '\r') ? pos - 1 : pos;
      line->assign(out_buf_, 0, end);
      out_buf_.erase(0, pos + 1);
      out_scanned_ = 0;
      return Io::kOk;
    }
    out_scanned_ = out_buf_.size();
    if (out_buf_.size() > max_bytes) {
      *line = out_buf_.substr(0, 256);
      return Io::kTooLong;
    }
    if (out_fd_ < 0) {
      *line = out_buf_;  // an unterminated last line, for the message
      return Io::kEof;
    }
    if (HasExited()) {
      // Gone, while something it started still holds its stdout: what it wrote before exiting
      // is all there will be, and the case is a crash, not a timeout.
      if (DrainStdout()) continue;
      *line = out_buf_;
      CloseFd(&out_fd_);
      return Io::kEof;
    }
    if (std::chrono::steady_clock::now() >= deadline) return Io::kTimeout;
    Pump(false, std::min(deadline, std::chrono::steady_clock::now() + kExitPoll));
  }
}

bool Subprocess::DrainStdout() {
  char buf[1 << 16];
  bool got_any = false;
  while (out_fd_ >= 0 && out_buf_.size() <= out_cap_) {
    ssize_t got = read(out_fd_, buf, sizeof buf);
    if (got > 0) {
      out_buf_.append(buf, static_cast<size_t>(got));
      got_any = true;
    } else if (got < 0 && errno == EINTR) {
      continue;
    } else {
      if (got == 0 || errno != EAGAIN) CloseFd(&out_fd_);
      break;
    }
  }
  return got_any;
}

void Subprocess::AppendStderr(const char* data, size_t n) {
  err_buf_.append(data, n);
  if (err_buf_.size() > 2 * kStderrTail) err_buf_.erase(0, err_buf_.size() - kStderrTail);
}

void Subprocess::DrainStderr() {
  char buf[1 << 16];
  while (err_fd_ >= 0) {
    ssize_t got = read(err_fd_, buf, sizeof buf);
    if (got > 0) {
      AppendStderr(buf, static_cast<size_t>(got));
    } else if (got < 0 && errno == EINTR) {
      continue;
    } else {
      if (got == 0 || errno != EAGAIN) CloseFd(&err_fd_);
      break;
    }
  }
}

std::string Subprocess::StderrTail() {
  DrainStderr();
  if (err_buf_.size() <= kStderrTail) return err_buf_;
  return err_buf_.substr(err_buf_.size() - kStderrTail);
}

bool Subprocess::HasExited() {
  if (reaped_) return true;
  siginfo_t info;
  memset(&info, 0, sizeof info);
  if (waitid(P_PID, static_cast<id_t>(pid_), &info, WEXITED | WNOHANG | WNOWAIT) != 0) {
    return errno != EINTR;  // ECHILD: nothing left to wait for
  }
  return info.si_pid != 0;
}

void Subprocess::Reap() {
  if (reaped_) return;
  int status = 0;
  while (waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
  wait_status_ = status;
  reaped_ = true;
}

void Subprocess::Kill() {
  if (reaped_) return;
  // The leader is at worst a zombie here, so its group id cannot have been recycled.
  kill(-pid_, SIGKILL);
  kill(pid_, SIGKILL);
  Reap();
}

std::string Subprocess::WaitForExit(double grace_seconds) {
  auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(grace_seconds);
  while (!HasExited() && std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  bool exited = HasExited();
  Kill();
  if (!exited) return "closed its stdout but did not exit (killed)";
  return Describe(wait_status_);
}

std::string Subprocess::Describe(int status) {
  auto signal_name = [](int sig) {
    const char* name = strsignal(sig);
    return "signal " + std::to_string(sig) + (name ? std::string(" (") + name + ")" : "");
  };
  if (WIFEXITED(status)) {
    int code = WEXITSTATUS(status);
    std::string s = "exited with status " + std::to_string(code);
    // The shell between us and the program reports a program killed by signal N as 128+N.
    if (code > 128 && code < 128 + 65)
      s += " (from the shell: its program got " + signal_name(code - 128) + ")";
    return s;
  }
  if (WIFSIGNALED(status)) return "killed by " + signal_name(WTERMSIG(status));
  return "ended with wait status " + std::to_string(status);
}

}  // namespace fusefuzz
