#include "targets/native_server.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <iostream>

#include "ir/error.h"
#include "ir/json_io.h"

namespace fusefuzz {
namespace {

using nlohmann::json;

std::vector<std::string> Strings(const json& options, const char* key) {
  auto it = options.find(key);
  if (it == options.end() || it->is_null()) return {};
  if (!it->is_array()) throw InputError("request /options/" + std::string(key), "not an array");
  std::vector<std::string> out;
  for (const json& s : *it) {
    if (!s.is_string()) {
      throw InputError("request /options/" + std::string(key), "not an array of strings");
    }
    out.push_back(s.get<std::string>());
  }
  return out;
}

int IntOr(const json& j, const char* key, int def, int min) {
  auto it = j.find(key);
  if (it == j.end()) return def;
  if (!it->is_number_integer() || it->get<int64_t>() < min || it->get<int64_t>() > 1000000) {
    throw InputError(std::string("request /") + key,
                     "must be an integer >= " + std::to_string(min));
  }
  return it->get<int>();
}

NativeRequest ParseRequest(const json& req) {
  NativeRequest r;
  r.graph = ReadGraph(req.at("graph"), "request /graph");
  r.shapes = VerifyGraph(r.graph);
  r.inputs = ReadTensors(req.at("inputs"), "request /inputs");
  CheckTensorsForGraph(r.graph, r.inputs, "request /inputs");
  const json options = req.value("options", json::object());
  r.optimize = options.value("optimize", true);
  r.pipeline = Strings(options, "pipeline");
  r.disable = Strings(options, "disable");
  r.only = Strings(options, "only");
  r.inject = Strings(options, "inject");
  auto limit = options.find("bisect_limit");
  if (limit != options.end() && limit->is_number_integer()) r.bisect_limit = limit->get<int64_t>();
  r.threads = IntOr(options, "threads", 1, 1);
  if (auto b = req.find("bench"); b != req.end()) {
    if (!b->is_object()) throw InputError("request /bench", "not an object");
    r.bench_warmup = IntOr(*b, "warmup", 0, 0);
    r.bench_runs = IntOr(*b, "runs", 1, 1);
  }
  return r;
}

// Request "repro": the case as the reproducer writer needs it, answered with its files.
std::string AnswerRepro(const json& id, const NativeRequest& r, const json& rq,
                        const NativeReproWriter& repro) {
  if (!repro) throw Unsupported("this target writes no reproducers");
  if (!rq.is_object()) throw InputError("request /repro", "not an object");
  ReproducerCase c;
  c.title = rq.value("title", "");
  c.output = rq.value("output", "");
  c.index = rq.value("index", int64_t{-1});
  c.reference = rq.value("reference", 0.0);
  c.bound = rq.value("bound", 0.0);
  c.expected = ReadTensors(rq.at("expected"), "request /repro/expected");
  // No output: a finding that is not a wrong number (the engine failed on the case).
  if (!c.output.empty() && (!r.shapes.count(c.output) || !c.expected.count(c.output))) {
    throw InputError("request /repro/output", "not a graph output with an expected tensor");
  }
  const Reproducer written = repro(r, c);
  json files = json::array();
  for (const ReproducerFile& f : written.files)
    files.push_back({{"path", f.path}, {"text", f.text}});
  return json{{"id", id}, {"repro", {{"files", std::move(files)}, {"build", written.build}}}}.dump(
      -1, ' ', false, json::error_handler_t::replace);
}

}  // namespace

bool RewriteAllowed(const NativeRequest& r, const std::string& rule, int64_t index) {
  if (r.bisect_limit >= 0 && index > r.bisect_limit) return false;
  if (std::find(r.disable.begin(), r.disable.end(), rule) != r.disable.end()) return false;
  return r.only.empty() || std::find(r.only.begin(), r.only.end(), rule) != r.only.end();
}

std::set<Op> OpsFromNames(const std::vector<std::string>& names) {
  std::set<Op> ops;
  for (const std::string& n : names) {
    std::optional<Op> op = OpFromName(n);
    if (!op) throw InputError("--crash-on", "unknown op '" + n + "'");
    ops.insert(*op);
  }
  return ops;
}

std::string HandleNativeLine(const std::string& line, const NativeBackend& backend,
                             const std::set<Op>& crash_on, const NativeReproWriter& repro) {
  json req = json::parse(line, nullptr, false);
  if (req.is_discarded() || !req.is_object() || !req.contains("id")) {
    return json{{"id", nullptr}, {"error", "request is not a JSON object with an id"}}.dump();
  }
  json resp = {{"id", req["id"]}};
  try {
    const NativeRequest r = ParseRequest(req);
    for (const Node& n : r.graph.nodes) {
      if (crash_on.count(n.op)) {
        std::fprintf(stderr, "aborting on %s (node '%s') as asked (--crash-on)\n",
                     std::string(OpName(n.op)).c_str(), n.name.c_str());
        std::abort();
      }
    }
    if (auto rq = req.find("repro"); rq != req.end()) {
      return AnswerRepro(req["id"], r, *rq, repro);
    }
    NativeAnswer a = backend(r);
    json outputs = json::object();
    for (const std::string& name : r.graph.outputs) {
      auto it = a.outputs.find(name);
      if (it == a.outputs.end()) throw std::runtime_error("backend lost output '" + name + "'");
      outputs[name] = TensorToJson(it->second);
    }
    resp["outputs"] = std::move(outputs);
    json rw = json::array();
    for (const Rewrite& w : a.rewrites) {
      rw.push_back({{"index", w.index}, {"rule", w.rule}, {"nodes", w.nodes}});
    }
    resp["rewrites"] = std::move(rw);
    if (r.bench_runs > 0) {
      if (!a.timings) throw std::runtime_error("backend answered a timing request without timings");
      resp["timings"] = {{"runs", a.timings->runs},
                         {"median_ns", a.timings->median_ns},
                         {"min_ns", a.timings->min_ns}};
    }
  } catch (const FailureAfterRewrites& e) {
    json rw = json::array();
    for (const Rewrite& w : e.rewrites) {
      rw.push_back({{"index", w.index}, {"rule", w.rule}, {"nodes", w.nodes}});
    }
    resp = {{"id", req["id"]}, {"error", e.what()}, {"rewrites", std::move(rw)}};
  } catch (const Unsupported& e) {
    resp = {{"id", req["id"]}, {"unsupported", e.what()}};
  } catch (const std::exception& e) {
    resp = {{"id", req["id"]}, {"error", e.what()}};
  }
  return resp.dump(-1, ' ', false, json::error_handler_t::replace);
}

int ServeNative(const json& hello, const NativeBackend& backend, const std::set<Op>& crash_on,
                const NativeReproWriter& repro) {
  std::ios::sync_with_stdio(false);
  std::cout << hello.dump() << '\n' << std::flush;
  std::string line;
  while (std::getline(std::cin, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) continue;
    std::cout << HandleNativeLine(line, backend, crash_on, repro) << '\n' << std::flush;
  }
  return 0;
}

}  // namespace fusefuzz
