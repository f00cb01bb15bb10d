// DOT and text views of a graph, and FNV-1a fingerprints over a canonical byte serialization.
#include "ir/printers.h"

#include <algorithm>
#include <bit>
#include <cstdio>
#include <map>

#include "ir/error.h"
#include "ir/verifier.h"

namespace fusefuzz {
namespace {

std::string FormatDouble(double d) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", d);
  return buf;
}

std::string AttrToString(const AttrValue& v) {
  if (const auto* i = std::get_if<int64_t>(&v)) return std::to_string(*i);
  if (const auto* d = std::get_if<double>(&v)) return FormatDouble(*d);
  if (const auto* s = std::get_if<std::string>(&v)) return "\"" + *s + "\"";
  std::string out = "[";
  const auto& ints = std::get<std::vector<int64_t>>(v);
  for (size_t i = 0; i < ints.size(); ++i) {
    if (i) out += ",";
    out += std::to_string(ints[i]);
  }
  return out + "]";
}

std::string AttrsText(const AttrMap& attrs, const char* sep) {
  std::string out;
  for (const auto& [name, v] : attrs)
    out += (out.empty() ? "" : sep) + name + "=" + AttrToString(v);
  return out;
}

std::string StepText(const EpilogueStep& s, const Node& n, bool dot) {
  switch (s.kind) {
    case EpilogueKind::kScaleShift:
      return "scale_shift";
    case EpilogueKind::kAdd:
      if (dot) return "add(in" + std::to_string(s.input) + ")";
      return "add(%" +
             (s.input >= 0 && static_cast<size_t>(s.input) < n.inputs.size()
                  ? n.inputs[static_cast<size_t>(s.input)]
                  : "?") +
             ")";
    case EpilogueKind::kActivation: {
      std::string a = AttrsText(s.attrs, ",");
      return std::string(OpName(s.act)) + (a.empty() ? "" : "(" + a + ")");
    }
    case EpilogueKind::kClamp:
      return "clamp(" + AttrsText(s.attrs, ",") + ")";
  }
  return "?";
}

// "{0.5, -1, 2}" for a tensor of at most `limit` elements, "" otherwise.
std::string SmallValues(const Tensor& t, int64_t limit) {
  if (limit <= 0 || t.size() > limit) return "";
  std::string out = "{";
  for (size_t i = 0; i < t.data.size(); ++i) out += (i ? ", " : "") + FormatDouble(t.data[i]);
  return out + "}";
}

// A per-channel grid of a big layer (1000 scales on a classifier's weights) would make a DOT
// label longer than Graphviz accepts (16384 characters): past 8 channels, the count and ranges.
std::string DotQuantText(const QuantParams& q) {
  if (q.scale.size() <= 8) return QuantText(q);
  const auto [s_lo, s_hi] = std::minmax_element(q.scale.begin(), q.scale.end());
  const auto [z_lo, z_hi] = std::minmax_element(q.zero_point.begin(), q.zero_point.end());
  char buf[160];
  std::snprintf(buf, sizeof buf, "%s axis=%d, %zu channels: s in [%.6g, %.6g], z in [%lld, %lld]",
                q.type == QuantType::kUint8  ? "u8"
                : q.type == QuantType::kInt8 ? "i8"
                                             : "i32",
                static_cast<int>(q.axis), q.scale.size(), *s_lo, *s_hi,
                static_cast<long long>(*z_lo), static_cast<long long>(*z_hi));
  return buf;
}

// Escapes a string for a double-quoted DOT label. Names come from files and may hold any
// character: a quote or backslash would end or change the string, and a control character (NUL,
// newline) makes Graphviz refuse the file, so they are shown as \" \\ and \xNN ("\\x00" in
// the DOT text is the four characters \x00 in the drawing).
std::string DotEscape(const std::string& s) {
  std::string out;
  for (char c : s) {
    const auto b = static_cast<unsigned char>(c);
    if (c == '"') {
      out += "\\\"";
    } else if (c == '\\') {
      out += "\\\\";
    } else if (b < 0x20 || b == 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\\\x%02x", b);
      out += buf;
    } else {
      out += c;
    }
  }
  return out;
}

// A name in the text form: control characters (a newline would start a forged line) and
// backslashes as \xNN and \\, so that one node is always one line.
std::string TextName(const std::string& s) {
  std::string out;
  for (char c : s) {
    const auto b = static_cast<unsigned char>(c);
    if (c == '\\') {
      out += "\\\\";
    } else if (b < 0x20 || b == 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", b);
      out += buf;
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace

std::string ToText(const Graph& g) {
  std::string out = "graph(";
  for (size_t i = 0; i < g.inputs.size(); ++i) {
    out += (i ? ", %" : "%") + TextName(g.inputs[i].name) + ShapeToString(g.inputs[i].shape);
  }
  out += ") -> (";
  for (size_t i = 0; i < g.outputs.size(); ++i) out += (i ? ", %" : "%") + TextName(g.outputs[i]);
  out += ")\n";
  for (const auto& n : g.nodes) {
    std::string line = "%" + TextName(n.output) + " = " + std::string(OpName(n.op)) + "(";
    if (IsBinary(n.op)) {
      // Operand order matters (Sub, Div): show constants in their place.
      BinaryOperands b = GetBinaryOperands(n);
      auto operand = [&](const Tensor* c, int idx, const char* pname) {
        if (c) return std::string(pname) + ShapeToString(c->shape);
        return idx >= 0 && static_cast<size_t>(idx) < n.inputs.size()
                   ? "%" + TextName(n.inputs[static_cast<size_t>(idx)])
                   : std::string("%?");
      };
      line += operand(b.const_a, b.input_a, "A") + ", " + operand(b.const_b, b.input_b, "B") + ")";
    } else {
      for (size_t i = 0; i < n.inputs.size(); ++i)
        line += (i ? ", %" : "%") + TextName(n.inputs[i]);
      line += ")";
      for (const auto& [name, t] : n.params) line += " " + name + ShapeToString(t.shape);
    }
    std::string attrs = AttrsText(n.attrs, " ");
    if (!attrs.empty()) line += " " + attrs;
    for (const auto& s : n.epilogue) line += " + " + StepText(s, n, false);
    for (const auto& [role, q] : n.quant) line += " " + role + ":q(" + QuantText(q) + ")";
    out += line + "  # " + TextName(n.name) + "\n";
  }
  return out;
}

std::string ToDot(const Graph& g, const DotOptions& opts) {
  // Edge labels carry shapes when the graph verifies; a broken graph is still drawn.
  ShapeMap shapes;
  try {
    shapes = VerifyGraph(g);
  } catch (const InputError&) {
    shapes.clear();
  }
  std::string out = "digraph fusefuzz {\n  rankdir=TB;\n  node [fontname=\"monospace\"];\n";
  if (!opts.title.empty()) {
    out += "  labelloc=t;\n  label=\"" + DotEscape(opts.title) + "\";\n";
  }
  std::map<std::string, std::string> producer;  // value -> DOT node id
  for (size_t i = 0; i < g.inputs.size(); ++i) {
    std::string id = std::string("in").append(std::to_string(i));
    producer[g.inputs[i].name] = id;
    out += "  " + id + " [shape=ellipse, label=\"" + DotEscape(g.inputs[i].name) + "\\n" +
           ShapeToString(g.inputs[i].shape) + "\"];\n";
  }
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& n = g.nodes[i];
    std::string id = std::string("n").append(std::to_string(i));
    producer[n.output] = id;
    std::string label = DotEscape(n.name) + "\\n" + std::string(OpName(n.op));
    for (const auto& [name, t] : n.params) {
      label += "\\n" + name + ShapeToString(t.shape);
      const std::string vals = SmallValues(t, opts.small_tensor);
      if (!vals.empty()) label += " = " + DotEscape(vals);
    }
    for (const auto& [name, v] : n.attrs) label += "\\n" + name + "=" + DotEscape(AttrToString(v));
    for (const auto& s : n.epilogue) label += "\\n+ " + DotEscape(StepText(s, n, true));
    for (const auto& [role, q] : n.quant) {
      label += "\\n" + DotEscape(role) + ": q(" + DotEscape(DotQuantText(q)) + ")";
    }
    if (auto note = opts.notes.find(n.name); note != opts.notes.end()) {
      label += "\\n" + DotEscape(note->second);
    }
    out += "  " + id + " [shape=box, label=\"" + label + "\"";
    if (opts.highlight.count(n.name)) {
      out += ", style=filled, fillcolor=\"#ff6060\"";
    } else if (opts.touched.count(n.name)) {
      out += ", style=filled, fillcolor=\"#ffc080\"";
    }
    out += "];\n";
  }
  auto edge_label = [&](const std::string& v) {
    auto it = shapes.find(v);
    std::string label =
        DotEscape(v) + (it == shapes.end() ? "" : "\\n" + ShapeToString(it->second));
    if (opts.values) {
      auto t = opts.values->find(v);
      if (t != opts.values->end()) {
        const std::string vals = SmallValues(t->second, opts.small_tensor);
        if (!vals.empty()) label += "\\n" + DotEscape(vals);
      }
    }
    return label;
  };
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& n = g.nodes[i];
    for (size_t k = 0; k < n.inputs.size(); ++k) {
      auto it = producer.find(n.inputs[k]);
      std::string from = it == producer.end()
                             ? "missing_" + std::to_string(i) + "_" + std::to_string(k)
                             : it->second;
      if (it == producer.end()) {
        out += "  " + from + " [shape=plaintext, label=\"?" + DotEscape(n.inputs[k]) + "\"];\n";
      }
      out += "  " + from + " -> n" + std::to_string(i) + " [label=\"" + edge_label(n.inputs[k]) +
             (n.inputs.size() > 1 ? " (in" + std::to_string(k) + ")" : "") + "\"];\n";
    }
  }
  for (size_t i = 0; i < g.outputs.size(); ++i) {
    std::string id = std::string("out").append(std::to_string(i));
    if (g.outputs[i] == opts.failing_output) {
      out += "  " + id +
             " [shape=ellipse, color=\"#d00000\", penwidth=3, fontcolor=\"#d00000\", "
             "label=\"" +
             DotEscape(g.outputs[i]) + " (fails)" +
             (opts.failing_note.empty() ? "" : "\\n" + DotEscape(opts.failing_note)) + "\"];\n";
    } else {
      out += "  " + id + " [shape=ellipse, label=\"" + DotEscape(g.outputs[i]) + "\"];\n";
    }
    auto it = producer.find(g.outputs[i]);
    if (it != producer.end()) {
      out += "  " + it->second + " -> " + id + " [label=\"" + edge_label(g.outputs[i]) + "\"];\n";
    }
  }
  return out + "}\n";
}

namespace {

// Canonical byte stream hashed with 64-bit FNV-1a. Every field is tagged or length-prefixed so
// that different graphs cannot serialize to the same bytes.
class Hasher {
 public:
  explicit Hasher(bool structural) : structural_(structural) {}
  uint64_t value() const { return h_; }

  void Byte(uint8_t b) {
    h_ ^= b;
    h_ *= 0x100000001b3ULL;
  }
  void U64(uint64_t v) {
    for (int i = 0; i < 8; ++i) Byte(static_cast<uint8_t>(v >> (8 * i)));
  }
  void Str(const std::string& s) {
    U64(s.size());
    for (char c : s) Byte(static_cast<uint8_t>(c));
  }
  void ShapeOf(const Shape& s) {
    U64(s.size());
    // Structural: only the rank, so the same pattern at other sizes matches.
    if (!structural_) {
      for (int64_t d : s) U64(static_cast<uint64_t>(d));
    }
  }
  void TensorOf(const Tensor& t) {
    ShapeOf(t.shape);
    if (structural_) return;
    for (float f : t.data) U64(std::bit_cast<uint32_t>(f));
  }
  void Attrs(const AttrMap& attrs) {
    U64(attrs.size());
    for (const auto& [name, v] : attrs) {
      Str(name);
      Byte(static_cast<uint8_t>(v.index()));
      if (const auto* i = std::get_if<int64_t>(&v)) U64(static_cast<uint64_t>(*i));
      if (const auto* d = std::get_if<double>(&v)) U64(std::bit_cast<uint64_t>(*d));
      if (const auto* s = std::get_if<std::string>(&v)) Str(*s);
      if (const auto* ints = std::get_if<std::vector<int64_t>>(&v)) {
        U64(ints->size());
        for (int64_t x : *ints) U64(static_cast<uint64_t>(x));
      }
    }
  }
  // Appended only when present, so float graphs keep the fingerprints they had.
  void Quant(const QuantMap& quant) {
    if (quant.empty()) return;
    U64(quant.size());
    for (const auto& [role, q] : quant) {
      Str(role);
      Byte(static_cast<uint8_t>(q.type));
      U64(static_cast<uint64_t>(q.axis));
      if (structural_) continue;
      U64(q.scale.size());
      for (double d : q.scale) U64(std::bit_cast<uint64_t>(d));
      for (int64_t z : q.zero_point) U64(static_cast<uint64_t>(z));
    }
  }
  void Params(const ParamMap& params) {
    U64(params.size());
    for (const auto& [name, t] : params) {
      Str(name);  // the param's role ("W", "B"), not a graph name
      TensorOf(t);
    }
  }
  // Values by name, or (structural) by definition index: input i -> i, node j -> inputs + j.
  void Value(const std::string& v, const std::map<std::string, uint64_t>& index) {
    if (!structural_) return Str(v);
    auto it = index.find(v);
    U64(it == index.end() ? ~uint64_t{0} : it->second);
  }
  void Name(const std::string& s) {
    if (!structural_) Str(s);
  }

 private:
  bool structural_;
  uint64_t h_ = 0xcbf29ce484222325ULL;
};

uint64_t Hash(const Graph& g, bool structural) {
  Hasher h(structural);
  std::map<std::string, uint64_t> index;
  for (size_t i = 0; i < g.inputs.size(); ++i) index.emplace(g.inputs[i].name, i);
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    index.emplace(g.nodes[i].output, g.inputs.size() + i);
  }
  h.U64(g.inputs.size());
  for (const auto& in : g.inputs) {
    h.Name(in.name);
    h.ShapeOf(in.shape);
  }
  h.U64(g.nodes.size());
  for (const auto& n : g.nodes) {
    h.Name(n.name);
    h.U64(static_cast<uint64_t>(n.op));
    h.U64(n.inputs.size());
    for (const auto& in : n.inputs) h.Value(in, index);
    h.Name(n.output);
    h.Attrs(n.attrs);
    h.Params(n.params);
    h.U64(n.epilogue.size());
    for (const auto& s : n.epilogue) {
      h.U64(static_cast<uint64_t>(s.kind));
      h.U64(static_cast<uint64_t>(s.act));
      h.U64(static_cast<uint64_t>(s.input));
      h.Attrs(s.attrs);
      h.Params(s.params);
    }
    h.Quant(n.quant);
    // Only when set: fingerprints of graphs without spellings stay what they were.
    if (!n.spelling.empty()) h.Str("spelling " + n.spelling);
  }
  if (g.options.allow_negative_scale) h.Str("allow_negative_scale");
  h.U64(g.outputs.size());
  for (const auto& o : g.outputs) h.Value(o, index);
  return h.value();
}

}  // namespace

uint64_t Fingerprint(const Graph& g) { return Hash(g, false); }

std::string FingerprintHex(const Graph& g) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(Fingerprint(g)));
  return buf;
}

uint64_t StructuralFingerprint(const Graph& g) { return Hash(g, true); }

}  // namespace fusefuzz
