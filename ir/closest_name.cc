#include "ir/closest_name.h"

#include <algorithm>

namespace fusefuzz {
namespace {

size_t EditDistance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diag = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}

// Lower case without separators: what a reader sees as "the same word".
std::string Folded(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '-' || c == '_') continue;
    out += (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
  }
  return out;
}

}  // namespace

std::string ClosestName(const std::string& typed, const std::vector<std::string>& names) {
  auto bare = [](const std::string& s) {
    return s.substr(std::min(s.find_first_not_of('-'), s.size()));
  };
  // An abbreviation: same first letter, the typed letters in order (`secs` in `seconds`).
  auto abbreviates = [&](const std::string& t, const std::string& n) {
    if (t.empty() || n.empty() || t[0] != n[0]) return false;
    size_t k = 0;
    for (char c : n) k += k < t.size() && c == t[k];
    return k == t.size();
  };
  const std::string t = bare(typed);
  const std::string tf = Folded(typed);
  std::string best;
  size_t best_d = std::string::npos;
  bool best_abbrev = false;
  for (const auto& n : names) {
    if (n == typed) continue;
    // Separators and case cost nothing when the folded words agree, else count as letters.
    const size_t d = Folded(n) == tf ? 0 : EditDistance(typed, n);
    const bool abbrev = abbreviates(t, bare(n));
    if ((abbrev && !best_abbrev) || (abbrev == best_abbrev && d < best_d)) {
      best_d = d, best = n, best_abbrev = abbrev;
    }
  }
  return best_abbrev || best_d <= std::max<size_t>(2, t.size() / 2 + 1) ? best : "";
}

std::string DidYouMean(const std::string& typed, const std::vector<std::string>& names) {
  const std::string near = ClosestName(typed, names);
  return near.empty() ? "" : "; did you mean '" + near + "'?";
}

}  // namespace fusefuzz
