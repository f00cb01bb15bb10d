// Reading `fuzz --known` lists (campaign/known_signatures.h), in signatures/s. Rows:
//   BM_KnownSignatures/text/N     a text file of N signatures, one a line
//   BM_KnownSignatures/summary/N  a summary.json with N unique findings (as a campaign writes it)
//   BM_KnownSignatures/lookup/N   one contains() on a set of N (half of the lookups miss)
// The files are written once per row into a temporary folder, outside the timed loop; the page
// cache holds them, so the rows time parsing and building the set, not the disk.
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "campaign/known_signatures.h"

namespace fusefuzz {
namespace {

// Signature-shaped names, as harness/repro.h Signature() makes them: kind, rule, a 16-digit hash.
std::string Sig(int64_t i) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "fusion-conv-bn-fold-%016llx",
                static_cast<unsigned long long>(i * 0x9E3779B97F4A7C15ull));
  return buf;
}

std::string TempFile(const std::string& name, const std::string& text) {
  char dir[] = "/tmp/fusefuzz-bench-XXXXXX";
  if (!::mkdtemp(dir)) std::abort();
  const std::string path = std::string(dir) + "/" + name;
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

void Remove(const std::string& path) {
  std::error_code ec;
  std::filesystem::remove_all(std::filesystem::path(path).parent_path(), ec);
}

void BM_Text(benchmark::State& state) {
  std::string text;
  for (int64_t i = 0; i < state.range(0); ++i) text += Sig(i) + "\n";
  const std::string path = TempFile("known.txt", text);
  for (auto _ : state) {
    KnownSignatures k = ReadKnownSignatures(path);
    if (k.size() != static_cast<size_t>(state.range(0))) state.SkipWithError("wrong count");
    benchmark::DoNotOptimize(k);
  }
  state.SetItemsProcessed(state.iterations() * state.range(0));
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(text.size()));
  Remove(path);
}

void BM_Summary(benchmark::State& state) {
  std::string text = "{\n \"format\": \"fusefuzz-summary\",\n \"unique_findings\": [\n";
  for (int64_t i = 0; i < state.range(0); ++i) {
    const std::string s = Sig(i);
    text += std::string(i ? ",\n" : "") + "  {\n   \"signature\": \"" + s +
            "\",\n   \"kind\": \"fusion\",\n   \"cases\": 3,\n   \"pattern\": \"Conv>Relu\",\n"
            "   \"folder\": \"findings/" +
            s + "\"\n  }";
  }
  text += "\n ]\n}\n";
  const std::string path = TempFile("summary.json", text);
  for (auto _ : state) {
    KnownSignatures k = ReadKnownSignatures(path);
    if (k.size() != static_cast<size_t>(state.range(0))) state.SkipWithError("wrong count");
    benchmark::DoNotOptimize(k);
  }
  state.SetItemsProcessed(state.iterations() * state.range(0));
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(text.size()));
  Remove(path);
}

void BM_Lookup(benchmark::State& state) {
  std::vector<std::string> sigs;
  for (int64_t i = 0; i < state.range(0); ++i) sigs.push_back(Sig(i));
  const KnownSignatures k(sigs);
  std::vector<std::string> probes;
  for (int64_t i = 0; i < 1024; ++i) probes.push_back(Sig(i * 977 % (2 * state.range(0))));
  size_t i = 0, hits = 0;
  for (auto _ : state) {
    hits += k.contains(probes[i++ & 1023]);
  }
  benchmark::DoNotOptimize(hits);
  state.SetItemsProcessed(state.iterations());
}

BENCHMARK(BM_Text)
    ->Name("BM_KnownSignatures/text")
    ->Arg(50000)
    ->Arg(500000)
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Summary)
    ->Name("BM_KnownSignatures/summary")
    ->Arg(50000)
    ->Arg(250000)
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Lookup)->Name("BM_KnownSignatures/lookup")->Arg(500000);

}  // namespace
}  // namespace fusefuzz

BENCHMARK_MAIN();
