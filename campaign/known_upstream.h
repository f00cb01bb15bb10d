// The known upstream bugs of a built-in engine release (corpus/known/<engine>@<release>.json,
// docs/campaign.md "Known upstream bugs"): signature -> the bug's upstream link and its
// docs/upstream-bugs.md section. A campaign on a built-in target loads the baseline of the
// engine release its hello names, unless `--known none`; a finding whose signature is listed is
// counted as known, apart from new findings, and its folder says "known upstream: <link>".
#pragma once

#include <map>
#include <string>
#include <vector>

namespace fusefuzz {

struct UpstreamBug {
  std::string title;
  std::string link;  // the upstream issue or PR, else the docs/upstream-bugs.md section
  std::string doc;   // "docs/upstream-bugs.md#<anchor>"
};

class KnownUpstream {
 public:
  // A signature two bugs come as (OpenCV's int8 pack reports both of its int8 bugs as one
  // error class) names both.
  void Add(const std::string& signature, const UpstreamBug& bug);
  const UpstreamBug* Find(const std::string& signature) const;
  size_t size() const { return bugs_.size(); }
  bool empty() const { return bugs_.empty(); }
  const std::map<std::string, UpstreamBug>& bugs() const { return bugs_; }
  std::vector<std::string> files;  // the baselines read, for the campaign's note

 private:
  std::map<std::string, UpstreamBug> bugs_;
};

// $FUSEFUZZ_KNOWN_DIR, else the checkout's corpus/known.
std::string KnownBaselineDir();

// One baseline file: {"format": "fusefuzz-known-baseline", "engine", "release", "match",
// "bugs": [{"title", "link", "doc", "signatures": [{"signature", "target", "repro"?}]}]}.
// Throws InputError naming the file and JSON pointer.
struct KnownBaseline {
  std::string engine;   // a built-in engine's name ("onnxruntime")
  std::string release;  // "1.30.0"
  std::string match;    // text the target's hello "engine" contains for this release
  struct Entry {
    std::string signature, target, repro;  // repro: a reproducer that signs so ("" = none)
    UpstreamBug bug;
  };
  std::vector<Entry> entries;
};
KnownBaseline ReadKnownBaseline(const std::string& path);

// The baselines in `dir` for target `spec` (a built-in engine; others get none) whose "match"
// occurs in `engine_hello`. A malformed file there throws InputError.
KnownUpstream BaselineFor(const std::string& dir, const std::string& spec,
                          const std::string& engine_hello);

}  // namespace fusefuzz
