// ParallelFor on plain std::threads. Tasks are claimed dynamically from an atomic counter; since
// every task computes a fixed piece of the output in a fixed way, which thread runs it does not
// change a single bit of the result.
#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <thread>

#include "kernels/fast/fast_ops.h"

namespace fusefuzz::fast {

void ParallelFor(int threads, int64_t count, const std::function<void(int64_t)>& fn) {
  if (count <= 0) return;
  int64_t workers = std::min<int64_t>(std::max(threads, 1), count);
  if (workers == 1) {
    for (int64_t i = 0; i < count; ++i) fn(i);
    return;
  }
  std::atomic<int64_t> next{0};
  std::exception_ptr error;
  std::mutex error_mu;
  auto work = [&] {
    try {
      for (int64_t i = next++; i < count; i = next++) fn(i);
    } catch (...) {
      std::lock_guard<std::mutex> lock(error_mu);
      if (!error) error = std::current_exception();
      next = count;  // stop handing out tasks
    }
  };
  std::vector<std::thread> pool;
  pool.reserve(static_cast<size_t>(workers - 1));
  for (int64_t t = 1; t < workers; ++t) pool.emplace_back(work);
  work();
  for (auto& t : pool) t.join();
  if (error) std::rethrow_exception(error);
}

}  // namespace fusefuzz::fast
