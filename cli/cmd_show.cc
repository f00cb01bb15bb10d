// `fusefuzz show GRAPH.json [--dot | --text] [--optimized ...]`
#include <iostream>
#include <memory>

#include "cli/cli.h"
#include "ir/json_io.h"
#include "ir/printers.h"

namespace fusefuzz {
namespace {

struct ShowOptions {
  std::string graph;
  bool dot = false;
  bool text = false;
  bool json = false;
  bool optimized = false;
  OptimizeOptions opt;
};

}  // namespace

void RegisterShow(Cli& cli) {
  auto o = std::make_shared<ShowOptions>();
  auto* cmd = cli.app.add_subcommand("show", "Print a graph as text (default), DOT or JSON");
  cmd->add_option("graph", o->graph, "graph JSON file")->required();
  auto* dot = cmd->add_flag("--dot", o->dot, "Graphviz DOT (pipe to `dot -Tsvg`)");
  auto* text = cmd->add_flag("--text", o->text, "compact text, one line per node (default)");
  auto* json = cmd->add_flag("--json", o->json, "graph JSON (after --optimized: the result)");
  dot->excludes(text)->excludes(json);
  text->excludes(json);
  cmd->add_flag("--optimized", o->optimized, "show the graph after the embedded optimizer");
  AddOptimizerOptions(*cmd, o->opt);
  cmd->callback([o] {
    Graph g = ReadGraphFile(o->graph);
    std::vector<Rewrite> rewrites;
    if (o->optimized) {
      OptimizeResult r = Optimize(g, o->opt);
      g = std::move(r.graph);
      rewrites = std::move(r.rewrites);
    }
    if (o->dot) {
      DotOptions d;
      d.title = o->graph + (o->optimized ? " (optimized)" : "");
      std::cout << ToDot(g, d);
    } else if (o->json) {
      std::cout << WriteGraph(g) << "\n";
    } else {
      if (o->optimized) PrintRewrites(rewrites);
      std::cout << "# " << o->graph << "  fingerprint " << FingerprintHex(g) << "\n" << ToText(g);
    }
  });
}

}  // namespace fusefuzz
