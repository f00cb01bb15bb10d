#include "cli/replay_versions.h"

#include <gtest/gtest.h>

namespace fusefuzz {
namespace {

std::vector<ReleaseVerdict> Rows(const std::string& states) {
  // One release per letter: b bad, g good, o neither; releases 1.<i>.0.
  std::vector<ReleaseVerdict> rows;
  for (size_t i = 0; i < states.size(); ++i) {
    ReleaseVerdict v;
    v.release = "1." + std::to_string(10 + i) + ".0";
    v.state = states[i] == 'b'   ? ReleaseState::kBad
              : states[i] == 'g' ? ReleaseState::kGood
                                 : ReleaseState::kOther;
    rows.push_back(v);
  }
  return rows;
}

TEST(ReplayVersions, FindsTheFirstBadAndTheFirstGoodAfterIt) {
  ReleaseBisection b = BisectReleases(Rows("oggbbogb"));
  EXPECT_EQ(b.first_bad, "1.13.0");
  EXPECT_EQ(b.last_good_before, "1.12.0");
  EXPECT_EQ(b.first_good_after, "1.16.0");
  EXPECT_EQ(BisectionText(b, Rows("oggbbogb")),
            "first bad 1.13.0 (good on 1.12.0 before it); first good after it: 1.16.0");
  // Bad from the oldest judged release to the newest.
  b = BisectReleases(Rows("obbo"));
  EXPECT_EQ(b.first_bad, "1.11.0");
  EXPECT_EQ(b.last_good_before, "");
  EXPECT_EQ(BisectionText(b, Rows("obbo")),
            "first bad 1.11.0 (no good release before it); first good after it: none (still "
            "bad on 1.12.0)");
  // Never bad: no first bad, and no "good before" either.
  b = BisectReleases(Rows("ggo"));
  EXPECT_EQ(b.first_bad, "");
  EXPECT_EQ(b.last_good_before, "");
  EXPECT_EQ(BisectionText(b, Rows("ggo")), "bad on no release tried (it passes where judged)");
  EXPECT_EQ(BisectionText(BisectReleases(Rows("oo")), Rows("oo")),
            "bad on no release tried, and good on none (nothing was judged)");
}

}  // namespace
}  // namespace fusefuzz
