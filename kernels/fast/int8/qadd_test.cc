// The fast quantized Add bit-exact against QAddLoops at every ISA level: lengths around the
// vector widths and the threads' chunk, every storage type combination, zero points at both
// ends, tie-producing multipliers, saturating sums and a fused ReLU.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "kernels/fast/executor.h"
#include "kernels/fast/fast_test_util.h"
#include "kernels/fast/int8/qconv.h"
#include "kernels/fast/int8/qconv_fast.h"

namespace fusefuzz::int8 {
namespace {

TEST(QAddFast, BitExactWithLoopsAtEveryLevel) {
  const QStorage both[] = {QStorage::kUint8, QStorage::kInt8};
  const int64_t counts[] = {0, 1, 3, 4, 15, 16, 17, 33, 100, 40000};
  const float mults[][2] = {{0.5f, 0.5f}, {1.0f, 1.0f}, {0.37f, 1.9f}, {3.0f, -0.25f}};
  int k = 0, checked = 0;
  for (QStorage ta : both) {
    for (QStorage tb : both) {
      for (QStorage ty : both) {
        for (int64_t count : counts) {
          ++k;
          fast_test::Rng rng(static_cast<uint64_t>(k));
          std::vector<uint8_t> a(static_cast<size_t>(count)), b(a.size());
          for (size_t i = 0; i < a.size(); ++i) {
            a[i] = static_cast<uint8_t>(rng.Next());
            b[i] = static_cast<uint8_t>(k % 2 ? QMax(tb) : rng.Next());  // a constant at a limit
          }
          QAddProblem p;
          p.count = count;
          p.a_type = ta, p.b_type = tb, p.y_type = ty;
          p.a_zero_point = k % 3 == 0 ? QMin(ta) : QMax(ta);
          p.b_zero_point = k % 3 == 1 ? QMin(tb) : QMax(tb);
          p.y_zero_point = k % 2 ? QMin(ty) : QMax(ty);
          p.a_multiplier = mults[k % 4][0];
          p.b_multiplier = mults[k % 4][1];
          p.y_min = k % 5 == 0 ? p.y_zero_point : QMin(ty);  // ReLU
          p.y_max = QMax(ty);
          p.a = a.data();
          p.b = b.data();
          std::vector<uint8_t> want(a.size(), 0xA5), got(a.size());
          p.y = want.data();
          QAddLoops(p);
          for (FastIsa isa : AvailableFastIsas()) {
            for (int threads : {1, 2}) {
              std::fill(got.begin(), got.end(), 0x5A);
              p.y = got.data();
              QAdd(p, threads, isa);
              for (size_t i = 0; i < got.size(); ++i) {
                ASSERT_EQ(int{got[i]}, int{want[i]})
                    << "case " << k << " count " << count << " at " << i << ", " << FastIsaName(isa)
                    << ", " << threads << " threads";
              }
              ++checked;
            }
          }
        }
      }
    }
  }
  EXPECT_GT(checked, 0);
}

}  // namespace
}  // namespace fusefuzz::int8
