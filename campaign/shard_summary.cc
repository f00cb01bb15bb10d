#include "campaign/shard_summary.h"

#include <cstdint>
#include <limits>
#include <string>

#include "campaign/known_signatures.h"
#include "ir/error.h"
#include "ir/json_io.h"
#include "report/engine_coverage.h"

namespace fusefuzz {
namespace {

using nlohmann::json;

// Typed access to a summary's fields, each failure naming the file and the JSON pointer.
class Fields {
 public:
  explicit Fields(std::string path) : path_(std::move(path)) {}

  [[noreturn]] void Fail(const std::string& ptr, const std::string& what) const {
    throw InputError(path_, ptr + ": " + what +
                                " (not a summary.json that `fusefuzz fuzz "
                                "--shard` wrote, or edited since)");
  }
  const json& At(const json& obj, const std::string& ptr, const std::string& key) const {
    auto it = obj.find(key);
    if (it == obj.end()) Fail(ptr + "/" + key, "missing");
    return *it;
  }
  const json& Object(const json& v, const std::string& ptr) const {
    if (!v.is_object()) Fail(ptr, "must be an object, not " + Shown(v));
    return v;
  }
  int64_t Count(const json& v, const std::string& ptr) const {
    const bool fits = v.is_number_integer() &&
                      (!v.is_number_unsigned() ||
                       v.get<uint64_t>() <= uint64_t{std::numeric_limits<int64_t>::max()});
    if (!fits || v.get<int64_t>() < 0) Fail(ptr, "must be an integer >= 0, not " + Shown(v));
    return v.get<int64_t>();
  }
  double Number(const json& v, const std::string& ptr) const {
    if (!v.is_number()) Fail(ptr, "must be a number, not " + Shown(v));
    return v.get<double>();
  }
  std::string String(const json& v, const std::string& ptr) const {
    if (!v.is_string()) Fail(ptr, "must be a string, not " + Shown(v));
    return v.get<std::string>();
  }
  // A name that summary.md and the console print as is: `allowed` characters only, 1..100.
  std::string Name(const json& v, const std::string& ptr, const std::string& allowed) const {
    std::string s = String(v, ptr);
    if (s.empty() || s.size() > 100 || s.find_first_not_of(allowed) != std::string::npos)
      Fail(ptr, Shown(v) + " is not a name fusefuzz writes (characters " + allowed + ")");
    return s;
  }
  // An optional object of counts: key -> integer >= 0.
  std::map<std::string, int64_t> Counts(const json& obj, const std::string& key) const {
    std::map<std::string, int64_t> out;
    auto it = obj.find(key);
    if (it == obj.end()) return out;
    const std::string ptr = "/" + key;
    for (const auto& [name, n] : Object(*it, ptr).items()) out[name] = Count(n, ptr + "/" + name);
    return out;
  }

 private:
  static std::string Shown(const json& v) {
    std::string s = v.dump(-1, ' ', true, json::error_handler_t::replace);
    return s.size() > 60 ? s.substr(0, 57) + "..." : s;
  }
  std::string path_;
};

// `key` as one token of a JSON pointer (RFC 6901: ~ as ~0, / as ~1).
std::string PointerToken(const std::string& key) {
  std::string out;
  for (char c : key) out += c == '~' ? "~0" : c == '/' ? "~1" : std::string(1, c);
  return out;
}

const std::string kLower = "abcdefghijklmnopqrstuvwxyz_";
const std::string kUpper = "ABCDEFGHIJKLMNOPQRSTUVWXYZ_";
const std::string kClassId =
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_./+-:=>,*()[]";

void ReadFindings(const Fields& f, const json& j, ShardSummary* s) {
  CampaignStats& st = s->stats;
  st.findings = f.Count(f.At(j, "", "findings"), "/findings");
  st.known = j.contains("known") ? f.Count(j["known"], "/known") : 0;
  st.worker_errors =
      j.contains("worker_errors") ? f.Count(j["worker_errors"], "/worker_errors") : 0;
  if (auto b = j.find("batches"); b != j.end()) {
    try {
      st.batches = BatchStatsFromJson(f.Object(*b, "/batches"));
    } catch (const nlohmann::json::exception& e) {
      throw InputError(s->path + ": /batches", e.what());
    }
  }
  if (auto k = j.find("findings_by_kind"); k != j.end()) {
    for (const auto& [kind, v] : f.Object(*k, "/findings_by_kind").items()) {
      const std::string p = "/findings_by_kind/" + kind;
      f.Name(json(kind), p, kLower);
      f.Object(v, p);
      st.by_kind[kind].count = f.Count(f.At(v, p, "cases"), p + "/cases");
      st.by_kind[kind].known = f.Count(f.At(v, p, "known"), p + "/known");
    }
  }
  if (auto k = j.find("first_finding_by_kind"); k != j.end()) {
    for (const auto& [kind, v] : f.Object(*k, "/first_finding_by_kind").items()) {
      const std::string p = "/first_finding_by_kind/" + kind;
      f.Object(v, p);
      s->first_by_kind[kind] = {f.Count(f.At(v, p, "case"), p + "/case"),
                                f.Number(f.At(v, p, "seconds"), p + "/seconds")};
    }
  }
  const json& list = f.At(j, "", "unique_findings");
  if (!list.is_array()) f.Fail("/unique_findings", "must be an array");
  int64_t counted = 0;
  for (size_t i = 0; i < list.size(); ++i) {
    const std::string p = "/unique_findings/" + std::to_string(i);
    const json& u = f.Object(list[i], p);
    // Signatures name folders: only what Signature() itself produces (no '/', no quotes).
    const std::string sig = f.String(f.At(u, p, "signature"), p + "/signature");
    if (!LooksLikeSignature(sig)) {
      f.Fail(p + "/signature", json(sig).dump(-1, ' ', true, json::error_handler_t::replace) +
                                   " is not a signature (letters, digits, . _ -; it names a "
                                   "folder)");
    }
    if (st.unique.count(sig)) f.Fail(p + "/signature", "'" + sig + "' is listed twice");
    SignatureStats& x = st.unique[sig];
    x.kind = f.Name(f.At(u, p, "kind"), p + "/kind", kLower);
    x.count = f.Count(f.At(u, p, "count"), p + "/count");
    if (x.count < 1) f.Fail(p + "/count", "must be at least 1");
    x.first_case = f.Count(f.At(u, p, "first_case"), p + "/first_case");
    if (u.contains("bucket")) x.bucket = f.String(u["bucket"], p + "/bucket");
    if (u.contains("pattern")) x.pattern = f.String(u["pattern"], p + "/pattern");
    counted += x.count;
  }
  if (counted != st.findings) {
    f.Fail("/unique_findings", "its counts add up to " + std::to_string(counted) + ", but " +
                                   "/findings is " + std::to_string(st.findings));
  }
}

void ReadTallies(const Fields& f, const json& j, CampaignStats* st) {
  int64_t verdicts = 0;
  for (const auto& [v, n] : f.Object(f.At(j, "", "verdicts"), "/verdicts").items()) {
    f.Name(json(v), "/verdicts/" + v, kUpper);
    verdicts += st->verdicts[v] = f.Count(n, "/verdicts/" + v);
  }
  if (verdicts != st->graphs) {
    f.Fail("/verdicts", "adds up to " + std::to_string(verdicts) + " cases, but /graphs is " +
                            std::to_string(st->graphs));
  }
  st->unsupported_reasons = f.Counts(j, "unsupported_reasons");
  st->rule_fires = f.Counts(j, "rule_fires");
  st->spellings = f.Counts(j, "spellings");
  if (auto e = j.find("engine_fusions"); e != j.end()) {
    try {
      EngineFusionsFromJson(*e, st);
    } catch (const json::exception& ex) {
      f.Fail("/engine_fusions", ex.what());
    }
  }
  if (auto cp = j.find("closest_pass"); cp != j.end()) {
    f.Object(*cp, "/closest_pass");
    for (auto [key, p] : {std::pair{"float", &st->closest_float}, {"grid", &st->closest_grid}}) {
      auto e = cp->find(key);
      if (e == cp->end()) continue;
      const std::string ptr = std::string("/closest_pass/") + key;
      f.Object(*e, ptr);
      *p = {f.Number(f.At(*e, ptr, "share"), ptr + "/share"),
            f.Count(f.At(*e, ptr, "case"), ptr + "/case"),
            e->contains("e") ? f.Number((*e)["e"], ptr + "/e") : 0.0};
    }
  }
  if (auto cov = j.find("coverage"); cov != j.end()) {
    f.Object(*cov, "/coverage");
    st->coverage.graphs = f.Count(f.At(*cov, "/coverage", "graphs"), "/coverage/graphs");
    const json& classes = f.At(*cov, "/coverage", "classes");
    if (!classes.is_array()) f.Fail("/coverage/classes", "must be an array");
    for (size_t i = 0; i < classes.size(); ++i) {
      const std::string p = "/coverage/classes/" + std::to_string(i);
      f.Object(classes[i], p);
      const std::string id = f.Name(f.At(classes[i], p, "id"), p + "/id", kClassId);
      st->coverage.occurrences[id] = f.Count(f.At(classes[i], p, "count"), p + "/count");
      st->coverage.graphs_with[id] = f.Count(f.At(classes[i], p, "graphs"), p + "/graphs");
    }
  }
}

std::map<std::string, BucketRecord> ReadBuckets(const Fields& f, const json& buckets) {
  std::map<std::string, BucketRecord> out;
  for (const auto& [key, v] : f.Object(buckets, "/buckets").items()) {
    const std::string p = "/buckets/" + PointerToken(key);
    // A bucket no shard signed is counted under its key, which then names a folder.
    if (!LooksLikeSignature(key)) f.Fail(p, "the key is not a bucket key (letters, digits, . _ -)");
    f.Object(v, p);
    BucketRecord& b = out[key];
    const json& slots = f.At(v, p, "slots");
    if (!slots.is_array() || slots.size() > BucketRecord::kKeptSlots)
      f.Fail(p + "/slots", "must be an array of at most 3 cases");
    for (size_t i = 0; i < slots.size(); ++i) {
      const std::string q = p + "/slots/" + std::to_string(i);
      const json& x = f.Object(slots[i], q);
      BucketSlot s;
      s.case_index = f.Count(f.At(x, q, "case"), q + "/case");
      s.signature = f.String(f.At(x, q, "signature"), q + "/signature");
      if (!LooksLikeSignature(s.signature))
        f.Fail(q + "/signature", json(s.signature).dump() + " is not a signature");
      s.kind = f.Name(f.At(x, q, "kind"), q + "/kind", kLower);
      const json& known = f.At(x, q, "known");
      if (!known.is_boolean()) f.Fail(q + "/known", "must be true or false");
      s.known = known.get<bool>();
      s.pattern = f.String(f.At(x, q, "pattern"), q + "/pattern");
      b.slots.push_back(s);
    }
    b.others = f.Count(f.At(v, p, "others"), p + "/others");
    const json& first = f.At(v, p, "others_first");
    b.others_first = b.others > 0 ? f.Count(first, p + "/others_first") : -1;
    const std::string kind = f.String(f.At(v, p, "others_kind"), p + "/others_kind");
    if (b.others > 0) b.others_kind = f.Name(json(kind), p + "/others_kind", kLower);
    if (b.slots.empty() && b.others == 0) f.Fail(p, "holds no case");
  }
  return out;
}

void ReadShardRecord(const Fields& f, const json& j, ShardSummary* s) {
  auto it = j.find("shard");
  if (it == j.end()) {
    f.Fail("/shard",
           "missing: this campaign was not run with `fuzz --shard I/N`, so which of "
           "the campaign's cases it checked is not known");
  }
  const json& sh = f.Object(*it, "/shard");
  const int64_t count = f.Count(f.At(sh, "/shard", "count"), "/shard/count");
  const int64_t index = f.Count(f.At(sh, "/shard", "index"), "/shard/index");
  if (count < 1 || count > (int64_t{1} << 16)) f.Fail("/shard/count", "must be from 1 to 65536");
  if (index >= count) f.Fail("/shard/index", "must be less than /shard/count");
  s->index = static_cast<int>(index);
  s->count = static_cast<int>(count);
  s->campaign_graphs = f.Count(f.At(sh, "/shard", "graphs"), "/shard/graphs");
  s->cases = f.Count(f.At(sh, "/shard", "cases"), "/shard/cases");
  s->options = f.Object(f.At(sh, "/shard", "options"), "/shard/options");
  s->stats.buckets = ReadBuckets(f, f.At(j, "", "buckets"));
  int64_t cases = 0;
  for (const auto& [key, b] : s->stats.buckets) cases += b.others + b.slots.size();
  if (cases != s->stats.findings + s->stats.known) {
    f.Fail("/buckets", "holds " + std::to_string(cases) + " finding cases, but /findings and " +
                           "/known count " + std::to_string(s->stats.findings + s->stats.known));
  }
  if (s->cases > 0 && s->stats.graphs > s->cases) {
    f.Fail("/graphs", std::to_string(s->stats.graphs) + " cases checked, but the shard has only " +
                          std::to_string(s->cases) + " (/shard/cases)");
  }
}

}  // namespace

std::map<std::string, BucketRecord> BucketsFromJson(const nlohmann::json& buckets,
                                                    const std::string& path) {
  return ReadBuckets(Fields(path), buckets);
}

ShardSummary ReadShardSummary(const std::string& dir) {
  ShardSummary s;
  s.dir = dir;
  s.path = dir + "/summary.json";
  const json j = ReadJsonFile(s.path);  // regular file, bounded; InputError names it
  const Fields f(s.path);
  f.Object(j, "");
  if (j.value("format", json()) != "fusefuzz-summary") {
    f.Fail("/format", "must be \"fusefuzz-summary\"");
  }
  CampaignStats& st = s.stats;
  const json& seed = f.At(j, "", "seed");
  if (!seed.is_number_unsigned()) f.Fail("/seed", "must be an integer >= 0");
  st.seed = seed.get<uint64_t>();
  st.target = f.String(f.At(j, "", "target"), "/target");
  st.oracle = f.String(f.At(j, "", "oracle"), "/oracle");
  const json& inject = f.At(j, "", "inject");
  if (!inject.is_array()) f.Fail("/inject", "must be an array of fault names");
  for (size_t i = 0; i < inject.size(); ++i)
    st.inject.push_back(f.String(inject[i], "/inject/" + std::to_string(i)));
  st.graphs = f.Count(f.At(j, "", "graphs"), "/graphs");
  st.seconds = f.Number(f.At(j, "", "seconds"), "/seconds");
  const json& interrupted = f.At(j, "", "interrupted");
  if (!interrupted.is_boolean()) f.Fail("/interrupted", "must be true or false");
  st.interrupted = interrupted.get<bool>();
  if (auto c = j.find("command_line"); c != j.end())
    st.command_line = f.String(*c, "/command_line");
  ReadTallies(f, j, &st);
  ReadFindings(f, j, &s);
  ReadShardRecord(f, j, &s);
  return s;
}

}  // namespace fusefuzz
