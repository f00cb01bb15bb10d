#include "campaign/known_upstream.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <system_error>

#include "campaign/known_signatures.h"
#include "ir/error.h"
#include "ir/json_io.h"
#include "targets/target_spec.h"

namespace fusefuzz {
namespace {

using nlohmann::json;

const std::string& Text(const json& j, const std::string& file, const std::string& pointer,
                        const char* key, bool required = true) {
  static const std::string kEmpty;
  const auto it = j.find(key);
  if (it == j.end()) {
    if (!required) return kEmpty;
    throw InputError(file, pointer + "/" + key + ": missing");
  }
  if (!it->is_string()) throw InputError(file, pointer + "/" + key + ": must be a string");
  return it->get_ref<const std::string&>();
}

const json& Array(const json& j, const std::string& file, const std::string& pointer,
                  const char* key) {
  const auto it = j.find(key);
  if (it == j.end() || !it->is_array())
    throw InputError(file, pointer + "/" + key + ": must be an array");
  return *it;
}

}  // namespace

void KnownUpstream::Add(const std::string& signature, const UpstreamBug& bug) {
  auto [it, fresh] = bugs_.try_emplace(signature, bug);
  if (fresh || it->second.title == bug.title) return;
  it->second.title += "; or " + bug.title;
  if (it->second.link != bug.link) it->second.link += " or " + bug.link;
  if (it->second.doc != bug.doc) it->second.doc += " or " + bug.doc;
}

const UpstreamBug* KnownUpstream::Find(const std::string& signature) const {
  const auto it = bugs_.find(signature);
  return it == bugs_.end() ? nullptr : &it->second;
}

std::string KnownBaselineDir() {
  const char* env = std::getenv("FUSEFUZZ_KNOWN_DIR");
  return env && *env ? env : FUSEFUZZ_KNOWN_DIR;
}

KnownBaseline ReadKnownBaseline(const std::string& path) {
  const json j = ReadJsonFile(path);
  if (!j.is_object() || j.value("format", "") != "fusefuzz-known-baseline")
    throw InputError(path, "/format: expected \"fusefuzz-known-baseline\"");
  KnownBaseline b;
  b.engine = Text(j, path, "", "engine");
  b.release = Text(j, path, "", "release");
  b.match = Text(j, path, "", "match");
  if (b.match.empty()) throw InputError(path, "/match: must not be empty");
  const json& bugs = Array(j, path, "", "bugs");
  for (size_t i = 0; i < bugs.size(); ++i) {
    const std::string p = "/bugs/" + std::to_string(i);
    if (!bugs[i].is_object()) throw InputError(path, p + ": must be an object");
    UpstreamBug bug{Text(bugs[i], path, p, "title"), Text(bugs[i], path, p, "link"),
                    Text(bugs[i], path, p, "doc")};
    const json& sigs = Array(bugs[i], path, p, "signatures");
    for (size_t k = 0; k < sigs.size(); ++k) {
      const std::string q = p + "/signatures/" + std::to_string(k);
      if (!sigs[k].is_object()) throw InputError(path, q + ": must be an object");
      KnownBaseline::Entry e{Text(sigs[k], path, q, "signature"), Text(sigs[k], path, q, "target"),
                             Text(sigs[k], path, q, "repro", false), bug};
      if (!LooksLikeSignature(e.signature))
        throw InputError(path, q + "/signature: not a signature");
      b.entries.push_back(std::move(e));
    }
  }
  return b;
}

KnownUpstream BaselineFor(const std::string& dir, const std::string& spec,
                          const std::string& engine_hello) {
  KnownUpstream out;
  const std::optional<TargetSpec> parsed = TargetSpec::TryParse(spec);
  if (!parsed || parsed->kind() != TargetKind::kBuiltin || engine_hello.empty()) return out;
  std::error_code ec;
  std::vector<std::string> files;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    if (name.rfind(parsed->engine() + "@", 0) == 0 && e.path().extension() == ".json")
      files.push_back(e.path().string());
  }
  std::sort(files.begin(), files.end());  // the same order on every machine
  for (const std::string& f : files) {
    const KnownBaseline b = ReadKnownBaseline(f);
    if (b.engine != parsed->engine() || engine_hello.find(b.match) == std::string::npos) continue;
    out.files.push_back(f);
    for (const KnownBaseline::Entry& e : b.entries) out.Add(e.signature, e.bug);
  }
  return out;
}

}  // namespace fusefuzz
