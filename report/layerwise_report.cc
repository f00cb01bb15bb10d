#include "report/layerwise_report.h"

#include <algorithm>
#include <cstdio>
#include <sstream>

namespace fusefuzz {
namespace {

std::string Percent(double share) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f%%", 100 * share);
  return buf;
}

std::string Num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", v);
  return buf;
}

std::string Channels(const std::vector<int64_t>& c) {
  std::string s;
  const size_t shown = std::min<size_t>(c.size(), 8);
  for (size_t i = 0; i < shown; ++i) s += (i == 0 ? "" : ", ") + std::to_string(c[i]);
  if (c.size() > shown) s += ", ... (" + std::to_string(c.size()) + " channels)";
  return s;
}

// What the worst element says, in the layer's units.
std::string Worst(const LayerCheck& l) {
  if (!l.exposed) return "not answered";
  if (l.integer) return Num(l.worst_excess) + " steps (E " + Num(l.worst_e) + ")";
  return Num(l.worst_excess) + " x limit";
}

// Text inside SVG markup: the characters XML reserves.
std::string Xml(const std::string& text) {
  std::string out;
  for (char c : text) {
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
      default:
        out += c;
    }
  }
  return out;
}

}  // namespace

std::string LayerwiseText(const LayerwiseResult& r, const std::string& indent) {
  std::ostringstream s;
  if (!r.ran) {
    s << indent << "layers: not judged: " << r.message << "\n";
    return s.str();
  }
  int64_t integer = 0, departing = 0, unanswered = 0;
  std::string least;
  double least_share = 2;
  for (const LayerCheck& l : r.layers) {
    if (!l.exposed) ++unanswered;
    if (l.failed > 0) ++departing;
    if (!l.integer || !l.exposed) continue;
    ++integer;
    if (l.InformativeShare() < least_share) least_share = l.InformativeShare(), least = l.value;
  }
  s << indent
    << "layers (teacher-forced: each judged from the engine's own integers before it): " << integer
    << " integer boundaries, " << (r.layers.size() - static_cast<size_t>(integer))
    << " other; informative share at least " << Percent(integer > 0 ? least_share : 0)
    << (least.empty() ? "" : " ('" + least + "')") << "; " << departing << " departing";
  if (unanswered > 0) s << "; " << unanswered << " not answered by the target";
  s << "\n";
  if (r.same_fusion()) {
    s << indent << "  fusion unchanged by the exposed boundaries: the same "
      << r.rewrites_plain.size() << " rewrites\n";
  } else {
    s << indent
      << "  WARNING: exposing the boundaries changed the fusion: " << r.rewrites_plain.size()
      << " rewrites without, " << r.rewrites_exposed.size()
      << " with (the layer table judges the exposed run)\n";
  }
  if (r.first_departing >= 0) {
    const LayerCheck& l = r.layers[static_cast<size_t>(r.first_departing)];
    s << indent << "  first departing layer: '" << l.value << "' (" << l.op << " '" << l.node
      << "'): " << l.failed << " of " << l.elements << " elements fail, worst " << Worst(l)
      << ", reference " << Num(l.worst_reference) << ", engine " << Num(l.worst_candidate);
    if (!l.failing_channels.empty()) {
      s << "; channels " << Channels(l.failing_channels) << "; " << l.failing_positions
        << " positions";
    }
    if (!l.where.empty()) s << "; " << l.where;
    s << "\n";
  }
  s << indent << "  | # | tensor | op | elements | informative | saturated | failed | worst |\n";
  s << indent << "  |---|---|---|---|---|---|---|---|\n";
  for (size_t i = 0; i < r.layers.size(); ++i) {
    const LayerCheck& l = r.layers[i];
    s << indent << "  | " << i + 1 << " | " << l.value << " | " << l.op << " | " << l.elements
      << " | " << Percent(l.InformativeShare()) << " | " << l.saturated << " | " << l.failed
      << " | " << Worst(l) << " |\n";
  }
  return s.str();
}

nlohmann::json LayerwiseJson(const LayerwiseResult& r) {
  nlohmann::json j = {{"ran", r.ran},
                      {"same_fusion", r.same_fusion()},
                      {"rewrites", r.rewrites_plain.size()},
                      {"rewrites_exposed", r.rewrites_exposed.size()},
                      {"min_informative_share", r.min_informative_share},
                      {"first_departing", nullptr},
                      {"layers", nlohmann::json::array()}};
  if (!r.message.empty()) j["message"] = r.message;
  for (const LayerCheck& l : r.layers) {
    nlohmann::json e = {{"tensor", l.value},
                        {"node", l.node},
                        {"op", l.op},
                        {"integer", l.integer},
                        {"exposed", l.exposed},
                        {"elements", l.elements},
                        {"informative", l.informative},
                        {"saturated", l.saturated},
                        {"failed", l.failed},
                        {"worst_excess", l.worst_excess},
                        {"worst_index", l.worst_index}};
    if (l.integer) e["worst_e"] = l.worst_e;
    if (l.failed > 0) {
      e["failing_channels"] = l.failing_channels;
      e["failing_positions"] = l.failing_positions;
      e["where"] = l.where;
    }
    j["layers"].push_back(std::move(e));
  }
  if (r.first_departing >= 0) j["first_departing"] = r.layers[r.first_departing].value;
  return j;
}

std::string LayerwiseSvg(const LayerwiseResult& r, const std::string& title) {
  const int bar = 8, gap = 2, height = 160, left = 40, top = 30;
  const int n = static_cast<int>(r.layers.size());
  const int width = left + n * (bar + gap) + 20;
  std::ostringstream s;
  s << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << width << "\" height=\""
    << height + top + 40 << "\" font-family=\"sans-serif\" font-size=\"11\">\n";
  s << "<text x=\"" << left << "\" y=\"16\">" << Xml(title)
    << ": informative share per layer (teacher-forced); red: departing</text>\n";
  const double y95 = top + height * 0.05;
  s << "<line x1=\"" << left << "\" x2=\"" << width - 10 << "\" y1=\"" << y95 << "\" y2=\"" << y95
    << "\" stroke=\"#888\" stroke-dasharray=\"4 3\"/>\n";
  s << "<text x=\"2\" y=\"" << y95 + 4 << "\">95%</text>\n";
  s << "<text x=\"2\" y=\"" << top + height << "\">0%</text>\n";
  for (int i = 0; i < n; ++i) {
    const LayerCheck& l = r.layers[static_cast<size_t>(i)];
    const double h = height * l.InformativeShare();
    const char* fill = l.failed > 0 ? "#d62728" : l.integer ? "#4c72b0" : "#8c8c8c";
    s << "<rect x=\"" << left + i * (bar + gap) << "\" y=\"" << top + height - h << "\" width=\""
      << bar << "\" height=\"" << std::max(h, 1.0) << "\" fill=\"" << fill << "\"><title>"
      << Xml(l.value) << " (" << l.op << "): " << Percent(l.InformativeShare()) << " informative, "
      << l.failed << " failed</title></rect>\n";
  }
  s << "<text x=\"" << left << "\" y=\"" << top + height + 16 << "\">layer 1 .. " << n
    << " (graph order)</text>\n</svg>\n";
  return s.str();
}

}  // namespace fusefuzz
