#include "harness/campaign_summary.h"

#include <cstdio>
#include <nlohmann/json.hpp>
#include <sstream>

#include "ir/json_io.h"

namespace fusefuzz {

void CampaignStats::AddCase(const std::string& verdict, const std::string& kind,
                            const std::string& signature, bool /*duplicate*/, int64_t index,
                            double now_seconds) {
  ++graphs;
  ++verdicts[verdict];
  if (kind.empty()) return;
  ++findings;
  if (first_finding_graphs < 0) {
    first_finding_graphs = graphs;
    first_finding_seconds = now_seconds;
  }
  SignatureStats& u = unique[signature];
  u.kind = kind;
  ++u.count;
  if (u.first_case < 0 || index < u.first_case) u.first_case = index;
}

std::string CampaignStats::StatusLine(double elapsed) const {
  char buf[256];
  std::snprintf(buf, sizeof buf,
                "fuzz: %lld graphs (%.0f/s), %lld findings, %zu unique, %.0f s elapsed",
                static_cast<long long>(graphs), elapsed > 0 ? graphs / elapsed : 0.0,
                static_cast<long long>(findings), unique.size(), elapsed);
  return buf;
}

std::string CampaignStats::SummaryText(const std::string& out_dir) const {
  std::ostringstream s;
  s << (interrupted ? "fuzz: interrupted. " : "fuzz: done. ") << StatusLine(seconds) << "\n";
  s << "verdicts:";
  for (const auto& [v, n] : verdicts) s << " " << v << "=" << n;
  s << "\n";
  for (const auto& [sig, u] : unique) {
    s << "  " << u.kind << "  x" << u.count << "  " << out_dir << "/findings/" << sig << "/\n";
  }
  s << "summary: " << out_dir << "/summary.json\n";
  return s.str();
}

namespace {

std::string XmlEscape(const std::string& in) {
  std::string out;
  for (char c : in) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

}  // namespace

void WriteCampaignSummary(const std::string& out_dir, const CampaignStats& s,
                          const std::string& junit_path) {
  nlohmann::json j;
  j["format"] = "fusefuzz-summary";
  j["version"] = 1;
  j["fusefuzz_version"] = FUSEFUZZ_VERSION;
  j["seed"] = s.seed;
  j["target"] = s.target;
  j["inject"] = s.inject;
  j["oracle"] = s.oracle;
  j["graphs"] = s.graphs;
  j["seconds"] = s.seconds;
  j["graphs_per_second"] = s.seconds > 0 ? s.graphs / s.seconds : 0.0;
  j["interrupted"] = s.interrupted;
  j["verdicts"] = s.verdicts;
  j["findings"] = s.findings;
  j["worker_errors"] = s.worker_errors;
  if (s.first_finding_graphs >= 0) {
    j["first_finding"] = {{"graphs", s.first_finding_graphs}, {"seconds", s.first_finding_seconds}};
  }
  nlohmann::json list = nlohmann::json::array();
  for (const auto& [sig, u] : s.unique) {
    list.push_back({{"signature", sig},
                    {"kind", u.kind},
                    {"count", u.count},
                    {"duplicates", u.count - 1},
                    {"first_case", u.first_case},
                    {"folder", "findings/" + sig}});
  }
  j["unique_findings"] = list;
  j["rule_fires"] = s.rule_fires;
  if (s.progress_jobs > 0) {
    j["progress"] = {{"jobs", s.progress_jobs}, {"next", s.progress_next}};
  }
  WriteFileAtomic(out_dir + "/summary.json", j.dump(1) + "\n");

  std::ostringstream md;
  md << "# fusefuzz campaign\n\n"
     << "| graphs | seconds | graphs/s | findings | unique |\n|---|---|---|---|---|\n"
     << "| " << s.graphs << " | " << s.seconds << " | "
     << (s.seconds > 0 ? s.graphs / s.seconds : 0.0) << " | " << s.findings << " | "
     << s.unique.size() << " |\n\n"
     << "Target `" << s.target << "`, oracle `" << s.oracle << "`, seed " << s.seed;
  if (!s.inject.empty()) {
    md << ", injected:";
    for (const auto& f : s.inject) md << " `" << f << "`";
  }
  md << ".\n\n";
  if (!s.unique.empty()) {
    md << "| kind | count | first case | reproducer |\n|---|---|---|---|\n";
    for (const auto& [sig, u] : s.unique) {
      md << "| " << u.kind << " | " << u.count << " | " << u.first_case << " | [findings/" << sig
         << "](findings/" << sig << "/report.md) |\n";
    }
  }
  WriteFileAtomic(out_dir + "/summary.md", md.str());

  if (!junit_path.empty()) {
    std::ostringstream x;
    x << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      << "<testsuites>\n<testsuite name=\"fusefuzz\" tests=\"" << (s.unique.size() + 1)
      << "\" failures=\"" << s.unique.size() << "\" time=\"" << s.seconds << "\">\n"
      << "  <testcase classname=\"fusefuzz\" name=\"campaign (" << s.graphs << " graphs)\"/>\n";
    for (const auto& [sig, u] : s.unique) {
      x << "  <testcase classname=\"fusefuzz." << XmlEscape(u.kind) << "\" name=\""
        << XmlEscape(sig) << "\">\n    <failure message=\"" << XmlEscape(u.kind) << " finding, "
        << u.count << " case(s)\">" << XmlEscape(out_dir + "/findings/" + sig + "/report.md")
        << "</failure>\n  </testcase>\n";
    }
    x << "</testsuite>\n</testsuites>\n";
    WriteFileAtomic(junit_path, x.str());
  }
}

}  // namespace fusefuzz
