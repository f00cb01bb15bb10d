#include "report/engine_coverage.h"

#include <algorithm>
#include <set>
#include <sstream>

#include "report/markdown.h"

namespace fusefuzz {

EngineFusionCoverage ComputeEngineFusions(const CampaignStats& s) {
  EngineFusionCoverage c;
  const std::set<std::string> declared(s.engine_fusions.begin(), s.engine_fusions.end());
  c.declared.assign(declared.begin(), declared.end());
  for (const std::string& name : c.declared) {
    auto f = s.rule_fires.find(name);
    if (f != s.rule_fires.end() && f->second > 0) {
      c.fired[name] = f->second;
    } else if (auto u = s.engine_unreachable.find(name); u != s.engine_unreachable.end()) {
      c.unreachable[name] = u->second;
    } else {
      c.never_fired.push_back(name);
    }
  }
  for (const auto& [name, n] : s.rule_fires)
    if (!declared.count(name) && n > 0) c.undeclared[name] = n;
  return c;
}

nlohmann::json EngineFusionsJson(const CampaignStats& s) {
  if (s.engine_fusions.empty()) return nullptr;
  const EngineFusionCoverage c = ComputeEngineFusions(s);
  nlohmann::json j = {{"engine", s.engine},
                      {"declared", c.declared},
                      {"fired", c.fired},
                      {"never_fired", c.never_fired},
                      {"unreachable", c.unreachable},
                      {"undeclared_fired", c.undeclared}};
  // Objects, also when empty (nlohmann would write an empty map as []).
  for (const char* key : {"fired", "unreachable", "undeclared_fired"})
    if (j[key].empty()) j[key] = nlohmann::json::object();
  return j;
}

void EngineFusionsFromJson(const nlohmann::json& j, CampaignStats* s) {
  if (!j.is_object()) return;
  s->engine = j.value("engine", "");
  s->engine_fusions = j.value("declared", std::vector<std::string>{});
  s->engine_unreachable = j.value("unreachable", std::map<std::string, std::string>{});
}

namespace {

// Names are the target's own strings: nothing but printable ASCII reaches the terminal.
std::string Printable(const std::string& in) {
  std::string out;
  for (char c : in) out += (c >= 0x20 && c < 0x7f) ? c : '?';
  return out;
}

std::string Share(size_t fired, size_t declared) {
  std::ostringstream o;
  o << fired << " / " << declared;
  return o.str();
}

}  // namespace

std::string EngineFusionsMarkdown(const CampaignStats& s) {
  if (s.engine_fusions.empty()) return "";
  const EngineFusionCoverage c = ComputeEngineFusions(s);
  std::ostringstream md;
  md << "## Engine fusions\n\nThe fusions the target declares"
     << (s.engine.empty() ? "" : " (" + MdText(s.engine) + ")") << ": **"
     << Share(c.fired.size(), c.declared.size())
     << " fired** in the optimized runs. One that never fired was not tested by this campaign.\n\n"
     << "| fusion | rewrites |\n|---|---:|\n";
  for (const auto& [name, n] : c.fired) md << "| " << MdCode(name, true) << " | " << n << " |\n";
  for (const std::string& name : c.never_fired) md << "| " << MdCode(name, true) << " | 0 |\n";
  md << "\n";
  if (!c.never_fired.empty()) {
    md << "Never fired (" << c.never_fired.size() << "):";
    for (const std::string& name : c.never_fired) md << " " << MdCode(name);
    md << "\n\n";
  }
  if (!c.unreachable.empty()) {
    md << "Declared but unreachable on this target (" << c.unreachable.size() << "):\n\n"
       << "| fusion | why it cannot fire |\n|---|---|\n";
    for (const auto& [name, why] : c.unreachable)
      md << "| " << MdCode(name, true) << " | " << MdText(why) << " |\n";
    md << "\n";
  }
  if (!c.undeclared.empty()) {
    md << "Rewrites reported under names the target does not declare as fusions:";
    for (const auto& [name, n] : c.undeclared) md << " " << MdCode(name) << " (" << n << ")";
    md << "\n\n";
  }
  return md.str();
}

std::string EngineFusionsHtml(const CampaignStats& s) {
  if (s.engine_fusions.empty()) return "";
  const EngineFusionCoverage c = ComputeEngineFusions(s);
  std::ostringstream h;
  h << "<h2>Engine fusions</h2>\n<p>The fusions the target declares"
    << (s.engine.empty() ? "" : " (" + XmlEscape(s.engine) + ")") << ": <strong>"
    << Share(c.fired.size(), c.declared.size())
    << " fired</strong>. One that never fired was not tested by this campaign.</p>\n"
    << "<table id=\"engine-fusions\">\n<tr><th>fusion</th><th>rewrites</th><th>note</th></tr>\n";
  for (const auto& [name, n] : c.fired) {
    h << "<tr><td><code>" << XmlEscape(name) << "</code></td><td class=\"num\">" << n
      << "</td><td></td></tr>\n";
  }
  for (const std::string& name : c.never_fired) {
    h << "<tr class=\"never-fired\"><td><code>" << XmlEscape(name)
      << "</code></td><td class=\"num\">0</td><td>never fired</td></tr>\n";
  }
  for (const auto& [name, why] : c.unreachable) {
    h << "<tr class=\"unreachable\"><td><code>" << XmlEscape(name)
      << "</code></td><td class=\"num\">0</td><td>unreachable: " << XmlEscape(why)
      << "</td></tr>\n";
  }
  h << "</table>\n";
  return h.str();
}

std::string EngineFusionsConsole(const CampaignStats& s) {
  if (s.engine_fusions.empty()) return "";
  const EngineFusionCoverage c = ComputeEngineFusions(s);
  std::ostringstream o;
  o << "engine fusions: " << Share(c.fired.size(), c.declared.size()) << " fired";
  if (!c.unreachable.empty()) o << " (" << c.unreachable.size() << " unreachable here)";
  o << "\n";
  if (!c.fired.empty()) {
    o << "  fired:";
    for (const auto& [name, n] : c.fired) o << " " << Printable(name) << "=" << n;
    o << "\n";
  }
  if (!c.never_fired.empty()) {
    o << "  never fired:";
    for (const std::string& name : c.never_fired) o << " " << Printable(name);
    o << "\n";
  }
  return o.str();
}

}  // namespace fusefuzz
