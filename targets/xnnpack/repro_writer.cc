#include "targets/xnnpack/repro_writer.h"

#include <xnnpack.h>

#include <cmath>
#include <cstdio>
#include <exception>
#include <sstream>
#include <string>
#include <vector>

#include "targets/repro_program.h"
#include "targets/xnnpack/builder.h"
#include "targets/xnnpack/nhwc.h"
#include "targets/xnnpack/xnn_recorder.h"

namespace fusefuzz::xnnpack {
namespace {

constexpr char kFile[] = "reproduce_xnnpack.cc";
constexpr char kBuild[] =
    "g++ -std=c++17 -O1 reproduce_xnnpack.cc -o reproduce_xnnpack -lXNNPACK -lpthreadpool && "
    "./reproduce_xnnpack";

// The C++ element type of an external buffer of this XNNPACK datatype.
const char* ElementType(int datatype) {
  switch (datatype) {
    case xnn_datatype_qint8:
      return "int8_t";
    case xnn_datatype_quint8:
      return "uint8_t";
    default:
      return "float";
  }
}

std::string Items(const std::vector<float>& d) {
  std::string s;
  for (size_t i = 0; i < d.size(); ++i)
    s += (i ? (i % 8 ? ", " : ",\n    ") : "") + ExactLiteral(d[i]);
  return s;
}

size_t Count(const std::vector<size_t>& dims) {
  size_t c = 1;
  for (size_t d : dims) c *= d;
  return c;
}

// The NHWC position of a flat NCHW index of shape `s`.
int64_t NhwcIndex(const Shape& s, int64_t i) {
  if (!Rank4(s)) return i;
  const int64_t c = s[1], h = s[2], w = s[3];
  const int64_t x = i % w, y = (i / w) % h, ch = (i / (w * h)) % c, n = i / (w * h * c);
  return ((n * h + y) * w + x) * c + ch;
}

// Lines of C++ comment.
std::string Comment(const std::string& text) {
  std::string out = "// ", line;
  for (char ch : text) out += ch == '\n' ? std::string("\n// ") : std::string(1, ch);
  return out + "\n";
}

}  // namespace

Reproducer WriteReproducer(const NativeRequest& r, const ReproducerCase& c, bool int8,
                           const NativeBackend& run) {
  Recording rec;
  try {
    run(r);  // the adapter's own definition of the case, recorded
  } catch (const std::exception&) {
    // The finding is this failure (an error answer): the calls up to it are the reproducer.
    if (!c.output.empty()) throw;
  }
  Builder b(r, int8);  // the same value ids, by name
  // No failing output: the finding is XNNPACK failing (an error status), which is then what
  // the program reproduces.
  const bool wrong_number = !c.output.empty();
  const std::string failing = wrong_number ? c.output : r.graph.outputs.front();
  const uint32_t out_id = b.Id(failing);
  if (!rec.values.count(out_id)) throw Unsupported("the failing output was not defined");
  const int64_t at = wrong_number ? NhwcIndex(r.shapes.at(failing), c.index) : 0;
  const std::vector<float> expected = ToNhwc(c.expected.at(failing));

  std::ostringstream p;
  p << Comment("fusefuzz finding on XNNPACK (" +
               std::string(int8 ? "xnnpack:int8" : "xnnpack:fp32") + "): " + c.title +
               "\nWritten by fusefuzz's XNNPACK pack (targets/xnnpack/repro_writer.cc): the "
               "subgraph its\nadapter defined, call by call, with the weights, constants and "
               "inputs written in;\nXNNPACK alone runs it. Build and run:\n  " +
               kBuild +
               (wrong_number ? "\nExit status: 1 while output '" + c.output + "' element " +
                                   std::to_string(c.index) +
                                   " (NCHW) is farther from the reference\nthan fusefuzz's "
                                   "oracle allows, 0 when it is not, 2 when XNNPACK fails."
                             : std::string("\nExit status: 1 while XNNPACK fails on it, 0 when "
                                           "it runs.")));
  p << "#include <xnnpack.h>\n\n#include <cmath>\n#include <cstdint>\n#include <cstdio>\n"
       "#include <cstdlib>\n#include <vector>\n\n"
       "static void Check(xnn_status s, const char* what) {\n"
       "  if (s != xnn_status_success) {\n"
       "    std::fprintf(stderr, \"%s failed: status %d\\n\", what, int(s));\n"
       "    std::exit("
    << (wrong_number ? 2 : 1)
    << ");\n  }\n}\n"
       "static void Expect(bool ok) {\n"
       "  if (!ok) {\n"
       "    std::fprintf(stderr, \"XNNPACK numbered the values differently than when "
       "recorded\\n\");\n"
       "    std::exit(2);\n  }\n}\n\n";
  p << rec.statics.str() << "\n";
  // Inputs, NHWC, as the adapter passes them (quantized ones as their integers).
  for (const ValueInfo& in : r.graph.inputs) {
    const uint32_t id = b.Id(in.name);
    const std::vector<float> d = ToNhwc(r.inputs.at(in.name));
    const char* type = ElementType(rec.values.at(id).datatype);
    std::string items;
    for (size_t i = 0; i < d.size(); ++i) {
      const std::string v =
          std::string(type) == "float" ? ExactLiteral(d[i]) : std::to_string(int(d[i]));
      items += (i ? (i % 8 ? ", " : ",\n    ") : "") + v;
    }
    p << "// graph input '" << in.name << "', NHWC\nstatic std::vector<" << type << "> input" << id
      << " = {" << items << "};\n";
  }
  p << "// the reference of output '" << failing << "' (fp64, rounded to float32), NHWC\n"
    << "static const float expected[] = {" << Items(expected) << "};\n\n";
  p << "int main() {\n  Check(xnn_initialize(nullptr), \"xnn_initialize\");\n"
    << "  xnn_subgraph_t sg = nullptr;\n"
    << "  Check(xnn_create_subgraph(" << rec.external_value_ids
    << "u, 0, &sg), \"xnn_create_subgraph\");\n  uint32_t id = 0;\n"
    << rec.calls.str() << "  (void)id;\n"
    << "  xnn_runtime_t rt = nullptr;\n"
    << "  Check(xnn_create_runtime_v2(sg, nullptr, 0, &rt), \"xnn_create_runtime_v2\");\n"
    << "  std::vector<xnn_external_value> ext;\n";
  for (const auto& [id, v] : rec.values) {
    if (v.flags & XNN_VALUE_FLAG_EXTERNAL_INPUT) {
      p << "  input" << id << ".resize(input" << id << ".size() + XNN_EXTRA_BYTES);\n"
        << "  ext.push_back({" << id << "u, input" << id << ".data()});\n";
    } else if (v.flags & XNN_VALUE_FLAG_EXTERNAL_OUTPUT) {
      p << "  std::vector<" << ElementType(v.datatype) << "> output" << id << "(" << Count(v.dims)
        << " + XNN_EXTRA_BYTES);\n  ext.push_back({" << id << "u, output" << id << ".data()});\n";
    }
  }
  p << "  Check(xnn_setup_runtime(rt, ext.size(), ext.data()), \"xnn_setup_runtime\");\n"
    << "  Check(xnn_invoke_runtime(rt), \"xnn_invoke_runtime\");\n";
  const std::string buffer = "output" + std::to_string(out_id);
  p << (wrong_number ? VerdictTail("XNNPACK", buffer, at, expected.size(), "NHWC", c)
                     : RanTail("XNNPACK", buffer, failing));
  return {{{kFile, p.str()}}, kBuild, ""};
}

}  // namespace fusefuzz::xnnpack
