#include "targets/reproducer.h"

#include <set>

#include "ir/json_io.h"

namespace fusefuzz {

using json = nlohmann::json;

bool ValidReproducerFileName(const std::string& name) {
  // What fusefuzz writes into a finding folder itself: a pack cannot replace those.
  // (reproduce.py and reproduce.js are the PyTorch and ONNX Runtime packs' own.)
  static const std::set<std::string> kOurs = {"repro.json", "report.md",      "before.dot",
                                              "after.dot",  "before.svg",     "after.svg",
                                              "model.onnx", "test_data_set_0"};
  if (name.empty() || name.size() > 64 || name[0] == '.' || kOurs.count(name)) return false;
  for (char ch : name) {
    const bool ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
                    (ch >= '0' && ch <= '9') || ch == '_' || ch == '-' || ch == '.';
    if (!ok) return false;
  }
  return true;
}

void AddReproducerCase(const ReproducerCase& c, json* request) {
  json expected = json::object();
  for (const auto& [name, t] : c.expected) expected[name] = TensorToJson(t);
  json repro = {{"title", c.title}, {"expected", std::move(expected)}};
  if (!c.output.empty()) {  // a wrong number; else the engine failed on the case
    repro["output"] = c.output;
    repro["index"] = c.index;
    repro["reference"] = c.reference;
    repro["bound"] = c.bound;
    if (!c.oracle.empty()) repro["oracle"] = c.oracle;
  }
  (*request)["repro"] = std::move(repro);
}

Reproducer ParseReproducerAnswer(const json& j) {
  Reproducer out;
  auto text = [](const json& v) { return v.is_string() ? v.get<std::string>() : v.dump(); };
  if (auto u = j.find("unsupported"); u != j.end()) {
    out.message = "target: no reproducer: " + text(*u);
    return out;
  }
  if (auto e = j.find("error"); e != j.end()) {
    out.message = "target error while writing a reproducer: " + text(*e);
    return out;
  }
  auto bad = [&out](const std::string& why) {
    out.files.clear();
    out.build.clear();
    out.message = "target wrote a bad reproducer answer: " + why;
    return out;
  };
  auto r = j.find("repro");
  if (r == j.end() || !r->is_object()) return bad("/repro: missing or not an object");
  auto files = r->find("files");
  if (files == r->end() || !files->is_array() || files->empty()) {
    return bad("/repro/files: must be a non-empty array");
  }
  if (files->size() > kMaxReproducerFiles) {
    return bad("/repro/files: more than " + std::to_string(kMaxReproducerFiles) + " files");
  }
  size_t bytes = 0;
  std::set<std::string> seen;
  for (size_t i = 0; i < files->size(); ++i) {
    const json& f = (*files)[i];
    const std::string at = "/repro/files/" + std::to_string(i);
    if (!f.is_object() || !f.contains("path") || !f["path"].is_string() || !f.contains("text") ||
        !f["text"].is_string()) {
      return bad(at + ": must be {\"path\": string, \"text\": string}");
    }
    const std::string path = f["path"].get<std::string>();
    if (!ValidReproducerFileName(path) || !seen.insert(path).second) {
      return bad(at + "/path: " + json(path).dump() +
                 " is not a plain file name of its own (letters, digits, _ - .; not a name "
                 "fusefuzz writes)");
    }
    bytes += f["text"].get_ref<const std::string&>().size();
    if (bytes > kMaxReproducerBytes) return bad("/repro/files: more than 16 MiB together");
    out.files.push_back({path, f["text"].get<std::string>()});
  }
  if (auto b = r->find("build"); b != r->end()) {
    if (!b->is_string() || b->get_ref<const std::string&>().size() > 4096) {
      return bad("/repro/build: must be a string of at most 4096 characters");
    }
    out.build = b->get<std::string>();
  }
  return out;
}

}  // namespace fusefuzz
