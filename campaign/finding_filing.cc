#include "campaign/finding_filing.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>

#include "harness/minimize.h"
#include "harness/sensitivity.h"
#include "harness/structure.h"
#include "ir/error.h"
#include "ir/folder_write.h"
#include "ir/json_io.h"
#include "ir/read_file.h"
#include "report/finding_writer.h"

namespace fusefuzz {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

std::string ErrnoText(const std::string& what) { return what + ": " + std::strerror(errno); }

bool Minimizable(FindingKind k) {
  switch (k) {
    case FindingKind::kFusion:
    case FindingKind::kKernel:
    case FindingKind::kTargetError:
    case FindingKind::kCrash:
    case FindingKind::kUnquantized:
      return true;
    case FindingKind::kTimeout:  // every query could cost the whole timeout
    case FindingKind::kNone:
      return false;
  }
  return false;
}

std::string SlotPath(const OutLayout& l, const std::string& bucket, int k) {
  return l.buckets + "/" + bucket + "." + std::to_string(k);
}

// The first free slot of `bucket` (0 .. kMinimizedPerBucket-1), claimed; -1 when all are taken.
int ClaimSlot(const OutLayout& l, const std::string& bucket) {
  for (int k = 0; k < kMinimizedPerBucket; ++k) {
    const std::string p = SlotPath(l, bucket, k) + ".claim";
    int fd = ::open(p.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0644);
    if (fd >= 0) {
      ::close(fd);
      return k;
    }
    if (errno != EEXIST) throw OutputError(p, ErrnoText("cannot create the bucket slot"));
  }
  return -1;
}

// A fusion finding signed by its minimized graph (no rewritten nodes named: unblamed, or blamed
// on a rule of a target that reports no nodes): its graph is a pattern later cases of the same
// rule are checked against (MatchFiledPattern before a minimization, ContainedPattern after).
bool SignedByGraph(const Repro& r) {
  return r.kind == FindingKind::kFusion && r.blame.nodes.empty() &&
         r.minimization.contains("nodes_after");
}

void RecordSlot(const OutLayout& l, const std::string& bucket, int k, const Filed& f,
                const Repro* minimized) {
  json j = {{"kind", f.kind}, {"signature", f.signature}, {"known", f.known}};
  if (minimized && SignedByGraph(*minimized)) {
    j["pattern_graph"] = GraphToJson(minimized->graph);
    j["rule"] = minimized->blame.rule;
  }
  WriteFileInFolder(l.out, ".buckets/" + bucket + "." + std::to_string(k) + ".json",
                    j.dump() + "\n");
}

// What the bucket's slot holders filed (the first recorded slot), if any has finished.
std::optional<Filed> ReadBucket(const OutLayout& l, const std::string& bucket) {
  for (int k = 0; k < kMinimizedPerBucket; ++k) {
    const std::string p = SlotPath(l, bucket, k) + ".json";
    struct stat st {};
    if (::stat(p.c_str(), &st) != 0) continue;
    try {
      json j = ReadJsonFile(p);
      Filed f;
      f.kind = j.at("kind").get<std::string>();
      f.signature = j.at("signature").get<std::string>();
      f.known = j.at("known").get<bool>();
      if (!LooksLikeSignature(f.signature)) continue;
      return f;
    } catch (const std::exception&) {
      continue;  // ours, written atomically: unreadable only if tampered with; not resolved
    }
  }
  return std::nullopt;
}

// The minimized graphs of unblamed fusion findings filed so far (all workers), read once each:
// slot records are written atomically and never change.
struct FiledPattern {
  Filed filed;
  std::string rule;  // the blamed rule, "" unblamed: a pattern stands only for its own rule
  Graph graph;
};

std::vector<const FiledPattern*> FiledPatterns(const OutLayout& l) {
  static std::map<std::string, std::optional<FiledPattern>> cache;  // slot file -> pattern
  std::vector<const FiledPattern*> out;
  std::error_code ec;
  for (auto it = fs::directory_iterator(l.buckets, ec); !ec && it != fs::directory_iterator();
       it.increment(ec)) {
    const std::string path = it->path().string();
    if (!path.ends_with(".json")) continue;
    auto [entry, fresh] = cache.try_emplace(path);
    if (fresh) {
      try {
        json j = ReadJsonFile(path);
        if (j.contains("pattern_graph")) {
          FiledPattern fp;
          fp.filed.kind = j.at("kind").get<std::string>();
          fp.filed.signature = j.at("signature").get<std::string>();
          fp.filed.known = j.at("known").get<bool>();
          fp.rule = j.value("rule", std::string());
          // Seen as triage signs it: a FusedConv(Clip) pattern is the two nodes Conv -> Clip.
          fp.graph = EpiloguesAsNodes(ReadGraph(j["pattern_graph"], path + " /pattern_graph"));
          if (LooksLikeSignature(fp.filed.signature)) entry->second = std::move(fp);
        }
      } catch (const std::exception&) {
        // ours, written atomically: unreadable only if tampered with; ignored
      }
    }
    const std::optional<FiledPattern>& fp = entry->second;
    if (fp && fp->graph.nodes.size() >= 2) out.push_back(&*fp);  // one node matches too much
  }
  // Directory order differs between machines: the same patterns in the same order everywhere.
  std::sort(out.begin(), out.end(), [](const FiledPattern* a, const FiledPattern* b) {
    return a->filed.signature < b->filed.signature;
  });
  out.erase(std::unique(out.begin(), out.end(),
                        [](const FiledPattern* a, const FiledPattern* b) {
                          return a->filed.signature == b->filed.signature;
                        }),
            out.end());
  return out;
}

// At most this many one-run checks of a case against filed patterns up to activation forms
// (each costs one target run; a minimization costs about a hundred).
constexpr int kFormChecksPerCase = 2;

std::optional<Filed> MatchFiledPattern(const OutLayout& l, const Repro& r, Target& target) {
  std::vector<const FiledPattern*> patterns = FiledPatterns(l);
  std::erase_if(patterns, [&](const FiledPattern* fp) { return fp->rule != r.blame.rule; });
  for (const FiledPattern* fp : patterns) {
    if (fp->filed.kind != FindingKindName(r.kind)) continue;
    if (ContainsPattern(r.graph, fp->graph, r.worst.output)) return fp->filed;
  }
  // The filed graph is in the minimizer's activation forms (HardSwish became Clip): a case that
  // holds it so and still fails the same way once rewritten to those forms is its duplicate.
  int checks = 0;
  for (const FiledPattern* fp : patterns) {
    if (checks >= kFormChecksPerCase) break;
    if (fp->filed.kind != FindingKindName(r.kind)) continue;
    std::optional<Graph> rewritten = InPatternForms(r.graph, fp->graph, r.worst.output);
    if (!rewritten) continue;
    ++checks;
    try {
      const ReplayOutcome o = ReplayCase(r, *rewritten, r.inputs, target);
      if (o.same_finding && o.outcome.unoptimized == Verdict::kPass) return fp->filed;
    } catch (const InputError&) {
      // the rewrite made a case the reference refuses: not this pattern
    }
  }
  return std::nullopt;
}

// A minimized case of the same rule whose graph still holds a filed finding's minimized graph
// upstream of its worst output: what the minimizer could not remove beside that graph is what
// kept the case informative (ONNX Runtime's DoubleQDQPairsRemover bug minimizes to Q -> DQ ->
// Q -> DQ, and also to that chain followed by a Conv, a QLinearAdd or a Q where the chain's
// own output is a float 0, which judges nothing: 4 folders for one cause). No target run.
std::optional<Filed> ContainedPattern(const OutLayout& l, const Repro& r) {
  for (const FiledPattern* fp : FiledPatterns(l)) {
    if (fp->rule != r.blame.rule || fp->filed.kind != FindingKindName(r.kind)) continue;
    if (ContainsPattern(r.graph, fp->graph, r.worst.output)) return fp->filed;
  }
  return std::nullopt;
}

// A fusion finding whose unoptimized kernels fail on inputs within rounding of the case's is
// the kernel's defect: it becomes a kernel finding on those inputs (replayable as such).
void ReclassifyIfKernelSensitive(Target& target, Repro& r, uint64_t seed) {
  std::optional<SensitiveKernel> s =
      FindKernelSensitivity(target, r.graph, r.inputs, CheckOptionsOf(r), seed);
  if (!s) return;
  char rel[32];
  std::snprintf(rel, sizeof rel, "%g", s->relative);
  const std::string was = r.blame.rule.empty() ? "unblamed" : "blamed on '" + r.blame.rule + "'";
  r.kind = FindingKind::kKernel;
  r.inputs = std::move(s->inputs);
  r.verdict = std::string(VerdictName(s->outcome.verdict));
  r.worst = s->outcome.oracle.worst;
  r.detail = "kernel sensitivity: found as a fusion mismatch (" + was +
             "), but the UNOPTIMIZED run already fails on these inputs, the case's scaled by up "
             "to " +
             rel + " relative (trial " + std::to_string(s->trial) +
             "): a kernel that rounding of its input breaks. " + s->outcome.oracle.detail;
  r.blame = Blame{};
}

// The case replayed once on a freshly started target: recorded in the minimization record (shown
// in report.md) when the fresh target does not give the same finding.
void NoteFreshTargetReplay(const FilingOptions& o, Repro& r) {
  std::unique_ptr<Target> fresh;
  try {
    fresh = o.fresh_target();
  } catch (const InputError&) {
    return;  // it started once, for the campaign: a start that fails now decides nothing
  }
  const ReplayOutcome again = ReplayCase(r, r.graph, r.inputs, *fresh);
  if (again.same_finding) return;
  if (!r.minimization.is_object()) r.minimization = nlohmann::json::object();
  r.minimization["fresh_target"] =
      std::string("not reproduced by a freshly started target (") +
      std::string(VerdictName(again.outcome.verdict)) +
      "): the finding depends on what the campaign's target process ran before this case, and a "
      "replay, which starts a fresh target, will not show it";
}

}  // namespace

bool PublishFinding(const OutLayout& l, const std::string& sig, const Repro& r,
                    const TargetAnswer* answer) {
  const std::string lock = l.claims + "/" + sig;
  int fd = ::open(lock.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY, 0644);
  if (fd < 0) throw OutputError(lock, ErrnoText("cannot create the claim file"));
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    if (errno == EWOULDBLOCK) return false;
    throw OutputError(lock, ErrnoText("cannot lock the claim file"));
  }
  const std::string dir = l.findings + "/" + sig;
  struct stat st {};
  if (::stat((dir + "/repro.json").c_str(), &st) == 0) return false;
  std::error_code ec;
  // A folder without repro.json was left by an older fusefuzz killed mid-write: refill it.
  fs::remove_all(dir, ec);
  if (ec) throw OutputError(dir, "cannot remove the incomplete folder: " + ec.message());
  const std::string tmp = l.tmp + "/" + sig + "-" + std::to_string(::getpid());
  fs::remove_all(tmp, ec);
  if (::mkdir(tmp.c_str(), 0755) != 0) throw OutputError(tmp, ErrnoText("cannot create"));
  try {
    WriteFindingFolder(tmp, r, dir, answer);
    if (::rename(tmp.c_str(), dir.c_str()) != 0) {
      throw OutputError(dir, ErrnoText("cannot move the finished folder into place"));
    }
  } catch (...) {
    fs::remove_all(tmp, ec);
    throw;
  }
  return true;
}

Filed FileFinding(const OutLayout& l, const FilingOptions& o, Target& target, Repro r,
                  const std::vector<std::string>& fired_rules, uint64_t seed) {
  Filed f;
  f.kind = std::string(FindingKindName(r.kind));
  f.bucket = BucketKey(r, fired_rules);
  const int slot = ClaimSlot(l, f.bucket);
  f.slot = slot >= 0;
  if (slot < 0) {
    // The bucket's first cases are (being) minimized: this one is their duplicate...
    std::optional<Filed> rec = ReadBucket(l, f.bucket);
    if (!rec) {
      f.duplicate = true;  // not filed yet: the parent resolves it
      return f;
    }
    struct stat st {};
    const bool complete =
        ::stat((l.findings + "/" + rec->signature + "/repro.json").c_str(), &st) == 0;
    if (rec->known || complete) {
      f.kind = rec->kind;
      f.signature = rec->signature;
      f.known = rec->known;
      f.duplicate = true;
      return f;
    }
    // ... unless the folder it was filed under is gone or incomplete (a writer killed, a user
    // who deleted it): this case refills it.
  }
  if (slot >= 0 && r.kind == FindingKind::kFusion && r.blame.rule.empty()) {
    // Nothing blamed (a black-box target): the bucket key is only the worst output's op, so one
    // frequent bug spreads over many buckets. A case that contains a filed finding's minimized
    // graph upstream of its worst output is that finding's duplicate: a structural check
    // instead of a sensitivity check and a minimization.
    if (std::optional<Filed> m = MatchFiledPattern(l, r, target)) {
      f.kind = m->kind;
      f.signature = m->signature;
      f.known = m->known;
      f.duplicate = true;
      RecordSlot(l, f.bucket, slot, f, nullptr);
      return f;
    }
  }
  if (o.sensitivity_check && r.kind == FindingKind::kFusion) {
    ReclassifyIfKernelSensitive(target, r, seed);
  }
  if (o.minimize && Minimizable(r.kind)) {
    MinimizeOptions mo;
    mo.budget_seconds = o.minimize_budget;
    MinimizeStats st;
    r = Minimize(r, target, mo, &st);
    // A case that did not replay is filed as found, saying why it is not minimized.
    if (!st.reproduced) r.minimization = {{"not_minimized", st.note}};
  }
  f.kind = std::string(FindingKindName(r.kind));
  f.signature = Signature(r);
  f.pattern = OpChain(r.graph);
  std::optional<Filed> within;
  if (SignedByGraph(r)) within = ContainedPattern(l, r);
  if (within) {
    // Filed under the finding it holds; its own graph is not recorded as a pattern (one per
    // signature, the same on every machine).
    f.signature = within->signature;
    f.known = within->known;
    f.duplicate = true;
    if (slot >= 0) RecordSlot(l, f.bucket, slot, f, nullptr);
    return f;
  }
  if (o.known.contains(f.signature)) {
    f.known = true;
  } else {
    if (const UpstreamBug* bug = o.upstream.Find(f.signature)) {
      f.known = true;
      r.known_upstream = {{"title", bug->title}, {"link", bug->link}, {"doc", bug->doc}};
    }
    if (o.fresh_target) NoteFreshTargetReplay(o, r);
    // One more run of the minimized case: what the target answers goes into report.md.
    const TargetAnswer answer = AskTarget(target, r);
    f.duplicate = !PublishFinding(l, f.signature, r, &answer);
  }
  if (slot >= 0) RecordSlot(l, f.bucket, slot, f, &r);
  return f;
}

}  // namespace fusefuzz
