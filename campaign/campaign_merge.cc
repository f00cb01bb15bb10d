#include "campaign/campaign_merge.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "campaign/shard_summary.h"
#include "ir/error.h"
#include "ir/folder_write.h"
#include "ir/json_io.h"
#include "ir/read_file.h"
#include "report/campaign_summary.h"
#include "report/markdown.h"

namespace fusefuzz {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

std::string ShardName(const ShardSummary& s) {
  return "'" + s.dir + "' (shard " + std::to_string(s.index) + "/" + std::to_string(s.count) + ")";
}

// The `fuzz` option behind each key of a shard's "options" record, for the refusal's message.
std::string OptionFlag(const std::string& key) {
  static const std::map<std::string, std::string> flags = {
      {"generator_config", "--config"},
      {"quant", "--quant"},
      {"oracle", "--oracle/--k/--rtol/--atol/--max-ulp"},
      {"pipeline", "--pipeline"},
      {"disable", "--disable"},
      {"only", "--only"},
      {"bisect_limit", "--bisect-limit"},
      {"kernel_check", "--no-kernel-check"},
      {"minimize", "--no-minimize"},
      {"minimize_budget", "--minimize-budget"},
      {"sensitivity_check", "--no-sensitivity-check"},
      {"known_signatures", "--known"},
      {"timeout", "--timeout"},
      {"case_timeout", "--case-timeout"}};
  auto it = flags.find(key);
  return it == flags.end() ? key : it->second;
}

// Shards of one campaign: the same seed, target, faults, oracle, options, shard count and
// --graphs, each index once, none missing. Throws InputError saying which differs.
void CheckOneCampaign(const std::vector<ShardSummary>& shards) {
  const ShardSummary& a = shards.front();
  auto refuse = [&](const ShardSummary& b, const std::string& what, const std::string& there,
                    const std::string& here) {
    throw InputError("merge", ShardName(b) + " is not of the same campaign as " + ShardName(a) +
                                  ": " + what + " " + there + " there, " + here +
                                  " here (merge only the shards of one `fuzz` command)");
  };
  for (const ShardSummary& b : shards) {
    const CampaignStats &x = a.stats, &y = b.stats;
    if (y.seed != x.seed) refuse(b, "--seed", std::to_string(y.seed), std::to_string(x.seed));
    if (y.target != x.target) refuse(b, "--target", y.target, x.target);
    if (y.inject != x.inject) refuse(b, "--inject", json(y.inject).dump(), json(x.inject).dump());
    if (y.oracle != x.oracle) refuse(b, "--oracle", y.oracle, x.oracle);
    if (b.count != a.count) {
      refuse(b, "the shard count N of --shard I/N is", std::to_string(b.count),
             std::to_string(a.count));
    }
    if (b.campaign_graphs != a.campaign_graphs) {
      refuse(b, "--graphs", std::to_string(b.campaign_graphs), std::to_string(a.campaign_graphs));
    }
    // An engine upgraded on one machine of the matrix is another target.
    if (y.engine != x.engine) refuse(b, "the target's engine is", y.engine, x.engine);
    std::set<std::string> keys;
    for (const auto& [k, v] : a.options.items()) keys.insert(k);
    for (const auto& [k, v] : b.options.items()) keys.insert(k);
    for (const std::string& k : keys) {
      const json va = a.options.value(k, json()), vb = b.options.value(k, json());
      if (va != vb)
        refuse(b, "option " + OptionFlag(k) + " (\"" + k + "\") is", vb.dump(), va.dump());
    }
  }
  std::map<int, const ShardSummary*> by_index;
  for (const ShardSummary& s : shards) {
    auto [it, fresh] = by_index.emplace(s.index, &s);
    if (!fresh) {
      throw InputError("merge", "'" + it->second->dir + "' and '" + s.dir + "' are both shard " +
                                    std::to_string(s.index) + "/" + std::to_string(s.count) +
                                    " (one folder given twice, or one --shard run twice): give "
                                    "each shard once");
    }
  }
  std::string missing;
  for (int i = 0; i < a.count; ++i) {
    if (!by_index.count(i))
      missing += (missing.empty() ? "" : ", ") + std::to_string(i) + "/" + std::to_string(a.count);
  }
  if (!missing.empty()) {
    throw InputError("merge", "shard " + missing + " missing: give the folders of all " +
                                  std::to_string(a.count) + " shards (`fuzz --shard I/" +
                                  std::to_string(a.count) + "` for I = 0 .. " +
                                  std::to_string(a.count - 1) +
                                  "); a shard that stopped early is merged as partial");
  }
}

// OUT: created; refused when it is one of the shards or holds anything (unless --force, which
// removes only what a merge writes).
void PrepareMergeOut(const MergeOptions& o) {
  std::error_code ec;
  for (const std::string& d : o.shard_dirs) {
    if (fs::exists(o.out, ec) && fs::equivalent(o.out, d, ec)) {
      throw InputError("merge", "OUT '" + o.out + "' is the shard folder '" + d +
                                    "': give a new folder for the merged campaign");
    }
  }
  fs::create_directories(o.out, ec);
  if (ec) throw InputError("merge", "cannot create folder '" + o.out + "': " + ec.message());
  bool empty = true;
  for (const auto& e : fs::directory_iterator(o.out, ec)) {
    (void)e;
    empty = false;
  }
  if (ec) throw InputError("merge", "cannot list '" + o.out + "': " + ec.message());
  if (!empty && !o.force) {
    throw InputError("merge", "OUT '" + o.out +
                                  "' is not empty: give --force to replace the merge there, or "
                                  "another folder");
  }
  for (const char* p : {"findings", "summary.json", "summary.md", "summary.html"}) {
    if (!RemoveIn(o.out, p)) {
      throw InputError("--force",
                       "cannot remove '" + o.out + "/" + p + "': " + std::strerror(errno));
    }
  }
  MakeFolderIn(o.out, "findings");
}

// Replaces every `from` in `text` by `to`.
void ReplaceAll(std::string* text, const std::string& from, const std::string& to) {
  for (size_t at = text->find(from); at != std::string::npos; at = text->find(from, at + to.size()))
    text->replace(at, from.size(), to);
}

// The folder's own path as its repro.json's command names it ("fusefuzz replay DIR/repro.json
// --expect fail", DIR written as a plain shell word), or "" when it cannot be told.
std::string RecordedFolderPath(const std::string& repro_path, const std::string& sig) {
  try {
    const std::string cmd = ReadJsonFile(repro_path).value("command", "");
    const std::string head = "fusefuzz replay ", tail = "/repro.json --expect fail";
    if (!cmd.starts_with(head) || !cmd.ends_with(tail)) return "";
    const std::string dir = cmd.substr(head.size(), cmd.size() - head.size() - tail.size());
    if (!dir.ends_with("findings/" + sig) || ShellWord(dir) != dir) return "";
    return dir;
  } catch (const InputError&) {
    return "";  // copied as it is; replay reads it and says what is wrong
  }
}

// Copies SHARD/findings/SIG to OUT/findings/SIG: folders and regular files only (fusefuzz makes
// no links there; one found is skipped and reported). The folder's path in repro.json's command
// and in report.md's commands becomes its new one, so they run where the folder now is.
void CopyFindingFolder(const std::string& shard, const std::string& out, const std::string& sig,
                       std::vector<std::string>* warnings) {
  const std::string rel = "findings/" + sig;
  const fs::path src = fs::path(shard) / "findings" / sig;
  const std::string was = RecordedFolderPath((src / "repro.json").string(), sig);
  const std::string now = out + "/" + rel;
  const bool rewrite = !was.empty() && ShellWord(now) == now;
  MakeFolderIn(out, rel);
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(src, ec); !ec && it != fs::end(it);
       it.increment(ec)) {
    const std::string part = fs::relative(it->path(), src, ec).string();
    const fs::file_status st = it->symlink_status(ec);
    if (fs::is_directory(st)) {
      MakeFolderIn(out, rel + "/" + part);
    } else if (fs::is_regular_file(st)) {
      ReadFileOptions ro;
      ro.follow_links = false;
      std::string content = ReadRegularFile(it->path().string(), ro);
      if (rewrite && (part == "repro.json" || part == "report.md")) ReplaceAll(&content, was, now);
      WriteFileInFolder(out, rel + "/" + part, content);
    } else {
      warnings->push_back("skipped '" + it->path().string() +
                          "': not a regular file or folder (fusefuzz writes none such)");
    }
  }
  if (ec) throw InputError(src.string(), "cannot read the finding folder: " + ec.message());
}

// A complete finding folder of SHARD: findings/SIG a real folder holding a regular repro.json.
bool HasFolder(const std::string& shard, const std::string& sig) {
  std::error_code ec;
  return IsFolderIn(shard, "findings/" + sig) &&
         fs::is_regular_file(
             fs::symlink_status(fs::path(shard) / "findings" / sig / "repro.json", ec));
}

// Counts one finding case (or `n` cases from `index` on) under `sig`, as CampaignStats::AddCase.
void Attribute(CampaignStats* m, const std::string& sig, const std::string& kind, bool known,
               int64_t index, const std::string& bucket, const std::string& pattern,
               int64_t n = 1) {
  if (known) {
    m->known += n;
    m->by_kind[kind].known += n;
    return;
  }
  m->findings += n;
  m->by_kind[kind].count += n;
  SignatureStats& u = m->unique[sig];
  u.kind = kind;
  if (u.first_case < 0 || index < u.first_case) {
    u.first_case = index;
    u.bucket = bucket;
  }
  u.count += n;
  // A campaign keeps the pattern of the first minimized case of the signature.
  if (!pattern.empty() && (u.pattern.empty() || index <= u.first_case)) u.pattern = pattern;
}

// The signatures as one campaign (-j 1) gives them: of each bucket, the campaign's first
// kMinimizedPerBucket cases (the lowest among the shards' own first ones) keep the signature
// their minimization gave, and every other case takes the first one's, although in its shard
// it took that shard's first case's (merged shards would otherwise count a case once under
// Conv.Clip and once under FusedConv.Clip where one campaign counts it under one).
void SignAsOneCampaign(const std::vector<ShardSummary>& shards, CampaignStats* m) {
  std::map<std::string, std::vector<const BucketRecord*>> records;
  for (const ShardSummary& s : shards)
    for (const auto& [key, b] : s.stats.buckets) records[key].push_back(&b);
  for (const auto& [key, list] : records) {
    std::vector<BucketSlot> slots;
    for (const BucketRecord* b : list) slots.insert(slots.end(), b->slots.begin(), b->slots.end());
    std::sort(slots.begin(), slots.end(),
              [](const BucketSlot& x, const BucketSlot& y) { return x.case_index < y.case_index; });
    const size_t kept = std::min(slots.size(), BucketRecord::kKeptSlots);
    for (size_t i = 0; i < slots.size(); ++i) {
      const BucketSlot& x = slots[i];
      if (i < kept) {
        Attribute(m, x.signature, x.kind, x.known, x.case_index, key, x.pattern);
      } else {
        Attribute(m, slots[0].signature, slots[0].kind, slots[0].known, x.case_index, key, "");
      }
    }
    for (const BucketRecord* b : list) {
      if (b->others == 0) continue;
      if (slots.empty()) {
        // No shard signed a case of it (stopped mid-minimization): counted under the bucket
        // key, as one campaign counts such cases.
        Attribute(m, key, b->others_kind, false, b->others_first, key, "", b->others);
      } else {
        Attribute(m, slots[0].signature, slots[0].kind, slots[0].known, b->others_first, key, "",
                  b->others);
      }
    }
  }
}

}  // namespace

int MergeShards(const MergeOptions& o) {
  if (o.shard_dirs.empty()) throw InputError("merge", "give the shard folders to merge");
  std::vector<ShardSummary> shards;
  for (const std::string& d : o.shard_dirs) shards.push_back(ReadShardSummary(d));
  CheckOneCampaign(shards);
  std::sort(shards.begin(), shards.end(),
            [](const ShardSummary& a, const ShardSummary& b) { return a.index < b.index; });
  PrepareMergeOut(o);

  const ShardSummary& first = shards.front();
  CampaignStats m;
  m.seed = first.stats.seed;
  m.target = first.stats.target;
  m.inject = first.stats.inject;
  m.oracle = first.stats.oracle;
  m.engine = first.stats.engine;
  m.engine_fusions = first.stats.engine_fusions;
  m.engine_unreachable = first.stats.engine_unreachable;
  std::vector<std::string> partial;
  json listed = json::array();
  // Signature -> the shards listing it, lowest first case first: whose folder is the campaign's.
  std::map<std::string, std::vector<std::pair<int64_t, const ShardSummary*>>> holders;
  for (const ShardSummary& s : shards) {
    const CampaignStats& x = s.stats;
    m.graphs += x.graphs;
    m.worker_errors += x.worker_errors;
    m.batches.Add(x.batches);
    m.seconds = std::max(m.seconds, x.seconds);  // the shards ran side by side
    m.interrupted = m.interrupted || x.interrupted;
    for (const auto& [k, n] : x.verdicts) m.verdicts[k] += n;
    for (const auto& [k, n] : x.unsupported_reasons) m.unsupported_reasons[k] += n;
    for (const auto& [k, n] : x.rule_fires) m.rule_fires[k] += n;
    for (const auto& [k, n] : x.spellings) m.spellings[k] += n;
    for (auto [mine, theirs] : {std::pair{&m.closest_float, &x.closest_float},
                                std::pair{&m.closest_grid, &x.closest_grid}}) {
      // As one campaign keeps it: the largest share, the earliest case among equals.
      if (theirs->share > mine->share || (theirs->share == mine->share && theirs->share >= 0 &&
                                          theirs->case_index < mine->case_index)) {
        *mine = *theirs;
      }
    }
    m.coverage.graphs += x.coverage.graphs;
    for (const auto& [id, n] : x.coverage.occurrences) m.coverage.occurrences[id] += n;
    for (const auto& [id, n] : x.coverage.graphs_with) m.coverage.graphs_with[id] += n;
    for (const auto& [sig, u] : x.unique) holders[sig].push_back({u.first_case, &s});
    const std::string name = ShardName(s);
    if (x.interrupted) {
      partial.push_back(name + " was interrupted after " + std::to_string(x.graphs) + " of " +
                        std::to_string(s.cases) + " cases");
    } else if (s.campaign_graphs == 0) {
      partial.push_back(name + " was limited by --seconds, not --graphs (" +
                        std::to_string(x.graphs) + " cases)");
    } else if (x.graphs < s.cases) {
      partial.push_back(name + " checked " + std::to_string(x.graphs) + " of its " +
                        std::to_string(s.cases) + " cases");
    }
    listed.push_back({{"folder", s.dir},
                      {"shard", std::to_string(s.index) + "/" + std::to_string(s.count)},
                      {"graphs", x.graphs},
                      {"cases", s.cases},
                      {"seconds", x.seconds},
                      {"interrupted", x.interrupted},
                      {"command_line", x.command_line}});
  }
  SignAsOneCampaign(shards, &m);
  // --known of the merge: counted as known, as a campaign with that baseline counts them.
  int64_t known_now = 0;
  for (auto it = m.unique.begin(); it != m.unique.end();) {
    if (!o.known.contains(it->first)) {
      ++it;
      continue;
    }
    const SignatureStats& u = it->second;
    m.findings -= u.count;
    m.known += u.count;
    m.by_kind[u.kind].count -= u.count;
    m.by_kind[u.kind].known += u.count;
    known_now += u.count;
    it = m.unique.erase(it);
  }
  // Each kind's first finding as one campaign run with -j 1 meets it: the lowest case index.
  for (const auto& [sig, u] : m.unique) {
    FirstFinding& f = m.first_by_kind[u.kind];
    if (f.case_index >= 0 && f.case_index <= u.first_case) continue;
    f = {u.first_case, u.first_case + 1, -1};
    for (const ShardSummary& s : shards) {
      auto e = s.first_by_kind.find(u.kind);
      if (e != s.first_by_kind.end() && e->second.case_index == u.first_case)
        f.seconds = e->second.seconds;
    }
  }
  for (const auto& [kind, f] : m.first_by_kind) {
    if (m.first_finding_graphs < 0 || f.graphs < m.first_finding_graphs) {
      m.first_finding_graphs = f.graphs;
      m.first_finding_seconds = f.seconds;
    }
  }

  std::vector<std::string> warnings, missing_folders, uncounted, resigned;
  // Signatures a shard filed from a case that one campaign would not have minimized (not among
  // its bucket's first): their cases are counted under the bucket's first signature, and the
  // folder stays in the shard (a variant of one that is merged), named in the summary.
  for (const auto& [sig, h] : holders) {
    if (!m.unique.count(sig) && !o.known.contains(sig)) resigned.push_back(sig);
  }
  for (const auto& [sig, u] : m.unique) {
    std::vector<std::pair<int64_t, const ShardSummary*>>& h = holders[sig];
    std::sort(h.begin(), h.end(), [](const auto& a, const auto& b) {
      return a.first != b.first ? a.first < b.first : a.second->index < b.second->index;
    });
    const std::string& signature = sig;  // clang 14 captures no structured bindings
    auto with = std::find_if(h.begin(), h.end(),
                             [&](const auto& e) { return HasFolder(e.second->dir, signature); });
    if (with == h.end()) {
      // Duplicates counted under a bucket whose first cases were still being minimized when the
      // shard stopped have no folder (docs/campaign.md); anything else is a shard's loss.
      missing_folders.push_back(sig);
      continue;
    }
    CopyFindingFolder(with->second->dir, o.out, sig, &warnings);
  }
  // Folders a shard wrote after its last checkpoint (it was killed): not in its counts, but
  // nothing found is dropped.
  for (const ShardSummary& s : shards) {
    std::error_code ec;
    if (!IsFolderIn(s.dir, "findings")) continue;
    for (const auto& e : fs::directory_iterator(fs::path(s.dir) / "findings", ec)) {
      const std::string sig = e.path().filename().string();
      if (holders.count(sig) || o.known.contains(sig)) continue;
      if (!LooksLikeSignature(sig) || !HasFolder(s.dir, sig)) {
        warnings.push_back("skipped '" + e.path().string() + "': not a finding folder");
        continue;
      }
      if (IsFolderIn(o.out, "findings/" + sig)) continue;
      CopyFindingFolder(s.dir, o.out, sig, &warnings);
      uncounted.push_back(sig);
      warnings.push_back("findings/" + sig + " of " + ShardName(s) +
                         " is in no summary (written after its last checkpoint): copied, not "
                         "counted");
    }
  }

  std::string why;
  for (const std::string& p : partial) why += (why.empty() ? "" : "; ") + p;
  m.merge = {{"shards", listed},
             {"count", first.count},
             {"graphs", first.campaign_graphs},
             {"partial", !partial.empty()},
             {"known_at_merge", known_now},
             {"missing_folders", missing_folders},
             {"uncounted_folders", uncounted},
             {"signed_otherwise", resigned}};
  if (!partial.empty()) m.merge["why_partial"] = why;
  WriteCampaignSummary(o.out, m, o.junit);
  std::string text = m.SummaryText(o.out);
  if (text.starts_with("fuzz: ")) text.replace(0, 4, "merge");  // the campaign's "fuzz: done"
  std::fprintf(stderr, "%s", text.c_str());
  for (const std::string& w : warnings) std::fprintf(stderr, "merge: warning: %s\n", w.c_str());
  for (const std::string& sig : resigned) {
    std::fprintf(stderr,
                 "merge: note: %s: a shard minimized a case that one campaign counts as a "
                 "duplicate; its cases are counted under their bucket's first signature, its "
                 "folder left in the shard\n",
                 sig.c_str());
  }
  for (const std::string& sig : missing_folders) {
    std::fprintf(stderr, "merge: note: no shard has a folder for %s (counted; see summary.json)\n",
                 sig.c_str());
  }
  if (!partial.empty()) {
    std::fprintf(stderr,
                 "merge: partial: %s. The merge holds what the shards checked, not the "
                 "whole campaign.\n",
                 why.c_str());
  } else {
    std::fprintf(stderr, "merge: %d shards, every case of the campaign (%lld graphs)\n",
                 first.count, static_cast<long long>(m.graphs));
  }
  return m.findings > 0 ? 1 : 0;
}

}  // namespace fusefuzz
