#include "harness/repro.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <set>

#include "harness/structure.h"
#include "ir/error.h"
#include "ir/json_io.h"
#include "ir/printers.h"
#include "optimizer/pipeline.h"
#include "optimizer/registry.h"
#include "targets/builtin_targets.h"
#include "targets/rule_names.h"
#include "targets/target_spec.h"

namespace fusefuzz {
namespace {

using nlohmann::json;

json OptionsToJson(const OptimizeOptions& o) {
  return {{"pipeline", o.pipeline},
          {"disable", o.disable},
          {"only", o.only},
          {"inject", o.inject},
          {"bisect_limit", o.bisect_limit}};
}

json OracleToJson(const OracleOptions& o) {
  json j = {{"kind", std::string(OracleKindName(o.kind))}};
  if ((o.kind == OracleKind::kBound || o.kind == OracleKind::kSigma) && o.k > 0) j["k"] = o.k;
  if (o.kind == OracleKind::kAllclose) {
    j["rtol"] = o.rtol;
    j["atol"] = o.atol;
  }
  if (o.kind == OracleKind::kUlp) j["max_ulp"] = o.max_ulp;
  if (!o.output_tolerance.empty()) j["tolerances"] = o.output_tolerance;
  return j;
}

// Numbers in findings may be NaN/Inf; JSON has no such numbers, so they become strings.
json Num(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  return v;
}

// Strict reading helpers: every error names source and pointer.
struct Reader {
  std::string source;
  [[noreturn]] void Fail(const std::string& ptr, const std::string& what) const {
    throw InputError(source + ": " + (ptr.empty() ? "/" : ptr), what);
  }
  const json& Field(const json& obj, const std::string& ptr, const char* key, bool required,
                    json::value_t type) const {
    static const json kNull;
    auto it = obj.find(key);
    if (it == obj.end()) {
      if (required) Fail(ptr, std::string("missing \"") + key + "\"");
      return kNull;
    }
    bool ok = it->type() == type || (type == json::value_t::number_float && it->is_number()) ||
              (type == json::value_t::number_integer && it->is_number_integer());
    if (!ok) Fail(ptr + "/" + key, std::string("wrong type ") + it->type_name());
    return *it;
  }
  std::vector<std::string> Strings(const json& obj, const std::string& ptr, const char* key) const {
    std::vector<std::string> out;
    const json& a = Field(obj, ptr, key, false, json::value_t::array);
    for (size_t i = 0; i < a.size(); ++i) {
      if (!a[i].is_string()) Fail(ptr + "/" + key + "/" + std::to_string(i), "must be a string");
      out.push_back(a[i].get<std::string>());
    }
    return out;
  }
  // Only `allowed` keys: a misspelt option ("injects") would otherwise be ignored silently.
  void Keys(const json& obj, const std::string& ptr,
            std::initializer_list<std::string_view> allowed) const {
    for (auto it = obj.begin(); it != obj.end(); ++it) {
      if (std::find(allowed.begin(), allowed.end(), it.key()) != allowed.end()) continue;
      std::string list;
      for (auto a : allowed) list += (list.empty() ? "" : ", ") + std::string(a);
      Fail(ptr + "/" + it.key(), "unknown key (expected " + list + ")");
    }
  }
  // Rule and fault names: the same names the command line accepts, refused here with the
  // pointer of the entry instead of failing later as a target error.
  // `engine_rules`: the target is an engine whose own rules these are (mlir-opt passes, ORT
  // transformers): any name a target may report (bounded, no control character), not only
  // fusefuzz's catalogue, so that a finding of `--disable affine-loop-fusion` replays.
  std::vector<std::string> Names(const json& obj, const std::string& ptr, const char* key,
                                 bool faults_only, bool engine_rules = false) const {
    std::vector<std::string> names = Strings(obj, ptr, key);
    for (size_t i = 0; i < names.size(); ++i) {
      if (engine_rules) {
        if (names[i].empty() || names[i].size() > kMaxReportedName ||
            HasControlCharacter(names[i])) {
          Fail(ptr + "/" + key + "/" + std::to_string(i),
               "an engine rule name must be 1 to 256 bytes without control characters");
        }
        continue;
      }
      bool known = faults_only ? FindFault(names[i]) != nullptr
                               : FindRule(names[i]) != nullptr ||
                                     (std::string_view(key) != "pipeline" && FindFault(names[i]));
      if (!known) {
        Fail(ptr + "/" + key + "/" + std::to_string(i),
             std::string("unknown ") +
                 (faults_only                           ? "fault"
                  : std::string_view(key) == "pipeline" ? "rule"
                                                        : "rule or fault") +
                 " \"" + names[i] + "\"; known " + KnownNamesText());
      }
    }
    return names;
  }
  double Number(const json& v, const std::string& ptr) const {
    if (v.is_number()) return v.get<double>();
    if (v.is_string()) {
      auto s = v.get<std::string>();
      if (s == "nan") return NAN;
      if (s == "inf") return INFINITY;
      if (s == "-inf") return -INFINITY;
    }
    Fail(ptr, "must be a number or \"nan\"/\"inf\"/\"-inf\"");
  }
};

}  // namespace

std::string Repro::Command(const std::string& path) const {
  return "fusefuzz replay " + path + " --expect fail";
}

json ReproToJson(const Repro& r, const std::string& path_for_command) {
  json finding = {{"kind", FindingKindName(r.kind)},
                  {"verdict", r.verdict},
                  {"detail", r.detail},
                  {"blame",
                   {{"method", r.blame.method},
                    {"rule", r.blame.rule},
                    {"rewrite_index", r.blame.rewrite_index},
                    {"nodes", r.blame.nodes},
                    {"ablation", r.blame.ablation},
                    {"queries", r.blame.queries},
                    {"log", r.blame.log}}},
                  {"worst",
                   {{"output", r.worst.output},
                    {"index", r.worst.index},
                    {"reference", Num(r.worst.reference)},
                    {"candidate", Num(r.worst.candidate)},
                    {"bound", Num(r.worst.bound)},
                    {"ratio", Num(r.worst.ratio)}}}};
  if (!r.blame.set_up_by.empty()) finding["blame"]["set_up_by"] = r.blame.set_up_by;
  if (!r.target_log.empty()) finding["target_log"] = r.target_log;
  if (!r.failing_run.empty()) finding["failing_run"] = r.failing_run;
  if (!r.known_upstream.is_null()) finding["known_upstream"] = r.known_upstream;
  json prov = {{"fusefuzz_version", r.fusefuzz_version}};
  if (r.has_seed) prov["seed"] = r.seed;
  if (r.case_index >= 0) prov["case_index"] = r.case_index;
  if (r.has_campaign_seed) prov["campaign_seed"] = r.campaign_seed;
  // An exec: target's command may be relative to where the campaign ran: record that folder.
  std::string wd = r.working_dir;
  std::error_code ec;
  if (wd.empty() && IsExecSpec(r.target)) wd = std::filesystem::current_path(ec).string();
  if (!wd.empty()) prov["working_dir"] = wd;
  if (!r.generator.is_null()) prov["generator"] = r.generator;
  if (!r.minimization.is_null()) prov["minimization"] = r.minimization;
  json target = {
      {"spec", r.target}, {"options", OptionsToJson(r.opt)}, {"kernel_check", r.kernel_check}};
  // Only when the target said them, so that files of other targets read as before.
  if (!r.engine.empty()) target["engine"] = r.engine;
  if (!r.target_limits.empty()) target["limits"] = r.target_limits;
  return {{"format", "fusefuzz-repro"},
          {"version", 1},
          {"command", r.Command(path_for_command)},
          {"target", target},
          {"oracle", OracleToJson(r.oracle)},
          {"finding", finding},
          {"provenance", prov},
          {"graph", GraphToJson(r.graph)},
          {"inputs", json::parse(WriteTensors(r.inputs))}};
}

std::string WriteRepro(const Repro& r, const std::string& path_for_command) {
  return ReproToJson(r, path_for_command).dump(1) + "\n";
}

Repro ReadRepro(const json& j, const std::string& source, const Limits& limits) {
  Reader rd{source};
  if (!j.is_object()) rd.Fail("", "a reproducer must be a JSON object");
  const json& fmt = rd.Field(j, "", "format", true, json::value_t::string);
  if (fmt != "fusefuzz-repro") {
    rd.Fail("/format", "expected \"fusefuzz-repro\", got \"" + fmt.get<std::string>() + "\"");
  }
  const json& ver = rd.Field(j, "", "version", true, json::value_t::number_integer);
  if (ver != 1) rd.Fail("/version", "unsupported version " + ver.dump() + " (this reads 1)");
  for (auto it = j.begin(); it != j.end(); ++it) {
    static const std::set<std::string> kKeys = {"format",     "version", "command",
                                                "target",     "oracle",  "finding",
                                                "provenance", "graph",   "inputs"};
    if (!kKeys.count(it.key())) rd.Fail("/" + it.key(), "unknown key");
  }
  Repro r;
  r.graph =
      ReadGraph(rd.Field(j, "", "graph", true, json::value_t::object), source + " /graph", limits);
  r.inputs = ReadTensors(rd.Field(j, "", "inputs", true, json::value_t::object),
                         source + " /inputs", limits);
  // Every graph input has its tensor, and every tensor is a graph input.
  CheckTensorsForGraph(r.graph, r.inputs, source, "/inputs");
  const json& t = rd.Field(j, "", "target", false, json::value_t::object);
  if (!t.is_null()) {
    rd.Keys(t, "/target", {"spec", "options", "kernel_check", "engine", "limits"});
    const json& engine = rd.Field(t, "/target", "engine", false, json::value_t::string);
    if (!engine.is_null()) r.engine = engine.get<std::string>();
    const json& limits = rd.Field(t, "/target", "limits", false, json::value_t::object);
    for (auto it = limits.begin(); !limits.is_null() && it != limits.end(); ++it) {
      if (!it->is_string()) rd.Fail("/target/limits/" + it.key(), "must be a string");
      r.target_limits[it.key()] = it->get<std::string>();
    }
    const json& spec = rd.Field(t, "/target", "spec", false, json::value_t::string);
    // An engine target's own rule names are not fusefuzz's (Names, engine_rules).
    bool engine_rules = false;
    if (!spec.is_null()) {
      r.target = spec.get<std::string>();
      std::optional<TargetSpec> parsed;
      try {
        parsed = TargetSpec::TryParse(r.target);
        // A built-in engine this build lacks is named here, where the file names it. Not an
        // ORT release that is not installed: `replay --versions` runs such a file on others.
        if (parsed && parsed->kind() == TargetKind::kBuiltin && parsed->version().empty()) {
          BuiltinTargetCommand(*parsed);
        }
      } catch (const InputError& e) {
        rd.Fail("/target/spec", e.problem());
      }
      if (!parsed) {
        rd.Fail("/target/spec", "unknown target \"" + r.target +
                                    "\" (expected embedded, pytorch:MODE, onnxruntime:LEVEL or "
                                    "exec:CMD)");
      }
      engine_rules = parsed->kind() != TargetKind::kEmbedded;
    }
    const json& kc = rd.Field(t, "/target", "kernel_check", false, json::value_t::boolean);
    if (!kc.is_null()) r.kernel_check = kc.get<bool>();
    const json& o = rd.Field(t, "/target", "options", false, json::value_t::object);
    if (!o.is_null()) {
      const std::string p = "/target/options";
      rd.Keys(o, p, {"pipeline", "disable", "only", "inject", "bisect_limit"});
      r.opt.pipeline = rd.Names(o, p, "pipeline", false, engine_rules);
      r.opt.disable = rd.Names(o, p, "disable", false, engine_rules);
      r.opt.only = rd.Names(o, p, "only", false, engine_rules);
      r.opt.inject = rd.Names(o, p, "inject", true);
      const json& bl = rd.Field(o, p, "bisect_limit", false, json::value_t::number_integer);
      if (!bl.is_null()) {
        if (bl.is_number_unsigned() && bl.get<uint64_t>() > uint64_t{INT64_MAX}) {
          rd.Fail(p + "/bisect_limit", "out of range");
        }
        r.opt.bisect_limit = bl.get<int64_t>();
        if (r.opt.bisect_limit < -1) {
          rd.Fail(p + "/bisect_limit", "must be -1 (no limit) or >= 0, got " + bl.dump());
        }
      }
    }
  }
  const json& orc = rd.Field(j, "", "oracle", false, json::value_t::object);
  if (!orc.is_null()) {
    rd.Keys(orc, "/oracle", {"kind", "k", "rtol", "atol", "max_ulp", "tolerances"});
    const json& kind = rd.Field(orc, "/oracle", "kind", true, json::value_t::string);
    auto k = OracleKindFromName(kind.get<std::string>());
    if (!k) {
      rd.Fail("/oracle/kind",
              "unknown oracle \"" + kind.get<std::string>() + "\" (bound, allclose, ulp, sigma)");
    }
    r.oracle.kind = *k;
    // The command line's rules for the same parameters (OracleParamProblem).
    auto param = [&](const char* name) {
      std::string p = std::string("/oracle/") + name;
      const json& v = orc[name];
      if (!v.is_number()) rd.Fail(p, "must be a number, got " + std::string(v.type_name()));
      double d = v.get<double>();
      std::string problem = OracleParamProblem(name, d);
      if (!problem.empty()) rd.Fail(p, problem + ", got " + v.dump());
      return d;
    };
    if (orc.contains("k")) r.oracle.k = param("k");
    if (orc.contains("rtol")) r.oracle.rtol = param("rtol");
    if (orc.contains("atol")) r.oracle.atol = param("atol");
    if (orc.contains("max_ulp")) {
      if (!orc["max_ulp"].is_number_integer()) {
        rd.Fail("/oracle/max_ulp",
                OracleParamProblem("max_ulp", 0.5) + ", got " + orc["max_ulp"].dump());
      }
      r.oracle.max_ulp = static_cast<int64_t>(param("max_ulp"));
    }
    // Per-output tolerances (`check --tolerance`): output name -> a positive number.
    const json& tol = rd.Field(orc, "/oracle", "tolerances", false, json::value_t::object);
    if (!tol.is_null()) {
      for (const auto& [name, v] : tol.items()) {
        const std::string p = "/oracle/tolerances/" + name;
        if (!v.is_number() || !(v.get<double>() > 0) || !std::isfinite(v.get<double>())) {
          rd.Fail(p, "must be a positive number, got " + v.dump());
        }
        r.oracle.output_tolerance[name] = v.get<double>();
      }
    }
  }
  // A reproducer is a finding: without one, replay would have nothing to expect.
  const json& f = rd.Field(j, "", "finding", true, json::value_t::object);
  {
    const json& kind = rd.Field(f, "/finding", "kind", true, json::value_t::string);
    std::optional<FindingKind> k = ParseFindingKind(kind.get<std::string>());
    if (!k) {
      rd.Fail("/finding/kind",
              "unknown finding kind \"" + kind.get<std::string>() +
                  "\" (fusion, unquantized, kernel, crash, timeout, target_error)");
    }
    r.kind = *k;
    const json& v = rd.Field(f, "/finding", "verdict", false, json::value_t::string);
    if (!v.is_null()) r.verdict = v.get<std::string>();
    const json& d = rd.Field(f, "/finding", "detail", false, json::value_t::string);
    if (!d.is_null()) r.detail = d.get<std::string>();
    const json& tl = rd.Field(f, "/finding", "target_log", false, json::value_t::string);
    if (!tl.is_null()) r.target_log = tl.get<std::string>();
    const json& ku = rd.Field(f, "/finding", "known_upstream", false, json::value_t::object);
    if (!ku.is_null()) {
      for (const char* key : {"title", "link", "doc"}) {
        const json& v = rd.Field(ku, "/finding/known_upstream", key, true, json::value_t::string);
        r.known_upstream[key] = v;
      }
    }
    const json& fr = rd.Field(f, "/finding", "failing_run", false, json::value_t::string);
    if (!fr.is_null()) {
      r.failing_run = fr.get<std::string>();
      if (r.failing_run != "optimized" && r.failing_run != "unoptimized") {
        rd.Fail("/finding/failing_run",
                "must be \"optimized\" or \"unoptimized\", not " + fr.dump());
      }
    }
    const json& b = rd.Field(f, "/finding", "blame", false, json::value_t::object);
    if (!b.is_null()) {
      const std::string p = "/finding/blame";
      const json& m = rd.Field(b, p, "method", false, json::value_t::string);
      if (!m.is_null()) r.blame.method = m.get<std::string>();
      const json& rule = rd.Field(b, p, "rule", false, json::value_t::string);
      if (!rule.is_null()) r.blame.rule = rule.get<std::string>();
      const json& idx = rd.Field(b, p, "rewrite_index", false, json::value_t::number_integer);
      if (!idx.is_null()) r.blame.rewrite_index = idx.get<int>();
      r.blame.nodes = rd.Strings(b, p, "nodes");
      const json& ab = rd.Field(b, p, "ablation", false, json::value_t::string);
      if (!ab.is_null()) r.blame.ablation = ab.get<std::string>();
      r.blame.log = rd.Strings(b, p, "log");
      r.blame.set_up_by = rd.Strings(b, p, "set_up_by");
    }
    const json& w = rd.Field(f, "/finding", "worst", false, json::value_t::object);
    if (!w.is_null()) {
      const std::string p = "/finding/worst";
      const json& out = rd.Field(w, p, "output", false, json::value_t::string);
      if (!out.is_null()) r.worst.output = out.get<std::string>();
      const json& idx = rd.Field(w, p, "index", false, json::value_t::number_integer);
      if (!idx.is_null()) r.worst.index = idx.get<int64_t>();
      if (w.contains("reference")) r.worst.reference = rd.Number(w["reference"], p + "/reference");
      if (w.contains("candidate")) r.worst.candidate = rd.Number(w["candidate"], p + "/candidate");
      if (w.contains("bound")) r.worst.bound = rd.Number(w["bound"], p + "/bound");
      if (w.contains("ratio")) r.worst.ratio = rd.Number(w["ratio"], p + "/ratio");
    }
  }
  const json& prov = rd.Field(j, "", "provenance", false, json::value_t::object);
  if (!prov.is_null()) {
    const json& v = rd.Field(prov, "/provenance", "fusefuzz_version", false, json::value_t::string);
    if (!v.is_null()) r.fusefuzz_version = v.get<std::string>();
    const json& s = rd.Field(prov, "/provenance", "seed", false, json::value_t::number_unsigned);
    if (!s.is_null()) {
      r.has_seed = true;
      r.seed = s.get<uint64_t>();
    }
    const json& ci =
        rd.Field(prov, "/provenance", "case_index", false, json::value_t::number_integer);
    if (!ci.is_null()) r.case_index = ci.get<int64_t>();
    const json& cs =
        rd.Field(prov, "/provenance", "campaign_seed", false, json::value_t::number_unsigned);
    if (!cs.is_null()) {
      r.has_campaign_seed = true;
      r.campaign_seed = cs.get<uint64_t>();
    }
    const json& wd = rd.Field(prov, "/provenance", "working_dir", false, json::value_t::string);
    if (!wd.is_null()) r.working_dir = wd.get<std::string>();
    if (prov.contains("generator")) r.generator = prov["generator"];
    if (prov.contains("minimization")) r.minimization = prov["minimization"];
  }
  return r;
}

Repro ReadReproFile(const std::string& path, const Limits& limits) {
  return ReadRepro(ReadJsonFile(path, limits), path, limits);
}

std::string ReproTargetSpec(const Repro& r, const std::string& source,
                            const std::string& cli_target, bool trust_target) {
  if (!cli_target.empty()) return cli_target;
  const std::optional<TargetSpec> spec = TargetSpec::Of(r.target);
  if (!spec || !spec->exec() || trust_target) return r.target;
  // The command is a shell command line written by whoever wrote the file.
  std::string cmd = spec->command();
  if (cmd.size() > 200) cmd = cmd.substr(0, 200) + "...";
  throw InputError(source + ": /target/spec",
                   "this reproducer's target runs the shell command '" + cmd +
                       "', and commands read from files are not run unless you say so: give "
                       "--target on the command line (e.g. --target embedded, or the exec: "
                       "command you mean), or --trust-target to run the recorded command");
}

namespace {

uint32_t Fnv1a(const std::string& s) {
  uint32_t h = 2166136261u;
  for (unsigned char c : s) h = (h ^ c) * 16777619u;
  return h;
}

}  // namespace

namespace {

// "<kind>-<rule>-<pattern>-<hash of key>", only [A-Za-z0-9._-], no leading dot, at most 89
// characters: a folder name. The rule name comes from the target and node names from a file, so
// anything else becomes '_'; the hash over the real names keeps distinct findings apart.
std::string SignatureSlug(const std::string& readable, const std::string& key) {
  char hex[9];
  std::snprintf(hex, sizeof hex, "%08x", Fnv1a(key));
  std::string slug;
  for (char c : readable) {
    bool safe = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                c == '.' || c == '_' || c == '-';
    slug += safe ? c : '_';
  }
  while (!slug.empty() && slug.front() == '.') slug.front() = '_';
  if (slug.size() > 80) slug.resize(80);
  return slug + "-" + hex;
}

bool IsErrorKind(FindingKind k) {
  switch (k) {
    case FindingKind::kTargetError:
    case FindingKind::kCrash:
    case FindingKind::kTimeout:
      return true;
    case FindingKind::kNone:
    case FindingKind::kFusion:
    case FindingKind::kKernel:
    case FindingKind::kUnquantized:
      return false;
  }
  return false;
}

}  // namespace

namespace {

// The readable op chain of a folder name, with each DequantizeLinear... -> X [-> activation] ->
// QuantizeLinear run that forms an ONNX QLinear op named as that op ("QLinearConv",
// "QLinearAdd.Relu"), not as its QDQ spelling (issue 45, item 5). Names only: the signature's key
// keeps the structure.
std::string FusedOpChain(const std::vector<std::string>& ops) {
  static const std::set<std::string> kQLinear = {"Conv", "Add",         "MatMul",
                                                 "Mul",  "AveragePool", "GlobalAveragePool"};
  static const std::set<std::string> kActivation = {"Relu", "Clip", "Relu6", "LeakyRelu"};
  std::string out;
  auto emit = [&](const std::string& name) { out += (out.empty() ? "" : ".") + name; };
  for (size_t i = 0; i < ops.size();) {
    size_t j = i;
    while (j < ops.size() && ops[j] == "DequantizeLinear") ++j;
    if (j > i && j < ops.size() && kQLinear.count(ops[j])) {
      size_t k = j + 1;
      while (k < ops.size() && kActivation.count(ops[k])) ++k;
      if (k < ops.size() && ops[k] == "QuantizeLinear") {
        emit("QLinear" + ops[j]);
        for (size_t a = j + 1; a < k; ++a) emit(ops[a]);
        i = k + 1;
        continue;
      }
    }
    emit(ops[i]);
    ++i;
  }
  return out;
}

}  // namespace

std::string Signature(const Repro& r) {
  // Op pattern of the blamed nodes, else of the whole graph.
  std::string pattern;
  if (IsErrorKind(r.kind)) {
    // The target's own words say which failure it is. Graphs that fail the same way are one
    // bucket, whatever their shapes (a refused option failed every graph alike).
    char buf[9];
    std::snprintf(buf, sizeof buf, "%08x", Fnv1a(ErrorClass(r.detail)));
    pattern = std::string("error") + buf;
  } else if (!r.blame.nodes.empty()) {
    for (const auto& n : r.blame.nodes) {
      const Node* node = r.graph.FindNode(n);
      pattern += (pattern.empty() ? "" : ".") + (node ? std::string(OpName(node->op)) : n);
    }
  } else {
    // The (minimized) graph's canonical structure: ops, attribute classes, wiring.
    char buf[9];
    std::snprintf(buf, sizeof buf, "%08x",
                  Fnv1a(CanonicalStructure(WithoutQuantizedBoundary(QLinearAsQdq(r.graph)))));
    pattern = std::string("graph") + buf;
  }
  std::string readable = pattern;
  if (r.blame.nodes.empty() && !IsErrorKind(r.kind)) {
    // The folder is named by the minimized graph's op chain (Conv.BatchNorm), not by a hash: the
    // hash of the structure stays in the key, so two structures with one chain stay apart.
    std::vector<std::string> ops;
    for (const Node& n : EpiloguesAsNodes(WithoutQuantizedBoundary(QLinearAsQdq(r.graph))).nodes) {
      const bool plain_conv = n.op == Op::FusedConv && n.epilogue.empty();
      ops.push_back(std::string(OpName(plain_conv ? Op::Conv : n.op)));
    }
    readable = FusedOpChain(ops);
    if (readable.empty()) readable = pattern;
  }
  std::string rule = r.blame.rule.empty() ? "unblamed" : r.blame.rule;
  // An optimized-run-only error is a fusion-side failure: kept apart from the same error of an
  // unoptimized run.
  std::string kind(FindingKindName(r.kind));
  if (IsErrorKind(r.kind) && r.failing_run == "optimized") kind += "@optimized";
  if (IsErrorKind(r.kind)) {
    // The target's own words name the failure; the rewrite blamed for it is whichever of
    // several that all make it (ONNX Runtime's duplicate node name came blamed on four
    // transformers and on none): one folder per error class, the blame kept in repro.json.
    return SignatureSlug(std::string(FindingKindName(r.kind)) + "-" + readable,
                         r.target + "|" + kind + "|" + pattern);
  }
  return SignatureSlug(std::string(FindingKindName(r.kind)) + "-" + rule + "-" + readable,
                       r.target + "|" + kind + "|" + rule + "|" + pattern);
}

std::string BucketKey(const Repro& r, const std::vector<std::string>& fired_rules) {
  if (!r.blame.nodes.empty() || IsErrorKind(r.kind)) return Signature(r);
  std::string op = "none";
  for (const Node& n : r.graph.nodes) {
    if (n.output == r.worst.output) op = std::string(OpName(n.op));
  }
  std::vector<std::string> rules = fired_rules;
  std::sort(rules.begin(), rules.end());
  rules.erase(std::unique(rules.begin(), rules.end()), rules.end());
  std::string key = r.target + "|" + std::string(FindingKindName(r.kind)) + "|" + op;
  for (const auto& rule : rules) key += "|" + rule;
  return SignatureSlug("bucket-" + std::string(FindingKindName(r.kind)) + "-" + op, key);
}

std::string OpChain(const Graph& graph) {
  std::string out;
  for (const Node& n : EpiloguesAsNodes(graph).nodes) {
    const bool plain_conv = n.op == Op::FusedConv && n.epilogue.empty();
    out += (out.empty() ? "" : "\u2192") + std::string(OpName(plain_conv ? Op::Conv : n.op));
  }
  return out;
}

CheckOptions CheckOptionsOf(const Repro& r) {
  CheckOptions c;
  c.oracle = r.oracle;
  c.opt = r.opt;
  c.kernel_check = r.kernel_check;
  return c;
}

}  // namespace fusefuzz
