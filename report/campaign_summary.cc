#include "report/campaign_summary.h"

#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <sstream>

#include "ir/folder_write.h"
#include "ir/json_io.h"
#include "ir/ops.h"
#include "report/engine_coverage.h"
#include "report/finding_report.h"
#include "report/html_report.h"
#include "report/markdown.h"
#include "report/report_numbers.h"

namespace fusefuzz {

void CampaignStats::AddCase(const CaseReport& c) {
  ++graphs;
  ++verdicts[c.verdict];
  if (!c.unsupported_reason.empty()) ++unsupported_reasons[c.unsupported_reason];
  if (c.verdict == "PASS") {
    if (c.margin > closest_float.share) closest_float = {c.margin, c.index};
    if (c.grid_margin > closest_grid.share) closest_grid = {c.grid_margin, c.index, c.grid_e};
  }
  if (c.kind.empty()) return;
  if (!c.bucket.empty()) {
    BucketRecord& b = buckets[c.bucket];
    auto other = [&](int64_t index, const std::string& kind) {
      ++b.others;
      if (b.others_first < 0 || index < b.others_first) b.others_first = index;
      if (b.others_kind.empty()) b.others_kind = kind;
    };
    if (c.slot) {
      b.slots.push_back({c.index, c.signature, c.kind, c.pattern, c.known});
      std::sort(b.slots.begin(), b.slots.end(), [](const BucketSlot& x, const BucketSlot& y) {
        return x.case_index < y.case_index;
      });
      if (b.slots.size() > BucketRecord::kKeptSlots) {
        other(b.slots.back().case_index, b.slots.back().kind);
        b.slots.pop_back();
      }
    } else {
      other(c.index, c.kind);
    }
  }
  if (c.known) {
    ++known;
    ++by_kind[c.kind].known;
    if (upstream_links.count(c.signature)) {
      SignatureStats& u = known_upstream[c.signature];
      u.kind = c.kind;
      ++u.count;
      if (u.first_case < 0 || c.index < u.first_case) u.first_case = c.index;
    }
    return;
  }
  ++findings;
  ++by_kind[c.kind].count;
  if (first_finding_graphs < 0) {
    first_finding_graphs = graphs;
    first_finding_seconds = c.seconds;
  }
  FirstFinding& first = first_by_kind[c.kind];
  if (first.graphs < 0) first = {c.index, graphs, c.seconds};
  SignatureStats& u = unique[c.signature];
  u.kind = c.kind;
  if (u.bucket.empty()) u.bucket = c.bucket;
  if (u.pattern.empty()) u.pattern = c.pattern;
  ++u.count;
  if (u.first_case < 0 || c.index < u.first_case) u.first_case = c.index;
}

std::vector<PatternGroup> GroupByPattern(const CampaignStats& s) {
  struct Acc {
    PatternGroup g;
    std::vector<std::string> ops;                // '*' at activation positions
    std::vector<std::set<std::string>> options;  // the activations seen there
  };
  std::map<std::string, Acc> by_key;
  const std::string arrow = "\u2192";
  for (const auto& [sig, u] : s.unique) {
    if (u.pattern.empty()) continue;
    std::vector<std::string> ops;
    for (size_t at = 0;;) {
      const size_t next = u.pattern.find(arrow, at);
      ops.push_back(u.pattern.substr(at, next == std::string::npos ? next : next - at));
      if (next == std::string::npos) break;
      at = next + arrow.size();
    }
    std::string key = u.kind;
    std::vector<std::string> shape = ops;
    for (std::string& op : shape) {
      std::optional<Op> o = OpFromName(op);
      if (o && IsActivation(*o)) op = "*";
      key += "|" + op;
    }
    Acc& a = by_key[key];
    if (a.ops.empty()) {
      a.ops = shape;
      a.options.resize(shape.size());
      a.g.kind = u.kind;
    }
    for (size_t i = 0; i < ops.size(); ++i) {
      if (shape[i] == "*") a.options[i].insert(ops[i]);
    }
    a.g.signatures.push_back(sig);
    a.g.cases += u.count;
  }
  std::vector<PatternGroup> out;
  for (auto& [key, a] : by_key) {
    for (size_t i = 0; i < a.ops.size(); ++i) {
      std::string part = a.ops[i];
      if (part == "*") {
        part.clear();
        for (const auto& o : a.options[i]) part += (part.empty() ? "" : ", ") + o;
        if (a.options[i].size() > 1) part = "{" + part + "}";
      }
      a.g.pattern += (i ? arrow : "") + part;
    }
    out.push_back(std::move(a.g));
  }
  std::stable_sort(out.begin(), out.end(), [](const PatternGroup& x, const PatternGroup& y) {
    return x.signatures.size() > y.signatures.size();
  });
  return out;
}

std::string CampaignStats::StatusLine(double elapsed) const {
  char buf[256];
  std::snprintf(buf, sizeof buf,
                "fuzz: %lld graphs (%.0f/s), %lld findings, %zu unique, %.0f s elapsed",
                static_cast<long long>(graphs), elapsed > 0 ? graphs / elapsed : 0.0,
                static_cast<long long>(findings), unique.size(), elapsed);
  return buf;
}

std::string VerdictMeaning(const std::string& verdict) {
  static const std::map<std::string, std::string> kMeanings = {
      {"PASS", "every output within the oracle's bound of the reference"},
      {"MISMATCH",
       "an output outside the bound: a finding (fusion if only the optimized run "
       "fails, kernel if the unoptimized one fails too)"},
      {"MISTRUSTED",
       "nothing failed, but the data cannot tell (e.g. all zeros, too few finite values): "
       "not judged, not a finding"},
      {"TARGET_ERROR", "the target answered with an error instead of outputs: a finding"},
      {"CRASH", "the target (or a worker) died on the case: a finding"},
      {"TIMEOUT", "the target (or a worker) took longer than the timeout: a finding"},
      {"UNSUPPORTED", "the target declined the graph: not judged, not a finding"},
  };
  auto it = kMeanings.find(verdict);
  return it == kMeanings.end() ? "" : it->second;
}

void BatchStats::Add(const BatchStats& o) {
  batched += o.batched;
  alone += o.alone;
  batch_only += o.batch_only;
  for (int64_t c : o.batch_only_cases) {
    if (batch_only_cases.size() < kMaxListed) batch_only_cases.push_back(c);
  }
  spanning_rewrites += o.spanning_rewrites;
  deaths += o.deaths;
}

nlohmann::json BatchStatsToJson(const BatchStats& b) {
  return {{"batched", b.batched},
          {"alone", b.alone},
          {"batch_only", b.batch_only},
          {"batch_only_cases", b.batch_only_cases},
          {"spanning_rewrites", b.spanning_rewrites},
          {"deaths", b.deaths}};
}

BatchStats BatchStatsFromJson(const nlohmann::json& j) {
  BatchStats b;
  b.batched = j.value("batched", int64_t{0});
  b.alone = j.value("alone", int64_t{0});
  b.batch_only = j.value("batch_only", int64_t{0});
  b.batch_only_cases = j.value("batch_only_cases", std::vector<int64_t>{});
  if (b.batch_only_cases.size() > BatchStats::kMaxListed)
    b.batch_only_cases.resize(BatchStats::kMaxListed);
  b.spanning_rewrites = j.value("spanning_rewrites", int64_t{0});
  b.deaths = j.value("deaths", int64_t{0});
  return b;
}

std::string CampaignStats::SummaryText(const std::string& out_dir, bool written) const {
  std::ostringstream s;
  // StatusLine starts with "fuzz: " itself: said once ("fuzz: done. fuzz: ..." was a glitch).
  const std::string status = StatusLine(seconds);
  s << (!stopped_because.empty() ? "fuzz: stopped (" + stopped_because + "): "
        : interrupted            ? std::string("fuzz: interrupted: ")
                                 : std::string("fuzz: done: "))
    << status.substr(6) << "\n";
  s << "verdicts:";
  for (const auto& [v, n] : verdicts) s << " " << v << "=" << n;
  s << "\n";
  for (const auto& [sig, u] : unique) {
    s << "  " << u.kind << "  x" << u.count << "  " << out_dir << "/findings/" << sig << "/\n";
  }
  for (const auto& [sig, u] : known_upstream) {
    s << "  known upstream  " << u.kind << "  x" << u.count << "  " << out_dir << "/findings/"
      << sig << "/  " << upstream_links.at(sig) << "\n";
  }
  if (known > 0)
    s << "known (--known or known upstream): " << known << " cases, not counted as findings\n";
  if (worker_errors > 0) {
    s << "worker errors: " << worker_errors << (written ? " (see summary.md)\n" : "\n");
  }
  if (batches.batch_only > 0) {
    s << "batch-only: " << batches.batch_only
      << " cases failed in a batch but passed alone (not findings)\n";
  }
  if (written) s << "summary: " << out_dir << "/summary.md, " << out_dir << "/summary.html\n";
  return s.str();
}

namespace {

std::string Secs(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  return buf;
}

}  // namespace

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

std::string SummaryMarkdown(const CampaignStats& s) {
  std::ostringstream md;
  md << "# fusefuzz campaign\n\n";
  md << (!s.stopped_because.empty() ? "**Stopped** (" + s.stopped_because + ") after "
         : s.interrupted            ? std::string("**Interrupted** (Ctrl-C or SIGTERM) after ")
                                    : std::string("Finished after "))
     << s.graphs << " graphs in " << Secs(s.seconds) << " s ("
     << Secs(s.seconds > 0 ? s.graphs / s.seconds : 0.0) << " graphs/s): " << s.findings
     << " findings, " << s.unique.size() << " unique.\n\n";
  md << "Target " << MdCode(s.target) << ", oracle " << MdCode(s.oracle) << ", seed " << s.seed;
  if (!s.inject.empty()) {
    md << ", injected faults:";
    for (const auto& f : s.inject) md << " " << MdCode(f);
  }
  md << ".\n\n";
  if (s.shard.is_object()) {
    md << "Shard " << s.shard.value("index", 0) << " of " << s.shard.value("count", 0)
       << " (`--shard`): every " << s.shard.value("count", 0)
       << "th case of the campaign; `fusefuzz merge` joins the shards (docs/campaign.md, "
          "Spreading a campaign over machines).\n\n";
  }
  if (s.merge.is_object()) {
    md << "Merged from " << s.merge.value("shards", nlohmann::json::array()).size()
       << " shards by `fusefuzz merge`"
       << (s.merge.value("partial", false)
               ? ": **partial**, the shards did not check every case of the campaign (" +
                     s.merge.value("why_partial", std::string()) + ")"
               : ": every case of the campaign")
       << ".\n\n";
  }
  if (!s.command_line.empty()) {
    md << "Rerun it (same cases in the same order; with `--graphs` the same findings):\n\n"
       << MdFence("sh", s.command_line) << "\n";
  }
  md << "## Verdicts\n\n| verdict | cases | meaning |\n|---|---:|---|\n";
  for (const auto& [v, n] : s.verdicts) {
    md << "| " << v << " | " << n << " | " << VerdictMeaning(v) << " |\n";
  }
  md << "\n";
  if (s.worker_errors > 0) {
    md << "**Worker errors: " << s.worker_errors
       << "**: a worker process died or was killed; the case it was on is a crash or timeout "
          "finding below, and its message went to stderr.\n\n";
  }
  if (!s.batches.empty()) {
    const BatchStats& b = s.batches;
    md << "**Batches**: " << b.batched << " cases checked several per target call, " << b.alone
       << " of them run again alone, " << b.batch_only
       << " batch-only (failed in their batch, passed alone: not findings";
    for (size_t i = 0; i < b.batch_only_cases.size(); ++i)
      md << (i == 0 ? ": case " : ", ") << b.batch_only_cases[i];
    md << "), " << b.spanning_rewrites << " rewrites over two cases' nodes, " << b.deaths
       << " workers died in a batch's call.\n\n";
  }
  if (!s.by_kind.empty()) {
    md << "## Findings\n\n| kind | new cases | per 1000 graphs | unique | known cases | first "
          "found | at case | after |\n|---|---:|---:|---:|---:|---|---:|---|\n";
    for (const auto& [kind, k] : s.by_kind) {
      int64_t unique = 0;
      for (const auto& [sig, u] : s.unique) unique += u.kind == kind ? 1 : 0;
      md << "| " << kind << " | " << k.count << " | "
         << Secs(s.graphs > 0 ? 1000.0 * static_cast<double>(k.count) / s.graphs : 0.0) << " | "
         << unique << " | " << k.known << " | ";
      auto f = s.first_by_kind.find(kind);
      if (f == s.first_by_kind.end()) {
        md << "- | - | - |\n";
      } else {
        md << (f->second.seconds >= 0 ? Secs(f->second.seconds) + " s" : "-") << " | "
           << f->second.case_index << " | " << f->second.graphs << " graphs |\n";
      }
    }
    if (s.known > 0) {
      md << "\n"
         << s.known
         << " cases matched a known finding (`--known`, or a known upstream bug of the engine "
            "release: corpus/known): counted, not new.\n";
    }
    md << "\n";
  }
  if (!s.known_upstream.empty()) {
    md << "## Known upstream bugs\n\nFindings of bugs already reported (corpus/known; "
          "`--known none` turns the list off): not new.\n\n"
       << "| kind | cases | first case | report | known upstream |\n|---|---:|---:|---|---|\n";
    for (const auto& [sig, u] : s.known_upstream) {
      md << "| " << u.kind << " | " << u.count << " | " << u.first_case << " | [findings/" << sig
         << "](findings/" << sig << "/report.md) | " << s.upstream_links.at(sig) << " |\n";
    }
    md << "\n";
  }
  if (!s.unique.empty()) {
    md << "\n| kind | cases | first case | report |\n|---|---:|---:|---|\n";
    for (const auto& [sig, u] : s.unique) {
      md << "| " << u.kind << " | " << u.count << " | " << u.first_case << " | [findings/" << sig
         << "](findings/" << sig << "/report.md) |\n";
    }
    const std::optional<std::string> gen = GenOptions(s.gen_config);
    md << "\nCase I of this campaign is `fusefuzz gen" << gen.value_or(" --config CONFIG")
       << " --seed " << s.seed << " --case I`"
       << (gen ? ""
               : ", CONFIG the campaign's generator config (any finding's "
                 "`jq .provenance.generator.config repro.json`)")
       << ".\n\n";
    const std::vector<PatternGroup> groups = GroupByPattern(s);
    if (!groups.empty()) {
      md << "## Folders by minimized pattern\n\nFolders whose minimized graphs have the same op "
            "chain, activations aside, are likely one root cause.\n\n"
         << "| kind | folders | cases | pattern |\n|---|---:|---:|---|\n";
      for (const PatternGroup& g : groups) {
        md << "| " << g.kind << " | " << g.signatures.size() << " | " << g.cases << " | "
           << g.pattern << " |\n";
      }
      md << "\n";
    }
  }
  if (!s.unsupported_reasons.empty()) {
    std::vector<std::pair<int64_t, std::string>> top;
    for (const auto& [reason, n] : s.unsupported_reasons) top.emplace_back(-n, reason);
    std::sort(top.begin(), top.end());
    md << "## Why the target declined graphs (UNSUPPORTED)\n\n| cases | reason |\n|---:|---|\n";
    for (size_t i = 0; i < top.size() && i < 10; ++i) {
      md << "| " << -top[i].first << " | " << MdCode(top[i].second, true) << " |\n";
    }
    md << "\n";
  }
  if (s.closest_float.share >= 0 || s.closest_grid.share >= 0) {
    md << "## Closest passing case\n\nHow much of the admitted error the worst element of a "
          "passing case used (above 1 it would fail): the room the oracle's bound left on this "
          "target.\n\n";
    if (s.closest_float.share >= 0) {
      md << "- float outputs: " << NumberText(s.closest_float.share, 3) << " of the bound (case "
         << s.closest_float.case_index << ")\n";
    }
    if (s.closest_grid.share >= 0) {
      md << "- integer outputs: " << NumberText(s.closest_grid.share, 3)
         << " of the derived spread E beyond rounding, (|c - t| - 0.5) / E (case "
         << s.closest_grid.case_index << ", E " << NumberText(s.closest_grid.e, 3) << " steps)\n";
    }
    md << "\n";
  }
  if (!s.rule_fires.empty()) {
    md << "## Rewrites applied, per rule\n\nHow often each rule fired in the optimized runs: a "
          "rule that never fired was not tested by this campaign.\n\n"
          "| rule | rewrites |\n|---|---:|\n";
    for (const auto& [rule, n] : s.rule_fires)
      md << "| " << MdCode(rule, true) << " | " << n << " |\n";
    md << "\n";
  }
  md << EngineFusionsMarkdown(s);
  if (s.coverage.graphs > 0) {
    md << "## Generator coverage\n\nClasses of graphs (docs/generator.md, Coverage) that this "
          "campaign built rarely or never; `summary.json` has every class.\n\n"
       << RenderCoverageMarkdown(s.coverage, {.min_share = 0.002, .only_flagged = true}) << "\n";
  }
  return md.str();
}

void WriteCampaignSummary(const std::string& out_dir, const CampaignStats& s,
                          const std::string& junit_path, bool full) {
  nlohmann::json j;
  j["format"] = "fusefuzz-summary";
  j["version"] = 1;
  j["fusefuzz_version"] = FUSEFUZZ_VERSION;
  if (!s.command_line.empty()) j["command_line"] = s.command_line;
  j["seed"] = s.seed;
  j["target"] = s.target;
  j["inject"] = s.inject;
  j["oracle"] = s.oracle;
  j["graphs"] = s.graphs;
  j["seconds"] = s.seconds;
  j["graphs_per_second"] = s.seconds > 0 ? s.graphs / s.seconds : 0.0;
  j["interrupted"] = s.interrupted;
  if (!s.stopped_because.empty()) j["stopped_because"] = s.stopped_because;
  j["verdicts"] = s.verdicts;
  j["findings"] = s.findings;
  j["known"] = s.known;
  j["worker_errors"] = s.worker_errors;
  if (!s.batches.empty()) j["batches"] = BatchStatsToJson(s.batches);
  if (!s.by_kind.empty()) {
    nlohmann::json kinds = nlohmann::json::object();
    for (const auto& [kind, k] : s.by_kind) {
      kinds[kind] = {{"cases", k.count},
                     {"known", k.known},
                     {"per_1000_graphs",
                      s.graphs > 0 ? 1000.0 * static_cast<double>(k.count) / s.graphs : 0.0}};
    }
    j["findings_by_kind"] = kinds;
  }
  if (!s.unsupported_reasons.empty()) j["unsupported_reasons"] = s.unsupported_reasons;
  if (s.first_finding_graphs >= 0) {
    j["first_finding"] = {{"graphs", s.first_finding_graphs}, {"seconds", s.first_finding_seconds}};
  }
  if (!s.first_by_kind.empty()) {
    nlohmann::json first = nlohmann::json::object();
    for (const auto& [kind, f] : s.first_by_kind)
      first[kind] = {{"case", f.case_index}, {"graphs", f.graphs}, {"seconds", f.seconds}};
    j["first_finding_by_kind"] = first;
  }
  j["rule_fires"] = s.rule_fires;
  if (!s.engine_fusions.empty()) j["engine_fusions"] = EngineFusionsJson(s);
  nlohmann::json closest = nlohmann::json::object();
  for (const auto& [key, p] : {std::pair{"float", s.closest_float}, {"grid", s.closest_grid}}) {
    if (p.share >= 0) closest[key] = {{"share", p.share}, {"case", p.case_index}, {"e", p.e}};
  }
  j["closest_pass"] = closest;
  nlohmann::json list = nlohmann::json::array();
  for (const auto& [sig, u] : s.unique) {
    list.push_back({{"signature", sig},
                    {"kind", u.kind},
                    {"count", u.count},
                    {"duplicates", u.count - 1},
                    {"first_case", u.first_case},
                    {"bucket", u.bucket},
                    {"pattern", u.pattern},
                    {"folder", "findings/" + sig}});
  }
  j["unique_findings"] = list;
  if (!s.known_upstream.empty()) {
    nlohmann::json known = nlohmann::json::array();
    for (const auto& [sig, u] : s.known_upstream) {
      known.push_back({{"signature", sig},
                       {"kind", u.kind},
                       {"count", u.count},
                       {"first_case", u.first_case},
                       {"folder", "findings/" + sig},
                       {"known_upstream", s.upstream_links.at(sig)}});
    }
    j["known_upstream"] = known;
  }
  nlohmann::json groups = nlohmann::json::array();
  for (const PatternGroup& g : GroupByPattern(s)) {
    groups.push_back(
        {{"pattern", g.pattern}, {"kind", g.kind}, {"cases", g.cases}, {"folders", g.signatures}});
  }
  j["patterns"] = groups;
  if (s.coverage.graphs > 0) j["coverage"] = CoverageToJson(s.coverage, {.min_share = 0.002});
  if (!s.spellings.empty()) j["spellings"] = s.spellings;
  if (s.progress_jobs > 0) {
    j["progress"] = {{"jobs", s.progress_jobs}, {"next", s.progress_next}};
  }
  if (!s.shard.is_null()) {
    j["shard"] = s.shard;
    nlohmann::json buckets = nlohmann::json::object();
    for (const auto& [key, b] : s.buckets) {
      nlohmann::json slots = nlohmann::json::array();
      for (const BucketSlot& x : b.slots) {
        slots.push_back({{"case", x.case_index},
                         {"signature", x.signature},
                         {"kind", x.kind},
                         {"known", x.known},
                         {"pattern", x.pattern}});
      }
      buckets[key] = {{"slots", slots},
                      {"others", b.others},
                      {"others_first", b.others_first},
                      {"others_kind", b.others_kind}};
    }
    j["buckets"] = buckets;
  }
  if (!s.merge.is_null()) j["merge"] = s.merge;
  // Inside OUT: replaced, never written through a link someone planted there.
  WriteFileInFolder(out_dir, "summary.json", j.dump(1) + "\n");
  if (!full) return;
  WriteFileInFolder(out_dir, "summary.md", SummaryMarkdown(s));
  WriteHtmlReport(out_dir, s);

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
