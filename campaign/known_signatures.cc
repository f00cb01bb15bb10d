#include "campaign/known_signatures.h"

#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>
#include <system_error>

#include "ir/error.h"
#include "ir/json_io.h"
#include "ir/read_file.h"

namespace fusefuzz {
namespace {

using nlohmann::json;

// The lines of a text list: one signature per line, '#' to the end of a line is a comment, blanks
// around are ignored.
std::vector<std::pair<size_t, size_t>> SignaturesOfText(const std::string& text, size_t body,
                                                        const std::string& file) {
  std::vector<std::pair<size_t, size_t>> out;
  int number = 0;
  size_t pos = body;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    std::string_view line(text.data() + pos, end - pos);
    pos = end + 1;
    ++number;
    line = line.substr(0, line.find('#'));
    while (!line.empty() && (line.back() == ' ' || line.back() == '\t' || line.back() == '\r'))
      line.remove_suffix(1);
    const size_t start = line.find_first_not_of(" \t");
    if (start == std::string_view::npos) continue;
    line.remove_prefix(start);
    if (!LooksLikeSignature(line)) {
      throw InputError(file + ":" + std::to_string(number),
                       "--known: not a signature (letters, digits, '.', '_', '-'; no leading "
                       "dot; at most 100 characters)");
    }
    out.emplace_back(static_cast<size_t>(line.data() - text.data()), line.size());
  }
  return out;
}

std::vector<std::string> SignaturesOfSummary(const std::string& text, const std::string& file) {
  json j = ParseJson(text, file);
  if (!j.is_object() || j.value("format", "") != "fusefuzz-summary" ||
      !j.contains("unique_findings") || !j["unique_findings"].is_array()) {
    throw InputError(file, "--known: not a fusefuzz-summary file with unique_findings");
  }
  std::vector<std::string> out;
  const json& list = j["unique_findings"];
  out.reserve(list.size());
  for (size_t i = 0; i < list.size(); ++i) {
    const json& u = list[i];
    const auto sig = u.is_object() ? u.find("signature") : u.end();
    if (sig == u.end() || !sig->is_string() ||
        !LooksLikeSignature(sig->get_ref<const std::string&>())) {
      throw InputError(file,
                       "/unique_findings/" + std::to_string(i) + "/signature: not a signature");
    }
    out.push_back(sig->get<std::string>());
  }
  return out;
}

}  // namespace

bool LooksLikeSignature(std::string_view sig) {
  if (sig.empty() || sig[0] == '.' || sig.size() > 100) return false;
  // One comparison per byte, not a search of the 65 allowed ones: --known lists can hold
  // hundreds of thousands of signatures.
  for (char c : sig) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '.' || c == '_' || c == '-';
    if (!ok) return false;
  }
  return true;
}

KnownSignatures::KnownSignatures(const std::vector<std::string>& signatures) {
  std::string bytes;
  std::vector<std::pair<size_t, size_t>> spans;
  spans.reserve(signatures.size());
  for (const std::string& sig : signatures) {
    spans.emplace_back(bytes.size(), sig.size());
    bytes += sig;
  }
  *this = KnownSignatures(std::move(bytes), spans);
}

KnownSignatures::KnownSignatures(std::string bytes,
                                 const std::vector<std::pair<size_t, size_t>>& spans) {
  auto d = std::make_shared<Data>();
  d->bytes = std::move(bytes);
  size_t n = 16;
  while (n < 2 * spans.size()) n *= 2;
  d->slots.resize(n);
  for (const auto& [at, length] : spans) {
    const std::string_view sig(d->bytes.data() + at, length);
    if (sig.empty()) continue;
    for (size_t i = std::hash<std::string_view>{}(sig) & (n - 1);; i = (i + 1) & (n - 1)) {
      if (d->slots[i].empty()) {
        d->slots[i] = sig;
        ++d->count;
        break;
      }
      if (d->slots[i] == sig) break;  // a repeat
    }
  }
  data_ = std::move(d);
}

bool KnownSignatures::contains(std::string_view sig) const {
  if (!data_ || sig.empty()) return false;
  const size_t mask = data_->slots.size() - 1;
  for (size_t i = std::hash<std::string_view>{}(sig)&mask;; i = (i + 1) & mask) {
    if (data_->slots[i].empty()) return false;
    if (data_->slots[i] == sig) return true;
  }
}

KnownSignatures ReadKnownSignatures(const std::string& path) {
  std::string file = path;
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) file = path + "/summary.json";
  // A list of signatures (at most 100 bytes each) or a summary: 64 MiB holds over 600k of them.
  // Checked as it is read: a control character, or in a list a line longer than any signature
  // with a comment, stops the read. A summary (first non-blank byte '{') is JSON, whose lines
  // are as long as its writer made them (a compact summary is one line): it is bounded by the
  // file size and the JSON limits of ParseJson instead.
  constexpr size_t kMaxLine = 4096;
  ReadFileOptions ro;
  ro.max_bytes = int64_t{64} << 20;
  size_t line_start = 0, line_number = 1;
  enum class Format { kUnknown, kList, kJson } format = Format::kUnknown;
  ro.check = [&](const std::string& text, size_t from) {
    for (size_t i = from; i < text.size(); ++i) {
      const auto b = static_cast<unsigned char>(text[i]);
      if (b == '\n') {
        line_start = i + 1;
        ++line_number;
        continue;
      }
      if (b < 0x20 && b != '\t' && b != '\r') {
        throw InputError(file + ":" + std::to_string(line_number),
                         "--known: byte " + std::to_string(i) +
                             " is a control character (is this a binary file?)");
      }
      const bool bom = i < 3 && text.compare(0, 3, "\xEF\xBB\xBF") == 0;
      if (format == Format::kUnknown && b != ' ' && b != '\t' && b != '\r' && !bom &&
          !(i < 3 && text.size() < 3 && text[0] == '\xEF')) {
        format = b == '{' ? Format::kJson : Format::kList;
      }
      if (format != Format::kJson && i - line_start >= kMaxLine) {
        throw InputError(file + ":" + std::to_string(line_number),
                         "--known: line longer than " + std::to_string(kMaxLine) +
                             " bytes (a signature has at most 100)");
      }
    }
  };
  std::string text = ReadRegularFile(file, ro);
  // A UTF-8 byte order mark is skipped, as the JSON reader does, before telling the formats apart.
  const size_t body = text.compare(0, 3, "\xEF\xBB\xBF") == 0 ? 3 : 0;
  const size_t first = text.find_first_not_of(" \t\r\n", body);
  if (first != std::string::npos && text[first] == '{') {
    return KnownSignatures(SignaturesOfSummary(text, file));
  }
  const std::vector<std::pair<size_t, size_t>> spans = SignaturesOfText(text, body, file);
  return KnownSignatures(std::move(text), spans);
}

}  // namespace fusefuzz
