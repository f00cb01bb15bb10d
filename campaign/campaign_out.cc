// The campaign's output folder: created, locked for the campaign, emptied (--force) or resumed
// from its summary (--resume); see docs/campaign.md.
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <vector>

#include "campaign/campaign_internal.h"
#include "campaign/finding_filing.h"
#include "campaign/shard_summary.h"
#include "generators/gen_config.h"
#include "ir/error.h"
#include "ir/folder_write.h"
#include "ir/json_io.h"
#include "report/engine_coverage.h"
#include "report/finding_writer.h"

namespace fusefuzz::campaign_internal {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// Locks OUT for this process (flock on OUT/.lock, which holds our PID); the lock goes with the
// process, so a killed campaign leaves none behind. Returns the descriptor to keep open.
int LockOut(const std::string& out) {
  const std::string path = out + "/.lock";
  // O_NOFOLLOW: a .lock planted as a symlink would have us truncate and write the file it names.
  int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY, 0644);
  if (fd < 0 && errno == ELOOP) {
    throw InputError("--out", "'" + path +
                                  "' is a symlink; fusefuzz does not write through a "
                                  "link it did not make (remove it)");
  }
  if (fd < 0) throw InputError("--out", ErrnoText("cannot create the lock file '" + path + "'"));
  struct stat st {};
  if (::fstat(fd, &st) == 0 && !S_ISREG(st.st_mode)) {
    ::close(fd);
    throw InputError("--out", "'" + path + "' is not a regular file (remove it)");
  }
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    int err = errno;
    char buf[32] = {0};
    ssize_t n = ::pread(fd, buf, sizeof buf - 1, 0);
    ::close(fd);
    std::string holder = n > 0 ? std::string(buf, static_cast<size_t>(n)) : "";
    while (!holder.empty() && (holder.back() == '\n' || holder.back() == ' ')) holder.pop_back();
    if (holder.empty() || holder.find_first_not_of("0123456789") != std::string::npos)
      holder = "unknown";
    if (err == EWOULDBLOCK) {
      throw InputError("--out", "'" + out + "' is in use by another campaign (PID " + holder +
                                    ", lock file " + path + ")");
    }
    throw InputError("--out", "cannot lock '" + path + "': " + std::strerror(err));
  }
  std::string pid = std::to_string(::getpid()) + "\n";
  if (::ftruncate(fd, 0) != 0 || ::pwrite(fd, pid.data(), pid.size(), 0) < 0) {
    std::fprintf(stderr, "fusefuzz: warning: cannot write the PID into %s: %s\n", path.c_str(),
                 std::strerror(errno));
  }
  return fd;
}

// The options that change the case stream beyond those the summary records (seed, target,
// inject): the generator's configuration, --quant included. Kept in OUT/.stream.json so that
// --resume can refuse a change (the summary's format is the report's).
constexpr const char* kStreamFile = ".stream.json";

json StreamOptions(const CampaignOptions& o) {
  // The configuration as a 64-bit FNV-1a of its JSON text: a few bytes (a full disk must
  // still be met where the tests of it expect), the same for the same options everywhere.
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : ConfigToJson(o.gen).dump()) h = (h ^ c) * 0x100000001b3ull;
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(h));
  return {{"quant", o.gen.quant.enabled}, {"config", hex}};
}

// Refuses to resume a campaign whose case stream the options would change, naming the option.
void CheckStreamForResume(const OutLayout& l, const CampaignOptions& o) {
  const std::string path = l.out + "/" + kStreamFile;
  std::error_code ec;
  auto bad = [&](const std::string& why) {
    return InputError("--resume", "cannot resume the campaign in '" + l.out + "': " + why +
                                      " (give the same options, or --force to start over)");
  };
  const bool quant = o.gen.quant.enabled;
  auto quant_changed = [&](bool before) {
    return bad(before ? "it was made with --quant (quantized graphs), this run has none"
                      : "it was made without --quant, this run has --quant");
  };
  if (!fs::exists(path, ec)) {
    // A campaign older than this file: its command line tells --quant.
    json j = ReadJsonFile(l.out + "/summary.json");
    const std::string cmd = j.value("command_line", "");
    const bool before = (" " + cmd + " ").find(" --quant ") != std::string::npos;
    if (before != quant) throw quant_changed(before);
    return;
  }
  json j = ReadJsonFile(path);
  const json now = StreamOptions(o);
  if (!j.is_object() || !j.contains("quant") || !j["quant"].is_boolean()) {
    throw InputError(path, "not the stream options of a campaign (remove it to resume anyway)");
  }
  if (j["quant"].get<bool>() != quant) throw quant_changed(j["quant"].get<bool>());
  if (j.value("config", json()) != now["config"]) {
    throw bad("it was made with another generator configuration (--config)");
  }
}

// Loads the summary of the campaign being resumed into `stats` and returns its progress.
Progress LoadForResume(const std::string& path, const CampaignOptions& o, CampaignStats* stats) {
  json j = ReadJsonFile(path);
  auto bad = [&](const std::string& why) {
    return InputError(path, "cannot resume from this summary: " + why);
  };
  Progress p;
  try {
    if (!j.is_object() || j.value("format", "") != "fusefuzz-summary")
      throw bad("not a fusefuzz-summary file");
    if (j.at("seed").get<uint64_t>() != o.seed) {
      throw bad("it was made with --seed " + j.at("seed").dump() + ", not " +
                std::to_string(o.seed) + " (give that seed, or --force to start over)");
    }
    if (j.at("target").get<std::string>() != o.target) {
      throw bad("it was made with --target " + j.at("target").dump() +
                " (give that target, or --force to start over)");
    }
    if (j.at("inject").get<std::vector<std::string>>() != o.check.opt.inject) {
      throw bad("it was made with --inject " + j.at("inject").dump() +
                " (give the same faults, or --force to start over)");
    }
    // A shard's progress counts its own cases: another shard (or none) would skip others.
    auto shard_text = [](const json& sh) {
      return sh.is_object() ? "--shard " + sh.value("index", json()).dump() + "/" +
                                  sh.value("count", json()).dump()
                            : std::string("no --shard");
    };
    const json had = j.value("shard", json());
    const json now = o.sharded ? json{{"index", o.shard}, {"count", o.shards}} : json();
    const bool same = had.is_object() == now.is_object() &&
                      (now.is_null() || (had.value("index", json()) == now["index"] &&
                                         had.value("count", json()) == now["count"]));
    if (!same) {
      throw bad("it was made with " + shard_text(had) + ", this run has " + shard_text(now) +
                " (give the same, or --force to start over)");
    }
    stats->graphs = j.at("graphs").get<int64_t>();
    stats->findings = j.at("findings").get<int64_t>();
    stats->known = j.value("known", int64_t{0});
    if (auto k = j.find("findings_by_kind"); k != j.end()) {
      for (const auto& [kind, v] : k->items()) {
        stats->by_kind[kind].count = v.at("cases").get<int64_t>();
        stats->by_kind[kind].known = v.at("known").get<int64_t>();
      }
    }
    stats->unsupported_reasons = j.value("unsupported_reasons", std::map<std::string, int64_t>{});
    stats->worker_errors = j.value("worker_errors", int64_t{0});
    if (auto b = j.find("batches"); b != j.end()) stats->batches = BatchStatsFromJson(*b);
    stats->seconds = j.at("seconds").get<double>();
    stats->verdicts = j.at("verdicts").get<std::map<std::string, int64_t>>();
    stats->rule_fires = j.value("rule_fires", std::map<std::string, int64_t>{});
    if (auto e = j.find("engine_fusions"); e != j.end()) EngineFusionsFromJson(*e, stats);
    if (auto cp = j.find("closest_pass"); cp != j.end() && cp->is_object()) {
      for (auto [key, p] :
           {std::pair{"float", &stats->closest_float}, std::pair{"grid", &stats->closest_grid}}) {
        if (auto e = cp->find(key); e != cp->end()) {
          *p = {e->at("share").get<double>(), e->at("case").get<int64_t>(), e->value("e", 0.0)};
        }
      }
    }
    if (auto cov = j.find("coverage"); cov != j.end()) {
      stats->coverage.graphs = cov->at("graphs").get<int64_t>();
      for (const json& c : cov->at("classes")) {
        const std::string id = c.at("id").get<std::string>();
        stats->coverage.occurrences[id] = c.at("count").get<int64_t>();
        stats->coverage.graphs_with[id] = c.at("graphs").get<int64_t>();
      }
    }
    if (auto f = j.find("first_finding"); f != j.end()) {
      stats->first_finding_graphs = f->at("graphs").get<int64_t>();
      stats->first_finding_seconds = f->at("seconds").get<double>();
    }
    for (const json& u : j.at("unique_findings")) {
      std::string sig = u.at("signature").get<std::string>();
      // Signatures name folders: only what Signature() itself produces is accepted.
      if (!LooksLikeSignature(sig)) {
        throw bad("/unique_findings: " + json(sig).dump() + " is not a signature");
      }
      SignatureStats& s = stats->unique[sig];
      s.kind = u.at("kind").get<std::string>();
      s.count = u.at("count").get<int64_t>();
      s.first_case = u.at("first_case").get<int64_t>();
      s.bucket = u.value("bucket", "");
      if (auto pt = u.find("pattern"); pt != u.end() && pt->is_string()) s.pattern = *pt;
    }
    // A shard's record of how its buckets were signed goes on (`fusefuzz merge` needs it all).
    if (auto b = j.find("buckets"); b != j.end()) stats->buckets = BucketsFromJson(*b, path);
    if (auto pr = j.find("progress"); pr != j.end()) {
      p.jobs = pr->at("jobs").get<int>();
      p.next = pr->at("next").get<std::vector<int64_t>>();
      if (p.jobs < 1 || p.next.size() != static_cast<size_t>(p.jobs))
        throw bad("/progress: \"next\" must hold one entry per job");
    }
  } catch (const json::exception& e) {
    throw bad(std::string("unexpected content (") + e.what() + ")");
  }
  return p;
}

}  // namespace

// Fails now, not after the campaign, when the JUnit file cannot be written (its exit status 2
// would hide the campaign's 1). A file created only for the check is removed again.
void CheckWritable(const std::string& path) {
  struct stat st {};
  bool existed = ::stat(path.c_str(), &st) == 0;
  if (existed && (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode))) return;
  int fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOCTTY, 0644);
  if (fd < 0) throw InputError("--junit", ErrnoText("cannot write '" + path + "'"));
  ::close(fd);
  if (!existed) ::unlink(path.c_str());
}

// Creates OUT, locks it, and handles what a previous campaign left there (refuse, --resume or
// --force). Returns the lock descriptor; fills `stats`/`done` when resuming.
int PrepareOut(const CampaignOptions& o, CampaignStats* stats, Progress* done) {
  const OutLayout l(o.out_dir);
  std::error_code ec;
  // A dangling symlink: create_directories would say only "File exists".
  if (fs::is_symlink(fs::symlink_status(l.out, ec)) && !fs::exists(l.out, ec)) {
    throw InputError("--out", "'" + l.out + "' is a symlink to '" +
                                  fs::read_symlink(l.out, ec).string() +
                                  "', which does not exist (create that folder, or give another "
                                  "--out)");
  }
  fs::create_directories(l.out, ec);
  if (ec) {
    throw InputError("--out", "cannot create folder '" + l.out + "': " + ec.message());
  }
  int lock = LockOut(l.out);
  try {
    bool empty = true;
    for (const auto& e : fs::directory_iterator(l.out, ec)) {
      if (e.path().filename() != ".lock") empty = false;
    }
    if (ec) throw InputError("--out", "cannot list '" + l.out + "': " + ec.message());
    if (!empty && !o.resume && !o.force) {
      throw InputError("--out", "'" + l.out +
                                    "' is not empty (a previous campaign?): give --resume to "
                                    "continue it, --force to delete its findings and summary "
                                    "and start over, or another folder");
    }
    if (o.force) {
      // Only what a campaign writes: --out may be a folder that holds other things too.
      for (const std::string& p : {l.findings, l.claims, l.buckets, l.tmp, l.out + "/summary.json",
                                   l.out + "/summary.md", l.out + "/" + kStreamFile}) {
        fs::remove_all(p, ec);
        if (ec) throw InputError("--force", "cannot remove '" + p + "': " + ec.message());
      }
    }
    if (o.resume && fs::exists(l.out + "/summary.json")) {
      *done = LoadForResume(l.out + "/summary.json", o, stats);
      CheckStreamForResume(l, o);
    }
    WriteFileInFolder(l.out, kStreamFile, StreamOptions(o).dump() + "\n");
    // Temp folders of writers killed mid-finding: nobody else can be writing, we hold the lock.
    fs::remove_all(l.tmp, ec);
    // Real folders, not links someone planted in OUT (ir/folder_write.h refuses those).
    for (const char* d : {"findings", ".claims", ".buckets", ".tmp"}) MakeFolderIn(l.out, d);
  } catch (...) {
    ::close(lock);
    throw;
  }
  return lock;
}

}  // namespace fusefuzz::campaign_internal
