#include "report/html_report.h"

#include <cstdio>
#include <fstream>
#include <sstream>

#include "harness/repro.h"
#include "ir/error.h"
#include "ir/folder_write.h"
#include "ir/json_io.h"
#include "ir/read_file.h"
#include "ir/verifier.h"
#include "report/campaign_summary.h"
#include "report/engine_coverage.h"
#include "report/finding_report.h"
#include "report/markdown_html.h"

namespace fusefuzz {
namespace {

std::string Esc(const std::string& in) { return XmlEscape(in); }

std::string Num(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

// A time in seconds, rounded as summary.md rounds it (issue 45, item 22: "12.3456 s").
std::string Secs(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  return buf;
}

// A finding's SVG: inside OUT, so a planted FIFO, device or link is skipped, not read.
bool ReadText(const std::string& path, std::string* out) {
  ReadFileOptions o;
  o.max_bytes = int64_t{64} << 20;
  o.follow_links = false;
  try {
    *out = ReadRegularFile(path, o);
  } catch (const InputError&) {
    return false;
  }
  return true;
}

// An SVG file's <svg> element, to inline (the XML prolog and DOCTYPE are not allowed there).
std::string InlineSvg(const std::string& path) {
  std::string text;
  if (!ReadText(path, &text)) return "";
  size_t at = text.find("<svg");
  return at == std::string::npos ? "" : text.substr(at);
}

constexpr char kStyle[] = R"(
body { font-family: sans-serif; margin: 2em auto; padding: 0 1em; max-width: 1200px; color: #222; }
h1 { margin-bottom: 0.2em; }
table { border-collapse: collapse; margin: 0.5em 0 1.5em; }
th, td { border: 1px solid #bbb; padding: 0.25em 0.6em; text-align: left; vertical-align: top; }
th { background: #eee; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
pre { background: #f6f6f6; padding: 0.6em; overflow-x: auto; }
.interrupted { color: #b00; font-weight: bold; }
.finding { border-top: 2px solid #d00; margin-top: 2em; padding-top: 0.5em; }
.pics { display: flex; flex-wrap: wrap; gap: 1em; align-items: flex-start; }
.pics figure { margin: 0; border: 1px solid #ccc; padding: 0.5em; max-width: 100%; overflow: auto; }
.pics svg { max-width: 560px; height: auto; }
.report { border-left: 3px solid #ddd; padding-left: 1em; }
)";

}  // namespace

std::string HtmlReport(const std::string& out_dir, const CampaignStats& s) {
  std::ostringstream h;
  h << "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
    << "<title>fusefuzz campaign: " << s.findings << " findings</title>\n<style>" << kStyle
    << "</style>\n</head>\n<body>\n<h1>fusefuzz campaign</h1>\n";
  h << "<p" << (s.interrupted ? " class=\"interrupted\">Interrupted" : ">Finished") << " after "
    << s.graphs << " graphs in " << Secs(s.seconds) << " s: " << s.findings << " findings, "
    << s.unique.size() << " unique.</p>\n";
  h << "<p>Target <code>" << Esc(s.target) << "</code>, oracle <code>" << Esc(s.oracle)
    << "</code>, seed " << s.seed;
  if (!s.inject.empty()) {
    h << ", injected faults:";
    for (const auto& f : s.inject) h << " <code>" << Esc(f) << "</code>";
  }
  h << ".</p>\n";
  if (!s.command_line.empty()) {
    h << "<p>Rerun it:</p>\n<pre>" << Esc(s.command_line) << "</pre>\n";
  }
  if (s.worker_errors > 0) {
    h << "<p class=\"interrupted\">Worker errors: " << s.worker_errors
      << " (a worker process died or was killed; see the crash and timeout findings).</p>\n";
  }

  struct Loaded {
    std::string sig, folder;
    bool ok = false;
    Repro r;
    std::string coords, error;
  };
  std::vector<Loaded> loaded;
  for (const auto& [sig, u] : s.unique) {
    Loaded l;
    l.sig = sig;
    l.folder = out_dir + "/findings/" + sig;
    try {
      l.r = ReadReproFile(l.folder + "/repro.json");
      l.ok = true;
      ShapeMap shapes = VerifyGraph(l.r.graph);
      auto it = shapes.find(l.r.worst.output);
      if (!l.r.worst.output.empty())
        l.coords = Coordinates(l.r.worst.index, it == shapes.end() ? Shape{} : it->second);
    } catch (const std::exception& e) {
      l.error = e.what();
    }
    loaded.push_back(std::move(l));
  }

  h << "<h2>Findings</h2>\n";
  if (s.unique.empty()) {
    h << "<p>No findings.</p>\n";
  } else {
    h << "<table id=\"findings\">\n<tr><th>kind</th><th>blamed rule</th><th>cases</th>"
         "<th>first case</th><th>worst element</th><th>reference</th><th>target</th>"
         "<th>details</th></tr>\n";
    for (const Loaded& l : loaded) {
      const SignatureStats& u = s.unique.at(l.sig);
      h << "<tr class=\"finding-row\"><td>" << Esc(u.kind) << "</td><td>"
        << (l.ok && !l.r.blame.rule.empty() ? "<code>" + Esc(l.r.blame.rule) + "</code>" : "-")
        << "</td><td class=\"num\">" << u.count << "</td><td class=\"num\">" << u.first_case
        << "</td>";
      if (l.ok && !l.r.worst.output.empty()) {
        h << "<td><code>" << Esc(l.r.worst.output) << "</code> " << Esc(l.coords)
          << "</td><td class=\"num\">" << Num(l.r.worst.reference) << "</td><td class=\"num\">"
          << Num(l.r.worst.candidate) << "</td>";
      } else {
        h << "<td>-</td><td>-</td><td>-</td>";
      }
      h << "<td><a href=\"#" << Esc(l.sig) << "\">" << Esc(l.sig) << "</a></td></tr>\n";
    }
    h << "</table>\n";
    if (!s.first_by_kind.empty()) {
      h << "<table id=\"first-findings\">\n<tr><th>kind</th><th>first found after</th>"
           "<th>at case</th></tr>\n";
      for (const auto& [kind, f] : s.first_by_kind) {
        h << "<tr><td>" << Esc(kind) << "</td><td>"
          << (f.seconds >= 0 ? Secs(f.seconds) + " s, " : "") << f.graphs
          << " graphs</td><td class=\"num\">" << f.case_index << "</td></tr>\n";
      }
      h << "</table>\n";
    }
  }

  h << "<h2>Verdicts</h2>\n<table id=\"verdicts\">\n<tr><th>verdict</th><th>cases</th>"
       "<th>meaning</th></tr>\n";
  for (const auto& [v, n] : s.verdicts) {
    h << "<tr><td>" << Esc(v) << "</td><td class=\"num\">" << n << "</td><td>"
      << Esc(VerdictMeaning(v)) << "</td></tr>\n";
  }
  h << "</table>\n";

  for (const Loaded& l : loaded) {
    h << "<section class=\"finding\" id=\"" << Esc(l.sig) << "\">\n<h2>" << Esc(l.sig) << "</h2>\n";
    if (!l.ok) {
      h << "<p>Cannot read the reproducer: " << Esc(l.error) << "</p>\n</section>\n";
      continue;
    }
    const Repro& r = l.r;
    h << "<p>Verdict <b>" << Esc(r.verdict) << "</b>";
    if (r.blame.known()) {
      h << "; blamed rewrite (" << r.blame.rewrite_index << ") <code>" << Esc(r.blame.rule)
        << "</code> at";
      for (const auto& n : r.blame.nodes) h << " <code>" << Esc(n) << "</code>";
    }
    h << ".</p>\n";
    if (!r.worst.output.empty()) {
      h << "<p>Worst element: output <code>" << Esc(r.worst.output) << "</code> at "
        << Esc(l.coords) << ": reference " << Num(r.worst.reference) << ", target "
        << Num(r.worst.candidate) << ", allowed difference " << Num(r.worst.bound) << ".</p>\n";
    }
    const std::string before = InlineSvg(l.folder + "/before.svg");
    const std::string after = InlineSvg(l.folder + "/after.svg");
    if (!before.empty() || !after.empty()) {
      h << "<div class=\"pics\">\n";
      if (!before.empty())
        h << "<figure>" << before << "<figcaption>before the optimizer</figcaption>"
          << "</figure>\n";
      if (!after.empty())
        h << "<figure>" << after << "<figcaption>"
          << (IsEmbeddedSpec(r.target) ? "right after the blamed rewrite"
                                       : "the rewrites the target reported")
          << "</figcaption></figure>\n";
      h << "</div>\n";
    }
    std::string report;
    if (ReadText(l.folder + "/report.md", &report)) {
      // Rendered, every character of it escaped (report/markdown_html.h).
      h << "<details open><summary>report.md</summary>\n<div class=\"report\">\n"
        << MarkdownToHtml(report, 2) << "</div>\n</details>\n";
    }
    h << "</section>\n";
  }
  if (!s.rule_fires.empty()) {
    h << "<h2>Rewrites applied, per rule</h2>\n<p>A rule that never fired was not tested by "
         "this campaign.</p>\n<table id=\"rule-fires\">\n<tr><th>rule</th><th>rewrites</th></tr>\n";
    for (const auto& [rule, n] : s.rule_fires) {
      h << "<tr><td><code>" << Esc(rule) << "</code></td><td class=\"num\">" << n << "</td></tr>\n";
    }
    h << "</table>\n";
  }

  h << EngineFusionsHtml(s);
  h << "</body>\n</html>\n";
  return h.str();
}

void WriteHtmlReport(const std::string& out_dir, const CampaignStats& stats) {
  WriteFileInFolder(out_dir, "summary.html", HtmlReport(out_dir, stats));
}

}  // namespace fusefuzz
