// Reading untrusted JSON files: which files are read at all, how much of them, and the checks
// that need the parser's events (duplicate keys, value count). docs/security.md, "Input files".
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <unordered_set>
#include <vector>

#include "ir/error.h"
#include "ir/json_internal.h"
#include "ir/read_file.h"

namespace fusefuzz::json_detail {
namespace {

using nlohmann::json;

std::string ByteText(unsigned char b) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "0x%02x", b);
  return buf;
}

bool IsJsonSpace(unsigned char b) { return b == ' ' || b == '\t' || b == '\n' || b == '\r'; }

// Checks the bytes [from, text.size()) of the text read so far. `seen_start`: the first
// non-space byte has been checked.
void CheckBytes(const std::string& path, const std::string& text, size_t from, bool* seen_start) {
  for (size_t i = from; i < text.size(); ++i) {
    const auto b = static_cast<unsigned char>(text[i]);
    // RFC 8259: control characters may not appear unescaped anywhere, not even in strings.
    if (b < 0x20 && !IsJsonSpace(b)) {
      throw InputError(path, "byte " + std::to_string(i) + " is " + ByteText(b) +
                                 ", a control character, which cannot occur in a JSON text "
                                 "(is this a binary file?)");
    }
    if (*seen_start || IsJsonSpace(b)) continue;
    // A UTF-8 byte order mark is tolerated, as the parser does.
    if (i == 0 && text.compare(0, 3, "\xEF\xBB\xBF") == 0) {
      i += 2;
      continue;
    }
    if (b != '{') {
      std::string shown =
          b >= 0x20 && b < 0x7f ? "'" + std::string(1, static_cast<char>(b)) + "'" : ByteText(b);
      throw InputError(path, "byte " + std::to_string(i) + " is " + shown +
                                 ": a fusefuzz file (graph, tensors, reproducer, config) is a "
                                 "JSON object and starts with '{'");
    }
    *seen_start = true;
  }
}

// Parser events -> JSON pointer of the current value, the keys of every open object, and the
// number of values so far.
class Checker {
 public:
  Checker(std::string source, int64_t max_values)
      : source_(std::move(source)), max_values_(max_values) {}

  bool Event(json::parse_event_t event, const json& parsed) {
    switch (event) {
      case json::parse_event_t::object_start:
      case json::parse_event_t::array_start:
        Count();
        frames_.push_back({event == json::parse_event_t::object_start, {}, -1, {}});
        break;
      case json::parse_event_t::object_end:
      case json::parse_event_t::array_end:
        if (!frames_.empty()) frames_.pop_back();
        break;
      case json::parse_event_t::key: {
        Frame& f = frames_.back();
        f.key = parsed.get<std::string>();
        if (!f.keys.insert(f.key).second) {
          throw InputError(source_ + ": " + Pointer(),
                           "duplicate key " + Quote(f.key) +
                               " (a JSON object must not repeat a key; which one would count "
                               "is not defined)");
        }
        break;
      }
      case json::parse_event_t::value:
        Count();
        break;
    }
    return true;
  }

 private:
  struct Frame {
    bool object;
    std::string key;  // object: the current key
    int64_t index;    // array: the current element
    std::unordered_set<std::string> keys;
  };

  // A new value starts: it is the next element of an enclosing array.
  void Count() {
    if (!frames_.empty() && !frames_.back().object) ++frames_.back().index;
    if (++values_ > max_values_) {
      throw InputError(source_ + ": " + Pointer(),
                       "more than " + std::to_string(max_values_) +
                           " JSON values in one file (limit; store large tensors as \"b64\")");
    }
  }

  std::string Pointer() const {
    std::string p;
    for (const Frame& f : frames_) {
      p += "/" + (f.object ? Escape(f.key) : std::to_string(f.index));
    }
    return p.empty() ? "/" : p;
  }

  std::string source_;
  int64_t max_values_;
  int64_t values_ = 0;
  std::vector<Frame> frames_;
};

}  // namespace

std::string ReadJsonText(const std::string& path, const Limits& limits) {
  ReadFileOptions o;
  o.max_bytes = limits.max_file_bytes;
  auto seen_start = std::make_shared<bool>(false);
  o.check = [&path, seen_start](const std::string& text, size_t from) {
    CheckBytes(path, text, from, seen_start.get());
  };
  return ReadRegularFile(path, o);
}

json::parser_callback_t DocumentChecker(const std::string& source, const Limits& limits) {
  auto checker = std::make_shared<Checker>(source, limits.max_json_values);
  return [checker](int /*depth*/, json::parse_event_t event, json& parsed) {
    return checker->Event(event, parsed);
  };
}

}  // namespace fusefuzz::json_detail
