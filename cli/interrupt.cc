// ExitOnInterrupt (cli/cli.h).
#include <signal.h>
#include <unistd.h>

#include "cli/cli.h"

namespace fusefuzz {
namespace {

void OnInterrupt(int sig) {
  // Async-signal-safe only: write, then die of the signal itself (the shell sees 128 + sig).
  // External targets die with us (PR_SET_PDEATHSIG, targets/subprocess.cc).
  static const char kMsg[] = "fusefuzz: interrupted\n";
  [[maybe_unused]] ssize_t w = ::write(2, kMsg, sizeof kMsg - 1);
  ::signal(sig, SIG_DFL);
  ::raise(sig);
}

}  // namespace

void ExitOnInterrupt() {
  struct sigaction sa {};
  sa.sa_handler = OnInterrupt;
  sigemptyset(&sa.sa_mask);
  ::sigaction(SIGINT, &sa, nullptr);
  ::sigaction(SIGTERM, &sa, nullptr);
}

}  // namespace fusefuzz
