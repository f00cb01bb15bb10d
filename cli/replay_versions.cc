#include "cli/replay_versions.h"

#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>

#include "harness/minimize.h"
#include "harness/repro.h"
#include "ir/error.h"
#include "ir/folder_write.h"
#include "report/markdown.h"
#include "targets/ort_releases.h"
#include "targets/target_spec.h"

namespace fusefuzz {

namespace {

constexpr std::string_view kSectionMarker = "<!-- fusefuzz replay --versions -->";

const char* StateName(ReleaseState s) {
  switch (s) {
    case ReleaseState::kBad:
      return "bad";
    case ReleaseState::kGood:
      return "good";
    case ReleaseState::kOther:
      return "neither";
  }
  return "neither";
}

// The last sentence of a message's first line: "Pad should be smaller than kernel." of
// "...pool_attributes.h:88 ... was false. Pad should be smaller than kernel.".
std::string LastSentence(const std::string& message) {
  std::string line = message.substr(0, message.find('\n'));
  while (!line.empty() && (line.back() == ' ' || line.back() == '\r')) line.pop_back();
  const size_t at = line.rfind(". ");
  return at == std::string::npos ? "" : line.substr(at + 2);
}

ReleaseVerdict RunOn(const Repro& recorded, const std::string& file, const OrtVersion& v,
                     const std::string& level, const TargetSettings& settings) {
  ReleaseVerdict row;
  row.release = v.Text();
  row.verdict = "NOT RUN";
  std::unique_ptr<Target> target;
  try {
    target = MakeTarget("onnxruntime@" + v.Text() + ":" + level, settings);
  } catch (const std::exception& e) {
    row.got = e.what();
    return row;
  }
  // A release that cannot disable rules cannot blame one: the same failure unblamed is the
  // same finding there.
  Repro expected = recorded;
  if (!target->caps().disable && !target->caps().bisect_limit) expected.blame.rule.clear();
  // Nor which run failed where there is only one (a release that ignores the level).
  if (target->caps().limits.contains("unoptimized_run")) expected.failing_run.clear();
  try {
    const ReplayOutcome out = ReplayCase(expected, recorded.graph, recorded.inputs, *target);
    row.verdict = std::string(VerdictName(out.outcome.verdict));
    const bool failed_run = out.outcome.run.status != RunStatus::kOk;
    if (out.outcome.finding()) {
      row.got = std::string(FindingKindName(out.outcome.kind)) +
                (out.blame.rule.empty() ? "" : " " + out.blame.rule) +
                (failed_run ? " (" + ErrorClass(out.outcome.run.message) + ")" : "");
    } else if (out.outcome.verdict == Verdict::kPass) {
      row.got = "no finding";
    } else {
      row.got = failed_run ? out.outcome.run.message : out.outcome.oracle.detail;
    }
    // An error, crash or hang is gone where the case runs through without a finding, even
    // where the data cannot tell a right result from a wrong one (MISTRUSTED).
    const bool error_finding = recorded.kind == FindingKind::kTargetError ||
                               recorded.kind == FindingKind::kCrash ||
                               recorded.kind == FindingKind::kTimeout;
    const bool ran_clean =
        out.outcome.verdict == Verdict::kPass ||
        (error_finding && out.outcome.verdict == Verdict::kMistrusted && !out.outcome.finding());
    // Error messages name the release's source (paths, line numbers, signatures) differently
    // from release to release: the same sentence at the end, from the same run, is the same error.
    const bool same_error = error_finding && out.outcome.kind == recorded.kind &&
                            (expected.failing_run.empty() ||
                             (expected.failing_run == "optimized") == out.outcome.optimized) &&
                            !LastSentence(recorded.detail).empty() &&
                            LastSentence(recorded.detail) == LastSentence(out.outcome.run.message);
    row.state = out.same_finding || same_error ? ReleaseState::kBad
                : ran_clean                    ? ReleaseState::kGood
                                               : ReleaseState::kOther;
  } catch (const InputError& e) {
    row.got = std::string("not run: ") + e.what() + " (" + file + ")";
  }
  return row;
}

nlohmann::json VersionsJson(const std::string& range, const Repro& r,
                            const std::vector<ReleaseVerdict>& rows, const ReleaseBisection& b) {
  nlohmann::json releases = nlohmann::json::array();
  for (const ReleaseVerdict& row : rows) {
    releases.push_back({{"release", row.release},
                        {"state", StateName(row.state)},
                        {"verdict", row.verdict},
                        {"got", row.got}});
  }
  return {{"format", "fusefuzz-versions"},
          {"range", range},
          {"found_on", r.engine.empty() ? r.target : r.engine},
          {"releases", releases},
          {"first_bad", b.first_bad},
          {"last_good_before", b.last_good_before},
          {"first_good_after", b.first_good_after}};
}

std::string VersionsSection(const std::string& range, const std::vector<ReleaseVerdict>& rows,
                            const ReleaseBisection& b) {
  std::ostringstream md;
  md << kSectionMarker << "\n## Releases\n\n`fusefuzz replay --versions " << range
     << "` (installed releases, oldest first): " << MdText(BisectionText(b, rows))
     << ".\n\n| release | verdict | | what it gave |\n|---|---|---|---|\n";
  for (const ReleaseVerdict& row : rows) {
    md << "| " << row.release << " | " << row.verdict << " | " << StateName(row.state) << " | "
       << MdText(row.got.substr(0, 300)) << " |\n";
  }
  return md.str();
}

// A finding folder (repro.json beside report.md): the results go into it as well.
void WriteIntoFolder(const std::string& file, const std::string& range, const Repro& r,
                     const std::vector<ReleaseVerdict>& rows, const ReleaseBisection& b) {
  namespace fs = std::filesystem;
  const fs::path p(file);
  std::error_code ec;
  if (p.filename() != "repro.json" || !fs::is_regular_file(p.parent_path() / "report.md", ec)) {
    return;
  }
  const std::string dir = p.parent_path().empty() ? "." : p.parent_path().string();
  WriteFileInFolder(dir, "versions.json", VersionsJson(range, r, rows, b).dump(1) + "\n");
  std::ifstream in(p.parent_path() / "report.md");
  std::stringstream old;
  old << in.rdbuf();
  std::string report = old.str();
  // A second run replaces the section of the first.
  if (const size_t at = report.find(kSectionMarker); at != std::string::npos) report.resize(at);
  if (!report.empty() && report.back() != '\n') report += "\n";
  WriteFileInFolder(dir, "report.md",
                    report + (report.empty() ? "" : "\n") + VersionsSection(range, rows, b));
}

}  // namespace

ReleaseBisection BisectReleases(const std::vector<ReleaseVerdict>& rows) {
  ReleaseBisection b;
  for (const ReleaseVerdict& row : rows) {
    if (b.first_bad.empty()) {
      if (row.state == ReleaseState::kGood) b.last_good_before = row.release;
      if (row.state == ReleaseState::kBad) b.first_bad = row.release;
    } else if (row.state == ReleaseState::kGood) {
      b.first_good_after = row.release;
      break;
    }
  }
  if (b.first_bad.empty()) b.last_good_before.clear();
  return b;
}

std::string BisectionText(const ReleaseBisection& b, const std::vector<ReleaseVerdict>& rows) {
  if (b.first_bad.empty()) {
    bool any_good = false;
    for (const ReleaseVerdict& row : rows) any_good = any_good || row.state == ReleaseState::kGood;
    return any_good ? "bad on no release tried (it passes where judged)"
                    : "bad on no release tried, and good on none (nothing was judged)";
  }
  std::string s = "first bad " + b.first_bad;
  s += b.last_good_before.empty() ? " (no good release before it)"
                                  : " (good on " + b.last_good_before + " before it)";
  std::string last_bad;
  for (const ReleaseVerdict& row : rows) {
    if (row.state == ReleaseState::kBad) last_bad = row.release;
  }
  s += b.first_good_after.empty() ? "; first good after it: none (still bad on " + last_bad + ")"
                                  : "; first good after it: " + b.first_good_after;
  return s;
}

int ReplayVersions(const std::vector<std::string>& files, const std::string& range_text,
                   const TargetSettings& settings, bool verbose) {
  const OrtVersionRange range = ParseOrtVersionRange(range_text, "--versions");
  std::vector<OrtVersion> releases;
  for (const OrtVersion& v : InstalledOrtReleases()) {
    if (range.Contains(v)) releases.push_back(v);
  }
  if (releases.empty()) {
    throw InputError("--versions", "no installed onnxruntime-node release in '" + range_text +
                                       "' (installed in " +
                                       (OrtReleasesDir().empty() ? "the cache" : OrtReleasesDir()) +
                                       ": run targets/onnxruntime/install-release.sh X.Y.Z)");
  }
  int bad_somewhere = 0;
  for (const std::string& f : files) {
    const Repro r = ReadReproFile(f);
    std::cout << f << ": " << FindingKindName(r.kind)
              << (r.blame.rule.empty() ? "" : " " + r.blame.rule) << ", found on "
              << (r.engine.empty() ? r.target : r.engine + " (" + r.target + ")") << "\n";
    // The level given, else the one the finding was found at.
    std::string level = range.level;
    if (level.empty()) {
      const std::optional<TargetSpec> spec = TargetSpec::Of(r.target);
      level = spec && spec->builtin("onnxruntime") ? spec->mode() : "all";
    }
    std::vector<ReleaseVerdict> rows;
    for (const OrtVersion& v : releases) {
      rows.push_back(RunOn(r, f, v, level, settings));
      const ReleaseVerdict& row = rows.back();
      std::cout << "  " << row.release << "  " << StateName(row.state) << "  " << row.verdict
                << ", " << (verbose ? row.got : row.got.substr(0, 160)) << "\n"
                << std::flush;
    }
    const ReleaseBisection b = BisectReleases(rows);
    bad_somewhere += !b.first_bad.empty();
    std::cout << "  " << BisectionText(b, rows) << "\n";
    WriteIntoFolder(f, range_text, r, rows, b);
  }
  return bad_somewhere;
}

}  // namespace fusefuzz
