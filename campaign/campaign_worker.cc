// The campaign's worker process: generates and checks its share of the cases, files the
// findings, and reports each case to the parent (campaign/campaign_internal.h).
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <nlohmann/json.hpp>
#include <vector>

#include "campaign/campaign_constraints.h"
#include "campaign/campaign_internal.h"
#include "campaign/finding_filing.h"
#include "generators/coverage.h"
#include "generators/generator.h"
#include "harness/batch.h"
#include "harness/blame.h"
#include "harness/case_repro.h"
#include "ir/error.h"
#include "report/finding_writer.h"

namespace fusefuzz::campaign_internal {
namespace {

using nlohmann::json;

// Set while a case is in progress (after its "begin" went out, before its "end").
volatile sig_atomic_t g_in_case = 0;

// A stop request drops the case in progress instead of finishing it: it may be waiting on a hung
// target for the whole --timeout. Its "end" never went out, so it is not counted and --resume
// checks it again; the target's process group dies with this process (targets/subprocess.h).
void OnWorkerStop(int) {
  g_stop = 1;
  if (g_in_case) _exit(0);
}

// One message to the parent: one JSON object per line, so nothing a target says (rule names
// with spaces or newlines) can cut a field or forge a line. False when the parent is gone.
bool Send(int fd, const json& message) {
  std::string s = message.dump(-1, ' ', false, json::error_handler_t::replace) + "\n";
  size_t off = 0;
  while (off < s.size()) {
    ssize_t n = ::write(fd, s.data() + off, s.size() - off);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;  // EPIPE: the parent is gone
    off += static_cast<size_t>(n);
  }
  return true;
}

// The campaign's part of a reproducer's provenance: case `index` of the campaign, its seed and
// the generator that made it.
void SetCaseProvenance(const CampaignOptions& o, uint64_t seed, int64_t index, Repro* r) {
  r->has_seed = true;
  r->seed = seed;
  r->has_campaign_seed = true;
  r->campaign_seed = o.seed;
  r->case_index = index;
  r->generator = GenerationProvenance(seed, o.gen);
}

// Builds the reproducer of a finding (blamed, then minimized when asked).
Repro MakeRepro(const CampaignOptions& o, Target& target, const GeneratedCase& c,
                const RefTensorMap& ref, const CaseOutcome& out, uint64_t seed, int64_t index) {
  Repro r = ReproOfCheck(c.graph, c.inputs, target.spec(), o.check);
  // The release a finding was found on, and what that engine build cannot do.
  r.engine = target.caps().engine;
  r.target_limits = target.caps().limits;
  SetOutcome(out, &r);
  SetCaseProvenance(o, seed, index, &r);
  const bool optimized_failure = IsOptimizedRunFailure(out, o.check);
  switch (out.kind) {
    case FindingKind::kTargetError:
    case FindingKind::kCrash:
    case FindingKind::kTimeout:
      if (o.check.kernel_check) r.failing_run = out.optimized ? "optimized" : "unoptimized";
      break;
    case FindingKind::kNone:
    case FindingKind::kFusion:
    case FindingKind::kKernel:
    case FindingKind::kUnquantized:
      break;
  }
  // An error only the optimized run hits is blamed like a mismatch: which rewrite causes it.
  if (out.kind == FindingKind::kFusion || out.kind == FindingKind::kUnquantized ||
      optimized_failure)
    r.blame = BlameFusion(target, c.graph, c.inputs, ref, o.check, out);
  return r;
}

// Cases per target call: --batch, else what the target suggests; one for a target without the
// capability batch.
int CasesPerCall(const CampaignOptions& o, const TargetCaps& caps) {
  if (caps.batch_cases <= 0) return 1;
  return o.batch > 0 ? o.batch : caps.batch_cases;
}

// One case of a call: generated, its reference, and (after CheckCases) its outcome.
struct WorkerCase {
  int64_t local = 0;  // this shard's count
  int64_t index = 0;  // the campaign's
  uint64_t seed = 0;
  GeneratedCase gen;
  RefTensorMap ref;
  BatchedCase checked;
  std::vector<Rewrite> unattributed;  // the batch's rewrites no case's nodes name (first case)
  int64_t spanning_rewrites = 0;      // the batch's rewrites over two cases (first case)
  bool batched = false;
};

// Checks the cases of one call: alone when one, else in batches of at most the target's
// max_nodes nodes (one batch may be a single case larger than that).
void CheckCases(const CampaignOptions& o, Target& target, std::vector<WorkerCase>* cases) {
  if (cases->size() == 1) {
    WorkerCase& c = cases->front();
    c.checked.outcome = CheckCase(target, c.gen.graph, c.gen.inputs, c.ref, o.check);
    return;
  }
  const size_t max_nodes = static_cast<size_t>(target.caps().batch_max_nodes);
  for (size_t first = 0; first < cases->size();) {
    size_t last = first, nodes = 0;
    std::vector<BatchCase> batch;
    while (last < cases->size()) {
      const WorkerCase& c = (*cases)[last];
      nodes += c.gen.graph.nodes.size();
      if (max_nodes > 0 && nodes > max_nodes && !batch.empty()) break;
      batch.push_back({&c.gen.graph, &c.gen.inputs, &c.ref});
      ++last;
    }
    BatchOutcome b = CheckBatch(target, batch, o.check);
    for (size_t j = first; j < last; ++j) {
      (*cases)[j].checked = std::move(b.cases[j - first]);
      (*cases)[j].batched = batch.size() > 1;
    }
    (*cases)[first].unattributed = std::move(b.unattributed);
    (*cases)[first].spanning_rewrites = b.spanning_rewrites;
    first = last;
  }
}

// Files the case's finding (if any) and returns its "end" report to the parent.
json FinishCase(const CampaignOptions& o, Target& target, const OutLayout& layout,
                const FilingOptions& filing, const WorkerCase& wc) {
  const GeneratedCase& c = wc.gen;
  const RefTensorMap& ref = wc.ref;
  const CaseOutcome& out = wc.checked.outcome;
  const uint64_t seed = wc.seed;
  const int64_t k = wc.index;
  json end = {{"end", wc.local},   {"verdict", VerdictName(out.verdict)},
              {"kind", nullptr},   {"signature", nullptr},
              {"bucket", nullptr}, {"known", false},
              {"duplicate", false}};
  if (out.verdict == Verdict::kUnsupported) end["reason"] = UnsupportedReasonClass(out.run.message);
  if (out.verdict == Verdict::kPass) {
    // Float: the worst element's ratio over the bound factor k (fails above 1).
    const WorstElement& w = out.oracle.worst;
    if (!w.on_grid && out.oracle.compared > 0 && std::isfinite(w.ratio)) {
      end["margin"] = w.ratio / (out.oracle.k > 0 ? out.oracle.k : 1.0);
    }
    // Grid: how much of its derived spread E the worst integer element used beyond plain
    // rounding, (|c - t| - 0.5) / E (an exact tie uses none of it).
    const GridSummary& g = out.oracle.grid;
    // A saturated worst element (t beyond its limit; it ranks first only when every other
    // element is exact) used none of its E.
    const bool saturated = g.t > g.hi + 0.5 + g.e || g.t < g.lo - 0.5 - g.e;
    if (g.compared > g.saturated && g.e > 0 && std::isfinite(g.excess)) {
      end["grid_margin"] = saturated ? 0.0 : std::max(0.0, 1 + g.excess / g.e);
      end["grid_e"] = g.e;
    }
  }
  if (out.finding()) {
    Repro r = MakeRepro(o, target, c, ref, out, seed, k);
    std::vector<std::string> fired;
    if (out.optimized) {
      for (const Rewrite& rw : out.run.rewrites) fired.push_back(rw.rule);
    }
    Filed f = FileFinding(layout, filing, target, std::move(r), fired, seed);
    end["kind"] = f.kind;
    if (!f.signature.empty()) end["signature"] = f.signature;
    end["bucket"] = f.bucket;
    end["known"] = f.known;
    end["duplicate"] = f.duplicate;
    if (f.slot) end["slot"] = true;
    if (!f.pattern.empty()) end["pattern"] = f.pattern;
  }
  json fires = json::object();
  if (out.optimized) {
    for (const Rewrite& rw : out.run.rewrites) {
      fires[rw.rule] = fires.value(rw.rule, int64_t{0}) + 1;
    }
  }
  // A batch's rewrites that name no case's nodes count once, with its first case.
  for (const Rewrite& rw : wc.unattributed) fires[rw.rule] = fires.value(rw.rule, int64_t{0}) + 1;
  end["rewrites"] = std::move(fires);
  // The value-dependent classes ("quant/saturated") need the reference's intermediate
  // values: a second reference run, for quantized graphs only (float graphs return at once).
  std::map<std::string, int64_t> coverage = ClassifyGraph(c.graph);
  for (const auto& [id, n] : ClassifyQuantValues(c.graph, c.inputs)) coverage[id] += n;
  end["coverage"] = std::move(coverage);
  std::map<std::string, int64_t> spellings;  // spelling -> nodes (issue 51)
  for (const Node& n : c.graph.nodes) {
    if (!n.spelling.empty()) ++spellings[n.spelling];
  }
  if (!spellings.empty()) end["spellings"] = std::move(spellings);
  if (wc.batched) end["batched"] = true;
  if (wc.checked.alone && wc.batched) end["alone"] = true;
  if (wc.checked.batch_only) end["batch_only"] = true;
  if (wc.spanning_rewrites > 0) end["spanning_rewrites"] = wc.spanning_rewrites;
  return end;
}

}  // namespace

std::string ErrnoText(const std::string& what) { return what + ": " + std::strerror(errno); }

[[noreturn]] void WorkerMain(const CampaignOptions& o, int64_t first, int stride, int fd,
                             Clock::time_point start, pid_t parent, const Progress& done,
                             int64_t alone_until) {
  // Die with the parent: a SIGKILLed campaign must not leave workers fuzzing on. The parent may
  // already be gone before prctl took effect: then getppid() is no longer it.
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != parent) _exit(0);
  signal(SIGINT, OnWorkerStop);
  signal(SIGTERM, OnWorkerStop);
  int code = 0;
  try {
    std::unique_ptr<Target> target = MakeTarget(o.target, o.target_settings);
    GenConfig gen = o.gen;
    const OutLayout layout(o.out_dir);
    FilingOptions filing;
    filing.minimize = o.minimize;
    filing.minimize_budget = o.minimize_budget;
    filing.sensitivity_check = o.sensitivity_check && o.check.kernel_check;
    filing.known = o.known;
    filing.upstream = o.upstream;
    if (!IsEmbeddedSpec(o.target)) {
      filing.fresh_target = [&o] { return MakeTarget(o.target, o.target_settings); };
    }
    const int per_call = CasesPerCall(o, target->caps());
    for (int64_t i = first;;) {
      if (g_stop) break;
      if (o.seconds > 0 && Since(start) >= o.seconds) break;
      // The cases of this call (a batch when more than one): the next ones of this shard in
      // order, whatever the batch size, so that --batch never changes which cases run.
      const int want = i <= alone_until ? 1 : per_call;
      std::vector<int64_t> ids;
      for (; static_cast<int>(ids.size()) < want; i += stride) {
        if (o.graphs > 0 && i >= o.graphs) break;
        if (!done.Checked(i)) ids.push_back(i);
      }
      if (ids.empty()) break;
      if (!Send(fd, ids.size() > 1 ? json{{"batch", ids}} : json{{"begin", ids[0]}})) break;
      g_in_case = 1;
      if (g_stop) _exit(0);  // asked to stop while the line went out
      std::vector<WorkerCase> cases(ids.size());
      for (size_t j = 0; j < ids.size(); ++j) {
        // ids count this shard's cases; the seed and the provenance are the campaign's case's.
        WorkerCase& c = cases[j];
        c.local = ids[j];
        c.index = o.CaseIndex(ids[j]);
        c.seed = CaseSeed(o.seed, c.index);
        c.gen = GenerateFromSeed(c.seed, gen);
        c.ref = RunReference(c.gen.graph, c.gen.inputs);
      }
      CheckCases(o, *target, &cases);
      g_in_case = 0;
      bool sent = true;
      for (const WorkerCase& c : cases) {
        if (ids.size() > 1 && !Send(fd, {{"begin", c.local}})) {
          sent = false;
          break;
        }
        g_in_case = 1;
        json end = FinishCase(o, *target, layout, filing, c);
        g_in_case = 0;
        if (!Send(fd, end)) {
          sent = false;
          break;
        }
      }
      if (!sent) break;
    }
  } catch (const OutputError& e) {
    Send(fd, {{"fatal", e.what()}});
    code = 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fusefuzz: worker error: %s\n", e.what());
    code = 3;
  }
  ::close(fd);
  std::fflush(nullptr);
  _exit(code);
}

Repro WorkerDeathRepro(const CampaignOptions& o, int64_t local, bool timeout, int status) {
  const int64_t index = o.CaseIndex(local);
  const uint64_t seed = CaseSeed(o.seed, index);
  GeneratedCase c = GenerateFromSeed(seed, o.gen);
  Repro r = ReproOfCheck(c.graph, c.inputs, o.target, o.check);
  r.kind = timeout ? FindingKind::kTimeout : FindingKind::kCrash;
  r.verdict = timeout ? "TIMEOUT" : "CRASH";
  r.detail = timeout ? "fusefuzz worker spent more than " + std::to_string(o.case_timeout) +
                           " s on this case"
             : WIFSIGNALED(status)
                 ? "fusefuzz worker killed by signal " + std::to_string(WTERMSIG(status))
                 : "fusefuzz worker failed (exit status " + std::to_string(WEXITSTATUS(status)) +
                       "; its message is on stderr above)";
  SetCaseProvenance(o, seed, index, &r);
  return r;
}

}  // namespace fusefuzz::campaign_internal
