// fusefuzz-example-target: the embedded optimizer + fast kernels behind the external target
// protocol (docs/target-protocol.md). A template for wrapping a real compiler, and, through its
// flags, a misbehaving program for testing the harness:
//   fusefuzz run ... --target 'exec:fusefuzz-example-target --inject through-activation'
#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "ir/error.h"
#include "ir/json_io.h"
#include "kernels/fast/executor.h"
#include "optimizer/optimizer.h"
#include "optimizer/registry.h"
#include "targets/target.h"

namespace fusefuzz {
namespace {

using nlohmann::json;

struct Flags {
  std::string name = "fusefuzz-example-target";
  std::vector<std::string> inject;  // added to every request's faults
  std::vector<std::string> crash_on, hang_on, garbage_on, unsupported;
  bool no_capabilities = false;
  bool bad_hello = false;
  bool rules_only = false;             // report rewrites without their nodes, as ONNX Runtime does
  std::string rule_name;               // reported for every rewrite instead of the rule's own name
  bool rule_name_unannounced = false;  // ... but not listed among the hello's rules
  bool onnx = false;                   // announce the onnx capability (the request has a model)
  std::string error_after_rule;        // answer an error when the optimized run applied this rule
  int decline_over = 0;                // > 0: answer unsupported for graphs with more nodes
  std::string bad_timings;             // a lie told in the timings of graphs with bad_timings_on
  std::vector<std::string> bad_timings_on;
  int batch = 0;                // > 0: announce the capability batch, suggesting this many cases
  int batch_max_nodes = 0;      // > 0: and this most nodes per joined graph
  bool wrong_in_batch = false;  // wrong first output when the graph joins two cases or more
};

std::set<Op> OpSet(const std::vector<std::string>& names) {
  std::set<Op> ops;
  for (const std::string& n : names) {
    std::optional<Op> op = OpFromName(n);
    if (!op)
      throw InputError("--crash-on/--hang-on/--garbage-on/--unsupported", "unknown op '" + n + "'");
    ops.insert(*op);
  }
  return ops;
}

std::vector<std::string> Strings(const json& options, const char* key) {
  auto it = options.find(key);
  if (it == options.end() || it->is_null()) return {};
  return it->get<std::vector<std::string>>();
}

class Server {
 public:
  explicit Server(const Flags& f)
      : f_(f),
        crash_(OpSet(f.crash_on)),
        hang_(OpSet(f.hang_on)),
        garbage_(OpSet(f.garbage_on)),
        unsupported_(OpSet(f.unsupported)),
        lie_(OpSet(f.bad_timings_on)) {}

  nlohmann::ordered_json Hello() const {
    json ops = json::array();
    for (Op op : AllOps()) {
      if (!unsupported_.count(op)) ops.push_back(std::string(OpName(op)));
    }
    json caps = json::array();
    if (!f_.no_capabilities) caps = {"bisect_limit", "disable", "inject", "rewrites", "bench"};
    if (f_.onnx) caps.push_back("onnx");
    if (f_.batch > 0) caps.push_back("batch");
    nlohmann::ordered_json hello = {{"protocol", "fusefuzz-target"},
                                    {"version", f_.bad_hello ? 99 : 1},
                                    {"name", f_.name},
                                    {"ops", ops},
                                    {"capabilities", caps}};
    if (!f_.no_capabilities) {
      // The names its options take: the embedded optimizer's rules and faults.
      json rules = json::array();
      for (const Rule* r : AllRules()) rules.push_back(std::string(r->name()));
      for (const FaultInfo& fi : AllFaults()) rules.push_back(std::string(fi.rule->name()));
      if (!f_.rule_name.empty() && !f_.rule_name_unannounced) rules.push_back(f_.rule_name);
      hello["rules"] = rules;
    }
    if (f_.batch > 0) {
      hello["batch"] = {{"cases", f_.batch}};
      if (f_.batch_max_nodes > 0) hello["batch"]["max_nodes"] = f_.batch_max_nodes;
    }
    return hello;
  }

  // One request line -> one response line (without the newline).
  std::string Handle(const std::string& line) {
    json req = json::parse(line, nullptr, false);
    if (req.is_discarded() || !req.is_object() || !req.contains("id")) {
      return json{{"id", nullptr}, {"error", "request is not a JSON object with an id"}}.dump();
    }
    json resp = {{"id", req["id"]}};
    try {
      Graph g = ReadGraph(req.at("graph"), "request /graph");
      if (std::string stop = Misbehave(g); !stop.empty()) return stop;
      if (f_.decline_over > 0 && static_cast<int>(g.nodes.size()) > f_.decline_over) {
        resp["unsupported"] = "graph of " + std::to_string(g.nodes.size()) + " nodes, more than " +
                              std::to_string(f_.decline_over) + " (--decline-over)";
        return resp.dump();
      }
      for (const Node& n : g.nodes) {
        if (unsupported_.count(n.op)) {
          resp["unsupported"] = "op " + std::string(OpName(n.op)) + " (node '" + n.name + "')";
          return resp.dump();
        }
      }
      TensorMap inputs = ReadTensors(req.at("inputs"), "request /inputs");
      json options = req.value("options", json::object());
      FastOptions fast{options.value("threads", 1)};
      const bool lie = Contains(g, lie_);  // the request's graph, before fusion
      std::vector<Rewrite> rewrites;
      if (options.value("optimize", true)) {
        OptimizeOptions opt;
        if (!f_.no_capabilities) {
          opt.pipeline = Strings(options, "pipeline");
          opt.disable = Strings(options, "disable");
          opt.only = Strings(options, "only");
          opt.inject = Strings(options, "inject");
          opt.bisect_limit = options.value("bisect_limit", int64_t{-1});
        }
        opt.inject.insert(opt.inject.end(), f_.inject.begin(), f_.inject.end());
        OptimizeResult o = Optimize(g, opt);
        json applied = json::array();
        for (const Rewrite& r : o.rewrites) {
          applied.push_back({{"index", r.index}, {"rule", r.rule}, {"nodes", r.nodes}});
          if (!f_.error_after_rule.empty() && r.rule == f_.error_after_rule) {
            // Particulars (a node name, a count) vary per graph, as a real compiler's do; the
            // rewrites applied so far go with the error.
            return json{{"id", req["id"]},
                        {"error", "invalid node '" + (r.nodes.empty() ? "" : r.nodes[0]) +
                                      "' after rewrite " + std::to_string(r.index) + " (" + r.rule +
                                      "): --error-after-rule"},
                        {"rewrites", applied}}
                .dump(-1, ' ', false, json::error_handler_t::replace);
          }
        }
        rewrites = std::move(o.rewrites);
        g = std::move(o.graph);
      }
      TensorMap result;
      auto run = [&] { result = RunFast(g, inputs, fast); };
      const json bench = req.value("bench", json::object());
      const int runs = f_.no_capabilities ? 0 : bench.value("runs", 0);
      if (runs > 0) {
        // Timed here, around the kernels only: the optimization above is the preparation.
        const BenchTimings t = TimeRuns(bench.value("warmup", 0), runs, run);
        resp["timings"] = {{"runs", t.runs}, {"median_ns", t.median_ns}, {"min_ns", t.min_ns}};
        if (lie) Lie(&resp["timings"]);
      } else {
        run();
      }
      // A fault of the batch only: case 1's names (harness/batch.h) mean two cases share the call.
      if (f_.wrong_in_batch && !g.outputs.empty() &&
          std::any_of(g.inputs.begin(), g.inputs.end(),
                      [](const ValueInfo& v) { return v.name.rfind("b1_", 0) == 0; })) {
        for (float& x : result.at(g.outputs.front()).data) x += 1;
      }
      json outputs = json::object();
      for (const auto& [name, t] : result) outputs[name] = TensorToJson(t);
      resp["outputs"] = std::move(outputs);
      if (!f_.no_capabilities) {
        json rw = json::array();
        for (const Rewrite& r : rewrites) {
          const std::string& rule = f_.rule_name.empty() ? r.rule : f_.rule_name;
          rw.push_back({{"index", r.index},
                        {"rule", rule},
                        {"nodes", f_.rules_only ? std::vector<std::string>{} : r.nodes}});
        }
        resp["rewrites"] = std::move(rw);
      }
    } catch (const std::exception& e) {
      resp = {{"id", req["id"]}, {"error", e.what()}};
    }
    return resp.dump(-1, ' ', false, json::error_handler_t::replace);
  }

 private:
  // The testing switches; returns a line to write instead of an answer, or "".
  std::string Misbehave(const Graph& g) const {
    for (const Node& n : g.nodes) {
      std::string op(OpName(n.op));
      if (crash_.count(n.op)) {
        std::fprintf(stderr, "%s: crashing on %s as asked (--crash-on)\n", f_.name.c_str(),
                     op.c_str());
        std::abort();
      }
      if (hang_.count(n.op)) {
        std::fprintf(stderr, "%s: hanging on %s as asked (--hang-on)\n", f_.name.c_str(),
                     op.c_str());
        for (;;) std::this_thread::sleep_for(std::chrono::hours(1));
      }
      if (garbage_.count(n.op)) return "this is not JSON (--garbage-on " + op + ")";
    }
    return "";
  }

  static bool Contains(const Graph& g, const std::set<Op>& ops) {
    for (const Node& n : g.nodes) {
      if (ops.count(n.op)) return true;
    }
    return false;
  }

  // --bad-timings: the timings of a graph with a --bad-timings-on op become a lie.
  void Lie(json* timings) const {
    if (f_.bad_timings == "negative") (*timings)["median_ns"] = -1000.0;
    if (f_.bad_timings == "missing") timings->erase("median_ns");
    if (f_.bad_timings == "runs") (*timings)["runs"] = (*timings)["runs"].get<int>() + 1;
    if (f_.bad_timings == "nan") (*timings)["min_ns"] = "nan";
  }

  Flags f_;
  std::set<Op> crash_, hang_, garbage_, unsupported_, lie_;
};

int Main(int argc, char** argv) {
  Flags f;
  CLI::App app{"Example external target for fusefuzz (docs/target-protocol.md)",
               "fusefuzz-example-target"};
  app.add_option("--name", f.name, "name announced in the hello");
  app.add_option("--inject", f.inject, "faults to inject into every optimization")->delimiter(',');
  app.add_option("--crash-on", f.crash_on, "abort() when the graph contains this op")
      ->delimiter(',');
  app.add_option("--hang-on", f.hang_on, "sleep forever when the graph contains this op")
      ->delimiter(',');
  app.add_option("--garbage-on", f.garbage_on, "answer a non-JSON line for graphs with this op")
      ->delimiter(',');
  app.add_option("--unsupported", f.unsupported, "leave this op out of the hello; refuse it")
      ->delimiter(',');
  app.add_option("--error-after-rule", f.error_after_rule,
                 "answer an error for optimized runs that applied this rule (an optimized-run-only "
                 "target error)");
  app.add_option("--decline-over", f.decline_over,
                 "answer unsupported for graphs of more than this many nodes");
  app.add_flag("--no-capabilities", f.no_capabilities,
               "announce no capabilities, ignore options, report no rewrites");
  app.add_flag("--bad-hello", f.bad_hello, "announce protocol version 99");
  app.add_flag("--rules-only", f.rules_only,
               "report each rewrite's rule but not its nodes (as ONNX Runtime's log does)");
  // Rule names are the target's to choose: paths, spaces, newlines must not hurt fusefuzz.
  app.add_option("--rule-name", f.rule_name, "report every rewrite under this rule name");
  app.add_flag("--rule-name-unannounced", f.rule_name_unannounced,
               "leave --rule-name out of the hello's rules (only the rewrites name it)");
  app.add_flag("--onnx", f.onnx,
               "announce the onnx capability: requests then carry the graph as an ONNX model too");
  app.add_option("--bad-timings", f.bad_timings, "lie in the timings of --bad-timings-on graphs")
      ->check(CLI::IsMember({"negative", "missing", "runs", "nan"}));
  app.add_option("--bad-timings-on", f.bad_timings_on, "graphs with this op get lying timings")
      ->delimiter(',');
  app.add_option("--batch", f.batch,
                 "announce the capability batch, suggesting this many cases per call")
      ->check(CLI::Range(1, 256));
  app.add_option("--batch-max-nodes", f.batch_max_nodes,
                 "with --batch: the most nodes of a joined graph");
  app.add_flag("--wrong-in-batch", f.wrong_in_batch,
               "add 1 to the first output of a graph that joins two cases or more (a fault that "
               "shows only in a batch)");
  CLI11_PARSE(app, argc, argv);
  try {
    Server server(f);
    std::ios::sync_with_stdio(false);
    std::cout << server.Hello().dump() << '\n' << std::flush;
    std::string line;
    while (std::getline(std::cin, line)) {
      if (line.empty()) continue;
      std::cout << server.Handle(line) << '\n' << std::flush;
    }
  } catch (const InputError& e) {
    std::fprintf(stderr, "fusefuzz-example-target: %s\n", e.what());
    return 2;
  }
  return 0;
}

}  // namespace
}  // namespace fusefuzz

int main(int argc, char** argv) { return fusefuzz::Main(argc, argv); }
