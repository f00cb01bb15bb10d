// The delta loop: for each pass and mode, chunks of targets from all of them down to single ones
// (llvm-reduce's chunk halving); the first interesting, strictly smaller candidate replaces the
// current case; sweeps over all passes repeat until one changes nothing.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <set>

#include "ir/error.h"
#include "ir/printers.h"
#include "ir/spelling.h"
#include "reduce/reduce.h"

namespace fusefuzz {
namespace {

// FNV-1a over the inputs, combined with the graph fingerprint: identifies a candidate so that one
// rejected in an earlier sweep is not tested again (the test is deterministic).
uint64_t CaseKey(const ReduceCase& c) {
  uint64_t h = 1469598103934665603ull ^ Fingerprint(c.graph);
  auto mix = [&h](const void* p, size_t n) {
    const auto* b = static_cast<const unsigned char*>(p);
    for (size_t i = 0; i < n; ++i) h = (h ^ b[i]) * 1099511628211ull;
  };
  for (const auto& [name, t] : c.inputs) {
    mix(name.data(), name.size());
    mix(t.shape.data(), t.shape.size() * sizeof(int64_t));
    mix(t.data.data(), t.data.size() * sizeof(float));
  }
  return h;
}

std::string SizeText(const CaseSize& s) {
  char buf[160];
  std::snprintf(buf, sizeof buf, "nodes %lld outputs %lld geometry %lld elements %lld values %lld",
                static_cast<long long>(s.nodes), static_cast<long long>(s.outputs),
                static_cast<long long>(s.geometry), static_cast<long long>(s.elements),
                static_cast<long long>(s.value_cost));
  return buf;
}

}  // namespace

const ShapeMap& ReduceContext::shapes() {
  if (!shapes_) shapes_ = VerifyGraph(case_.graph);
  return *shapes_;
}

const RefTensorMap& ReduceContext::all_values() {
  if (!values_) values_ = RunReference(case_.graph, case_.inputs, /*all_values=*/true);
  return *values_;
}

ReduceCase Reduce(ReduceCase start, const std::vector<std::unique_ptr<ReducePass>>& passes,
                  const std::function<bool(const ReduceCase&)>& interesting,
                  const ReduceOptions& opts, ReduceStats* stats_out) {
  ReduceStats local;
  ReduceStats& stats = stats_out ? *stats_out : local;
  ReduceCase cur = std::move(start);
  CaseSize cur_size = SizeOf(cur);
  std::set<uint64_t> rejected;
  auto out_of_budget = [&] {
    if (opts.max_tests > 0 && stats.tests >= opts.max_tests) return true;
    return std::chrono::steady_clock::now() >= opts.deadline;
  };

  bool progress = true;
  while (progress) {
    progress = false;
    for (const auto& pass : passes) {
      for (int mode = 0; mode < pass->modes(); ++mode) {
        auto ctx = std::make_unique<ReduceContext>(cur);
        int64_t n = pass->Targets(*ctx, mode);
        for (int64_t chunk = n; chunk >= 1 && n > 0;) {
          for (int64_t begin = 0; begin < n;) {
            if (out_of_budget()) {
              stats.stopped_early = true;
              return cur;
            }
            const int64_t end = std::min(n, begin + chunk);
            ++stats.candidates;
            std::optional<ReduceCase> cand;
            try {
              cand = pass->Apply(*ctx, mode, begin, end);
            } catch (const InputError&) {
              cand.reset();  // a pass met a case it cannot edit: no candidate
            } catch (const std::exception& e) {
              HarnessBug(e, "reduce pass");
              ++stats.harness_errors;
              cand.reset();
            }
            bool accepted = false;
            if (cand) {
              RemoveDeadCode(*cand);
              // A node the pass changed may no longer take its spelling: it goes plain.
              DropInapplicableSpellings(cand->graph);
              if (IsValidCase(*cand)) {
                CaseSize size = SizeOf(*cand);
                if (size < cur_size) {
                  uint64_t key = CaseKey(*cand);
                  if (!rejected.count(key)) {
                    ++stats.tests;
                    if (interesting(*cand)) {
                      accepted = true;
                      if (opts.verbose) {
                        std::fprintf(stderr, "minimize: %.*s/%s targets [%lld,%lld) of %lld: %s\n",
                                     static_cast<int>(pass->name().size()), pass->name().data(),
                                     pass->mode_name(mode).c_str(), static_cast<long long>(begin),
                                     static_cast<long long>(end), static_cast<long long>(n),
                                     SizeText(size).c_str());
                      }
                      cur = std::move(*cand);
                      cur_size = size;
                      ++stats.accepted;
                      ++stats.accepted_by_pass[std::string(pass->name())];
                      progress = true;
                    } else {
                      rejected.insert(key);
                    }
                  }
                }
              }
            }
            if (accepted) {
              // Targets are renumbered on the new case; the reduced ones are gone, so the same
              // `begin` now names the next untried chunk.
              ctx = std::make_unique<ReduceContext>(cur);
              n = pass->Targets(*ctx, mode);
              chunk = std::min(chunk, std::max<int64_t>(n, 1));
            } else {
              begin += chunk;
            }
          }
          if (chunk == 1) break;
          chunk = (chunk + 1) / 2;
        }
      }
    }
  }
  return cur;
}

void HarnessBug(const std::exception& e, const char* where) {
#ifdef FUSEFUZZ_CONTRACTS
  std::fprintf(stderr, "fusefuzz: internal error in %s: %s\n", where, e.what());
  std::abort();
#else
  (void)e;
  (void)where;
#endif
}

}  // namespace fusefuzz
