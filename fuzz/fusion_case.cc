#include "fuzz/fusion_case.h"

#include <cstdlib>

#include "fuzz/fuzz_inputs.h"
#include "optimizer/optimizer.h"
#include "optimizer/pipeline.h"

namespace fusefuzz::fuzz {

std::vector<std::string> InjectedFaults() {
  std::string list;
  if (const char* env = std::getenv("FUSEFUZZ_INJECT")) {
    list = env;
  } else {
#ifdef FUSEFUZZ_FUZZ_INJECT
    list = FUSEFUZZ_FUZZ_INJECT;
#endif
  }
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= list.size()) {
    size_t comma = list.find(',', start);
    if (comma == std::string::npos) comma = list.size();
    if (comma > start) out.push_back(list.substr(start, comma - start));
    start = comma + 1;
  }
  return out;
}

GenConfig FuzzGenConfig(const Target& target) {
  GenConfig cfg;
  std::set<Op> allowed;
  for (Op op : cfg.allowed_ops)
    if (target.caps().ops.count(op)) allowed.insert(op);
  cfg.allowed_ops = allowed;
  return cfg;
}

FusionCaseRunner::FusionCaseRunner() : target_(MakeEmbeddedTarget()) {
  gen_ = FuzzGenConfig(*target_);
  opts_.opt.inject = InjectedFaults();
  BuildPipeline(opts_.opt);  // unknown fault names fail here, once
}

std::optional<FusionFinding> FusionCaseRunner::Run(const uint8_t* data, size_t size, bool blame) {
  BytesSource source(data, size);
  FusionFinding f;
  f.c = Generate(source, gen_);
  f.ref = RunReference(f.c.graph, f.c.inputs);
  f.out = CheckCase(*target_, f.c.graph, f.c.inputs, f.ref, opts_);
  if (!f.out.finding()) return std::nullopt;
  if (blame && f.out.kind == FindingKind::kFusion) {
    f.blame = BlameFusion(*target_, f.c.graph, f.c.inputs, f.ref, opts_, f.out);
  }
  return f;
}

Repro FusionCaseRunner::MakeRepro(const FusionFinding& f, const uint8_t* data, size_t size,
                                  const std::string& input_name) const {
  Repro r;
  r.graph = f.c.graph;
  r.inputs = f.c.inputs;
  r.target = target_->spec();
  r.opt = opts_.opt;
  r.opt.on_rewrite = nullptr;
  r.oracle = opts_.oracle;
  r.kernel_check = opts_.kernel_check;
  r.kind = f.out.kind;
  r.verdict = std::string(VerdictName(f.out.verdict));
  r.worst = f.out.oracle.worst;
  r.detail = f.out.run.status == RunStatus::kOk ? f.out.oracle.detail : f.out.run.message;
  r.blame = f.blame;
  r.generator = {{"generator", "fusion_fuzzer"}, {"source", "libFuzzer bytes (BytesSource)"},
                 {"input", input_name},          {"input_sha1", Sha1Hex(data, size)},
                 {"input_size", size},           {"config", ConfigToJson(gen_)}};
  return r;
}

int RegistryIndex(const std::string& rule) {
  int i = 0;
  for (const auto& r : ListRules()) {
    if (r.name == rule) return i;
    ++i;
  }
  for (const auto& f : ListFaults()) {
    if (f.name == rule) return i;
    ++i;
  }
  return -1;
}

}  // namespace fusefuzz::fuzz
