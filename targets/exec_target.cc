// `exec:CMD`: an external program speaking line-delimited JSON (docs/target-protocol.md).
// The program is started once; after a crash, a timeout or garbage on its stdout it is killed
// and started again (hello re-read) before the next case, so one bad case never poisons the rest.
#include <signal.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string_view>
#include <utility>

#include "ir/error.h"
#include "ir/json_io.h"
#include "ir/spelling.h"
#include "ir/verifier.h"
#include "onnx/export.h"
#include "targets/hello_declarations.h"
#include "targets/reproducer.h"
#include "targets/rule_names.h"
#include "targets/subprocess.h"
#include "targets/target.h"

namespace fusefuzz {
namespace {

using nlohmann::json;

constexpr size_t kMaxHelloBytes = size_t{1} << 20;
constexpr size_t kQuoteBytes = 200;

// The first 200 bytes of what the target wrote, printable.
std::string Excerpt(std::string_view s) {
  std::string out = "'";
  for (size_t i = 0; i < s.size() && i < kQuoteBytes; ++i) {
    auto c = static_cast<unsigned char>(s[i]);
    if (c >= 0x20 && c < 0x7f && c != '\'') {
      out += static_cast<char>(c);
    } else {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    }
  }
  out += s.size() > kQuoteBytes ? "'..." : "'";
  return out;
}

std::string Seconds(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g s", s);
  return buf;
}

}  // namespace

// Validates a hello line; returns what is wrong, or "" with *caps filled.
std::string ParseHello(const std::string& line, TargetCaps* caps) {
  json j = json::parse(line, nullptr, false);
  if (j.is_discarded() || !j.is_object())
    return "hello line is not a JSON object: " + Excerpt(line);
  try {
    // Again with fusefuzz's own rules: a repeated key ("name" twice) is refused, not last-wins.
    ParseJson(line, "hello");
  } catch (const InputError& e) {
    return std::string(e.what()) + ", in " + Excerpt(line);
  }
  auto str = [&](const char* key) -> const json* {
    auto it = j.find(key);
    return it != j.end() && it->is_string() ? &*it : nullptr;
  };
  const json* protocol = str("protocol");
  if (!protocol || *protocol != "fusefuzz-target") {
    return "hello: \"protocol\" must be \"fusefuzz-target\", in " + Excerpt(line);
  }
  auto version = j.find("version");
  if (version == j.end() || !version->is_number_integer()) {
    return "hello: \"version\" must be an integer, in " + Excerpt(line);
  }
  if (*version != 1) {
    return "hello: unsupported protocol version " + version->dump() +
           " (this fusefuzz speaks version 1)";
  }
  const json* name = str("name");
  if (!name || name->get_ref<const std::string&>().empty()) {
    return "hello: \"name\" must be a non-empty string";
  }
  caps->name = name->get<std::string>();
  caps->engine.clear();
  if (const json* engine = str("engine")) {
    // Shown by `fusefuzz list targets` and in reports: printable ASCII, bounded.
    for (char c : engine->get<std::string>()) {
      if (caps->engine.size() < 100) caps->engine += (c >= 0x20 && c < 0x7f) ? c : '?';
    }
  }
  caps->precision = Precision::kFloat32;
  if (auto p = j.find("precision"); p != j.end()) {
    std::optional<Precision> prec;
    if (p->is_string()) prec = PrecisionFromName(p->get<std::string>());
    if (!prec) {
      return "hello: \"precision\" must be \"float32\", \"float16\" or \"bfloat16\", got " +
             Excerpt(p->dump());
    }
    caps->precision = *prec;
  }
  caps->quantize_rounding = QuantizeRounding::kHalfEven;
  if (auto r = j.find("quantize_rounding"); r != j.end()) {
    std::optional<QuantizeRounding> rule;
    if (r->is_string()) rule = QuantizeRoundingFromName(r->get<std::string>());
    if (!rule) {
      return "hello: \"quantize_rounding\" must be \"half_even\", \"half_away\" or "
             "\"reciprocal_multiply\", got " +
             Excerpt(r->dump());
    }
    caps->quantize_rounding = *rule;
  }
  auto ops = j.find("ops");
  if (ops == j.end() || !ops->is_array()) return "hello: \"ops\" must be an array of op names";
  caps->ops.clear();
  for (size_t i = 0; i < ops->size(); ++i) {
    const json& o = (*ops)[i];
    std::optional<Op> op =
        o.is_string() ? OpFromName(o.get_ref<const std::string&>()) : std::nullopt;
    if (!op) {
      return "hello: /ops/" + std::to_string(i) + ": unknown op " + o.dump() +
             " (see `fusefuzz list ops`)";
    }
    caps->ops.insert(*op);
  }
  // Optional "spellings": the ways it writes nodes (ir/spellings.def; docs/target-protocol.md).
  caps->spellings.clear();
  if (auto sp = j.find("spellings"); sp != j.end()) {
    if (!sp->is_array()) return "hello: \"spellings\" must be an array of spelling names";
    for (size_t i = 0; i < sp->size(); ++i) {
      const json& s = (*sp)[i];
      if (!s.is_string() || !SpellingFromName(s.get_ref<const std::string&>())) {
        return "hello: /spellings/" + std::to_string(i) + ": unknown spelling " +
               Excerpt(s.dump()) + " (see `fusefuzz list spellings`)";
      }
      caps->spellings.insert(s.get<std::string>());
    }
  }
  caps->rules.clear();
  if (auto rules = j.find("rules"); rules != j.end()) {
    if (!rules->is_array()) return "hello: \"rules\" must be an array of rule names";
    for (size_t i = 0; i < rules->size(); ++i) {
      const json& r = (*rules)[i];
      if (!r.is_string() || r.get_ref<const std::string&>().empty() ||
          r.get_ref<const std::string&>().size() > 200) {
        return "hello: /rules/" + std::to_string(i) +
               ": must be a non-empty string of at most 200 bytes";
      }
      caps->rules.push_back(r.get<std::string>());
    }
    if (caps->rules.size() > 10000) return "hello: \"rules\" lists more than 10000 names";
  }
  if (std::string e = ParseHelloDeclarations(j, caps); !e.empty()) return e;
  caps->limits.clear();
  if (auto lim = j.find("limits"); lim != j.end()) {
    if (!lim->is_object() || lim->size() > 100) {
      return "hello: \"limits\" must be an object of at most 100 names, each with its reason";
    }
    for (auto it = lim->begin(); it != lim->end(); ++it) {
      if (!it->is_string() || it.key().empty() || it.key().size() > 100 ||
          it->get_ref<const std::string&>().size() > 2000) {
        return "hello: /limits/" + it.key() +
               ": must be a string of at most 2000 bytes under a name of 1 to 100 bytes";
      }
      caps->limits[it.key()] = it->get<std::string>();
    }
  }
  caps->bisect_limit = caps->disable = caps->inject = caps->reports_rewrites = caps->onnx = false;
  caps->onnx_only = false;
  caps->bench = false;
  caps->repro = false;
  caps->batch_cases = 0;
  if (auto c = j.find("capabilities"); c != j.end()) {
    if (!c->is_array()) return "hello: \"capabilities\" must be an array of strings";
    for (const json& cap : *c) {
      if (!cap.is_string()) return "hello: \"capabilities\" must be an array of strings";
      // Unknown capabilities are ignored: later protocol revisions may add some.
      if (cap == "bisect_limit") caps->bisect_limit = true;
      if (cap == "disable") caps->disable = true;
      if (cap == "inject") caps->inject = true;
      if (cap == "rewrites") caps->reports_rewrites = true;
      if (cap == "onnx") caps->onnx = true;
      // The graph only as ONNX: a whole model's weights are not sent twice (docs/check.md).
      if (cap == "onnx_only") caps->onnx = caps->onnx_only = true;
      if (cap == "bench") caps->bench = true;
      if (cap == "repro") caps->repro = true;
      if (cap == "batch") caps->batch_cases = kDefaultBatchCases;
    }
  }
  // Batches (docs/target-protocol.md): how many cases per call it suggests, and the most nodes
  // a joined graph may have. Without the capability the object is ignored, as unknown keys are.
  caps->batch_max_nodes = 0;
  if (auto b = j.find("batch"); b != j.end() && caps->batch_cases > 0) {
    if (!b->is_object()) return "hello: \"batch\" must be an object";
    auto whole = [&](const char* key, int most, int* out) -> std::string {
      auto v = b->find(key);
      if (v == b->end()) return "";
      if (!v->is_number_integer() || *v < 1 || *v > most) {
        return "hello: /batch/" + std::string(key) + " must be an integer from 1 to " +
               std::to_string(most) + ", got " + v->dump();
      }
      *out = v->get<int>();
      return "";
    };
    if (std::string why = whole("cases", kMaxBatchCases, &caps->batch_cases); !why.empty())
      return why;
    if (std::string why = whole("max_nodes", 1 << 20, &caps->batch_max_nodes); !why.empty())
      return why;
  }
  return "";
}

namespace {

json StringArray(const std::vector<std::string>& v) { return json(v); }

std::string RequestLine(int64_t id, const Graph& g, const TensorMap& inputs, const RunRequest& req,
                        const OnnxModel* onnx, bool onnx_only) {
  json in = json::object();
  for (const auto& [name, t] : inputs) in[name] = TensorToJson(t);
  json options = {{"optimize", req.optimize},
                  {"pipeline", StringArray(req.opt.pipeline)},
                  {"disable", StringArray(req.opt.disable)},
                  {"only", StringArray(req.opt.only)},
                  {"inject", StringArray(req.opt.inject)},
                  {"bisect_limit", req.opt.bisect_limit},
                  {"threads", req.threads}};
  json j = {{"id", id}, {"inputs", std::move(in)}, {"options", std::move(options)}};
  if (!onnx_only) j["graph"] = GraphToJson(g);
  if (onnx) {
    j["onnx"] = {{"model", Base64Bytes(onnx->bytes)},
                 {"opset", onnx->opset},
                 {"inputs", onnx->input_names},
                 {"outputs", onnx->output_names}};
  }
  if (req.bench_runs > 0) j["bench"] = {{"warmup", req.bench_warmup}, {"runs", req.bench_runs}};
  return j.dump(-1, ' ', false, json::error_handler_t::replace) + "\n";
}

// Timings of a response to a timing request of `runs` runs; returns what is wrong, or "".
// A target's own clock is all fusefuzz has, so anything implausible is refused, not tabulated.
constexpr double kMaxRunNs = 3600e9;
std::string ParseTimings(const json& j, int runs, BenchTimings* out) {
  if (!j.is_object()) return "/timings: must be an object (the request asked for timings)";
  for (const auto& [key, v] : j.items()) {
    if (key != "runs" && key != "median_ns" && key != "min_ns") {
      return "/timings: unknown key " + json(key).dump() + " (runs, median_ns, min_ns)";
    }
  }
  auto n = j.find("runs");
  if (n == j.end() || !n->is_number_integer() || *n != runs) {
    return "/timings/runs: must be " + std::to_string(runs) +
           ", the number of runs asked for, got " +
           (n == j.end() ? std::string("nothing") : n->dump());
  }
  out->runs = runs;
  for (auto [key, field] : {std::pair{"median_ns", &out->median_ns}, {"min_ns", &out->min_ns}}) {
    auto v = j.find(key);
    // NaN and infinities cannot be JSON numbers; strings and nulls are refused here.
    if (v == j.end() || !v->is_number() || !(v->get<double>() > 0) ||
        !std::isfinite(v->get<double>())) {
      return std::string("/timings/") + key + ": must be a finite number of nanoseconds > 0, got " +
             (v == j.end() ? std::string("nothing") : v->dump());
    }
    // One run of a benchmark case longer than an hour is not a measurement (the request would
    // have timed out long before); 1e308 ns would make every ratio of the table meaningless.
    if (v->get<double>() > kMaxRunNs) {
      return std::string("/timings/") + key + ": " + v->dump() +
             " ns is longer than an hour per run, not a plausible timing";
    }
    *field = v->get<double>();
  }
  if (out->min_ns > out->median_ns) {
    return "/timings: min_ns " + j["min_ns"].dump() + " is above median_ns " +
           j["median_ns"].dump();
  }
  return "";
}

// The node names of a response key: strings, each a node of the graph (or what is wrong).
std::string NodeName(const json& j, const Graph& g, const std::string& at) {
  if (!j.is_string()) return at + ": must be a node name";
  const std::string& name = j.get_ref<const std::string&>();
  for (const Node& n : g.nodes) {
    if (n.name == name) return "";
  }
  return at + ": '" + name.substr(0, 64) + "' is no node of the graph";
}

// "node_forms" {node: form} and "backend_quantizes" [node] of a quantized target's response;
// returns what is wrong, or "".
std::string ParseNodeForms(const json& j, const Graph& g, TargetResult* r) {
  if (auto f = j.find("node_forms"); f != j.end()) {
    if (!f->is_object()) return "/node_forms: must be an object";
    for (auto it = f->begin(); it != f->end(); ++it) {
      const std::string at = "/node_forms/" + it.key().substr(0, 64);
      if (std::string why = NodeName(json(it.key()), g, "/node_forms"); !why.empty()) return why;
      std::optional<NodeForm> form;
      if (it->is_string()) form = ParseNodeForm(it->get_ref<const std::string&>());
      if (!form) return at + ": must be quantized, reference, float or simulated";
      r->node_forms[it.key()] = *form;
    }
  }
  if (auto b = j.find("backend_quantizes"); b != j.end()) {
    if (!b->is_array()) return "/backend_quantizes: must be an array of node names";
    for (size_t i = 0; i < b->size(); ++i) {
      const std::string at = "/backend_quantizes/" + std::to_string(i);
      if (std::string why = NodeName((*b)[i], g, at); !why.empty()) return why;
      r->backend_quantizes.push_back((*b)[i].get<std::string>());
    }
  }
  return "";
}

// A name a target reports (a rule, a node): what is wrong with it, or "" (the limits of
// targets/rule_names.h, bounded as the hello's rules are).
std::string BadName(const std::string& name, const std::string& at) {
  if (name.empty()) return at + ": must be a non-empty string";
  if (name.size() > kMaxReportedName) {
    return at + ": a name of " + std::to_string(name.size()) + " bytes, longer than " +
           std::to_string(kMaxReportedName) + " (starting " + Excerpt(name.substr(0, 40)) + ")";
  }
  if (HasControlCharacter(name)) return at + ": " + Excerpt(name) + " holds a control character";
  return "";
}

// Rewrites of a response; returns what is wrong, or "". A node a rewrite names need not be in
// the graph sent (an engine's own node, made by an earlier rewrite: the embedded optimizer's
// fused nodes are named so too); the signature then uses the name itself.
constexpr size_t kMaxRewrites = 100000;
std::string ParseRewrites(const json& j, const Graph& g, std::vector<Rewrite>* out) {
  if (!j.is_array()) return "/rewrites: must be an array";
  if (j.size() > kMaxRewrites) {
    return "/rewrites: " + std::to_string(j.size()) + " rewrites, more than " +
           std::to_string(kMaxRewrites);
  }
  for (size_t i = 0; i < j.size(); ++i) {
    const json& r = j[i];
    std::string at = "/rewrites/" + std::to_string(i);
    if (!r.is_object()) return at + ": must be an object";
    Rewrite rw;
    auto index = r.find("index");
    if (index == r.end() || !index->is_number_integer() || *index < 1 || *index > (1 << 30)) {
      return at + "/index: must be an integer >= 1";
    }
    rw.index = index->get<int>();
    auto rule = r.find("rule");
    if (rule == r.end() || !rule->is_string()) return at + "/rule: must be a non-empty string";
    if (std::string why = BadName(rule->get<std::string>(), at + "/rule"); !why.empty()) return why;
    rw.rule = rule->get<std::string>();
    if (auto nodes = r.find("nodes"); nodes != r.end()) {
      if (!nodes->is_array()) return at + "/nodes: must be an array of node names";
      if (nodes->size() > g.nodes.size() + 64) {  // a pattern matches nodes of the graph
        return at + "/nodes: " + std::to_string(nodes->size()) +
               " names, more than the graph has nodes";
      }
      for (size_t k = 0; k < nodes->size(); ++k) {
        const json& n = (*nodes)[k];
        if (!n.is_string()) return at + "/nodes: must be an array of node names";
        const std::string& name = n.get_ref<const std::string&>();
        if (std::string why = BadName(name, at + "/nodes/" + std::to_string(k)); !why.empty())
          return why;
        rw.nodes.push_back(name);
      }
    }
    out->push_back(std::move(rw));
  }
  return "";
}

class ExecTarget : public Target {
 public:
  ExecTarget(std::string command, const TargetSettings& settings, size_t max_line)
      : command_(std::move(command)), settings_(settings), max_line_(max_line) {
    std::string error = Start(&caps_);
    if (!error.empty()) throw InputError("target " + spec(), error);
  }

  const TargetCaps& caps() const override { return caps_; }
  std::string spec() const override { return "exec:" + command_; }

  TargetResult Run(const Graph& g, const TensorMap& inputs, const RunRequest& req) override {
    TargetResult r;
    std::string why = Refusal(g, req);
    if (why.empty()) why = BenchRefusal(req);
    if (!why.empty()) {
      r.status = RunStatus::kUnsupported;
      r.message = why;
      return r;
    }
    VerifyGraph(g);  // fusefuzz's own graph: InputError is ours to throw
    // The same graph as an ONNX model, so that every ONNX-speaking engine gets one exact
    // translation (docs/onnx.md); value names are kept, so inputs and outputs match by name. A
    // graph the export cannot express is not this target's to judge: UNSUPPORTED, with the
    // reason, and a batch goes on with its next case.
    std::optional<OnnxModel> onnx;
    if (caps_.onnx) {
      try {
        onnx = ExportOnnx(g);
      } catch (const InputError& e) {
        return Status(RunStatus::kUnsupported,
                      std::string("the ONNX export cannot express this graph: ") + e.what());
      }
    }
    if (!proc_) {
      TargetCaps again;
      if (std::string error = Start(&again); !error.empty()) {
        r.status = RunStatus::kCrash;
        r.message = "could not restart the target: " + error;
        r.log = last_log_;
        return r;
      }
    }
    const int64_t id = next_id_++;
    // A batch of K cases (harness/batch.h) has K cases' time.
    Deadline deadline = Now() + Timeout() * std::max(1, req.cases);
    Subprocess::Io io = proc_->Write(
        RequestLine(id, g, inputs, req, onnx ? &*onnx : nullptr, caps_.onnx_only), deadline);
    std::string line;
    if (io == Subprocess::Io::kOk) io = proc_->ReadLine(&line, deadline, max_line_);
    switch (io) {
      case Subprocess::Io::kOk:
        break;
      case Subprocess::Io::kEof: {
        std::string how = proc_->WaitForExit(1.0);
        return Fail(RunStatus::kCrash,
                    "target " + how + " while running the case" +
                        (line.empty() ? "" : " (partial line " + Excerpt(line) + ")"));
      }
      case Subprocess::Io::kTimeout:
        proc_->Kill();
        return Fail(RunStatus::kTimeout,
                    "target gave no answer within " +
                        Seconds(settings_.timeout_seconds * std::max(1, req.cases)) +
                        "; killed its process group");
      case Subprocess::Io::kTooLong:
        proc_->Kill();
        return Fail(RunStatus::kError, "target wrote garbage: a line longer than " +
                                           std::to_string(max_line_) + " bytes starting " +
                                           Excerpt(line));
    }
    json j = json::parse(line, nullptr, false);
    if (j.is_discarded() || !j.is_object()) {
      proc_->Kill();
      return Fail(RunStatus::kError, "target wrote garbage: not a JSON object: " + Excerpt(line));
    }
    auto rid = j.find("id");
    if (rid == j.end() || !rid->is_number_integer() || *rid != id) {
      proc_->Kill();
      return Fail(RunStatus::kError, "target wrote garbage: expected a response with id " +
                                         std::to_string(id) + ", got " + Excerpt(line));
    }
    // From here on the stream is in step: a bad answer is an error of this case only.
    int kinds = static_cast<int>(j.contains("outputs")) + static_cast<int>(j.contains("error")) +
                static_cast<int>(j.contains("unsupported"));
    if (kinds != 1) {
      return Bad(
          "target response must have exactly one of \"outputs\", \"unsupported\", \"error\": " +
          Excerpt(line));
    }
    auto text = [](const json& v) { return v.is_string() ? v.get<std::string>() : v.dump(); };
    if (j.contains("error")) {
      TargetResult e = Status(RunStatus::kError, "target error: " + text(j["error"]));
      // Rewrites applied before the failure (optional): blame can then name the rule of an
      // optimized-run-only error. Malformed ones are dropped; the error stands as said.
      if (auto rw = j.find("rewrites"); rw != j.end()) {
        std::vector<Rewrite> applied;
        if (ParseRewrites(*rw, g, &applied).empty()) e.rewrites = std::move(applied);
      }
      return e;
    }
    if (j.contains("unsupported")) {
      return Status(RunStatus::kUnsupported, "target: unsupported: " + text(j["unsupported"]));
    }
    try {
      r.outputs = ReadTensors(j["outputs"], "target response /outputs");
    } catch (const InputError& e) {
      return Bad(std::string("target wrote a bad response: ") + e.what());
    }
    if (std::string why = CheckOutputs(g, r.outputs); !why.empty()) {
      return Bad("target wrote a bad response: " + why);
    }
    if (auto rw = j.find("rewrites"); rw != j.end()) {
      if (std::string why = ParseRewrites(*rw, g, &r.rewrites); !why.empty()) {
        return Bad("target wrote a bad response: " + why);
      }
    }
    if (std::string why = ParseNodeForms(j, g, &r); !why.empty()) {
      return Bad("target wrote a bad response: " + why);
    }
    if (req.bench_runs > 0) {
      BenchTimings t;
      auto tj = j.find("timings");
      std::string why = tj == j.end() ? "/timings: missing (the request asked for timings)"
                                      : ParseTimings(*tj, req.bench_runs, &t);
      if (!why.empty()) return Bad("target wrote a bad response: " + why);
      r.timings = t;
    }
    return r;
  }

  // Request "repro" (docs/target-protocol.md, "Reproducers"): the same line protocol as Run; a
  // broken stream kills the process (the next Run restarts it), as in Run.
  Reproducer AskReproducer(const Graph& g, const TensorMap& inputs, const RunRequest& req,
                           const ReproducerCase& c) override {
    if (!caps_.repro) return {{}, "", "target '" + caps_.name + "' lacks the capability repro"};
    if (!proc_ || !Refusal(g, req).empty()) return {{}, "", "target not asked (not running)"};
    std::optional<OnnxModel> onnx;
    if (caps_.onnx) {
      try {
        onnx = ExportOnnx(g);
      } catch (const InputError& e) {
        return {{}, "", std::string("the ONNX export cannot express this graph: ") + e.what()};
      }
    }
    const int64_t id = next_id_++;
    json j = json::parse(RequestLine(id, g, inputs, req, onnx ? &*onnx : nullptr, caps_.onnx_only));
    AddReproducerCase(c, &j);
    const Deadline deadline = Now() + Timeout();
    std::string line;
    Subprocess::Io io =
        proc_->Write(j.dump(-1, ' ', false, json::error_handler_t::replace) + "\n", deadline);
    if (io == Subprocess::Io::kOk) io = proc_->ReadLine(&line, deadline, max_line_);
    json answer = io == Subprocess::Io::kOk ? json::parse(line, nullptr, false) : json();
    if (!answer.is_object() || answer.value("id", json()) != id) {
      proc_->Kill();
      proc_.reset();
      return {{}, "", "target gave no reproducer answer (" + Excerpt(line) + ")"};
    }
    return ParseReproducerAnswer(answer);
  }

 private:
  using Clock = std::chrono::steady_clock;
  static Clock::time_point Now() { return Clock::now(); }
  Clock::duration Timeout() const {
    return std::chrono::duration_cast<Clock::duration>(
        std::chrono::duration<double>(std::min(settings_.timeout_seconds, 1e7)));
  }

  // Starts the program and reads its hello; returns what went wrong, or "".
  std::string Start(TargetCaps* caps) {
    std::string error;
    proc_ = Subprocess::Start(command_, &error);
    if (!proc_) return error;
    std::string line;
    switch (proc_->ReadLine(&line, Now() + Timeout(), kMaxHelloBytes)) {
      case Subprocess::Io::kOk:
        error = ParseHello(line, caps);
        break;
      case Subprocess::Io::kEof:
        error = "the program " + proc_->WaitForExit(1.0) + " before writing its hello line";
        break;
      case Subprocess::Io::kTimeout:
        error = "no hello line within " + Seconds(settings_.timeout_seconds);
        break;
      case Subprocess::Io::kTooLong:
        error = "hello line longer than 1 MiB";
        break;
    }
    if (error.empty()) return "";
    proc_->Kill();
    last_log_ = proc_->StderrTail();
    if (!last_log_.empty()) error += "; its stderr ends: " + last_log_;
    proc_.reset();
    return error;
  }

  // Cases the program must not see: ops or options it did not declare.
  std::string Refusal(const Graph& g, const RunRequest& req) const {
    for (const Node& n : g.nodes) {
      if (!caps_.ops.count(n.op)) {
        return "target '" + caps_.name + "' does not declare op " + std::string(OpName(n.op)) +
               " (node '" + n.name + "')";
      }
    }
    if (!req.optimize) return "";
    const OptimizeOptions& o = req.opt;
    auto lacks = [&](const char* cap) {
      return "target '" + caps_.name + "' lacks the capability " + cap;
    };
    if (!caps_.disable && (!o.pipeline.empty() || !o.disable.empty() || !o.only.empty())) {
      return lacks("disable") + " (needed for pipeline/disable/only)";
    }
    if (!caps_.inject && !o.inject.empty()) return lacks("inject");
    if (!caps_.bisect_limit && o.bisect_limit >= 0) return lacks("bisect_limit");
    return "";
  }

  std::string BenchRefusal(const RunRequest& req) const {
    if (req.bench_runs > 0 && !caps_.bench) {
      return "target '" + caps_.name + "' lacks the capability bench";
    }
    return "";
  }

  static std::string CheckOutputs(const Graph& g, const TensorMap& got) {
    for (const std::string& name : g.outputs) {
      auto it = got.find(name);
      if (it == got.end()) return "/outputs: missing graph output '" + name + "'";
      // A well-formed tensor of another shape is an answer, not a protocol error: the oracle
      // judges it a MISMATCH (docs/oracle.md), so a fusion that changes an output's shape is a
      // fusion finding, blamed and minimized like any other.
    }
    for (const auto& [name, t] : got) {
      if (!g.IsGraphOutput(name)) return "/outputs: '" + name + "' is not a graph output";
    }
    return "";
  }

  static TargetResult Bad(std::string message) {
    TargetResult r = Status(RunStatus::kError, std::move(message));
    r.bad_response = true;
    return r;
  }

  // Ends the process after a crash, timeout or garbage; it is restarted before the next case.
  TargetResult Fail(RunStatus status, std::string message) {
    TargetResult r = Status(status, std::move(message));
    r.bad_response = status == RunStatus::kError;  // garbage
    r.log = proc_->StderrTail();
    last_log_ = r.log;
    proc_.reset();
    return r;
  }

  static TargetResult Status(RunStatus status, std::string message) {
    TargetResult r;
    r.status = status;
    r.message = std::move(message);
    return r;
  }

  std::string command_;
  TargetSettings settings_;
  size_t max_line_;
  TargetCaps caps_;
  std::unique_ptr<Subprocess> proc_;
  int64_t next_id_ = 1;
  std::string last_log_;
};

// A target that dies while we write to it must not take fusefuzz down with SIGPIPE: write()
// then fails with EPIPE instead.
void IgnoreSigpipe() {
  static std::once_flag once;
  std::call_once(once, [] { signal(SIGPIPE, SIG_IGN); });
}

}  // namespace

std::unique_ptr<Target> MakeExecTargetWithLineCap(const std::string& command,
                                                  const TargetSettings& settings,
                                                  size_t max_line_bytes) {
  IgnoreSigpipe();
  if (!(settings.timeout_seconds > 0)) {
    throw InputError("--timeout", "must be a positive number of seconds");
  }
  return std::make_unique<ExecTarget>(command, settings, max_line_bytes);
}

std::unique_ptr<Target> MakeExecTarget(const std::string& command, const TargetSettings& settings) {
  return MakeExecTargetWithLineCap(command, settings, kMaxResponseLineBytes);
}

}  // namespace fusefuzz
